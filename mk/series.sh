#!/bin/bash
# make series: the patch series as maintainers receive it.
#
# From the assembled tree (build/linux, "make tree"), build one commit
# per step of mk/series/steps on top of the base (tag "base"), in a
# scratch repository that borrows build/linux's objects, check that the
# last commit reproduces the assembled tree exactly, and write the
# series with git format-patch into build/series/, with a cover letter
# made of mk/series/cover and sections generated here.
#
# The commits are built with git plumbing (no checkout): each step starts
# from the previous step's tree and sets the content of the files it
# claims.  Dates are those of the repository's last commit, so the same
# repository state gives the same series.
#
# The patches are authored and signed off by the git identity of whoever
# runs this (GIT_AUTHOR_NAME/GIT_AUTHOR_EMAIL, else user.name and
# user.email, as git commit takes them); without one it refuses.  The
# MAINTAINERS entry of patches/maintainers-sframe.patch names the same
# identity: its maintainer line is a placeholder that the series
# replaces.  DRAFT=1 (as "make series-check" sets) writes a draft: every
# subject says "[DRAFT PATCH ...]", and without a git identity it signs
# off with a placeholder that no list accepts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

steps_file=$top/mk/series/steps
out=${SERIES_OUT:-$build/series}
work=$build/series-work.git

