// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the hand-built part of the seed corpus (make-corpus.sh runs it):
 * the ELF sections of the shared test cases (kernel/unwind/
 * sframe_test_cases.h) for fuzz_elf; writer programs and raw registry
 * images for fuzz_jit; compact registry images for fuzz_cjit;
 * consistent stacks over JIT and ELF regions for fuzz_walk.  The formats
 * are those described at the top of each target.  Every byte is fixed:
 * the output is the same on every run.
 *
 *	gen_corpus DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_test_cases.h"

#define STACK_TOP	0x7ffd00000000UL
/* The window of fuzz_walk.c's stack words: MAX_WORDS there is 1024. */
#define STACK_WIN	(STACK_TOP - 1024 * 8 - 64)
#define WALK_TEXT(r)	(0x400000UL + (unsigned long)(r) * 0x100000UL)

static const char *outdir;

struct buf {
	u8 b[8192];
	size_t n;
};

static void put(struct buf *b, u64 v, unsigned int bytes)
{
	while (bytes--) {
		if (b->n < sizeof(b->b))
			b->b[b->n++] = v;
		v >>= 8;
	}
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	if (n > sizeof(b->b) - b->n)
		n = sizeof(b->b) - b->n;
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void emit(const char *target, const char *name, const void *p,
		 size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* ---- fuzz_elf ---- */

#define SEC(a)	{ #a, a, sizeof(a) }

static const struct {
	const char *name;
	const u8 *data;
	size_t size;
} sections[] = {
	SEC(sft_v1), SEC(sft_v2), SEC(sft_v2_pcrel), SEC(sft_v3),
	SEC(sft_v3_secrel), SEC(sft_v2_ra_rows), SEC(sft_v2_aux),
	SEC(sft_v2_one), SEC(sft_v2_unsorted3), SEC(sft_v2_unsorted4),
	SEC(sft_v2_three_words), SEC(sft_v1_no_words), SEC(sft_v3_one),
	SEC(sft_v3_wrap), SEC(sft_v3_flex2), SEC(sft_v3_flex4),
};

static void gen_elf(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sections); i++)
		emit("fuzz_elf", sections[i].name, sections[i].data,
		     sections[i].size);
}

/* ---- fuzz_jit ---- */

/* Operation bytes of a writer program, see run_program() in fuzz_jit.c. */
enum {
	J_APPEND, J_TOMB = 2, J_SEQ, J_COMPACT, J_REUSE, J_STRAY, J_FLUSH,
	J_LOOKUP,
};

/* A function of @nr rows (1 to 8) of the usual push/mov %rbp shape. */
static void j_append(struct buf *b, unsigned int nr, u8 bad, u8 gap,
		     u16 size)
{
	unsigned int k;

	put(b, J_APPEND, 1);
	put(b, nr - 1, 1);
	put(b, bad, 1);
	put(b, gap, 1);
	put(b, size - 1, 2);	/* size = 1 + value % 0x800 */
	for (k = 0; k < nr; k++) {
		put(b, k ? 0x02 : 0x00, 1);	/* SP-based; FP saved after 0 */
		put(b, k ? 2 : 1, 1);		/* CFA offset / 8 */
		put(b, 0xff, 1);		/* RA at CFA - 8 */
		put(b, 0xfe, 1);		/* FP at CFA - 16 */
		put(b, 2, 1);			/* next row 3 bytes on */
	}
}

static void j_lookup(struct buf *b, u8 sel, u16 off, u32 schedule)
{
	put(b, J_LOOKUP, 1);
	put(b, sel, 1);
	put(b, off, 2);
	put(b, schedule, 4);
}

