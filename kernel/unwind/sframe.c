// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame section decoding: header, function descriptors and a one-time
 * validation of a whole section.  See sframe.h; the format is GNU
 * binutils' SFrame, versions 1 to 3, little-endian AMD64 only.
 *
 * Every field comes from an untrusted buffer: offsets and counts are
 * checked against the buffer in 64-bit arithmetic before use, and every
 * loop is bounded by the buffer's size.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/unaligned.h>

#include "sframe.h"

/* Does [off, off + len) lie inside the section? */
static bool sframe_in(const struct sframe_sec *sec, u64 off, u64 len)
{
	return off <= sec->size && len <= sec->size - off;
}

static unsigned int sframe_fde_size(u8 version)
{
	switch (version) {
	case SFRAME_VERSION_1:
		return SFRAME_V1_FDE_SIZE;
	case SFRAME_VERSION_2:
		return SFRAME_V2_FDE_SIZE;
	default:
		return SFRAME_V3_FDE_SIZE;
	}
}

/**
 * sframe_sec_init() - parse and check an SFrame section's header
 * @sec: filled in on success.
 * @data: the section's bytes.
 * @size: number of bytes at @data.
 * @base: the address at which the section is loaded.
 *
 * Checks that the descriptor table and the frame-row sub-section lie
 * inside the section; not the descriptors themselves (see
 * sframe_sec_validate()).
 *
 * Return: 0; -ENOEXEC if @data is not a well-formed SFrame section;
 * -EOPNOTSUPP for a version other than 1 to 3 or an ABI other than
 * little-endian AMD64.
 */
