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
#  - -a with 50 processes of 5 programs (python3, xz, perl, mawk, bash),
#    recorded system-wide once the agent has attached: each program's
#    samples reach main;
#  - -p following 20 processes: the last loads a library well after the
#    attach, and its samples in it reach main;
#  - perf record --call-graph=sframe starting the agent itself, for -p,
#    -a and a workload;
#  - errors: no such process, and a caller that may not attach.
#
#  - a JIT that announces its code through the GDB JIT interface by
#    calling __jit_debug_register_code() in its own executable, and one
#    that hands its .eh_frame to libgcc's __register_frame(): their
#    code's samples reach main, whether they registered the code before
#    the agent attached (read from the GDB list, and from libgcc's
#    lists) or after (through the agent's uprobes); the deregistration
#    removes the table; a list of more objects than the agent reads is
#    read up to its bound and reported, entries larger than it reads
#    and objects past what a walk reads in all are counted without a
#    table, and code registered before it is executable gets its table
#    once it is;
#
#  - a program that spends its time calling through its PLT: the
#    samples in the PLT's entry reach main (the .plt's FDE converted
#    into stubs);
#  - lli-14 running a program without frame pointers (the library's
#    tests/jit_path.c as LLVM IR): MCJIT's objects registered with
#    libgcc before the agent attached, and ORC's under sframe-agent --,
#    after it; at least 99% of the samples in the JIT's code reach main.
#
#   agent_vm.sh AGENT PERF [LL]
#
# The JIT test's programs are in tests/ beside AGENT; LL is jit_path.ll
# (the library's make tests-jit), without which lli is not run.
#
# Ends with "N passed, N failed".
set -uo pipefail

agent=$1
perf=$2
ll=${3:-}
here=$(dirname "$(readlink -f "$0")")
stacks=$here/../../lib/sframe_jit/tests/perf_stacks.awk
tmp=${SCRATCH:-/tmp}/sframe-agent-vm
# The least share of samples that reach main with the agent's tables,
# and the most without them.
min_share=${AGENT_MIN_SHARE:-90}
max_fallback=10
# Python's start-up under sframe-agent --: its libraries have their
# tables before they run, but the modules it dlopen()s (_json, _decimal)
# are followed through side-band records, a few milliseconds late, and
# _decimal's initialisation takes 4 to 5% of the samples in that while;
# 92 to 93% reach the entry in runs here.
min_startup=${AGENT_MIN_STARTUP:-85}
# The least share for JIT code and the PLT, whose tables come whole.
min_jit=99
. "$here/../../lib/sframe_jit/tests/tap.sh"
. "$here/../../lib/sframe_jit/tests/jit_code.sh"

rm -rf "$tmp"
mkdir -p "$tmp"
# perf record starts no agent of its own but where a test asks it to.
export PERF_SFRAME_AGENT=none

# The agent, with its converted tables kept in the scratch directory:
# the root file system of the VM is read-only.
ag() {
	"$agent" --cache-dir="$tmp/cache" "$@"
}

# A pure-Python loop of SECONDS (its argument, 120 by default).  Each
# workload runs for longer than any load makes its test take, and is
# stopped once recorded: perf record -p of a process that exits before
# its "sleep 2" ends kills the sleep and dies of the same signal.
py='import sys, time
t = time.time()
while time.time() - t < float((sys.argv[1:] or [120])[0]):
    sum([i * i for i in range(2000)])'
for i in 1 2 3 4 5 6 7 8; do
	cat /usr/lib/x86_64-linux-gnu/libc.so.6
done > "$tmp/data"

# start NAME [SECONDS]: start workload NAME in the background; its pid
# in $pid.
start() {
	case $1 in
	py)	/usr/bin/python3 -c "$py" ${2:-} & ;;
	xz)	xz -T1 -9e -c "$tmp/data" > /dev/null & ;;
	esac
	pid=$!
	settle "$pid"
}

