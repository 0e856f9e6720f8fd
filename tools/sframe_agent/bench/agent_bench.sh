#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What sframe-agent costs, in the test kernel (mk/bench/90-agent runs it
# in the VM), each figure the median of REPS runs:
#
#  - a target's start-up: the CPU time of "python3 -c pass" (its own,
#    user and system, from its rusage), under sframe-agent -a against
#    alone: nothing is injected, so the ratio should be 1.00 within
#    noise; and, to tell the kernel's share from the emulated machine's,
#    under an agent stopped once attached and beside a busy loop;
#  - how long a new process's mappings wait for their tables under -a,
#    from each mmap to its registration, the cache warm;
#  - the agent's own CPU with IDLE processes sleeping (default 200),
#    over SECONDS (default 10) of -a, as a share of one core;
#  - the conversion of libLLVM-14 the first time (no cache) against a
#    later attach that loads it from the cache: sframe-agent --once -p
#    of an lli-14 process, the whole run timed;
#  - the kernel memory the tables pin for PINNED_N (default 10) python3
#    processes against one: sframe-agent --once -p, the cache warm, run
#    in a memory cgroup of its own, which the kernel charges for what it
#    allocates on the agent's behalf.  The figure is memory.stat's
#    vmalloc and slab_unreclaimable once the agent has exited: the
#    tables and the kernel's records of each process's ranges, and not
#    the reclaimable inodes and dentries of the /proc files it read.
#
#   agent_bench.sh AGENT
#
# REPS (default 5), IDLE, SECONDS_IDLE, PINNED_N; PARTS, the figures to
# take (default "startup exec idle llvm pinned").
set -uo pipefail

agent=$1
reps=${REPS:-5}
idle=${IDLE:-200}
secs=${SECONDS_IDLE:-10}
parts=${PARTS:-startup exec idle llvm pinned}
pinned_n=${PINNED_N:-10}
tmp=${SCRATCH:-/tmp}/agent-bench
rm -rf "$tmp"
mkdir -p "$tmp"

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# cpu_ms CMD...: the CPU time, user and system, CMD took, in ms.
cpu_ms() {
	local t

	t=$( { /usr/bin/time -f '%U %S' "$@" > /dev/null 2> /dev/null; } 2>&1 )
	awk '{ printf "%d\n", ($1 + $2) * 1000 }' <<< "$t"
}

# start-up: 20 runs make one figure, their sum.
startup() {
	local i s=0 v

	for i in $(seq 20); do
		v=$( { /usr/bin/time -f '%U %S' /usr/bin/python3 -c pass; } 2>&1 >/dev/null)
		s=$(awk -v s="$s" '{ printf "%d\n", s + ($1 + $2) * 1000 }' <<< "$v")
	done
	echo "$s"
}

part() {
	[[ " $parts " == *" $1 "* ]]
}

# ratio A B: B / A, to two places.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a ? b / a : 0 }'
}

# agent_ready [LOG]: start sframe-agent -a, its standard error to LOG
# (default none), and wait for its first attach (--ready-fd, through a
# FIFO of the guest's /tmp: 9p has none); its PID in apid.
agent_ready() {
	local ready

	ready=$(mktemp -u /tmp/agent-ready.XXXXXX)
	mkfifo "$ready" || return 1
	"$agent" --cache-dir="$tmp/cache" --ready-fd=3 -a 2> "${1:-/dev/null}" \
		3> "$ready" &
	apid=$!
	head -c 1 "$ready" > /dev/null
	rm -f "$ready"
}

# The start-up, four ways in turn: alone; under -a; under -a stopped
# (SIGSTOP once attached: its events stay open and the kernel still
# writes the side-band records and registers nothing, but the agent
# takes no CPU); alone beside a busy loop (what any work on the other
# vCPU does to a target's CPU time under software emulation, where a
# vCPU's time runs while its host thread waits for a host core).
if part startup; then
	: > "$tmp/alone"
	: > "$tmp/under"
	: > "$tmp/stopped"
	: > "$tmp/busy"
	for r in $(seq "$reps"); do
		startup >> "$tmp/alone"
		agent_ready
		startup >> "$tmp/under"
		kill -STOP "$apid"
		startup >> "$tmp/stopped"
		kill -CONT "$apid"
		kill -INT "$apid"
		wait "$apid"
		bash -c 'while :; do :; done' &
		bpid=$!
		startup >> "$tmp/busy"
		kill "$bpid"
		wait "$bpid" 2> /dev/null
	done
	a=$(median < "$tmp/alone")
	for w in under stopped busy; do
		u=$(median < "$tmp/$w")
		echo "python3 -c pass x20, its own CPU ms: alone $a, $w $u," \
			"ratio $(ratio "$a" "$u")"
	done
fi

