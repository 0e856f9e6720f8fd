#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# QEMU's TCG under sframe-run in the test kernel (mk/layers/64-qemu_tcg
# runs it in the VM): qemu-system-x86_64, itself a program here, runs a
# boot sector that counts to a fixed number and then leaves through the
# isa-debug-exit device, under perf record.  QEMU links one image for
# its whole code buffer into the GDB JIT interface, with a function
# code_gen_buffer and a .debug_frame describing the prologue's frame, in
# which every translated block runs; sframe-run writes the name to
# /tmp/perf-PID.map and registers the frame's row.
#
# With --call-graph=sframe nearly every sample whose leaf is translated
# code (code_gen_buffer, named by the perf map) must walk, through the
# vCPU thread's frames only, to the thread's start function and libc's
# frames below it:
#
#   code_gen_buffer          the translated blocks
#   cpu_tb_exec              QEMU's ([unknown]: Debian strips QEMU, and
#   cpu_exec                  its static functions have no names)
#   tcg_cpus_exec            the TCG module's
#   the vCPU thread's loop   the TCG module's ([unknown])
#   qemu_thread_start        QEMU's ([unknown]), the thread's start
#   start_thread, clone3     libc's
#
# (SFRAME_RUN_SYNC=1: QEMU's and its libraries' tables registered
# before main()), and with --call-graph=fp almost none may: neither QEMU
# nor its translated code keeps frame pointers, so the test fails if the
# row was not there or not used.  In sframe-run's default mode, where
# the start-up thread converts QEMU's tables a while later, nearly every
# such sample must at least return into QEMU: the translated code's row
# is published before the vCPU thread starts.  The work is a count, not a time, and
# too few samples in translated code fail the test instead of passing it.
#
# With AGENT, the same guest, counting without end, runs in a QEMU
# started with nothing of the project's; once its vCPU thread exists
# (TCG made its code buffer and linked the buffer's GDB JIT object
# before it), AGENT --once -p gives the running process its tables and
# reads the object from the GDB JIT list, and perf record -p samples it
# for a few seconds: nearly every sample in translated code, which the
# recording finds in anonymous memory (the agent writes no perf map),
# must reach the vCPU thread's start as above.
#
#   qemu_tcg_vm.sh OUTPUT_DIR PERF [AGENT]
#
# OUTPUT_DIR is the library's build directory (sframe-run), AGENT
# sframe-agent.  Ends with "N passed, N failed".
set -uo pipefail

out=$1
perf=$2
agent=${3:-}
run=$out/sframe-run
tmp=${SCRATCH:-/tmp}/qemu-tcg
# The boot sector's outer rounds, of 65536 inner ones each: about 50
# samples in translated code per 64 rounds under software emulation,
# after SeaBIOS's 200 or so.
rounds=${QEMU_TCG_ROUNDS:-512}
# isa-debug-exit makes QEMU exit with (value << 1) | 1: 0x21 gives 67.
exit_value=0x21
exit_status=67
min_samples=50
min_exact=95
max_fallback=10
here=$(dirname "$0")
. "$here/tap.sh"

# byte N: the escape printf takes for the byte N.
byte() {
	printf '\\x%02x' $(($1 & 255))
}

# boot_sector FILE: real-mode code at 0x7c00, then the boot signature.
#
#	mov dx, rounds
# outer:	xor cx, cx
# inner:	inc ax
#	loop inner
#	dec dx
#	jnz outer
#	mov al, exit_value
#	out 0xf4, al
#	jmp $
boot_sector() {
	local code

	code="\\xba$(byte "$rounds")$(byte $((rounds >> 8)))"
	code+='\x31\xc9\x40\xe2\xfd\x4a\x75\xf8'
	code+="\\xb0$(byte $exit_value)\\xe6\\xf4\\xeb\\xfe"
	{
		printf '%b' "$code"
		head -c $((510 - 17)) /dev/zero
		printf '\x55\xaa'
	} > "$1"
}

# boot_sector_endless FILE: as boot_sector, but counting for ever.
#
# outer:	xor cx, cx
# inner:	inc ax
#	loop inner
#	jmp outer
boot_sector_endless() {
	{
		printf '\x31\xc9\x40\xe2\xfd\xeb\xf9'
		head -c $((510 - 7)) /dev/zero
		printf '\x55\xaa'
	} > "$1"
}

rm -rf "$tmp"
mkdir -p "$tmp"
boot_sector "$tmp/boot.img"
[ "$(stat -c %s "$tmp/boot.img")" = 512 ]
result $? "boot sector of 512 bytes"

qemu_base=(qemu-system-x86_64 -accel tcg -display none -nodefaults
	-no-user-config -m 16 -smp 1 -no-reboot
	-device isa-debug-exit,iobase=0xf4,iosize=0x04)
qemu=("${qemu_base[@]}" -drive "file=$tmp/boot.img,format=raw,if=floppy")

# record NAME MODE SYNC: perf script -F ip,sym,dso of a recording in
# $tmp/NAME.script, sframe-run's verbose lines in $tmp/NAME.log, with
# SFRAME_RUN_SYNC=SYNC.  QEMU must have left through the boot sector's
# exit, and perf record passes its status on.
record() {
	local name=$1 mode=$2 sync=$3 rc

	SFRAME_RUN_SYNC=$sync SFRAME_RUN_VERBOSE=1 timeout -k 10 600 \
		"$perf" record -q -N -B -e cpu-clock:u -F 499 \
		--call-graph="$mode" -o "$tmp/$name.data" -- \
		"$run" "${qemu[@]}" > "$tmp/$name.log" 2>&1
	rc=$?
	if [ $rc != $exit_status ]; then
		echo "# perf record --call-graph=$mode: status $rc, not $exit_status"
		cat "$tmp/$name.log"
		return 1
	fi
	"$perf" script -i "$tmp/$name.data" -F ip,sym,dso \
		> "$tmp/$name.script" 2> "$tmp/$name.script.err"
}

