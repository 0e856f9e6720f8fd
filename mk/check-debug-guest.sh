#!/bin/bash
# Usage (in the VM, from mk/check-debug.sh):
#   mk/check-debug-guest.sh INSTALL_DIR STRESS_SECONDS TIMEOUT
#
# In one boot of the debug kernel: every sframe_jit kselftest through the
# kselftest runner, then stress_test for STRESS_SECONDS through the runner
# again, then two kmemleak scans.  Each runner run gets TIMEOUT seconds a
# program (the debug kernel under emulation is slow).  Writes into
# $SCRATCH: debug-selftests.tap, debug-stress.tap, debug-kmemleak.txt
# (the report, empty when clean), and debug-steps (one "STEP STATUS"
# line each).
set -u
inst=$1
seconds=$2
timeout=$3
out=$SCRATCH
: > "$out/debug-steps"

step() {
	echo "$1 $2" >> "$out/debug-steps"
}

# The runner appends to /dev/stdout: its output must go through a pipe.
cd "$inst" || exit 1
echo "check-debug: every sframe_jit kselftest"
./run_kselftest.sh -o "$timeout" 2>&1 | tee "$out/debug-selftests.tap"
step selftests "${PIPESTATUS[0]}"

echo "check-debug: stress_test for $seconds s"
SFRAME_STRESS_SECONDS=$seconds ./run_kselftest.sh -o "$timeout" \
	-t sframe_jit:stress_test 2>&1 | tee "$out/debug-stress.tap"
step stress "${PIPESTATUS[0]}"

# An object is reported once it stayed unreferenced through a scan and
# is older than kmemleak's minimum age (5 s): scan, wait, scan again.
kml=/sys/kernel/debug/kmemleak
[ -e "$kml" ] || mount -t debugfs debugfs /sys/kernel/debug
if [ -w "$kml" ]; then
	echo "check-debug: kmemleak scans"
	echo scan > "$kml"
	sleep 6
	echo scan > "$kml"
	cat "$kml" > "$out/debug-kmemleak.txt"
	step kmemleak 0
else
	echo "check-debug: no $kml (CONFIG_DEBUG_KMEMLEAK?)" >&2
	step kmemleak 1
fi
