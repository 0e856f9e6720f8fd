#!/bin/bash
# Carry edits made inside build/linux back into the repository:
#  - a new file, or an edit to one of our overlay files, is copied to the
#    same path here (a new file is "git add -N"ed, as the tree takes
#    only the files git tracks);
#  - an edit to an upstream file rewrites the quilt patch in patches/
#    that already changes that file, keeping the patch's description;
#  - an edit to an upstream file that no patch changes yet goes into the
#    patch named by PATCH=name.patch (created and appended to
#    patches/series if new).
# Then the tree is re-assembled and committed (mk/tree.sh).
#
# Each upstream file belongs to at most one patch, so a patch is exactly
# "git diff base" of its files in the assembled tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -d "$tree/.git" ] || die "no assembled tree; run 'make tree'"

owner_of() {
	local p

	for p in $(series_patches); do
		if patch_files "$top/patches/$p" | grep -qxF "$1"; then
			echo "$p"
			return
		fi
	done
}

# The description at the top of a patch, up to its first diff.
patch_header() {
	[ -f "$1" ] || return 0
	awk '/^(diff --git |Index: |--- )/ { exit } { print }' "$1"
}

declare -A files_of=()
while IFS= read -r -d '' entry; do
	st=${entry:0:2}
	f=${entry:3}
	case "$st" in
	R*|C*) die "$f: renames are not supported; copy and delete instead" ;;
	esac
	if ! git -C "$tree" cat-file -e "base:$f" 2>/dev/null; then
		# Ours: a new file, or an overlay file edited in place.
		if [ -f "$tree/$f" ]; then
			mkdir -p "$top/$(dirname "$f")"
			cp "$tree/$f" "$top/$f"
			note "copied $f"
			# The tree takes only files git tracks: record the
			# new one's path (not its content) in the index,
			# unless a .gitignore says it is a build product.
			if git -C "$top" check-ignore -q -- "$f"; then
				note "$f is ignored by git, so the tree leaves it out"
			elif ! git -C "$top" ls-files --error-unmatch -- "$f" \
				>/dev/null 2>&1; then
				git -C "$top" add -N -- "$f"
				note "git add -N $f"
			fi
		else
			rm -f "$top/$f"
			note "removed $f"
		fi
		continue
	fi
	p=$(owner_of "$f")
	if [ -z "$p" ]; then
		[ -n "${PATCH:-}" ] ||
			die "$f is changed by no patch yet; name one: make refresh PATCH=name.patch"
		p=$PATCH
	fi
	files_of[$p]="${files_of[$p]:-} $f"
done < <(git -C "$tree" status --porcelain -z --untracked-files=all)

for p in "${!files_of[@]}"; do
	pf=$top/patches/$p
	all=$( (echo "${files_of[$p]}" | tr ' ' '\n'
		if [ -f "$pf" ]; then patch_files "$pf"; fi) |
		grep -v '^$' | sort -u)
	header=$(patch_header "$pf")
	{
		[ -n "$header" ] && printf '%s\n' "$header"
		# shellcheck disable=SC2086
		git -C "$tree" diff --no-color --no-ext-diff base -- $all |
			grep -v '^index '
	} > "$pf.new"
	mv "$pf.new" "$pf"
	if ! series_patches | grep -qxF "$p"; then
		echo "$p" >> "$top/patches/series"
		note "new patch $p (add a description at its top)"
	fi
	note "refreshed patches/$p"
done

# Every edit now lives in the repository, so the tree may be rewritten.
TREE_CARRIED_BACK=1 exec "$top/mk/tree.sh"