# paths NAME [JIT_ONLY]: "exact total", the samples whose leaf is
# code_gen_buffer from the perf map and of them those whose every frame
# is the vCPU thread's: the return into QEMU's cpu_tb_exec(), frames of
# QEMU and its TCG module through cpu_exec() and tcg_cpus_exec(), the
# thread's start function in QEMU (qemu_thread_start()), start_thread()
# and clone3(); with JIT_ONLY=1, those whose caller is QEMU's, what the
# translated code's row gives alone.  The commonest exact stack goes to
# $tmp/NAME.path.
paths() {
	awk -v path="$tmp/$1.path" -v jit_only="${2:-0}" \
		-f "$here/perf_stacks.awk" -f "$here/qemu_paths.awk" "$tmp/$1.script"
}

check() {
	local name=$1 what=$2 want=$3 e t pct

	if [ "$want" = jit ]; then
		read -r e t <<< "$(paths "$name" 1)"
		pct=$((t ? 100 * e / t : 0))
		echo "# $what: $e of $t samples in code_gen_buffer return into QEMU ($pct%)"
		[ "$t" -ge "$min_samples" ] && [ "$pct" -ge "$min_exact" ]
		result $? "$what: at least $min_exact% of at least $min_samples samples in translated code return into QEMU"
		return
	fi
	read -r e t <<< "$(paths "$name")"
	pct=$((t ? 100 * e / t : 0))
	echo "# $what: $e of $t samples in code_gen_buffer reach the thread's start ($pct%)"
	if [ "$want" = all ]; then
		[ -s "$tmp/$name.path" ] && echo "# stack: $(cat "$tmp/$name.path")"
		[ "$t" -ge "$min_samples" ] && [ "$pct" -ge "$min_exact" ]
		result $? "$what: at least $min_exact% of at least $min_samples samples in translated code reach the vCPU thread's start"
	else
		[ "$t" -ge "$min_samples" ] && [ "$pct" -le "$max_fallback" ]
		result $? "$what: at most $max_fallback% of samples in translated code reach it"
	fi
}

# registered NAME: sframe-run named QEMU's buffer and took its row.
registered() {
	grep -q '^sframe-run: + gdb jit object .* 1 names, rows registered$' \
		"$tmp/$1.log"
}

what="qemu-system-x86_64 (TCG)"
if record sync sframe 1 && record nofp fp 1 &&
   record worker sframe 0; then
	registered sync
	result $? "$what: the GDB JIT object named and its .debug_frame registered"
	check sync "$what, --call-graph=sframe" all
	check nofp "$what, --call-graph=fp" few
	check worker "$what, sframe-run's default mode, --call-graph=sframe" jit
else
	result 1 "perf record of $what"
fi

# vcpu_thread PID: wait, up to a minute, for QEMU's vCPU thread (named
# by -name debug-threads=on), which it starts once TCG is ready.
vcpu_thread() {
	local i

	for ((i = 0; i < 600; i++)); do
		grep -qx 'CPU 0/TCG' /proc/"$1"/task/*/comm 2> /dev/null &&
			return 0
		sleep 0.1
	done
	return 1
}

# attach: the guest already running, then the agent, then perf -p.
attach() {
	local pid rc=0

	boot_sector_endless "$tmp/endless.img"
	"${qemu_base[@]}" -name attach,debug-threads=on \
		-drive "file=$tmp/endless.img,format=raw,if=floppy" &
	pid=$!
	if ! vcpu_thread "$pid"; then
		echo "# no vCPU thread in QEMU $pid"
		rc=1
	elif ! "$agent" --cache-dir="$tmp/agent-cache" -v --once -p "$pid" \
		2> "$tmp/attach.agent"; then
		echo "# sframe-agent --once -p $pid failed"
		rc=1
	elif ! "$perf" record -q -N -B -e cpu-clock:u -F 499 \
		--call-graph=sframe -p "$pid" -o "$tmp/attach.data" \
		-- sleep 3 > "$tmp/attach.log" 2>&1; then
		echo "# perf record -p $pid failed"
		rc=1
	fi
	sed 's/^/# /' "$tmp/attach.agent" "$tmp/attach.log" 2> /dev/null
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	[ "$rc" = 0 ] && "$perf" script -i "$tmp/attach.data" \
		-F ip,sym,dso > "$tmp/attach.script" 2> "$tmp/attach.script.err"
}

if [ -n "$agent" ]; then
	what="sframe-agent -p, a running qemu-system-x86_64 (TCG)"
	if attach; then
		grep -q ' [1-9][0-9]* JIT objects registered' "$tmp/attach.agent"
		result $? "$what: the GDB JIT object read from the list and registered"
		read -r e t <<< "$(awk -v anon=1 -v path="$tmp/attach.path" \
			-f "$here/perf_stacks.awk" -f "$here/qemu_paths.awk" \
			"$tmp/attach.script")"
		pct=$((t ? 100 * e / t : 0))
		echo "# $what: $e of $t samples in translated code reach the thread's start ($pct%)"
		[ -s "$tmp/attach.path" ] && echo "# stack: $(cat "$tmp/attach.path")"
		[ "$t" -ge "$min_samples" ] && [ "$pct" -ge "$min_exact" ]
		result $? "$what: at least $min_exact% of at least $min_samples samples in translated code reach the vCPU thread's start"
	else
		result 1 "$what"
	fi
fi

summary
