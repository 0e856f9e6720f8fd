#!/bin/bash
# make series-check: the checks a maintainer runs on the series of
# "make series" (build/series/).
#
# In a scratch clone of the assembled tree at its base (tag "base"),
# build/series-check/linux, the series is applied with git am; then for
# every patch, with the tree at that patch:
#  - the kernel is built (out of tree, build/series-check/kbuild, with
#    the test kernel's configuration: mk/kconfig.sh and the fragments of
#    the Makefile, restricted to the options that exist at that patch),
#    under build/.kernel.lock, one build at a time on the machine;
#  - scripts/checkpatch.pl --strict: no error and no warning but those
#    mk/series/checkpatch-exceptions lists with their justification
#    (CHECK-level reports are counted and shown, not fatal);
#  - scripts/kernel-doc -Wall -none on the kernel C files and headers the
#    series adds, as they are at that patch: no warning;
#  - sparse (make C=2) on the series' own kernel C files that the
#    configuration builds: no warning.
# It prints a summary line per patch, then scripts/get_maintainer.pl for
# the whole series, and exits non-zero if any check failed.  The full
# log is build/logs/series-check.log (NAME.log for SERIES_CHECK_DIR=.../NAME).
#
# Heavy: one kernel build per patch.  Not part of "make check".
# SKIP_BUILD=1 runs everything but the builds (and so sparse);
# BUILD_ONLY="GLOB ..." builds only the patches whose names match;
# SERIES_CHECK_DIR=dir works there instead of build/series-check.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

