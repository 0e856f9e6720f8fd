// SPDX-License-Identifier: GPL-2.0
/*
 * An independent reader of a JIT registry, written from
 * Documentation/userspace-api/sframe.rst and not from the library: it
 * finds everything from the header, loads seq and fde_count with acquire
 * semantics, copies the records with relaxed loads of whole words, and
 * keeps the copy only if seq was even and unchanged across the read, as
 * the kernel's unwinder does.  table_check() then holds the copy to the
 * invariants the kernel relies on.
 *
 * A compact registry (SFRAME_JIT_F_COMPACT in the header's flags, the
 * records of <linux/sframe_jit.h>) is read into the same version 1 records:
 * func_start is text_start + func_off, the PCMASK flag the type, and a
 * row is its start offset with the fields of the rule it names.  What
 * the version 1 records cannot say is made to fail their checks as the
 * kernel's would: a flag bit unknown to compact descriptors becomes an
 * unknown flag, a rule index at or past rule_capacity a row with
 * reserved bits set.
 */
#include <stdarg.h>
#include <string.h>

#include "test.h"

static uint32_t load32(const void *p)
{
	return atomic_load_explicit((_Atomic uint32_t *)p,
				    memory_order_relaxed);
}

static void words_load(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	uint32_t w;
	size_t i;

	for (i = 0; i < len; i += 4) {
		w = load32(s + i);
		memcpy(d + i, &w, 4);
	}
}

/* Flags of a compact descriptor that a version 1 one has not. */
#define CFDE_UNKNOWN	0x8000

static bool compact(const struct sframe_jit_header *h)
{
	return h->flags & SFRAME_JIT_F_COMPACT;
}

static void cfde_load(const struct sframe_jit_header *h, uint32_t i,
		      struct sframe_jit_fde *fde)
{
	struct sframe_jit_cfde c;

	words_load(&c, (const unsigned char *)h + h->fde_off +
		   (size_t)i * h->fde_stride, sizeof(c));
	memset(fde, 0, sizeof(*fde));
	fde->func_start = h->text_start + c.func_off;
	fde->func_size = c.func_size;
	fde->fre_start = c.fre_start;
	fde->fre_count = c.fre_count;
	fde->flags = c.flags & SFRAME_JIT_FDE_TOMBSTONE;
	if (c.flags & ~(SFRAME_JIT_FDE_TOMBSTONE | SFRAME_JIT_CFDE_PCMASK))
		fde->flags |= CFDE_UNKNOWN;
	fde->type = c.flags & SFRAME_JIT_CFDE_PCMASK ? SFRAME_JIT_FDE_PCMASK :
						       SFRAME_JIT_FDE_PCINC;
	fde->rep_size = c.rep_size;
}

static void fde_load(const struct sframe_jit_header *h, uint32_t i,
		     struct sframe_jit_fde *fde)
{
	if (compact(h)) {
		cfde_load(h, i, fde);
		return;
	}
	words_load(fde, (const unsigned char *)h + h->fde_off +
		   (size_t)i * h->fde_stride, sizeof(*fde));
}

static void cfre_load(const struct sframe_jit_header *h, uint32_t i,
		      struct sframe_jit_fre *fre)
{
	const unsigned char *base = (const unsigned char *)h;
	struct sframe_jit_rule rule;
	struct sframe_jit_cfre c;

	words_load(&c, base + h->fre_off + (size_t)i * h->fre_stride,
		   sizeof(c));
	memset(fre, 0, sizeof(*fre));
	fre->start_off = c.start_off;
	if (c.rule >= h->rule_capacity) {
		fre->reserved = 0xffff;
		return;
	}
	words_load(&rule, base + h->rule_off + (size_t)c.rule * h->rule_stride,
		   sizeof(rule));
	fre->cfa_off = rule.cfa_off;
	fre->ra_off = rule.ra_off;
	fre->fp_off = rule.fp_off;
	fre->cfa_base = rule.cfa_base;
	fre->flags = rule.flags;
	fre->reserved = rule.reserved;
}

static void fre_load(const struct sframe_jit_header *h, uint32_t i,
		     struct sframe_jit_fre *fre)
{
	if (compact(h)) {
		cfre_load(h, i, fre);
		return;
	}
	words_load(fre, (const unsigned char *)h + h->fre_off +
		   (size_t)i * h->fre_stride, sizeof(*fre));
}

static int room(void **buf, size_t *have, size_t need, size_t elem)
{
	void *p;

	if (need <= *have)
		return 0;
	p = realloc(*buf, need * elem);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*have = need;
	return 0;
}

