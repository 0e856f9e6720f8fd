#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# HotSpot's compiled code in the test kernel (mk/layers/68-java runs it
# in the VM): OpenJDK 17 with libsframe_jvm, the agent that publishes
# each compiled method's rows, under perf record.  The workload is
# tests/java/Deep.java, a fixed amount of work, with the JVM's default
# frame layout: C1 and C2 code keeps no frame pointer.
#
#  - --call-graph=sframe with the agent given at start: every sample
#    whose leaf is Deep's compiled code has exactly the Java frames of
#    its call path and reaches the Java main thread's start (JavaMain,
#    ThreadJavaMain, libc), with no frame outside an object between;
#  - --call-graph=fp on the same run, the agent only naming the code: at
#    most a quarter do (the check can fail);
#  - -XX:+PreserveFramePointer with --call-graph=fp, the anchor: its
#    share is printed, and sframe without the flag may not be below it;
#  - the agent attached mid-run with jcmd JVMTI.agent_load, then perf
#    record -p: every sample from then on as in the first case;
#  - the agent's own check of its frames against HotSpot's: no
#    compiled method's decoded frame disagrees with CodeBlob::_frame_size;
#  - bpftrace's ustack, which cannot ask for the SFrame walk, with
#    kernel.sframe_user_callchains at 1 (every stack as with sframe) and
#    at 0 (at most a quarter);
#  - tests/java/Churn.java: code unloaded with its class loader,
#    deoptimized and compiled again while perf samples, new code taking
#    the memory of the old; frames named by the agent's log as of each
#    sample's time: none in code unloaded before the sample, and 95% of
#    the samples in compiled code exact (see below why not all).
#
#   java_vm.sh OUTPUT_DIR PERF
#
# OUTPUT_DIR is the library's build directory (libsframe_jvm.so, and
# test-bin/java from make tests-java).  JAVA_ROUNDS and
# JAVA_CHURN_ROUNDS set the work.  Ends with "N passed, N failed".
set -uo pipefail

out=$1
perf=$2
here=$(dirname "$0")
tmp=${SCRATCH:-/tmp}/java
agent=$out/libsframe_jvm.so
classes=$out/test-bin/java
rounds=${JAVA_ROUNDS:-40000}
warm=${JAVA_WARM:-20000}
# A floor, not a target: the test is about where the stacks go.
min_samples=40
max_fp=25
. "$here/tap.sh"

# The JVM's defaults but the heap, which a VM of 2 GiB does not give it.
jvm=(java -Xmx64m -cp "$classes")
# Deep's methods, each of which the agent must have published.
deep_methods="level1 level2 level3 level4 level5 rec"

rm -rf "$tmp"
mkdir -p "$tmp"

# Each Deep run profiles the steady state, as a profiler meets a
# service: Deep warms up until C2 has compiled its methods and waits;
# the agent is given (at start or by attach) and has published them;
# then the profiler attaches (-p) and Deep runs $rounds rounds.

# start NAME JAVA_ARGS...: Deep started, warmed up and waiting; its pid
# in $pid.  A JVM that dies of a fatal error of its own before it is
# ready is started again, up to three times in all; its report is kept
# in $tmp/hs_err_PID.log and printed.  Under software emulation one did
# in about one start in ten, each time at the first byte of C1's code
# for Deep.level3 while C2's replaced it, with no agent or profiler
# there yet in the attach case and si_addr garbage: the entry being
# patched while the main thread runs it, which QEMU's TCG appears not
# to emulate atomically.
start() {
	local name=$1 try i

	shift
	for try in 1 2 3; do
		"${jvm[@]}" "-XX:ErrorFile=$tmp/hs_err_%p.log" "$@" Deep \
			"$rounds" "$tmp/$name.go" "$warm" > "$tmp/$name.out" 2>&1 &
		pid=$!
		for i in $(seq 1500); do
			grep -q '^ready' "$tmp/$name.out" && return 0
			kill -0 "$pid" 2> /dev/null || break
			sleep 0.2
		done
		echo "# Deep did not warm up (start $try):"
		sed 's/^/#   /' "$tmp/$name.out"
		[ -f "$tmp/hs_err_$pid.log" ] || return 1
		sed -n '1,40p' "$tmp/hs_err_$pid.log" | sed 's/^/#   /'
		rm -f "$tmp/$name".agent
	done
	return 1
}

