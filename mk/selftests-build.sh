#!/bin/bash
# Usage: mk/selftests-build.sh INSTALL_DIR
#
# Build tools/testing/selftests/sframe_jit on the host against the
# kernel build in $KOUT (default build/kbuild): its exported headers
# (usr/include, from "make headers") and its release, which release_test
# checks.  Install it with the kselftest runner into INSTALL_DIR.
#
# Environment: KOUT; SELFTESTS_OBJ, the object directory (default
# INSTALL_DIR-build); SELFTESTS_LOG, the build log (default
# build/logs/selftests-build.log).  On failure the log is printed and
# the exit status is non-zero.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 INSTALL_DIR"
inst=$1
kout=${KOUT:-$build/kbuild}
obj=${SELFTESTS_OBJ:-$inst-build}
log=${SELFTESTS_LOG:-$build/logs/selftests-build.log}
mkdir -p "$(dirname "$log")"

release=$(cat "$kout/include/config/kernel.release") || die "no kernel build in $kout"
[ -d "$kout/usr/include/linux" ] || die "no exported headers in $kout/usr/include"
rm -rf "$inst"
make -s -C "$tree/tools/testing/selftests" TARGETS=sframe_jit \
	O="$obj" INSTALL_PATH="$inst" \
	KHDR_INCLUDES="-isystem $kout/usr/include" \
	EXPECTED_RELEASE="$release" install > "$log" 2>&1 ||
	{ cat "$log"; die "building the selftests failed (log in $log)"; }
