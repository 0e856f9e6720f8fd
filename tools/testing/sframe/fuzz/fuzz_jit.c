// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: sframe_jit_find() on a JIT registry that a model
 * writer changes while the lookup runs.
 *
 * The input's first byte gives the registry's capacities, its second the
 * mode.  In raw mode the rest of the input is the registry's published
 * count, sequence count and descriptor and row areas, byte for byte, and
 * PCs around every descriptor are looked up in it.  Otherwise the input
 * is a program for a writer that follows the publication protocol of
 * <uapi/linux/sframe_jit.h> (append: rows, descriptor, store-release of the
 * count; tombstone; rewrites in place between an odd and an even seq),
 * breaks it on purpose (malformed entries, stray writes), and interleaves
 * lookups.  Each writer step is a store into the registry; a lookup takes
 * a schedule from the input, and before each of its shared loads the
 * hook of linux/compiler.h here may run the writer's next pending step.
 *
 * Every answer is checked against a reference read of the registry as a
 * whole, at each state the lookup may have seen (the registry after each
 * step that ran during it):
 *  - RETRY exactly when seq was odd at the lookup's first read of it or
 *    had changed at its last;
 *  - otherwise the answer must be the reference's at one of those states:
 *    with sorted descriptors the exact result and row; with unsorted ones
 *    a hit or tombstone must come from a descriptor containing the PC;
 *  - once a stray write has run concurrently with a lookup, nothing is
 *    promised but a sane row, staying inside the registry (ASan) and
 *    ending.
 * Only a hit writes the row.
 */
#include <limits.h>
#include <stddef.h>

#include <uapi/linux/sframe_jit.h>

#include "fuzz.h"

#define TEXT_START	0x7f0000000000UL
#define TEXT_LEN	0x10000UL
#define TEXT_END	(TEXT_START + TEXT_LEN)

#define MAX_STEPS	1024	/* pending writer stores */
#define MAX_STATES	64	/* states one lookup is checked against */
#define STEP_BYTES	24	/* a whole descriptor at most */

/* The largest registry the capacities byte asks for. */
#define MAX_SIZE	(sizeof(struct sframe_jit_header) + \
			 16 * sizeof(struct sframe_jit_fde) + \
			 64 * sizeof(struct sframe_jit_fre))

#define HDR_COUNT	offsetof(struct sframe_jit_header, fde_count)
#define HDR_SEQ		offsetof(struct sframe_jit_header, seq)
#define HDR_RESERVED0	offsetof(struct sframe_jit_header, reserved0)

/* One store of the writer into the registry. */
struct wstep {
	u32 off;
	u8 len;
	bool release;	/* a store-release of a u32 */
	bool stray;	/* outside the protocol */
	u8 bytes[STEP_BYTES];
};

static struct {
	struct sframe_jit_view v;
	u8 *mem;		/* the registry the lookup reads */
	u8 *shadow;		/* the registry once every pending step ran */
	size_t size;
	u32 fde_cap, fre_cap;
	/* The writer's own bookkeeping. */
	u32 rows_used;
	unsigned long last_end;
	unsigned int head, tail;	/* of the pending steps */
	/* The lookup in progress. */
	bool in_lookup;
	u32 schedule;
	unsigned int reads;
	bool ran_step, ran_stray;
	u32 seq_first, seq_last;
	unsigned int nr_states;
	bool states_lost;
	bool tainted;		/* a stray step ran at some point */
	/* Pending steps, run in order by the hook or a flush; last. */
	struct wstep steps[MAX_STEPS];
} g;

/* The registry after each step that ran during a lookup. */
static u8 states[MAX_STATES][MAX_SIZE];

static u32 mem_u32(const u8 *m, size_t off)
{
	u32 v;

	memcpy(&v, m + off, sizeof(v));
	return v;
}

static const struct sframe_jit_fde *fde_at(const u8 *m, u32 i)
{
	return (const void *)(m + g.v.fde_off + (size_t)i * sizeof(struct sframe_jit_fde));
}

static const struct sframe_jit_fre *fre_at(const u8 *m, u32 i)
{
	return (const void *)(m + g.v.fre_off + (size_t)i * sizeof(struct sframe_jit_fre));
}

