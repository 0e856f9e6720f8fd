#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-run in the test kernel (mk/layers/61-sframe_run runs it in the
# VM):
#
#  - 2000 dlopen()/dlclose() cycles under sframe-run (run_loop): each
#    object registered while loaded and not after, no growth of the
#    process's registries or VmPin;
#  - perf record of a pure-Python loop (python3, libpython linked in)
#    and of xz compressing (liblzma): the share of samples starting in
#    that code whose user stack reaches main (a frame of the executable
#    called from libc, which is main called by __libc_start_call_main).
#    Under sframe-run with --call-graph=sframe most do; with
#    --call-graph=fp, and with sframe but without sframe-run, almost
#    none do, since Debian builds without frame pointers: the test
#    fails if the tables were not there or not used;
#  - under seccomp filters that leave the calls out, the program runs,
#    without tables and with a warning; under one that lets them
#    through, with its tables.
#
#   sframe_run_vm.sh OUTPUT_DIR PERF
#
# OUTPUT_DIR is the library's build directory (sframe-run and
# test-bin/).  Ends with "N passed, N failed".
set -uo pipefail

out=$1
perf=$2
run=$out/sframe-run
tmp=${SCRATCH:-/tmp}/sframe-run-vm
# Per sample, the least share of reaching main that real unwinding
# gets and the most that the fallback may get.
min_share=60
max_fallback=10
. "$(dirname "$0")/tap.sh"

rm -rf "$tmp"
mkdir -p "$tmp"

SFRAME_RUN_SYNC=1 "$run" "$out/test-bin/run_loop" "$out/test-bin" 2000 \
	> "$tmp/loop.log" 2>&1
grep -E '^(ok|not ok) - |^#' "$tmp/loop.log" | sed 's/^/loop: /'
line=$(tail -n 1 "$tmp/loop.log")
if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	passed=$((passed + BASH_REMATCH[1]))
	failed=$((failed + BASH_REMATCH[2]))
else
	result 1 "run_loop reported no result"
fi

# A few seconds of samples of a pure-Python loop, and of xz -T1 (it
# compresses on its main thread) on code-like data.
py='import time
t = time.time()
while time.time() - t < 1.5:
    sum([i * i for i in range(2000)])'
head -c 600000 /usr/lib/x86_64-linux-gnu/libc.so.6 > "$tmp/data"

# record NAME MODE [sframe-run] -- CMD...: perf script -F ip,sym,dso of
# a recording, in $tmp/NAME.script.
record() {
	local name=$1 mode=$2

	shift 2
	"$perf" record -q -N -B -e task-clock:u -c 500000 \
		--call-graph="$mode" -o "$tmp/$name.data" -- "$@" \
		> "$tmp/$name.log" 2>&1 || {
		cat "$tmp/$name.log"
		return 1
	}
	"$perf" script -i "$tmp/$name.data" -F ip,sym,dso \
		> "$tmp/$name.script" 2> "$tmp/$name.script.err"
}

# share NAME LEAF EXE: "reached total" of the samples whose leaf frame
# is in an object matching LEAF; reached ones have a frame in libc.so.6
# right above one in EXE (main, called by __libc_start_call_main).
share() {
	awk -v leaf="$2" -v exe="$3" '
	function dso(line) {
		if (match(line, /\([^()]*\)$/))
			return substr(line, RSTART + 1, RLENGTH - 2)
		return ""
	}
	BEGIN { RS = ""; FS = "\n" }
	{
		if (dso($1) !~ leaf)
			next
		total++
		for (i = 2; i <= NF; i++)
			if (dso($i) ~ /\/libc\.so\.6$/ && dso($(i - 1)) ~ exe) {
				reached++
				break
			}
	}
	END { printf "%d %d\n", reached, total }' "$tmp/$1.script"
}

# check NAME LEAF EXE WHAT WANT: WANT is "high" or "low".
check() {
	local r t pct

	read -r r t <<< "$(share "$1" "$2" "$3")"
	pct=$((t ? 100 * r / t : 0))
	echo "# $4: $r of $t samples reach main ($pct%)"
	if [ "$5" = high ]; then
		[ "$t" -ge 100 ] && [ "$pct" -ge "$min_share" ]
		result $? "$4 reaches main in at least $min_share% of samples"
	else
		[ "$t" -ge 100 ] && [ "$pct" -le "$max_fallback" ]
		result $? "$4 reaches main in at most $max_fallback% of samples"
	fi
}

pyexe='/python3[.0-9]*$'
xzleaf='/liblzma\.so[.0-9]*$'
xzexe='/xz$'
for w in py xz; do
	if [ $w = py ]; then
		cmd=(/usr/bin/python3 -c "$py")
		leaf=$pyexe
		exe=$pyexe
		what=python3
	else
		cmd=(xz -T1 -9 -k -f "$tmp/data")
		leaf=$xzleaf
		exe=$xzexe
		what="xz (liblzma)"
	fi
	# The start-up thread's wait grows with the emulation's slowness
	# (about a second here, more under perf), which a program of a
	# few seconds would spend without tables: the wait of real
	# hardware, so that the samples test the tables, not the wait.
	if SFRAME_RUN_DELAY_MS=20 record $w-sframe sframe "$run" "${cmd[@]}" &&
	   SFRAME_RUN_DELAY_MS=20 record $w-fp fp "$run" "${cmd[@]}" &&
	   record $w-plain sframe "${cmd[@]}"; then
		check $w-sframe "$leaf" "$exe" \
			"$what under sframe-run, --call-graph=sframe" high
		check $w-fp "$leaf" "$exe" \
			"$what under sframe-run, --call-graph=fp" low
		check $w-plain "$leaf" "$exe" \
			"$what without sframe-run, --call-graph=sframe" low
	else
		result 1 "perf record of $what"
	fi
done

# Under a seccomp filter that leaves sframe-run's calls out (killing at
# them, as systemd's SystemCallFilter= does, or failing them with EPERM,
# as a container's profile does): the wrapper warns and loads nothing,
# the preload loaded without it stays out of the way, and the program
# runs.  Under one that leaves them in, the tables are registered.
deny=$out/test-bin/seccomp_deny
calls=472,473,474
seccomp_case() {
	local how=$1 name=$2 got rc

	got=$($deny $how "$run" sh -c 'echo "[$LD_PRELOAD]"' 2> "$tmp/sc.err")
	rc=$?
	sed 's/^/# /' "$tmp/sc.err"
	[ $rc = 0 ] && [ "$got" = "[]" ] &&
		grep -q "warning: a seccomp filter keeps" "$tmp/sc.err"
	result $? "$name: sframe-run warns and preloads nothing"
	got=$(SFRAME_RUN_SYNC=1 LD_PRELOAD=$out/libsframe_run.so \
		$deny $how python3 -c 'print(7)' 2>&1)
	[ $? = 0 ] && [ "$got" = 7 ]
	result $? "$name: python3 runs with the preload alone"
}
seccomp_case "$calls" "a filter that kills at the calls"
seccomp_case "--errno $calls" "a filter that fails the calls"
got=$(SFRAME_RUN_SYNC=1 SFRAME_RUN_VERBOSE=1 $deny 39999 "$run" \
	python3 -c 'print(7)' 2> "$tmp/sc.err")
[ $? = 0 ] && [ "$got" = 7 ] && ! grep -q warning "$tmp/sc.err" &&
	grep -q "^sframe-run: + .*libc\.so.*: elf .sframe\|^sframe-run: + .*libc\.so.*: jit" \
		"$tmp/sc.err"
result $? "a filter that lets the calls through: libc's table registered"

summary
