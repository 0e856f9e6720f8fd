#!/bin/bash
# Usage: mk/vm.sh 'COMMAND'
#
# Boot the test kernel under qemu-system-x86_64 (software emulation), run
# COMMAND as root in the guest from the current directory, and exit with
# COMMAND's exit status.  The guest sees the host's root filesystem
# read-only over virtio-9p and a writable scratch directory, shared with
# the host, at the same path on both sides ($VM_SCRATCH, given to COMMAND
# as $SCRATCH).
#
# The run fails (status 125 unless COMMAND itself failed) when the kernel
# logs a panic, oops, BUG, WARNING, KASAN, UBSAN, lockdep, RCU stall or
# hung-task report; status 124 means the guest hung and was killed after
# $VM_TIMEOUT seconds; 126 that the guest never reported a status.  The
# console log is kept in $VM_LOG.
#
# Environment: KERNEL (bzImage), VM_TIMEOUT (seconds, default 600),
# VM_MEM (default 2G), VM_SMP (default 2), VM_LOG, VM_SCRATCH,
# VM_APPEND (extra kernel command line).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

[ $# = 1 ] || die "usage: $0 'COMMAND'"
cmd=$1
kernel=${KERNEL:-$build/kbuild/arch/x86/boot/bzImage}
timeout_s=${VM_TIMEOUT:-600}
log=${VM_LOG:-$build/logs/vm-console.log}
scratch=${VM_SCRATCH:-$build/vm/scratch}
poweroff=$build/vm/poweroff

[ -f "$kernel" ] || die "no kernel at $kernel (run 'make kernel')"
case "$PWD$scratch" in
*[[:space:]]*) die "the working and scratch directories must not contain spaces" ;;
esac
mkdir -p "$(dirname "$log")" "$scratch" "$(dirname "$poweroff")"
scratch=$(realpath "$scratch")
if [ ! -x "$poweroff" ] || [ "$top/mk/poweroff.c" -nt "$poweroff" ]; then
	gcc -O2 -Wall -o "$poweroff" "$top/mk/poweroff.c" || die "cannot build $poweroff"
fi

rm -f "$scratch/status" "$scratch/cmd"
printf '%s\n' "$cmd" > "$scratch/cmd"

append="console=ttyS0 root=/dev/root rootfstype=9p"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=512000,cache=loose ro"
append+=" init=$top/mk/guest-init.sh panic=-1 oops=panic"
append+=" vmscratch=$scratch vmcwd=$PWD vmpoweroff=$poweroff"
append+=" ${VM_APPEND:-}"

qemu=(qemu-system-x86_64 -machine pc -cpu max -m "${VM_MEM:-2G}"
	-smp "${VM_SMP:-2}" -nographic -no-reboot -monitor none
	-kernel "$kernel" -append "$append"
	-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root
	-fsdev "local,id=scratch,path=$scratch,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=scratch,mount_tag=scratch)

timeout -k 10 "$timeout_s" "${qemu[@]}" < /dev/null 2>&1 |
	tr -d '\r' | tee "$log"
qrc=${PIPESTATUS[0]}

"$top/mk/logcheck.sh" "$log"
lrc=$?

if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "vm: guest hung: killed after ${timeout_s}s (VM_TIMEOUT); console log in $log" >&2
	exit 124
fi
if [ ! -f "$scratch/status" ]; then
	echo "vm: the guest never reported the command's status (crash or panic?); console log in $log" >&2
	exit 126
fi
rc=$(cat "$scratch/status")
if [ "$lrc" != 0 ]; then
	echo "vm: the kernel logged a report (above); console log in $log" >&2
	[ "$rc" = 0 ] && rc=125
fi
exit "$rc"