/* ---- The writer ---- */

static void push(u32 off, const void *src, u8 len, bool release, bool stray)
{
	struct wstep *s;

	if (g.tail == MAX_STEPS || off > g.size || len > g.size - off)
		return;
	s = &g.steps[g.tail++];
	s->off = off;
	s->len = len;
	s->release = release;
	s->stray = stray;
	memcpy(s->bytes, src, len);
	memcpy(g.shadow + off, src, len);
}

static void run_step(void)
{
	struct wstep *s = &g.steps[g.head++];
	u32 v;

	if (s->release) {
		memcpy(&v, s->bytes, sizeof(v));
		__atomic_store_n((u32 *)(g.mem + s->off), v, __ATOMIC_RELEASE);
	} else {
		memcpy(g.mem + s->off, s->bytes, s->len);
	}
	if (s->stray)
		g.tainted = true;
	if (g.in_lookup) {
		g.ran_step = true;
		g.ran_stray |= s->stray;
	}
}

static void flush(void)
{
	while (g.head < g.tail)
		run_step();
}

static u32 shadow_count(void)
{
	return mem_u32(g.shadow, HDR_COUNT);
}

static bool shadow_rewriting(void)
{
	return mem_u32(g.shadow, HDR_SEQ) & 1;
}

static void push_u32(size_t off, u32 v, bool release, bool stray)
{
	push(off, &v, sizeof(v), release, stray);
}

/* A small offset, of either sign, as a frame row holds. */
static s32 small_off(struct fuzz_in *in)
{
	return (s8)fin_u8(in) * 8;
}

/* Malformations an append may carry; each touches its own entries only. */
enum bad_append {
	BAD_NONE, BAD_FDE_FLAGS, BAD_TYPE, BAD_REP_ZERO, BAD_NO_ROWS,
	BAD_ROWS_RANGE, BAD_BELOW_TEXT, BAD_PAST_TEXT, BAD_UNSORTED,
	BAD_FIRST_ROW, BAD_ROW_ORDER, BAD_ROW_LIMIT, BAD_CFA_BASE,
	BAD_ROW_FLAGS, NR_BAD,
};

static void make_rows(struct fuzz_in *in, struct sframe_jit_fre *rows, u32 nr,
		      u32 limit)
{
	u32 k, start = 0;

	for (k = 0; k < nr; k++) {
		u8 b = fin_u8(in);

		memset(&rows[k], 0, sizeof(rows[k]));
		rows[k].start_off = start;
		rows[k].cfa_base = b & 1;
		rows[k].flags = (b >> 1) & 1 ? SFRAME_JIT_FRE_FP_SAVED : 0;
		if ((b >> 2) == 0x3f)
			rows[k].flags = SFRAME_JIT_FRE_RA_UNDEFINED;
		rows[k].cfa_off = small_off(in);
		rows[k].ra_off = small_off(in);
		rows[k].fp_off = small_off(in);
		start += 1 + fin_u8(in) % 16;
		if (start >= limit)
			start = limit - 1 > rows[k].start_off ? limit - 1 : start;
	}
}

static void corrupt(enum bad_append bad, struct sframe_jit_fde *f,
		    struct sframe_jit_fre *rows, u32 nr)
{
	switch (bad) {
	case BAD_FDE_FLAGS:
		f->flags |= 0x8000;
		break;
	case BAD_TYPE:
		f->type = 7;
		break;
	case BAD_REP_ZERO:
		f->type = SFRAME_JIT_FDE_PCMASK;
		f->rep_size = 0;
		break;
	case BAD_NO_ROWS:
		f->fre_count = 0;
		break;
	case BAD_ROWS_RANGE:
		f->fre_start = g.fre_cap;
		break;
	case BAD_BELOW_TEXT:
		f->func_start = TEXT_START - 0x10;
		break;
	case BAD_PAST_TEXT:
		f->func_size = TEXT_LEN;
		break;
	case BAD_UNSORTED:
		f->func_start = TEXT_START + (f->func_start - TEXT_START) / 2;
		break;
	case BAD_FIRST_ROW:
		rows[0].start_off = 1;
		break;
	case BAD_ROW_ORDER:
		rows[nr - 1].start_off = rows[0].start_off;
		break;
	case BAD_ROW_LIMIT:
		rows[nr - 1].start_off = 0x40000;
		break;
	case BAD_CFA_BASE:
		rows[nr - 1].cfa_base = 2;
		break;
	case BAD_ROW_FLAGS:
		rows[nr - 1].flags |= 0x80;
		break;
	default:
		break;
	}
}

