#!/bin/bash
# make fuzz: run each libFuzzer target of tools/testing/sframe/fuzz for
# FUZZ_TIME seconds (default 300), one after the other, from its seed
# corpus and the corpus earlier runs grew (build/fuzz/corpus/NAME), then
# print per target the executions, executions per second and libFuzzer's
# coverage counters (cov: edges, ft: features, of the target and the
# code under test together), and the line and branch coverage of
# kernel/unwind's decoders and sframe_user.c that the target's corpus
# reaches, measured by an uninstrumented-for-sanitizers coverage build.
# A crash leaves its input in build/fuzz/artifacts/ and fails the run.
#
#   make fuzz [FUZZ_TIME=seconds] [FUZZ_TARGETS="fuzz_elf ..."]
set -uo pipefail
. "$(dirname "$0")/lib.sh"

time=${FUZZ_TIME:-300}
targets=${FUZZ_TARGETS:-fuzz_elf fuzz_jit fuzz_cjit fuzz_walk}
src=$top/tools/testing/sframe/fuzz
out=$build/fuzz
unwind=$top/kernel/unwind
[[ "$time" =~ ^[0-9]+$ ]] && [ "$time" -gt 0 ] ||
	die "FUZZ_TIME must be a number of seconds, not '$time'"

mkdir -p "$out/artifacts" "$out/cov"
nice make -s -C "$src" OUTPUT="$out/" default cov >/dev/null ||
	die "building the fuzz targets failed"

# "stat::NAME: value" of libFuzzer's final statistics.
stat() {
	sed -n "s/^stat::$1: *//p" "$2" | tail -n 1
}

# A field ("cov:", "ft:", "corp:") of libFuzzer's last status line.
status_field() {
	grep -E '^#[0-9]+' "$2" | tail -n 1 |
		sed -n "s/.* $1 \([^ ]*\).*/\1/p"
}

# "lines% branches%" of a source file in an llvm-cov report.
# The decoders' coverage together (PREFIX.dec.txt, its TOTAL row) and
# the walker's (PREFIX.txt), from llvm-cov report's arguments.
cov_reports() {
	local prefix=$1

	shift
	llvm-cov report "$@" "$unwind/sframe_row.c" "$unwind/sframe_jit_read.c" \
		"$unwind/sframe_sec.c" "$unwind/sframe_table.c" \
		>"$prefix.dec.txt" 2>/dev/null &&
		llvm-cov report "$@" "$unwind/sframe_user.c" \
			>"$prefix.txt" 2>/dev/null
}

cov_of() {
	awk -v f="$1" '$1 ~ f"$" { print $10, $13 }' "$2"
}

fail=0
rows=()
for t in $targets; do
	[ -x "$out/$t" ] || die "no fuzz target $t"
	work=$out/corpus/$t
	log=$out/$t.log
	mkdir -p "$work"
	echo "fuzz: $t for ${time}s (log: $log)"
	nice "$out/$t" -max_total_time="$time" -print_final_stats=1 \
		-timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/artifacts/$t-" \
		"$work" "$src/corpus/$t" >"$log" 2>&1
	rc=$?
	result=ok
	if [ $rc != 0 ]; then
		result="CRASH, see $log"
		fail=1
		grep -E 'invariant broken|^  [^ #]|ERROR:|SUMMARY|artifact' "$log" | head -n 8
	fi

	# Source coverage of the decoder and walker by the whole corpus.
	rm -f "$out/cov/$t".prof*
	LLVM_PROFILE_FILE="$out/cov/$t.profraw" "$out/cov_$t" -runs=0 \
		"$work" "$src/corpus/$t" >/dev/null 2>&1
	llvm-profdata merge -o "$out/cov/$t.profdata" "$out/cov/$t.profraw" &&
		cov_reports "$out/cov/$t" "$out/cov_$t" \
			-instr-profile="$out/cov/$t.profdata"
	dec=$(cov_of TOTAL "$out/cov/$t.dec.txt")
	walker=$(cov_of 'unwind/sframe_user.c' "$out/cov/$t.txt")

	rows+=("$(printf '%-10s %12s %9s %6s %7s %7s  %-15s %-15s %s' "$t" \
		"$(stat number_of_executed_units "$log")" \
		"$(stat average_exec_per_sec "$log")" \
		"$(status_field cov: "$log")" "$(status_field ft: "$log")" \
		"$(status_field corp: "$log" | cut -d/ -f1)" \
		"${dec:--}" "${walker:--}" "$result")")
done

# All the targets' corpora together: llvm-cov takes the first binary
# as an argument, the others as -object.
all=
objs=()
for t in $targets; do
	[ ${#objs[@]} = 0 ] && objs+=("$out/cov_$t") || objs+=(-object "$out/cov_$t")
done
llvm-profdata merge -o "$out/cov/all.profdata" "$out"/cov/fuzz_*.profdata &&
	cov_reports "$out/cov/all" "${objs[@]}" \
		-instr-profile="$out/cov/all.profdata" &&
	all=$(printf '%-10s %12s %9s %6s %7s %7s  %-15s %-15s' together '' '' \
		'' '' '' "$(cov_of TOTAL "$out/cov/all.dec.txt")" \
		"$(cov_of 'unwind/sframe_user.c' "$out/cov/all.txt")")

echo
echo "make fuzz FUZZ_TIME=$time ($(clang --version | head -n 1))"
printf '%-10s %12s %9s %6s %7s %7s  %-15s %-15s %s\n' target execs \
	execs/s cov ft corpus 'decoders l/b' 'sframe_user.c' result
for r in "${rows[@]}"; do
	echo "$r"
done
[ -z "$all" ] || echo "$all"
echo "(cov/ft: libFuzzer's edge and feature counters over the target and"
echo " the code under test; l/b: line and branch coverage of the file by"
echo " the target's corpus)"
exit $fail
