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
set -euo pipefail
. "$(dirname "$0")/lib.sh"

steps_file=$top/mk/series/steps
out=${SERIES_OUT:-$build/series}
work=$build/series-work.git
ident_name=${SERIES_NAME:-SFrame JIT developers}
ident_email=${SERIES_EMAIL:-sframe-jit@sframe-jit.invalid}

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
	for name in "${names[@]}"; do
		# Drop the blank lines that end the message.
		sed -i -e ':a' -e '/^\n*$/{$d;N;ba' -e '}' "${msg_of[$name]}"
		[ -s "${msg_of[$name]}" ] || die "$steps_file: step '$name' has no subject"
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

# The blob of file $2 at step $1 (partial or final), written to $work.
step_blob() {
	local step=$1 f=$2 partial=$3 cut
	local src=$tmp/content

	if [ "$partial" = 0 ]; then
		git -C "$tree" rev-parse "$head:$f"
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
	done
	unset GIT_INDEX_FILE
	git --git-dir="$work" update-ref refs/heads/series "$parent"
	git --git-dir="$work" tag -f base "$base" >/dev/null
	[ "$prev_tree" = "$(git -C "$tree" rev-parse "$head^{tree}")" ] ||
		die "the series does not reproduce $tree (a bug in mk/series.sh or its steps)"
	note "$n commits on top of base reproduce $tree exactly"
}

# ---- the cover letter ----------------------------------------------------

# A README.md section whose heading speaks of measurements, if any.
readme_results() {
	awk '
	/^#+ / {
		if (on) exit
		if (tolower($0) ~ /measur|result|benchmark|performance/) on = 1
	}
	on { print }' "$top/README.md"
}

generated_results() {
	local f

	shopt -s nullglob
	for f in "$build"/bench/*.txt; do
		echo "--- build/bench/${f##*/} ---"
		cat "$f"
		echo
	done
	shopt -u nullglob
}

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
	local results gen

	grep -v '^#' "$top/mk/series/cover"
	echo
	echo "Measured results"
	echo "----------------"
	echo
	results=$(readme_results)
	if [ -n "$results" ]; then
		echo "From README.md:"
		echo
		echo "$results"
	else
		echo "README.md and Documentation/ record no measured numbers yet."
	fi
	echo
	gen=$(generated_results)
	if [ -n "$gen" ]; then
		echo "Generated by mk/series.sh from the last 'make bench' (build/bench/*.txt,"
		echo "each table measured side by side in one run, medians of several runs):"
		echo
		echo "$gen"
	else
		echo "(No build/bench/*.txt: run 'make bench' before 'make series' to include"
		echo "the benchmark tables here.)"
	fi
	echo
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
		--base="$base" --no-signature -o "$out" base..series
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

# The manual page as the man-pages project takes it: a patch adding
# man/man2/sframe_register.2, in build/series/man-pages/.
write_manpage() {
	local repo=$tmp/man-pages page=Documentation/userspace-api/sframe_register.2

	rm -rf "$repo"
	git init -q "$repo"
	mkdir -p "$repo/man/man2"
	git -C "$tree" show "$head:$page" > "$repo/man/man2/sframe_register.2"
	git -C "$repo" add man/man2/sframe_register.2
	GIT_AUTHOR_NAME=$ident_name GIT_AUTHOR_EMAIL=$ident_email \
	GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email \
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git -C "$repo" commit -q -s -m "sframe_register.2: New page" \
		-m "Describe sframe_register(2), proposed for Linux by the series
of the same name: JIT registries of SFrame unwind rows and the
registration of ELF .sframe sections, each operation's checks and
errors, and the lifetime of registrations."
	git -C "$repo" format-patch -q --root -o "$out/man-pages" HEAD
}

parse_steps
claim_files
build_commits
write_series
write_manpage
note "$(find "$out" -name '*.patch' | wc -l) files in $out:"
(cd "$out" && ls -1 ./*.patch | sed 's|^\./|    |')
