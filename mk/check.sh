#!/bin/bash
# Run every test layer, each a command whose output ends with the line
# "N passed, N failed", then print the total as the last line.  A layer
# that ends without that line, or fails with no failed case, counts as
# one failure.  Exit status is non-zero on any failure or when no test
# ran.  Each layer's output is kept in build/logs/layer-NAME.log.
#
#   mk/check.sh [NAME...]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$build/logs"

# Each layer is an executable mk/layers/NN-NAME, run in NN order; a new
# layer is a new file there.  Arguments pick layers by NAME.
declare -A run=()
layers=()
for f in "$top"/mk/layers/[0-9]*; do
	[ -x "$f" ] || continue
	name=${f##*/}
	name=${name#*-}
	layers+=("$name")
	run[$name]=$f
done

for layer in "$@"; do
	[ -n "${run[$layer]:-}" ] || die "no layer '$layer' (have: ${layers[*]})"
done

total_pass=0
total_fail=0
# The failed cases of every layer, repeated at the end: CI keeps only
# the tail of the output, which must say what failed.
failures=()
for layer in "${@:-${layers[@]}}"; do
	echo "=== $layer"
	log=$build/logs/layer-$layer.log
	${run[$layer]} 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]}
		f=${BASH_REMATCH[2]}
	else
		echo "check: layer $layer reported no result" >&2
		p=0
		f=1
	fi
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "check: layer $layer failed (status $rc) with no failed case" >&2
		f=1
	fi
	echo "=== $layer: $p passed, $f failed"
	if [ "$f" != 0 ]; then
		mapfile -t -O "${#failures[@]}" failures < <(
			grep -E '^[#[:space:]]*not ok' "$log" | head -n 20 |
			sed "s/^/$layer: /")
		[ -n "$line" ] || failures+=("$layer: no result line")
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done

if [ "${#failures[@]}" != 0 ]; then
	echo "=== failed:"
	printf '%s\n' "${failures[@]}"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
