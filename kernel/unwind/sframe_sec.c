// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF .sframe section decoder: the section header, function
 * descriptors, a one-time validation of a whole section, and the lookup
 * of the frame row that applies at a PC by walking a function's rows.
 * The format is GNU binutils' SFrame, versions 1 to 3, little-endian
 * AMD64 only; see sframe_sec.h.
 *
 * Every field comes from an untrusted buffer: offsets and counts are
 * checked against the buffer in 64-bit arithmetic before use, and every
 * loop is bounded by the buffer's size.  The lookup takes no lock,
 * allocates nothing and touches nothing but the buffer it is given.
 *
 * On top of the SFrame unwinder series, which decodes the sections
 * itself, this file drops (Documentation/userspace-api/sframe.rst,
 * "Relation to the SFrame unwinder").
 */
#include <kunit/visibility.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/unaligned.h>

#include "sframe_search.h"
#include "sframe_sec.h"

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

/**
 * sframe_fre_at() - read one frame row's fixed part
 * @sec: the section.
 * @pos: offset of the row in the frame-row sub-section.
 * @addr_size: width of the row's start offset, in bytes.
 * @fre: the row, on success.
 *
 * Used by the lookup here and by the conversion (sframe_table.c).
 *
 * Return: false unless the whole row lies inside the sub-section with
 * data words of a defined width.
 */
bool
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

/**
 * sframe_work_done() - account work done over a section
 * @work: the running count, of functions and rows.
 * @n: functions and rows just handled.
 *
 * Lets the scheduler in every SFRAME_RESCHED_WORK of them.
 */
void sframe_work_done(u32 *work, u32 n)
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

/**
 * sframe_fre_decode() - decode one frame row into its rule
 * @sec: the section.
 * @fn: the function the row belongs to.
 * @pos: offset of the row in the frame-row sub-section.
 * @fre: the row's fixed part, as sframe_fre_at() read it.
 * @row: the rule, on a hit.
 *
 * The info byte's RA-mangling bit is AArch64's, and a flexible row's CFA
 * base bit is unused: AMD64 ignores both.
 *
 * Return: SFRAME_FIND_HIT, or SFRAME_FIND_MALFORMED for a row that does
 * not decode or a rule struct sframe_row cannot express.
 */
enum sframe_find_result
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
