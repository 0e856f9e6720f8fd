#!/bin/bash
# The guest half of make demo's third act (mk/demo.sh): OpenJDK 17 with
# libsframe_jvm, the JVMTI agent that publishes HotSpot's compiled code,
# running tools/lib/sframe_jit/tests/java/Deep.java under perf record
# once per call-graph mode, with the JVM's default flags (its compiled
# code keeps no frame pointer).
#
#   java.sh PERF LIBDIR OUTDIR MODE...
#
# LIBDIR is the library's build directory (libsframe_jvm.so and
# test-bin/java from make tests-java).  OUTDIR gets, per MODE, MODE.data,
# MODE.report (perf report of the Java main thread, callers first),
# MODE.script (perf script, for the flame graph), MODE.paths (perf
# script -F ip,sym,dso, for the verdict) and MODE.log: all made here,
# where the JVM's /tmp/perf-PID.map is.
set -uo pipefail
perf=$1
lib=$2
out=$3
shift 3
rounds=${JAVA_ROUNDS:-3000}

mkdir -p "$out"
rc=0
for mode in "$@"; do
	data=$out/$mode.data
	if ! "$perf" record -q --no-buildid -e cpu-clock:u -F 499 \
		--call-graph="$mode" -o "$data" -- java -Xmx64m \
		"-agentpath:$lib/libsframe_jvm.so" -cp "$lib/test-bin/java" \
		Deep "$rounds" > "$out/$mode.log" 2>&1; then
		echo "demo: perf record of Java, --call-graph=$mode, failed:"
		sed 's/^/  /' "$out/$mode.log"
		rc=1
		continue
	fi
	"$perf" report -i "$data" --stdio --no-children --comm java \
		--sort sym --percent-limit 5 -g graph,2,caller \
		> "$out/$mode.report" 2> /dev/null
	"$perf" script -i "$data" --comm java > "$out/$mode.script" 2> /dev/null
	"$perf" script -i "$data" --comm java -F ip,sym,dso \
		> "$out/$mode.paths" 2> /dev/null
done
exit "$rc"
