#!/bin/bash
# Assemble build/linux: Debian's untouched linux-source-6.12 as the first
# git commit (tagged "base"), then our overlay files and patches/series
# as a second commit.  The overlay is the files git tracks here (mk/lib.sh
# overlay_files), never what a build left beside them.
#
# A re-run only rewrites files whose content changes, so the kernel
# build that follows recompiles only what was edited.  It refuses to run
# over edits made inside build/linux that are not yet carried back to
# the repository (see mk/refresh.sh), unless FORCE=1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

unpack_base() {
	local subject tmp

	subject=$(base_subject)
	[ -f "$tarball" ] || die "$tarball missing (run 'make deps')"
	if [ -d "$tree/.git" ]; then
		if [ "$(git -C "$tree" log -1 --format=%s base 2>/dev/null)" = \
		     "$subject" ]; then
			return 0
		fi
		[ -z "$(git -C "$tree" status --porcelain)" ] ||
			[ "${FORCE:-0}" = 1 ] ||
			die "$tree has local edits and the base package changed; run 'make refresh' first or FORCE=1"
		note "base package changed; unpacking anew"
	fi
	note "unpacking $tarball"
	rm -rf "$tree"
	tmp=$build/unpack.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	tar -xJf "$tarball" -C "$tmp"
	mv "$tmp"/linux-source-6.12 "$tree"
	rmdir "$tmp"
	git -C "$tree" init -q -b main
	git -C "$tree" config user.name "sframe-jit tree"
	git -C "$tree" config user.email "tree@sframe-jit.invalid"
	git -C "$tree" config core.abbrev 12
	# The tarball carries its own .gitignore files; keep every file of
	# the base so that the first commit is the package exactly.
	git -C "$tree" add -A -f .
	git -C "$tree" commit -q -m "$subject" \
		-m "Unpacked from $tarball of Debian package $base_pkg $(base_version)."
	git -C "$tree" tag -f base >/dev/null
}

check_clean() {
	local dirty

	dirty=$(git -C "$tree" status --porcelain)
	[ -z "$dirty" ] && return 0
	[ "${TREE_CARRIED_BACK:-0}" = 1 ] && return 0
	if [ "${FORCE:-0}" = 1 ]; then
		note "FORCE=1: discarding edits in $tree"
		return 0
	fi
	echo "$dirty" >&2
	die "$tree has edits that are not in the repository; run 'make refresh' to carry them back (or 'make tree FORCE=1' to discard them)"
}

# Build the wanted content of every file we change into $stage: the base
# version of each patched file with patches/series pushed by quilt, then
# the overlay files on top.
stage_files() {
	local p f seen=""

	rm -rf "$stage"
	mkdir -p "$stage"
	for p in $(series_patches); do
		[ -f "$top/patches/$p" ] || die "patches/series names missing $p"
		for f in $(patch_files "$top/patches/$p"); do
			case " $seen " in
			*" $f "*)
				die "$f is changed by more than one patch; keep one patch per upstream file so 'make refresh' stays exact" ;;
			esac
			seen="$seen $f"
			git -C "$tree" cat-file -e "base:$f" 2>/dev/null || continue
			mkdir -p "$stage/$(dirname "$f")"
			git -C "$tree" show "base:$f" > "$stage/$f"
		done
	done
	if [ -n "$(series_patches)" ]; then
		(cd "$stage" && QUILT_PATCHES="$top/patches" \
			QUILT_PC="$stage/.pc" quilt push -a -q --fuzz=0 >/dev/null) ||
			die "a patch in patches/series does not apply to the base"
		rm -rf "$stage/.pc"
	fi
	while read -r f; do
		if git -C "$tree" cat-file -e "base:$f" 2>/dev/null; then
			die "$f exists in the base tree; change it with a patch in patches/, not as an overlay file"
		fi
		mkdir -p "$stage/$(dirname "$f")"
		cp "$top/$f" "$stage/$f"
	done < <(overlay_files)
	while read -r f; do
		note "left out, as git does not track it: $f (git add a new file; a build product belongs in a .gitignore)"
	done < <(untracked_overlay_files)
}

# Make $tree hold base + stage, writing only files whose content differs.
sync_tree() {
	local f wanted

	wanted=$(cd "$stage" && find . -type f | sed 's|^\./||' | sort)
	for f in $wanted; do
		if ! cmp -s "$stage/$f" "$tree/$f"; then
			mkdir -p "$tree/$(dirname "$f")"
			cp "$stage/$f" "$tree/$f"
			note "updated $f"
		fi
	done
	# Files changed by an earlier run that no longer are.
	for f in $(git -C "$tree" diff --name-only base HEAD); do
		grep -qxF "$f" <<< "$wanted" && continue
		if git -C "$tree" cat-file -e "base:$f" 2>/dev/null; then
			git -C "$tree" checkout -q base -- "$f"
		else
			rm -f "$tree/$f"
		fi
		note "reverted $f"
	done
}

commit_tree() {
	git -C "$tree" add -u
	(cd "$stage" && find . -type f -print0) |
		(cd "$tree" && xargs -0 -r git add -f --)
	if git -C "$tree" diff --quiet --cached base; then
		git -C "$tree" reset -q --soft base
		return 0
	fi
	git -C "$tree" reset -q --soft base
	git -C "$tree" commit -q -m "sframe: overlay files and patches/series" \
		-m "Assembled by mk/tree.sh from $(git -C "$top" describe --always --dirty 2>/dev/null || echo 'an uncommitted repository')."
}

mkdir -p "$build"
# A stage of its own: another tree (TREE=) may be assembled meanwhile.
stage=$(mktemp -d "$build/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
unpack_base
check_clean
stage_files
sync_tree
commit_tree
rm -rf "$stage"
note "$tree is at $(git -C "$tree" log -1 --format='%h %s')"