# The maintainer line of patches/maintainers-sframe.patch, which the
# series replaces with the sender's identity.
maintainers_placeholder='Series Author <series-author@sframe-jit.invalid>'
# Names of mainline's SFrame series (MAINTAINERS "USERSPACE STACK
# UNWINDING"), which our entry must not claim.
upstream_patterns="kernel/unwind
kernel/unwind/
kernel/unwind/*
kernel/unwind/sframe.c
kernel/unwind/sframe.h
kernel/unwind/sframe_debug.h
include/linux/sframe.h"

# ---- who sends the series ----------------------------------------------

case "${DRAFT:-0}" in
0|no|"") draft=0 ;;
*) draft=1 ;;
esac

set_identity() {
	local ident

	if ident=$(git -C "$top" -c user.useConfigOnly=true var GIT_AUTHOR_IDENT 2>/dev/null); then
		ident=${ident% * *}		# drop the time stamp and zone
		ident_name=${ident% <*}
		ident_email=${ident##* <}
		ident_email=${ident_email%>}
	elif [ $draft = 1 ]; then
		ident_name="SFrame JIT draft"
		ident_email=draft@sframe-jit.invalid
		note "DRAFT=1 and no git identity: a placeholder signs off"
	else
		die "make series signs every patch off with your git identity, and git has none.  Set it with
    git config user.name 'Your Name'
    git config user.email you@example.org
or write a draft that is not to be mailed: make series DRAFT=1"
	fi
	if [ -z "$ident_name" ] || [[ "$ident_email" != ?*@?* ]]; then
		die "git identity '$ident_name <$ident_email>' has no name or no address"
	fi
	if [ $draft = 0 ]; then
		case "${ident_email,,}" in
		*.invalid|*.example|*.test|*.localhost|*@example.com|*@example.org|*@example.net)
			note "warning: $ident_email is under a reserved domain; mail from it will not reach a list" ;;
		esac
	fi
	if [ $draft = 1 ]; then
		subject_prefix="DRAFT PATCH"
	else
		subject_prefix="PATCH"
	fi
	if [ $draft = 1 ]; then
		note "signing off as $ident_name <$ident_email> (draft)"
	else
		note "signing off as $ident_name <$ident_email>"
	fi
}

[ -d "$tree/.git" ] || die "no assembled tree at $tree; run 'make tree'"
git -C "$tree" rev-parse -q --verify base >/dev/null ||
	die "$tree has no tag 'base'"
head=$(git -C "$tree" rev-parse HEAD)
base=$(git -C "$tree" rev-parse base)
[ "$head" != "$base" ] || die "$tree has no changes on top of its base"

# ---- the steps -------------------------------------------------------

names=()			# step names, in order
declare -A msg_of=()		# step -> commit message file
declare -A lines_of=()		# step -> its "files:" lines, newline-separated
declare -A cuts_of=()		# "step path" -> its cut file (START<tab>UNTIL lines)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

parse_steps() {
	local line name="" in_files=0 last="" cut

	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in
		"#"*) [ -z "$name" ] && continue ;;
		esac
		if [[ "$line" =~ ^===\ ([A-Za-z0-9_-]+)$ ]]; then
			name=${BASH_REMATCH[1]}
			[ -z "${msg_of[$name]:-}" ] ||
				die "$steps_file: step '$name' twice"
			names+=("$name")
			msg_of[$name]=$tmp/msg.$name
			: > "${msg_of[$name]}"
			lines_of[$name]=""
			in_files=0
			continue
		fi
		[ -n "$name" ] || continue
		if [ "$line" = "files:" ]; then
			in_files=1
			last=""
		elif [ $in_files = 1 ] &&
		     [[ "$line" =~ ^[[:space:]]+(from|until)\ (.*)$ ]]; then
			# A cut of the partial file on the line above.
			[[ "$last" == *" partial" ]] ||
				die "$steps_file: step $name: '${line#"${line%%[![:space:]]*}"}' is not under a partial file"
			cut=${cuts_of["$name ${last% partial}"]:-}
			if [ -z "$cut" ]; then
				cut=$tmp/cut.$name.${#cuts_of[@]}
				: > "$cut"
				cuts_of["$name ${last% partial}"]=$cut
			fi
			if [ "${BASH_REMATCH[1]}" = from ]; then
				printf '%s' "${BASH_REMATCH[2]}" >> "$cut"
			else
				printf '\t%s\n' "${BASH_REMATCH[2]}" >> "$cut"
			fi
		elif [ $in_files = 1 ]; then
			if [ -n "$line" ]; then
				lines_of[$name]+="$line"$'\n'
				last=$line
			fi
		else
			printf '%s\n' "$line" >> "${msg_of[$name]}"
		fi
	done < "$steps_file"
	[ ${#names[@]} -gt 0 ] || die "$steps_file defines no step"
	check_outside_last
	for name in "${names[@]}"; do
		# Drop the blank lines that end the message.
		sed -i -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' "${msg_of[$name]}"
		[ -s "${msg_of[$name]}" ] || die "$steps_file: step '$name' has no subject"
	done
}

# Steps named outside_* are userspace that the kernel trees do not take:
# they are built into the chain, so that it still reproduces the tree,
# but written apart from the mailed series.  They come last.
check_outside_last() {
	local name seen=""

	for name in "${names[@]}"; do
		if [[ "$name" == outside_* ]]; then
			seen=$name
		elif [ -n "$seen" ]; then
			die "$steps_file: step $name comes after $seen; outside_* steps come last"
		fi
	done
}

# ---- which step changes which file -----------------------------------

declare -A claims=()	# file -> "step[:partial] step..." in step order

claim_files() {
	local f name entry path flag matched exact pat

	changed=$(git -C "$tree" diff --name-only --no-renames base "$head")
	deleted=$(git -C "$tree" diff --name-only --no-renames \
		--diff-filter=D base "$head")
	[ -z "$deleted" ] || die "the tree deletes base files, which mk/series.sh does not stage: $deleted"
	# Exact paths first.
	for name in "${names[@]}"; do
		while read -r path flag; do
			[ -n "$path" ] || continue
			[[ "$path" == *"*"* ]] && continue
			[ -z "$flag" ] || [ "$flag" = partial ] ||
				die "$steps_file: step $name: unknown word '$flag' after $path"
			grep -qxF -- "$path" <<< "$changed" ||
				die "$steps_file: step $name names $path, which the tree does not change"
			entry=$name
			[ "$flag" = partial ] && entry+=":partial"
			claims[$path]="${claims[$path]:-} $entry"
		done <<< "${lines_of[$name]}"
	done
	# Then patterns, for files no step names exactly.
	for f in $changed; do
		[ -n "${claims[$f]:-}" ] && continue
		matched=""
		for name in "${names[@]}"; do
			while read -r pat flag; do
				[[ "$pat" == *"*"* ]] || continue
				# shellcheck disable=SC2053
				if [[ "$f" == $pat ]]; then
					matched+=" $name"
					break
				fi
			done <<< "${lines_of[$name]}"
		done
		[ -n "$matched" ] ||
			die "no step of $steps_file claims $f; add it to the step it belongs to"
		[ "$(wc -w <<< "$matched")" = 1 ] ||
			die "$f matches the patterns of several steps:$matched; name it exactly in one"
		claims[$f]=$matched
	done
	# A file's last step gives it its final content.
	for f in "${!claims[@]}"; do
		exact=${claims[$f]##* }
		[[ "$exact" != *:partial ]] ||
			die "$f: its last step (${exact%:partial}) is marked partial; the last step must give the final content"
	done
}

# ---- content of a file at a step ---------------------------------------

# Delete, for each "START<tab>UNTIL" line of a .cut file, the lines from
# the first one matching START (with the comment opener just above it,
# if any) up to, not including, the next one matching UNTIL ("EOF": to
# the end).  Every START and UNTIL must be found.  Blank lines left at
# the end of the file are dropped.
apply_cut() {
	awk -v cutfile="$1" '
	BEGIN {
		n = 0
		while ((getline l < cutfile) > 0) {
			if (l ~ /^#/ || l == "")
				continue
			split(l, parts, "\t")
			if (parts[2] == "") {
				print cutfile ": no tab in: " l > "/dev/stderr"
				bad = 1
				exit
			}
			start[n] = parts[1]; until[n] = parts[2]; n++
		}
		if (!n) {
			print cutfile ": no START<tab>UNTIL line" > "/dev/stderr"
			bad = 1
			exit
		}
	}
	{ line[NR] = $0 }
	END {
		if (bad)
			exit 1
		for (k = 0; k < n; k++) {
			s = 0
			for (i = 1; i <= NR; i++)
				if (!(i in gone) && line[i] ~ start[k]) { s = i; break }
			if (!s) {
				print cutfile ": START not found: " start[k] > "/dev/stderr"
				exit 1
			}
			e = NR + 1
			if (until[k] != "EOF") {
				e = 0
				for (i = s + 1; i <= NR; i++)
					if (!(i in gone) && line[i] ~ until[k]) { e = i; break }
				if (!e) {
					print cutfile ": UNTIL not found: " until[k] > "/dev/stderr"
					exit 1
				}
			}
			if (s > 1 && (line[s - 1] == "/*" || line[s - 1] == "/**"))
				s--
			for (i = s; i < e; i++)
				gone[i] = 1
		}
		last = NR
		while (last > 0 && ((last in gone) || line[last] == ""))
			last--
		for (i = 1; i <= last; i++)
			if (!(i in gone))
				print line[i]
	}' /dev/stdin
}

# MAINTAINERS as the tree has it, into $tmp/maintainers; its maintainer
# placeholder must be there once.
tree_maintainers() {
	local n

	git -C "$tree" cat-file blob "$head:MAINTAINERS" > "$tmp/maintainers"
	n=$(grep -cF -- "$maintainers_placeholder" "$tmp/maintainers" || true)
	[ "$n" = 1 ] ||
		die "MAINTAINERS in $tree has the maintainer placeholder '$maintainers_placeholder' $n times, not once (patches/maintainers-sframe.patch; run 'make tree')"
}

# MAINTAINERS with the placeholder replaced by the sender's identity,
# written to $work.
maintainers_blob() {
	tree_maintainers
	FROM=$maintainers_placeholder TO="$ident_name <$ident_email>" awk '
	{
		i = index($0, ENVIRON["FROM"])
		if (i)
			$0 = substr($0, 1, i - 1) ENVIRON["TO"] \
			     substr($0, i + length(ENVIRON["FROM"]))
		print
	}' "$tmp/maintainers" > "$tmp/maintainers.new"
	git --git-dir="$work" hash-object -w "$tmp/maintainers.new"
}

# Does F: pattern $1 cover file $2?  "dir/" covers all below it.
f_covers() {
	# shellcheck disable=SC2053
	[[ "$1" == */ && "$2" == "$1"* ]] || [[ "$2" == $1 ]]
}

