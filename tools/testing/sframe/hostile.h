/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Hostile SFrame sections and the stacks that revisit them, for the
 * bound on a sample's work: nmi_bench.c counts the instructions of one
 * sample's walk over them, walk_test.c checks the caps and the budget.
 *
 * A section is built function by function (hs_add()), laid out from
 * offset 0 of its text, each function's rows starting at 0, 1, 2, ...
 * bytes into it (or, for a version 1 PCMASK function, with the masks 0,
 * 1, 2, ...), every row CFA = SP + 8 with the RA at CFA - 8: a frame of
 * one word, its return address.  A stack of N copies of the same return
 * address is then N frames of the same function, each looked up anew.
 */
#ifndef _SFRAME_HOSTILE_H
#define _SFRAME_HOSTILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct hs_sec {
	uint8_t version;
	uint32_t nr_funcs;
	uint32_t nr_rows;
	uint32_t text_len;	/* bytes of text the functions cover */
	uint8_t *fdes;
	size_t fdes_len;
	uint8_t *rows;
	size_t rows_len;
	uint8_t *data;		/* the section, after hs_finish() */
	size_t size;
};

static inline uint8_t *hs_grow(uint8_t *buf, size_t *len, size_t more)
{
	uint8_t *n = realloc(buf, *len + more);

	if (!n)
		abort();
	*len += more;
	return n;
}

static inline void hs_le(uint8_t *p, uint64_t v, unsigned int bytes)
{
	while (bytes--) {
		*p++ = v;
		v >>= 8;
	}
}

static inline unsigned int hs_fde_size(const struct hs_sec *s)
{
	return s->version == 1 ? 17 : 20;
}

/*
 * Append a function of @size bytes and @nr rows (@mask: version 1
 * PCMASK).  Returns its offset in the text.
 */
static inline uint32_t hs_add(struct hs_sec *s, uint32_t size, uint32_t nr,
			      bool mask)
{
	uint32_t start = s->text_len, i;
	size_t at = s->fdes_len;
	uint8_t *f, *r;

	s->fdes = hs_grow(s->fdes, &s->fdes_len, hs_fde_size(s));
	f = s->fdes + at;
	memset(f, 0, hs_fde_size(s));
	hs_le(f, start, 4);
	hs_le(f + 4, size, 4);
	hs_le(f + 8, s->rows_len, 4);
	hs_le(f + 12, nr, 4);
	f[16] = 1 | (mask ? 0x10 : 0);		/* 2-byte row starts */
	at = s->rows_len;
	s->rows = hs_grow(s->rows, &s->rows_len, (size_t)nr * 4);
	for (i = 0; i < nr; i++) {
		r = s->rows + at + (size_t)i * 4;
		hs_le(r, i, 2);
		r[2] = 0x03;			/* SP, one 1-byte word */
		r[3] = 8;			/* CFA = SP + 8 */
	}
	s->nr_funcs++;
	s->nr_rows += nr;
	s->text_len += size;
	return start;
}

/* Lay the section out: header, descriptors, rows. */
static inline void hs_finish(struct hs_sec *s)
{
	uint8_t *p;

	s->size = 28 + s->fdes_len + s->rows_len;
	s->data = calloc(1, s->size);
	if (!s->data)
		abort();
	p = s->data;
	hs_le(p, 0xdee2, 2);
	p[2] = s->version;
	p[3] = 0x1;			/* sorted */
	p[4] = 3;			/* AMD64 */
	p[6] = 0xf8;			/* RA at CFA - 8 */
	hs_le(p + 8, s->nr_funcs, 4);
	hs_le(p + 12, s->nr_rows, 4);
	hs_le(p + 16, s->rows_len, 4);
	hs_le(p + 20, 0, 4);
	hs_le(p + 24, s->fdes_len, 4);
	memcpy(p + 28, s->fdes, s->fdes_len);
	memcpy(p + 28 + s->fdes_len, s->rows, s->rows_len);
	free(s->fdes);
	free(s->rows);
	s->fdes = NULL;
	s->rows = NULL;
}

/* A stack of @n frames returning to @ra, then a zero return address. */
static inline void hs_stack(uint64_t *words, size_t n, uint64_t ra)
{
	size_t i;

	for (i = 0; i < n; i++)
		words[i] = ra;
	words[n] = 0;
}

#endif /* _SFRAME_HOSTILE_H */
