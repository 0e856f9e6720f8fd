// SPDX-License-Identifier: GPL-2.0
/*
 * An ELF .sframe section converted, once at registration, into a table
 * of fixed-size records with every row decoded and each distinct rule
 * kept once (hashed as they are met), so that a lookup at sample time
 * binary-searches and reads a bounded number of records.  See
 * sframe_table.h.
 *
 * The conversion runs in process context over a section that
 * sframe_sec_validate() accepted; the lookup runs in NMI context, takes
 * no lock and allocates nothing.  Lookups give exactly what
 * sframe_sec_find() gives on the section.
 */
#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <linux/string.h>

#include "sframe_table.h"

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
