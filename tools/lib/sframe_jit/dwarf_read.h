/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Bounded reads of the value forms of .eh_frame, shared by the walk of
 * its entries (eh_frame.c) and the CFA interpreter (cfa.c).  Each read
 * stays below @end and says false rather than read past it, or when a
 * LEB128 value runs over ten bytes, which no 64-bit value needs.
 */
#ifndef __SFRAME_JIT_DWARF_READ_H
#define __SFRAME_JIT_DWARF_READ_H

#include <dwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool dw_read_fixed(const uint8_t **p, const uint8_t *end,
				 unsigned int bytes, bool sign, uint64_t *val)
{
	uint64_t v = 0;
	unsigned int i;

	if (end - *p < (ptrdiff_t)bytes)
		return false;
	for (i = 0; i < bytes; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && bytes < 8 && (v >> (8 * bytes - 1)) & 1)
		v |= ~0ULL << (8 * bytes);
	*p += bytes;
	*val = v;
	return true;
}

static inline bool dw_read_leb(const uint8_t **p, const uint8_t *end,
			       bool sign, uint64_t *val)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return false;
		b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*val = v;
	return true;
}

static inline bool dw_read_uleb(const uint8_t **p, const uint8_t *end,
				uint64_t *val)
{
	/* One byte, the common case, without the loop. */
	if (*p < end && !(**p & 0x80)) {
		*val = *(*p)++;
		return true;
	}
	return dw_read_leb(p, end, false, val);
}

/* A value in the format of @enc (its low four bits). */
static inline bool dw_read_format(const uint8_t **p, const uint8_t *end,
				  uint8_t enc, uint64_t *val)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return dw_read_fixed(p, end, 8, false, val);
	case DW_EH_PE_udata2:
		return dw_read_fixed(p, end, 2, false, val);
	case DW_EH_PE_sdata2:
		return dw_read_fixed(p, end, 2, true, val);
	case DW_EH_PE_udata4:
		return dw_read_fixed(p, end, 4, false, val);
	case DW_EH_PE_sdata4:
		return dw_read_fixed(p, end, 4, true, val);
	case DW_EH_PE_uleb128:
		return dw_read_leb(p, end, false, val);
	case DW_EH_PE_sleb128:
		return dw_read_leb(p, end, true, val);
	default:
		return false;
	}
}

/*
 * An address encoded as @enc, read at @field in the section's layout.
 * Text-, data- and function-relative and aligned values need bases that
 * .eh_frame on x86-64 does not use, and an indirect one a read of the
 * loaded image.
 */
static inline bool dw_read_pointer(const uint8_t **p, const uint8_t *end,
				   uint8_t enc, uint64_t field, uint64_t *val)
{
	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return false;
	if ((enc & 0x70) != DW_EH_PE_absptr && (enc & 0x70) != DW_EH_PE_pcrel)
		return false;
	if (!dw_read_format(p, end, enc, val))
		return false;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		*val += field;
	return true;
}

#endif /* __SFRAME_JIT_DWARF_READ_H */
