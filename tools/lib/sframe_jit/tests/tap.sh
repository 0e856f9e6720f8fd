#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The results of the library's shell tests (the VM scripts and
# install_test.sh), sourced by each: result STATUS DESCRIPTION prints
# "ok - DESCRIPTION" for a status of 0, "not ok - DESCRIPTION" for any
# other, and counts it; summary prints the "N passed, N failed" line
# make check's layers end with and returns 0 only if none failed.

passed=0
failed=0

result() {
	if [ "$1" = 0 ]; then
		echo "ok - $2"
		passed=$((passed + 1))
	else
		echo "not ok - $2"
		failed=$((failed + 1))
	fi
}

summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
