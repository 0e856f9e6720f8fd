#!/bin/bash
# Usage: mk/tap-summary.sh KSELFTEST_TAP
#
# Count the test cases in the output of run_kselftest.sh: the results a
# test program reports for its own cases (the runner nests them as
# "# ok N ..." lines), and, for a program that failed without reporting
# a failing case (it crashed, timed out or printed no TAP), one failure
# of its own.  Prints "P passed, F failed, S skipped".
set -u
awk '
function flush() {
	if (prog == "")
		return
	if (prog_failed && !sub_failed)
		fail++
	else if (!prog_failed && sub_total == 0) {
		if (prog_skipped)
			skip++
		else
			pass++
	}
}
/^(not )?ok [0-9]+ selftests: / {
	# end of one program: its own nested results came before this line
	prog = $0
	prog_failed = ($0 ~ /^not ok/)
	prog_skipped = ($0 ~ /# SKIP/)
	flush()
	prog = ""; sub_failed = 0; sub_total = 0
	next
}
/^# (not )?ok [0-9]+ / {
	sub_total++
	if ($0 ~ /# SKIP/)
		skip++
	else if ($0 ~ /^# not ok/) {
		fail++; sub_failed = 1
	} else
		pass++
}
END { printf "%d passed, %d failed, %d skipped\n", pass, fail, skip }
' "$1"