static void gen_jit_programs(void)
{
	struct buf b = {};
	u8 bad;

	/* Appends racing lookups, a tombstone, a rewrite and a compaction. */
	put(&b, 0x37, 1);	/* 8 descriptors, 16 rows */
	put(&b, 0, 1);		/* a writer program */
	j_append(&b, 3, 14, 0x10, 0x40);
	j_lookup(&b, 0, 5, 0);
	j_append(&b, 2, 14, 0x20, 0x80);
	j_lookup(&b, 1, 0x10, 0x55555555);
	j_append(&b, 1, 14, 0, 0x10);
	j_lookup(&b, 2, 3, 0xffffffff);
	put(&b, J_FLUSH, 1);
	put(&b, J_TOMB, 1);
	put(&b, 1, 1);
	j_lookup(&b, 1, 0x11, 0x3);
	put(&b, J_SEQ, 1);
	put(&b, J_REUSE, 1);
	put(&b, 1, 1);
	put_bytes(&b, "\x01\x02\xff\xfe\x02\x03\x02\xff\xfe\x02", 10);
	j_lookup(&b, 1, 0x12, 0xf0);
	put(&b, J_SEQ, 1);
	put(&b, J_SEQ, 1);
	put(&b, J_COMPACT, 1);
	j_lookup(&b, 0, 0x20, 0x0f0f);
	put(&b, J_SEQ, 1);
	j_lookup(&b, 1, 0x30, 0);
	emit("fuzz_jit", "program-protocol", b.b, b.n);

	/* Every kind of malformed append, each looked up. */
	b.n = 0;
	put(&b, 0xff, 1);	/* 16 descriptors, 64 rows */
	put(&b, 0, 1);
	for (bad = 1; bad < 14; bad++) {
		j_append(&b, 2, bad, 4, 0x30);
		j_lookup(&b, bad - 1, 4, 0x0101);
	}
	put(&b, J_FLUSH, 1);
	emit("fuzz_jit", "program-malformed", b.b, b.n);

	/* Stray writes between and during lookups. */
	b.n = 0;
	put(&b, 0x13, 1);
	put(&b, 0, 1);
	j_append(&b, 2, 14, 0, 0x20);
	j_append(&b, 2, 14, 0, 0x20);
	put(&b, J_STRAY, 1);
	put(&b, 3, 1);
	put(&b, 0x28, 2);
	put(&b, 0xdeadbeef, 4);
	j_lookup(&b, 1, 2, 0xffff);
	put(&b, J_STRAY, 1);
	put(&b, 3, 1);
	put(&b, 0xffff, 2);
	put(&b, 9, 4);
	j_lookup(&b, 0, 2, 0x1);
	emit("fuzz_jit", "program-stray", b.b, b.n);
}

/*
 * Raw mode: from the header's count on, the registry of the test
 * cases, re-laid out for 8 descriptors and 16 rows.
 */
static void gen_jit_raw(u32 seq, const char *name)
{
	const size_t hdr = sizeof(struct sframe_jit_header);
	const size_t count_off = offsetof(struct sframe_jit_header, fde_count);
	static u8 mem[sizeof(struct sframe_jit_header) +
		      8 * sizeof(struct sframe_jit_fde) +
		      16 * sizeof(struct sframe_jit_fre)];
	struct buf b = {};
	u32 count = ARRAY_SIZE(sft_jit_fdes);

	memset(mem, 0, sizeof(mem));
	memcpy(mem + count_off, &count, 4);
	memcpy(mem + count_off + 4, &seq, 4);
	memcpy(mem + hdr, sft_jit_fdes, sizeof(sft_jit_fdes));
	memcpy(mem + hdr + 8 * sizeof(struct sframe_jit_fde), sft_jit_fres,
	       sizeof(sft_jit_fres));
	put(&b, 0x37, 1);
	put(&b, 1, 1);		/* raw */
	put_bytes(&b, mem + count_off, sizeof(mem) - count_off);
	emit("fuzz_jit", name, b.b, b.n);
}

/* ---- fuzz_cjit ---- */

/*
 * The compact registry of the shared test cases, in a range of @len
 * bytes: capacities, length, count, seq, reserved0, the three areas
 * (8 descriptors, 16 rows, the rules), then PCs into F0 and F1.
 */
