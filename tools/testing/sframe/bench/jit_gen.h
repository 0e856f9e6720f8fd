/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic JIT registry for the benchmarks of the decoder: functions
 * of the shapes gcc emits for x86-64 (jit_gen.c says which), laid out as
 * the kernel lays out a registry, with the view the kernel keeps of it.
 * A fixed pseudo-random sequence, from a seed, makes the same registry
 * on every machine.
 */
#ifndef _SFRAME_BENCH_JIT_GEN_H
#define _SFRAME_BENCH_JIT_GEN_H

#include <stddef.h>

#include "decoder.h"
#include <uapi/linux/sframe_jit.h>

/* Where the generated code range starts. */
#define JIT_GEN_TEXT_START	0x7f0000000000UL

/* One generated function, and where its rows are in jit_gen.rows. */
struct jit_gen_func {
	unsigned long start;
	u32 size;
	u32 first_row;
	u32 nr_rows;
};

/**
 * struct jit_gen - a generated set of functions and its registry
 * @nr_funcs: functions.
 * @nr_rows: frame rows, over all functions.
 * @funcs: the functions, in address order from JIT_GEN_TEXT_START.
 * @rows: their rows, in the registry's format.
 * @text_end: end of the code range.
 * @jit: the registry: header page, descriptors, rows (jit_gen_registry()).
 * @jit_size: bytes at @jit.
 * @view: the kernel's view of @jit, for sframe_jit_find().
 */
struct jit_gen {
	u32 nr_funcs;
	u32 nr_rows;
	struct jit_gen_func *funcs;
	struct sframe_jit_fre *rows;
	unsigned long text_end;
	void *jit;
	size_t jit_size;
	struct sframe_jit_view view;
};

void jit_gen_seed(u64 seed);
u64 jit_gen_rng(void);
u32 jit_gen_below(u32 n);
void *jit_gen_alloc(size_t size);
void jit_gen_funcs(struct jit_gen *g, u32 nr);
void jit_gen_registry(struct jit_gen *g);

#endif /* _SFRAME_BENCH_JIT_GEN_H */
