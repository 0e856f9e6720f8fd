#!/bin/bash
# Rebuild each of our kernel C files that the configuration compiles with
# W=1, and fail if any of them warns.  Upstream files are not held to
# W=1; ours are.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kout=${KOUT:-$build/kbuild}

objs=()
while read -r f; do
	case "$f" in
	tools/*|samples/*|Documentation/*|scripts/*|usr/*) continue ;;
	*.c) ;;
	*) continue ;;
	esac
	o=${f%.c}.o
	[ -f "$kout/$o" ] && objs+=("$o")
done < <(overlay_files)
[ ${#objs[@]} = 0 ] && exit 0

log=$build/logs/w1.log
mkdir -p "$(dirname "$log")"
make -s -C "$tree" O="$kout" CC="ccache gcc" HOSTCC="ccache gcc" LOCALVERSION= W=1 "${objs[@]}" > "$log" 2>&1 ||
	{ cat "$log"; die "W=1 build of our files failed"; }
if grep -q 'warning:' "$log"; then
	cat "$log"
	die "our kernel files are not warning-free with W=1"
fi
note "W=1 clean: ${objs[*]}"
