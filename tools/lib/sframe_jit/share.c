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
 *
 * The sequences are interned one by one as they are made
 * (sframe_jit__share_seq()): a sequence seen before is dropped at once,
 * so the rows of a conversion stay those of its distinct sequences, and
 * the ones just written are still in the cache when they are hashed.
 * Prefixes are found afterwards (sframe_jit__share_place()) by looking
 * up each proper prefix of each sequence, whose hash is a by-product of
 * hashing the sequence row by row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

#define NO_SEQ		UINT32_MAX
#define HASH_SEED	0x9e3779b97f4a7c15ULL
/*
 * The bitmap of prefixes_mark(): eight bits or more per sequence, from
 * 2^6 bits (one word) to 2^19 (64 KiB).  Sized by the sequences: a JIT's
 * section of one function has one, and clearing 64 KiB for it was most
 * of its conversion (66,000 of 84,000 instructions a function).
 */
#define PREFIX_BITS_MIN		6
#define PREFIX_BITS_MAX		19
#define PREFIX_BITS_PER_SEQ	3

/* A distinct sequence: where its rows are, and where they go. */
struct seq {
	uint64_t hash;
	uint32_t first;
	uint32_t nr;
	uint32_t longer;	/* a sequence it begins, or NO_SEQ */
	uint32_t slot;
};

struct sframe_jit__share {
	struct seq *seqs;
	uint32_t nr_seqs;
	uint32_t cap;
	uint64_t *table;	/* open addressing: see entry() */
	uint32_t mask;
};

/*
 * A table entry: the sequence's index + 1 (0 is a free entry) below the
 * top half of its hash, so that a probe rarely reads a sequence that
 * cannot match: the table is small, the sequences are not.
 */
static uint64_t entry(uint64_t hash, uint32_t idx)
{
	return (hash & ~0xffffffffULL) | (idx + 1);
}

static uint32_t entry_idx(uint64_t e)
{
	return (uint32_t)e - 1;
}

/* Field by field: the structure's padding is not part of a row. */
static bool row_eq(const struct sframe_jit_row *a,
		   const struct sframe_jit_row *b)
{
	return a->start_off == b->start_off && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->cfa_base == b->cfa_base && a->flags == b->flags;
}

