#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's SFrame walk against libdw, sample by sample, on stock
# Debian binaries built without frame pointers (mk/layers/66-libdw_compare
# runs it in the test kernel): a pure-Python loop (python3) and xz -9
# (liblzma), each under sframe-run with SFRAME_RUN_SYNC=1.
#
#  - libdw_compare records each with one event whose samples carry the
#    kernel's --call-graph=sframe chain and a copy of the user stack,
#    unwinds the copies with libdw and compares: where libdw's chain
#    reaches main, every frame must be the kernel's over at least
#    $min_compared samples: 0 mismatches, but for the frames of code
#    that sframe-run's conversion leaves to the kernel's frame-pointer
#    fallback (counted apart, at most a few percent);
#  - the same with the kernel walking frame pointers (libdw_compare
#    --fp) must show mismatches in most of them: the comparison sees a
#    wrong chain;
#  - the share of complete stacks (reaching main) for fp, dwarf and
#    sframe: fp and sframe from the kernel's chains above, dwarf from
#    libdw's and from perf record --call-graph=dwarf.
#
#   libdw_compare_vm.sh OUTPUT_DIR PERF [AGENT]
#
# OUTPUT_DIR is the library's build directory (sframe-run and
# test-bin/).  With AGENT, the path of sframe-agent, the SFrame checks
# are made again with the tables it gives from outside
# (sframe-agent -- CMD) in place of sframe-run's.  Ends with "N passed,
# N failed".
set -uo pipefail

out=$1
perf=$2
agent=${3:-}
run=$out/sframe-run
cmp=$out/test-bin/libdw_compare
tmp=${SCRATCH:-/tmp}/libdw-compare-vm
# Samples whose libdw chain is complete, compared frame by frame: at
# least this many per binary.  Under --fp, at least this share of them
# must differ.
min_compared=100
min_fp_mismatch=50
# The kernel's chain may stop short, or go astray, in code that
# sframe-run leaves to frame pointers (ld's .plt, _dl_runtime_resolve):
# at most a few percent of samples land there.
min_agree=95
. "$(dirname "$0")/tap.sh"

rm -rf "$tmp"
mkdir -p "$tmp"

# A fixed amount of work, not a time: the samples, task-clock counts of
# the command's CPU time, then do not depend on the machine's load.
# About 1.5 s under QEMU's emulation.
py='for _ in range(1000):
    sum([i * i for i in range(2000)])'
head -c 600000 /usr/lib/x86_64-linux-gnu/libc.so.6 > "$tmp/data"

# field LOG KEY: KEY's value on libdw_compare's result line in LOG.
field() {
	sed -n "s/^libdw_compare .* $2=\([0-9]*\).*/\1/p" "$1"
}

# compare LOG ARGS...: libdw_compare ARGS, its output in $tmp/LOG.log.
compare() {
	local name=$1

	shift
	SFRAME_RUN_SYNC=1 "$cmp" "$@" > "$tmp/$name.log" 2> "$tmp/$name.err"
	local rc=$?

	grep '^#' "$tmp/$name.log"
	[ -s "$tmp/$name.err" ] && sed 's/^/# stderr: /' "$tmp/$name.err"
	return $rc
}

# dwarf_share NAME EXE -- CMD...: "reached total" of perf record
# --call-graph=dwarf samples of CMD whose chain has a frame in EXE right
# below one in libc.so.6.
dwarf_share() {
	local name=$1 exe=$2

	shift 3
	SFRAME_RUN_SYNC=1 "$perf" record -q -N -B -e task-clock:u -c 1000000 \
		--call-graph=dwarf -o "$tmp/$name.data" -- "$@" \
		> "$tmp/$name.rec.log" 2>&1 &&
	"$perf" script -i "$tmp/$name.data" -F ip,dso \
		> "$tmp/$name.script" 2> "$tmp/$name.script.err" || return 1
	awk -v exe="$exe" '
	function dso(line) {
		if (!match(line, /\([^()]*\)$/))
			return ""
		return substr(line, RSTART + 1, RLENGTH - 2)
	}
	BEGIN { RS = ""; FS = "\n" }
	{
		n++
		for (i = 2; i <= NF; i++)
			if (dso($i) ~ /\/libc\.so\.6$/ && dso($(i - 1)) ~ exe) {
				r++
				break
			}
	}
	END { printf "%d %d\n", r, n }' "$tmp/$name.script"
}

