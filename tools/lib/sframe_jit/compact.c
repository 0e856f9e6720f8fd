// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What compact records need besides the writer: the pieces a function
 * becomes, since a compact row's start offset has 16 bits and a compact
 * descriptor's row count too, and the distinct rules the rows name.
 *
 * A piece starts at one of the function's rows, whose rule is the one
 * in force there, and takes the rows after it while their offsets from
 * it fit in 16 bits and their number in the count: the first piece is
 * the function's first rows, so it keeps the shared rows as they are,
 * and only the later pieces, of rare large functions, need rows of
 * their own, rebased.  See "Compact registries" in
 * Documentation/sframe_jit.rst.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

#define RULES_TABLE_MIN	1024

/**
 * sframe_jit__piece_next() - the piece of a function from one of its rows
 * @fn: the function.
 * @rows: its rows, @fn->nr_rows of them, checked.
 * @first: the row the piece starts at: 0, or the end of the last piece.
 * @p: filled in.
 *
 * Return: the row after the piece, where the next one starts;
 * @fn->nr_rows after the last.
 */
uint32_t sframe_jit__piece_next(const struct sframe_jit__func *fn,
				const struct sframe_jit_row *rows,
				uint32_t first, struct sframe_jit__piece *p)
{
	uint32_t base = rows[first].start_off, end = first + 1;

	if (!first && fn->nr_rows <= SFRAME_JIT__CFDE_MAX_ROWS &&
	    rows[fn->nr_rows - 1].start_off <= SFRAME_JIT__CFRE_MAX_OFF) {
		end = fn->nr_rows;
	} else {
		while (end < fn->nr_rows &&
		       end - first < SFRAME_JIT__CFDE_MAX_ROWS &&
		       rows[end].start_off - base <= SFRAME_JIT__CFRE_MAX_OFF)
			end++;
	}
	p->off = base;
	p->size = (end < fn->nr_rows ? rows[end].start_off : fn->size) - base;
	p->first = first;
	p->end = end;
	return end;
}

struct rule_slot {
	uint64_t key;
	uint32_t key2;
	uint32_t idx1;		/* the rule's index + 1; 0 for a free slot */
};

struct rule_set {
	struct rule_slot *table;
	uint32_t mask;
	struct sframe_jit_rule *rules;
	uint32_t nr;
	uint32_t cap;
};

/* An empty set of rules: 0 or -ENOMEM. */
static int rules_new(struct rule_set **rp)
{
	struct rule_set *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->table = calloc(RULES_TABLE_MIN, sizeof(*r->table));
	if (!r->table) {
		free(r);
		return -ENOMEM;
	}
	r->mask = RULES_TABLE_MIN - 1;
	*rp = r;
	return 0;
}

static void rules_free(struct rule_set *r)
{
	if (!r)
		return;
	free(r->table);
	free(r->rules);
	free(r);
}

/* A row's rule as two words: every field but the start offset. */
static uint64_t rule_key(const struct sframe_jit_row *row, uint32_t *key2)
{
	*key2 = (uint32_t)row->cfa_base | (uint32_t)row->flags << 8;
	return (uint64_t)(uint32_t)row->cfa_off |
	       (uint64_t)(uint16_t)row->ra_off << 32 |
	       (uint64_t)(uint16_t)row->fp_off << 48;
}

static uint32_t rule_hash(uint64_t key, uint32_t key2)
{
	uint64_t h = (key ^ (uint64_t)key2 << 29) * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h ^ h >> 32);
}

static struct rule_slot *rule_find(struct rule_set *r, uint64_t key,
				   uint32_t key2)
{
	uint32_t h = rule_hash(key, key2) & r->mask;

	while (r->table[h].idx1 &&
	       (r->table[h].key != key || r->table[h].key2 != key2))
		h = (h + 1) & r->mask;
	return &r->table[h];
}

static int rules_table_grow(struct rule_set *r)
{
	struct rule_slot *old = r->table;
	uint32_t size = (r->mask + 1) * 2, i;

	r->table = calloc(size, sizeof(*r->table));
	if (!r->table) {
		r->table = old;
		return -ENOMEM;
	}
	for (i = 0; i <= r->mask; i++) {
		uint32_t m = size - 1, h;

		if (!old[i].idx1)
			continue;
		for (h = rule_hash(old[i].key, old[i].key2) & m;
		     r->table[h].idx1; h = (h + 1) & m)
			;
		r->table[h] = old[i];
	}
	free(old);
	r->mask = size - 1;
	return 0;
}

static int64_t rule_add(struct rule_set *r,
			const struct sframe_jit_row *row,
			uint64_t key, uint32_t key2)
{
	int err;

	if (r->nr >= SFRAME_JIT_MAX_RULES)
		return -ENOSPC;
	if ((r->nr + 1) * 2 > r->mask + 1) {
		err = rules_table_grow(r);
		if (err)
			return err;
	}
	err = sframe_jit__grow((void **)&r->rules, &r->cap, r->nr,
			       sizeof(*r->rules));
	if (err)
		return err;
	r->rules[r->nr] = (struct sframe_jit_rule) {
		.cfa_off	= row->cfa_off,
		.ra_off		= row->ra_off,
		.fp_off		= row->fp_off,
		.cfa_base	= row->cfa_base,
		.flags		= row->flags,
	};
	*rule_find(r, key, key2) = (struct rule_slot) {
		.key	= key,
		.key2	= key2,
		.idx1	= r->nr + 1,
	};
	return r->nr++;
}

