// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's side of the libsframe cross-check: kernel/unwind/sframe_sec.c,
 * included unchanged so that each row can be read back with the very
 * helpers a lookup uses (sframe_fre_at(), sframe_fre_decode()), and
 * lookups go through the public sframe_table_find(), in the table the
 * section is converted into as the kernel converts it at registration.
 */
#include <errno.h>
#include <stdlib.h>

/* The section decoder and the table, with their static helpers. */
#include "sframe_row.c"
#include "sframe_sec.c"
#include "sframe_table.c"
#include "table_alloc.h"
#include "xcheck.h"

struct xc_ours {
	struct sframe_sec sec;
	struct sframe_table *table;
};

/**
 * xc_ours_open() - parse and validate a section as the kernel does
 * @o: set to the new handle on success.
 * @data: the section's bytes, kept by the caller while @o lives.
 * @size: bytes at @data.
 * @base: the address the section is loaded at.
 *
 * Return: 0, or the negative errno of sframe_sec_init(),
 * sframe_sec_validate() or the conversion into a table.
 */
int xc_ours_open(struct xc_ours **o, const void *data, size_t size,
		 uint64_t base)
{
	struct xc_ours *n = calloc(1, sizeof(*n));
	int ret;

	if (!n)
		return -ENOMEM;
	ret = sframe_sec_init(&n->sec, data, size, base);
	if (!ret)
		ret = sframe_sec_validate(&n->sec);
	if (!ret)
		ret = table_alloc_new(&n->sec, &n->table);
	if (ret) {
		free(n);
		return ret;
	}
	*o = n;
	return 0;
}

/**
 * xc_ours_close() - free a handle of xc_ours_open()
 * @o: the handle.
 */
void xc_ours_close(struct xc_ours *o)
{
	table_alloc_free(o->table);
	free(o);
}

/**
 * xc_ours_num_funcs() - number of function descriptors
 * @o: the handle.
 *
 * Return: the header's count, which xc_ours_open() validated.
 */
uint32_t xc_ours_num_funcs(const struct xc_ours *o)
{
	return o->sec.num_fdes;
}

/**
 * xc_ours_func() - decode one function descriptor
 * @o: the handle.
 * @i: its index.
 * @f: filled in on success.
 *
 * Return: 0 or the negative errno of sframe_sec_func().
 */
int xc_ours_func(const struct xc_ours *o, uint32_t i, struct xc_func *f)
{
	struct sframe_func fn;
	int ret = sframe_sec_func(&o->sec, i, &fn);

	if (ret)
		return ret;
	*f = (struct xc_func){
		.start = fn.start,
		.size = fn.size,
		.num_fres = fn.num_fres,
		.fre_type = fn.fre_type,
		.pcmask = fn.pcmask,
		.rep_size = fn.rep_size,
	};
	return 0;
}

static void xc_row_from(struct xc_row *x, const struct sframe_row *row,
			uint32_t start)
{
	*x = (struct xc_row){
		.start = start,
		.cfa_sp = row->cfa_base == SFRAME_CFA_BASE_SP,
		.ra_undefined = row->ra_undefined,
		.fp_saved = row->fp_saved,
		.cfa_off = row->cfa_off,
		.ra_off = row->ra_off,
		.fp_off = row->fp_off,
	};
	if (row->ra_undefined)
		x->cfa_sp = false;
}

/**
 * xc_ours_row() - decode row @r of function @i
 * @o: the handle.
 * @i: the function's index.
 * @r: the row's index in the function.
 * @row: filled in on success.
 *
 * Steps over the rows before @r as a lookup does.
 *
 * Return: 0; -ENOEXEC if the descriptor or a row on the way is out of
 * bounds, or the row does not decode to a hit.
 */
int xc_ours_row(const struct xc_ours *o, uint32_t i, uint32_t r,
		struct xc_row *row)
{
	struct sframe_func fn;
	struct sframe_fre fre;
	struct sframe_row sr;
	unsigned int addr_size;
	u64 pos;
	u32 k;

	if (sframe_sec_func(&o->sec, i, &fn) || r >= fn.num_fres)
		return -ENOEXEC;
	addr_size = 1U << fn.fre_type;
	pos = fn.fre_off;
	for (k = 0; ; k++) {
		if (!sframe_fre_at(&o->sec, pos, addr_size, &fre))
			return -ENOEXEC;
		if (k == r)
			break;
		pos += fre.len;
	}
	if (sframe_fre_decode(&o->sec, &fn, pos, &fre, &sr) != SFRAME_FIND_HIT)
		return -ENOEXEC;
	xc_row_from(row, &sr, fre.start);
	return 0;
}

/**
 * xc_ours_find() - the row that applies at a PC, by sframe_table_find()
 * @o: the handle.
 * @pc: the address.
 * @row: filled in on a hit, with @row->start set to UINT32_MAX.
 *
 * Return: 1 for a hit, 0 for none, -ENOEXEC for a malformed table.
 */
int xc_ours_find(const struct xc_ours *o, uint64_t pc, struct xc_row *row)
{
	struct sframe_row sr;

	switch (sframe_table_find(o->table, pc, &sr)) {
	case SFRAME_FIND_HIT:
		xc_row_from(row, &sr, UINT32_MAX);
		return 1;
	case SFRAME_FIND_NONE:
		return 0;
	default:
		return -ENOEXEC;
	}
}