static void gen_cjit(u64 len, const char *name)
{
	static struct sframe_jit_cfde fdes[8];
	static struct sframe_jit_cfre fres[16];
	struct buf b = {};

	memcpy(fdes, sft_cjit_fdes, sizeof(sft_cjit_fdes));
	memcpy(fres, sft_cjit_fres, sizeof(sft_cjit_fres));
	put(&b, ARRAY_SIZE(fdes) - 1, 1);
	put(&b, ARRAY_SIZE(fres) - 1, 1);
	put(&b, ARRAY_SIZE(sft_cjit_rules) - 1, 1);
	put(&b, len - 1, 4);
	put(&b, ARRAY_SIZE(sft_cjit_fdes), 1);
	put(&b, 0, 1);
	put(&b, 0, 1);
	put_bytes(&b, fdes, sizeof(fdes));
	put_bytes(&b, fres, sizeof(fres));
	put_bytes(&b, sft_cjit_rules, sizeof(sft_cjit_rules));
	put(&b, SFT_CF0 + 4, 4);
	put(&b, SFT_CF1 + 0x1c, 4);
	emit("fuzz_cjit", name, b.b, b.n);
}

/* ---- fuzz_walk ---- */

static void w_small(struct buf *b, u8 v)
{
	put(b, v << 2, 1);
}

static void w_stack(struct buf *b, unsigned long addr)
{
	put(b, 1, 1);
	put(b, addr - STACK_WIN, 2);
}

static void w_text(struct buf *b, unsigned int region, u16 off)
{
	put(b, 2 | region << 2, 1);
	put(b, off, 2);
}

/* A JIT function of @nr rows: @rows holds flags, CFA, RA, FP, step. */
static void w_func(struct buf *b, u16 start, u16 size, u8 info,
		   const u8 *rows, unsigned int nr)
{
	put(b, start, 2);
	put(b, size, 2);
	put(b, info | (nr - 1), 1);
	put(b, 0, 1);
	put_bytes(b, rows, nr * 5);
}

/* push %rbp at 0, mov %rsp,%rbp at 1, FP-based from 4 on. */
static const u8 fp_rows[] = {
	0x00, 1, 0xff, 0, 0,		/* +0: CFA = SP + 8 */
	0x04, 2, 0xff, 0xfe, 2,		/* +1: SP + 16, FP at CFA - 16 */
	0x05, 2, 0xff, 0xfe, 0,		/* +4: FP + 16, FP at CFA - 16 */
};

static const u8 outermost_row[] = { 0x08, 0, 0, 0, 0 };

/*
 * Three frames of JIT code with frame records, then an outermost
 * function: the walk follows the rows to its end.
 */
static void gen_walk_jit(void)
{
	unsigned long lo = STACK_TOP - 16 * 8;
	struct buf b = {};
	unsigned int i;

	put(&b, 16, 1);		/* depth */
	put(&b, 0, 1);		/* registered */
	w_text(&b, 0, 0x110);	/* pc: f0 + 0x10 */
	w_stack(&b, lo);	/* sp */
	w_stack(&b, lo + 16);	/* fp */
	put(&b, 1, 1);		/* one region */
	put(&b, 1, 1);		/* JIT */
	put(&b, 0x0fff, 2);	/* 4 KiB of text */
	put(&b, 0, 1);		/* seq */
	put(&b, 4, 1);
	w_func(&b, 0x100, 0x40, 0, fp_rows, 3);
	w_func(&b, 0x200, 0x40, 0, fp_rows, 3);
	w_func(&b, 0x300, 0x40, 0, fp_rows, 3);
	w_func(&b, 0x400, 0x40, 0, outermost_row, 1);
	put(&b, 16, 2);		/* stack words */
	for (i = 0; i < 16; i++) {
		switch (i) {
		case 2:
			w_stack(&b, lo + 48);		/* saved FP */
			break;
		case 3:
			w_text(&b, 0, 0x220);		/* into f1 */
			break;
		case 6:
			w_stack(&b, lo + 80);
			break;
		case 7:
			w_text(&b, 0, 0x308);		/* into f2 */
			break;
		case 10:
			w_small(&b, 0);
			break;
		case 11:
			w_text(&b, 0, 0x410);		/* into f3 */
			break;
		default:
			w_small(&b, i);
		}
	}
	emit("fuzz_walk", "jit-frames", b.b, b.n);

	/* The same registry mid-rewrite: every frame by frame pointer. */
	b.b[1 + 1 + 3 + 3 + 3 + 1 + 1 + 2] = 1;	/* seq, odd */
	emit("fuzz_walk", "jit-rewriting", b.b, b.n);
	/* The same stack, the task having registered nothing. */
	b.b[1] = 1;
	emit("fuzz_walk", "unregistered", b.b, b.n);
}

