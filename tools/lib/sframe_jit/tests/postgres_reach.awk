# SPDX-License-Identifier: GPL-2.0
#
# postgres_vm.sh's tally, after perf_stacks.awk: of the samples whose
# leaf is in evalexpr_* (named by the perf map), those whose stack has
# PostgresMain and, further down, main, both postgres's.  The sample's
# header is its first line.  A sample with no frame at all is counted:
# perf script was given only the samples taken in the JIT's code.

function reached(    i, pm) {
	for (i = 3; i <= NF; i++) {
		if (dso($i) !~ /\/bin\/postgres$/)
			continue
		if (sym($i) == "PostgresMain")
			pm = 1
		else if (pm && sym($i) == "main")
			return 1
	}
	return 0
}

{
	if (NF >= 2 && (sym($2) !~ /^evalexpr_/ ||
			dso($2) !~ /\/perf-[0-9]+\.map$/))
		next
	total++
	if (reached())
		pick(2)
}
