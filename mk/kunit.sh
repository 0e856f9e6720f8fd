#!/bin/bash
# Boot the test kernel, whose KUnit suites run at boot, and count their
# cases from the KTAP output on the console.  The last line is
# "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"
log=$build/logs/kunit-console.log

VM_LOG=$log "$top/mk/vm.sh" true > /dev/null
vrc=$?
summary=$("$top/mk/ktap-summary.sh" "$log")
echo "kunit: $summary (console in $log)"
passed=${summary%% passed*}
failed=${summary#*passed, }
failed=${failed%% failed*}
if [ "$vrc" != 0 ] && [ "$failed" = 0 ]; then
	echo "kunit: the VM run failed with status $vrc" >&2
	failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
