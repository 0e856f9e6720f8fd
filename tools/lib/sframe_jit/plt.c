// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The FDE that ld writes for an x86-64 .plt: PLT0's two rows, then, for
 * the 16-byte entries after it, one CFA expression,
 *
 *	DW_OP_breg7 (rsp) K; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *	DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 *
 * that is, the CFA is RSP + K in an entry's first N bytes and RSP + K + 8
 * from its push on.  Frame rows cannot compute that, so the generic
 * conversion leaves the FDE out ("cfa_expr"); an unwinder then falls back
 * to frame pointers in every PLT stub, where an interpreter's memcmp@plt
 * and memmove@plt samples sit.  SFrame says it otherwise: rows that
 * repeat every 16 bytes, a PCMASK function, which ld's own .sframe uses
 * for .plt.  This file recognises that one FDE, byte for byte, and gives
 * its rows in two parts: PLT0's, from the instructions before the
 * expression, and one entry's.  Anything else it does not recognise stays
 * left out as before.
 *
 * Both conversion paths (cfa.c and libdw's) leave the FDE out alike, and
 * the recognition runs after either, so that they still agree.
 */
#include <string.h>

#include "dwarf_read.h"
#include "sframe_jit_internal.h"

/* What the CIE's initial instructions must be: CFA = RSP + 8, RA at -8. */
static const uint8_t plt_cie_insns[] = {
	DW_CFA_def_cfa, 7, 8,
	DW_CFA_offset | 16, 1,
};

static bool plt_cie(const struct sframe_jit__cie *cie)
{
	const uint8_t *p = cie->insns + sizeof(plt_cie_insns);

	if (!cie->usable || cie->signal || cie->code_align != 1 ||
	    cie->data_align != -8 || cie->ra_reg != 16 ||
	    cie->insns_end - cie->insns < (long)sizeof(plt_cie_insns) ||
	    memcmp(cie->insns, plt_cie_insns, sizeof(plt_cie_insns)))
		return false;
	while (p < cie->insns_end)
		if (*p++ != DW_CFA_nop)
			return false;
	return true;
}

/*
 * The expression's block: K and N, from the exact sequence of
 * operations above, with K a signed LEB128 and N from 1 to 15.
 */
static bool plt_expr(const uint8_t *p, const uint8_t *end, int64_t *k,
		     uint32_t *n)
{
	uint64_t v;

	if (p >= end || *p++ != DW_OP_breg7 ||
	    !dw_read_leb(&p, end, true, &v))
		return false;
	*k = (int64_t)v;
	if (end - p != 9 || p[0] != DW_OP_breg16 || p[1] != 0 ||
	    p[2] != DW_OP_lit15 || p[3] != DW_OP_and ||
	    p[4] <= DW_OP_lit0 || p[4] > DW_OP_lit15 || p[5] != DW_OP_ge ||
	    p[6] != DW_OP_lit3 || p[7] != DW_OP_shl || p[8] != DW_OP_plus)
		return false;
	*n = p[4] - DW_OP_lit0;
	return *k >= 8 && *k <= INT32_MAX - 8;
}

static struct sframe_jit_row plt_row(uint32_t start, int64_t cfa)
{
	return (struct sframe_jit_row) {
		.start_off = start, .cfa_off = (int32_t)cfa, .ra_off = -8,
		.cfa_base = SFRAME_JIT_ROW_CFA_SP,
	};
}

/* PLT0's rows: a new one at each advance after which the CFA moved. */
static bool plt_head_row(struct sframe_jit__plt *plt, uint64_t at,
			 int64_t cfa)
{
	struct sframe_jit_row *last = &plt->head[plt->nr_head - 1];

	if (last->cfa_off == cfa)
		return true;
	if (last->start_off == at) {
		last->cfa_off = (int32_t)cfa;
		return true;
	}
	if (plt->nr_head == SFRAME_JIT__PLT_HEAD_ROWS || cfa > INT32_MAX)
		return false;
	plt->head[plt->nr_head++] = plt_row(at, cfa);
	return true;
}

/* The FDE's instructions: advances and CFA offsets, then the expression. */
static bool plt_insns(const struct sframe_jit__fde *fde,
		      struct sframe_jit__plt *plt, int64_t *k, uint32_t *n)
{
	const uint8_t *p = fde->insns, *end = fde->insns_end, *block;
	uint64_t at = 0, v, len;
	uint8_t op;

	plt->nr_head = 1;
	plt->head[0] = plt_row(0, 8);
	while (p < end) {
		op = *p++;
		if ((op & 0xc0) == DW_CFA_advance_loc) {
			at += op & 0x3f;
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
			continue;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (!dw_read_fixed(&p, end, op == DW_CFA_advance_loc1 ?
					   1 : op == DW_CFA_advance_loc2 ? 2 : 4,
					   false, &v))
				return false;
			at += v;
			continue;
		case DW_CFA_def_cfa_offset:
			if (!dw_read_uleb(&p, end, &v) || !plt_head_row(plt, at, v))
				return false;
			continue;
		case DW_CFA_def_cfa_expression:
			if (!dw_read_uleb(&p, end, &len) ||
			    len > (uint64_t)(end - p))
				return false;
			block = p;
			p += len;
			if (!plt_expr(block, p, k, n))
				return false;
			plt->split = fde->lo + at;
			/* Nothing but padding after it. */
			while (p < end)
				if (*p++ != DW_CFA_nop)
					return false;
			return true;
		default:
			return false;
		}
	}
	return false;
}

/**
 * sframe_jit__plt_fde() - recognise the FDE of an x86-64 .plt
 * @eh: the section the FDE is from.
 * @fde: an FDE that the conversion left out for its CFA expression.
 * @plt: set to its two parts when it is the .plt's: PLT0's rows, and
 *	those of one entry, which repeat every 16 bytes from @split on.
 *
 * Return: true if it is, with its CFA expression at a 16-byte boundary
 * of the object's layout and its entries a whole number of 16 bytes.
 */
bool sframe_jit__plt_fde(const struct sframe_jit__eh_frame *eh,
			 const struct sframe_jit__fde *fde,
			 struct sframe_jit__plt *plt)
{
	uint32_t n;
	int64_t k;

	if (fde->cie == SFRAME_JIT__NO_CIE || fde->cie >= eh->nr_cies ||
	    !plt_cie(&eh->cies[fde->cie]) || !plt_insns(fde, plt, &k, &n))
		return false;
	if (plt->split % SFRAME_JIT__PLT_ENTRY || plt->split >= fde->hi ||
	    (fde->hi - plt->split) % SFRAME_JIT__PLT_ENTRY)
		return false;
	/* PLT0's rows within it; none without it. */
	while (plt->nr_head &&
	       plt->head[plt->nr_head - 1].start_off >= plt->split - fde->lo)
		plt->nr_head--;
	plt->entry[0] = plt_row(0, k);
	plt->entry[1] = plt_row(n, k + 8);
	plt->nr_entry = 2;
	return true;
}
