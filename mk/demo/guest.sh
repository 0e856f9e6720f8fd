#!/bin/bash
# The guest half of make demo (mk/demo.sh): profile exprjit once per
# call-graph mode and keep what perf says, for the host to read.
#
#   guest.sh PERF EXPRJIT SECONDS OUTDIR MODE...
#
# For each MODE, OUTDIR gets MODE.data, MODE.report (perf report, callers
# first), MODE.script (perf script) and MODE.log (the JIT's and perf
# record's messages).  perf report and script run here, where the JIT's
# /tmp/perf-PID.map is.
set -uo pipefail
perf=$1
jit=$2
seconds=$3
out=$4
shift 4

rc=0
for mode in "$@"; do
	data=$out/$mode.data
	if ! "$perf" record -q --no-buildid -e cpu-clock:u -F 499 \
		--call-graph="$mode" -o "$data" -- "$jit" -s "$seconds" \
		> "$out/$mode.log" 2>&1; then
		echo "demo: perf record --call-graph=$mode failed:"
		sed 's/^/  /' "$out/$mode.log"
		rc=1
		continue
	fi
	"$perf" report -i "$data" --stdio --no-children --comm exprjit \
		--sort sym --percent-limit 5 -g graph,2,caller \
		> "$out/$mode.report" 2> /dev/null
	"$perf" script -i "$data" --comm exprjit > "$out/$mode.script" \
		2> /dev/null
done
exit "$rc"
