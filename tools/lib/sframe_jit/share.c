// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Row sharing: store each distinct row sequence of a set of functions
 * once, and a sequence that begins a longer one as that one's first
 * rows, so that functions of the same shape point at the same slots.
 *
 * The kernel reads a function's rows as the window [fre_start,
 * fre_start + fre_count) and only bounds-checks it, so two descriptors
 * may name the same window, and a window may be the start of another.
 * A window cannot start inside another sequence: only a first row has
 * start_off 0.  Sharing exact sequences and prefixes is therefore all
 * the sharing the layout allows.  Documentation/sframe_jit.rst gives
 * what it saves on real objects.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

/* A distinct sequence: where it is in the input, and where it goes. */
struct seq {
	uint32_t first;
	uint32_t nr;
	uint32_t slot;
};

struct share {
	const struct sframe_jit_row *rows;
	struct seq *seqs;
	uint32_t nr_seqs;
	uint32_t *table;	/* open addressing: seq index + 1, 0 free */
	uint32_t mask;
};

/* Field by field: the structure's padding is not part of a row. */
static bool row_eq(const struct sframe_jit_row *a,
		   const struct sframe_jit_row *b)
{
	return a->start_off == b->start_off && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->cfa_base == b->cfa_base && a->flags == b->flags;
}

static int row_cmp(const struct sframe_jit_row *a,
		   const struct sframe_jit_row *b)
{
	if (a->start_off != b->start_off)
		return a->start_off < b->start_off ? -1 : 1;
	if (a->cfa_off != b->cfa_off)
		return a->cfa_off < b->cfa_off ? -1 : 1;
	if (a->ra_off != b->ra_off)
		return a->ra_off < b->ra_off ? -1 : 1;
	if (a->fp_off != b->fp_off)
		return a->fp_off < b->fp_off ? -1 : 1;
	if (a->cfa_base != b->cfa_base)
		return a->cfa_base < b->cfa_base ? -1 : 1;
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	return 0;
}

/*
 * A multiply-xorshift step per word of fields.  A multiplication alone
 * carries only upwards, and the table is indexed by the low bits: the
 * shift brings the high bits down.
 */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

static uint64_t seq_hash(const struct sframe_jit_row *r, uint32_t nr)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	uint32_t i;

	for (i = 0; i < nr; i++) {
		h = mix(h, (uint64_t)r[i].start_off << 32 | (uint32_t)r[i].cfa_off);
		h = mix(h, (uint64_t)(uint16_t)r[i].ra_off << 32 |
			   (uint32_t)(uint16_t)r[i].fp_off << 16 |
			   (uint32_t)r[i].cfa_base << 8 | r[i].flags);
	}
	return mix(h, nr);
}

static bool seq_eq(const struct share *s, const struct seq *a,
		   uint32_t first, uint32_t nr)
{
	uint32_t i;

	if (a->nr != nr)
		return false;
	for (i = 0; i < nr; i++)
		if (!row_eq(&s->rows[a->first + i], &s->rows[first + i]))
			return false;
	return true;
}

/* The distinct sequence equal to @fn's rows, added if new. */
static uint32_t seq_intern(struct share *s, const struct sframe_jit__func *fn)
{
	uint32_t h = seq_hash(s->rows + fn->first_row, fn->nr_rows) & s->mask;
	uint32_t idx;

	while ((idx = s->table[h])) {
		if (seq_eq(s, &s->seqs[idx - 1], fn->first_row, fn->nr_rows))
			return idx - 1;
		h = (h + 1) & s->mask;
	}
	idx = s->nr_seqs++;
	s->seqs[idx] = (struct seq) {
		.first	= fn->first_row,
		.nr	= fn->nr_rows,
	};
	s->table[h] = idx + 1;
	return idx;
}