/*
 * Append a function after the last one: its rows into unused slots,
 * its descriptor at the count, then the count, with release.
 */
static void op_append(struct fuzz_in *in)
{
	struct sframe_jit_fre rows[8];
	struct sframe_jit_fde f = {};
	u32 count = shadow_count(), nr, limit, k;
	u8 b = fin_u8(in);
	enum bad_append bad = fin_u8(in) % (NR_BAD * 4);
	bool stray;

	nr = 1 + (b & 7);
	if (count >= g.fde_cap || nr > g.fre_cap - g.rows_used)
		return;
	f.func_start = g.last_end + fin_u8(in);
	f.func_size = 1 + fin_u16(in) % 0x800;
	f.fre_start = g.rows_used;
	f.fre_count = nr;
	limit = f.func_size;
	if (b & 8) {
		f.type = SFRAME_JIT_FDE_PCMASK;
		f.rep_size = 1 + fin_u8(in) % 64;
		limit = f.rep_size;
	}
	if (nr > limit) {
		nr = limit;
		f.fre_count = nr;
	}
	make_rows(in, rows, nr, limit);
	if (bad < NR_BAD)
		corrupt(bad, &f, rows, nr);
	/*
	 * A function that starts before the end of the last one breaks the
	 * order the protocol requires: which descriptor covers a PC then
	 * depends on the count, so a lookup that reads the count before
	 * the append and the flags after it answers for no single state.
	 */
	stray = f.func_start < g.last_end;
	for (k = 0; k < nr; k++)
		push(g.v.fre_off + (g.rows_used + k) * sizeof(rows[0]),
		     &rows[k], sizeof(rows[k]), false, stray);
	push(g.v.fde_off + count * sizeof(f), &f, sizeof(f), false, stray);
	push_u32(HDR_COUNT, count + 1, true, stray);
	g.rows_used += nr;
	if (f.func_start >= g.last_end)
		g.last_end = f.func_start + f.func_size;
}

static void op_tombstone(struct fuzz_in *in)
{
	u32 count = shadow_count(), i;
	u16 flags;

	if (!count || count > g.fde_cap)
		return;
	i = fin_u8(in) % count;
	flags = fde_at(g.shadow, i)->flags | SFRAME_JIT_FDE_TOMBSTONE;
	push(g.v.fde_off + i * sizeof(struct sframe_jit_fde) +
	     offsetof(struct sframe_jit_fde, flags), &flags, sizeof(flags),
	     false, false);
}

static void op_seq(void)
{
	push_u32(HDR_SEQ, mem_u32(g.shadow, HDR_SEQ) + 1, true, false);
}

/*
 * Compaction: drop the tombstoned descriptors, moving the others down,
 * and store the smaller count.  Outside a rewrite it is a stray write.
 */
static void op_compact(void)
{
	u32 count = shadow_count(), i, to = 0;
	bool stray = !shadow_rewriting();
	struct sframe_jit_fde f;

	if (count > g.fde_cap)
		return;
	for (i = 0; i < count; i++) {
		memcpy(&f, fde_at(g.shadow, i), sizeof(f));
		if (f.flags & SFRAME_JIT_FDE_TOMBSTONE)
			continue;
		if (to != i)
			push(g.v.fde_off + to * sizeof(f), &f, sizeof(f), false,
			     stray);
		to++;
	}
	if (to != count)
		push_u32(HDR_COUNT, to, true, stray);
}

/*
 * Code reuse: a tombstoned function comes back with new rows in its
 * slots.  Outside a rewrite it is a stray write.
 */
