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
# the sample's time: "[unpublished]" where none had been announced yet
# (the agent had not seen it: its rows could not be there either), and
# "[stale]" where the code there had been unloaded, which must never
# be.  The END lines on standard error count the stale frames, and the
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

# The name of the code at @ip at time @t (ns).
function name_at(ip, t,    i, best) {
	best = ""
	for (i = 1; i <= n; i++) {
		if (ip < lo[i] || ip >= hi[i])
			continue
		if (born[i] > t)
			continue
		if (died[i] && died[i] <= t) {
			if (best == "")
				best = "[stale]"
			continue
		}
		return nm[i]
	}
	return best == "" ? "[unpublished]" : best
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
			line = "\t" ip " " s " (/tmp/perf-0.map)"
		}
		out = out line "\n"
	}
	printf "%s\n", out
}

END {
	printf "stale %d\n", stale > "/dev/stderr"
	printf "reused %d\n", reused > "/dev/stderr"
}
