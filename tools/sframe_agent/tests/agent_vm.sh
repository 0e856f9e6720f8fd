#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-agent in the test kernel (mk/layers/69-sframe_agent runs it in
# the VM): stock Debian programs, started without anything of the
# project's and running, get their tables from outside with
# sframe-agent -p, and perf record -p then unwinds them.
#
#  - a pure-Python loop (python3, libpython linked in) and xz
#    compressing on its main thread (liblzma): of the samples that start
#    in that code, the share whose user stack reaches main (a frame of
#    the executable right below one of libc) with --call-graph=sframe
#    after the agent attached, against the same program with no agent,
#    which Debian's frame-pointer-less builds leave near zero;
#  - two processes of one program attached in one run: their tables
#    cost the kernel one copy, so that at a limit that leaves room for
#    one copy the second process still gets every table;
#  - errors: no such process, and a caller that may not attach.
#
#   agent_vm.sh AGENT PERF
#
# Ends with "N passed, N failed".
set -uo pipefail

agent=$1
perf=$2
here=$(dirname "$(readlink -f "$0")")
stacks=$here/../../lib/sframe_jit/tests/perf_stacks.awk
tmp=${SCRATCH:-/tmp}/sframe-agent-vm
# The least share of samples that reach main with the agent's tables,
# and the most without them.
min_share=${AGENT_MIN_SHARE:-90}
max_fallback=10
. "$here/../../lib/sframe_jit/tests/tap.sh"

rm -rf "$tmp"
mkdir -p "$tmp"

py='import time
t = time.time()
while time.time() - t < 6:
    sum([i * i for i in range(2000)])'
head -c 3000000 /usr/lib/x86_64-linux-gnu/libc.so.6 > "$tmp/data"

# start NAME: start workload NAME in the background; its pid in $pid.
start() {
	case $1 in
	py)	/usr/bin/python3 -c "$py" & ;;
	xz)	xz -T1 -9e -c "$tmp/data" > /dev/null & ;;
	esac
	pid=$!
	# Past the loader: the mappings are those the run keeps.
	sleep 0.5
}

# record NAME PID: 2 seconds of PID's samples, perf script'ed to
# $tmp/NAME.script.
record() {
	"$perf" record -q -N -B -e task-clock:u -c 500000 \
		--call-graph=sframe -p "$2" -o "$tmp/$1.data" -- sleep 2 \
		> "$tmp/$1.log" 2>&1 &&
	"$perf" script -i "$tmp/$1.data" -F ip,sym,dso \
		> "$tmp/$1.script" 2> "$tmp/$1.script.err"
}

# check NAME LEAF EXE WHAT WANT: WANT is "high" or "low".
check() {
	local r t pct

	read -r r t <<< "$(awk -v leaf="$2" -v exe="$3" \
		-v path="$tmp/$1.path" -f "$stacks" -f "$here/reach_main.awk" \
		"$tmp/$1.script")"
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
for w in py xz; do
	if [ $w = py ]; then
		leaf=$pyexe exe=$pyexe what=python3
	else
		leaf='/liblzma\.so[.0-9]*$' exe='/xz$' what="xz (liblzma)"
	fi
	start $w
	"$agent" -v -p "$pid" 2> "$tmp/$w-agent.log"
	result $? "sframe-agent -p attaches to a running $what"
	sed 's/^/# /' "$tmp/$w-agent.log"
	record $w-agent "$pid" || result 1 "perf record -p of $what"
	wait "$pid"
	start $w
	record $w-plain "$pid" || result 1 "perf record -p of $what"
	wait "$pid"
	check $w-agent "$leaf" "$exe" "$what, attached, --call-graph=sframe" high
	check $w-plain "$leaf" "$exe" "$what, no agent, --call-graph=sframe" low
done

# summary_field LOG WORD: the number before WORD in the agent's summary.
summary_field() {
	sed -n "s/.* \([0-9][0-9]*\) $2.*/\1/p" "$1" | tail -n 1
}

# Two processes of one program.  The second attach is made with no
# budget left (kernel.sframe_user_pinned_kb 0, without CAP_IPC_LOCK):
# every file's table it registers is the first's copy, charging
# nothing; only the vDSO, which is no file's, needs a copy of its own.
pinned=$(cat /proc/sys/kernel/sframe_user_pinned_kb)
start py
first=$pid
start py
"$agent" -p "$first" 2> "$tmp/share1.log"
echo 0 > /proc/sys/kernel/sframe_user_pinned_kb
setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- \
	"$agent" -v -v -p "$pid" 2> "$tmp/share2.log"
echo "$pinned" > /proc/sys/kernel/sframe_user_pinned_kb
sed 's/^/# /' "$tmp/share1.log" "$tmp/share2.log" | grep -v ': registered$'
r1=$(summary_field "$tmp/share1.log" registered)
r2=$(summary_field "$tmp/share2.log" registered)
f2=$(summary_field "$tmp/share2.log" failed)
[ -n "$r1" ] && [ "$r1" -gt 2 ] && [ "$r2" = $((r1 - 1)) ] && [ "$f2" = 1 ] &&
	grep -q '\[vdso\]: Cannot allocate memory' "$tmp/share2.log"
result $? "a second process of one program shares the first's copies ($r1, then $r2 registered)"
kill "$first" "$pid" 2> /dev/null
wait

# Errors: a process that does not exist, and one the caller may not
# attach to; both named, and the exit status 1.
"$agent" -p 2147483 2> "$tmp/esrch.log"
rc=$?
[ "$rc" = 1 ] && grep -q '2147483: No such process' "$tmp/esrch.log"
result $? "a process that does not exist is named, exit status 1"
start py
setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	"$agent" -p "$pid" 2> "$tmp/eperm.log"
rc=$?
[ "$rc" = 1 ] && grep -q "$pid: Operation not permitted" "$tmp/eperm.log"
result $? "a caller that may not attach is told so, exit status 1"
sed 's/^/# /' "$tmp/esrch.log" "$tmp/eperm.log"
kill "$pid" 2> /dev/null
wait

summary
