#!/bin/bash
# make check-debug: the debug kernel (mk/debug.config: lockdep, KASAN,
# UBSAN, atomic-sleep checks, kmemleak) built, then booted once to run
# every sframe_jit kselftest through the kselftest runner, stress_test
# for a fixed time, and a kmemleak scan (mk/check-debug-guest.sh).
#
# Cases counted: each kselftest case, each stress_test case, one for
# kmemleak (its report must be empty), one for the console (no kernel
# report of any kind, mk/logcheck.sh), and one failure when the guest
# hung or crashed.  The last line is "N passed, N failed"; the exit
# status is non-zero on any failure.
#
# Environment: STRESS_SECONDS (default 60), TEST_TIMEOUT (seconds a
# kselftest program may take, default 900), VM_TIMEOUT (the whole boot,
# default 3600), VM_APPEND.
#
# Logs: build/logs/check-debug-console.log (the console),
# check-debug-selftests.tap, check-debug-stress.tap,
# check-debug-kmemleak.txt, check-debug-build.log.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

kout=$build/kbuild-debug
inst=$build/kselftest-debug
scratch=$build/vm/scratch-debug
logs=$build/logs
console=$logs/check-debug-console.log
seconds=${STRESS_SECONDS:-60}
test_timeout=${TEST_TIMEOUT:-900}
mkdir -p "$logs" "$scratch"

pass=0
fail=0
summary=()

# Record one line of the summary: NAME PASSED FAILED [NOTE].
count() {
	pass=$((pass + $2))
	fail=$((fail + $3))
	summary+=("$(printf '  %-10s %4d passed, %d failed%s' "$1" "$2" "$3" "${4:+  ($4)}")")
}

# Stop before the boot: what was counted, one failure more.
give_up() {
	echo "check-debug: $*" >&2
	echo "$pass passed, $((fail + 1)) failed"
	exit 1
}

t0=$(date +%s)
make -C "$top" -s kernel-debug || give_up "the debug kernel did not build"
t1=$(date +%s)
KOUT=$kout SELFTESTS_OBJ=$build/kselftest-debug-build \
	SELFTESTS_LOG=$logs/check-debug-build.log \
	"$top/mk/selftests-build.sh" "$inst" ||
	give_up "the selftests did not build against $kout"

# Under emulation the debug kernel is slow enough for the RCU stall
# detector to fire on its own slowness, and, on a busy host, for ACPI's
# interpreter to give up (AE_AML_LOOP_TIMEOUT) on the PCI interrupt
# routing method, leaving virtio, and so the root file system, without
# an interrupt: route PCI interrupts by the BIOS table instead.
#
# And 4-level paging: identify_cpu() clears the boot CPU's feature bits
# and probes them again with interrupts on, so an interrupt that comes in
# between sees no LA57, and KASAN, whose shadow bounds follow
# pgtable_l5_enabled(), reports a wild access to the 5-level direct map
# (do_raw_spin_lock() under handle_edge_irq(), 4 ms into the boot; once
# in four boots here).  Nothing of the series runs that early.
rm -f "$scratch"/debug-*
KERNEL=$kout/arch/x86/boot/bzImage VM_SCRATCH=$scratch VM_LOG=$console \
	VM_TIMEOUT=${VM_TIMEOUT:-3600} \
	VM_APPEND="rcupdate.rcu_cpu_stall_timeout=300 acpi=noirq no5lvl ${VM_APPEND:-}" \
	"$top/mk/vm.sh" "bash $top/mk/check-debug-guest.sh $inst $seconds $test_timeout"
vrc=$?
t2=$(date +%s)

# The step's status as the guest recorded it; empty if it never ended.
step_status() {
	awk -v s="$1" '$1 == s { print $2 }' "$scratch/debug-steps" 2>/dev/null
}

# A runner run: its cases, and a failure if it never finished.
tap_count() {
	local name=$1 tap=$logs/check-debug-$1.tap sum p f s

	cp "$scratch/debug-$name.tap" "$tap" 2>/dev/null || : > "$tap"
	sum=$("$top/mk/tap-summary.sh" "$tap")
	read -r p _ f _ s _ <<< "${sum//,/}"
	if [ -z "$(step_status "$name")" ]; then
		count "$name" "$p" "$((f + 1))" "did not finish"
	elif [ "$name" = stress ] && [ "$p" = 0 ]; then
		count "$name" 0 "$((f + 1))" "nothing ran"
	else
		count "$name" "$p" "$f" "$s skipped"
	fi
}
tap_count selftests
tap_count stress

kml=$logs/check-debug-kmemleak.txt
if [ "$(step_status kmemleak)" != 0 ]; then
	: > "$kml"
	count kmemleak 0 1 "no scan"
elif [ -s "$scratch/debug-kmemleak.txt" ]; then
	cp "$scratch/debug-kmemleak.txt" "$kml"
	ours=$(awk '/^unreferenced object/ { ours += hit; hit = 0 }
		    /sframe/ { hit = 1 } END { print ours + hit }' "$kml")
	echo "check-debug: kmemleak reports $(grep -c '^unreferenced object' "$kml") objects ($ours with sframe code in their backtrace):" >&2
	head -n 80 "$kml" >&2
	count kmemleak 0 1 "see $kml"
else
	cp "$scratch/debug-kmemleak.txt" "$kml"
	count kmemleak 1 0 "empty"
fi

if "$top/mk/logcheck.sh" "$console" >&2; then
	count console 1 0 "no kernel report"
else
	count console 0 1 "kernel report, see $console"
fi
case "$vrc" in
124) count vm 0 1 "the guest hung (VM_TIMEOUT)" ;;
126) count vm 0 1 "the guest died before reporting" ;;
esac

echo "check-debug: debug kernel $((t1 - t0)) s, selftests build and boot $((t2 - t1)) s (stress $seconds s)"
printf '%s\n' "${summary[@]}"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
