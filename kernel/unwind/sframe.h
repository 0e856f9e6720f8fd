/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame section decoding, shared by the kernel, KUnit and the userspace
 * harness in tools/testing/sframe.  Nothing here touches a task or an mm:
 * a section is a byte buffer and a base address.
 */
#ifndef _KERNEL_UNWIND_SFRAME_H
#define _KERNEL_UNWIND_SFRAME_H

#include <linux/types.h>

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

/* FDE info byte */
#define SFRAME_FDE_FRE_TYPE(info)	((info) & 0xf)
#define SFRAME_FDE_PCMASK(info)		(((info) >> 4) & 0x1)

/* FRE info byte */
#define SFRAME_FRE_CFA_BASE_SP(info)	((info) & 0x1)
#define SFRAME_FRE_N_OFFSETS(info)	(((info) >> 1) & 0xf)
#define SFRAME_FRE_OFFSET_SIZE(info)	(((info) >> 5) & 0x3)

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
 */
struct sframe_func {
	unsigned long start;
	u32 size;
	u32 fre_off;
	u32 num_fres;
	u8 fre_type;
	bool pcmask;
	u8 rep_size;
};

int sframe_sec_init(struct sframe_sec *sec, const void *data, size_t size,
		    unsigned long base);
int sframe_sec_func(const struct sframe_sec *sec, u32 i,
		    struct sframe_func *fn);
int sframe_sec_validate(const struct sframe_sec *sec);

#endif /* _KERNEL_UNWIND_SFRAME_H */