int table_read(const struct sframe_jit_header *h, struct table *t)
{
	uint32_t s1, s2, count, n, i, r;
	int err;

	/* The layout: kernel-written once, never changed. */
	t->text_start = h->text_start;
	t->text_end = h->text_end;
	t->fde_cap = h->fde_capacity;
	t->fre_cap = h->fre_capacity;
	t->compact = compact(h);
	t->rule_cap = t->compact ? h->rule_capacity : 0;
	err = room((void **)&t->fdes, &t->fdes_room, t->fde_cap ?: 1,
		   sizeof(*t->fdes));
	if (!err)
		err = room((void **)&t->fres, &t->fres_room, t->fre_cap ?: 1,
			   sizeof(*t->fres));
	if (err)
		return err;

	s1 = atomic_load_explicit((_Atomic uint32_t *)&h->seq,
				  memory_order_acquire);
	if (s1 & 1)
		return -EAGAIN;
	count = atomic_load_explicit((_Atomic uint32_t *)&h->fde_count,
				     memory_order_acquire);
	/* The kernel clamps it; table_check() reports it. */
	n = count < t->fde_cap ? count : t->fde_cap;
	for (i = 0; i < n; i++) {
		struct sframe_jit_fde *fde = &t->fdes[i];

		fde_load(h, i, fde);
		if (fde->fre_start > t->fre_cap ||
		    fde->fre_count > t->fre_cap - fde->fre_start)
			continue;	/* table_check() reports it */
		for (r = 0; r < fde->fre_count; r++)
			fre_load(h, fde->fre_start + r,
				 &t->fres[fde->fre_start + r]);
	}
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit((_Atomic uint32_t *)&h->seq,
				  memory_order_relaxed);
	if (s1 != s2)
		return -EAGAIN;
	t->seq = s1;
	t->count = count;
	return 0;
}

void table_read_stable(const struct sframe_jit_header *h, struct table *t)
{
	int i, err = -EAGAIN;

	for (i = 0; i < 1000000 && err == -EAGAIN; i++)
		err = table_read(h, t);
	ASSERT_EQ(0, err);
}

static int why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * One descriptor, @rows its rows (already known to lie in the area when
 * the descriptor says they do).
 */
static int fde_check(const struct table *t, uint32_t i,
		     const struct sframe_jit_fde *fde,
		     const struct sframe_jit_fre *rows, char *buf, size_t len)
{
	uint32_t limit = fde->type == SFRAME_JIT_FDE_PCMASK ? fde->rep_size :
							       fde->func_size;
	uint32_t r;

	if (!fde->func_size || fde->func_start < t->text_start ||
	    fde->func_start >= t->text_end ||
	    fde->func_size > t->text_end - fde->func_start)
		return why(buf, len, "fde %u outside the range", i);
	if (fde->flags & ~SFRAME_JIT_FDE_TOMBSTONE ||
	    fde->type > SFRAME_JIT_FDE_PCMASK ||
	    (fde->type == SFRAME_JIT_FDE_PCMASK && !fde->rep_size))
		return why(buf, len, "fde %u malformed", i);
	if (!fde->fre_count || fde->fre_start > t->fre_cap ||
	    fde->fre_count > t->fre_cap - fde->fre_start)
		return why(buf, len, "fde %u: rows [%u, +%u) outside the area of %u",
			   i, fde->fre_start, fde->fre_count, t->fre_cap);
	for (r = 0; rows && r < fde->fre_count; r++) {
		const struct sframe_jit_fre *fre = &rows[r];

		if (!r && fre->start_off)
			return why(buf, len, "fde %u: first row at %u", i,
				   fre->start_off);
		if (r && fre->start_off <= fre[-1].start_off)
			return why(buf, len, "fde %u: row %u not after the last",
				   i, r);
		if (fre->start_off >= limit)
			return why(buf, len, "fde %u: row %u at %u, limit %u",
				   i, r, fre->start_off, limit);
		if (fre->cfa_base > SFRAME_JIT_CFA_FP || fre->reserved ||
		    fre->flags & ~(SFRAME_JIT_FRE_FP_SAVED |
				   SFRAME_JIT_FRE_RA_UNDEFINED))
			return why(buf, len, "fde %u: row %u malformed", i, r);
	}
	return 0;
}

