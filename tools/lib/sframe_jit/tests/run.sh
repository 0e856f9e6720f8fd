#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each test command given, show its output, and add up the
# "N passed, N failed" lines they end with.  A command that ends without
# one, or that fails without a failed case, counts as one failure.  The
# last line is the total.
set -uo pipefail

total_pass=0
total_fail=0
for cmd in "$@"; do
	echo "=== $cmd"
	out=$(bash -c "$cmd" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	last=$(printf '%s\n' "$out" | tail -n 1)
	if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		p=${BASH_REMATCH[1]}
		f=${BASH_REMATCH[2]}
		if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
			f=1
		fi
	else
		echo "# no summary line from: $cmd (status $rc)"
		p=0
		f=1
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