/* One region, the version 2 test section at the first region's text. */
static void w_sft_v2(struct buf *b)
{
	put(b, 1, 1);
	put(b, 0, 1);		/* ELF */
	put(b, 0xffff, 2);
	put(b, SFT_BASE - WALK_TEXT(0), 4);
	put(b, sizeof(sft_v2), 2);
	put_bytes(b, sft_v2, sizeof(sft_v2));
}

/*
 * The version 2 test section at the first region: a frame of f0 after
 * its push, a PLT-like stub of f1, f0 again, then a zero return address.
 */
static void gen_walk_elf(void)
{
	unsigned long lo = STACK_TOP - 8 * 8;
	struct buf b = {};

	put(&b, 32, 1);
	put(&b, 0, 1);
	w_text(&b, 0, 0x2001);	/* pc: f0 + 1, CFA = SP + 16 */
	w_stack(&b, lo);
	w_small(&b, 0);
	w_sft_v2(&b);
	put(&b, 8, 2);
	w_stack(&b, lo + 32);		/* saved FP */
	w_text(&b, 0, 0x2408);		/* into f1: CFA = SP + 8 */
	w_text(&b, 0, 0x2002);		/* into f0: CFA = SP + 16 */
	w_stack(&b, lo + 48);
	w_small(&b, 0);			/* the end */
	w_small(&b, 5);
	w_small(&b, 6);
	w_small(&b, 7);
	emit("fuzz_walk", "elf-frames", b.b, b.n);
}

/*
 * A stack deeper than the budget of a sample, under a depth limit past
 * it: 700 frames of the version 2 test section's PLT-like f1, each
 * CFA = SP + 8.  The walk stops at SFRAME_SAMPLE_MAX_FRAMES, counted.
 */
static void gen_walk_budget(void)
{
	unsigned long lo = STACK_TOP - 700 * 8;
	struct buf b = {};
	unsigned int i;

	put(&b, 100, 1);	/* depth: the budget + 101 */
	put(&b, 2, 1);		/* registered, past the budget */
	w_text(&b, 0, 0x2408);	/* pc: f1 + 8 */
	w_stack(&b, lo);
	w_small(&b, 0);
	w_sft_v2(&b);
	put(&b, 700, 2);
	for (i = 0; i < 700; i++)
		w_text(&b, 0, 0x2409);	/* returns into f1 + 8 */
	emit("fuzz_walk", "elf-budget", b.b, b.n);
}

/* No table covers the PC: frame records only. */
static void gen_walk_fp(void)
{
	unsigned long lo = STACK_TOP - 12 * 8;
	struct buf b = {};

	put(&b, 8, 1);
	put(&b, 0, 1);
	w_text(&b, 3, 0x10);
	w_stack(&b, lo);
	w_stack(&b, lo + 16);
	put(&b, 0, 1);		/* no region */
	put(&b, 12, 2);
	w_small(&b, 0);
	w_small(&b, 0);
	w_stack(&b, lo + 48);
	w_text(&b, 3, 0x20);
	w_small(&b, 0);
	w_small(&b, 0);
	w_stack(&b, lo + 80);
	w_text(&b, 3, 0x30);
	w_small(&b, 0);
	w_small(&b, 0);
	w_small(&b, 0);
	w_text(&b, 3, 0x40);
	emit("fuzz_walk", "frame-pointers", b.b, b.n);
}

/* The code no region describes, where fuzz_walk keeps trampolines. */
#define WALK_TRAMP_REGION	4

static const u8 sp8_row[] = { 0x00, 1, 0xff, 0, 0 };	/* CFA = SP + 8 */
static const u8 sp16_row[] = { 0x00, 2, 0xff, 0, 0 };	/* CFA = SP + 16 */

/*
 * A handler's frame (f0) above the frame it interrupted (f1, stopped on
 * its first byte): the handler returns into a trampoline, whose
 * sigcontext gives the interrupted %rip, %rsp below it and %rbp; then
 * f1 returns into f0, which returns to 0.
 */
