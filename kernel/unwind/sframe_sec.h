/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ELF .sframe section decoder (sframe_sec.c), shared by the kernel,
 * KUnit and the userspace harness in tools/testing/sframe: a section is
 * a byte buffer and a base address.  The format's constants are those
 * of binutils' SFrame specification; on top of the SFrame unwinder
 * series, which defines them in its own header, this decoder drops.
 */
#ifndef _KERNEL_UNWIND_SFRAME_SEC_H
#define _KERNEL_UNWIND_SFRAME_SEC_H

#include <linux/types.h>

#include "sframe_row.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_1		1
#define SFRAME_VERSION_2		2
#define SFRAME_VERSION_3		3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3

#define SFRAME_HDR_SIZE			28
#define SFRAME_V1_FDE_SIZE		17
#define SFRAME_V2_FDE_SIZE		20
#define SFRAME_V3_FDE_SIZE		16
#define SFRAME_V3_ATTR_SIZE		5

/* FDE info byte (version 3: the attribute record's first info byte) */
#define SFRAME_FDE_FRE_TYPE(info)	((info) & 0xf)
#define SFRAME_FDE_PCMASK(info)		(((info) >> 4) & 0x1)
#define SFRAME_FDE_SIGNAL(info)		(((info) >> 7) & 0x1)	/* v3 */

/* Version 3 attribute record's second info byte: the FDE type */
#define SFRAME_FDE_TYPE(info2)		((info2) & 0x1f)
#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/* FRE info byte */
#define SFRAME_FRE_CFA_BASE_SP(info)	((info) & 0x1)
#define SFRAME_FRE_N_OFFSETS(info)	(((info) >> 1) & 0xf)
#define SFRAME_FRE_OFFSET_SIZE(info)	(((info) >> 5) & 0x3)

/*
 * Control word of a version 3 flexible FDE's rule: bit 0 register-based,
 * bit 1 dereference, bit 2 unused, bits 3 and up a DWARF register number.
 */
#define SFRAME_FLEX_REG_P(ctl)		((ctl) & 0x1)
#define SFRAME_FLEX_DEREF_P(ctl)	(((ctl) >> 1) & 0x1)
#define SFRAME_FLEX_UNUSED(ctl)		(((ctl) >> 2) & 0x1)
#define SFRAME_FLEX_REGNUM(ctl)		((ctl) >> 3)

/* DWARF register numbers of the AMD64 psABI */
#define SFRAME_DWARF_AMD64_RBP		6
#define SFRAME_DWARF_AMD64_RSP		7

/*
 * Most rows one function may have, as version 3's 16-bit count allows.
 * sframe_sec_find() walks a function's rows in order, so this bounds its
 * work; sframe_table_size() refuses a function with more.
 */
#define SFRAME_MAX_FUNC_FRES		0xffff

/*
 * Most rows a version 1 PCMASK function may have in a converted table.
 * Its rows are masks, not sorted start offsets: a lookup must try every
 * one.  ld writes two for a .plt.
 */
#define SFRAME_MAX_MASK_FRES		16

/**
 * struct sframe_sec - a parsed SFrame section header
 * @data: the section's bytes.
 * @size: number of bytes at @data.
 * @base: the address the section is loaded at; function starts are
 *	relative to it (or to their own field with PC-relative starts).
 * @version: SFRAME_VERSION_*.
 * @flags: SFRAME_F_*.
 * @cfa_fixed_fp: the header's fixed FP offset from the CFA, 0 if none.
 * @cfa_fixed_ra: the header's fixed RA offset from the CFA, 0 if none.
 * @num_fdes: function descriptors.
 * @num_fres: frame rows, over all functions.
 * @fde_start: offset of the first descriptor in @data.
 * @fde_size: bytes per descriptor (or v3 index entry).
 * @fre_start: offset of the frame-row sub-section in @data.
 * @fre_len: bytes in the frame-row sub-section.
 */
struct sframe_sec {
	const u8 *data;
	size_t size;
	unsigned long base;
	u8 version;
	u8 flags;
	s8 cfa_fixed_fp;
	s8 cfa_fixed_ra;
	u32 num_fdes;
	u32 num_fres;
	u32 fde_start;
	u32 fde_size;
	u32 fre_start;
	u32 fre_len;
};

/**
 * struct sframe_func - one function descriptor, decoded
 * @start: address of the function's first byte.
 * @size: bytes in the function.
 * @fre_off: offset of its first row in the frame-row sub-section.
 * @num_fres: rows of the function.
 * @fre_type: width of a row's start offset: 0, 1 or 2 for 1, 2, 4 bytes.
 * @pcmask: rows repeat every @rep_size bytes (PCMASK).
 * @rep_size: the repeat size of a PCMASK function.
 * @fde_type: SFRAME_FDE_TYPE_*; always the default before version 3.
 * @signal: a signal frame (version 3).
 */
struct sframe_func {
	unsigned long start;
	u32 size;
	u32 fre_off;
	u32 num_fres;
	u8 fre_type;
	bool pcmask;
	u8 rep_size;
	u8 fde_type;
	bool signal;
};

/* A frame row entry's fixed part, and its length with its data words. */
struct sframe_fre {
	u32 start;
	u8 info;
	u32 len;
};

int sframe_sec_init(struct sframe_sec *sec, const void *data, size_t size,
		    unsigned long base);
int sframe_sec_func(const struct sframe_sec *sec, u32 i,
		    struct sframe_func *fn);
int sframe_sec_validate(const struct sframe_sec *sec);
enum sframe_find_result sframe_sec_find(const struct sframe_sec *sec,
					unsigned long pc,
					struct sframe_row *row);

/* For the conversion into a table (sframe_table.c). */
bool sframe_fre_at(const struct sframe_sec *sec, u64 pos,
		   unsigned int addr_size, struct sframe_fre *fre);
enum sframe_find_result
sframe_fre_decode(const struct sframe_sec *sec, const struct sframe_func *fn,
		  u64 pos, const struct sframe_fre *fre, struct sframe_row *row);
void sframe_work_done(u32 *work, u32 n);

#endif /* _KERNEL_UNWIND_SFRAME_SEC_H */
