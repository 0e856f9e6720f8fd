# SPDX-License-Identifier: GPL-2.0
#
# java_vm.sh: bpftrace's ustack counts of a JVM, as addresses
# (BPFTRACE_NO_USER_SYMBOLS=1), made into paragraphs of "ip sym (dso)"
# lines as perf script prints them, so that java_paths.awk judges both
# profilers alike; a stack counted N times is printed N times.
#
#   awk -f java_ustack.awk MAPS PERF_MAP SYMS STACKS
#
# MAPS is /proc/PID/maps of the JVM, PERF_MAP its /tmp/perf-PID.map
# (the agent's names), SYMS lines "OBJECT_PATH VALUE SIZE NAME" (nm -S
# of the objects whose functions the check names), STACKS bpftrace's
# output.  An address in the perf map is named by it; one in a mapping
# of a file belongs to that file, named by SYMS where they cover it.

function hex(s,    i, c, v) {
	sub(/^0x/, "", s)
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		v = v * 16 + c - 1
	}
	return v
}

function name(a,    k) {
	for (k = 1; k <= njit; k++)
		if (a >= jlo[k] && a < jhi[k])
			return jname[k] " (/tmp/perf-0.map)"
	for (k = 1; k <= nsym; k++)
		if (a >= slo[k] && a < shi[k])
			return sname[k] " (" spath[k] ")"
	for (k = 1; k <= nmap; k++)
		if (a >= mlo[k] && a < mhi[k])
			return "[unknown] (" mpath[k] ")"
	return "[unknown] ([unknown])"
}

FILENAME == ARGV[1] {
	split($1, r, "-")
	if (NF >= 6 && $6 ~ /^\//) {
		nmap++
		mlo[nmap] = hex(r[1]); mhi[nmap] = hex(r[2]); mpath[nmap] = $6
		if (!($6 in base) && hex($3) == 0)
			base[$6] = hex(r[1])
	}
	next
}

FILENAME == ARGV[2] {
	njit++
	jlo[njit] = hex($1); jhi[njit] = jlo[njit] + hex($2); jname[njit] = $3
	next
}

FILENAME == ARGV[3] {
	if (!($1 in base))
		next
	nsym++
	slo[nsym] = base[$1] + hex($2); shi[nsym] = slo[nsym] + hex($3)
	sname[nsym] = $4; spath[nsym] = $1
	next
}

/^@\[/ { out = ""; next }

/^\]: [0-9]+$/ {
	for (i = 0; i < $2; i++)
		printf "%s\n", out
	next
}

$1 ~ /^0x[0-9a-f]+$/ {
	ip = $1
	sub(/^0x/, "", ip)
	out = out "\t" ip " " name(hex($1)) "\n"
}