# published LOG: the agent's log names every one of Deep's methods as
# published, and has not grown for a second (what the compilers had
# queued is in).
published() {
	local log=$1 m i n last=-1

	for i in $(seq 300); do
		n=0
		for m in $deep_methods; do
			grep -q " load .* Deep\.$m err=0 " "$log" 2> /dev/null &&
				n=$((n + 1))
		done
		if [ "$n" = 6 ]; then
			[ "$(wc -l < "$log")" = "$last" ] && return 0
			last=$(wc -l < "$log")
		fi
		sleep 1
	done
	echo "# the agent did not publish Deep's methods:"
	grep ' load .* Deep\.' "$log" | sed 's/^/#   /'
	return 1
}

# measure NAME READY PROFILER...: the profiler attached to $pid (once its
# output matches READY, or after 2 s with READY empty), Deep let go, both
# waited for.
measure() {
	local name=$1 ready=$2 prof i

	shift 2
	"$@" > "$tmp/$name.log" 2>&1 &
	prof=$!
	sleep 2
	for i in $(seq 600); do
		[ -z "$ready" ] && break
		grep -q "$ready" "$tmp/$name.log" && break
		kill -0 "$prof" 2> /dev/null || break
		sleep 0.2
	done
	touch "$tmp/$name.go"
	wait "$pid" || { cat "$tmp/$name.out"; return 1; }
	kill -INT "$prof" 2> /dev/null
	wait "$prof"
	return 0
}

# record NAME MODE JAVA_ARGS...: perf record of Deep's steady state,
# perf script of it in $tmp/NAME.script.
record() {
	local name=$1 mode=$2

	shift 2
	start "$name" "$@" || return 1
	case " $* " in
	*" -agentpath:"*log=*) published "$tmp/$name.agent" || return 1 ;;
	esac
	measure "$name" "" "$perf" record -q -N -B -e task-clock:u \
		-c 1000000 --call-graph="$mode" -o "$tmp/$name.data" \
		-p "$pid" || return 1
	script "$name"
}

script() {
	"$perf" script -i "$tmp/$1.data" -F ip,sym,dso \
		> "$tmp/$1.script" 2> "$tmp/$1.script.err"
}

# paths NAME [CHAINS]: "exact total" of the samples in the workload's
# compiled code (Deep's, or that CHAINS names).
paths() {
	awk -v path="$tmp/$1.path" -v chains="$here/java/${2:-Deep}.chains" \
		-f "$here/perf_stacks.awk" -f "$here/java_paths.awk" \
		"$tmp/$1.script"
}

# check NAME WHAT all|few [CHAINS]: every sample exact, or at most
# $max_fp%.
check() {
	local name=$1 what=$2 want=$3 e t pct

	read -r e t <<< "$(paths "$name" "${4:-}")"
	pct=$((t ? 100 * e / t : 0))
	echo "# $what: $e of $t samples in compiled code are exact ($pct%)"
	eval "pct_${name//-/_}=$pct"
	if [ "$want" = all ]; then
		[ -s "$tmp/$name.path" ] && echo "# stack: $(cat "$tmp/$name.path")"
		[ "$t" -ge "$min_samples" ] && [ "$e" = "$t" ]
		result $? "$what: every sample in compiled code is exact"
	else
		[ "$t" -ge "$min_samples" ] && [ "$pct" -le "$max_fp" ]
		result $? "$what: at most $max_fp% of samples in compiled code are"
	fi
}

# agent_ok LOG: the agent published methods and no frame disagreed.
agent_ok() {
	local stats

	stats=$(grep ' stats ' "$1" | tail -n 1)
	echo "# agent: ${stats#* stats }"
	[[ $stats =~ \ methods=[1-9] ]] && [[ $stats =~ \ errors=0\  ]] &&
	[[ $stats =~ \ mismatches=0\  ]] && [[ $stats =~ \ checked=[1-9] ]]
}

if record sframe sframe "-agentpath:$agent=log=$tmp/sframe.agent"; then
	check sframe "agent at start, --call-graph=sframe" all
	agent_ok "$tmp/sframe.agent"
	result $? "agent: every compiled method has rows that agree with HotSpot's frame size"
else
	result 1 "perf record of Deep with the agent, --call-graph=sframe"
fi

if record fp fp "-agentpath:$agent=log=$tmp/fp.agent"; then
	check fp "agent at start, --call-graph=fp" few
