// SPDX-License-Identifier: GPL-2.0
/*
 * The reference side of the cross-check: GNU binutils' libsframe
 * (Debian 12: binutils-dev 2.40, SFrame version 1), through its public
 * API only.  Its addresses are relative to the section's start; this
 * file adds and subtracts the section's load address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sframe-api.h>

#include "xcheck.h"

struct xc_lib {
	sframe_decoder_ctx *ctx;
	uint64_t base;
	uint32_t n;
	int32_t *starts;	/* each descriptor's start, section-relative */
};

/**
 * xc_lib_open() - decode a section with libsframe
 * @l: set to the new handle on success.
 * @data: the section's bytes.
 * @size: bytes at @data.
 * @base: the address the section is loaded at.
 * @err: receives libsframe's message on failure.
 * @errlen: bytes at @err.
 *
 * Return: 0, -ENOMEM, or -EINVAL if libsframe refuses the section.
 */
int xc_lib_open(struct xc_lib **l, const void *data, size_t size,
		uint64_t base, char *err, size_t errlen)
{
	struct xc_lib *n = calloc(1, sizeof(*n));
	uint32_t i, nfres, fsize;
	unsigned char info;
	int e = 0;

	if (!n)
		return -ENOMEM;
	n->ctx = sframe_decode(data, size, &e);
	if (!n->ctx) {
		snprintf(err, errlen, "sframe_decode: %s", sframe_errmsg(e));
		free(n);
		return -EINVAL;
	}
	n->base = base;
	n->n = sframe_decoder_get_num_fidx(n->ctx);
	n->starts = calloc(n->n ? n->n : 1, sizeof(*n->starts));
	if (!n->starts) {
		xc_lib_close(n);
		return -ENOMEM;
	}
	for (i = 0; i < n->n; i++) {
		e = sframe_decoder_get_funcdesc(n->ctx, i, &nfres, &fsize,
						&n->starts[i], &info);
		if (e) {
			snprintf(err, errlen, "descriptor %u: %s", i,
				 sframe_errmsg(e));
			xc_lib_close(n);
			return -EINVAL;
		}
	}
	*l = n;
	return 0;
}

/**
 * xc_lib_close() - free a handle of xc_lib_open()
 * @l: the handle, or NULL.
 */
void xc_lib_close(struct xc_lib *l)
{
	if (!l)
		return;
	sframe_decoder_free(&l->ctx);
	free(l->starts);
	free(l);
}

/**
 * xc_lib_num_funcs() - number of function descriptors
 * @l: the handle.
 *
 * Return: libsframe's count.
 */
uint32_t xc_lib_num_funcs(const struct xc_lib *l)
{
	return l->n;
}

/**
 * xc_lib_func() - one function descriptor, as libsframe reads it
 * @l: the handle.
 * @i: its index.
 * @f: filled in on success.
 *
 * Return: 0, or -EINVAL if libsframe fails.
 */
int xc_lib_func(const struct xc_lib *l, uint32_t i, struct xc_func *f)
{
	uint32_t nfres, size;
	unsigned char info;
	int32_t start;

	if (sframe_decoder_get_funcdesc(l->ctx, i, &nfres, &size, &start,
					&info))
		return -EINVAL;
	*f = (struct xc_func){
		.start = l->base + (int64_t)start,
		.size = size,
		.num_fres = nfres,
		.fre_type = SFRAME_V1_FUNC_FRE_TYPE(info),
		.pcmask = SFRAME_V1_FUNC_FDE_TYPE(info) ==
			  SFRAME_FDE_TYPE_PCMASK,
		/* Version 1 has no repeat size. */
		.rep_size = 0,
	};
	return 0;
}

/*
 * A row's rules through libsframe's getters: the RA and FP offsets come
 * from the row unless the header fixes them; an absent FP offset means
 * the FP is not saved.
 */
static void xc_lib_rules(const struct xc_lib *l, sframe_frame_row_entry *fre,
			 struct xc_row *row)
{
	int e = 0;
	int32_t v;

	row->start = fre->fre_start_addr;
	if (!SFRAME_V1_FRE_OFFSET_COUNT(fre->fre_info)) {
		row->ra_undefined = true;
		return;
	}
	row->cfa_sp = sframe_fre_get_base_reg_id(fre, &e) == SFRAME_BASE_REG_SP;
	row->cfa_off = sframe_fre_get_cfa_offset(l->ctx, fre, &e);
	e = 0;
	v = sframe_fre_get_ra_offset(l->ctx, fre, &e);
	row->ra_off = e ? sframe_decoder_get_fixed_ra_offset(l->ctx) : v;
	e = 0;
	v = sframe_fre_get_fp_offset(l->ctx, fre, &e);
	if (!e) {
		row->fp_saved = true;
		row->fp_off = v;
	} else if (sframe_decoder_get_fixed_fp_offset(l->ctx)) {
		row->fp_saved = true;
		row->fp_off = sframe_decoder_get_fixed_fp_offset(l->ctx);
	}
}

/**
 * xc_lib_row() - row @r of function @i, as libsframe reads it
 * @l: the handle.
 * @i: the function's index.
 * @r: the row's index in the function.
 * @row: filled in on success.
 *
 * Return: 0, or -EINVAL if libsframe fails.
 */
int xc_lib_row(const struct xc_lib *l, uint32_t i, uint32_t r,
	       struct xc_row *row)
{
	sframe_frame_row_entry fre;

	if (sframe_decoder_get_fre(l->ctx, i, r, &fre))
		return -EINVAL;
	*row = (struct xc_row){};
	xc_lib_rules(l, &fre, row);
	return 0;
}

/* Index of the descriptor libsframe returned, by its start and size. */
static uint32_t xc_lib_index(const struct xc_lib *l,
			     const sframe_func_desc_entry *fde)
{
	uint32_t lo = 0, hi = l->n, i;

	while (lo < hi) {
		i = lo + (hi - lo) / 2;
		if (l->starts[i] <= fde->sfde_func_start_address)
			lo = i + 1;
		else
			hi = i;
	}
	/* Equal starts (empty functions): the last one, as a search would. */
	return lo ? lo - 1 : UINT32_MAX;
}

/**
 * xc_lib_find() - the row that applies at a PC, by sframe_find_fre()
 * @l: the handle.
 * @pc: the address.
 * @row: filled in on a hit.
 * @func: the index of the function libsframe found, on a hit.
 *
 * Return: 1 for a hit, 0 if libsframe finds no row.
 */
int xc_lib_find(const struct xc_lib *l, uint64_t pc, struct xc_row *row,
		uint32_t *func)
{
	int64_t rel = (int64_t)(pc - l->base);
	sframe_frame_row_entry fre;
	sframe_func_desc_entry *fde;
	int e = 0;

	if (rel < INT32_MIN || rel > INT32_MAX)
		return 0;
	if (sframe_find_fre(l->ctx, (int32_t)rel, &fre))
		return 0;
	fde = sframe_get_funcdesc_with_addr(l->ctx, (int32_t)rel, &e);
	if (!fde)
		return 0;
	*row = (struct xc_row){};
	xc_lib_rules(l, &fre, row);
	*func = xc_lib_index(l, fde);
	return 1;
}
