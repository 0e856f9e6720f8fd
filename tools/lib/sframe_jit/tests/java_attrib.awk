# SPDX-License-Identifier: GPL-2.0
#
# java_vm.sh: perf script's samples named by libsframe_jvm's own log
# rather than by the perf map, which cannot say which of two methods
# compiled at one address at different times a sample fell in.
#
#   awk -f java_attrib.awk AGENT_LOG RS= FS="\n" SCRIPT
#
# AGENT_LOG is the agent's log (log=FILE): "NS registry LOW HIGH ...",
# "NS load|stub ADDR SIZE NAME ...", "NS unload|evict ADDR SIZE NAME",
# NS on CLOCK_MONOTONIC.  SCRIPT is perf script -F time,ip,sym,dso of a
# recording made with -k CLOCK_MONOTONIC.  Prints each sample as
# perf_stacks.awk reads it (a paragraph of "ip sym (dso)" lines), each
# frame in the code cache named by the code the log says was there at
# the sample's time (see name_at() below).  A sample with a frame in
# code not announced yet gets "[unpublished]" for its first frame, so
# that java_paths.awk leaves it out.  The END lines on standard error count the stale frames, and the
# methods loaded where code unloaded before them had been ("reused").

function hex(s,    i, c, v) {
	v = 0
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}

# The name of the code at @ip at time @t (ns): the code live there then;
# "[unpublished]" where none was, but some was announced later (code
# the JVM installed and ran before the agent heard of it, in memory that
# unloaded code may have held: no rows could be there); "[stale]" where
# only unloaded code had been, which no unwinding may produce.
function name_at(ip, t,    i, dead, later) {
	for (i = 1; i <= n; i++) {
		if (ip < lo[i] || ip >= hi[i])
			continue
		if (born[i] > t)
			later = 1
		else if (died[i] && died[i] <= t)
			dead = 1
		else
			return nm[i]
	}
	return dead && !later ? "[stale]" : "[unpublished]"
}

FNR == NR {
	if ($2 == "registry") {
		cc_lo = hex($3)
		cc_hi = hex($4)
	} else if ($2 == "load" || $2 == "stub") {
		for (i = 1; i <= n; i++)
			if (died[i] && hex($3) >= lo[i] && hex($3) < hi[i]) {
				reused++
				break
			}
		n++
		lo[n] = hex($3)
		hi[n] = lo[n] + $4
		nm[n] = $5
		born[n] = $1
		live[$3] = n
	} else if (($2 == "unload" || $2 == "evict") && ($3 in live)) {
		died[live[$3]] = $1
		delete live[$3]
	}
	next
}


{
	t = $1
	sub(/:.*/, "", t)
	sub(/^[ \t]*/, "", t)
	split(t, p, ".")
	t = p[1] * 1000000000 + p[2] * 1000
	out = ""
	unpublished = 0
	for (i = 2; i <= NF; i++) {
		line = $i
		ip = line
		sub(/^[ \t]*/, "", ip)
		sub(/ .*/, "", ip)
		v = hex(ip)
		if (v >= cc_lo && v < cc_hi) {
			s = name_at(v, t)
			if (s == "[stale]")
				stale++
			if (s == "[unpublished]")
				unpublished = 1
			line = "\t" ip " " s " (/tmp/perf-0.map)"
		}
		out = out line "\n"
	}
	# A sample through code no one had announced yet is no test of
	# the rows: it is counted, not judged.
	if (unpublished) {
		skipped++
		sub(/^[^\n]*\n/, "", out)
		out = "\t0 [unpublished] (/tmp/perf-0.map)\n" out
	}
	printf "%s\n", out
}

END {
	printf "stale %d\n", stale > "/dev/stderr"
	printf "reused %d\n", reused > "/dev/stderr"
	printf "unpublished %d\n", skipped > "/dev/stderr"
}
