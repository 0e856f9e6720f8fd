// SPDX-License-Identifier: GPL-2.0
/*
 * The JIT registry reader: the frame row that applies at a PC in a JIT
 * registry, in its version 1 records or its compact ones, read through
 * the kernel's mapping of the registry and its private view of the
 * layout (struct sframe_jit_view).  The registry is described in
 * <uapi/linux/sframe_jit.h>.
 *
 * The process writes the registry while the kernel reads it: each field
 * is read once and checked against the capacities the kernel keeps,
 * never against the shared header.  The lookup runs in NMI context,
 * takes no lock and allocates nothing.  It knows nothing of ELF
 * sections, so that it stays as it is on top of the SFrame unwinder
 * series.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/overflow.h>
#include <uapi/linux/sframe_jit.h>

#include "sframe_jit_read.h"
#include "sframe_search.h"

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
