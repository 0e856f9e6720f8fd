#!/bin/bash
# The guest half of make demo's second act (mk/demo.sh): PostgreSQL 15's
# JIT under sframe-run, profiled once per call-graph mode by
# tools/lib/sframe_jit/tests/postgres_profile.sh, and perf's report of
# the query's backend kept for the host to read.
#
#   postgres.sh PERF LIBDIR OUTDIR MODE...
#
# LIBDIR is the library's build directory (sframe-run); OUTDIR gets what
# postgres_profile.sh writes (MODE.data, MODE.script, MODE.explain,
# MODE.pid, MODE.log) and MODE.report, perf report of the backend,
# callers first: run here, where the backend's /tmp/perf-PID.map is.
# PG_CLUSTER, if set, names a .tar.gz of a cluster that initdb made on
# the host, to unpack rather than make one in the guest.
set -uo pipefail
perf=$1
lib=$2
out=$3
shift 3
top=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$out"
if ! bash "$top/tools/lib/sframe_jit/tests/postgres_profile.sh" \
	"$lib" "$perf" "$out" "$@" > "$out/profile.log" 2>&1; then
	echo "demo: PostgreSQL under perf record failed:"
	sed 's/^/  /' "$out/profile.log" | tail -n 30
	exit 1
fi
for mode in "$@"; do
	"$perf" report -i "$out/$mode.data" --pid "$(cat "$out/$mode.pid")" \
		--stdio --no-children --sort sym --percent-limit 5 \
		-g graph,2,caller > "$out/$mode.report" 2> /dev/null
done