# settle PID: wait, up to 10 s, until PID's executable mappings stop
# changing: past its loader, they are those its run keeps, whatever the
# load.  (Its data mappings change as long as it allocates.)
settle() {
	local i before after=

	for i in $(seq 50); do
		sleep 0.2
		before=$after
		after=$(awk '$2 ~ /x/' "/proc/$1/maps" 2> /dev/null)
		[ -n "$after" ] && [ "$before" = "$after" ] && return
	done
}

# record NAME PID [PERIOD]: 2 seconds of PID's samples, one every
# PERIOD ns of its CPU time (default 500000), perf script'ed to
# $tmp/NAME.script.
record() {
	"$perf" record -q -N -B -e task-clock:u -c "${3:-500000}" \
		--call-graph=sframe -p "$2" -o "$tmp/$1.data" -- sleep 2 \
		> "$tmp/$1.log" 2>&1 &&
	"$perf" script -i "$tmp/$1.data" -F ip,sym,dso \
		> "$tmp/$1.script" 2> "$tmp/$1.script.err"
}

# check NAME LEAF EXE WHAT WANT: WANT is "high" or "low"; LEAF the
# object of the samples' leaf frames, or sym:FUNCTION for their function.
check() {
	local r t pct leaf=$2 leafsym=

	case "$leaf" in
	sym:*)	leafsym=${leaf#sym:} leaf= ;;
	esac
	read -r r t <<< "$(awk -v leaf="$leaf" -v leafsym="$leafsym" -v exe="$3" \
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

# summary_field LOG WORD: the number before WORD in the agent's summary.
summary_field() {
	sed -n "s/.* \([0-9][0-9]*\) $2.*/\1/p" "$1" | tail -n 1
}

pyexe='/python3[.0-9]*$'
for w in py xz; do
	if [ $w = py ]; then
		leaf=$pyexe exe=$pyexe what=python3
	else
		leaf='/liblzma\.so[.0-9]*$' exe='/xz$' what="xz (liblzma)"
	fi
	start $w
	ag -v --once -p "$pid" 2> "$tmp/$w.agent"
	result $? "sframe-agent --once -p attaches to a running $what"
	sed 's/^/# /' "$tmp/$w.agent"
	record $w-agent "$pid" || result 1 "perf record -p of $what"
	kill "$pid"
	wait "$pid"
	start $w
	record $w-plain "$pid" || result 1 "perf record -p of $what"
	kill "$pid"
	wait "$pid"
	check $w-agent "$leaf" "$exe" "$what, attached, --call-graph=sframe" high
	check $w-plain "$leaf" "$exe" "$what, no agent, --call-graph=sframe" low
done

# The GDB JIT interface, called directly, and libgcc's __register_frame():
# registered after the attach (the uprobe), before it (the first walk),
# and with no agent.  The JIT runs for longer than its test needs, takes
# its code back, and waits to be stopped.  Its code is anonymous memory,
# which perf names //anon, or by a /tmp/perf-PID.map another process may
# have left.
jit=$(dirname "$agent")/tests
jitleaf='^(//anon|/tmp/perf-[0-9]+\.map|\[unknown\])$'
# jitrun gdb|frame DELAY_MS SECONDS: the JIT, its output in $tmp/jit.out.
jitrun() {
	"$jit/jit_direct" "$1" "$jit/jit_blob" "$2" "$3" > "$tmp/jit.out" &
	pid=$!
	settle "$pid"
}
# withdrawn LOG: wait, up to 20 s, until the JIT took its code back and
# the agent, logging to LOG, removed its table.
withdrawn() {
	local i

	for i in $(seq 100); do
		grep -q withdrawn "$tmp/jit.out" && grep -q "$2" "$1" && return 0
		sleep 0.2
	done
	return 1
}
for how in gdb frame; do
	if [ $how = gdb ]; then
		what="GDB JIT interface" field="JIT objects registered"
		gone='JIT object .*: removed'
	else
		what="__register_frame()" field="frames registered"
		gone='frame 0x5a0002000: removed'
	fi
	jitrun $how 1500 6
	ag -v -v -p "$pid" 2> "$tmp/$how-after.agent" &
	apid=$!
	sleep 2.5
	record $how-after "$pid" || result 1 "perf record -p of the JIT"
	withdrawn "$tmp/$how-after.agent" "$gone"
	result $? "$what: code taken back is unregistered"
	kill "$pid"
	wait "$pid"
	wait "$apid"
	grep -v ': registered$' "$tmp/$how-after.agent" | sed 's/^/# /'
	[ "$(summary_field "$tmp/$how-after.agent" "$field")" = 1 ]
	result $? "$what: code announced after the attach is registered"
	jitrun $how 0 30
	ag --once -p "$pid" 2> "$tmp/$how-before.agent"
	record $how-before "$pid" || result 1 "perf record -p of the JIT"
	kill "$pid"
	wait "$pid"
	[ "$(summary_field "$tmp/$how-before.agent" "$field")" = 1 ]
	result $? "$what: code announced before the attach is registered"
	check $how-after "$jitleaf" '/jit_direct$' \
		"$what, code announced after the attach" high
	check $how-before "$jitleaf" '/jit_direct$' \
		"$what, code announced before the attach" high
done
# frames_none LOG: the summary's count of frames without tables (JIT
# objects have a count of the same words before it).
frames_none() {
	sed -n 's/.* frames registered, \([0-9]*\) without tables.*/\1/p' "$1"
}

# frame_bound NAME ENV=VALUE...: the JIT, which registers with ENV set,
# attached --once -v -v, the agent's log in $tmp/NAME.agent; its
# summary's counts of frames in n, none and unread.
frame_bound() {
	local name=$1

	shift
	env "$@" "$jit/jit_direct" frame "$jit/jit_blob" 0 30 \
		> "$tmp/jit.out" &
	pid=$!
	settle "$pid"
	ag -v -v --once -p "$pid" 2> "$tmp/$name.agent.all"
	grep -v ': registered \|: No such file or directory$' \
		"$tmp/$name.agent.all" > "$tmp/$name.agent"
	kill "$pid"
	wait "$pid"
	sed 's/^/# /' "$tmp/$name.agent"
	n=$(summary_field "$tmp/$name.agent" "frames registered")
	none=$(frames_none "$tmp/$name.agent")
	unread=$(summary_field "$tmp/$name.agent" "processes' earlier ones unread")
}

# The bound on the walk of libgcc's lists: 4100 objects that describe
# no code registered before the code's own, which is then the list's
# head (newest first).  The agent reads 4096 of them, the code's first,
# and counts the process as one whose earlier registrations it did not
# all read.
frame_bound frame-pad JIT_DIRECT_PAD=4100
[ "${n:-0}" = 1 ] && [ $((${n:-0} + ${none:-0})) = 4096 ] && [ "${unread:-0}" = 1 ]
result $? "__register_frame(), 4101 objects before the attach: 4096 read, the code's first, the rest counted unread"

# The bound on one registration's entries: the code's behind a CIE of
# 5 MiB, past the 4 MiB the agent reads of one.  Counted without a
# table; read further, the entries would convert and register.
frame_bound frame-big JIT_DIRECT_BIG=$((5 << 20))
[ "${n:-1}" = 0 ] && [ "${none:-0}" = 1 ]
result $? "__register_frame() of 5 MiB of entries: past the 4 MiB read, counted without a table"

# The bound on what a walk of the lists reads in all: 24 objects of
# 3 MiB registered before the code's, some 100 MiB to read against the
# 64 MiB a walk may.  The code's is read first; those past the bound are
# not read, each counted without a table ("Argument list too long").
frame_bound frame-walk JIT_DIRECT_PAD=24 JIT_DIRECT_PAD_SIZE=$((3 << 20))
big=$(grep -c 'frame 0x[0-9a-f]*: Argument list too long$' "$tmp/frame-walk.agent")
[ "${n:-0}" = 1 ] && [ "${none:-0}" = 24 ] && [ "$big" -ge 1 ] && [ "$big" -lt 24 ]
result $? "__register_frame(), 24 objects of 3 MiB before the attach: the walk stops reading at 64 MiB"

# Code registered before it is executable, as LLVM's RuntimeDyld does:
# the kernel takes no table for code not mapped executable, so the agent
# registers it at the mprotect() that makes it so, a second after the
# registration it has read by then.
export JIT_DIRECT_LATE=1000
jitrun frame 1500 4
unset JIT_DIRECT_LATE
ag -v -v -p "$pid" 2> "$tmp/frame-late.agent" &
apid=$!
withdrawn "$tmp/frame-late.agent" 'frame 0x5a0002000: removed'
kill "$pid"
wait "$pid"
wait "$apid"
grep -v ': registered$' "$tmp/frame-late.agent" | sed 's/^/# /'
n=$(summary_field "$tmp/frame-late.agent" "frames registered")
none=$(frames_none "$tmp/frame-late.agent")
[ "${n:-0}" = 1 ] && [ "${none:-1}" = 0 ]
result $? "__register_frame() of code not executable yet: registered once it is"

jitrun gdb 0 30
record jit-plain "$pid" || result 1 "perf record -p of the JIT"
kill "$pid"
wait "$pid"
check jit-plain "$jitleaf" '/jit_direct$' "JIT code, no agent" low

# The PLT: samples in plt_callee@plt, the entry's own instructions,
# whose CFA ld describes with an expression that the agent converts into
# stubs (rows repeating every 16 bytes).  Where samples land varies
# under software emulation (48 to 426 of 4000 in the entry, in runs
# here): a sample every 50 us of CPU time rather than 500.
"$jit/plt_loop" &
pid=$!
settle "$pid"
ag --once -p "$pid" 2> "$tmp/plt.agent"
record plt "$pid" 50000 || result 1 "perf record -p of plt_loop"
kill "$pid"
wait "$pid"
min_share=$min_jit check plt 'sym:^plt_callee@plt$' '/plt_loop$' \
	"plt_loop, samples in its PLT" high

# lli-14: its JIT's code, named by nothing, is anonymous memory; main is
# lli's.  MCJIT registered its object before the agent attached; ORC's
# is registered under the agent, which followed it from the exec.
if [ -n "$ll" ]; then
	lli-14 -jit-kind=mcjit "$ll" 100000000000 &
	pid=$!
	jit_code "$pid"
	ag -v --once -p "$pid" 2> "$tmp/lli-mcjit.agent"
	record lli-mcjit "$pid" || result 1 "perf record -p of lli-14 (mcjit)"
	kill "$pid"
	wait "$pid"
	# Not through ag(): lli is to be this shell's child, the agent
	# exec'd into it; the agent's helper writes the summary once lli
	# has exited.  ORC's RuntimeDyld registers its object before it
	# makes the code executable: -v -v says when each was registered.
	"$agent" --cache-dir="$tmp/cache" -v -v -- lli-14 "$ll" 100000000000 \
		2> "$tmp/lli-orc.agent" &
	pid=$!
	jit_code "$pid"
	record lli-orc "$pid" || result 1 "perf record -p of lli-14 (orc)"
	kill "$pid"
	wait "$pid"
	for i in $(seq 50); do
		grep -q 'frames registered' "$tmp/lli-orc.agent" && break
		sleep 0.2
	done
	for kind in mcjit orc; do
		grep -v ': registered$' "$tmp/lli-$kind.agent" | sed 's/^/# /'
		n=$(summary_field "$tmp/lli-$kind.agent" "frames registered")
		[ -n "$n" ] && [ "$n" -ge 1 ]
		result $? "lli-14 ($kind): its __register_frame() objects get tables (${n:-0})"
		min_share=$min_jit check lli-$kind "$jitleaf" '/lli$' \
			"lli-14 ($kind), JIT code" high
	done
fi

# Following: a process that loads code after the agent attached.  The
# agent, left running with -p, registers libbz2 and Python's _bz2 module
# as the process dlopen()s them, and exits when the process does.
bz='import time
time.sleep(2)
import bz2
d = open("/usr/lib/x86_64-linux-gnu/libc.so.6", "rb").read()[:300000]
t = time.time()
while time.time() - t < 120:
    bz2.compress(d)'
# follow_bz NAME DELAY WAIT [PID...]: python3 that loads libbz2 DELAY
# seconds in, attached once it settled, with -p PID,... before it, and
# followed; recorded WAIT seconds after the agent started, then every
# process stopped.  Returns the agent's status.
follow_bz() {
	local name=$1 delay=$2 wait=$3 apid

	shift 3
	/usr/bin/python3 -c "${bz/time.sleep(2)/time.sleep($delay)}" &
	pid=$!
	settle "$pid"
	ag -v -p "$(echo "$@" "$pid" | tr ' ' ,)" 2> "$tmp/$name.agent" &
	apid=$!
	sleep "$wait"
	record "$name" "$pid" ||
		result 1 "perf record -p of python3 importing bz2"
	kill "$pid" "$@"
	wait "$pid" "$@"
	wait "$apid"
}
follow_bz follow 2 2.5
result $? "sframe-agent -p follows a process until it exits, status 0"
sed 's/^/# /' "$tmp/follow.agent"
check follow '/libbz2\.so[.0-9]*$' "$pyexe" \
	"libbz2, loaded after the agent attached" high

# Following many: 19 idle processes, then the same python3, in one -p
# list.  Each process's rings, one per CPU, are in the agent's poll set
# however many there are; one left out would not wake the agent when
# python3, last, loads libbz2 well after the attach.
sleeps=
for i in $(seq 19); do
	sleep 300 &
	sleeps="$sleeps $!"
done
# shellcheck disable=SC2086
follow_bz follow20 8 9 $sleeps
result $? "sframe-agent -p follows 20 processes until they exit, status 0"
sed 's/^/# /' "$tmp/follow20.agent"
check follow20 '/libbz2\.so[.0-9]*$' "$pyexe" \
	"libbz2, loaded after the agent attached to 20 processes" high

# perf record --call-graph=sframe starts the agent itself (named by
# PERF_SFRAME_AGENT here, sframe-agent in $PATH otherwise): -p waits for
# its first attach, -a likewise, and a workload runs under it.
printf '#!/bin/sh\nexec "%s" --cache-dir="%s" "$@"\n' "$agent" "$tmp/cache" \
	> "$tmp/perf-agent"
chmod +x "$tmp/perf-agent"
start py
PERF_SFRAME_AGENT=$tmp/perf-agent record perf-p "$pid" ||
	result 1 "perf record -p with the agent it starts"
kill "$pid"
wait "$pid"
sed 's/^/# perf record -p: /' "$tmp/perf-p.log"
check perf-p "$pyexe" "$pyexe" "python3 under perf record -p alone" high
start py
PERF_SFRAME_AGENT=$tmp/perf-agent "$perf" record -q -N -B -e task-clock:u \
	-c 500000 --call-graph=sframe -a -o "$tmp/perf-a.data" -- sleep 2 \
	> "$tmp/perf-a.log" 2>&1 &&
"$perf" script -i "$tmp/perf-a.data" --pid "$pid" -F ip,sym,dso \
	> "$tmp/perf-a.script" 2> "$tmp/perf-a.script.err" ||
	result 1 "perf record -a with the agent it starts"
kill "$pid"
wait "$pid"
sed 's/^/# perf record -a: /' "$tmp/perf-a.log"
check perf-a "$pyexe" "$pyexe" "python3 under perf record -a alone" high

# COMMAND: Python's start-up, imports that dlopen() modules included,
# unwound to the program's entry (the executable's _start, or the
# loader's _dl_start_user before it has called the program's); with the
# agent, and without it.
startup() {
	"$perf" record -q -N -B -e task-clock:u -c 100000 \
		--call-graph=sframe -o "$tmp/$1.data" -- "${@:2}" \
		> "$tmp/$1.log" 2>&1 &&
	"$perf" script -i "$tmp/$1.data" -F comm,ip,sym,dso \
		> "$tmp/$1.script" 2> "$tmp/$1.script.err"
}

# entry NAME: "reached total" of python3's samples.
entry() {
	awk 'BEGIN { RS = ""; FS = "\n" }
	$1 ~ /^python3/ {
		total++
		if ($NF ~ / (_start|_dl_start_user) \(/)
			reached++
	}
	END { printf "%d %d\n", reached, total }' "$tmp/$1.script"
}

# Once first, so that the cache holds the modules' tables (_json and
# _decimal are dlopen()ed, and followed a few milliseconds late; a first
# conversion of _decimal would make those milliseconds longer).
"$agent" --cache-dir="$tmp/cache" -- /usr/bin/python3 -c 'import json, decimal'
startup cmd-agent "$agent" --cache-dir="$tmp/cache" -- /usr/bin/python3 -c 'import json, decimal' ||
	result 1 "perf record of sframe-agent -- python3"
startup cmd-plain /usr/bin/python3 -c 'import json, decimal' ||
	result 1 "perf record of python3"
PERF_SFRAME_AGENT=$tmp/perf-agent startup cmd-perf \
	/usr/bin/python3 -c 'import json, decimal' ||
	result 1 "perf record of python3, the agent started by perf"
for m in agent perf plain; do
	read -r r t <<< "$(entry cmd-$m)"
	pct=$((t ? 100 * r / t : 0))
	echo "# python3 start-up, $m: $r of $t samples reach its entry ($pct%)"
	if [ $m = agent ]; then
		[ "$t" -ge 100 ] && [ "$pct" -ge "$min_startup" ]
		result $? "sframe-agent -- python3: at least $min_startup% of its start-up's samples reach its entry"
	elif [ $m = perf ]; then
		[ "$t" -ge 100 ] && [ "$pct" -ge "$min_startup" ]
		result $? "perf record -- python3, the agent started by perf: at least $min_startup% reach its entry"
	else
		[ "$t" -ge 100 ] && [ "$pct" -le "$max_fallback" ]
		result $? "python3 alone: at most $max_fallback% of its start-up's samples reach its entry"
	fi
done
ag -- sh -c 'exit 3' 2> /dev/null
result $(($? != 3)) "sframe-agent -- CMD exits with CMD's status"
ag -- /nonexistent/program 2> /dev/null
result $(($? != 127)) "sframe-agent -- CMD exits with 127 when CMD cannot be found"

# storm: 200 execs of /bin/true, one after the other; their time in ms.
storm() {
	local t0 t1

	t0=$(date +%s%N)
	for i in $(seq 200); do /bin/true; done
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# -a: an exec storm, and processes started after the agent.
plain_ms=$(storm)
# Not through ag(): SIGINT must reach the agent, not a subshell.
"$agent" --cache-dir="$tmp/cache" -a 2> "$tmp/all.agent" &
apid=$!
sleep 3
agent_ms=$(storm)
echo "# 200 execs of /bin/true: $plain_ms ms alone, $agent_ms ms under sframe-agent -a"
# Long enough for any load; stopped once recorded.
start py 60
pypid=$pid
start xz
record all-py "$pypid" &
rpid=$!
record all-xz "$pid" || result 1 "perf record -p of xz under -a"
wait "$rpid" || result 1 "perf record -p of python3 under -a"
kill -INT "$apid"
wait "$apid"
result $? "sframe-agent -a ends at SIGINT with status 0"
sed 's/^/# /' "$tmp/all.agent"
execs=$(summary_field "$tmp/all.agent" execs)
[ -n "$execs" ] && [ "$execs" -ge 202 ]
result $? "sframe-agent -a saw every exec (at least 202: $execs)"
# Each exec maps at least /bin/true, whose table the agent registers
# after the record of its mmap: at least 200 waits, each of a clock the
# record and the agent share (a median past 10 s is one misread).
read -r waits median <<< "$(sed -n \
	's/.* \([0-9]*\) new mappings given tables \([0-9.]*\) ms after.*/\1 \2/p' \
	"$tmp/all.agent")"
echo "# new mappings' tables: ${waits:-0}, a median ${median:-?} ms after their mmap"
[ "${waits:-0}" -ge 200 ] && awk -v m="${median:-1e9}" 'BEGIN { exit !(m < 10000) }'
result $? "sframe-agent -a times each new mapping's table from its mmap"
check all-py "$pyexe" "$pyexe" "python3 started under -a" high
check all-xz '/liblzma\.so[.0-9]*$' '/xz$' "xz started under -a" high
kill "$pid" "$pypid" 2> /dev/null
wait


# -a with 50 processes of 5 programs, 10 each, all started before the
# agent, and recorded system-wide: of each program's samples, the share
# whose stack reaches main, a frame of the executable right below one of
# libc.  The processes are CPU-bound loops, killed once recorded.
crowd=()
for i in $(seq 10); do
	/usr/bin/python3 -c "$py" &
	crowd+=($!)
	xz -T1 -9e -c "$tmp/data" > /dev/null &
	crowd+=($!)
	/usr/bin/perl -e '$s = 0; while (1) { $s = join(",", map { $_ * 3 } 1 .. 50) }' &
	crowd+=($!)
	/usr/bin/mawk 'BEGIN { while (1) { s = s "x"; if (length(s) > 999) s = "" } }' &
	crowd+=($!)
	/usr/bin/bash -c 'x=0; while :; do x=$((x * 7 % 1000 + 1)); done' &
	crowd+=($!)
done
settle "${crowd[-1]}"
# Recorded once the agent has attached to them: it writes a byte then,
# into a FIFO of the guest's /tmp (the scratch directory, over 9p, has
# none).
ready=$(mktemp -u /tmp/crowd-ready.XXXXXX)
mkfifo "$ready" || result 1 "a FIFO in /tmp"
"$agent" --cache-dir="$tmp/cache" --ready-fd=3 -a 2> "$tmp/crowd.agent" \
	3> "$ready" &
apid=$!
head -c 1 "$ready" > /dev/null
rm -f "$ready"
"$perf" record -q -N -B -e task-clock:u -c 500000 --call-graph=sframe -a \
	-o "$tmp/crowd.data" -- sleep 3 > "$tmp/crowd.log" 2>&1 &&
"$perf" script -i "$tmp/crowd.data" -F comm,ip,sym,dso \
	> "$tmp/crowd.script" 2> "$tmp/crowd.script.err" ||
	result 1 "perf record -a of 50 processes"
kill "${crowd[@]}" 2> /dev/null
kill -INT "$apid"
wait
sed 's/^/# /' "$tmp/crowd.agent"
for prog in python3 xz perl mawk bash; do
	read -r r t <<< "$(awk -v comm="$prog" 'BEGIN { RS = ""; FS = "\n" }
	function dso(l) {
		return match(l, /\([^()]*\)$/) ? substr(l, RSTART + 1, RLENGTH - 2) : ""
	}
	$1 ~ "^ *" comm "( |$)" {
		total++
		for (i = 3; i <= NF; i++)
			if (dso($i) ~ /\/libc\.so\.6$/ && dso($(i - 1)) ~ "/" comm "[.0-9]*$") {
				reached++
				break
			}
	}
	END { printf "%d %d\n", reached, total }' "$tmp/crowd.script")"
	pct=$((t ? 100 * r / t : 0))
	echo "# -a, 10 processes of $prog among 50: $r of $t samples reach main ($pct%)"
	[ "$t" -ge 100 ] && [ "$pct" -ge "$min_share" ]
	result $? "-a, 10 processes of $prog among 50: at least $min_share% reach main"
done

# Two processes of one program.  The second attach is made with no
# budget left (kernel.sframe_user_pinned_kb 0, without CAP_IPC_LOCK):
# every file's table it registers is the first's copy, charging
# nothing; only the vDSO, which is no file's, needs a copy of its own.
pinned=$(cat /proc/sys/kernel/sframe_user_pinned_kb)
start py
first=$pid
start py
ag --once -p "$first" 2> "$tmp/share1.log"
echo 0 > /proc/sys/kernel/sframe_user_pinned_kb
setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock -- \
	"$agent" --cache-dir="$tmp/cache" -v -v --once -p "$pid" \
	2> "$tmp/share2.log"
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

# The cache: a first run converts and stores each file, a second loads
# them all; an entry with a byte changed is found stale, converted and
# stored again, never registered; a directory held to 256 KiB keeps at
# most that.
cache=$tmp/cache-test
start py
for run in first second; do
	"$agent" --cache-dir="$cache" --once -p "$pid" 2> "$tmp/cache-$run.log"
done
sed 's/^/# /' "$tmp/cache-first.log" "$tmp/cache-second.log"
stored=$(summary_field "$tmp/cache-first.log" stored)
loaded=$(summary_field "$tmp/cache-second.log" loaded)
[ -n "$stored" ] && [ "$stored" -ge 5 ] && [ "$loaded" = "$stored" ] &&
	[ "$(summary_field "$tmp/cache-second.log" stored)" = 0 ]
result $? "a second run loads every table the first stored ($stored, then $loaded)"
big=$(ls -S "$cache"/*.sframe | head -n 1)
size=$(stat -c %s "$big")
printf '\x5a' | dd of="$big" bs=1 seek=$((size / 2)) conv=notrunc status=none
kill "$pid"
wait "$pid"
start py
"$agent" --cache-dir="$cache" -v --once -p "$pid" 2> "$tmp/cache-stale.log"
sed 's/^/# /' "$tmp/cache-stale.log"
[ "$(summary_field "$tmp/cache-stale.log" stale)" = 1 ] &&
	[ "$(summary_field "$tmp/cache-stale.log" stored)" = 1 ] &&
	[ "$(summary_field "$tmp/cache-stale.log" failed)" = 0 ] &&
	grep -q "$big: stale or corrupt" "$tmp/cache-stale.log"
result $? "an entry with a changed byte is converted again and rewritten"
rm -rf "$cache"
"$agent" --cache-dir="$cache" --cache-size=256K --once -a \
	2> "$tmp/cache-small.log"
sed 's/^/# /' "$tmp/cache-small.log"
total=$(cat "$cache"/*.sframe | wc -c)
evicted=$(summary_field "$tmp/cache-small.log" evicted)
echo "# a cache of 256 KiB holds $total bytes after $evicted evictions"
[ "$total" -le $((256 << 10)) ] && [ "$total" -gt 0 ] && [ "$evicted" -gt 0 ]
result $? "a cache directory is held to its size"
kill "$pid"
wait

# Errors: a process that does not exist, and one the caller may not
# attach to; both named, and the exit status 1.
ag --once -p 2147483 2> "$tmp/esrch.log"
rc=$?
[ "$rc" = 1 ] && grep -q '2147483: No such process' "$tmp/esrch.log"
result $? "a process that does not exist is named, exit status 1"
start py
setpriv --reuid=65534 --regid=65534 --clear-groups -- \
	"$agent" --no-cache --once -p "$pid" 2> "$tmp/eperm.log"
rc=$?
[ "$rc" = 1 ] && grep -q "$pid: Operation not permitted" "$tmp/eperm.log"
result $? "a caller that may not attach is told so, exit status 1"
sed 's/^/# /' "$tmp/esrch.log" "$tmp/eperm.log"
kill "$pid" 2> /dev/null
wait

summary
