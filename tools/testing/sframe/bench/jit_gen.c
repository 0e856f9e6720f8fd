// SPDX-License-Identifier: GPL-2.0
/*
 * The synthetic JIT registry of the decoder's benchmarks (jit_gen.h):
 * 35% frameless leaves with one row, 35% frame-pointer functions with
 * four, 30% functions that push one to five callee-saved registers and
 * allocate stack, half of them with a second epilogue, with 5 to 20
 * rows; 5.2 rows per function on average, 8 to 1600 bytes each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit_gen.h"

/* Most rows one generated function has. */
#define MAX_ROWS	20

static u64 rng_state;

void jit_gen_seed(u64 seed)
{
	rng_state = seed;
}

/* splitmix64: a fixed sequence for a given seed, on every machine. */
u64 jit_gen_rng(void)
{
	u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

u32 jit_gen_below(u32 n)
{
	return (u32)(jit_gen_rng() % n);
}

/* malloc(), or the end of the benchmark. */
void *jit_gen_alloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		fprintf(stderr, "%s: out of memory\n",
			program_invocation_short_name);
		exit(2);
	}
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n",
			program_invocation_short_name);
		exit(2);
	}
	return p;
}

static void add_row(struct sframe_jit_fre *r, u32 *n, u32 start, u8 base,
		    s32 cfa_off, bool fp_saved)
{
	r[*n] = (struct sframe_jit_fre){
		.start_off = start,
		.cfa_off = cfa_off,
		.ra_off = -8,
		.fp_off = fp_saved ? -16 : 0,
		.cfa_base = base,
		.flags = fp_saved ? SFRAME_JIT_FRE_FP_SAVED : 0,
	};
	(*n)++;
}

/* A leaf that never moves the stack pointer: one row. */
static u32 shape_leaf(struct sframe_jit_fre *r, u32 *size)
{
	u32 n = 0;

	*size = 8 + jit_gen_below(112);
	add_row(r, &n, 0, SFRAME_JIT_CFA_SP, 8, false);
	return n;
}

/* push %rbp; mov %rsp,%rbp; ...; leave; ret */
static u32 shape_fp(struct sframe_jit_fre *r, u32 *size)
{
	u32 n = 0;

	*size = 48 + jit_gen_below(560);
	add_row(r, &n, 0, SFRAME_JIT_CFA_SP, 8, false);
	add_row(r, &n, 1, SFRAME_JIT_CFA_SP, 16, true);
	add_row(r, &n, 4, SFRAME_JIT_CFA_FP, 16, true);
	add_row(r, &n, *size - 1, SFRAME_JIT_CFA_SP, 8, false);
	return n;
}

/* The rows of one epilogue at @at: add $S,%rsp, then the pops. */
static u32 epilogue(struct sframe_jit_fre *r, u32 n, u32 at, u32 saves)
{
	u32 j;

	add_row(r, &n, at, SFRAME_JIT_CFA_SP, 8 + 8 * saves, false);
	for (j = 0; j < saves; j++)
		add_row(r, &n, at + 2 + 2 * j, SFRAME_JIT_CFA_SP,
			8 + 8 * (saves - j - 1), false);
	return n;
}

/*
 * Pushes of 1 to 5 callee-saved registers, sub $S,%rsp, the body, one
 * epilogue, and in half of them a second epilogue at the end, after
 * which the body's frame applies again.
 */
static u32 shape_saves(struct sframe_jit_fre *r, u32 *size)
{
	u32 saves = 1 + jit_gen_below(5), stack = 8 * (1 + jit_gen_below(64));
	u32 cfa = 8 + 8 * saves + stack, n = 0, j, body, ep;
	bool two = jit_gen_below(2);

	*size = 96 + jit_gen_below(1500);
	add_row(r, &n, 0, SFRAME_JIT_CFA_SP, 8, false);
	for (j = 0; j < saves; j++)
		add_row(r, &n, 2 + 2 * j, SFRAME_JIT_CFA_SP, 16 + 8 * j, false);
	body = 2 + 2 * saves + 4;
	add_row(r, &n, body, SFRAME_JIT_CFA_SP, cfa, false);
	ep = two ? body + (*size - body) / 2 : *size - 4 - 2 * saves;
	n = epilogue(r, n, ep, saves);
	if (two) {
		/* After the first ret, the body's frame again. */
		add_row(r, &n, ep + 3 + 2 * saves, SFRAME_JIT_CFA_SP, cfa,
			false);
		n = epilogue(r, n, *size - 4 - 2 * saves, saves);
	}
	return n;
}

static u32 make_func(struct sframe_jit_fre *r, u32 *size)
{
	u32 pick = jit_gen_below(100);

	if (pick < 35)
		return shape_leaf(r, size);
	if (pick < 70)
		return shape_fp(r, size);
	return shape_saves(r, size);
}

/* @nr functions and their rows, the next ones of the sequence. */
void jit_gen_funcs(struct jit_gen *g, u32 nr)
{
	unsigned long pc = JIT_GEN_TEXT_START;
	u32 i, cap = nr * 5;

	g->nr_funcs = nr;
	g->nr_rows = 0;
	g->funcs = jit_gen_alloc(sizeof(*g->funcs) * nr);
	g->rows = jit_gen_alloc(sizeof(*g->rows) * cap);
	for (i = 0; i < nr; i++) {
		struct jit_gen_func *f = &g->funcs[i];

		if (cap - g->nr_rows < MAX_ROWS) {
			cap *= 2;
			g->rows = xrealloc(g->rows, sizeof(*g->rows) * cap);
		}
		f->start = pc;
		f->first_row = g->nr_rows;
		f->nr_rows = make_func(g->rows + g->nr_rows, &f->size);
		g->nr_rows += f->nr_rows;
		/* Functions start 16-byte aligned, with padding between. */
		pc = (pc + f->size + 15) & ~15UL;
	}
	g->text_end = pc;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* The registry as the kernel lays it out (sframe.rst, "Layout"). */
void jit_gen_registry(struct jit_gen *g)
{
	size_t page = sysconf(_SC_PAGESIZE), fde_off = page, fre_off;
	struct sframe_jit_header *h;
	struct sframe_jit_fde *fdes;
	u32 i;

	fre_off = align_up(fde_off + sizeof(*fdes) * g->nr_funcs, 64);
	g->jit_size = align_up(fre_off + sizeof(*g->rows) * g->nr_rows, page);
	g->jit = mmap(NULL, g->jit_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->jit == MAP_FAILED) {
		fprintf(stderr, "%s: mmap: %s\n", program_invocation_short_name,
			strerror(errno));
		exit(2);
	}
	h = g->jit;
	fdes = (void *)((u8 *)g->jit + fde_off);
	for (i = 0; i < g->nr_funcs; i++)
		fdes[i] = (struct sframe_jit_fde){
			.func_start = g->funcs[i].start,
			.func_size = g->funcs[i].size,
			.fre_start = g->funcs[i].first_row,
			.fre_count = g->funcs[i].nr_rows,
		};
	memcpy((u8 *)g->jit + fre_off, g->rows, sizeof(*g->rows) * g->nr_rows);
	h->magic = SFRAME_JIT_MAGIC;
	h->version = SFRAME_JIT_VERSION;
	h->fde_count = g->nr_funcs;
	g->view = (struct sframe_jit_view){
		.base = g->jit,
		.fde_off = fde_off,
		.fde_cap = g->nr_funcs,
		.fre_off = fre_off,
		.fre_cap = g->nr_rows,
		.text_start = JIT_GEN_TEXT_START,
		.text_end = g->text_end,
	};
}
