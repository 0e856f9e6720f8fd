#!/bin/bash
# The guest half of make demo's third act (mk/demo.sh): OpenJDK 17 with
# libsframe_jvm, the JVMTI agent that publishes HotSpot's compiled code,
# running tools/lib/sframe_jit/tests/java/Deep.java with the JVM's
# default flags (its compiled code keeps no frame pointer), profiled as
# a service is: once it has warmed up and the agent has published its
# code, perf record -p follows it for a fixed amount of work, once per
# call-graph mode.
#
#   java.sh PERF LIBDIR OUTDIR MODE...
#
# LIBDIR is the library's build directory (libsframe_jvm.so and
# test-bin/java from make tests-java).  OUTDIR gets, per MODE, MODE.data,
# MODE.report (perf report of the Java main thread, callers first),
# MODE.script (perf script, for the flame graph), MODE.paths (perf
# script -F ip,sym,dso, for the verdict), MODE.agent (the agent's log)
# and MODE.log: all made here, where the JVM's /tmp/perf-PID.map is.
set -uo pipefail
perf=$1
lib=$2
out=$3
shift 3
rounds=${JAVA_ROUNDS:-40000}

# profile MODE: Deep warmed up, its code published, then perf record.
profile() {
	local mode=$1 pid i perf_pid

	rm -f "$out/$mode.go"
	rm -f "$out/$mode.agent"
	java -Xmx64m "-XX:ErrorFile=$out/hs_err_%p.log" \
		"-agentpath:$lib/libsframe_jvm.so=log=$out/$mode.agent" \
		-cp "$lib/test-bin/java" Deep "$rounds" "$out/$mode.go" \
		> "$out/$mode.out" 2>&1 &
	pid=$!
	for i in $(seq 1500); do
		grep -q '^ready' "$out/$mode.out" && break
		kill -0 "$pid" 2> /dev/null || return 1
		sleep 0.2
	done
	for i in $(seq 300); do
		grep -q ' load .* Deep\.level5 err=0 ' "$out/$mode.agent" && break
		sleep 0.2
	done
	sleep 2
	"$perf" record -q --no-buildid -e cpu-clock:u -F 499 \
		--call-graph="$mode" -o "$out/$mode.data" -p "$pid" \
		> "$out/$mode.log" 2>&1 &
	perf_pid=$!
	sleep 2
	touch "$out/$mode.go"
	wait "$pid" || return 1
	wait "$perf_pid"
}

mkdir -p "$out"
rc=0
for mode in "$@"; do
	# Under software emulation a JVM has died once in about thirty
	# starts of a fatal error of its own: start it once more.
	if ! profile "$mode" && ! profile "$mode"; then
		echo "demo: perf record of Java, --call-graph=$mode, failed:"
		sed 's/^/  /' "$out/$mode.out" "$out/$mode.log" 2> /dev/null
		rc=1
		continue
	fi
	"$perf" report -i "$out/$mode.data" --stdio --no-children \
		--comm java --sort sym --percent-limit 5 -g graph,2,caller \
		> "$out/$mode.report" 2> /dev/null
	"$perf" script -i "$out/$mode.data" --comm java \
		> "$out/$mode.script" 2> /dev/null
	"$perf" script -i "$out/$mode.data" --comm java -F ip,sym,dso \
		> "$out/$mode.paths" 2> /dev/null
done
exit "$rc"
