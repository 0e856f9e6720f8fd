// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame decoding: section header, function descriptors, a one-time
 * validation of a whole section, its conversion into a table of
 * fixed-size records, and the lookup of the frame row that applies at a
 * PC, in an ELF section, its table or a JIT registry.  See sframe.h;
 * the ELF format is GNU binutils' SFrame, versions 1 to 3, little-endian
 * AMD64 only; the JIT registry is described in <uapi/linux/sframe_jit.h>.
 *
 * Every field comes from an untrusted buffer: offsets and counts are
 * checked against the buffer in 64-bit arithmetic before use, and every
 * loop is bounded by the buffer's size.  A JIT registry is written by its
 * process while the kernel reads it: each of its fields is read once.
 *
 * The lookups run in NMI context: they take no lock, allocate nothing and
 * touch nothing but the buffer they are given.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <uapi/linux/sframe_jit.h>

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
EXPORT_SYMBOL_IF_KUNIT(sframe_sec_init);

/*
 * Function starts are relative to the section, or, with the flag of
 * version 2's erratum 1 that version 3 keeps, to their own field.
 */
static bool sframe_start_pcrel(const struct sframe_sec *sec)
{
	return sec->version != SFRAME_VERSION_1 &&
	       (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL);
}

/* Start address of descriptor @i, which is below @sec->num_fdes. */
static unsigned long sframe_fde_start(const struct sframe_sec *sec, u32 i)
{
	size_t off = sec->fde_start + (size_t)i * sec->fde_size;
	const u8 *fde = sec->data + off;
	long rel;

	if (sec->version == SFRAME_VERSION_3)
		rel = (long)get_unaligned_le64(fde);
	else
		rel = (s32)get_unaligned_le32(fde);
	/* Wraps as the format's address arithmetic does; callers check. */
	if (sframe_start_pcrel(sec))
		return sec->base + off + rel;
	return sec->base + rel;
}

/* Versions 1 and 2: the descriptor holds everything. */
static int sframe_func_v12(const struct sframe_sec *sec, u32 i,
			   const u8 *fde, struct sframe_func *fn)
{
	u8 info = fde[16];

	fn->start = sframe_fde_start(sec, i);
	fn->size = get_unaligned_le32(fde + 4);
	fn->fre_off = get_unaligned_le32(fde + 8);
	fn->num_fres = get_unaligned_le32(fde + 12);
	fn->fre_type = SFRAME_FDE_FRE_TYPE(info);
	fn->pcmask = SFRAME_FDE_PCMASK(info);
	fn->rep_size = sec->version == SFRAME_VERSION_2 ? fde[17] : 0;
	fn->fde_type = SFRAME_FDE_TYPE_DEFAULT;
	fn->signal = false;
	return 0;
}

/*
 * Version 3: a fixed-size index entry points at an attribute record in
 * the frame-row sub-section, which the function's rows follow.
 */