# The F: patterns of our MAINTAINERS entry, the one with the placeholder:
# each must match a file of the tree, and none may be one of mainline's
# SFrame series.  Files the series adds that no pattern covers are listed.
check_maintainers_entry() {
	local pats=() pat f covered files

	tree_maintainers
	mapfile -t pats < <(awk -v ph="$maintainers_placeholder" '
		/^$/ { if (ours) exit; next }
		index($0, ph) { ours = 1 }
		ours && /^F:/ { sub(/^F:[ \t]*/, ""); print }' "$tmp/maintainers")
	[ ${#pats[@]} -gt 0 ] ||
		die "the MAINTAINERS entry with the maintainer placeholder has no F: line"
	files=$(git -C "$tree" ls-tree -r --name-only "$head")
	for pat in "${pats[@]}"; do
		! grep -qxF -- "$pat" <<< "$upstream_patterns" ||
			die "MAINTAINERS: our entry claims '$pat', a name of mainline's SFrame series"
		covered=0
		while read -r f; do
			if f_covers "$pat" "$f"; then
				covered=1
				break
			fi
		done <<< "$files"
		[ $covered = 1 ] ||
			die "MAINTAINERS: our entry's 'F: $pat' matches no file of $tree (patches/maintainers-sframe.patch)"
	done
	while read -r f; do
		[ -n "$f" ] || continue
		covered=0
		for pat in "${pats[@]}"; do
			if f_covers "$pat" "$f"; then
				covered=1
				break
			fi
		done
		[ $covered = 1 ] || note "MAINTAINERS: no F: line of our entry covers $f"
	done < <(git -C "$tree" diff --name-only --diff-filter=A base "$head")
}

# The series adds no file that mainline's SFrame series adds: on top of
# it, ours must apply beside theirs.
check_upstream_files() {
	local f

	while read -r f; do
		[ -n "$f" ] || continue
		! grep -qxF -- "$f" <<< "$upstream_patterns" ||
			die "the series adds $f, a file of mainline's SFrame series"
	done < <(git -C "$tree" diff --name-only --diff-filter=A base "$head")
}

# The blob of file $2 at step $1 (partial or final), written to $work.
step_blob() {
	local step=$1 f=$2 partial=$3 cut
	local src=$tmp/content

	if [ "$partial" = 0 ]; then
		if [ "$f" = MAINTAINERS ]; then
			maintainers_blob
		else
			git -C "$tree" rev-parse "$head:$f"
		fi
		return
	fi
	cut=${cuts_of["$step $f"]:-}
	[ -n "$cut" ] ||
		die "$f is partial at step $step but $steps_file gives it no from/until cut"
	git -C "$tree" cat-file blob "$head:$f" > "$src"
	apply_cut "$cut" < "$src" > "$src.cut" ||
		die "the cuts of $f at step $step in $steps_file no longer fit it; update them to the file's current content"
	git --git-dir="$work" hash-object -w "$src.cut"
}

file_mode() {
	git -C "$tree" ls-tree "$head" -- "$1" | awk '{ print $1 }'
}

# ---- the commits -------------------------------------------------------

build_commits() {
	local name f entry partial blob parent tree_id prev_tree commit
	local n=0

	rm -rf "$work"
	git init -q --bare "$work"
	echo "$tree/.git/objects" > "$work/objects/info/alternates"
	export GIT_INDEX_FILE=$tmp/index
	git --git-dir="$work" read-tree "$base"
	parent=$base
	prev_tree=$(git --git-dir="$work" rev-parse "$base^{tree}")
	date=$(git -C "$top" log -1 --format=%cI 2>/dev/null || date -R)
	for name in "${names[@]}"; do
		for f in "${!claims[@]}"; do
			for entry in ${claims[$f]}; do
				[ "${entry%:partial}" = "$name" ] || continue
				partial=0
				[[ "$entry" == *:partial ]] && partial=1
				blob=$(step_blob "$name" "$f" "$partial")
				git --git-dir="$work" update-index --add \
					--cacheinfo "$(file_mode "$f"),$blob,$f"
			done
		done
		tree_id=$(git --git-dir="$work" write-tree)
		if [ "$tree_id" = "$prev_tree" ]; then
			note "step $name changes nothing; skipped"
			continue
		fi
		{
			cat "${msg_of[$name]}"
			echo
			echo "Signed-off-by: $ident_name <$ident_email>"
		} > "$tmp/commit-msg"
		commit=$(GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
			GIT_COMMITTER_NAME=$ident_name \
			GIT_COMMITTER_EMAIL=$ident_email \
			GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
			git --git-dir="$work" commit-tree "$tree_id" -p "$parent" \
			-F "$tmp/commit-msg")
		parent=$commit
		prev_tree=$tree_id
		n=$((n + 1))
		[[ "$name" == outside_* ]] ||
			git --git-dir="$work" update-ref refs/heads/mailed "$commit"
	done
	unset GIT_INDEX_FILE
	git --git-dir="$work" update-ref refs/heads/series "$parent"
	git --git-dir="$work" tag -f base "$base" >/dev/null
	[ "$prev_tree" = "$(expected_tree)" ] ||
		die "the series does not reproduce $tree (a bug in mk/series.sh or its steps)"
	note "$n commits on top of base reproduce $tree exactly, but for the sender in MAINTAINERS"
}

# The tree the series must end with: the assembled tree's, with the
# sender's identity in MAINTAINERS.
expected_tree() {
	local index=$tmp/index.expected

	GIT_INDEX_FILE=$index git --git-dir="$work" read-tree "$head"
	if [ -n "${claims[MAINTAINERS]:-}" ]; then
		GIT_INDEX_FILE=$index git --git-dir="$work" update-index \
			--cacheinfo "$(file_mode MAINTAINERS),$(maintainers_blob),MAINTAINERS"
	fi
	GIT_INDEX_FILE=$index git --git-dir="$work" write-tree
}

# ---- the cover letter ----------------------------------------------------

# checkpatch exceptions, with the justification, from mk/series/checkpatch-exceptions.
exceptions_text() {
	local f=$top/mk/series/checkpatch-exceptions

	[ -f "$f" ] || return 0
	awk '/^#/ { next } /^[A-Z_]+[ \t]/ {
		t = $1; g = ($2 == "-") ? "" : " in " $2
		sub(/^[A-Z_]+[ \t]+[^ \t]+[ \t]+/, "")
		printf "- %s%s: %s\n", t, g, $0 }' "$f" | fmt -t -w 72
}

cover_body() {
	grep -v '^#' "$top/mk/series/cover"
	echo
	if [ $draft = 1 ]; then
		echo "DRAFT: written by 'make series DRAFT=1', not to be mailed or merged."
		echo
	fi
	echo "checkpatch --strict exceptions"
	echo "------------------------------"
	echo
	local ex
	ex=$(exceptions_text)
	if [ -n "$ex" ]; then
		echo "'make series-check' runs scripts/checkpatch.pl --strict on every patch"
		echo "and accepts only these reports, each for the reason given:"
		echo
		echo "$ex"
	else
		echo "None: every patch passes scripts/checkpatch.pl --strict cleanly."
	fi
	echo
	echo "Base"
	echo "----"
	echo
	{
		echo "Linux $(kernel_version) as packaged by Debian: $base_pkg"
		echo "$(base_version) ($tarball), unpacked untouched as commit"
		echo "$base (the base-commit below)."
		echo "Generated by mk/series.sh from the project at"
		echo "$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)."
	} | fmt -w 72
}

kernel_version() {
	git -C "$tree" show base:Makefile | awk '
	/^VERSION =/ { v = $3 } /^PATCHLEVEL =/ { p = $3 }
	/^SUBLEVEL =/ { s = $3 } /^EXTRAVERSION =/ { e = $3 }
	END { printf "%s.%s.%s%s", v, p, s, e }'
}

write_series() {
	local cover subject

	rm -rf "$out"
	mkdir -p "$out"
	GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
	GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git --git-dir="$work" format-patch -q --cover-letter \
		--subject-prefix="$subject_prefix" \
		--base="$base" --no-signature -o "$out" base..mailed
	write_outside
	cover=$(ls "$out"/0000-cover-letter.patch)
	# One process: sed quitting early would end a pipe with SIGPIPE,
	# which pipefail turns into a failure.
	subject=$(grep -m 1 -v '^#' "$top/mk/series/cover")
	cover_body | sed '1,/^$/d' > "$tmp/blurb"
	awk -v subject="$subject" -v blurb="$tmp/blurb" '
	/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subject) }
	/^\*\*\* BLURB HERE \*\*\*$/ {
		while ((getline l < blurb) > 0)
			print l
		next
	}
	{ print }' "$cover" > "$tmp/cover"
	mv "$tmp/cover" "$cover"
}

