/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer targets of the SFrame decoder share: reading the
 * fuzzer's input as a stream of little-endian fields (zeros once it is
 * used up, so every input is a valid program), and the check that ends
 * the run with a report when an invariant breaks.
 */
#ifndef _SFRAME_FUZZ_H
#define _SFRAME_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"

/* A broken invariant: print it and abort, which libFuzzer reports. */
#define FUZZ_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "invariant broken at %s:%d: %s\n  ",	\
			__FILE__, __LINE__, #cond);			\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

struct fuzz_in {
	const u8 *p;
	size_t left;
};

static inline u8 fin_u8(struct fuzz_in *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static inline u64 fin_uint(struct fuzz_in *in, unsigned int bytes)
{
	u64 v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		v |= (u64)fin_u8(in) << (8 * i);
	return v;
}

static inline u16 fin_u16(struct fuzz_in *in)
{
	return fin_uint(in, 2);
}

static inline u32 fin_u32(struct fuzz_in *in)
{
	return fin_uint(in, 4);
}

static inline u64 fin_u64(struct fuzz_in *in)
{
	return fin_uint(in, 8);
}

/* Little-endian loads from a byte buffer, independent of the shims. */
static inline u64 fz_le(const u8 *p, unsigned int bytes)
{
	u64 v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

/* Sign-extend the low @bytes bytes of @v. */
static inline s64 fz_sext(u64 v, unsigned int bytes)
{
	unsigned int shift = 64 - 8 * bytes;

	return (s64)(v << shift) >> shift;
}

static inline const char *fz_result(int r)
{
	static const char *const names[] = {
		"hit", "none", "tombstone", "retry", "malformed",
	};

	return r >= 0 && r < 5 ? names[r] : "(out of range)";
}

static inline int fz_row_eq(const struct sframe_row *a,
			    const struct sframe_row *b)
{
	return a->cfa_base == b->cfa_base &&
	       a->ra_undefined == b->ra_undefined &&
	       a->fp_saved == b->fp_saved && a->signal == b->signal &&
	       a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off;
}

/* Room for fz_row_str(): its text and seven numbers of up to 11 chars. */
#define FZ_ROW_STR_LEN	160

/* @r as text in @buf, for a report. */
static inline const char *fz_row_str(const struct sframe_row *r, char *buf,
				     size_t len)
{
	snprintf(buf, len,
		 "{base %u cfa %+d ra_undef %d ra %+d fp_saved %d fp %+d signal %d}",
		 r->cfa_base, r->cfa_off, r->ra_undefined, r->ra_off,
		 r->fp_saved, r->fp_off, r->signal);
	return buf;
}

#endif /* _SFRAME_FUZZ_H */