int table_check(const struct table *t, char *buf, size_t len)
{
	uint64_t prev_end = t->text_start;
	uint32_t i;

	if (t->seq & 1)
		return why(buf, len, "seq %u odd in a stable read", t->seq);
	if (t->count > t->fde_cap)
		return why(buf, len, "count %u above capacity %u", t->count,
			   t->fde_cap);
	for (i = 0; i < t->count; i++) {
		const struct sframe_jit_fde *fde = &t->fdes[i];
		bool in_area = fde->fre_start <= t->fre_cap &&
			       fde->fre_count <= t->fre_cap - fde->fre_start;

		if (fde->func_start < prev_end)
			return why(buf, len, "fde %u at %#llx below %#llx", i,
				   (unsigned long long)fde->func_start,
				   (unsigned long long)prev_end);
		if (fde_check(t, i, fde, in_area ? &t->fres[fde->fre_start] :
				   NULL, buf, len))
			return -1;
		prev_end = fde->func_start + fde->func_size;
	}
	return 0;
}

#define PROBES		40
#define LOOKUP_ROWS	16

int table_lookup(const struct sframe_jit_header *h, uint64_t pc, char *buf,
		 size_t len)
{
	const struct table t = {
		.text_start = h->text_start, .text_end = h->text_end,
		.fde_cap = h->fde_capacity, .fre_cap = h->fre_capacity,
	};
	struct sframe_jit_fre rows[LOOKUP_ROWS];
	struct sframe_jit_fde fde, next, probe;
	uint32_t s1, s2, count, n, lo = 0, hi, mid, i, j, r, nr_rows = 0;
	uint32_t idx[PROBES], nr_probes = 0;
	uint64_t starts[PROBES];

	s1 = atomic_load_explicit((_Atomic uint32_t *)&h->seq,
				  memory_order_acquire);
	if (s1 & 1)
		return -EAGAIN;
	count = atomic_load_explicit((_Atomic uint32_t *)&h->fde_count,
				     memory_order_acquire);
	n = count < t.fde_cap ? count : t.fde_cap;
	/* The last descriptor that starts at or below pc. */
	hi = n;
	while (lo < hi && nr_probes < PROBES) {
		mid = lo + (hi - lo) / 2;
		fde_load(h, mid, &probe);
		idx[nr_probes] = mid;
		starts[nr_probes++] = probe.func_start;
		if (probe.func_start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		fde_load(h, lo - 1, &fde);
		if (lo < n)
			fde_load(h, lo, &next);
		if (fde.fre_start <= t.fre_cap &&
		    fde.fre_count <= t.fre_cap - fde.fre_start) {
			nr_rows = fde.fre_count < LOOKUP_ROWS ? fde.fre_count :
								LOOKUP_ROWS;
			for (r = 0; r < nr_rows; r++)
				fre_load(h, fde.fre_start + r, &rows[r]);
		}
	}
	atomic_thread_fence(memory_order_acquire);
	s2 = atomic_load_explicit((_Atomic uint32_t *)&h->seq,
				  memory_order_relaxed);
	if (s1 != s2)
		return -EAGAIN;

	if (count > t.fde_cap)
		return why(buf, len, "count %u above capacity %u", count,
			   t.fde_cap);
	for (i = 0; i < nr_probes; i++)
		for (j = 0; j < nr_probes; j++)
			if (idx[i] < idx[j] && starts[i] > starts[j])
				return why(buf, len, "fde %u at %#llx above fde %u at %#llx",
					   idx[i], (unsigned long long)starts[i],
					   idx[j], (unsigned long long)starts[j]);
	if (!lo)
		return 0;
	if (fde_check(&t, lo - 1, &fde, nr_rows < fde.fre_count ? NULL : rows,
		      buf, len))
		return -1;
	if (lo < n && next.func_start < fde.func_start + fde.func_size)
		return why(buf, len, "fde %u overlaps the next", lo - 1);
	return 0;
}

void table_free(struct table *t)
{
	free(t->fdes);
	free(t->fres);
	memset(t, 0, sizeof(*t));
}

const struct sframe_jit_fde *table_func(const struct table *t, uint64_t start)
{
	uint32_t i;

	for (i = 0; i < t->count; i++)
		if (t->fdes[i].func_start == start &&
		    !(t->fdes[i].flags & SFRAME_JIT_FDE_TOMBSTONE))
			return &t->fdes[i];
	return NULL;
}

uint32_t table_live(const struct table *t)
{
	uint32_t i, n = 0;

	for (i = 0; i < t->count; i++)
		n += !(t->fdes[i].flags & SFRAME_JIT_FDE_TOMBSTONE);
	return n;
}
