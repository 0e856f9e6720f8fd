#!/bin/bash
# Usage: mk/logcheck.sh CONSOLE_LOG
#
# Exit 1 and print each report if the kernel logged a panic, oops, BUG,
# WARNING, KASAN, UBSAN, KFENCE, lockdep, RCU stall, soft or hard lockup,
# hung task or kmemleak report; exit 0 if it logged none.  Only kernel
# lines are read: they carry the printk timestamp (CONFIG_PRINTK_TIME),
# so a test program that prints "WARNING:" itself is not mistaken for
# the kernel.  Nor are a user process's own faults, which the kernel
# logs too ("NAME[PID]: segfault at ...", and from arch/x86/kernel/traps.c
# "traps: NAME[PID] general protection fault ip:... sp:... error:0 in
# ..."): only the kernel's own general protection fault, whose header
# ends in the error code and the oops count (": 0000 [#1]"), is a report.
set -u
[ $# = 1 ] && [ -r "$1" ] || { echo "usage: $0 CONSOLE_LOG" >&2; exit 2; }

awk '
BEGIN {
	ts = "^\\[ *[0-9]+\\.[0-9]+\\]( *\\[ *[CT][0-9]+\\])? "
	n = split("Kernel panic - not syncing|" \
		  "Oops: |" \
		  "BUG: |" \
		  "kernel BUG at |" \
		  "WARNING: |" \
		  "general protection fault.*: [0-9a-f]+ \\[#[0-9]+\\]|" \
		  "KASAN: |" \
		  "UBSAN: |" \
		  "KFENCE: |" \
		  "INFO: task .* blocked for more than|" \
		  "INFO: rcu_.*detected stall|" \
		  "rcu: INFO: .*detected stall|" \
		  "watchdog: BUG: soft lockup|" \
		  "NMI watchdog: Watchdog detected hard LOCKUP|" \
		  "unreferenced object 0x|" \
		  "kmemleak: [0-9]+ new suspected memory leaks", pat, "|")
	found = 0; tail = 0
}
{
	sub(/\r$/, "")
	if ($0 !~ ts) {
		if (tail > 0 && $0 ~ /^ /) { print "    " $0; tail-- }
		next
	}
	msg = $0
	sub(ts, "", msg)
	for (i = 1; i <= n; i++) {
		if (msg ~ pat[i]) {
			if (!found)
				print "logcheck: kernel report(s) in " FILENAME ":"
			found++
			print ">>> " $0
			tail = 30
			next
		}
	}
	if (tail > 0) { print "    " $0; tail-- }
}
END { exit found ? 1 : 0 }
' "$1"
