# SPDX-License-Identifier: GPL-2.0
#
# postgres_vm.sh's tally, after perf_stacks.awk: of the samples whose
# leaf is in evalexpr_* (named by the perf map), those whose stack has
# PostgresMain and, further down, main, both postgres's.  The sample's
# header is its first line.  A sample with no frame at all is counted:
# perf script was given only the samples taken in the JIT's code.
#
# With -v anon=1, the samples are perf script -F ip,sym,dso's, with no
# header and no perf map: those whose leaf is in anonymous memory, the
# JIT's code in a backend, are counted.

function reached(from,    i, pm) {
	for (i = from; i <= NF; i++) {
		if (dso($i) !~ /\/bin\/postgres$/)
			continue
		if (sym($i) == "PostgresMain")
			pm = 1
		else if (pm && sym($i) == "main")
			return 1
	}
	return 0
}

anon {
	if (dso($1) !~ /^(\/\/anon|\[unknown\]|\/tmp\/perf-[0-9]+\.map)$/)
		next
	total++
	if (reached(2))
		pick(1)
	next
}

{
	if (NF >= 2 && (sym($2) !~ /^evalexpr_/ ||
			dso($2) !~ /\/perf-[0-9]+\.map$/))
		next
	total++
	if (reached(3))
		pick(2)
}