else
	result 1 "perf record of Deep, --call-graph=fp"
fi

if record pfp fp -XX:+PreserveFramePointer \
	"-agentpath:$agent=log=$tmp/pfp.agent"; then
	read -r e t <<< "$(paths pfp)"
	pct_pfp=$((t ? 100 * e / t : 0))
	echo "# -XX:+PreserveFramePointer, --call-graph=fp: $e of $t samples exact ($pct_pfp%)"
	[ "$t" -ge "$min_samples" ] && [ "${pct_sframe:-0}" -ge "$pct_pfp" ]
	result $? "sframe without -XX:+PreserveFramePointer is as complete as fp with it"
else
	result 1 "perf record of Deep with -XX:+PreserveFramePointer"
fi

# jcmd PID JVMTI.agent_load, once more if jcmd itself died of a signal
# before the agent was loaded: jcmd is a JVM of its own, and under
# emulation one aborted once on a SIGSEGV in its own C1-compiled
# String.charAt, its hs_err under its own pid, before it sent anything.
# That is the tool's failure, not the agent's; a target gone, or an
# agent that did not load, still fails.
agent_load() {
	local try rc

	for try in 1 2; do
		jcmd "$pid" JVMTI.agent_load "$agent" "log:$tmp/attach.agent" \
			> "$tmp/attach.jcmd" 2>&1
		rc=$?
		if [ "$rc" -le 128 ] || [ -s "$tmp/attach.agent" ] ||
		   ! kill -0 "$pid" 2> /dev/null || [ "$try" = 2 ]; then
			break
		fi
		echo "# jcmd died of signal $((rc - 128)) before the agent loaded; once more"
		grep -m1 -A1 "Problematic frame" "$tmp/attach.jcmd" | sed 's/^/# /'
	done
	# jcmd dead after the agent loaded: the agent's log says the rest.
	[ "$rc" = 0 ] || { [ "$rc" -gt 128 ] && [ -s "$tmp/attach.agent" ]; }
}

# attach: Deep warms up without the agent; the agent is loaded through
# the attach mechanism (jcmd reads "name=value" as its own argument:
# the agent takes log:FILE too), then perf record follows the process.
attach() {
	start attach || return 1
	agent_load || { cat "$tmp/attach.jcmd"; return 1; }
	published "$tmp/attach.agent" || return 1
	measure attach "" "$perf" record -q -N -B -e task-clock:u \
		-c 1000000 --call-graph=sframe -o "$tmp/attach.data" \
		-p "$pid" || return 1
	script attach
}

if attach; then
	check attach "agent attached mid-run, --call-graph=sframe" all
else
	cat "$tmp/attach.jcmd" "$tmp/attach.log" 2> /dev/null
	result 1 "attach to a running JVM"
fi

