#!/bin/bash
# Run every benchmark, mk/bench/NN-NAME in NN order (BENCH=NAME... picks
# some), each printing its own table of ratios measured side by side.
# Output is kept in build/bench/NAME.txt.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$build/bench"
status=0
ran=0
for f in "$top"/mk/bench/[0-9]*; do
	[ -x "$f" ] || continue
	name=${f##*/}
	name=${name#*-}
	if [ -n "${BENCH:-}" ] && [[ " $BENCH " != *" $name "* ]]; then
		continue
	fi
	echo "=== bench $name"
	"$f" 2>&1 | tee "$build/bench/$name.txt"
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || { echo "bench: $name failed (status $rc)" >&2; status=1; }
	ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || die "no benchmark ran"
echo "bench: $ran benchmarks; tables in $build/bench/"
exit "$status"