# How long a new process's mappings wait for their tables under -a, the
# cache warm: 20 python3 -c pass, one after the other, and the agent's
# summary (from each mapping's mmap, as the kernel's record stamps it,
# to its registration): the median wait and the longest of each run.
if part exec; then
	agent_ready
	python3 -c pass
	kill -INT "$apid"
	wait "$apid"
	: > "$tmp/wait-median"
	: > "$tmp/wait-max"
	for r in $(seq "$reps"); do
		agent_ready "$tmp/exec.log"
		for i in $(seq 20); do
			python3 -c pass
		done
		kill -INT "$apid"
		wait "$apid"
		sed -n 's/.* new mappings given tables \([0-9.]*\) ms after their mmap, at most \([0-9.]*\) ms.*/\1 \2/p' \
			"$tmp/exec.log" > "$tmp/exec.wait"
		read -r m x < "$tmp/exec.wait"
		echo "${m:-0}" >> "$tmp/wait-median"
		echo "${x:-0}" >> "$tmp/wait-max"
	done
	echo "sframe-agent -a, 20 python3 -c pass, the cache warm: a new mapping's" \
		"table $(median < "$tmp/wait-median") ms after its mmap (median)," \
		"at most $(median < "$tmp/wait-max") ms (median of the runs' longest)"
fi

# The agent's CPU with IDLE sleeping processes.
if part idle; then
	pids=()
	for i in $(seq "$idle"); do
		sleep 3600 &
		pids+=($!)
	done
	: > "$tmp/idle"
	for r in $(seq "$reps"); do
		"$agent" --cache-dir="$tmp/cache" -a 2> /dev/null &
		apid=$!
		sleep 2
		t0=$(awk '{ print $14 + $15 }' "/proc/$apid/stat")
		sleep "$secs"
		t1=$(awk '{ print $14 + $15 }' "/proc/$apid/stat")
		kill -INT "$apid"
		wait "$apid"
		hz=$(getconf CLK_TCK)
		awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$secs" \
			'BEGIN { printf "%.3f\n", 100 * d / hz / s }' >> "$tmp/idle"
	done
	kill "${pids[@]}" 2> /dev/null
	wait 2> /dev/null
	echo "sframe-agent -a with $idle idle processes: $(median < "$tmp/idle")% of one core" \
		"over ${secs}s, after its attach"
fi

# libLLVM-14: first conversion, then from the cache.
if part llvm; then
	ll=$(dirname "$agent")/../sframe_jit/test-bin/jit_path.ll
	if command -v lli-14 > /dev/null && [ -f "$ll" ]; then
		: > "$tmp/cold"
		: > "$tmp/warm"
		for r in $(seq "$reps"); do
			lli-14 -jit-kind=mcjit "$ll" 100000000000 &
			pid=$!
			sleep 2
			rm -rf "$tmp/llvm-cache"
			t0=$(date +%s%N)
			"$agent" --cache-dir="$tmp/llvm-cache" --once -p "$pid" 2> /dev/null
			t1=$(date +%s%N)
			kill "$pid"
			wait "$pid" 2> /dev/null
			lli-14 -jit-kind=mcjit "$ll" 100000000000 &
			pid=$!
			sleep 2
			t2=$(date +%s%N)
			"$agent" --cache-dir="$tmp/llvm-cache" --once -p "$pid" 2> /dev/null
			t3=$(date +%s%N)
			kill "$pid"
			wait "$pid" 2> /dev/null
			echo $(((t1 - t0) / 1000000)) >> "$tmp/cold"
			echo $(((t3 - t2) / 1000000)) >> "$tmp/warm"
		done
		c=$(median < "$tmp/cold")
		w=$(median < "$tmp/warm")
		echo "sframe-agent --once -p lli-14 (libLLVM-14 and 10 others): first" \
			"conversion $c ms, from the cache $w ms, ratio" \
			"$(ratio "$w" "$c")"
	fi
fi

# pinned_kb N: KiB of kernel memory the tables of N python3 processes
# leave charged to the agent's memory cgroup (see above).
pinned_kb() {
	local n=$1 cg=/sys/fs/cgroup/sframe-agent-bench-$1 i list kb
	local procs=()

	for i in $(seq "$n"); do
		python3 -c 'while True: pass' &
		procs+=($!)
	done
	sleep 1
	list=$(IFS=,; echo "${procs[*]}")
	mkdir "$cg" || return 1
	(echo "$BASHPID" > "$cg/cgroup.procs" &&
		exec "$agent" --cache-dir="$tmp/cache" --once -p "$list" \
		2> /dev/null)
	# memory.stat is exact once the kernel's periodic flush, every 2 s,
	# has run since the last charge.
	sleep 3
	kb=$(awk '$1 == "vmalloc" || $1 == "slab_unreclaimable" { s += $2 }
		END { printf "%d\n", s / 1024 }' "$cg/memory.stat")
	kill "${procs[@]}"
	wait "${procs[@]}" 2> /dev/null
	rmdir "$cg"
	echo "$kb"
}

if part pinned; then
	[ -f /sys/fs/cgroup/cgroup.controllers ] ||
		mount -t cgroup2 none /sys/fs/cgroup
	echo +memory > /sys/fs/cgroup/cgroup.subtree_control
	# The cache warm: the figures are the kernel's, not the conversion's.
	pinned_kb 1 > /dev/null
	: > "$tmp/pinned1"
	: > "$tmp/pinnedn"
	for r in $(seq "$reps"); do
		pinned_kb 1 >> "$tmp/pinned1"
		pinned_kb "$pinned_n" >> "$tmp/pinnedn"
	done
	p1=$(median < "$tmp/pinned1")
	pn=$(median < "$tmp/pinnedn")
	echo "kernel memory the tables pin, sframe-agent --once -p: 1 python3" \
		"$p1 KiB, $pinned_n python3 $pn KiB, ratio $(ratio "$p1" "$pn")"
fi
