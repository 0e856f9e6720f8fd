// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frame rows of the usual x86-64 function shapes: no frame; push %rbp and
 * mov %rsp,%rbp; pushes of callee-saved registers; sub $N,%rsp; and the
 * epilogues that undo them.
 *
 * The CFA is %rsp + 8 at entry.  Until %rbp becomes the frame pointer,
 * each push and the stack allocation move it further from %rsp; once it
 * is, the CFA is %rbp + 16 whatever %rsp does, until "pop %rbp" or
 * "leave".  The caller's %rbp is saved at CFA - 16 from "push %rbp" on.
 * The return address is always at CFA - 8.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "sframe_jit_internal.h"

#define X86_64_RA_OFF	(-8)
#define X86_64_FP_OFF	(-16)
#define X86_64_SLOT	8

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The frame at one point of the function. */
struct x86_64_state {
	uint8_t cfa_base;
	int64_t cfa_off;
	bool fp_saved;
};

struct x86_64_builder {
	uint32_t size;
	struct sframe_jit_row *rows;
	uint32_t max_rows;
	uint32_t nr_rows;
	struct sframe_jit_row last;
	uint32_t prev_off;
	int err;
};

static bool row_same_frame(const struct sframe_jit_row *a,
			   const struct sframe_jit_row *b)
{
	return a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->flags == b->flags;
}

/*
 * The instruction that ends at @off changed the frame to @s.  Offsets
 * must increase; a row at or past the function's end is left out, and
 * so is one that repeats the row before it.
 */
static void emit(struct x86_64_builder *b, uint32_t off,
		 const struct x86_64_state *s)
{
	struct sframe_jit_row row = {
		.start_off	= off,
		.cfa_base	= s->cfa_base,
		.ra_off		= X86_64_RA_OFF,
	};

	if (b->err)
		return;
	if ((b->nr_rows && off <= b->prev_off) || off > b->size ||
	    s->cfa_off < 0 || s->cfa_off > INT32_MAX) {
		b->err = -EINVAL;
		return;
	}
	b->prev_off = off;
	if (off == b->size)
		return;
	row.cfa_off = s->cfa_off;
	if (s->fp_saved) {
		row.flags = SFRAME_JIT_ROW_FP_SAVED;
		row.fp_off = X86_64_FP_OFF;
	}
	if (b->nr_rows && row_same_frame(&row, &b->last))
		return;
	b->last = row;
	if (b->rows) {
		if (b->nr_rows == b->max_rows) {
			b->err = -ENOSPC;
			return;
		}
		b->rows[b->nr_rows] = row;
	}
	b->nr_rows++;
}

/* An optional step: absent (0), nothing changes. */
static void step(struct x86_64_builder *b, uint32_t off,
		 const struct x86_64_state *s)
{
	if (off)
		emit(b, off, s);
}

static void stack_move(struct x86_64_state *s, int64_t delta)
{
	if (s->cfa_base == SFRAME_JIT_ROW_CFA_SP)
		s->cfa_off += delta;
}

static int frame_check(const struct sframe_jit_x86_64_frame *f)
{
	if (f->nr_saves > SFRAME_JIT_X86_64_MAX_SAVES)
		return -EINVAL;
	if (f->mov_rbp && !f->push_rbp)
		return -EINVAL;
	if (f->stack_size && !f->sub_rsp)
		return -EINVAL;
	if (f->nr_epilogues && !f->epilogue)
		return -EINVAL;
	return 0;
}

static void epilogue(struct x86_64_builder *b,
		     const struct sframe_jit_x86_64_frame *f,
		     const struct sframe_jit_x86_64_epilogue *e,
		     const struct x86_64_state *body)
{
	struct x86_64_state s = *body;
	bool sp_based = s.cfa_base == SFRAME_JIT_ROW_CFA_SP;
	uint32_t i;

	/* Without a frame pointer, every step that moves %rsp counts. */
	if (sp_based && f->stack_size && !e->add_rsp)
		b->err = b->err ?: -EINVAL;
	stack_move(&s, -(int64_t)f->stack_size);
	step(b, e->add_rsp, &s);
	for (i = 0; i < f->nr_saves; i++) {
		if (sp_based && !e->pop[i])
			b->err = b->err ?: -EINVAL;
		stack_move(&s, -X86_64_SLOT);
		step(b, e->pop[i], &s);
	}
	for (; i < SFRAME_JIT_X86_64_MAX_SAVES; i++)
		if (e->pop[i])
			b->err = b->err ?: -EINVAL;
	if (!f->push_rbp != !e->pop_rbp)
		b->err = b->err ?: -EINVAL;
	s = (struct x86_64_state) {
		.cfa_base	= SFRAME_JIT_ROW_CFA_SP,
		.cfa_off	= X86_64_SLOT,
	};
	step(b, e->pop_rbp, &s);
	step(b, e->ret, body);
}

int sframe_jit_x86_64_rows(const struct sframe_jit_x86_64_frame *frame,
			   uint32_t size, struct sframe_jit_row *rows,
			   uint32_t max_rows)
{
	static const struct sframe_jit_x86_64_frame none;
	const struct sframe_jit_x86_64_frame *f = frame ?: &none;
	struct x86_64_builder b = {
		.size		= size,
		.rows		= rows,
		.max_rows	= max_rows,
	};
	struct x86_64_state s = {
		.cfa_base	= SFRAME_JIT_ROW_CFA_SP,
		.cfa_off	= X86_64_SLOT,
	};
	uint32_t i;
	int err;

	if (!size)
		return -EINVAL;
	err = frame_check(f);
	if (err)
		return err;

	emit(&b, 0, &s);
	if (f->push_rbp) {
		s.cfa_off += X86_64_SLOT;
		s.fp_saved = true;
		emit(&b, f->push_rbp, &s);
	}
	if (f->mov_rbp) {
		s.cfa_base = SFRAME_JIT_ROW_CFA_FP;
		s.cfa_off = 2 * X86_64_SLOT;
		emit(&b, f->mov_rbp, &s);
	}
	for (i = 0; i < f->nr_saves; i++) {
		if (!f->save[i])
			return -EINVAL;
		stack_move(&s, X86_64_SLOT);
		emit(&b, f->save[i], &s);
	}
	stack_move(&s, f->stack_size);
	step(&b, f->sub_rsp, &s);
	for (i = 0; i < f->nr_epilogues; i++)
		epilogue(&b, f, &f->epilogue[i], &s);
	return b.err ?: (int)b.nr_rows;
}

int sframe_jit_add_x86_64(struct sframe_jit *reg, uint64_t start,
			  uint32_t size,
			  const struct sframe_jit_x86_64_frame *frame,
			  const char *name)
{
	struct sframe_jit_row stack_rows[32], *rows = stack_rows;
	int n, err;

	n = sframe_jit_x86_64_rows(frame, size, NULL, 0);
	if (n < 0)
		return n;
	if ((size_t)n > ARRAY_SIZE(stack_rows)) {
		rows = calloc(n, sizeof(*rows));
		if (!rows)
			return -ENOMEM;
	}
	n = sframe_jit_x86_64_rows(frame, size, rows, n);
	err = n < 0 ? n : sframe_jit_add(reg, start, size, rows, n, name);
	if (rows != stack_rows)
		free(rows);
	return err;
}