static void op_reuse(struct fuzz_in *in)
{
	u32 count = shadow_count(), i, k, limit;
	bool stray = !shadow_rewriting();
	struct sframe_jit_fre rows[8];
	struct sframe_jit_fde f;

	if (!count || count > g.fde_cap)
		return;
	i = fin_u8(in) % count;
	memcpy(&f, fde_at(g.shadow, i), sizeof(f));
	if (f.fre_count > 8 || f.fre_start > g.rows_used ||
	    f.fre_count > g.rows_used - f.fre_start || !f.fre_count)
		return;
	limit = f.type == SFRAME_JIT_FDE_PCMASK ? f.rep_size : f.func_size;
	if (!limit || f.fre_count > limit)
		return;
	make_rows(in, rows, f.fre_count, limit);
	for (k = 0; k < f.fre_count; k++)
		push(g.v.fre_off + (f.fre_start + k) * sizeof(rows[0]),
		     &rows[k], sizeof(rows[k]), false, stray);
	f.flags &= ~SFRAME_JIT_FDE_TOMBSTONE;
	push(g.v.fde_off + i * sizeof(f), &f, sizeof(f), false, stray);
}

/* Bytes from the input over the descriptors, the rows or the count. */
static void op_stray(struct fuzz_in *in)
{
	u8 buf[8], len = 1 + fin_u8(in) % 8, k;
	u16 where = fin_u16(in);
	size_t areas = g.size - g.v.fde_off, off;

	for (k = 0; k < len; k++)
		buf[k] = fin_u8(in);
	if (where == 0xffff) {
		push(HDR_COUNT, buf, 4, true, true);
		return;
	}
	off = g.v.fde_off + where % areas;
	if (len > g.size - off)
		len = g.size - off;
	push(off, buf, len, false, true);
}

/* ---- The reference ---- */

static int ref_row(const struct sframe_jit_fre *e, struct sframe_row *row)
{
	memset(row, 0, sizeof(*row));
	if (e->flags & ~(SFRAME_JIT_FRE_FP_SAVED | SFRAME_JIT_FRE_RA_UNDEFINED) ||
	    e->cfa_base > SFRAME_JIT_CFA_FP || e->reserved)
		return SFRAME_FIND_MALFORMED;
	if (e->flags & SFRAME_JIT_FRE_RA_UNDEFINED) {
		row->ra_undefined = true;
		return SFRAME_FIND_HIT;
	}
	row->cfa_base = e->cfa_base == SFRAME_JIT_CFA_SP ? SFRAME_CFA_BASE_SP :
							   SFRAME_CFA_BASE_FP;
	row->cfa_off = e->cfa_off;
	row->ra_off = e->ra_off;
	if (e->flags & SFRAME_JIT_FRE_FP_SAVED) {
		row->fp_saved = true;
		row->fp_off = e->fp_off;
	}
	return SFRAME_FIND_HIT;
}

/*
 * May row @k of the @nr from @first be the one for @target, when the
 * rows break the rules?  The search checks the rows it probes, and the
 * one before the row it picks: the picked row starts at or before the
 * target, above the one before it, and below the next one, which starts
 * past the target and below @limit.
 */
static bool ref_row_fits(const u8 *m, u32 first, u32 nr, u32 k, u32 target,
			 u32 limit)
{
	u32 s = fre_at(m, first + k)->start_off;

	if (s > target || s >= limit)
		return false;
	if (k && fre_at(m, first + k - 1)->start_off >= s)
		return false;
	if (k + 1 < nr && (fre_at(m, first + k + 1)->start_off <= target ||
			   fre_at(m, first + k + 1)->start_off >= limit))
		return false;
	return true;
}

/*
 * Does descriptor @i of state @m, taken as the one for @pc, admit the
 * answer @got with @row?  Rows that break the rules after a first one
 * at 0 admit a malformed answer or a row that ref_row_fits(): which one
 * the search meets depends on where it probes.
 */