/* Lexicographic, a sequence before those it begins. */
static int seq_cmp(const void *a, const void *b, void *arg)
{
	const struct seq *x = a, *y = b;
	const struct sframe_jit_row *rows = arg;
	uint32_t i, n = x->nr < y->nr ? x->nr : y->nr;
	int c;

	for (i = 0; i < n; i++) {
		c = row_cmp(&rows[x->first + i], &rows[y->first + i]);
		if (c)
			return c;
	}
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static bool seq_begins(const struct sframe_jit_row *rows,
		       const struct seq *pre, const struct seq *seq)
{
	uint32_t i;

	if (pre->nr > seq->nr)
		return false;
	for (i = 0; i < pre->nr; i++)
		if (!row_eq(&rows[pre->first + i], &rows[seq->first + i]))
			return false;
	return true;
}

/*
 * Give each distinct sequence its slots.  Sorted, the sequences that a
 * sequence begins follow it directly, the next one first if any does,
 * so walking backwards each one either begins its successor and shares
 * its slots, or gets slots of its own.  Returns the rows needed.
 */
static uint32_t seqs_place(struct share *s, struct sframe_jit_row *out)
{
	uint32_t i, used = 0;

	for (i = s->nr_seqs; i--; ) {
		struct seq *q = &s->seqs[i];

		if (i + 1 < s->nr_seqs && seq_begins(s->rows, q, q + 1)) {
			q->slot = q[1].slot;
			continue;
		}
		q->slot = used;
		memcpy(out + used, s->rows + q->first, q->nr * sizeof(*out));
		used += q->nr;
	}
	return used;
}

static uint32_t table_size(uint32_t nr)
{
	uint32_t n = 64;

	while (n < nr * 2)
		n *= 2;
	return n;
}

/**
 * sframe_jit__share_rows() - store each distinct row sequence once
 * @funcs: functions whose rows are at @rows[first_row]; their first_row
 *	is rewritten to index the new rows.
 * @nr_funcs: their number, below 2^30.
 * @rowsp: the rows; replaced by a new array on success, and freed.
 * @nr_rowsp: their number; replaced by the new array's.
 *
 * Every function keeps rows equal, field by field, to those it had.
 *
 * Return: 0, -EINVAL past the bound on @nr_funcs, or -ENOMEM with
 * everything unchanged.
 */
int sframe_jit__share_rows(struct sframe_jit__func *funcs, uint32_t nr_funcs,
			   struct sframe_jit_row **rowsp, uint32_t *nr_rowsp)
{
	struct share s = { .rows = *rowsp };
	struct sframe_jit_row *out = NULL;
	uint32_t *canon = NULL, i, size, used;
	int err = -ENOMEM;

	if (!nr_funcs)
		return 0;
	if (nr_funcs >= 1U << 30)
		return -EINVAL;
	size = table_size(nr_funcs);
	s.mask = size - 1;
	s.table = calloc(size, sizeof(*s.table));
	s.seqs = malloc((size_t)nr_funcs * sizeof(*s.seqs));
	canon = malloc((size_t)nr_funcs * sizeof(*canon));
	out = malloc(((size_t)*nr_rowsp ?: 1) * sizeof(*out));
	if (!s.table || !s.seqs || !canon || !out)
		goto out;

	for (i = 0; i < nr_funcs; i++)
		canon[i] = seq_intern(&s, &funcs[i]);
	/* Sorting moves the sequences: remember where each one went. */
	for (i = 0; i < s.nr_seqs; i++)
		s.seqs[i].slot = i;
	qsort_r(s.seqs, s.nr_seqs, sizeof(*s.seqs), seq_cmp, (void *)s.rows);
	/* The hash table is done with: it maps to sorted places now. */
	for (i = 0; i < s.nr_seqs; i++)
		s.table[s.seqs[i].slot] = i;
	used = seqs_place(&s, out);
	for (i = 0; i < nr_funcs; i++)
		funcs[i].first_row = s.seqs[s.table[canon[i]]].slot;

	free(*rowsp);
	*rowsp = realloc(out, (size_t)(used ?: 1) * sizeof(*out)) ?: out;
	*nr_rowsp = used;
	out = NULL;
	err = 0;
out:
	free(out);
	free(canon);
	free(s.seqs);
	free(s.table);
	return err;
}
