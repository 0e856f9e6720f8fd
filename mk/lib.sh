# Shared definitions for the build orchestration scripts in mk/.
# Sourced, not run.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
tree=${TREE:-$build/linux}
# ccache hashes paths below build/ relatively (see the Makefile), also
# for the scripts run without make.
export CCACHE_BASEDIR=$build
tarball=/usr/src/linux-source-6.12.tar.xz
base_pkg=linux-source-6.12

# Top-level kernel-tree directories whose files in this repository form
# the overlay copied into the assembled tree.  Everything else in the
# repository (mk/, patches/, .ci/, README.md, ...) is orchestration.
overlay_dirs="arch block certs crypto Documentation drivers fs include init
io_uring ipc kernel lib mm net rust samples scripts security sound tools
usr virt"

die() {
	echo "error: $*" >&2
	exit 1
}

note() {
	echo "  ${0##*/}: $*"
}

base_version() {
	dpkg-query -W -f='${Version}' "$base_pkg" 2>/dev/null ||
		die "$base_pkg is not installed (run 'make deps')"
}

base_subject() {
	echo "Base: Debian $base_pkg $(base_version), untouched"
}

# The overlay directories this repository has.
present_overlay_dirs() {
	local d

	for d in $overlay_dirs; do
		if [ -d "$top/$d" ]; then
			echo "$d"
		fi
	done
}

# Files of the overlay, relative to $top: the files git tracks (those in
# the index: a new file counts once it is "git add"ed, or "git add -N"),
# as they are in the work tree.  What git does not track, such as a
# binary a build left in tools/, never goes into the tree or the series,
# whether or not a .gitignore names it.
overlay_files() {
	[ -n "$(present_overlay_dirs)" ] || return 0
	# shellcheck disable=SC2046
	git -C "$top" ls-files --cached -- $(present_overlay_dirs) |
		sort -u | while read -r f; do
		[ -f "$top/$f" ] && echo "$f"
	done
}

# Files in the overlay directories that git neither tracks nor ignores:
# new files not yet added, or build products a .gitignore should name.
untracked_overlay_files() {
	[ -n "$(present_overlay_dirs)" ] || return 0
	# shellcheck disable=SC2046
	git -C "$top" ls-files --others --exclude-standard -- $(present_overlay_dirs)
}

# Patches named in patches/series, in order, without comments.
series_patches() {
	[ -f "$top/patches/series" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]].*//' "$top/patches/series" |
		grep -v '^$' || true
}

# Paths a patch touches (its "+++" side, or "---" side for a deletion).
patch_files() {
	awk '
	/^--- / { old = $2 }
	/^\+\+\+ / {
		f = ($2 == "/dev/null") ? old : $2
		sub(/^[ab]\//, "", f)
		print f
	}' "$1" | sort -u
}
