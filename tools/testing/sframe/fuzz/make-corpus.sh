#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the seed corpus of the libFuzzer targets, corpus/NAME for
# each target NAME:
#  - fuzz_elf: the .sframe sections GNU as and ld write for small
#    programs built here with -Wa,--gsframe (version 1 with binutils
#    2.40, with PCMASK descriptors for the PLT), and the hand-built
#    version 1 to 3 sections of the shared test cases;
#  - fuzz_jit: writer programs and raw registry images;
#  - fuzz_cjit: compact registry images;
#  - fuzz_walk: stacks over JIT and ELF regions and frame records.
# gen_corpus.c writes the hand-built files.  The same toolchain gives the
# same bytes on every run; nothing depends on time, paths or randomness.
# It takes no arguments and runs from any directory.
set -euo pipefail
cd "$(dirname "$0")"
top=../../../..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

targets="fuzz_elf fuzz_jit fuzz_cjit fuzz_walk"
for t in $targets; do
	mkdir -p "$tmp/$t"
done

gcc -O2 -Wall -I.. -I"$top/kernel/unwind" -I"$top/include" \
	-o "$tmp/gen_corpus" gen_corpus.c
"$tmp/gen_corpus" "$tmp"

# A recursive function and a libc call (so a PLT) ...
cat > "$tmp/fib.c" <<'PROG'
#include <stdio.h>

static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	printf("%d\n", fib(argc + 20));
	return 0;
}
PROG

# ... and more functions, frames with and without a frame pointer.
cat > "$tmp/sort.c" <<'PROG'
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) static void fill(int *v, int n, int seed)
{
	for (int i = 0; i < n; i++)
		v[i] = (seed = seed * 1103515245 + 12345) >> 8;
}

__attribute__((noinline)) static int big_frame(int n)
{
	int v[512];

	fill(v, n < 512 ? n : 512, n);
	qsort(v, n < 512 ? n : 512, sizeof(v[0]), cmp);
	return v[0];
}

__attribute__((noinline)) static int vla(int n)
{
	int v[n + 1];

	memset(v, 0, sizeof(v));
	return big_frame(v[n] + n);
}

int main(int argc, char **argv)
{
	return vla(argc * 100) & 1;
}
PROG

extract() {		# SOURCE FLAGS NAME
	gcc $2 -Wa,--gsframe -o "$tmp/prog" "$tmp/$1"
	objcopy -O binary --only-section=.sframe "$tmp/prog" \
		"$tmp/fuzz_elf/$3"
	[ -s "$tmp/fuzz_elf/$3" ] || { echo "$3: no .sframe" >&2; exit 1; }
}
extract fib.c -O0 gas-fib-O0
extract fib.c -O2 gas-fib-O2
extract sort.c "-O2 -fno-omit-frame-pointer" gas-sort-fp
extract sort.c "-O2 -fomit-frame-pointer" gas-sort-nofp

for t in $targets; do
	rm -rf "corpus/$t"
	mkdir -p "corpus/$t"
	cp "$tmp/$t"/* "corpus/$t/"
	echo "corpus/$t: $(ls "corpus/$t" | wc -l) files, $(cat "corpus/$t"/* | wc -c) bytes"
done