/*
 * The index of a row's rule, added if new; -ENOSPC past
 * SFRAME_JIT_MAX_RULES rules, -ENOMEM.
 */
static int64_t rule_index(struct rule_set *r,
			  const struct sframe_jit_row *row)
{
	uint32_t key2;
	uint64_t key = rule_key(row, &key2);
	struct rule_slot *s = rule_find(r, key, key2);

	if (s->idx1)
		return s->idx1 - 1;
	return rule_add(r, row, key, key2);
}

/**
 * sframe_jit__row_rules_make() - the rule of each row, deduplicated
 * @rows: the rows.
 * @nr_rows: their number.
 * @rr: filled in on success; free it with sframe_jit__row_rules_free().
 *
 * Return: 0; -ENOSPC past SFRAME_JIT_MAX_RULES distinct rules; -ENOMEM.
 */
int sframe_jit__row_rules_make(const struct sframe_jit_row *rows,
			       uint32_t nr_rows,
			       struct sframe_jit__row_rules *rr)
{
	struct rule_set *r;
	int64_t idx = 0;
	uint32_t i;
	int err;

	memset(rr, 0, sizeof(*rr));
	rr->idx = malloc(((size_t)nr_rows ?: 1) * sizeof(*rr->idx));
	if (!rr->idx)
		return -ENOMEM;
	err = rules_new(&r);
	if (err) {
		sframe_jit__row_rules_free(rr);
		return err;
	}
	for (i = 0; !err && i < nr_rows; i++) {
		idx = rule_index(r, &rows[i]);
		if (idx < 0)
			err = idx;
		else
			rr->idx[i] = idx;
	}
	if (err) {
		rules_free(r);
		sframe_jit__row_rules_free(rr);
		return err;
	}
	/* The set's array of rules is the result's: keep it. */
	rr->rules = r->rules;
	rr->nr_rules = r->nr;
	r->rules = NULL;
	rules_free(r);
	return 0;
}

/**
 * sframe_jit__row_rules_free() - free what sframe_jit__row_rules_make() made
 * @rr: the rules; zeroed.
 */
void sframe_jit__row_rules_free(struct sframe_jit__row_rules *rr)
{
	free(rr->idx);
	free(rr->rules);
	memset(rr, 0, sizeof(*rr));
}

/**
 * sframe_jit__pieces_count() - the pieces of functions, and their rows
 * @funcs: functions whose rows are @rows[first_row] on, checked.
 * @nr_funcs: their number.
 * @rows: the rows of all of them.
 * @caps: its @nr_fdes counts the pieces, its @nr_rows the rows of the
 *	pieces after the first of each function.
 */
void sframe_jit__pieces_count(const struct sframe_jit__func *funcs,
			      uint32_t nr_funcs,
			      const struct sframe_jit_row *rows,
			      struct sframe_jit__compact_caps *caps)
{
	struct sframe_jit__piece p;
	uint32_t i, r;

	for (i = 0; i < nr_funcs; i++) {
		const struct sframe_jit_row *fr = rows + funcs[i].first_row;

		for (r = 0; r < funcs[i].nr_rows; r = p.end) {
			sframe_jit__piece_next(&funcs[i], fr, r, &p);
			caps->nr_fdes++;
			if (r)
				caps->nr_rows += p.end - p.first;
		}
	}
}

/**
 * sframe_jit__compact_caps() - what compact records of functions take
 * @funcs: functions whose rows are @rows[first_row] on, checked.
 * @nr_funcs: their number.
 * @rows: the rows of all of them, which they may share.
 * @nr_rows: the number of @rows.
 * @caps: filled in.
 * @rr: filled in with the rule of each row, for the import to reuse;
 *	free it with sframe_jit__row_rules_free().
 *
 * Return: 0; -ENOSPC past SFRAME_JIT_MAX_RULES rules; -ENOMEM.
 */
int sframe_jit__compact_caps(const struct sframe_jit__func *funcs,
			     uint32_t nr_funcs,
			     const struct sframe_jit_row *rows,
			     uint32_t nr_rows,
			     struct sframe_jit__compact_caps *caps,
			     struct sframe_jit__row_rules *rr)
{
	int err;

	memset(caps, 0, sizeof(*caps));
	err = sframe_jit__row_rules_make(rows, nr_rows, rr);
	if (err)
		return err;
	caps->nr_rules = rr->nr_rules;
	caps->nr_rows = nr_rows;
	sframe_jit__pieces_count(funcs, nr_funcs, rows, caps);
	return 0;
}