static void gen_walk_signal(void)
{
	unsigned long lo = STACK_TOP - 31 * 8;
	struct buf b = {};
	unsigned int i;

	put(&b, 16, 1);		/* depth */
	put(&b, 0, 1);		/* registered */
	w_text(&b, 0, 0x110);	/* pc: f0 + 0x10 */
	w_stack(&b, lo + 8 * 8);	/* sp: the return address */
	w_small(&b, 0);		/* fp */
	put(&b, 1, 1);		/* one region */
	put(&b, 1, 1);		/* JIT */
	put(&b, 0x0fff, 2);
	put(&b, 0, 1);		/* seq */
	put(&b, 2, 1);
	w_func(&b, 0x100, 0x40, 0, sp8_row, 1);
	w_func(&b, 0x200, 0x40, 0, sp16_row, 1);
	put(&b, 31, 2);		/* stack words */
	for (i = 0; i < 31; i++) {
		switch (i) {
		case 1:
			w_text(&b, 0, 0x108);		/* f1 into f0 */
			break;
		case 8:					/* f0 into it */
			w_text(&b, WALK_TRAMP_REGION, 0x10);
			break;
		case 29:				/* %rsp */
			w_stack(&b, lo);
			break;
		case 30:				/* %rip */
			w_text(&b, 0, 0x200);
			break;
		default:
			w_small(&b, 0);
		}
	}
	emit("fuzz_walk", "signal-frame", b.b, b.n);
}

/*
 * The version 3 test section at the first region: the sampled PC in f4,
 * which the table marks as a signal frame, its sigcontext giving a PC
 * in f0 after its push and a stack pointer below.
 */
static void gen_walk_v3_signal(void)
{
	unsigned long lo = STACK_TOP - 24 * 8;
	struct buf b = {};
	unsigned int i;

	put(&b, 8, 1);
	put(&b, 0, 1);
	w_text(&b, 0, 0x4091);	/* pc: f4 + 1 */
	w_stack(&b, lo + 8);	/* sp: the ucontext */
	w_small(&b, 0);
	put(&b, 1, 1);
	put(&b, 0, 1);		/* ELF */
	put(&b, 0xffff, 2);
	put(&b, SFT_BASE - WALK_TEXT(0), 4);
	put(&b, sizeof(sft_v3), 2);
	put_bytes(&b, sft_v3, sizeof(sft_v3));
	put(&b, 24, 2);
	for (i = 0; i < 24; i++) {
		switch (i) {
		case 21:				/* %rsp */
			w_stack(&b, lo);
			break;
		case 22:				/* %rip: f0 + 1 */
			w_text(&b, 0, 0x4001);
			break;
		default:
			w_small(&b, 0);
		}
	}
	emit("fuzz_walk", "elf-v3-signal-frame", b.b, b.n);
}

/* A first frame no table describes, stopped on its first instruction. */
static void gen_walk_entry(void)
{
	unsigned long lo = STACK_TOP - 4 * 8;
	struct buf b = {};

	put(&b, 8, 1);
	put(&b, 4, 1);		/* registered, at a function's entry */
	w_text(&b, 3, 0x10);
	w_stack(&b, lo);
	w_small(&b, 0);
	put(&b, 1, 1);		/* a region, elsewhere */
	put(&b, 1, 1);
	put(&b, 0x0fff, 2);
	put(&b, 0, 1);
	put(&b, 1, 1);
	w_func(&b, 0x100, 0x40, 0, sp8_row, 1);
	put(&b, 4, 2);
	w_text(&b, 0, 0x108);	/* the caller, in the region's f0 */
	w_small(&b, 0);
	w_small(&b, 0);
	w_small(&b, 0);
	emit("fuzz_walk", "function-entry", b.b, b.n);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	gen_elf();
	gen_jit_programs();
	gen_jit_raw(0, "raw-registry");
	gen_jit_raw(7, "raw-registry-rewriting");
	gen_cjit(0x10000, "compact-registry");
	gen_cjit(1ULL << 32, "compact-registry-4g");
	gen_walk_jit();
	gen_walk_elf();
	gen_walk_budget();
	gen_walk_fp();
	gen_walk_signal();
	gen_walk_v3_signal();
	gen_walk_entry();
	return 0;
}
