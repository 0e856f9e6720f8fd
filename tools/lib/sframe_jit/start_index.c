// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Descriptors by start address, for sframe_jit_remove().  A code
 * cache's collector frees methods in the order it finds them dead, not
 * in address order, and a binary search over 100,000 descriptors was
 * most of such a removal's cost.  The index is a hash table of
 * descriptor indices, open-addressed with linear probing.
 *
 * It is a hint, never the truth: a slot is believed only when the
 * descriptor it names is published and starts at the address asked for.
 * Starts are unique in a registry, so such a descriptor is the one
 * wanted, whatever moved since the slot was written; a lookup that
 * finds none leaves the caller to its binary search.  A path that moves
 * descriptors and forgets to say so costs time, not a wrong removal.
 *
 * Nothing of it is paid before it is needed: the table is made once
 * the removal hint (registry.c, remove_find()) has missed a few times,
 * so that a JIT that removes in address order, at a steady step, or
 * never, has none; appends are entered by the next lookup rather than
 * by the append, whose path is kept short (Documentation/sframe_jit.rst,
 * "The cost of a call").  A
 * rewrite that moves descriptors from index i on (an insertion below
 * the last function, compaction) lowers the mark below which every
 * descriptor has its slot; slots of moved descriptors stay until the
 * table fills and is made again.  If the table cannot be allocated,
 * removals search as they did without it.
 */
#include <stdlib.h>

#include "sframe_jit_internal.h"

/* The fewest slots; and at least three per descriptor, at most six. */
#define INDEX_MIN_SHIFT		(64 - 10)
#define INDEX_SLOTS_PER_FDE	3

/*
 * Enter descriptors [@from, @to), of the layout @compact says.  What the
 * loop reads of the registry is copied out first: a store into a slot
 * could be one into any uint32_t for the compiler, which would load the
 * registry's fields again at each descriptor.
 */
static __always_inline void index_put_as(struct sframe_jit *reg,
					 uint32_t from, uint32_t to,
					 bool compact)
{
	const size_t stride = reg->l.fde_stride;
	const unsigned char *p = reg->l.fdes + (size_t)from * stride;
	uint32_t *slot = reg->index.slot, mask = reg->index.mask;
	uint32_t shift = reg->index.shift, i, h;
	uint64_t base = reg->text_start;

	for (i = from; i < to; i++, p += stride) {
		h = sframe_jit__index_slot(sframe_jit__fde_start_at(p, base,
								    compact),
					   shift);
		while (slot[h])
			h = (h + 1) & mask;
		slot[h] = i + 1;
	}
	reg->index.used += to - from;
}

static void index_put(struct sframe_jit *reg, uint32_t from, uint32_t to)
{
	if (reg->l.compact)
		index_put_as(reg, from, to, true);
	else
		index_put_as(reg, from, to, false);
}

/* A new table for the published descriptors, none entered yet. */
static int index_make(struct sframe_jit *reg)
{
	struct sframe_jit_index *x = &reg->index;
	uint64_t want = (uint64_t)reg->nr_fdes * INDEX_SLOTS_PER_FDE;
	uint32_t shift = INDEX_MIN_SHIFT;
	uint32_t *slot;

	while (shift > 32 && (~0ull >> shift) < want)
		shift--;
	if ((~0ull >> shift) < want)
		return -ENOMEM;
	slot = calloc((size_t)(~0ull >> shift) + 1, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	free(x->slot);
	x->slot = slot;
	x->shift = shift;
	x->mask = (uint32_t)(~0ull >> shift);
	x->used = 0;
	x->entered = 0;
	return 0;
}

/*
 * Enter what was published since the last lookup, in a new table when
 * the old one would pass half full (moved descriptors' slots count).
 */
static int index_catch_up(struct sframe_jit *reg)
{
	struct sframe_jit_index *x = &reg->index;
	uint32_t n = reg->nr_fdes;

	if (x->entered > n)
		x->entered = n;
	if (!x->slot || x->used + (n - x->entered) > x->mask / 2) {
		if (index_make(reg))
			return -ENOMEM;
	}
	index_put(reg, x->entered, n);
	x->entered = n;
	return 0;
}

/**
 * sframe_jit__index_find_slow() - the descriptor that starts at an address
 * @reg: the registry, its lock held.
 * @start: the address.
 *
 * Enters what was published since the last lookup first, making the
 * table if there is none or it would pass half full.
 *
 * Return: as sframe_jit__index_probe(); nr_fdes also when there is no
 * memory for a table.
 */
uint32_t sframe_jit__index_find_slow(struct sframe_jit *reg, uint64_t start)
{
	if (!sframe_jit__index_ready(reg) && index_catch_up(reg))
		return reg->nr_fdes;
	return sframe_jit__index_probe(reg, start, reg->l.compact);
}

/**
 * sframe_jit__index_free() - drop the index
 * @reg: the registry, its lock held or being destroyed.
 *
 * The next lookup makes a new one.
 */
void sframe_jit__index_free(struct sframe_jit *reg)
{
	free(reg->index.slot);
	reg->index = (struct sframe_jit_index) { 0 };
}