# bpftrace_java 0|1: bpftrace's ustack of Deep's steady state with
# kernel.sframe_user_callchains at 0 or 1; $tmp/bpftrace-N.script in
# perf script's form (java_ustack.awk).
bpftrace_java() {
	local v=$1 name=bpftrace-$1 jli

	start "$name" "-agentpath:$agent=log=$tmp/$name.agent" || return 1
	published "$tmp/$name.agent" || return 1
	echo "$v" > /proc/sys/kernel/sframe_user_callchains || return 1
	cat "/proc/$pid/maps" > "$tmp/$name.maps"
	# bpftrace says "Attaching" before its probes are on; a tick of
	# its interval probe comes after.
	measure "$name" '^tick' env BPFTRACE_NO_USER_SYMBOLS=1 bpftrace -e \
		"profile:hz:499 /pid == $pid/ { @[ustack] = count(); }
		 interval:s:1 { printf(\"tick\\n\"); }"
	mv "$tmp/$name.log" "$tmp/$name.stacks"
	echo 0 > /proc/sys/kernel/sframe_user_callchains
	jli=$(awk '$6 ~ /\/libjli\.so$/ { print $6; exit }' "$tmp/$name.maps")
	[ -n "$jli" ] || return 1
	nm -S --defined-only "$jli" | awk -v p="$jli" \
		'$4 == "JavaMain" || $4 == "ThreadJavaMain" { print p, $1, $2, $4 }' \
		> "$tmp/$name.syms"
	awk -f "$here/java_ustack.awk" "$tmp/$name.maps" "/tmp/perf-$pid.map" \
		"$tmp/$name.syms" "$tmp/$name.stacks" > "$tmp/$name.script"
}

if ! command -v bpftrace > /dev/null; then
	result 1 "bpftrace (make deps installs it)"
elif bpftrace_java 1 && bpftrace_java 0; then
	check bpftrace-1 "bpftrace ustack, kernel.sframe_user_callchains=1" all
	check bpftrace-0 "bpftrace ustack, kernel.sframe_user_callchains=0" few
else
	cat "$tmp"/bpftrace-*.stacks 2> /dev/null | head -n 20
	result 1 "bpftrace's ustack of Deep"
fi

# churn: code loaded, unloaded with its class loader, deoptimized and
# compiled again while perf samples, from the JVM's start, in a code
# cache small enough (8 MiB) that new code fills the memory of the old;
# frames named by the agent's log as of each sample's time.  Its methods are kept
# from being inlined (CompileCommand changes what C2 compiles, not the
# frames' layout), so that each chain is exact.
churn_run() {
	rm -f "$tmp/churn.agent" "$tmp"/hs_err_churn*.log
	"$perf" record -q -N -B -k CLOCK_MONOTONIC -e task-clock:u \
		-c 1000000 --call-graph=sframe -o "$tmp/churn.data" -- \
		java -Xmx64m -XX:ReservedCodeCacheSize=8m \
		"-XX:ErrorFile=$tmp/hs_err_churn_%p.log" \
		-XX:CompileCommand=quiet '-XX:CompileCommand=dontinline,Churn::*' \
		'-XX:CompileCommand=dontinline,Work::*' \
		"-agentpath:$agent=log=$tmp/churn.agent" -cp "$classes" \
		Churn "$churn_rounds" "$classes/work" > "$tmp/churn.log" 2>&1
}

churn() {
	local try

	# As start() does, again if the JVM died of a fatal error.
	for try in 1 2 3; do
		churn_run && break
		cat "$tmp/churn.log"
		ls "$tmp"/hs_err_churn*.log > /dev/null 2>&1 || return 1
		sed -n '1,40p' "$tmp"/hs_err_churn*.log | sed 's/^/#   /'
		[ "$try" = 3 ] && return 1
	done
	"$perf" script -i "$tmp/churn.data" -F time,ip,sym,dso \
		> "$tmp/churn.perf" 2> "$tmp/churn.script.err" || return 1
	awk -f "$here/java_attrib.awk" "$tmp/churn.agent" RS= FS='\n' \
		"$tmp/churn.perf" > "$tmp/churn.script" 2> "$tmp/churn.stale"
}

churn_rounds=${JAVA_CHURN_ROUNDS:-80}
# A function added below others is inserted under the registry's
# sequence count (Documentation/userspace-api/sframe.rst): a sample
# taken in any of the registry's code meanwhile falls back to frame
# pointers.  HotSpot adds most code out of order once it reuses memory,
# so the churn's bar is a share, where the steady state's is every
# sample (7 of 1025 fell back on 2026-12-05).
min_churn=95
if churn; then
	read -r e t <<< "$(paths churn Churn)"
	pct=$((t ? 100 * e / t : 0))
	echo "# churn, --call-graph=sframe, frames named by the agent's log: $e of $t samples in compiled code exact ($pct%)"
	echo "# churn: $(sed -n 's/^unpublished //p' "$tmp/churn.stale") samples through code not yet announced, left out"
	[ "$t" -ge "$min_samples" ] && [ "$pct" -ge "$min_churn" ]
	result $? "churn: at least $min_churn% of samples in compiled code are exact"
	grep -q '^stale 0$' "$tmp/churn.stale"
	result $? "churn: no frame falls in code unloaded before its sample ($(head -n 1 "$tmp/churn.stale"))"
	reused=$(sed -n 's/^reused //p' "$tmp/churn.stale")
	echo "# churn: $reused methods compiled where unloaded code had been"
	[ "${reused:-0}" -ge 1 ]
	result $? "churn: code was compiled into memory that unloaded code had held"
	u=$(grep -c ' unload 0x' "$tmp/churn.agent")
	echo "# churn: $u compiled methods unloaded, $(grep -c ' load 0x' "$tmp/churn.agent") loaded"
	[ "$u" -ge 10 ]
	result $? "churn: at least 10 compiled methods unloaded while sampling"
else
	result 1 "perf record of Churn"
fi

summary