# The outside_* steps, for reference and for their own trees (the perf
# tool's patch is for perf-tools-next once the kernel side is merged),
# in $out/outside/, never among the mailed patches.
write_outside() {
	[ "$(git --git-dir="$work" rev-parse mailed)" != \
	  "$(git --git-dir="$work" rev-parse series)" ] || return 0
	GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
	GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git --git-dir="$work" format-patch -q \
		--subject-prefix="$subject_prefix" \
		--no-signature -o "$out/outside" mailed..series
}

# The manual pages, in man/ at the top of this repository, as the
# man-pages project takes them: a series against man-pages with one
# commit per page family (a page and its link pages), in
# build/series/man-pages/.  The pages are listed here, not globbed, so
# that nothing but them goes out.
man_families=(
	"man/man2/sframe_jit_open.2"
	"man/man2const/SFRAME_JIT_REPLACE.2const"
	"man/man2const/SFRAME_JIT_COPY.2const"
	"man/man2/sframe_register.2 man/man2/sframe_unregister.2"
	"man/man2/process_sframe_register.2 man/man2/process_sframe_unregister.2"
)

# "sframe_jit_open(2)" for man/man2/sframe_jit_open.2.
man_ref() {
	local name=${1##*/}

	echo "${name%.*}(${name##*.})"
}

# The subject of the commit adding pages $@, as man-pages writes them:
# "man/man2/a.2: Add page", "man/man2/{a,b}.2: Add pages".
man_subject() {
	local dir=${1%/*} ext=${1##*.} page stems=""

	if [ $# = 1 ]; then
		echo "$1: Add page"
		return
	fi
	for page in "$@"; do
		if [ "${page%/*}" != "$dir" ] || [ "${page##*.}" != "$ext" ]; then
			stems=""
			break
		fi
		page=${page##*/}
		stems+="${stems:+,}${page%.*}"
	done
	if [ -n "$stems" ]; then
		echo "$dir/{$stems}.$ext: Add pages"
	else
		echo "$(printf '%s, ' "$@" | sed 's/, $//'): Add pages"
	fi
}

# groff's warnings about page $1 (relative to man/), none if groff is
# missing.
man_warnings() {
	command -v groff >/dev/null || return 0
	(cd "$top/man" && groff -s -man -ww -z "$1" 2>&1)
}

write_manpages() {
	local repo=$tmp/man-pages family page pages=() subject refs=() what
	local warn cover
	local kernel_subject

	kernel_subject=$(grep -m 1 -v '^#' "$top/mk/series/cover")
	rm -rf "$repo"
	git init -q "$repo"
	export GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email
	export GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email
	export GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date
	git -C "$repo" commit -q --allow-empty -m "man-pages base"
	git -C "$repo" tag base
	for family in "${man_families[@]}"; do
		read -r -a pages <<< "$family"
		refs=()
		for page in "${pages[@]}"; do
			[ -f "$top/$page" ] || die "$page is missing"
			warn=$(man_warnings "${page#man/}")
			[ -z "$warn" ] || die "groff -man -ww warns about $page:
$warn"
			mkdir -p "$repo/$(dirname "$page")"
			cp "$top/$page" "$repo/$page"
			refs+=("$(man_ref "$page")")
		done
		git -C "$repo" add -- "${pages[@]}"
		subject=$(man_subject "${pages[@]}")
		what=$(printf '%s and ' "${refs[@]}")
		git -C "$repo" commit -q -s -m "$subject" -m "$(fmt -w 72 <<EOF
Document ${what% and }, proposed for Linux by the kernel series
"$kernel_subject" and not in mainline.  Its
Documentation/userspace-api/sframe.rst is the full description; the
page links to it.
EOF
)"
	done
	git -C "$repo" format-patch -q --cover-letter \
		--subject-prefix="$subject_prefix" --no-signature \
		-o "$out/man-pages" base..HEAD
	cover=$out/man-pages/0000-cover-letter.patch
	fmt -w 72 > "$tmp/man-blurb" <<EOF
New pages for the system calls sframe_jit_open(2), sframe_register(2)
and sframe_unregister(2), and for the sframe_jit_open(2) flags
SFRAME_JIT_REPLACE and SFRAME_JIT_COPY, proposed for Linux by the
kernel series "$kernel_subject".  The calls are not in mainline: the
pages say so in HISTORY, and the system call numbers are provisional.
EOF
	awk -v blurb="$tmp/man-blurb" '
	/\*\*\* SUBJECT HERE \*\*\*/ {
		sub(/\*\*\* SUBJECT HERE \*\*\*/, "Add pages for sframe_jit_open(2) and sframe_register(2)")
	}
	/^\*\*\* BLURB HERE \*\*\*$/ {
		while ((getline l < blurb) > 0)
			print l
		next
	}
	{ print }' "$cover" > "$tmp/man-cover"
	mv "$tmp/man-cover" "$cover"
	unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME \
		GIT_COMMITTER_EMAIL GIT_AUTHOR_DATE GIT_COMMITTER_DATE
}

set_identity
parse_steps
claim_files
check_maintainers_entry
check_upstream_files
build_commits
write_series
write_manpages
note "$(find "$out" -maxdepth 1 -name '*.patch' | wc -l) files in $out:"
(cd "$out" && ls -1 ./*.patch | sed 's|^\./|    |')
if [ -d "$out/outside" ]; then
	note "not mailed, in $out/outside:"
	(cd "$out/outside" && ls -1 ./*.patch | sed 's|^\./|    |')
fi
