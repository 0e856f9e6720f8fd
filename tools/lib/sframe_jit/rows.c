// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The growing row array of a conversion.  An object's conversion knows
 * about how many rows it makes and reserves them at once; one that is
 * large gets a mapping of its own (bigbuf.c), and a JIT's table of a
 * few functions a malloc()ed block.
 */
#include <stdlib.h>

#include "sframe_jit_internal.h"

static size_t rows_bytes(uint32_t nr)
{
	return (size_t)(nr ?: 1) * sizeof(struct sframe_jit_row);
}

/**
 * sframe_jit__rows_reserve() - room for @cap rows in an empty array
 * @r: the rows, with none yet.
 * @cap: how many.
 *
 * Return: 0 or -ENOMEM.
 */
int sframe_jit__rows_reserve(struct sframe_jit__rows *r, uint32_t cap)
{
	r->rows = sframe_jit__buf_alloc(rows_bytes(cap), &r->big);
	if (!r->rows)
		return -ENOMEM;
	r->cap = cap ?: 1;
	r->nr = 0;
	return 0;
}

/**
 * sframe_jit__rows_grow() - make room for one more row
 * @r: the rows.
 *
 * Return: 0, -ENOMEM or -E2BIG.
 */
int sframe_jit__rows_grow(struct sframe_jit__rows *r)
{
	return sframe_jit__buf_grow((void **)&r->rows, &r->cap, r->nr,
				    sizeof(*r->rows), &r->big);
}

/**
 * sframe_jit__rows_trim() - give back the room past the last row
 * @r: the rows.  On failure they keep their room.
 */
void sframe_jit__rows_trim(struct sframe_jit__rows *r)
{
	struct sframe_jit_row *p;

	if (r->big)
		p = sframe_jit__big_resize(r->rows, rows_bytes(r->cap),
					   rows_bytes(r->nr));
	else
		p = realloc(r->rows, rows_bytes(r->nr));
	if (p) {
		r->rows = p;
		r->cap = r->nr ?: 1;
	}
}

/**
 * sframe_jit__rows_free() - free the array
 * @r: the rows; empty afterwards.
 */
void sframe_jit__rows_free(struct sframe_jit__rows *r)
{
	sframe_jit__buf_free(r->rows, rows_bytes(r->cap), r->big);
	*r = (struct sframe_jit__rows) { 0 };
}