series=${SERIES_OUT:-$build/series}
wd=${SERIES_CHECK_DIR:-$build/series-check}
clone=$wd/linux
kout=$wd/kbuild
exceptions=$top/mk/series/checkpatch-exceptions
log=$build/logs/${wd##*/}.log
jobs=${JOBS:-$(nproc)}
kmake=(make -s -C "$clone" O="$kout" CC="ccache gcc" HOSTCC="ccache gcc"
	LOCALVERSION= -j"$jobs")
# mk/lib.sh hashes paths relative to build/ in ccache: builds of this
# clone reuse the objects of build/kbuild, whose source tree sits at the
# same depth.

mkdir -p "$wd" "$build/logs"
exec > >(tee "$log") 2>&1

# A snapshot of the series: "make series" may rewrite build/series/
# while this runs.
rm -rf "$wd/patches"
mkdir -p "$wd/patches"
cp "$series"/[0-9][0-9][0-9][0-9]-*.patch "$wd/patches/" 2>/dev/null ||
	die "no patches in $series; run 'make series'"
patches=()
for p in "$wd"/patches/[0-9][0-9][0-9][0-9]-*.patch; do
	[ "${p##*/}" = 0000-cover-letter.patch ] && continue
	patches+=("$p")
done
[ ${#patches[@]} -gt 0 ] || die "no patches in $series; run 'make series'"
[ -d "$tree/.git" ] || die "no assembled tree at $tree; run 'make tree'"

# The configuration fragments of the test kernel, from the Makefile.
kconfig_fragments() {
	awk '
	/^KCONFIG_FRAGMENTS[ \t]*:?=/ { on = 1; sub(/^[^=]*=/, "") }
	on {
		more = sub(/\\$/, "")
		printf "%s ", $0
		if (!more) exit
	}' "$top/Makefile"
}

setup_clone() {
	if [ ! -d "$clone/.git" ]; then
		note "cloning $tree at base into $clone"
		git clone -q --shared --no-checkout "$tree" "$clone" ||
			die "git clone failed"
	fi
	git -C "$clone" fetch -q --force "$tree" "refs/tags/base:refs/tags/base" ||
		die "cannot fetch the base"
	git -C "$clone" config user.name "series-check"
	git -C "$clone" config user.email "series-check@sframe-jit.invalid"
	git -C "$clone" am --abort >/dev/null 2>&1
	git -C "$clone" checkout -q -f -B check base || die "cannot check out base"
	git -C "$clone" clean -q -f -d -x
}

apply_series() {
	git -C "$clone" am -q --committer-date-is-author-date "${patches[@]}" ||
		die "the series does not apply to the base; see above"
	mapfile -t commits < <(git -C "$clone" rev-list --reverse base..HEAD)
	[ ${#commits[@]} = ${#patches[@]} ] ||
		die "git am made ${#commits[@]} commits of ${#patches[@]} patches"
}

# The test kernel's .config at the last patch, every requested option in
# effect (mk/kconfig.sh checks that).
final_config() {
	local frags

	frags=$(kconfig_fragments)
	[ -n "$frags" ] || die "no KCONFIG_FRAGMENTS in the Makefile"
	# shellcheck disable=SC2086
	(cd "$top" && TREE=$clone mk/kconfig.sh "$wd/config-final" $frags) ||
		die "the test kernel's configuration does not hold at the last patch"
	cp "$wd/config-final/.config" "$wd/config"
}

# Files the series adds (not in the base), as of the last patch.
series_new_files() {
	git -C "$clone" diff --name-only --diff-filter=A base "${commits[-1]}"
}

# ---- per-patch checks ----------------------------------------------------

build_kernel() {
	mkdir -p "$kout"
	cp "$wd/config" "$kout/.config"
	"${kmake[@]}" olddefconfig >/dev/null || return 1
	flock "$build/.kernel.lock" nice "${kmake[@]}" > "$wd/build.log" 2>&1
	local rc=$?
	[ $rc = 0 ] || tail -n 40 "$wd/build.log"
	return $rc
}

# checkpatch's reports as "LEVEL TYPE FILE" lines, FILE "-" if none named.
checkpatch_reports() {
	# spdxcheck.py needs the python3-ply and python3-git of
	# mk/packages.txt: the system's python3, not another one in PATH.
	(cd "$clone" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl \
		--strict --show-types \
		--no-summary --color=never "$1") | awk '
	function flush() { if (lvl != "") print lvl, type, (file == "" ? "-" : file); lvl = "" }
	/^(ERROR|WARNING|CHECK):[A-Z_0-9]+:/ {
		flush()
		split($0, a, ":")
		lvl = a[1]; type = a[2]; file = ""
		next
	}
	lvl != "" && /^#[0-9]+: FILE: / && file == "" {
		file = $3
		sub(/:[0-9]+:?$/, "", file)
	}
	/^$/ { flush() }
	END { flush() }'
}

# Is the report "TYPE FILE" listed in mk/series/checkpatch-exceptions?
excepted() {
	local type=$1 file=$2 t g rest

	[ -f "$exceptions" ] || return 1
	while read -r t g rest; do
		[ -n "$t" ] && [ "${t:0:1}" != "#" ] || continue
		[ "$t" = "$type" ] || continue
		# shellcheck disable=SC2053
		if [ "$g" = "-" ] && [ "$file" = "-" ]; then return 0; fi
		if [ "$g" != "-" ] && [[ "$file" == $g ]]; then return 0; fi
	done < "$exceptions"
	return 1
}

check_patch_style() {
	local p=$1 lvl type file
	cp_err=0 cp_warn=0 cp_check=0 cp_exc=0
	checkpatch_reports "$p" > "$wd/checkpatch.out"
	while read -r lvl type file; do
		if excepted "$type" "$file"; then
			cp_exc=$((cp_exc + 1))
			continue
		fi
		case $lvl in
		ERROR) cp_err=$((cp_err + 1)) ;;
		WARNING) cp_warn=$((cp_warn + 1)) ;;
		CHECK) cp_check=$((cp_check + 1)) ;;
		esac
		echo "    checkpatch: $lvl:$type $file"
	done < "$wd/checkpatch.out"
}

# The series' own kernel sources present at this patch.
own_kernel_files() {
	local f
	for f in $new_files; do
		case "$f" in
		tools/*|samples/*|Documentation/*|scripts/*|usr/*) continue ;;
		*.c|*.h) [ -f "$clone/$f" ] && echo "$f" ;;
		esac
	done
}

check_kernel_doc() {
	local files
	kd_warn=0
	files=$(own_kernel_files)
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086
	(cd "$clone" && scripts/kernel-doc -Wall -none $files) \
		> "$wd/kernel-doc.out" 2>&1
	kd_warn=$(grep -c -i 'warning\|error' "$wd/kernel-doc.out")
	sed 's/^/    kernel-doc: /' "$wd/kernel-doc.out"
}

check_sparse() {
	local f objs=()
	sp_warn=0
	for f in $(own_kernel_files); do
		[[ "$f" == *.c ]] || continue
		[ -f "$kout/${f%.c}.o" ] && objs+=("${f%.c}.o")
	done
	[ ${#objs[@]} -gt 0 ] || return 0
	flock "$build/.kernel.lock" "${kmake[@]}" C=2 "${objs[@]}" \
		> "$wd/sparse.out" 2>&1 || { sp_warn=1; cat "$wd/sparse.out"; return; }
	sp_warn=$(grep -c 'warning:\|error:' "$wd/sparse.out")
	grep 'warning:\|error:' "$wd/sparse.out" | sed 's/^/    sparse: /'
}

# BUILD_ONLY="GLOB ..." builds only the patches whose file names match
# one of the globs (the other checks run on every patch).
build_wanted() {
	local g

	[ -n "${BUILD_ONLY:-}" ] || return 0
	for g in $BUILD_ONLY; do
		# shellcheck disable=SC2053
		[[ "$1" == $g ]] && return 0
	done
	return 1
}

# ---- main ------------------------------------------------------------------

start=$(date +%s)
setup_clone
apply_series
new_files=$(series_new_files)
git -C "$clone" checkout -q "${commits[-1]}"
final_config
note "configuration: $(kconfig_fragments)"

summary=()
failed=0
for i in "${!commits[@]}"; do
	p=${patches[$i]}
	name=${p##*/}
	echo "=== $name"
	git -C "$clone" checkout -q "${commits[$i]}" || die "checkout failed"
	t0=$(date +%s)
	if [ "${SKIP_BUILD:-0}" = 1 ] || ! build_wanted "$name"; then
		bstat=skipped
	elif build_kernel; then
		bstat=ok
	else
		bstat=FAILED
	fi
	t1=$(date +%s)
	check_patch_style "$p"
	check_kernel_doc
	if [ $bstat = ok ]; then check_sparse; else sp_warn=-; fi
	result=ok
	if [ $bstat = FAILED ] || [ $cp_err != 0 ] || [ $cp_warn != 0 ] ||
	   [ "$kd_warn" != 0 ] || { [ "$sp_warn" != 0 ] && [ "$sp_warn" != - ]; }; then
		result=FAILED
		failed=$((failed + 1))
	fi
	line=$(printf '%-58.58s build %-6s %4ss  checkpatch E%s W%s C%s (excepted %s)  kernel-doc %s  sparse %s  %s' \
		"$name" "$bstat" $((t1 - t0)) "$cp_err" "$cp_warn" "$cp_check" \
		"$cp_exc" "$kd_warn" "$sp_warn" "$result")
	echo "$line"
	summary+=("$line")
done

echo
# Without keyword matches: they add lists (netdev for a word in a
# comment, the clang list for "llvm" in the library's tests) that the
# series does not concern.
echo "=== get_maintainer.pl for the series"
(cd "$clone" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
	--nokeywords "${patches[@]}")

echo
echo "=== summary (base $(git -C "$clone" rev-parse --short base), $(( $(date +%s) - start ))s)"
printf '%s\n' "${summary[@]}"
echo "$(( ${#patches[@]} - failed )) patches passed, $failed failed"
[ $failed = 0 ]
