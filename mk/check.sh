#!/bin/bash
# Run every test layer that exists, each writing build/results/LAYER as
# "N passed, N failed", then print the total as the last line.  A layer
# that fails to write its result counts as one failure.  Exit status is
# non-zero on any failure or when no test ran.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$build/results"

layers=(runner selftests)
declare -A run=(
	[runner]="$top/mk/tests/runner-test.sh"
	[selftests]="$top/mk/selftests.sh"
)

total_pass=0
total_fail=0
for layer in "${layers[@]}"; do
	echo "=== $layer"
	rm -f "$build/results/$layer"
	${run[$layer]}
	line=$(cat "$build/results/$layer" 2>/dev/null)
	if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]}
		f=${BASH_REMATCH[2]}
	else
		echo "check: layer $layer reported no result" >&2
		p=0
		f=1
	fi
	echo "=== $layer: $p passed, $f failed"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