static int sframe_func_v3(const struct sframe_sec *sec, u32 i,
			  const u8 *fde, struct sframe_func *fn)
{
	u32 attr = get_unaligned_le32(fde + 12);
	const u8 *a;

	if (attr > sec->fre_len || sec->fre_len - attr < SFRAME_V3_ATTR_SIZE)
		return -ENOEXEC;
	a = sec->data + sec->fre_start + attr;
	fn->start = sframe_fde_start(sec, i);
	fn->size = get_unaligned_le32(fde + 8);
	fn->fre_off = attr + SFRAME_V3_ATTR_SIZE;
	fn->num_fres = get_unaligned_le16(a);
	fn->fre_type = SFRAME_FDE_FRE_TYPE(a[2]);
	fn->pcmask = SFRAME_FDE_PCMASK(a[2]);
	fn->rep_size = a[4];
	fn->fde_type = SFRAME_FDE_TYPE(a[3]);
	fn->signal = SFRAME_FDE_SIGNAL(a[2]);
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
		ret = sframe_func_v3(sec, i, fde, fn);
	else
		ret = sframe_func_v12(sec, i, fde, fn);
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

/* An unsigned or signed value of 1, 2 or 4 bytes. */
static u32 sframe_get_uint(const u8 *p, unsigned int size)
{
	if (size == 1)
		return *p;
	if (size == 2)
		return get_unaligned_le16(p);
	return get_unaligned_le32(p);
}

static s32 sframe_get_int(const u8 *p, unsigned int size)
{
	if (size == 1)
		return (s8)*p;
	if (size == 2)
		return (s16)get_unaligned_le16(p);
	return (s32)get_unaligned_le32(p);
}

/* A frame row entry's fixed part, and its length with its data words. */
struct sframe_fre {
	u32 start;
	u8 info;
	u32 len;
};

/*
 * Read the row at offset @pos of the frame-row sub-section, whose start
 * offset is @addr_size bytes wide.  False unless the whole row lies
 * inside the sub-section with data words of a defined width.  Inlined
 * into the loops over rows that call it, once per row.
 */
static __always_inline bool
sframe_fre_at(const struct sframe_sec *sec, u64 pos, unsigned int addr_size,
	      struct sframe_fre *fre)
{
	const u8 *p;

	if (pos > sec->fre_len || sec->fre_len - pos < addr_size + 1)
		return false;
	p = sec->data + sec->fre_start + pos;
	fre->start = sframe_get_uint(p, addr_size);
	fre->info = p[addr_size];
	if (SFRAME_FRE_OFFSET_SIZE(fre->info) > 2)
		return false;
	fre->len = addr_size + 1 + SFRAME_FRE_N_OFFSETS(fre->info) *
		   (1U << SFRAME_FRE_OFFSET_SIZE(fre->info));
	return sec->fre_len - pos >= fre->len;
}

/*
 * Most offsets a row may carry: a default row's CFA, RA and FP offsets;
 * a flexible row (version 3) as many words as its info byte can count,
 * for sframe_flex_row() to judge at lookup.
 */
static unsigned int sframe_max_offsets(const struct sframe_func *fn)
{
	return fn->fde_type == SFRAME_FDE_TYPE_FLEX ? 15 : 3;
}

/*
 * Walk the rows of one function: each must lie inside the frame-row
 * sub-section, start strictly after the previous one and inside the
 * function (or its repeat block), and carry no more offsets than its
 * kind has, each of a defined width (none marks the outermost frame).
 */
static int sframe_check_rows(const struct sframe_sec *sec,
			     const struct sframe_func *fn)
{
	unsigned int addr_size = 1U << fn->fre_type;
	u64 pos = fn->fre_off;
	u32 r, limit, prev = 0;
	struct sframe_fre fre;

	limit = fn->pcmask ? fn->rep_size : fn->size;
	for (r = 0; r < fn->num_fres; r++) {
		if (!sframe_fre_at(sec, pos, addr_size, &fre))
			return -ENOEXEC;
		if ((r && fre.start <= prev) || (limit && fre.start >= limit))
			return -ENOEXEC;
		if (SFRAME_FRE_N_OFFSETS(fre.info) > sframe_max_offsets(fn))
			return -ENOEXEC;
		pos += fre.len;
		prev = fre.start;
	}
	return 0;
}

/*
 * Validation and conversion run once per section, in process context
 * with no lock held, over up to SFRAME_MAX_SIZE bytes: tens of
 * milliseconds of work.  They let the scheduler in every
 * SFRAME_RESCHED_WORK functions and rows.
 */
#define SFRAME_RESCHED_WORK	0x10000U

static void sframe_work_done(u32 *work, u32 n)
{
	*work += n;
	if (*work >= SFRAME_RESCHED_WORK) {
		*work = 0;
		cond_resched();
	}
}

/**
 * sframe_sec_validate() - check every descriptor of a section once
 * @sec: a section set up by sframe_sec_init().
 *
 * Descriptors must decode, be sorted by start address, not wrap the
 * address space, each start at or after the end of the one before (a
 * PC in two functions would have two answers, the lookup giving the
 * later one), and (versions 1 and 2) have well-formed rows inside
 * the frame-row sub-section.  The rows of all functions together may
 * not exceed the header's row count, which bounds the work by the
 * section's size.
 *
 * Return: 0, or -ENOEXEC on the first malformed descriptor or row.
 */
int sframe_sec_validate(const struct sframe_sec *sec)
{
	unsigned long prev_end = 0, end;
	struct sframe_func fn;
	u32 i, work = 0;
	u64 rows = 0;
	int ret;

	if (sec->num_fres > sec->fre_len / 2)
		return -ENOEXEC;
	for (i = 0; i < sec->num_fdes; i++) {
		ret = sframe_sec_func(sec, i, &fn);
		if (ret)
			return ret;
		if (check_add_overflow(fn.start, (unsigned long)fn.size, &end))
			return -ENOEXEC;
		if (i && fn.start < prev_end)
			return -ENOEXEC;
		rows += fn.num_fres;
		if (rows > sec->num_fres)
			return -ENOEXEC;
		ret = sframe_check_rows(sec, &fn);
		if (ret)
			return ret;
		prev_end = end;
		sframe_work_done(&work, 1 + fn.num_fres);
	}
	return 0;
}

/*
 * Binary search for the last entry whose key is at or below a target.
 * It checks each key it probes against those probed before: the keys
 * must be sorted (strictly, with @strict) and lie within [@lo_key,
 * @hi_key].  A key out of order ends the search: a table the process
 * left unsorted is malformed, never searched into a wrong entry.
 */
struct sframe_search {
	u32 lo;
	u32 hi;
	unsigned long lo_key;
	unsigned long hi_key;
	bool strict;
};

static u32 sframe_search_mid(const struct sframe_search *s)
{
	return s->lo + (s->hi - s->lo) / 2;
}

/* Narrow the search by @key, that of entry @mid; false if out of order. */
static bool sframe_search_step(struct sframe_search *s, u32 mid,
			       unsigned long key, unsigned long target)
{
	if (key <= target) {
		if (key < s->lo_key || (s->strict && key == s->lo_key))
			return false;
		s->lo = mid + 1;
		s->lo_key = key;
	} else {
		if (key > s->hi_key || (s->strict && key == s->hi_key))
			return false;
		s->hi = mid;
		s->hi_key = key;
	}
	return true;
}

/*
 * A default row's data words on AMD64: the CFA offset, then the RA
 * offset unless the header fixes it, then the FP offset, if saved,
 * unless the header fixes it.
 */
static enum sframe_find_result
sframe_default_row(const struct sframe_sec *sec, u8 info, const u8 *words,
		   unsigned int n, unsigned int size, struct sframe_row *row)
{
	unsigned int i = 1;

	row->cfa_base = SFRAME_FRE_CFA_BASE_SP(info) ? SFRAME_CFA_BASE_SP :
						       SFRAME_CFA_BASE_FP;
	row->cfa_off = sframe_get_int(words, size);
	if (sec->cfa_fixed_ra) {
		row->ra_off = sec->cfa_fixed_ra;
	} else {
		/* Without an offset the RA stays in a register: not AMD64. */
		if (i == n)
			return SFRAME_FIND_MALFORMED;
		row->ra_off = sframe_get_int(words + i++ * size, size);
	}
	if (sec->cfa_fixed_fp) {
		row->fp_saved = true;
		row->fp_off = sec->cfa_fixed_fp;
	} else if (i < n) {
		row->fp_saved = true;
		row->fp_off = sframe_get_int(words + i++ * size, size);
	}
	return i == n ? SFRAME_FIND_HIT : SFRAME_FIND_MALFORMED;
}

/* Control word of a flexible rule "the value is saved at CFA + offset". */
#define SFRAME_FLEX_AT_CFA	0x2

/*
 * The flexible rule at word @i of a row of @n words, for the RA or the
 * FP: only "saved at CFA + offset" is accepted, as struct sframe_row
 * has no other.
 */
static bool sframe_flex_at_cfa(const u8 *words, unsigned int i,
			       unsigned int n, unsigned int size, s32 *off)
{
	if (i + 1 >= n || sframe_get_uint(words + i * size, size) !=
			  SFRAME_FLEX_AT_CFA)
		return false;
	*off = sframe_get_int(words + (i + 1) * size, size);
	return true;
}

/*
 * A flexible row (version 3): (control, offset) word pairs giving the
 * rules for the CFA, the RA and the FP, in that order; a single zero
 * control word stands for "no RA rule" when an FP rule follows.  Only the
 * rules struct sframe_row expresses are accepted: CFA = RSP or RBP +
 * offset, RA and FP saved at CFA + offset.  Rules through other or
 * dereferenced registers (DRAP, realigned stacks) are malformed here.
 */
static enum sframe_find_result
sframe_flex_row(const struct sframe_sec *sec, const u8 *words,
		unsigned int n, unsigned int size, struct sframe_row *row)
{
	unsigned int i = 2;
	u32 ctl;

	if (n < 2)
		return SFRAME_FIND_MALFORMED;
	ctl = sframe_get_uint(words, size);
	if (!SFRAME_FLEX_REG_P(ctl) || SFRAME_FLEX_DEREF_P(ctl) ||
	    SFRAME_FLEX_UNUSED(ctl))
		return SFRAME_FIND_MALFORMED;
	if (SFRAME_FLEX_REGNUM(ctl) == SFRAME_DWARF_AMD64_RSP)
		row->cfa_base = SFRAME_CFA_BASE_SP;
	else if (SFRAME_FLEX_REGNUM(ctl) == SFRAME_DWARF_AMD64_RBP)
		row->cfa_base = SFRAME_CFA_BASE_FP;
	else
		return SFRAME_FIND_MALFORMED;
	row->cfa_off = sframe_get_int(words + size, size);

	if (i < n && sframe_get_uint(words + i * size, size)) {
		if (!sframe_flex_at_cfa(words, i, n, size, &row->ra_off))
			return SFRAME_FIND_MALFORMED;
		i += 2;
	} else {
		if (!sec->cfa_fixed_ra)
			return SFRAME_FIND_MALFORMED;
		row->ra_off = sec->cfa_fixed_ra;
		if (i < n)
			i++;	/* the padding word */
	}

	if (i < n) {
		if (!sframe_flex_at_cfa(words, i, n, size, &row->fp_off))
			return SFRAME_FIND_MALFORMED;
		row->fp_saved = true;
		i += 2;
	} else if (sec->cfa_fixed_fp) {
		row->fp_saved = true;
		row->fp_off = sec->cfa_fixed_fp;
	}
	return i == n ? SFRAME_FIND_HIT : SFRAME_FIND_MALFORMED;
}

/*
 * Decode row @fre at offset @pos of the frame-row sub-section.  Its info
 * byte's RA-mangling bit is AArch64's, and a flexible row's CFA base bit
 * is unused: AMD64 ignores both.
 */
static enum sframe_find_result
sframe_fre_decode(const struct sframe_sec *sec, const struct sframe_func *fn,
		  u64 pos, const struct sframe_fre *fre, struct sframe_row *row)
{
	unsigned int n = SFRAME_FRE_N_OFFSETS(fre->info);
	unsigned int size = 1U << SFRAME_FRE_OFFSET_SIZE(fre->info);
	const u8 *words = sec->data + sec->fre_start + pos +
			  (1U << fn->fre_type) + 1;

	*row = (struct sframe_row){};
	if (!n) {
		/* Version 2's erratum 2: no data words, RA undefined. */
		if (sec->version == SFRAME_VERSION_1)
			return SFRAME_FIND_MALFORMED;
		row->ra_undefined = true;
		return SFRAME_FIND_HIT;
	}
	row->signal = fn->signal;
	if (fn->fde_type == SFRAME_FDE_TYPE_FLEX)
		return sframe_flex_row(sec, words, n, size, row);
	return sframe_default_row(sec, fre->info, words, n, size, row);
}

/*
 * Walk the rows of @fn for the one that applies @off bytes into it.  Rows
 * have variable length, so the walk is linear; it checks every row it
 * passes (inside the sub-section, start offsets strictly increasing and
 * inside the function or its repeat block), and SFRAME_MAX_FUNC_FRES
 * bounds it.
 */
static enum sframe_find_result
sframe_sec_rows(const struct sframe_sec *sec, const struct sframe_func *fn,
		u32 off, struct sframe_row *row)
{
	unsigned int addr_size = 1U << fn->fre_type;
	bool v1_mask = fn->pcmask && sec->version == SFRAME_VERSION_1;
	u32 target = off, limit = fn->size, r, prev = 0;
	struct sframe_fre fre, found = {};
	u64 pos = fn->fre_off, found_pos = 0;
	bool hit = false, match;

	if (fn->num_fres > SFRAME_MAX_FUNC_FRES)
		return SFRAME_FIND_MALFORMED;
	if (!fn->num_fres && sec->version == SFRAME_VERSION_3 &&
	    fn->fde_type == SFRAME_FDE_TYPE_DEFAULT) {
		/* Version 3 marks an outermost function with no rows. */
		*row = (struct sframe_row){ .ra_undefined = true };
		return SFRAME_FIND_HIT;
	}
	if (fn->pcmask && !v1_mask) {
		/* sframe_sec_func() refused a zero rep_size. */
		target = off % fn->rep_size;
		limit = fn->rep_size;
	}

	for (r = 0; r < fn->num_fres; r++) {
		if (!sframe_fre_at(sec, pos, addr_size, &fre))
			return SFRAME_FIND_MALFORMED;
		if ((r && fre.start <= prev) || fre.start >= limit)
			return SFRAME_FIND_MALFORMED;
		/*
		 * Version 1 PCMASK rows hold masks: a row applies where
		 * (pc & mask) >= mask.  Otherwise rows apply from their
		 * start offset on, and are sorted.
		 */
		if (v1_mask)
			match = (target & fre.start) >= fre.start;
		else
			match = fre.start <= target;
		if (match) {
			found = fre;
			found_pos = pos;
			hit = true;
		} else if (!v1_mask) {
			break;
		}
		prev = fre.start;
		pos += fre.len;
	}
	if (!hit)
		return SFRAME_FIND_NONE;
	return sframe_fre_decode(sec, fn, found_pos, &found, row);
}

/**
 * sframe_sec_find() - find the frame row that applies at a PC
 * @sec: a section set up by sframe_sec_init().
 * @pc: the address to look up.
 * @row: the row, on SFRAME_FIND_HIT; untouched otherwise.
 *
 * Binary-searches the function descriptors for the last one starting at
 * or below @pc, checking on the way that they are sorted, then walks that
 * function's rows.  The section need not have been validated by
 * sframe_sec_validate(): whatever the bytes, the lookup stays inside the
 * section and ends.  The row is always one of the function that contains
 * @pc.  Safe in any context.
 *
 * Return: SFRAME_FIND_HIT; SFRAME_FIND_NONE if no function contains @pc,
 * or none of its rows starts at or before it; SFRAME_FIND_MALFORMED if a
 * descriptor or row met is out of order, out of bounds, undefined, or a
 * rule struct sframe_row cannot express (see sframe_flex_row()).
 */
enum sframe_find_result sframe_sec_find(const struct sframe_sec *sec,
					unsigned long pc,
					struct sframe_row *row)
{
	struct sframe_search s = { .hi = sec->num_fdes, .hi_key = ULONG_MAX };
	enum sframe_find_result ret;
	struct sframe_row found;
	struct sframe_func fn;
	unsigned long end;
	u32 mid;

	while (s.lo < s.hi) {
		mid = sframe_search_mid(&s);
		if (!sframe_search_step(&s, mid, sframe_fde_start(sec, mid), pc))
			return SFRAME_FIND_MALFORMED;
	}
	if (!s.lo)
		return SFRAME_FIND_NONE;
	if (sframe_sec_func(sec, s.lo - 1, &fn))
		return SFRAME_FIND_MALFORMED;
	if (fn.fde_type > SFRAME_FDE_TYPE_FLEX ||
	    check_add_overflow(fn.start, (unsigned long)fn.size, &end))
		return SFRAME_FIND_MALFORMED;
	if (pc >= end)
		return SFRAME_FIND_NONE;
	ret = sframe_sec_rows(sec, &fn, pc - fn.start, &found);
	if (ret == SFRAME_FIND_HIT)
		*row = found;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_sec_find);

/*
 * The caps a converted table puts on one function, which bound the
 * search of its rows (SFRAME_TABLE_MAX_READS).
 */
static int sframe_table_func_ok(const struct sframe_sec *sec,
				const struct sframe_func *fn)
{
	if (fn->num_fres > SFRAME_MAX_FUNC_FRES)
		return -E2BIG;
	if (fn->pcmask && sec->version == SFRAME_VERSION_1 &&
	    fn->num_fres > SFRAME_MAX_MASK_FRES)
		return -E2BIG;
	return 0;
}

/*
 * Rows counted by the descriptors of @sec, the most a table of it holds,
 * or an error as sframe_table_size() gives.
 */
static int sframe_table_max_rows(const struct sframe_sec *sec, u32 *rows)
{
	struct sframe_func fn;
	u64 n = 0;
	u32 i;
	int ret;

	for (i = 0; i < sec->num_fdes; i++) {
		ret = sframe_sec_func(sec, i, &fn);
		if (!ret)
			ret = sframe_table_func_ok(sec, &fn);
		if (ret)
			return ret;
		n += fn.num_fres;
	}
	if (n > sec->num_fres)
		return -ENOEXEC;
	*rows = n;
	return 0;
}

/*
 * The build's hash of the rules, in slots after the rules in its scratch
 * buffer: a power of two, twice the rows, at most SFRAME_HASH_SLOTS.  A
 * section of more distinct rules than a probe run finds room for keeps
 * some of them twice, which only costs bytes, up to
 * SFRAME_TABLE_MAX_RULES.
 */
#define SFRAME_HASH_SLOTS	0x10000U
#define SFRAME_HASH_PROBES	32U
#define SFRAME_HASH_EMPTY	U32_MAX

static u32 sframe_hash_slots(u32 rows)
{
	u32 n = 16;

	while (n < SFRAME_HASH_SLOTS && n / 2 < rows)
		n *= 2;
	return n;
}

/* Rules a build of @rows rows may have to keep. */
static u32 sframe_rules_room(u32 rows)
{
	return min(rows, SFRAME_TABLE_MAX_RULES);
}

/* Bytes of a table's own buffer: @funcs functions and @rows rows. */
static size_t sframe_table_head(u32 funcs, u32 rows)
{
	return sizeof(struct sframe_table) +
	       (size_t)funcs * (sizeof(unsigned long) +
				sizeof(struct sframe_table_func)) +
	       (size_t)rows * sizeof(struct sframe_table_row);
}

/**
 * sframe_table_size() - bytes sframe_table_build() needs for a section
 * @sec: a section sframe_sec_validate() accepted.
 * @size: set to the bytes of the table's own buffer.
 * @scratch: set to the bytes of the scratch buffer the build needs.
 *
 * A built table takes, in its own buffer, a struct sframe_table, a start
 * address and a struct sframe_table_func per descriptor (20 bytes) and a
 * struct sframe_table_row per row the descriptors count (8 bytes), which
 * validation bounds by half the frame-row sub-section.  Its rules, a
 * struct sframe_row (16 bytes) per distinct rule, are built in the
 * scratch buffer, with the hash that finds them: at most
 * SFRAME_TABLE_MAX_RULES rules, so the scratch is bounded whatever the
 * section's size.  sframe_table_keep_rules() moves them out of it.
 *
 * Return: 0; -E2BIG if a function has more than SFRAME_MAX_FUNC_FRES
 * rows, or is a version 1 PCMASK function of more than
 * SFRAME_MAX_MASK_FRES; -ENOEXEC if a descriptor does not decode.
 */
int sframe_table_size(const struct sframe_sec *sec, size_t *size,
		      size_t *scratch)
{
	u32 rows;
	int ret;

	ret = sframe_table_max_rows(sec, &rows);
	if (ret)
		return ret;
	*size = sframe_table_head(sec->num_fdes, rows);
	*scratch = (size_t)sframe_rules_room(rows) * sizeof(struct sframe_row) +
		   (size_t)sframe_hash_slots(rows) * sizeof(u32);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_size);

/**
 * sframe_table_bound() - most bytes a table's buffer takes, by the header
 * @sec: a section whose header sframe_sec_init() accepted; neither its
 *	descriptors nor its rows are read, so @sec may have been set up from
 *	a copy of the header alone.
 *
 * Validation bounds the rows the descriptors count by the header's row
 * count, so the buffer of a table of the section, if it validates, takes
 * no more than this: what a registration can be charged before it copies
 * the section.  The rules come on top, once they are counted.
 *
 * Return: the bound in bytes.
 */
size_t sframe_table_bound(const struct sframe_sec *sec)
{
	return sframe_table_head(sec->num_fdes, sec->num_fres);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_bound);

/**
 * sframe_table_rules_bytes() - bytes of a built table's rules
 * @t: a table sframe_table_build() made.
 *
 * Return: what sframe_table_keep_rules() copies.
 */
size_t sframe_table_rules_bytes(const struct sframe_table *t)
{
	return (size_t)t->nr_rules * sizeof(struct sframe_row);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_rules_bytes);

/**
 * sframe_table_keep_rules() - move a built table's rules out of its scratch
 * @t: a table sframe_table_build() made, whose rules are in its scratch
 *	buffer.
 * @rules: sframe_table_rules_bytes(@t) bytes, which the table points
 *	into from now on: the scratch buffer may then be freed.
 */
void sframe_table_keep_rules(struct sframe_table *t, struct sframe_row *rules)
{
	memcpy(rules, t->rules, sframe_table_rules_bytes(t));
	t->rules = rules;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_keep_rules);

/* Point @t's arrays into its buffer, one after the other. */
static void sframe_table_link(struct sframe_table *t)
{
	t->starts = (unsigned long *)(t + 1);
	t->funcs = (struct sframe_table_func *)(t->starts + t->nr_funcs);
	t->rows = (struct sframe_table_row *)(t->funcs + t->nr_funcs);
}

/* The hash of a rule, over every field a lookup gives. */
static u32 sframe_rule_hash(const struct sframe_row *r)
{
	u32 h = r->cfa_base | r->ra_undefined << 8 | r->fp_saved << 9 |
		r->signal << 10;

	h = (h ^ (u32)r->cfa_off) * 0x9e3779b1U;
	h = (h ^ (u32)r->ra_off) * 0x9e3779b1U;
	h = (h ^ (u32)r->fp_off) * 0x9e3779b1U;
	return h ^ h >> 16;
}

static bool sframe_rule_eq(const struct sframe_row *a,
			   const struct sframe_row *b)
{
	return a->cfa_base == b->cfa_base &&
	       a->ra_undefined == b->ra_undefined &&
	       a->fp_saved == b->fp_saved && a->signal == b->signal &&
	       a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off;
}

/* What a build keeps in its scratch beside the rules: their hash. */
struct sframe_table_hash {
	u32 *slots;
	u32 mask;
	u32 room;
};

/*
 * Set @index to that of rule @r in @t's rules, added if it is not there
 * yet.  At most SFRAME_HASH_PROBES slots are tried, so that rows crafted
 * to collide cost no more than that each.  -E2BIG past the rules' room.
 */
static int sframe_table_rule(struct sframe_table *t,
			     struct sframe_table_hash *h,
			     const struct sframe_row *r, u32 *index)
{
	u32 slot = sframe_rule_hash(r), p, *s = NULL;

	for (p = 0; p < SFRAME_HASH_PROBES; p++) {
		s = &h->slots[(slot + p) & h->mask];
		if (*s == SFRAME_HASH_EMPTY)
			break;
		if (sframe_rule_eq(&t->rules[*s], r)) {
			*index = *s;
			return 0;
		}
		s = NULL;
	}
	if (t->nr_rules == h->room)
		return -E2BIG;
	if (s)
		*s = t->nr_rules;
	t->rules[t->nr_rules] = *r;
	*index = t->nr_rules++;
	return 0;
}

/* Row @fre at @pos, decoded once as sframe_sec_find() would decode it. */
static int sframe_table_add_row(const struct sframe_sec *sec,
				const struct sframe_func *fn, u64 pos,
				const struct sframe_fre *fre,
				struct sframe_table *t,
				struct sframe_table_hash *h,
				struct sframe_table_row *tr)
{
	struct sframe_row r;

	tr->start = fre->start;
	if (sframe_fre_decode(sec, fn, pos, fre, &r) != SFRAME_FIND_HIT)
		r = (struct sframe_row){
			.cfa_base = SFRAME_CFA_BASE_MALFORMED,
		};
	return sframe_table_rule(t, h, &r, &tr->rule);
}

/*
 * Convert the rows of @fn, with the checks sframe_sec_rows() makes as it
 * walks them, up to the first that fails them.  A lookup that would walk
 * onto that row is malformed: with version 1 masks every lookup, which
 * walks all rows; otherwise one past the last good row, or any if the
 * first is bad.
 */
static int sframe_table_add_rows(const struct sframe_sec *sec,
				 const struct sframe_func *fn,
				 struct sframe_table *t,
				 struct sframe_table_hash *h,
				 struct sframe_table_func *tf)
{
	unsigned int addr_size = 1U << fn->fre_type;
	u32 limit = tf->flags & SFRAME_TF_MODULO ? fn->rep_size : fn->size;
	struct sframe_table_row *rows = t->rows + t->nr_rows;
	u64 pos = fn->fre_off;
	struct sframe_fre fre;
	u32 r, prev = 0;
	int ret;

	for (r = 0; r < fn->num_fres; r++) {
		if (!sframe_fre_at(sec, pos, addr_size, &fre) ||
		    (r && fre.start <= prev) || fre.start >= limit)
			break;
		ret = sframe_table_add_row(sec, fn, pos, &fre, t, h, &rows[r]);
		if (ret)
			return ret;
		prev = fre.start;
		pos += fre.len;
	}
	tf->nr = r;
	t->nr_rows += r;
	if (r == fn->num_fres)
		return 0;
	if (!r || (tf->flags & SFRAME_TF_MASK))
		tf->flags = SFRAME_TF_MALFORMED;
	else
		tf->flags |= SFRAME_TF_TAIL_BAD;
	return 0;
}

/* Convert descriptor @i and its rows. */
static int sframe_table_add_func(const struct sframe_sec *sec,
				 struct sframe_table *t,
				 struct sframe_table_hash *h, u32 i)
{
	struct sframe_table_func *tf = &t->funcs[i];
	struct sframe_func fn;
	unsigned long end;
	int ret;

	ret = sframe_sec_func(sec, i, &fn);
	if (ret)
		return ret;
	/* Validation checked both; the search relies on them. */
	if (check_add_overflow(fn.start, (unsigned long)fn.size, &end) ||
	    (i && fn.start < t->starts[i - 1]))
		return -ENOEXEC;
	t->starts[i] = fn.start;
	*tf = (struct sframe_table_func){
		.size = fn.size,
		.first = t->nr_rows,
	};
	if (fn.fde_type > SFRAME_FDE_TYPE_FLEX) {
		tf->flags = SFRAME_TF_BAD_TYPE;
		return 0;
	}
	if (!fn.num_fres && sec->version == SFRAME_VERSION_3 &&
	    fn.fde_type == SFRAME_FDE_TYPE_DEFAULT) {
		tf->flags = SFRAME_TF_OUTERMOST;
		return 0;
	}
	if (fn.pcmask && sec->version == SFRAME_VERSION_1) {
		tf->flags = SFRAME_TF_MASK;
	} else if (fn.pcmask) {
		/* sframe_sec_func() refused a zero repeat size. */
		if (!fn.rep_size)
			return -ENOEXEC;
		tf->flags = SFRAME_TF_MODULO;
		tf->rep_size = fn.rep_size;
	}
	return sframe_table_add_rows(sec, &fn, t, h, tf);
}

/**
 * sframe_table_build() - convert a section for bounded lookups
 * @sec: a section sframe_sec_validate() accepted.
 * @t: the table, at the start of a buffer of @size bytes.
 * @size: at least what sframe_table_size() gave as the table's.
 * @scratch: a buffer of @scratch_size bytes for the rules and their hash.
 * @scratch_size: at least what sframe_table_size() gave as the scratch's.
 *
 * Decodes every descriptor and row once into the records of struct
 * sframe_table, which point into the buffer, and the rules into
 * @scratch, each distinct rule once, found through a hash beside them
 * that lookups do not read: sframe_table_keep_rules() moves the rules
 * out before @scratch goes.  After that, lookups read neither @sec nor
 * its bytes.  Runs where it may take its time (it walks every row),
 * never in NMI context.
 *
 * Return: 0; -E2BIG for a function over the caps of sframe_table_size(),
 * or for more than SFRAME_TABLE_MAX_RULES rules; -EINVAL if a buffer is
 * too small; -ENOEXEC for a section that does not validate.
 */
int sframe_table_build(const struct sframe_sec *sec, struct sframe_table *t,
		       size_t size, void *scratch, size_t scratch_size)
{
	size_t need, need_scratch;
	struct sframe_table_hash h;
	u32 i, rows, work = 0;
	int ret;

	ret = sframe_table_size(sec, &need, &need_scratch);
	if (ret)
		return ret;
	if (size < need || scratch_size < need_scratch)
		return -EINVAL;
	ret = sframe_table_max_rows(sec, &rows);
	if (ret)
		return ret;
	t->nr_funcs = sec->num_fdes;
	t->nr_rows = 0;
	t->nr_rules = 0;
	sframe_table_link(t);
	t->rules = scratch;
	h.room = sframe_rules_room(rows);
	h.slots = (u32 *)(t->rules + h.room);
	h.mask = sframe_hash_slots(rows) - 1;
	memset(h.slots, 0xff, (h.mask + 1) * sizeof(u32));
	for (i = 0; i < sec->num_fdes; i++) {
		ret = sframe_table_add_func(sec, t, &h, i);
		if (ret)
			return ret;
		sframe_work_done(&work, 1 + t->funcs[i].nr);
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_build);

/* How many functions start at or below @pc: at most log2(n) + 1 probes. */
static __always_inline u32
sframe_table_funcs_below(const struct sframe_table *t, unsigned long pc,
			 u32 *reads)
{
	u32 lo = 0, hi = t->nr_funcs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		++*reads;
		if (t->starts[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* How many of the @nr sorted rows start at or below @target; as above. */
static __always_inline u32
sframe_table_rows_below(const struct sframe_table_row *rows, u32 nr,
			u32 target, u32 *reads)
{
	u32 lo = 0, hi = nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		++*reads;
		if (rows[mid].start <= target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Version 1 masks: one past the last row all of whose bits @off has. */
static __always_inline u32
sframe_table_mask_match(const struct sframe_table_row *rows, u32 nr, u32 off,
			u32 *reads)
{
	u32 r, found = 0;

	for (r = 0; r < nr; r++) {
		++*reads;
		if ((off & rows[r].start) == rows[r].start)
			found = r + 1;
	}
	return found;
}

/* The rule of row @tr: one more record read. */
static __always_inline enum sframe_find_result
sframe_table_row_get(const struct sframe_table *t,
		     const struct sframe_table_row *tr, struct sframe_row *row,
		     u32 *reads)
{
	const struct sframe_row *rule = &t->rules[tr->rule];

	++*reads;
	if (rule->cfa_base == SFRAME_CFA_BASE_MALFORMED)
		return SFRAME_FIND_MALFORMED;
	*row = *rule;
	return SFRAME_FIND_HIT;
}

/* The rows of @fn: which one applies @off bytes in (0: none), or -1. */
static __always_inline int
sframe_table_func_row(const struct sframe_table *t,
		      const struct sframe_table_func *fn, u32 off, u32 *reads)
{
	const struct sframe_table_row *rows = t->rows + fn->first;
	u32 n;

	if (fn->flags & SFRAME_TF_MASK)
		return sframe_table_mask_match(rows, fn->nr, off, reads);
	if (fn->flags & SFRAME_TF_MODULO)
		off %= fn->rep_size;
	n = sframe_table_rows_below(rows, fn->nr, off, reads);
	/* sframe_sec_rows() would read the malformed row after the last. */
	if (n == fn->nr && (fn->flags & SFRAME_TF_TAIL_BAD))
		return -1;
	return n;
}

/* The lookup, inlined into both callers so that counting costs nothing. */
static __always_inline enum sframe_find_result
sframe_table_lookup(const struct sframe_table *t, unsigned long pc,
		    struct sframe_row *row, u32 *reads)
{
	const struct sframe_table_func *fn;
	u32 i;
	int n;

	i = sframe_table_funcs_below(t, pc, reads);
	if (!i)
		return SFRAME_FIND_NONE;
	fn = &t->funcs[i - 1];
	++*reads;
	/* sframe_sec_find() refuses an unknown type before the size. */
	if (fn->flags & SFRAME_TF_BAD_TYPE)
		return SFRAME_FIND_MALFORMED;
	pc -= t->starts[i - 1];
	if (pc >= fn->size)
		return SFRAME_FIND_NONE;
	if (fn->flags & SFRAME_TF_MALFORMED)
		return SFRAME_FIND_MALFORMED;
	if (fn->flags & SFRAME_TF_OUTERMOST) {
		*row = (struct sframe_row){ .ra_undefined = true };
		return SFRAME_FIND_HIT;
	}
	n = sframe_table_func_row(t, fn, pc, reads);
	if (n < 0)
		return SFRAME_FIND_MALFORMED;
	if (!n)
		return SFRAME_FIND_NONE;
	++*reads;
	return sframe_table_row_get(t, &t->rows[fn->first + n - 1], row,
				    reads);
}

/**
 * sframe_table_find() - find the frame row that applies at a PC
 * @t: a table sframe_table_build() made.
 * @pc: the address to look up.
 * @row: the row, on SFRAME_FIND_HIT; untouched otherwise.
 *
 * Gives what sframe_sec_find() gives on the section @t was built from,
 * reading at most SFRAME_TABLE_MAX_READS of its records.  Safe in NMI
 * context.
 *
 * Return: as sframe_sec_find().
 */
enum sframe_find_result sframe_table_find(const struct sframe_table *t,
					  unsigned long pc,
					  struct sframe_row *row)
{
	u32 reads = 0;

	return sframe_table_lookup(t, pc, row, &reads);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_find);

/**
 * sframe_table_find_reads() - sframe_table_find(), counting its work
 * @t: a table sframe_table_build() made.
 * @pc: the address to look up.
 * @row: the row, on SFRAME_FIND_HIT; untouched otherwise.
 * @reads: set to the number of function and row records read, for the
 *	tests and benchmarks that check SFRAME_TABLE_MAX_READS.
 *
 * Return: as sframe_table_find().
 */
enum sframe_find_result sframe_table_find_reads(const struct sframe_table *t,
						unsigned long pc,
						struct sframe_row *row,
						u32 *reads)
{
	*reads = 0;
	return sframe_table_lookup(t, pc, row, reads);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_table_find_reads);

static const struct sframe_jit_fde *
sframe_jit_fdes(const struct sframe_jit_view *v)
{
	return (const struct sframe_jit_fde *)((const u8 *)v->base + v->fde_off);
}

static const struct sframe_jit_fre *
sframe_jit_fres(const struct sframe_jit_view *v)
{
	return (const struct sframe_jit_fre *)((const u8 *)v->base + v->fre_off);
}

/*
 * Check and decode a frame rule whose fields were each read once into
 * @r: a version 1 row's or a compact row's rule, which have the same
 * fields and checks.
 */
static enum sframe_find_result
sframe_jit_decode(const struct sframe_jit_rule *r, struct sframe_row *row)
{
	/* Reserved bits are refused, so that they can be given a meaning. */
	if (r->reserved ||
	    r->flags & ~(SFRAME_JIT_FRE_FP_SAVED | SFRAME_JIT_FRE_RA_UNDEFINED))
		return SFRAME_FIND_MALFORMED;
	if (r->cfa_base != SFRAME_JIT_CFA_SP && r->cfa_base != SFRAME_JIT_CFA_FP)
		return SFRAME_FIND_MALFORMED;
	if (r->flags & SFRAME_JIT_FRE_RA_UNDEFINED) {
		*row = (struct sframe_row){ .ra_undefined = true };
		return SFRAME_FIND_HIT;
	}
	*row = (struct sframe_row){
		.cfa_base = r->cfa_base == SFRAME_JIT_CFA_SP ?
			    SFRAME_CFA_BASE_SP : SFRAME_CFA_BASE_FP,
		.cfa_off = r->cfa_off,
		.ra_off = r->ra_off,
	};
	if (r->flags & SFRAME_JIT_FRE_FP_SAVED) {
		row->fp_saved = true;
		row->fp_off = r->fp_off;
	}
	return SFRAME_FIND_HIT;
}

/* Decode one JIT frame row, reading each of its fields once. */
static enum sframe_find_result sframe_jit_row(const struct sframe_jit_fre *fre,
					      struct sframe_row *row)
{
	struct sframe_jit_rule r = {
		.cfa_off = READ_ONCE(fre->cfa_off),
		.ra_off = READ_ONCE(fre->ra_off),
		.fp_off = READ_ONCE(fre->fp_off),
		.cfa_base = READ_ONCE(fre->cfa_base),
		.flags = READ_ONCE(fre->flags),
		.reserved = READ_ONCE(fre->reserved),
	};

	return sframe_jit_decode(&r, row);
}

/*
 * Compact registries (SFRAME_JIT_F_COMPACT).  The descriptor search is
 * that of version 1 step for step, with function starts as offsets into
 * the code range; one row search serves both kinds, and a compact row's
 * rule is read from the rule area by its index.
 */
static const struct sframe_jit_cfde *
sframe_jit_cfdes(const struct sframe_jit_view *v)
{
	return (const struct sframe_jit_cfde *)((const u8 *)v->base + v->fde_off);
}

static const struct sframe_jit_cfre *
sframe_jit_cfres(const struct sframe_jit_view *v)
{
	return (const struct sframe_jit_cfre *)((const u8 *)v->base + v->fre_off);
}

/* The rule at @index, checked against the capacity the kernel keeps. */
static enum sframe_find_result
sframe_jit_rule_get(const struct sframe_jit_view *v, u32 index,
		    struct sframe_row *row)
{
	const struct sframe_jit_rule *rule;
	struct sframe_jit_rule r;

	if (index >= v->rule_cap)
		return SFRAME_FIND_MALFORMED;
	rule = (const struct sframe_jit_rule *)((const u8 *)v->base +
						v->rule_off) + index;
	r = (struct sframe_jit_rule){
		.cfa_off = READ_ONCE(rule->cfa_off),
		.ra_off = READ_ONCE(rule->ra_off),
		.fp_off = READ_ONCE(rule->fp_off),
		.cfa_base = READ_ONCE(rule->cfa_base),
		.flags = READ_ONCE(rule->flags),
		.reserved = READ_ONCE(rule->reserved),
	};
	return sframe_jit_decode(&r, row);
}

/*
 * The start of row @i of @rows, a compact registry's rows or version
 * 1's: a u16 or a u32.  The row search below is inline, and each caller
 * passes a constant @compact, so that each kind gets a search of its
 * own with no test of the kind in its steps.
 */
static __always_inline u32 sframe_jit_row_start(const void *rows, bool compact,
						u32 i)
{
	if (compact)
		return READ_ONCE(((const struct sframe_jit_cfre *)rows)[i].start_off);
	return READ_ONCE(((const struct sframe_jit_fre *)rows)[i].start_off);
}

/* Row @i's rule: its own in version 1, by its index when compact. */
static __always_inline enum sframe_find_result
sframe_jit_row_rule(const struct sframe_jit_view *v, const void *rows,
		    bool compact, u32 i, struct sframe_row *row)
{
	const struct sframe_jit_cfre *cfre = rows;

	if (compact)
		return sframe_jit_rule_get(v, READ_ONCE(cfre[i].rule), row);
	return sframe_jit_row((const struct sframe_jit_fre *)rows + i, row);
}

/*
 * The row of a function's @count rows, from @first on, that applies at
 * @target bytes into it (or into its repeat block): rows are fixed-size,
 * so a binary search, which checks that the first row starts at 0 and
 * that the rows it probes increase strictly and stay below @limit.  The
 * caller has checked that the rows lie inside the row area.
 *
 * The search probes the row it picks and the one after it, but not
 * always the one before: rows (0, 20, 4) would give the row at 4 for
 * offset 10 without ever reading the 20.  So that row is read too, and
 * must start below the picked one.  A PC's row is then the one its
 * neighbours agree on; disorder elsewhere among the rows goes unseen,
 * as a lookup reads O(log n) of them.
 */
static __always_inline enum sframe_find_result
sframe_jit_rows(const struct sframe_jit_view *v, bool compact, u32 first,
		u32 count, u32 target, u32 limit, struct sframe_row *row)
{
	const void *rows = compact ? (const void *)(sframe_jit_cfres(v) + first) :
				     (const void *)(sframe_jit_fres(v) + first);
	struct sframe_search s = {
		.lo = 1, .hi = count, .lo_key = 0, .hi_key = limit,
		.strict = true,
	};
	u32 mid;

	if (sframe_jit_row_start(rows, compact, 0))
		return SFRAME_FIND_MALFORMED;
	while (s.lo < s.hi) {
		mid = sframe_search_mid(&s);
		if (!sframe_search_step(&s, mid,
					sframe_jit_row_start(rows, compact, mid),
					target))
			return SFRAME_FIND_MALFORMED;
	}
	/* Row 0 starts at 0, below any row 1 the search accepted. */
	if (s.lo >= 3 &&
	    sframe_jit_row_start(rows, compact, s.lo - 2) >= s.lo_key)
		return SFRAME_FIND_MALFORMED;
	return sframe_jit_row_rule(v, rows, compact, s.lo - 1, row);
}

/*
 * The descriptor before the one the search picked, which the search may
 * not have probed, must end at or before @start: otherwise descriptors
 * out of order or overlapping would give a PC a function that does not
 * contain it, or leave it to one that ends before it.
 */
static bool sframe_jit_prev_fits(const struct sframe_jit_fde *prev,
				 unsigned long start)
{
	unsigned long prev_start = READ_ONCE(prev->func_start);
	unsigned long prev_end;

	return !check_add_overflow(prev_start,
				   (unsigned long)READ_ONCE(prev->func_size),
				   &prev_end) && prev_end <= start;
}

/*
 * Look @pc up among the first @count descriptors, @count being at most
 * the capacity.  Each field of the descriptor found is read once:
 * func_start during the search, the others after it; the descriptor
 * before it is read for its end.
 */
static enum sframe_find_result
sframe_jit_lookup(const struct sframe_jit_view *v, u32 count,
		  unsigned long pc, struct sframe_row *row)
{
	struct sframe_search s = { .hi = count, .hi_key = ULONG_MAX };
	const struct sframe_jit_fde *fde;
	u32 mid, size, first, nr, off, target, limit;
	unsigned long start, end;
	u8 type, rep_size;
	u16 flags;

	while (s.lo < s.hi) {
		mid = sframe_search_mid(&s);
		start = READ_ONCE(sframe_jit_fdes(v)[mid].func_start);
		if (!sframe_search_step(&s, mid, start, pc))
			return SFRAME_FIND_MALFORMED;
	}
	if (!s.lo)
		return SFRAME_FIND_NONE;

	fde = sframe_jit_fdes(v) + s.lo - 1;
	start = s.lo_key;
	if (s.lo >= 2 && !sframe_jit_prev_fits(fde - 1, start))
		return SFRAME_FIND_MALFORMED;
	size = READ_ONCE(fde->func_size);
	first = READ_ONCE(fde->fre_start);
	nr = READ_ONCE(fde->fre_count);
	flags = READ_ONCE(fde->flags);
	type = READ_ONCE(fde->type);
	rep_size = READ_ONCE(fde->rep_size);

	if (flags & ~SFRAME_JIT_FDE_TOMBSTONE)
		return SFRAME_FIND_MALFORMED;
	if (start < v->text_start ||
	    check_add_overflow(start, (unsigned long)size, &end) ||
	    end > v->text_end)
		return SFRAME_FIND_MALFORMED;
	/* In a gap after the function, or past the last one. */
	if (pc >= end)
		return SFRAME_FIND_NONE;
	if (flags & SFRAME_JIT_FDE_TOMBSTONE)
		return SFRAME_FIND_TOMBSTONE;

	off = pc - start;
	switch (type) {
	case SFRAME_JIT_FDE_PCINC:
		target = off;
		limit = size;
		break;
	case SFRAME_JIT_FDE_PCMASK:
		if (!rep_size)
			return SFRAME_FIND_MALFORMED;
		target = off % rep_size;
		limit = rep_size;
		break;
	default:
		return SFRAME_FIND_MALFORMED;
	}
	if (!nr || first > v->fre_cap || nr > v->fre_cap - first)
		return SFRAME_FIND_MALFORMED;
	return sframe_jit_rows(v, false, first, nr, target, limit, row);
}

/* As sframe_jit_prev_fits(), with @start an offset into the range. */
static bool sframe_jit_cprev_fits(const struct sframe_jit_cfde *prev,
				  u64 start)
{
	return (u64)READ_ONCE(prev->func_off) + READ_ONCE(prev->func_size) <=
	       start;
}

/*
 * The descriptor @fde that the search picked for @off, the PC's offset
 * into the range, at @start: each of its fields but func_off, which the
 * search read, is read once.  The sums are of two 32-bit values in 64
 * bits, so they cannot wrap.
 */
static enum sframe_find_result
sframe_jit_cfde_find(const struct sframe_jit_view *v,
		     const struct sframe_jit_cfde *fde, u64 start, u64 off,
		     struct sframe_row *row)
{
	u32 size = READ_ONCE(fde->func_size);
	u32 first = READ_ONCE(fde->fre_start);
	u16 nr = READ_ONCE(fde->fre_count);
	u8 flags = READ_ONCE(fde->flags);
	u8 rep_size = READ_ONCE(fde->rep_size);
	u32 target, limit;

	if (flags & ~(SFRAME_JIT_FDE_TOMBSTONE | SFRAME_JIT_CFDE_PCMASK))
		return SFRAME_FIND_MALFORMED;
	if (start + size > v->text_end - v->text_start)
		return SFRAME_FIND_MALFORMED;
	if (off >= start + size)
		return SFRAME_FIND_NONE;
	if (flags & SFRAME_JIT_FDE_TOMBSTONE)
		return SFRAME_FIND_TOMBSTONE;
	target = off - start;
	limit = size;
	if (flags & SFRAME_JIT_CFDE_PCMASK) {
		if (!rep_size)
			return SFRAME_FIND_MALFORMED;
		target %= rep_size;
		limit = rep_size;
	}
	if (!nr || first > v->fre_cap || nr > v->fre_cap - first)
		return SFRAME_FIND_MALFORMED;
	return sframe_jit_rows(v, true, first, nr, target, limit, row);
}

/* As sframe_jit_lookup(), in a compact registry. */
static enum sframe_find_result
sframe_jit_clookup(const struct sframe_jit_view *v, u32 count,
		   unsigned long pc, struct sframe_row *row)
{
	struct sframe_search s = { .hi = count, .hi_key = ULONG_MAX };
	const struct sframe_jit_cfde *fde;
	unsigned long off;
	u32 mid;

	if (pc < v->text_start)
		return SFRAME_FIND_NONE;
	off = pc - v->text_start;
	while (s.lo < s.hi) {
		mid = sframe_search_mid(&s);
		if (!sframe_search_step(&s, mid,
					READ_ONCE(sframe_jit_cfdes(v)[mid].func_off),
					off))
			return SFRAME_FIND_MALFORMED;
	}
	if (!s.lo)
		return SFRAME_FIND_NONE;
	fde = sframe_jit_cfdes(v) + s.lo - 1;
	if (s.lo >= 2 && !sframe_jit_cprev_fits(fde - 1, s.lo_key))
		return SFRAME_FIND_MALFORMED;
	return sframe_jit_cfde_find(v, fde, s.lo_key, off, row);
}

/**
 * sframe_jit_max_reads() - most records a lookup in a JIT registry reads
 * @v: the kernel's private view of the registry.
 *
 * The header twice (seq before and after), at most fls() of the
 * descriptor capacity descriptors probed, the one found and the one
 * before, the function's first row, at most fls() of the row capacity
 * rows probed, the one before the row found, and its rule: at most
 * SFRAME_JIT_MAX_READS.  From the capacities the kernel keeps, never
 * from the registry.
 *
 * Return: the bound.
 */
u32 sframe_jit_max_reads(const struct sframe_jit_view *v)
{
	return 8 + fls(v->fde_cap) + fls(v->fre_cap);
}
EXPORT_SYMBOL_IF_KUNIT(sframe_jit_max_reads);

/**
 * sframe_jit_find() - find the frame row that applies at a PC in a JIT
 *	registry
 * @v: the kernel's private view of the registry.
 * @pc: the address to look up, inside [@v->text_start, @v->text_end).
 * @row: the row, on SFRAME_FIND_HIT; untouched otherwise.
 *
 * The registry's process may write it at any time.  The lookup reads the
 * published descriptor count once, with acquire semantics, and clamps it
 * to the capacity; it binary-searches the descriptors, checking that
 * those it probes are sorted and that the one before the descriptor it
 * finds ends at or before it, then the function's rows, checking that
 * those it probes and the one before the row it finds increase strictly.
 * It reads every descriptor and row field it uses once, and only inside
 * the areas @v describes.  The header's seq is read before and after:
 * odd, or changed meanwhile, the result is SFRAME_FIND_RETRY, whatever
 * was found.  A header whose reserved0 is not zero makes every lookup
 * malformed.  A compact registry (@v->compact) is searched the same way,
 * and the rule of the row found is read from its rule area, its index
 * checked against the capacity.  The lookup neither loops on seq nor
 * waits.  Safe in NMI context.
 *
 * Return: SFRAME_FIND_HIT; SFRAME_FIND_NONE if no published function
 * contains @pc; SFRAME_FIND_TOMBSTONE if the function containing @pc is
 * tombstoned; SFRAME_FIND_RETRY, see above; SFRAME_FIND_MALFORMED if the
 * descriptor or a row met breaks the rules of <uapi/linux/sframe_jit.h>.
 */
enum sframe_find_result sframe_jit_find(const struct sframe_jit_view *v,
					unsigned long pc,
					struct sframe_row *row)
{
	const struct sframe_jit_header *hdr = v->base;
	enum sframe_find_result ret;
	struct sframe_row found = {};
	u32 seq, count;

	seq = READ_ONCE(hdr->seq);
	if (seq & 1)
		return SFRAME_FIND_RETRY;
	/* A field a later version may give a meaning must be zero now. */
	if (READ_ONCE(hdr->reserved0))
		return SFRAME_FIND_MALFORMED;
	/* Pairs with the writer's ordering of seq before its rewrite. */
	smp_rmb();
	/* Pairs with the store-release that publishes a descriptor. */
	count = min(smp_load_acquire(&hdr->fde_count), v->fde_cap);
	if (v->compact)
		ret = sframe_jit_clookup(v, count, pc, &found);
	else
		ret = sframe_jit_lookup(v, count, pc, &found);
	/* Pairs with the writer's ordering of its rewrite before seq. */
	smp_rmb();
	if (READ_ONCE(hdr->seq) != seq)
		return SFRAME_FIND_RETRY;
	if (ret == SFRAME_FIND_HIT)
		*row = found;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_jit_find);

/* @addr + @off, false if that leaves the address space. */
static bool sframe_add_off(unsigned long addr, s32 off, unsigned long *res)
{
	if (off < 0)
		return !check_sub_overflow(addr, (unsigned long)-(long)off, res);
	return !check_add_overflow(addr, (unsigned long)off, res);
}

/**
 * sframe_row_apply() - evaluate a frame row
 * @row: the row that applies at the frame's PC.
 * @sp: the frame's stack pointer.
 * @fp: the frame's frame pointer.
 * @step: where the caller's state is, on success.
 *
 * Computes the CFA, which is the caller's stack pointer, and the
 * addresses the caller's return address and frame pointer are saved at.
 * Reading them, with the nofault user accessors, is the caller's job, as
 * is checking that the stack moves the right way.
 *
 * Return: 0; -ENOENT if @row marks the outermost frame (the unwind is
 * complete); -ERANGE if an address would wrap around; -EINVAL for an
 * unknown CFA base register.
 */
int sframe_row_apply(const struct sframe_row *row, unsigned long sp,
		     unsigned long fp, struct sframe_step *step)
{
	unsigned long base;

	if (row->ra_undefined)
		return -ENOENT;
	if (row->cfa_base == SFRAME_CFA_BASE_SP)
		base = sp;
	else if (row->cfa_base == SFRAME_CFA_BASE_FP)
		base = fp;
	else
		return -EINVAL;
	if (!sframe_add_off(base, row->cfa_off, &step->cfa) ||
	    !sframe_add_off(step->cfa, row->ra_off, &step->ra_addr))
		return -ERANGE;
	step->fp_saved = row->fp_saved;
	step->fp_addr = 0;
	if (row->fp_saved &&
	    !sframe_add_off(step->cfa, row->fp_off, &step->fp_addr))
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_row_apply);
