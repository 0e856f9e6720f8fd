#!/bin/bash
# Build tools/testing/selftests/sframe_jit on the host against the test
# kernel's headers, install it with the kselftest runner, run it in the
# VM, keep the TAP output and summarise it.
#
# The runner appends to /dev/stdout, so its output goes through a pipe:
# redirected to a file, the appends and the plain writes would overwrite
# each other.
#
# Writes build/logs/selftests.tap; the last line is "N passed, N
# failed".  Exit status: non-zero on any failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
kout=${KOUT:-$build/kbuild}
inst=$build/kselftest
tap=$build/logs/selftests.tap
mkdir -p "$build/logs"

KOUT=$kout SELFTESTS_OBJ=$build/kselftest-build \
	SELFTESTS_LOG=$build/logs/selftests-build.log \
	"$top/mk/selftests-build.sh" "$inst" ||
	{ echo "0 passed, 1 failed"; exit 1; }

VM_LOG=$build/logs/selftests-console.log \
	"$top/mk/vm.sh" "set -o pipefail; cd $inst && ./run_kselftest.sh 2>&1 | tee \$SCRATCH/selftests.tap"
vrc=$?
scratch=${VM_SCRATCH:-$build/vm/scratch}
cp "$scratch/selftests.tap" "$tap" 2>/dev/null || : > "$tap"

summary=$("$top/mk/tap-summary.sh" "$tap")
passed=${summary%% passed*}
failed=${summary#*passed, }
failed=${failed%% failed*}
# A VM that failed (kernel report, hang, crash) fails the layer even if
# every case passed.
if [ "$vrc" != 0 ] && [ "$failed" = 0 ]; then
	echo "selftests: the VM run failed with status $vrc" >&2
	failed=1
fi
echo "selftests: $summary (TAP in $tap)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