static bool ref_admits_fde(const u8 *m, u32 i, unsigned long pc, int got,
			   const struct sframe_row *row)
{
	const struct sframe_jit_fde *f = fde_at(m, i);
	u32 off, target, limit, k, prev = 0;
	struct sframe_row want;
	bool well_formed = true;
	unsigned long end;
	int exp;

	if (f->flags & ~SFRAME_JIT_FDE_TOMBSTONE || f->func_start < TEXT_START ||
	    __builtin_add_overflow(f->func_start, (unsigned long)f->func_size,
				   &end) || end > TEXT_END)
		return got == SFRAME_FIND_MALFORMED;
	if (pc >= end)
		return got == SFRAME_FIND_NONE;
	if (f->flags & SFRAME_JIT_FDE_TOMBSTONE)
		return got == SFRAME_FIND_TOMBSTONE;
	off = pc - f->func_start;
	if (f->type == SFRAME_JIT_FDE_PCINC) {
		target = off;
		limit = f->func_size;
	} else if (f->type == SFRAME_JIT_FDE_PCMASK && f->rep_size) {
		target = off % f->rep_size;
		limit = f->rep_size;
	} else {
		return got == SFRAME_FIND_MALFORMED;
	}
	if (!f->fre_count || f->fre_start > g.fre_cap ||
	    f->fre_count > g.fre_cap - f->fre_start ||
	    fre_at(m, f->fre_start)->start_off)
		return got == SFRAME_FIND_MALFORMED;
	for (k = 1; k < f->fre_count; k++) {
		u32 s = fre_at(m, f->fre_start + k)->start_off;

		if (s <= prev || s >= limit)
			well_formed = false;
		prev = s;
	}
	if (well_formed) {
		for (k = 1; k < f->fre_count &&
		     fre_at(m, f->fre_start + k)->start_off <= target; k++)
			;
		exp = ref_row(fre_at(m, f->fre_start + k - 1), &want);
		return got == exp && (got != SFRAME_FIND_HIT ||
				      fz_row_eq(row, &want));
	}
	if (got == SFRAME_FIND_MALFORMED)
		return true;
	for (k = 0; k < f->fre_count; k++)
		if (ref_row_fits(m, f->fre_start, f->fre_count, k, target,
				 limit) &&
		    ref_row(fre_at(m, f->fre_start + k), &want) == got &&
		    (got != SFRAME_FIND_HIT || fz_row_eq(row, &want)))
			return true;
	return false;
}

/* Does descriptor @i - 1 end at or before descriptor @i starts? */
static bool ref_fde_after_prev(const u8 *m, u32 i)
{
	const struct sframe_jit_fde *prev = fde_at(m, i - 1);
	unsigned long end;

	return !__builtin_add_overflow(prev->func_start,
				       (unsigned long)prev->func_size, &end) &&
	       end <= fde_at(m, i)->func_start;
}

/*
 * May descriptor @i of @count be the one the search finds for @pc, when
 * the descriptors break the rules?  It starts at or before the PC, the
 * one before it ends at or before its start, and the next starts past
 * the PC: the search probes the next and checks the one before.
 */
static bool ref_fde_fits(const u8 *m, u32 count, u32 i, unsigned long pc)
{
	if (fde_at(m, i)->func_start > pc)
		return false;
	if (i && !ref_fde_after_prev(m, i))
		return false;
	return i + 1 == count || fde_at(m, i + 1)->func_start > pc;
}

/* Does the registry in state @m admit the answer @got for @pc? */
static bool ref_admits(const u8 *m, unsigned long pc, int got,
		       const struct sframe_row *row)
{
	u32 count = mem_u32(m, HDR_COUNT), i, last = 0;
	bool sorted = true, any = false;

	/* A header whose reserved0 is set is malformed, whatever it holds. */
	if (mem_u32(m, HDR_RESERVED0))
		return got == SFRAME_FIND_MALFORMED;

	if (count > g.fde_cap)
		count = g.fde_cap;
	/* Sorted, each descriptor ending at or before the next one starts. */
	for (i = 1; i < count; i++)
		if (!ref_fde_after_prev(m, i))
			sorted = false;
	if (!sorted) {
		if (got == SFRAME_FIND_NONE || got == SFRAME_FIND_MALFORMED)
			return true;
		for (i = 0; i < count; i++)
			if (ref_fde_fits(m, count, i, pc) &&
			    ref_admits_fde(m, i, pc, got, row))
				return true;
		return false;
	}
	for (i = 0; i < count && fde_at(m, i)->func_start <= pc; i++) {
		last = i;
		any = true;
	}
	if (!any)
		return got == SFRAME_FIND_NONE;
	return ref_admits_fde(m, last, pc, got, row);
}

