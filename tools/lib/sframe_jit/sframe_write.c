// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The SFrame encoder: a converted table written as a bare SFrame
 * version 2 section, for an agent that registers the objects of another
 * process with the kernel.  Documentation/sframe_jit.rst ("Writing an
 * SFrame section") gives the layout; import.c reads the same format
 * back, and the tests hold the two against each other.
 *
 * The kernel keeps one copy of a section for every process that
 * registers the same bytes, found by their digest, so the bytes depend
 * on the table and the section's address alone: every byte of the
 * buffer is written or left zero by calloc().
 */
#include <errno.h>
#include <stdlib.h>

#include "sframe_jit_internal.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_2		2
#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3
#define SFRAME_HDR_SIZE			28
#define SFRAME_V2_FDE_SIZE		20
#define SFRAME_FDE_TYPE_PCMASK		1

/* SFrame's CFA base register ids (the registry's are the other way). */
#define SFRAME_BASE_REG_FP		0
#define SFRAME_BASE_REG_SP		1

/* Where a call leaves the return address, fixed in the header. */
#define AMD64_RA_OFF			(-8)

/*
 * Widths of start addresses (an FDE's FRE type) and of offsets (an
 * FRE's offset size) share their codes: 1 << code bytes.
 */
#define WIDTH_1				0
#define WIDTH_2				1
#define WIDTH_4				2

#define ROW_FLAGS	(SFRAME_JIT_ROW_FP_SAVED | SFRAME_JIT_ROW_RA_UNDEFINED)

/* What the first pass finds: the sizes the header gives. */
struct sframe_size {
	uint64_t nr_fres;
	uint64_t fre_len;
};

static unsigned char *put_le(unsigned char *p, uint32_t v,
			     unsigned int width)
{
	unsigned int i;

	for (i = 0; i < 1U << width; i++)
		p[i] = v >> (8 * i);
	return p + (1U << width);
}

static unsigned int width_unsigned(uint32_t v)
{
	if (v <= UINT8_MAX)
		return WIDTH_1;
	return v <= UINT16_MAX ? WIDTH_2 : WIDTH_4;
}

static unsigned int width_signed(int32_t v)
{
	if (v >= INT8_MIN && v <= INT8_MAX)
		return WIDTH_1;
	return v >= INT16_MIN && v <= INT16_MAX ? WIDTH_2 : WIDTH_4;
}

/*
 * The offsets of a row: the CFA's, then the caller's FP's if saved.  The
 * RA's is the header's; an outermost row has none at all, which is how
 * version 2 (erratum 1) says that the return address is undefined.
 */
static unsigned int row_offsets(const struct sframe_jit_row *row,
				int32_t off[2])
{
	if (row->flags & SFRAME_JIT_ROW_RA_UNDEFINED)
		return 0;
	off[0] = row->cfa_off;
	if (!(row->flags & SFRAME_JIT_ROW_FP_SAVED))
		return 1;
	off[1] = row->fp_off;
	return 2;
}

static unsigned int offsets_width(const int32_t *off, unsigned int n)
{
	unsigned int width = WIDTH_1, i, w;

	for (i = 0; i < n; i++) {
		w = width_signed(off[i]);
		if (w > width)
			width = w;
	}
	return width;
}

/* Bytes of a row whose start address takes 1 << @addr_width bytes. */
static unsigned int fre_len(const struct sframe_jit_row *row,
			    unsigned int addr_width)
{
	int32_t off[2];
	unsigned int n = row_offsets(row, off);

	return (1U << addr_width) + 1 + n * (1U << offsets_width(off, n));
}

/* Rows the kernel's decoder takes, with the return address at CFA - 8. */
static int rows_check(const struct sframe_jit__func *fn,
		      const struct sframe_jit_row *rows)
{
	/* A stub's rows repeat: they start within one stub. */
	uint32_t limit = fn->stub_size ? fn->stub_size : fn->size;
	const struct sframe_jit_row *row;
	uint32_t r;

	for (r = 0; r < fn->nr_rows; r++) {
		row = &rows[r];
		if ((row->cfa_base != SFRAME_JIT_ROW_CFA_SP &&
		     row->cfa_base != SFRAME_JIT_ROW_CFA_FP) ||
		    (row->flags & ~ROW_FLAGS) || row->start_off >= limit ||
		    (r && row->start_off <= rows[r - 1].start_off))
			return -EINVAL;
		if (!(row->flags & SFRAME_JIT_ROW_RA_UNDEFINED) &&
		    row->ra_off != AMD64_RA_OFF)
			return -EOPNOTSUPP;
	}
	return 0;
}

/* The width of a function's start addresses: its last row's is largest. */
static unsigned int func_addr_width(const struct sframe_jit__func *fn,
				    const struct sframe_jit_row *rows)
{
	return fn->nr_rows ? width_unsigned(rows[fn->nr_rows - 1].start_off) :
			     WIDTH_1;
}

/*
 * func_start: the function's address relative to the section's, which
 * section_size() checked against the field.
 */
static int64_t func_start(const struct sframe_jit__func *fn, uint64_t vaddr)
{
	return (int64_t)(fn->start - vaddr);
}

/*
 * One function checked, after the one that ended at @prev_end (FDE_SORTED,
 * and no PC in two functions), and the bytes of its rows counted.
 */
static int func_measure(const struct sframe_jit__func *fn,
			const struct sframe_jit_row *rows, uint64_t vaddr,
			int64_t *prev_end, struct sframe_size *sz)
{
	int64_t rel = func_start(fn, vaddr);
	unsigned int width;
	uint32_t r;
	int err;

	/* rep_size is one byte. */
	if (fn->stub_size > UINT8_MAX)
		return -EINVAL;
	if (rel < INT32_MIN || rel > INT32_MAX)
		return -ERANGE;
	if (!fn->size || rel < *prev_end)
		return -EINVAL;
	err = rows_check(fn, rows);
	if (err)
		return err;
	*prev_end = rel + fn->size;
	width = func_addr_width(fn, rows);
	for (r = 0; r < fn->nr_rows; r++)
		sz->fre_len += fre_len(&rows[r], width);
	sz->nr_fres += fn->nr_rows;
	return 0;
}

/* The first pass: what the section will hold, checked before a byte of it. */
static int section_size(const struct sframe_jit__func *funcs,
			uint32_t nr_funcs, const struct sframe_jit_row *rows,
			uint64_t vaddr, struct sframe_size *sz)
{
	int64_t prev_end = INT64_MIN;
	uint32_t i;
	int err;

	for (i = 0; i < nr_funcs; i++) {
		err = func_measure(&funcs[i], rows + funcs[i].first_row, vaddr,
				   &prev_end, sz);
		if (err)
			return err;
	}
	/* The header's 32-bit counts and offsets. */
	if (sz->nr_fres > UINT32_MAX || sz->fre_len > UINT32_MAX ||
	    (uint64_t)nr_funcs * SFRAME_V2_FDE_SIZE > UINT32_MAX)
		return -ERANGE;
	return 0;
}

static void header_put(unsigned char *p, uint32_t nr_funcs,
		       const struct sframe_size *sz)
{
	put_le(p, SFRAME_MAGIC, WIDTH_2);
	p[2] = SFRAME_VERSION_2;
	p[3] = SFRAME_F_FDE_SORTED;
	p[4] = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	/* p[5], cfa_fixed_fp_offset: 0, the FP is not at a fixed place. */
	p[6] = (uint8_t)AMD64_RA_OFF;
	/* p[7], auxhdr_len: 0.  The FDEs follow the header (fdeoff 0). */
	put_le(p + 8, nr_funcs, WIDTH_4);
	put_le(p + 12, sz->nr_fres, WIDTH_4);
	put_le(p + 16, sz->fre_len, WIDTH_4);
	put_le(p + 24, nr_funcs * SFRAME_V2_FDE_SIZE, WIDTH_4);
}

static unsigned char *fre_put(unsigned char *p,
			      const struct sframe_jit_row *row,
			      unsigned int addr_width)
{
	int32_t off[2];
	unsigned int n = row_offsets(row, off), width = offsets_width(off, n);
	unsigned int base = SFRAME_BASE_REG_SP, i;

	/* An outermost row's base means nothing: the registry's SP. */
	if (n && row->cfa_base == SFRAME_JIT_ROW_CFA_FP)
		base = SFRAME_BASE_REG_FP;
	p = put_le(p, row->start_off, addr_width);
	*p++ = base | n << 1 | width << 5;
	for (i = 0; i < n; i++)
		p = put_le(p, (uint32_t)off[i], width);
	return p;
}

/*
 * One function: its descriptor at @fde, its rows at @fre, which is
 * @fre_off into the FRE sub-section.  The FDE type is PCINC, or PCMASK
 * for stubs, whose rows repeat every rep_size bytes (the stub's size);
 * the padding stays zero.  Returns the end of its rows.
 */
static unsigned char *func_put(unsigned char *fde, unsigned char *fre,
			       uint64_t fre_off,
			       const struct sframe_jit__func *fn,
			       const struct sframe_jit_row *rows,
			       uint64_t vaddr)
{
	unsigned int width = func_addr_width(fn, rows);
	uint32_t r;

	put_le(fde, (uint32_t)func_start(fn, vaddr), WIDTH_4);
	put_le(fde + 4, fn->size, WIDTH_4);
	put_le(fde + 8, fre_off, WIDTH_4);
	put_le(fde + 12, fn->nr_rows, WIDTH_4);
	fde[16] = width;
	if (fn->stub_size) {
		fde[16] |= SFRAME_FDE_TYPE_PCMASK << 4;
		fde[17] = fn->stub_size;
	}
	for (r = 0; r < fn->nr_rows; r++)
		fre = fre_put(fre, &rows[r], width);
	return fre;
}

/**
 * sframe_jit__sframe_encode() - sframe_jit_cfi_encode() of functions
 * @funcs: the functions, in address order and apart; each one's rows
 *	start at @rows[first_row], within a stub for stubs.
 * @nr_funcs: their number.
 * @rows: the rows of all of them, which they may share.
 * @sframe_vaddr: as for sframe_jit_cfi_encode().
 * @bufp: as for sframe_jit_cfi_encode().
 * @sizep: as for sframe_jit_cfi_encode().
 *
 * The tests' way to hand-built tables, as the registry's batch calls
 * take functions.
 *
 * Return: as sframe_jit_cfi_encode(); -EINVAL also for functions out of
 * order or overlapping, of size 0, or with rows the kernel refuses
 * (unknown base or flags, starts not increasing or past the function,
 * or past the stub), or stubs of more than 255 bytes.
 */
int sframe_jit__sframe_encode(const struct sframe_jit__func *funcs,
			      uint32_t nr_funcs,
			      const struct sframe_jit_row *rows,
			      uint64_t sframe_vaddr, void **bufp,
			      size_t *sizep)
{
	struct sframe_size sz = { 0 };
	unsigned char *buf, *fde, *fre, *fre_start;
	size_t size;
	uint32_t i;
	int err;

	if (!bufp || !sizep || (nr_funcs && (!funcs || !rows)))
		return -EINVAL;
	err = section_size(funcs, nr_funcs, rows, sframe_vaddr, &sz);
	if (err)
		return err;
	size = SFRAME_HDR_SIZE + (size_t)nr_funcs * SFRAME_V2_FDE_SIZE +
	       sz.fre_len;
	buf = calloc(1, size);
	if (!buf)
		return -ENOMEM;
	header_put(buf, nr_funcs, &sz);
	fde = buf + SFRAME_HDR_SIZE;
	fre_start = fde + (size_t)nr_funcs * SFRAME_V2_FDE_SIZE;
	fre = fre_start;
	for (i = 0; i < nr_funcs; i++, fde += SFRAME_V2_FDE_SIZE)
		fre = func_put(fde, fre, fre - fre_start, &funcs[i],
			       rows + funcs[i].first_row, sframe_vaddr);
	*bufp = buf;
	*sizep = size;
	return 0;
}

int sframe_jit_cfi_encode(const struct sframe_jit_cfi *cfi,
			  uint64_t sframe_vaddr, void **bufp, size_t *sizep)
{
	const struct sframe_jit__func *funcs;
	const struct sframe_jit_row *rows;
	uint32_t nr_funcs;

	if (!cfi)
		return -EINVAL;
	funcs = sframe_jit__cfi_table(cfi, &nr_funcs, &rows);
	return sframe_jit__sframe_encode(funcs, nr_funcs, rows, sframe_vaddr,
					 bufp, sizep);
}
