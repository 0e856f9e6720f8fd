#!/bin/bash
# Usage: mk/ktap-summary.sh CONSOLE_LOG
#
# Count the KUnit test cases in the KTAP output a test kernel printed at
# boot: the leaf results (cases, and each parameter of a parameterised
# case), not the suites and tests that only sum their children.
# Prints "P passed, F failed, S skipped".
set -u
awk '
{
	sub(/\r$/, "")
	if (!sub(/^\[ *[0-9]+\.[0-9]+\]( *\[ *[CT][0-9]+\])? /, ""))
		next
	if (!inktap) {
		if ($0 == "KTAP version 1")
			inktap = 1
		next
	}
	match($0, /^ */)
	ind = RLENGTH
	line = substr($0, ind + 1)
	for (k = 0; k < ind; k += 4)
		deeper[k] = 1
	if (line !~ /^(not )?ok [0-9]+/)
		next
	if (deeper[ind]) {
		# the result of a suite or of a parameterised test
		deeper[ind] = 0
		next
	}
	if (line ~ /# SKIP/)
		skip++
	else if (line ~ /^not ok/)
		fail++
	else
		pass++
}
END { printf "%d passed, %d failed, %d skipped\n", pass, fail, skip }
' "$1"
