#!/bin/bash
# Write the test kernel's .config into the build directory given as $1:
# tinyconfig, then each fragment named after it, then olddefconfig.  Every
# option a fragment sets must survive into the result (a missing
# dependency otherwise drops it silently).  The .config in $1 is only
# replaced when its content changes, so an unchanged configuration does
# not cause a rebuild.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$(realpath -m "$1")
shift
frags=()
for f in "$@"; do
	frags+=("$(realpath "$f")")
done
set -- "${frags[@]}"
gen=$out.kconfig
mkdir -p "$out" "$gen"
make -s -C "$tree" O="$gen" tinyconfig >/dev/null
"$tree"/scripts/kconfig/merge_config.sh -m -O "$gen" "$gen/.config" "$@" \
	>"$gen/merge.log" 2>&1 || { cat "$gen/merge.log"; die "merge_config failed"; }
make -s -C "$tree" O="$gen" olddefconfig >/dev/null

# What the fragments ask for, the last one winning, as in merge_config.
declare -A want=()
declare -A from=()
for frag in "$@"; do
	while read -r line; do
		case "$line" in
		CONFIG_*=*)
			opt=${line%%=*} ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *} ;;
		*)
			continue ;;
		esac
		want[$opt]=$line
		from[$opt]=$frag
	done < "$frag"
done

bad=0
for opt in "${!want[@]}"; do
	line=${want[$opt]}
	case "$line" in
	CONFIG_*=*)
		grep -qxF -- "$line" "$gen/.config" && continue ;;
	*)
		grep -q "^$opt=" "$gen/.config" || continue ;;
	esac
	echo "  ${from[$opt]}: '$line' did not take effect" >&2
	bad=1
done
[ $bad = 0 ] || die "kernel configuration is missing requested options (check their dependencies)"

if ! cmp -s "$gen/.config" "$out/.config"; then
	cp "$gen/.config" "$out/.config"
	note "wrote $out/.config"
fi
