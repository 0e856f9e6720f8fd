#!/bin/bash
# Tests of the test runner itself: the console-log detector against
# recorded logs, and mk/vm.sh against guest commands that succeed, fail,
# provoke real kernel reports through LKDTM, or hang.
#
# The last line is "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
out=$build/logs/runner-test
mkdir -p "$out"
pass=0
fail=0
n=0

result() {
	n=$((n + 1))
	if [ "$1" = ok ]; then
		pass=$((pass + 1))
		echo "ok $n $2"
	else
		fail=$((fail + 1))
		echo "not ok $n $2"
	fi
}

# expect_rc NAME WANTED_STATUS COMMAND...: output kept in $out/NAME.log
expect_rc() {
	local name=$1 want=$2 rc

	shift 2
	"$@" > "$out/$name.log" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then
		result ok "$name"
	else
		sed 's/^/# /' "$out/$name.log" | tail -40
		result fail "$name (status $rc, wanted $want)"
	fi
}

# expect_grep NAME PATTERN: the output of test NAME contains PATTERN
expect_grep() {
	if grep -qE -- "$2" "$out/$1.log"; then
		result ok "$1 output matches '$2'"
	else
		result fail "$1 output matches '$2'"
	fi
}

logcheck_fixtures() {
	local f name want

	for f in "$top"/mk/tests/logs/*.log; do
		name=$(basename "$f" .log)
		case "$name" in
		clean-*) want=0 ;;
		report-*) want=1 ;;
		*) continue ;;
		esac
		expect_rc "logcheck-$name" $want "$top/mk/logcheck.sh" "$f"
	done
}

# Each TAP or KTAP fixture's name says what it holds: pass-N, fail-N,
# skip-N; the summariser must count exactly that.
summary_fixtures() {
	local f name want got k cnt summariser

	for f in "$top"/mk/tests/tap/*.tap "$top"/mk/tests/ktap/*.log; do
		case "$f" in
		*.tap) summariser=$top/mk/tap-summary.sh ;;
		*) summariser=$top/mk/ktap-summary.sh ;;
		esac
		name=$(basename "$f")
		want=""
		for k in passed:pass failed:fail skipped:skip; do
			cnt=$(grep -oE "(^|-)${k#*:}-[0-9]+" <<< "${name%.*}" | grep -oE '[0-9]+$')
			want+="${cnt:-0} ${k%%:*}, "
		done
		want=${want%, }
		got=$("$summariser" "$f")
		if [ "$got" = "$want" ]; then
			result ok "summary of $name"
		else
			result fail "summary of $name: '$got', wanted '$want'"
		fi
	done
}

# The release test must fail on a kernel other than the one it expects.
release_test_can_fail() {
	local bin=$build/runner-test/release_test_other

	mkdir -p "$(dirname "$bin")"
	# The copy in the assembled tree finds ../kselftest_harness.h.
	gcc -O2 -DEXPECTED_RELEASE='"0.0.0-not-this-kernel"' \
		-o "$bin" "$tree/tools/testing/selftests/sframe_jit/release_test.c" ||
		{ result fail "release test built for another kernel"; return; }
	expect_rc vm-release-test-fails-on-another-kernel 1 "$top/mk/vm.sh" "$bin"
	expect_grep vm-release-test-fails-on-another-kernel \
		'not ok 1 global.running_kernel_is_the_build_under_test'
}

# A user process's faults, which the kernel logs, are not its reports;
# the console must show that the kernel did log them.
user_faults_are_not_reports() {
	local bin=$build/runner-test/user_fault name=vm-user-faults-are-not-reports

	mkdir -p "$(dirname "$bin")"
	gcc -O2 -o "$bin" "$top/mk/tests/user_fault.c" ||
		{ result fail "user_fault built"; return; }
	expect_rc $name 0 "$top/mk/vm.sh" "$bin gp; gp=\$?; $bin segv; segv=\$?
		[ \$gp = 139 ] && [ \$segv = 139 ]"
	expect_grep $name 'traps: user_fault\[[0-9]+\] general protection fault ip:'
	expect_grep $name 'user_fault\[[0-9]+\]: segfault at 10 '
}

vm_cases() {
	local lkdtm=/sys/kernel/debug/provoke-crash/DIRECT

	expect_rc vm-true 0 "$top/mk/vm.sh" true
	expect_grep vm-true 'guest-init: command exited with status 0'
	expect_rc vm-exit-status-is-returned 3 "$top/mk/vm.sh" 'exit 3'
	expect_rc make-vm-fails-on-failing-command 2 \
		make -s -C "$top" vm CMD=false
	expect_rc vm-scratch-is-shared 0 "$top/mk/vm.sh" \
		'echo from-guest > $SCRATCH/runner-test && ! touch /etc/runner-test'
	if [ "$(cat "$build/vm/scratch/runner-test" 2>/dev/null)" = from-guest ]; then
		result ok "guest wrote the host's scratch directory"
	else
		result fail "guest wrote the host's scratch directory"
	fi
	expect_rc vm-user-warning-text-is-not-a-report 0 "$top/mk/vm.sh" \
		'echo "WARNING: this line comes from a user program"'
	expect_rc vm-lkdtm-warning-fails 125 "$top/mk/vm.sh" "echo WARNING > $lkdtm"
	expect_grep vm-lkdtm-warning-fails '>>> .*WARNING: CPU'
	expect_rc vm-lkdtm-oops-fails 126 "$top/mk/vm.sh" "echo EXCEPTION > $lkdtm"
	expect_grep vm-lkdtm-oops-fails '>>> .*(BUG: kernel NULL pointer|Oops: )'
	expect_rc vm-hung-task-fails 125 "$top/mk/vm.sh" \
		"echo 2 > /proc/sys/kernel/hung_task_timeout_secs; (echo HUNG_TASK > $lkdtm &); sleep 12"
	expect_grep vm-hung-task-fails '>>> .*INFO: task .* blocked for more than'
	VM_TIMEOUT=25 expect_rc vm-hung-guest-is-killed 124 "$top/mk/vm.sh" 'sleep 1000'
	expect_grep vm-hung-guest-is-killed 'guest hung: killed after 25s'
}

logcheck_fixtures
summary_fixtures
if [ "${RUNNER_TEST_NO_VM:-0}" != 1 ]; then
	vm_cases
	user_faults_are_not_reports
	release_test_can_fail
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