static bool rows_eq(const struct sframe_jit_row *a,
		    const struct sframe_jit_row *b, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (!row_eq(&a[i], &b[i]))
			return false;
	return true;
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

/*
 * The running hash after one more row: its two words of fields folded
 * into one step, the second multiplied so that no field cancels one of
 * the first (the hash only spreads: equality is checked row by row).
 */
static uint64_t hash_row(uint64_t h, const struct sframe_jit_row *r)
{
	uint64_t a = (uint64_t)r->start_off << 32 | (uint32_t)r->cfa_off;
	uint64_t b = (uint64_t)(uint16_t)r->ra_off << 32 |
		     (uint32_t)(uint16_t)r->fp_off << 16 |
		     (uint32_t)r->cfa_base << 8 | r->flags;

	return mix(h, a ^ b * 0x9e3779b97f4a7c15ULL);
}

/* The hash of a sequence of @nr rows, from the running hash @h. */
static uint64_t hash_end(uint64_t h, uint32_t nr)
{
	return mix(h, nr);
}

static uint64_t seq_hash(const struct sframe_jit_row *r, uint32_t nr)
{
	uint64_t h = HASH_SEED;
	uint32_t i;

	for (i = 0; i < nr; i++)
		h = hash_row(h, &r[i]);
	return hash_end(h, nr);
}

/* The entry of the table where @hash is, or the free one where it goes. */
static uint64_t *seq_find(struct sframe_jit__share *s,
			  const struct sframe_jit_row *rows,
			  const struct sframe_jit_row *r, uint32_t nr,
			  uint64_t hash)
{
	uint64_t tag = entry(hash, 0) - 1;
	uint32_t h = hash & s->mask;
	const struct seq *q;

	for (; s->table[h]; h = (h + 1) & s->mask) {
		if ((s->table[h] & ~0xffffffffULL) != tag)
			continue;
		q = &s->seqs[entry_idx(s->table[h])];
		if (q->hash == hash && q->nr == nr &&
		    rows_eq(rows + q->first, r, nr))
			break;
	}
	return &s->table[h];
}

static int table_grow(struct sframe_jit__share *s)
{
	uint32_t size = (s->mask + 1) * 2, i, h;
	uint64_t *t;

	if (size < s->mask + 1)
		return -E2BIG;
	t = calloc(size, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->nr_seqs; i++) {
		for (h = s->seqs[i].hash & (size - 1); t[h];
		     h = (h + 1) & (size - 1))
			;
		t[h] = entry(s->seqs[i].hash, i);
	}
	free(s->table);
	s->table = t;
	s->mask = size - 1;
	return 0;
}

/**
 * sframe_jit__share_new() - an empty set of sequences
 * @hint: about how many functions there will be.
 * @sp: the set on success, for sframe_jit__share_free().
 *
 * Return: 0 or -ENOMEM.
 */
int sframe_jit__share_new(uint32_t hint, struct sframe_jit__share **sp)
{
	struct sframe_jit__share *s = calloc(1, sizeof(*s));
	uint32_t size = 64;

	while (size < hint && size < 1U << 30)
		size *= 2;
	if (!s)
		return -ENOMEM;
	s->table = calloc(size, sizeof(*s->table));
	if (!s->table) {
		free(s);
		return -ENOMEM;
	}
	s->mask = size - 1;
	*sp = s;
	return 0;
}

/**
 * sframe_jit__share_free() - free a set of sequences
 * @s: the set, or NULL.
 */
void sframe_jit__share_free(struct sframe_jit__share *s)
{
	if (!s)
		return;
	free(s->seqs);
	free(s->table);
	free(s);
}

/**
 * sframe_jit__share_seq() - intern the last sequence of a row array
 * @s: the set.
 * @r: the rows; those from @first on are the sequence.
 * @first: where it starts, after every sequence interned before.
 *
 * A sequence equal to one interned before is dropped from @r; a new one
 * stays where it is.
 *
 * Return: the sequence's index, for sframe_jit__share_place(); -ENOMEM;
 * -E2BIG.
 */
int64_t sframe_jit__share_seq(struct sframe_jit__share *s,
			      struct sframe_jit__rows *r, uint32_t first)
{
	uint32_t nr = r->nr - first;
	uint64_t hash = seq_hash(r->rows + first, nr), *slot;
	int err;

	slot = seq_find(s, r->rows, r->rows + first, nr, hash);
	if (*slot) {
		r->nr = first;
		return entry_idx(*slot);
	}
	if (s->nr_seqs >= (s->mask + 1) / 2) {
		err = table_grow(s);
		if (err)
			return err;
		slot = seq_find(s, r->rows, r->rows + first, nr, hash);
	}
	err = sframe_jit__grow((void **)&s->seqs, &s->cap, s->nr_seqs,
			       sizeof(*s->seqs));
	if (err)
		return err;
	s->seqs[s->nr_seqs] = (struct seq) {
		.hash	= hash,
		.first	= first,
		.nr	= nr,
		.longer	= NO_SEQ,
	};
	*slot = entry(hash, s->nr_seqs);
	return s->nr_seqs++;
}

/*
 * Mark each sequence that a longer one begins with, by that one.  Most
 * prefixes are no sequence of their own: a bit per hash, in a bitmap
 * small enough to stay in the cache, rules most of them out before the
 * table is read.
 */
static void prefixes_mark(struct sframe_jit__share *s,
			  const struct sframe_jit_row *rows, uint64_t *bits,
			  unsigned int order)
{
	uint64_t h, hash, e;
	uint32_t i, k, b;

	for (i = 0; i < s->nr_seqs; i++) {
		b = s->seqs[i].hash >> (64 - order);
		bits[b / 64] |= 1ULL << (b % 64);
	}
	for (i = 0; i < s->nr_seqs; i++) {
		const struct seq *q = &s->seqs[i];

		h = HASH_SEED;
		for (k = 1; k < q->nr; k++) {
			h = hash_row(h, &rows[q->first + k - 1]);
			hash = hash_end(h, k);
			b = hash >> (64 - order);
			if (!(bits[b / 64] & (1ULL << (b % 64))))
				continue;
			e = *seq_find(s, rows, rows + q->first, k, hash);
			if (e && s->seqs[entry_idx(e)].longer == NO_SEQ)
				s->seqs[entry_idx(e)].longer = i;
		}
	}
}

/* log2 of the bitmap's bits for @nr sequences. */
static unsigned int prefix_bits_order(uint32_t nr)
{
	unsigned int order = PREFIX_BITS_MIN;

	while (order < PREFIX_BITS_MAX &&
	       (1ULL << order) < (uint64_t)nr << PREFIX_BITS_PER_SEQ)
		order++;
	return order;
}

/* The slots of a sequence: those of the longest one it begins. */
static uint32_t seq_slot(const struct sframe_jit__share *s, uint32_t i)
{
	while (s->seqs[i].longer != NO_SEQ)
		i = s->seqs[i].longer;
	return s->seqs[i].slot;
}

/**
 * sframe_jit__share_place() - lay the interned sequences out
 * @s: the set.
 * @r: the rows the sequences were interned from; compacted to those
 *	of the sequences no other one begins with.
 * @funcs: functions whose first_row is a sequence's index, as
 *	sframe_jit__share_seq() returned it; rewritten to index @r.
 * @nr_funcs: their number.
 *
 * Every function keeps rows equal, field by field, to those it had.
 *
 * Return: 0, or -ENOMEM with nothing changed.
 */
int sframe_jit__share_place(struct sframe_jit__share *s,
			    struct sframe_jit__rows *r,
			    struct sframe_jit__func *funcs, uint32_t nr_funcs)
{
	unsigned int order = prefix_bits_order(s->nr_seqs);
	uint64_t *bits = calloc(1 << order >> 6, sizeof(*bits));
	uint32_t i, used = 0;

	if (!bits)
		return -ENOMEM;
	prefixes_mark(s, r->rows, bits, order);
	free(bits);
	/* In the order of the rows, so that each move goes down or stays. */
	for (i = 0; i < s->nr_seqs; i++) {
		struct seq *q = &s->seqs[i];

		if (q->longer != NO_SEQ)
			continue;
		q->slot = used;
		memmove(r->rows + used, r->rows + q->first,
			q->nr * sizeof(*r->rows));
		used += q->nr;
	}
	r->nr = used;
	for (i = 0; i < nr_funcs; i++)
		funcs[i].first_row = seq_slot(s, funcs[i].first_row);
	return 0;
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
	struct sframe_jit__rows out = { 0 };
	struct sframe_jit__share *s = NULL;
	struct sframe_jit__func *f = NULL;
	uint32_t i, first;
	uint64_t total = 0;
	int64_t id;
	int err;

	if (!nr_funcs)
		return 0;
	if (nr_funcs >= 1U << 30)
		return -EINVAL;
	/* Functions may share input rows: room for each one's own. */
	for (i = 0; i < nr_funcs; i++)
		total += funcs[i].nr_rows;
	if (total > UINT32_MAX / 2)
		return -EINVAL;
	err = -ENOMEM;
	f = malloc((size_t)nr_funcs * sizeof(*f));
	out.cap = total ?: 1;
	out.rows = malloc((size_t)out.cap * sizeof(*out.rows));
	if (!f || !out.rows || sframe_jit__share_new(2 * nr_funcs, &s))
		goto out;
	for (i = 0; i < nr_funcs; i++) {
		first = out.nr;
		memcpy(out.rows + first, *rowsp + funcs[i].first_row,
		       funcs[i].nr_rows * sizeof(*out.rows));
		out.nr += funcs[i].nr_rows;
		id = sframe_jit__share_seq(s, &out, first);
		if (id < 0) {
			err = id;
			goto out;
		}
		f[i] = funcs[i];
		f[i].first_row = id;
	}
	err = sframe_jit__share_place(s, &out, f, nr_funcs);
	if (err)
		goto out;
	memcpy(funcs, f, (size_t)nr_funcs * sizeof(*f));
	free(*rowsp);
	*rowsp = realloc(out.rows, (size_t)(out.nr ?: 1) *
				   sizeof(*out.rows)) ?: out.rows;
	*nr_rowsp = out.nr;
	out.rows = NULL;
	err = 0;
out:
	sframe_jit__share_free(s);
	free(out.rows);
	free(f);
	return err;
}
