#!/bin/bash
# PID 1 of the test VM (see mk/vm.sh).  The kernel hands us the
# vm* parameters of its command line as environment variables.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TERM=dumb LANG=C.UTF-8
# perf record --call-graph=sframe starts an sframe-agent it finds in
# $PATH: the tests measure what they set up, so only those that ask for
# it (PERF_SFRAME_AGENT=path) get one, whatever the host has installed.
export PERF_SFRAME_AGENT=none

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# devtmpfs lacks the links udev would make; the kselftest runner writes
# to /dev/stdout.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# A fresh /tmp hides the host's, where the project may live (CI clones
# it anywhere): keep the host's directories that the run needs visible.
mkdir -p /run/host-tmp
mount --bind /tmp /run/host-tmp
mount -t tmpfs tmpfs /tmp
for p in "$vmcwd" "$vmscratch" "$vmpoweroff" "$0"; do
	case "$p" in
	/tmp/?*)
		d=${p#/tmp/}
		d=${d%%/*}
		[ -e "/tmp/$d" ] && continue
		mkdir -p "/tmp/$d"
		mount --bind "/run/host-tmp/$d" "/tmp/$d"
		;;
	esac
done
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 \
	scratch "$vmscratch"; then
	echo "guest-init: cannot mount the scratch directory" >&2
	exec "$vmpoweroff"
fi
export SCRATCH=$vmscratch

cd "$vmcwd" || echo "guest-init: cannot enter $vmcwd" >&2
echo "guest-init: running: $(cat "$SCRATCH/cmd")"
bash "$SCRATCH/cmd" < /dev/null
rc=$?
echo "guest-init: command exited with status $rc"
echo "$rc" > "$SCRATCH/status"
sync
exec "$vmpoweroff"