static bool row_sane(const struct sframe_row *row)
{
	if (row->ra_undefined)
		return !row->cfa_off && !row->ra_off && !row->fp_saved &&
		       !row->fp_off && !row->signal && !row->cfa_base;
	return row->cfa_base <= SFRAME_CFA_BASE_FP && !row->signal &&
	       (row->fp_saved || !row->fp_off) &&
	       row->ra_off == (s16)row->ra_off && row->fp_off == (s16)row->fp_off;
}

/* ---- Lookups ---- */

static void save_state(void)
{
	if (g.nr_states == MAX_STATES) {
		g.states_lost = true;
		return;
	}
	memcpy(states[g.nr_states++], g.mem, g.size);
}

void sframe_fuzz_shared_read(void)
{
	bool step;

	if (!g.in_lookup)
		return;
	step = g.reads < 32 && (g.schedule >> g.reads) & 1;
	g.reads++;
	if (step && g.head < g.tail) {
		run_step();
		save_state();
	}
	g.seq_last = mem_u32(g.mem, HDR_SEQ);
	if (g.reads == 1)
		g.seq_first = g.seq_last;
}

/* What the lookup may have seen, for the report of a failed check. */
static void dump_states(void)
{
	const struct sframe_jit_fde *f;
	unsigned int k;
	u32 i, count;

	for (k = 0; k < g.nr_states; k++) {
		count = mem_u32(states[k], HDR_COUNT);
		fprintf(stderr, "state %u: count %u seq %u\n", k, count,
			mem_u32(states[k], HDR_SEQ));
		for (i = 0; i < count && i < g.fde_cap; i++) {
			f = fde_at(states[k], i);
			fprintf(stderr, "  %u: %#llx +%#x flags %#x type %u rep %u rows %u at %u\n",
				i, (unsigned long long)f->func_start,
				f->func_size, f->flags, f->type, f->rep_size,
				f->fre_count, f->fre_start);
		}
	}
}

static void check_lookup(unsigned long pc, u32 schedule)
{
	char rs[FZ_ROW_STR_LEN];
	struct sframe_row row, poison;
	bool retry, admitted = false;
	bool tainted = g.tainted;
	unsigned int k;
	int got;

	memset(&poison, 0xa5, sizeof(poison));
	row = poison;
	g.in_lookup = true;
	g.schedule = schedule;
	g.reads = 0;
	g.ran_step = false;
	g.ran_stray = false;
	g.nr_states = 0;
	g.states_lost = false;
	save_state();
	got = sframe_jit_find(&g.v, pc, &row);
	g.in_lookup = false;

	FUZZ_CHECK(got >= SFRAME_FIND_HIT && got <= SFRAME_FIND_MALFORMED,
		   "pc %#lx: result %d", pc, got);
	FUZZ_CHECK(got == SFRAME_FIND_HIT || !memcmp(&row, &poison, sizeof(row)),
		   "pc %#lx: row written on %s", pc, fz_result(got));
	FUZZ_CHECK(got != SFRAME_FIND_HIT || row_sane(&row),
		   "pc %#lx: row %s", pc, fz_row_str(&row, rs, sizeof(rs)));
	FUZZ_CHECK(g.reads >= 1, "pc %#lx: seq never read", pc);
	retry = (g.seq_first & 1) || g.seq_last != g.seq_first;
	FUZZ_CHECK((got == SFRAME_FIND_RETRY) == retry,
		   "pc %#lx: %s with seq %u then %u", pc, fz_result(got),
		   g.seq_first, g.seq_last);
	if (retry || g.states_lost)
		return;
	/* Steps that ran concurrently after a stray write prove nothing. */
	if (g.ran_step && (tainted || g.ran_stray))
		return;
	for (k = 0; k < g.nr_states && !admitted; k++)
		admitted = ref_admits(states[k], pc, got, &row);
	if (!admitted)
		dump_states();
	FUZZ_CHECK(admitted, "pc %#lx: %s fits none of the %u states the lookup saw",
		   pc, fz_result(got), g.nr_states);
}