int sframe_sec_init(struct sframe_sec *sec, const void *data, size_t size,
		    unsigned long base)
{
	const u8 *p = data;
	u64 hdr_end, fde_bytes;

	if (size < SFRAME_HDR_SIZE)
		return -ENOEXEC;
	if (get_unaligned_le16(p) != SFRAME_MAGIC)
		return get_unaligned_be16(p) == SFRAME_MAGIC ? -EOPNOTSUPP :
							      -ENOEXEC;
	if (p[2] < SFRAME_VERSION_1 || p[2] > SFRAME_VERSION_3)
		return -EOPNOTSUPP;
	if (p[4] != SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		return -EOPNOTSUPP;

	sec->data = p;
	sec->size = size;
	sec->base = base;
	sec->version = p[2];
	sec->flags = p[3];
	sec->cfa_fixed_fp = (s8)p[5];
	sec->cfa_fixed_ra = (s8)p[6];
	sec->num_fdes = get_unaligned_le32(p + 8);
	sec->num_fres = get_unaligned_le32(p + 12);
	sec->fre_len = get_unaligned_le32(p + 16);
	sec->fde_size = sframe_fde_size(sec->version);

	hdr_end = SFRAME_HDR_SIZE + (u64)p[7];
	fde_bytes = (u64)sec->num_fdes * sec->fde_size;
	if (!sframe_in(sec, hdr_end + get_unaligned_le32(p + 20), fde_bytes))
		return -ENOEXEC;
	if (!sframe_in(sec, hdr_end + get_unaligned_le32(p + 24), sec->fre_len))
		return -ENOEXEC;
	sec->fde_start = hdr_end + get_unaligned_le32(p + 20);
	sec->fre_start = hdr_end + get_unaligned_le32(p + 24);
	return 0;
}

/* Versions 1 and 2: the descriptor holds everything. */
static int sframe_func_v12(const struct sframe_sec *sec, const u8 *fde,
			   struct sframe_func *fn)
{
	s32 start = (s32)get_unaligned_le32(fde);
	u8 info = fde[16];

	if (sec->version == SFRAME_VERSION_2 &&
	    (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL))
		fn->start = sec->base + (fde - sec->data) + start;
	else
		fn->start = sec->base + start;
	fn->size = get_unaligned_le32(fde + 4);
	fn->fre_off = get_unaligned_le32(fde + 8);
	fn->num_fres = get_unaligned_le32(fde + 12);
	fn->fre_type = SFRAME_FDE_FRE_TYPE(info);
	fn->pcmask = SFRAME_FDE_PCMASK(info);
	fn->rep_size = sec->version == SFRAME_VERSION_2 ? fde[17] : 0;
	return 0;
}

/*
 * Version 3: a fixed-size index entry points at an attribute record in
 * the frame-row sub-section, which the function's rows follow.
 */
static int sframe_func_v3(const struct sframe_sec *sec, const u8 *fde,
			  struct sframe_func *fn)
{
	s64 start = (s64)get_unaligned_le64(fde);
	u32 attr = get_unaligned_le32(fde + 12);
	const u8 *a;

	if (attr > sec->fre_len || sec->fre_len - attr < SFRAME_V3_ATTR_SIZE)
		return -ENOEXEC;
	a = sec->data + sec->fre_start + attr;
	fn->start = sec->base + (fde - sec->data) + start;
	fn->size = get_unaligned_le32(fde + 8);
	fn->fre_off = attr + SFRAME_V3_ATTR_SIZE;
	fn->num_fres = get_unaligned_le16(a);
	fn->fre_type = SFRAME_FDE_FRE_TYPE(a[2]);
	fn->pcmask = SFRAME_FDE_PCMASK(a[2]);
	fn->rep_size = a[4];
	return 0;
}

/**
 * sframe_sec_func() - decode one function descriptor
 * @sec: a section set up by sframe_sec_init().
 * @i: index of the descriptor, below @sec->num_fdes.
 * @fn: filled in on success.
 *
 * Return: 0, or -ENOEXEC if @i is out of range or the descriptor points
 * outside the section.
 */
int sframe_sec_func(const struct sframe_sec *sec, u32 i,
		    struct sframe_func *fn)
{
	const u8 *fde;
	int ret;

	if (i >= sec->num_fdes)
		return -ENOEXEC;
	fde = sec->data + sec->fde_start + (size_t)i * sec->fde_size;
	if (sec->version == SFRAME_VERSION_3)
		ret = sframe_func_v3(sec, fde, fn);
	else
		ret = sframe_func_v12(sec, fde, fn);
	if (ret)
		return ret;
	if (fn->fre_type > 2)
		return -ENOEXEC;
	/*
	 * Version 1 has no repeat size: its PCMASK rows match by masking
	 * the PC (ld 2.40 describes every .plt that way).  From version 2
	 * on, rows repeat every rep_size bytes, and 0 would divide by zero.
	 */
	if (fn->pcmask && !fn->rep_size && sec->version != SFRAME_VERSION_1)
		return -ENOEXEC;
	return 0;
}

/*
 * Walk the rows of one version 1 or 2 function: each must lie inside
 * the frame-row sub-section, start strictly after the previous one and
 * inside the function (or its repeat block), and carry at most 3
 * offsets of a defined width (none marks the outermost frame).
 */
static int sframe_check_rows(const struct sframe_sec *sec,
			     const struct sframe_func *fn)
{
	unsigned int addr_size = 1U << fn->fre_type;
	u64 off = fn->fre_off, limit;
	u32 r, start, prev = 0;
	const u8 *row;
	u8 info;

	limit = fn->pcmask ? fn->rep_size : fn->size;
	for (r = 0; r < fn->num_fres; r++) {
		if (off + addr_size + 1 > sec->fre_len)
			return -ENOEXEC;
		row = sec->data + sec->fre_start + off;
		if (addr_size == 1)
			start = row[0];
		else if (addr_size == 2)
			start = get_unaligned_le16(row);
		else
			start = get_unaligned_le32(row);
		info = row[addr_size];
		if ((r && start <= prev) || (limit && start >= limit))
			return -ENOEXEC;
		if (SFRAME_FRE_OFFSET_SIZE(info) > 2 ||
		    SFRAME_FRE_N_OFFSETS(info) > 3)
			return -ENOEXEC;
		off += addr_size + 1 + SFRAME_FRE_N_OFFSETS(info) *
			(1U << SFRAME_FRE_OFFSET_SIZE(info));
		if (off > sec->fre_len)
			return -ENOEXEC;
		prev = start;
	}
	return 0;
}

/**
 * sframe_sec_validate() - check every descriptor of a section once
 * @sec: a section set up by sframe_sec_init().
 *
 * Descriptors must decode, be sorted by start address, not wrap the
 * address space, and (versions 1 and 2) have well-formed rows inside
 * the frame-row sub-section.  The rows of all functions together may
 * not exceed the header's row count, which bounds the work by the
 * section's size.
 *
 * Return: 0, or -ENOEXEC on the first malformed descriptor or row.
 */
int sframe_sec_validate(const struct sframe_sec *sec)
{
	unsigned long prev_start = 0, end;
	u64 rows = 0;
	struct sframe_func fn;
	u32 i;
	int ret;

	if (sec->num_fres > sec->fre_len / 2)
		return -ENOEXEC;
	for (i = 0; i < sec->num_fdes; i++) {
		ret = sframe_sec_func(sec, i, &fn);
		if (ret)
			return ret;
		if (check_add_overflow(fn.start, (unsigned long)fn.size, &end))
			return -ENOEXEC;
		if (i && fn.start < prev_start)
			return -ENOEXEC;
		rows += fn.num_fres;
		if (rows > sec->num_fres)
			return -ENOEXEC;
		if (sec->version != SFRAME_VERSION_3) {
			ret = sframe_check_rows(sec, &fn);
			if (ret)
				return ret;
		}
		prev_start = fn.start;
	}
	return 0;
}
