// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an ELF .sframe section, parsed and searched by
 * kernel/unwind/sframe_sec.c and sframe_table.c.
 *
 * The input is the section's bytes.  It is loaded at two addresses, an
 * ordinary one and one just below the top of the address space where
 * function starts wrap.  A reference reader below, written from the
 * format description (Documentation and /work/shared/sframe-format.md's
 * digest of binutils' spec) rather than from the decoder, predicts
 * exactly what sframe_sec_init(), sframe_sec_func() and
 * sframe_sec_validate() return.  Then PCs around every function and row
 * are looked up: where the descriptors are sorted, the lookup's result
 * and row must be the reference's; where they are not, a hit must still
 * come from a function that contains the PC, with the row the reference
 * finds there.  Whatever the bytes, a lookup must stay inside the
 * section (ASan), leave the row alone unless it hits, and give the same
 * answer twice.
 */
#include <errno.h>
#include <limits.h>

#include "fuzz.h"
#include "table_alloc.h"

/* Descriptors whose PCs are tried, and rows per function. */
#define FZ_MAX_FUNCS		64
#define FZ_MAX_ROW_PCS		16

struct ref_sec {
	const u8 *p;
	size_t size;
	unsigned long base;
	u8 version;
	u8 flags;
	s8 fixed_fp;
	s8 fixed_ra;
	u32 num_fdes;
	u32 num_fres;
	u32 fre_len;
	u32 fde_size;
	u64 fde_start;
	u64 fre_start;
};

struct ref_fn {
	unsigned long start;
	u32 size;
	u64 fre_off;
	u32 num_fres;
	u8 fre_type;
	bool pcmask;
	u8 rep_size;
	u8 type;
	bool signal;
};

/* One frame row entry: where it is, its start and its data words. */
struct ref_fre {
	u64 pos;
	u32 start;
	u8 info;
	unsigned int n;
	unsigned int wsize;
	u64 len;
};

static int ref_init(struct ref_sec *r, const u8 *p, size_t size,
		    unsigned long base)
{
	u64 hdr_end;

	if (size < 28)
		return -ENOEXEC;
	if (p[0] != 0xe2 || p[1] != 0xde)
		return p[0] == 0xde && p[1] == 0xe2 ? -EOPNOTSUPP : -ENOEXEC;
	if (p[2] < 1 || p[2] > 3 || p[4] != 3)
		return -EOPNOTSUPP;
	r->p = p;
	r->size = size;
	r->base = base;
	r->version = p[2];
	r->flags = p[3];
	r->fixed_fp = (s8)p[5];
	r->fixed_ra = (s8)p[6];
	r->num_fdes = fz_le(p + 8, 4);
	r->num_fres = fz_le(p + 12, 4);
	r->fre_len = fz_le(p + 16, 4);
	r->fde_size = p[2] == 1 ? 17 : p[2] == 2 ? 20 : 16;
	hdr_end = 28 + (u64)p[7];
	r->fde_start = hdr_end + fz_le(p + 20, 4);
	r->fre_start = hdr_end + fz_le(p + 24, 4);
	if (r->fde_start + (u64)r->num_fdes * r->fde_size > size ||
	    r->fre_start + r->fre_len > size)
		return -ENOEXEC;
	return 0;
}

static unsigned long ref_start(const struct ref_sec *r, u32 i)
{
	u64 off = r->fde_start + (u64)i * r->fde_size;
	const u8 *d = r->p + off;
	u64 rel = r->version == 3 ? fz_le(d, 8) : (u64)fz_sext(fz_le(d, 4), 4);

	if (r->version != 1 && (r->flags & 0x4))
		rel += off;
	return r->base + rel;
}

static int ref_func(const struct ref_sec *r, u32 i, struct ref_fn *f)
{
	const u8 *d = r->p + r->fde_start + (u64)i * r->fde_size;
	u8 info;

	memset(f, 0, sizeof(*f));
	f->start = ref_start(r, i);
	if (r->version == 3) {
		u64 attr = fz_le(d + 12, 4);
		const u8 *a = r->p + r->fre_start + attr;

		if (attr + 5 > r->fre_len)
			return -ENOEXEC;
		f->size = fz_le(d + 8, 4);
		f->fre_off = attr + 5;
		f->num_fres = fz_le(a, 2);
		info = a[2];
		f->type = a[3] & 0x1f;
		f->rep_size = a[4];
		f->signal = info >> 7;
	} else {
		f->size = fz_le(d + 4, 4);
		f->fre_off = fz_le(d + 8, 4);
		f->num_fres = fz_le(d + 12, 4);
		info = d[16];
		f->rep_size = r->version == 2 ? d[17] : 0;
	}
	f->fre_type = info & 0xf;
	f->pcmask = (info >> 4) & 1;
	if (f->fre_type > 2)
		return -ENOEXEC;
	if (f->pcmask && !f->rep_size && r->version != 1)
		return -ENOEXEC;
	return 0;
}

static bool ref_fre(const struct ref_sec *r, const struct ref_fn *f, u64 pos,
		    struct ref_fre *e)
{
	unsigned int as = 1U << f->fre_type;
	const u8 *p = r->p + r->fre_start + pos;

	if (pos + as + 1 > r->fre_len)
		return false;
	e->pos = pos;
	e->start = fz_le(p, as);
	e->info = p[as];
	if (((e->info >> 5) & 3) == 3)
		return false;
	e->n = (e->info >> 1) & 0xf;
	e->wsize = 1U << ((e->info >> 5) & 3);
	e->len = as + 1 + e->n * e->wsize;
	return pos + e->len <= r->fre_len;
}

/*
 * Rows of a function, as validation requires them: a version 3
 * flexible row may have as many words as its info byte counts.
 */
static int ref_check_rows(const struct ref_sec *r, const struct ref_fn *f)
{
	u32 limit = f->pcmask ? f->rep_size : f->size;
	unsigned int max_words = f->type == 1 ? 15 : 3;
	struct ref_fre e;
	u64 pos = f->fre_off;
	u32 k, prev = 0;

	for (k = 0; k < f->num_fres; k++) {
		if (!ref_fre(r, f, pos, &e) || e.n > max_words)
			return -ENOEXEC;
		if ((k && e.start <= prev) || (limit && e.start >= limit))
			return -ENOEXEC;
		prev = e.start;
		pos += e.len;
	}
	return 0;
}

static int ref_validate(const struct ref_sec *r)
{
	unsigned long prev = 0, end;
	u64 rows = 0;
	struct ref_fn f;
	u32 i;

	if ((u64)r->num_fres * 2 > r->fre_len)
		return -ENOEXEC;
	for (i = 0; i < r->num_fdes; i++) {
		if (ref_func(r, i, &f) ||
		    __builtin_add_overflow(f.start, (unsigned long)f.size, &end) ||
		    (i && f.start < prev))
			return -ENOEXEC;
		/* Each function starts at or past the end of the one before. */
		prev = end;
		rows += f.num_fres;
		if (rows > r->num_fres)
			return -ENOEXEC;
		if (ref_check_rows(r, &f))
			return -ENOEXEC;
	}
	return 0;
}

/* Data word @k of row @e, signed or as the unsigned control word. */
static s32 ref_word(const struct ref_sec *r, const struct ref_fn *f,
		    const struct ref_fre *e, unsigned int k)
{
	const u8 *w = r->p + r->fre_start + e->pos + (1U << f->fre_type) + 1;

	return fz_sext(fz_le(w + k * e->wsize, e->wsize), e->wsize);
}

static u32 ref_ctl(const struct ref_sec *r, const struct ref_fn *f,
		   const struct ref_fre *e, unsigned int k)
{
	const u8 *w = r->p + r->fre_start + e->pos + (1U << f->fre_type) + 1;

	return fz_le(w + k * e->wsize, e->wsize);
}

/*
 * A default AMD64 row: CFA offset, then the RA offset unless the header
 * fixes it, then the saved FP's offset, which may be absent, and must
 * be when the header fixes it.
 */
static int ref_default_row(const struct ref_sec *r, const struct ref_fn *f,
			   const struct ref_fre *e, struct sframe_row *row)
{
	unsigned int need = r->fixed_ra ? 1 : 2;

	row->cfa_base = e->info & 1 ? SFRAME_CFA_BASE_SP : SFRAME_CFA_BASE_FP;
	if (e->n < need)
		return SFRAME_FIND_MALFORMED;
	row->cfa_off = ref_word(r, f, e, 0);
	row->ra_off = r->fixed_ra ? r->fixed_ra : ref_word(r, f, e, 1);
	if (r->fixed_fp) {
		row->fp_saved = true;
		row->fp_off = r->fixed_fp;
		return e->n == need ? SFRAME_FIND_HIT : SFRAME_FIND_MALFORMED;
	}
	if (e->n == need + 1) {
		row->fp_saved = true;
		row->fp_off = ref_word(r, f, e, need);
	}
	return e->n <= need + 1 ? SFRAME_FIND_HIT : SFRAME_FIND_MALFORMED;
}

/* A "saved at CFA + offset" rule, the only RA and FP rule representable. */
static bool ref_flex_saved(const struct ref_sec *r, const struct ref_fn *f,
			   const struct ref_fre *e, unsigned int k, s32 *off)
{
	if (k + 1 >= e->n || ref_ctl(r, f, e, k) != 0x2)
		return false;
	*off = ref_word(r, f, e, k + 1);
	return true;
}

/*
 * A version 3 flexible row: (control, offset) pairs for the CFA, the RA
 * and the FP; the CFA from RSP or RBP only, a lone zero control word for
 * "RA as the header fixes it" before an FP rule.
 */
static int ref_flex_row(const struct ref_sec *r, const struct ref_fn *f,
			const struct ref_fre *e, struct sframe_row *row)
{
	unsigned int k = 2;
	u32 c;

	if (e->n < 2)
		return SFRAME_FIND_MALFORMED;
	c = ref_ctl(r, f, e, 0);
	if ((c & 7) != 1)
		return SFRAME_FIND_MALFORMED;
	if (c >> 3 == 7)
		row->cfa_base = SFRAME_CFA_BASE_SP;
	else if (c >> 3 == 6)
		row->cfa_base = SFRAME_CFA_BASE_FP;
	else
		return SFRAME_FIND_MALFORMED;
	row->cfa_off = ref_word(r, f, e, 1);
	if (k < e->n && ref_ctl(r, f, e, k)) {
		if (!ref_flex_saved(r, f, e, k, &row->ra_off))
			return SFRAME_FIND_MALFORMED;
		k += 2;
	} else {
		if (!r->fixed_ra)
			return SFRAME_FIND_MALFORMED;
		row->ra_off = r->fixed_ra;
		k += k < e->n;
	}
	if (k < e->n) {
		if (!ref_flex_saved(r, f, e, k, &row->fp_off))
			return SFRAME_FIND_MALFORMED;
		row->fp_saved = true;
		k += 2;
	} else if (r->fixed_fp) {
		row->fp_saved = true;
		row->fp_off = r->fixed_fp;
	}
	return k == e->n ? SFRAME_FIND_HIT : SFRAME_FIND_MALFORMED;
}

static int ref_decode(const struct ref_sec *r, const struct ref_fn *f,
		      const struct ref_fre *e, struct sframe_row *row)
{
	memset(row, 0, sizeof(*row));
	if (!e->n) {
		if (r->version == 1)
			return SFRAME_FIND_MALFORMED;
		row->ra_undefined = true;
		return SFRAME_FIND_HIT;
	}
	row->signal = f->signal;
	if (f->type == 1)
		return ref_flex_row(r, f, e, row);
	return ref_default_row(r, f, e, row);
}

/*
 * The row of @f that applies @off bytes into it.  Rows are walked in
 * order up to the first that starts past the PC (all of them for
 * version 1 PCMASK rows, which are masks: a row applies where the PC
 * offset has all of its bits set); each one walked must be well-formed.
 */
static int ref_rows(const struct ref_sec *r, const struct ref_fn *f, u32 off,
		    struct sframe_row *row)
{
	bool v1_mask = f->pcmask && r->version == 1;
	u32 target = off, limit = f->size, k;
	struct ref_fre e = { 0 }, best = { 0 };
	bool found = false;
	u64 pos = f->fre_off;

	if (f->num_fres > 0xffff)
		return SFRAME_FIND_MALFORMED;
	if (!f->num_fres && r->version == 3 && f->type == 0) {
		memset(row, 0, sizeof(*row));
		row->ra_undefined = true;
		return SFRAME_FIND_HIT;
	}
	if (f->pcmask && !v1_mask) {
		target = off % f->rep_size;
		limit = f->rep_size;
	}
	for (k = 0; k < f->num_fres; k++) {
		u32 prev = e.start;

		if (!ref_fre(r, f, pos, &e) || (k && e.start <= prev) ||
		    e.start >= limit)
			return SFRAME_FIND_MALFORMED;
		if (v1_mask ? (target & e.start) == e.start :
			      e.start <= target) {
			best = e;
			found = true;
		} else if (!v1_mask) {
			break;
		}
		pos += e.len;
	}
	if (!found)
		return SFRAME_FIND_NONE;
	return ref_decode(r, f, &best, row);
}

/* The lookup of @pc in function @i, which starts at or below it. */
static int ref_find_in(const struct ref_sec *r, u32 i, unsigned long pc,
		       struct sframe_row *row)
{
	unsigned long end;
	struct ref_fn f;

	if (ref_func(r, i, &f) || f.type > 1 ||
	    __builtin_add_overflow(f.start, (unsigned long)f.size, &end))
		return SFRAME_FIND_MALFORMED;
	if (pc >= end)
		return SFRAME_FIND_NONE;
	return ref_rows(r, &f, pc - f.start, row);
}

static bool ref_sorted(const struct ref_sec *r)
{
	u32 i;

	for (i = 1; i < r->num_fdes; i++)
		if (ref_start(r, i) < ref_start(r, i - 1))
			return false;
	return true;
}

/* Sorted descriptors: the last one starting at or below @pc decides. */
static int ref_find(const struct ref_sec *r, unsigned long pc,
		    struct sframe_row *row)
{
	u32 i, last = 0;
	bool any = false;

	for (i = 0; i < r->num_fdes && ref_start(r, i) <= pc; i++) {
		last = i;
		any = true;
	}
	if (!any)
		return SFRAME_FIND_NONE;
	return ref_find_in(r, last, pc, row);
}

/* Unsorted descriptors: a hit must be one function's answer for @pc. */
static bool ref_hit_somewhere(const struct ref_sec *r, unsigned long pc,
			      const struct sframe_row *got)
{
	struct sframe_row row;
	u32 i;

	for (i = 0; i < r->num_fdes; i++)
		if (ref_start(r, i) <= pc &&
		    ref_find_in(r, i, pc, &row) == SFRAME_FIND_HIT &&
		    fz_row_eq(&row, got))
			return true;
	return false;
}

/*
 * The caps of a converted table (sframe_table.h), written from their
 * description: rows per function, and masks per version 1 PCMASK one.
 */
static int ref_table_caps(const struct ref_sec *r)
{
	struct ref_fn f;
	u32 i;

	for (i = 0; i < r->num_fdes; i++) {
		if (ref_func(r, i, &f))
			return -ENOEXEC;
		if (f.num_fres > 0xffff ||
		    (r->version == 1 && f.pcmask && f.num_fres > 16))
			return -E2BIG;
	}
	return 0;
}

/* The table of the section being checked, if it converts; else NULL. */
static struct sframe_table *table;

/* Largest number of records one lookup in @t may read. */
static u32 table_max_reads(const struct sframe_table *t)
{
	u32 bits = 0, n = t->nr_funcs;

	while (n) {
		bits++;
		n >>= 1;
	}
	/* log2(n) + 1 probes each way, the function found, the row */
	return bits + 1 + 16 + 1;
}

/* The table's answer must be the section's, within its bound. */
static void check_table(unsigned long pc, int got, const struct sframe_row *row)
{
	char rs[FZ_ROW_STR_LEN], ts[FZ_ROW_STR_LEN];
	struct sframe_row trow;
	int tgot;
	u32 reads;

	if (!table)
		return;
	memset(&trow, 0xa5, sizeof(trow));
	tgot = sframe_table_find_reads(table, pc, &trow, &reads);
	FUZZ_CHECK(tgot == got, "pc %#lx: table %s, section %s", pc,
		   fz_result(tgot), fz_result(got));
	FUZZ_CHECK(!memcmp(&trow, row, sizeof(trow)),
		   "pc %#lx: table row %s, section %s", pc,
		   fz_row_str(&trow, ts, sizeof(ts)),
		   fz_row_str(row, rs, sizeof(rs)));
	FUZZ_CHECK(reads <= table_max_reads(table) &&
		   reads <= SFRAME_TABLE_MAX_READS,
		   "pc %#lx: %u records read in a table of %u functions", pc,
		   reads, table->nr_funcs);
}

static bool row_sane(const struct sframe_row *row)
{
	if (row->ra_undefined)
		return !row->cfa_off && !row->ra_off && !row->fp_saved &&
		       !row->fp_off && !row->signal &&
		       row->cfa_base == SFRAME_CFA_BASE_SP;
	return (row->cfa_base == SFRAME_CFA_BASE_SP ||
		row->cfa_base == SFRAME_CFA_BASE_FP) &&
	       (row->fp_saved || !row->fp_off);
}

static void check_lookup(const struct sframe_sec *sec, const struct ref_sec *r,
			 bool sorted, unsigned long pc)
{
	char rs[FZ_ROW_STR_LEN], ws[FZ_ROW_STR_LEN];
	struct sframe_row row, again, want, poison;
	int got, got2, exp;

	memset(&poison, 0xa5, sizeof(poison));
	row = poison;
	again = poison;
	got = sframe_sec_find(sec, pc, &row);
	got2 = sframe_sec_find(sec, pc, &again);
	FUZZ_CHECK(got == got2 && !memcmp(&row, &again, sizeof(row)),
		   "pc %#lx: %s then %s", pc, fz_result(got), fz_result(got2));
	FUZZ_CHECK(got == SFRAME_FIND_HIT || got == SFRAME_FIND_NONE ||
		   got == SFRAME_FIND_MALFORMED,
		   "pc %#lx: %s from an ELF section", pc, fz_result(got));
	check_table(pc, got, &row);
	if (got != SFRAME_FIND_HIT) {
		FUZZ_CHECK(!memcmp(&row, &poison, sizeof(row)),
			   "pc %#lx: row written on %s", pc, fz_result(got));
	} else {
		FUZZ_CHECK(row_sane(&row), "pc %#lx: row %s", pc,
			   fz_row_str(&row, rs, sizeof(rs)));
	}
	if (!sorted) {
		FUZZ_CHECK(got != SFRAME_FIND_HIT || ref_hit_somewhere(r, pc, &row),
			   "pc %#lx: hit %s that no function containing it gives",
			   pc, fz_row_str(&row, rs, sizeof(rs)));
		return;
	}
	exp = ref_find(r, pc, &want);
	FUZZ_CHECK(got == exp, "pc %#lx: %s, reference %s", pc,
		   fz_result(got), fz_result(exp));
	FUZZ_CHECK(got != SFRAME_FIND_HIT || fz_row_eq(&row, &want),
		   "pc %#lx: row %s, reference %s", pc,
		   fz_row_str(&row, rs, sizeof(rs)),
		   fz_row_str(&want, ws, sizeof(ws)));
}

static void check_func(const struct sframe_sec *sec, const struct ref_sec *r,
		       u32 i)
{
	struct sframe_func fn;
	struct ref_fn f;
	int got, exp;

	got = sframe_sec_func(sec, i, &fn);
	exp = ref_func(r, i, &f);
	FUZZ_CHECK(got == exp, "descriptor %u: %d, reference %d", i, got, exp);
	if (got)
		return;
	FUZZ_CHECK(fn.start == f.start && fn.size == f.size &&
		   fn.fre_off == f.fre_off && fn.num_fres == f.num_fres &&
		   fn.fre_type == f.fre_type && fn.pcmask == f.pcmask &&
		   fn.rep_size == f.rep_size && fn.fde_type == f.type &&
		   fn.signal == f.signal,
		   "descriptor %u: start %#lx size %#x rows %u at %#x, reference start %#lx size %#x rows %u at %#llx",
		   i, fn.start, fn.size, fn.num_fres, fn.fre_off, f.start,
		   f.size, f.num_fres, (unsigned long long)f.fre_off);
}

/* The PCs worth trying around function @i: its edges and its rows. */
static void check_pcs_of(const struct sframe_sec *sec, const struct ref_sec *r,
			 bool sorted, u32 i)
{
	unsigned long s = ref_start(r, i);
	struct ref_fre e;
	struct ref_fn f;
	u64 pos;
	u32 k;

	check_lookup(sec, r, sorted, s - 1);
	check_lookup(sec, r, sorted, s);
	if (ref_func(r, i, &f))
		return;
	check_lookup(sec, r, sorted, s + f.size / 2);
	check_lookup(sec, r, sorted, s + f.size - 1);
	check_lookup(sec, r, sorted, s + f.size);
	pos = f.fre_off;
	for (k = 0; k < f.num_fres && k < FZ_MAX_ROW_PCS; k++) {
		if (!ref_fre(r, &f, pos, &e))
			break;
		check_lookup(sec, r, sorted, s + e.start);
		check_lookup(sec, r, sorted, s + e.start - 1);
		if (f.pcmask)
			check_lookup(sec, r, sorted, s + f.rep_size + e.start);
		pos += e.len;
	}
}

/*
 * Convert a section that validated, as registration does: refused
 * exactly where the caps say.  Returns the table, or NULL.
 */
static struct sframe_table *convert(const struct sframe_sec *sec,
				    const struct ref_sec *r)
{
	size_t size, scratch;
	struct sframe_table *t;
	int got, exp;

	got = sframe_table_size(sec, &size, &scratch);
	exp = ref_table_caps(r);
	FUZZ_CHECK(got == exp, "table size %d, reference caps %d", got, exp);
	if (got)
		return NULL;
	got = table_alloc_new(sec, &t);
	FUZZ_CHECK(!got || got == -ENOMEM, "table build %d after its size",
		   got);
	/* What registration charges before it copies the section. */
	FUZZ_CHECK(size <= sframe_table_bound(sec),
		   "the table takes more than its header's bound");
	return t;
}

static void check_section(const u8 *buf, size_t size, unsigned long base)
{
	struct sframe_sec sec;
	struct ref_sec r;
	int got, exp;
	bool sorted;
	u32 i;

	got = sframe_sec_init(&sec, buf, size, base);
	exp = ref_init(&r, buf, size, base);
	FUZZ_CHECK(got == exp, "init %d, reference %d", got, exp);
	if (got)
		return;
	FUZZ_CHECK(sec.version == r.version && sec.flags == r.flags &&
		   sec.cfa_fixed_fp == r.fixed_fp &&
		   sec.cfa_fixed_ra == r.fixed_ra &&
		   sec.num_fdes == r.num_fdes && sec.num_fres == r.num_fres &&
		   sec.fre_len == r.fre_len && sec.fde_size == r.fde_size &&
		   sec.fde_start == r.fde_start && sec.fre_start == r.fre_start,
		   "header fields differ from the reference's");
	for (i = 0; i < sec.num_fdes; i++)
		check_func(&sec, &r, i);
	got = sframe_sec_validate(&sec);
	exp = ref_validate(&r);
	FUZZ_CHECK(got == exp, "validate %d, reference %d", got, exp);
	if (!got)
		table = convert(&sec, &r);

	sorted = ref_sorted(&r);
	for (i = 0; i < sec.num_fdes && i < FZ_MAX_FUNCS; i++)
		check_pcs_of(&sec, &r, sorted, i);
	check_lookup(&sec, &r, sorted, 0);
	check_lookup(&sec, &r, sorted, ULONG_MAX);
	check_lookup(&sec, &r, sorted, base);
	table_alloc_free(table);
	table = NULL;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	/* Exactly the input's size, so that ASan sees the least overread. */
	u8 *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	check_section(buf, size, 0x400000UL);
	check_section(buf, size, ULONG_MAX - 0x7fffUL);
	free(buf);
	return 0;
}

/* The decoder's shared loads: nothing writes an ELF section meanwhile. */
void sframe_fuzz_shared_read(void)
{
}