/* A PC around a published function, or anywhere in the text range. */
static unsigned long pick_pc(struct fuzz_in *in)
{
	u32 count = shadow_count(), sel = fin_u8(in), off = fin_u16(in);
	const struct sframe_jit_fde *f;

	if (count > g.fde_cap)
		count = g.fde_cap;
	if (sel < 0xe0 && count) {
		f = fde_at(g.shadow, sel % count);
		if (f->func_start >= TEXT_START && f->func_start < TEXT_END)
			return f->func_start + off % (f->func_size + 2) - 1;
	}
	return TEXT_START + off % TEXT_LEN;
}

/* Quiescent lookups around every descriptor. */
static void lookup_all(void)
{
	u32 count = mem_u32(g.mem, HDR_COUNT), i;
	const struct sframe_jit_fde *f;

	if (count > g.fde_cap)
		count = g.fde_cap;
	check_lookup(TEXT_START, 0);
	check_lookup(TEXT_END - 1, 0);
	for (i = 0; i < count; i++) {
		f = fde_at(g.mem, i);
		if (f->func_start < TEXT_START || f->func_start >= TEXT_END)
			continue;
		check_lookup(f->func_start, 0);
		if (f->func_start > TEXT_START)
			check_lookup(f->func_start - 1, 0);
		if (f->func_size && f->func_start + f->func_size - 1 < TEXT_END)
			check_lookup(f->func_start + f->func_size - 1, 0);
		if (f->func_start + f->func_size < TEXT_END)
			check_lookup(f->func_start + f->func_size, 0);
	}
}

static void run_program(struct fuzz_in *in)
{
	while (in->left) {
		switch (fin_u8(in) % 10) {
		case 0:
		case 1:
			op_append(in);
			break;
		case 2:
			op_tombstone(in);
			break;
		case 3:
			op_seq();
			break;
		case 4:
			op_compact();
			break;
		case 5:
			op_reuse(in);
			break;
		case 6:
			op_stray(in);
			break;
		case 7:
			flush();
			break;
		default:
			check_lookup(pick_pc(in), fin_u32(in));
			break;
		}
	}
	flush();
	lookup_all();
	if (mem_u32(g.mem, HDR_SEQ) & 1) {
		op_seq();
		flush();
		lookup_all();
	}
}

/* Raw mode: the input is the registry. */
static void run_raw(struct fuzz_in *in)
{
	size_t n = g.size - HDR_COUNT;

	if (n > in->left)
		n = in->left;
	memcpy(g.mem + HDR_COUNT, in->p, n);
	/* The header's kernel-written fields stay the kernel's. */
	memset(g.mem + HDR_SEQ + 4, 0, g.v.fde_off - HDR_SEQ - 4);
	g.tainted = true;
	lookup_all();
}

static bool setup(u8 caps)
{
	struct sframe_jit_header *h;

	/* Everything but the step array, which head and tail delimit. */
	memset(&g, 0, offsetof(typeof(g), steps));
	g.fde_cap = 1 + (caps & 15);
	g.fre_cap = 4 * (1 + (caps >> 4));
	g.v.fde_off = sizeof(struct sframe_jit_header);
	g.v.fde_cap = g.fde_cap;
	g.v.fre_off = g.v.fde_off + g.fde_cap * sizeof(struct sframe_jit_fde);
	g.v.fre_cap = g.fre_cap;
	g.v.text_start = TEXT_START;
	g.v.text_end = TEXT_END;
	g.size = g.v.fre_off + g.fre_cap * sizeof(struct sframe_jit_fre);
	g.last_end = TEXT_START;
	/* Exactly the registry's size, so that ASan sees any overread. */
	g.mem = calloc(1, g.size);
	g.shadow = calloc(1, g.size);
	if (!g.mem || !g.shadow)
		return false;
	h = (void *)g.mem;
	h->magic = SFRAME_JIT_MAGIC;
	h->version = SFRAME_JIT_VERSION;
	h->fde_capacity = g.fde_cap;
	h->fre_capacity = g.fre_cap;
	memcpy(g.shadow, g.mem, g.size);
	g.v.base = g.mem;
	return true;
}

static void teardown(void)
{
	free(g.mem);
	free(g.shadow);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	u8 caps = fin_u8(&in), mode = fin_u8(&in);

	if (setup(caps)) {
		if (mode & 1)
			run_raw(&in);
		else
			run_program(&in);
	}
	teardown();
	return 0;
}