pct() {
	echo $(($2 ? 100 * $1 / $2 : 0))
}

# sframe_checks NAME WHAT FRONT-NAME FRONT...: the SFrame chain of
# ${cmd[@]} run under FRONT... against libdw's.  Sets n, c and k.
sframe_checks() {
	local name=$1 what=$2 front=$3 a u m

	shift 3
	compare $name-sframe "${name%-agent}" -- "$@" "${cmd[@]}"
	result $? "$what: libdw_compare ran under $front"
	n=$(field "$tmp/$name-sframe.log" samples)
	c=$(field "$tmp/$name-sframe.log" libdw_complete)
	a=$(field "$tmp/$name-sframe.log" agree)
	u=$(field "$tmp/$name-sframe.log" uncovered)
	m=$(field "$tmp/$name-sframe.log" mismatch)
	k=$(field "$tmp/$name-sframe.log" kernel_complete)
	[ "${c:-0}" -ge $min_compared ]
	result $? "$what under $front: at least $min_compared samples with a complete libdw stack (${c:-0} of ${n:-0})"
	[ -n "$m" ] && [ "$m" = 0 ] && [ $((a + u)) = "$c" ]
	result $? "$what under $front: the kernel's SFrame chain agrees with libdw's frame by frame wherever the tables cover the frames (${m:-?} mismatches in $c)"
	[ -n "$u" ] && [ "$(pct "$a" "$c")" -ge $min_agree ]
	result $? "$what under $front: the whole chains agree in at least $min_agree% ($a of $c; ${u:-?} part in code left to frame pointers)"
}

for w in py xz; do
	if [ $w = py ]; then
		cmd=(/usr/bin/python3 -c "$py")
		exe='/python3[.0-9]*$'
		what=python3
	else
		cmd=(xz -T1 -9 -k -f "$tmp/data")
		exe='/xz$'
		what=xz
	fi

	sframe_checks $w "$what" sframe-run "$run"

	compare $w-fp --fp $w -- "$run" "${cmd[@]}"
	result $? "$what: libdw_compare --fp ran under sframe-run"
	fc=$(field "$tmp/$w-fp.log" libdw_complete)
	fm=$(field "$tmp/$w-fp.log" mismatch)
	fk=$(field "$tmp/$w-fp.log" kernel_complete)
	fn=$(field "$tmp/$w-fp.log" samples)
	[ "${fc:-0}" -ge $min_compared ] &&
		[ "$(pct "${fm:-0}" "$fc")" -ge $min_fp_mismatch ]
	result $? "$what: the frame-pointer chain disagrees with libdw's in at least $min_fp_mismatch% (${fm:-0} of ${fc:-0})"

	read -r pr pt <<< "$(dwarf_share $w-dwarf "$exe" -- "$run" "${cmd[@]}")"
	[ "${pt:-0}" -gt 0 ]
	result $? "$what: perf record --call-graph=dwarf under sframe-run"
	echo "# $what: complete stacks: fp $(pct "${fk:-0}" "${fn:-0}")% (${fk:-0}/${fn:-0})," \
		"sframe $(pct "${k:-0}" "${n:-0}")% (${k:-0}/${n:-0})," \
		"libdw $(pct "${c:-0}" "${n:-0}")% (${c:-0}/${n:-0})," \
		"perf dwarf $(pct "${pr:-0}" "${pt:-0}")% (${pr:-0}/${pt:-0})"
	if [ -n "$agent" ]; then
		sframe_checks $w-agent "$what" sframe-agent \
			"$agent" --cache-dir="$tmp/cache" --
		echo "# $what under sframe-agent: complete stacks: sframe $(pct "${k:-0}" "${n:-0}")% (${k:-0}/${n:-0}), libdw $(pct "${c:-0}" "${n:-0}")% (${c:-0}/${n:-0})"
	fi
done

summary
