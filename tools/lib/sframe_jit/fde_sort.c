// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The FDEs of an object in address order, for the CFI conversion.
 *
 * ld writes them in runs of increasing addresses, one per input section
 * order (libLLVM-14: 94994 FDEs in 595 runs), which a comparison sort
 * does not exploit and which a radix sort does not need: the starts lie
 * in a span of the object's size, so two or three passes of 11 bits
 * over a key of 16 bytes order them, and one gather moves the FDEs.
 * Equal starts, rare, are then ordered by end, so that the order is the
 * one a sort by start and end gives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

#define DIGIT_BITS	11
#define DIGITS		2048	/* 2^DIGIT_BITS */

struct key {
	uint64_t off;		/* start - the lowest start */
	uint32_t idx;
};

static unsigned int span_bits(uint64_t span)
{
	unsigned int bits = 0;

	while (span) {
		bits++;
		span >>= 1;
	}
	return bits;
}

/* One stable counting pass on the digit at @shift, from @in to @out. */
static void radix_pass(const struct key *in, struct key *out, uint32_t n,
		       unsigned int shift)
{
	uint32_t count[DIGITS] = { 0 }, i, sum = 0, c;

	for (i = 0; i < n; i++)
		count[(in[i].off >> shift) & (DIGITS - 1)]++;
	for (i = 0; i < DIGITS; i++) {
		c = count[i];
		count[i] = sum;
		sum += c;
	}
	for (i = 0; i < n; i++)
		out[count[(in[i].off >> shift) & (DIGITS - 1)]++] = in[i];
}

/* Equal starts by end: insertion in each run of them. */
static void ties_order(struct sframe_jit__fde *f, uint32_t n)
{
	struct sframe_jit__fde t;
	uint32_t i, j;

	for (i = 1; i < n; i++) {
		if (f[i].lo != f[i - 1].lo || f[i].hi >= f[i - 1].hi)
			continue;
		t = f[i];
		for (j = i; j && f[j - 1].lo == t.lo && f[j - 1].hi > t.hi; j--)
			f[j] = f[j - 1];
		f[j] = t;
	}
}

/**
 * sframe_jit__fdes_sort() - order FDEs by start, then end
 * @eh: the entries; their FDEs are replaced by a sorted array, and the
 *	old one freed.  Arrays of megabytes are mapped (bigbuf.c).
 *
 * Return: 0, or -ENOMEM with the FDEs unchanged.
 */
int sframe_jit__fdes_sort(struct sframe_jit__eh_frame *eh)
{
	struct sframe_jit__fde *fdes = eh->fdes, *out;
	uint32_t i, nr = eh->nr_fdes, cap = nr ?: 1;
	size_t keys_bytes = 2 * (size_t)cap * sizeof(struct key);
	uint64_t lo = UINT64_MAX, hi = 0;
	struct key *a, *b, *keys, *t;
	unsigned int shift, bits;
	bool keys_big, out_big;

	for (i = 0; i < nr; i++) {
		if (fdes[i].lo < lo)
			lo = fdes[i].lo;
		if (fdes[i].lo > hi)
			hi = fdes[i].lo;
	}
	keys = sframe_jit__buf_alloc(keys_bytes, &keys_big);
	out = sframe_jit__buf_alloc((size_t)cap * sizeof(*out), &out_big);
	if (!keys || !out) {
		sframe_jit__buf_free(keys, keys_bytes, keys_big);
		sframe_jit__buf_free(out, (size_t)cap * sizeof(*out), out_big);
		return -ENOMEM;
	}
	a = keys;
	b = a + nr;
	for (i = 0; i < nr; i++)
		a[i] = (struct key) { .off = fdes[i].lo - lo, .idx = i };
	bits = span_bits(nr ? hi - lo : 0);
	for (shift = 0; shift < bits; shift += DIGIT_BITS) {
		radix_pass(a, b, nr, shift);
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < nr; i++)
		out[i] = fdes[a[i].idx];
	ties_order(out, nr);
	sframe_jit__buf_free(keys, keys_bytes, keys_big);
	sframe_jit__buf_free(fdes, (size_t)eh->fdes_cap * sizeof(*fdes),
			     eh->fdes_big);
	eh->fdes = out;
	eh->fdes_cap = cap;
	eh->fdes_big = out_big;
	return 0;
}
