// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The registry writer: publication, removal, compaction and growth of a
 * JIT registry, following the protocol of the "Publishing a function" and
 * "Rewriting in place" sections of Documentation/userspace-api/sframe.rst.
 *
 * One lock per registry (lock.c) serialises the writers; readers (the
 * kernel's unwinder) never take it.  Documentation/sframe_jit.rst
 * explains why.
 *
 * Every store into the shared mapping is a C11 atomic store of an aligned
 * 32-bit word (relaxed, or release where the protocol says so), or, on
 * the fast append path, of an aligned 64-bit pair of such words, so that
 * an in-process reader that loads the words atomically, as the tests'
 * reader thread does, never sees one torn: the sequence count, not the
 * word size, is what keeps a reader from using a half-written record.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sframe_jit_internal.h"

#define DEFAULT_FDES		64
#define DEFAULT_ROWS_PER_FDE	4
#define COMPACT_MIN		16

_Static_assert(SFRAME_JIT_ROW_CFA_SP == SFRAME_JIT_CFA_SP &&
	       SFRAME_JIT_ROW_CFA_FP == SFRAME_JIT_CFA_FP,
	       "row bases follow <linux/sframe_jit.h>");
_Static_assert(SFRAME_JIT_ROW_FP_SAVED == SFRAME_JIT_FRE_FP_SAVED &&
	       SFRAME_JIT_ROW_RA_UNDEFINED == SFRAME_JIT_FRE_RA_UNDEFINED,
	       "row flags follow <linux/sframe_jit.h>");
_Static_assert(sizeof(atomic_ullong) == 8 && sizeof(atomic_uint) == 4,
	       "the words of the mapping and the futex word");
_Static_assert(sizeof(struct sframe_jit_fde) % 8 == 0 &&
	       sizeof(struct sframe_jit_fre) % 4 == 0,
	       "records are whole words");
_Static_assert(offsetof(struct sframe_jit_fde, fre_start) % 4 == 0 &&
	       offsetof(struct sframe_jit_fde, flags) % 4 == 0,
	       "fields rewritten alone start a word");
_Static_assert(offsetof(struct sframe_jit_fde, flags) ==
	       offsetof(struct sframe_jit_fde, fre_count) + 4 &&
	       offsetof(struct sframe_jit_cfde, flags) ==
	       offsetof(struct sframe_jit_cfde, fre_count) + 2,
	       "a tombstone finds the row count beside its flags");

/*
 * The fast append copies a row's first twelve bytes as they are and
 * builds the word of its base and flags, which reserved completes.
 */
_Static_assert(offsetof(struct sframe_jit_row, start_off) ==
	       offsetof(struct sframe_jit_fre, start_off) &&
	       offsetof(struct sframe_jit_row, cfa_off) ==
	       offsetof(struct sframe_jit_fre, cfa_off) &&
	       offsetof(struct sframe_jit_row, ra_off) ==
	       offsetof(struct sframe_jit_fre, ra_off) &&
	       offsetof(struct sframe_jit_row, fp_off) ==
	       offsetof(struct sframe_jit_fre, fp_off) &&
	       offsetof(struct sframe_jit_fre, cfa_base) == 12 &&
	       offsetof(struct sframe_jit_fre, flags) == 13 &&
	       sizeof(struct sframe_jit_fre) == 16,
	       "rows and frame row entries share their first twelve bytes");
_Static_assert(offsetof(struct sframe_jit_fde, func_size) == 8 &&
	       offsetof(struct sframe_jit_fde, fre_start) == 12 &&
	       offsetof(struct sframe_jit_fde, fre_count) == 16 &&
	       offsetof(struct sframe_jit_fde, flags) == 20 &&
	       sizeof(struct sframe_jit_fde) == 24,
	       "the fast append writes a descriptor as three words");
_Static_assert(SFRAME_JIT_FDE_PCINC == 0,
	       "the fast append's descriptor word of flags and type is zero");
_Static_assert(SFRAME_JIT_ROW_CFA_SP == 0 && SFRAME_JIT_ROW_CFA_FP == 1,
	       "a base is valid when no bit but the lowest is set");

#define ROW_FLAGS	(SFRAME_JIT_ROW_FP_SAVED | SFRAME_JIT_ROW_RA_UNDEFINED)
#define KNOWN_FLAGS	(SFRAME_JIT_F_NO_KERNEL | SFRAME_JIT_F_NO_GROW | \
			 SFRAME_JIT_F_PERF_MAP | SFRAME_JIT_F_SHARE_ROWS | \
			 SFRAME_JIT_F_COMPACT_RECORDS)

_Static_assert(sizeof(struct sframe_jit_cfde) == 16 &&
	       offsetof(struct sframe_jit_cfde, fre_count) == 12 &&
	       sizeof(struct sframe_jit_cfre) == 4 &&
	       sizeof(struct sframe_jit_rule) == 12,
	       "compact records are whole words, flags in the last one");

/* Words of the shared mapping. */

static _Atomic uint32_t *word(void *p)
{
	return (_Atomic uint32_t *)p;
}

static void words_store(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	uint32_t w;
	size_t i;

	for (i = 0; i < len; i += 4) {
		memcpy(&w, s + i, 4);
		atomic_store_explicit(word(d + i), w, memory_order_relaxed);
	}
}

static void words_zero(void *dst, size_t len)
{
	unsigned char *d = dst;
	size_t i;

	for (i = 0; i < len; i += 4)
		atomic_store_explicit(word(d + i), 0, memory_order_relaxed);
}

/* memmove() of whole words; only under an odd sequence count. */
static void words_move(void *dst, void *src, size_t len)
{
	unsigned char *d = dst, *s = src;
	uint32_t w;
	size_t i;

	if (d == s)
		return;
	if (d < s) {
		for (i = 0; i < len; i += 4) {
			w = atomic_load_explicit(word(s + i),
						 memory_order_relaxed);
			atomic_store_explicit(word(d + i), w,
					      memory_order_relaxed);
		}
		return;
	}
	for (i = len; i; i -= 4) {
		w = atomic_load_explicit(word(s + i - 4), memory_order_relaxed);
		atomic_store_explicit(word(d + i - 4), w, memory_order_relaxed);
	}
}

/* Records.  Only this writer stores them, under reg->lock. */

static unsigned char *fde_ptr(struct sframe_jit *reg, uint32_t i)
{
	return reg->l.fdes + (size_t)i * reg->l.fde_stride;
}

static unsigned char *fre_ptr(struct sframe_jit *reg, uint32_t i)
{
	return reg->l.fres + (size_t)i * reg->l.fre_stride;
}

/* A compact descriptor, as the version 1 one the writer works with. */
static void cfde_get(struct sframe_jit *reg, uint32_t i,
		     struct sframe_jit_fde *fde)
{
	struct sframe_jit_cfde c;

	memcpy(&c, fde_ptr(reg, i), sizeof(c));
	*fde = (struct sframe_jit_fde) {
		.func_start	= reg->text_start + c.func_off,
		.func_size	= c.func_size,
		.fre_start	= c.fre_start,
		.fre_count	= c.fre_count,
		.flags		= c.flags & SFRAME_JIT_FDE_TOMBSTONE,
		.type		= c.flags & SFRAME_JIT_CFDE_PCMASK ?
				  SFRAME_JIT_FDE_PCMASK : SFRAME_JIT_FDE_PCINC,
		.rep_size	= c.rep_size,
	};
}

static void fde_get(struct sframe_jit *reg, uint32_t i,
		    struct sframe_jit_fde *fde)
{
	if (reg->l.compact)
		cfde_get(reg, i, fde);
	else
		memcpy(fde, fde_ptr(reg, i), sizeof(*fde));
}

/*
 * A compact descriptor from a version 1 one inside the range, whose
 * range spans at most 4 GiB and whose row count fits (compact.c).
 */
static void cfde_put(struct sframe_jit *reg, uint32_t i,
		     const struct sframe_jit_fde *fde)
{
	struct sframe_jit_cfde c = {
		.func_off	= fde->func_start - reg->text_start,
		.func_size	= fde->func_size,
		.fre_start	= fde->fre_start,
		.fre_count	= fde->fre_count,
		.flags		= (fde->flags & SFRAME_JIT_FDE_TOMBSTONE) |
				  (fde->type == SFRAME_JIT_FDE_PCMASK ?
				   SFRAME_JIT_CFDE_PCMASK : 0),
		.rep_size	= fde->rep_size,
	};
	unsigned char *p = fde_ptr(reg, i);

	words_store(p, &c, sizeof(c));
	words_zero(p + sizeof(c), reg->l.fde_stride - sizeof(c));
}

static void fde_put(struct sframe_jit *reg, uint32_t i,
		    const struct sframe_jit_fde *fde)
{
	unsigned char *p = fde_ptr(reg, i);

	if (reg->l.compact) {
		cfde_put(reg, i, fde);
		return;
	}
	words_store(p, fde, sizeof(*fde));
	words_zero(p + sizeof(*fde), reg->l.fde_stride - sizeof(*fde));
}

/* The searches read the one field they compare. */
static uint64_t fde_start(struct sframe_jit *reg, uint32_t i)
{
	return sframe_jit__fde_start(reg, i);
}

static uint64_t fde_end(struct sframe_jit *reg, uint32_t i)
{
	struct sframe_jit_fde fde;

	fde_get(reg, i, &fde);
	return fde.func_start + fde.func_size;
}

static bool fde_dead(const struct sframe_jit_fde *fde)
{
	return fde->flags & SFRAME_JIT_FDE_TOMBSTONE;
}

static void fre_put(struct sframe_jit *reg, uint32_t i,
		    const struct sframe_jit_row *row)
{
	struct sframe_jit_fre fre = {
		.start_off	= row->start_off,
		.cfa_off	= row->cfa_off,
		.ra_off		= row->ra_off,
		.fp_off		= row->fp_off,
		.cfa_base	= row->cfa_base,
		.flags		= row->flags,
	};
	unsigned char *p = fre_ptr(reg, i);

	words_store(p, &fre, sizeof(fre));
	words_zero(p + sizeof(fre), reg->l.fre_stride - sizeof(fre));
}

/* A compact row and its rule, which the writer put in the area. */
static void cfre_get(struct sframe_jit *reg, uint32_t i,
		     struct sframe_jit_row *row)
{
	struct sframe_jit_rule rule;
	struct sframe_jit_cfre c;

	memcpy(&c, fre_ptr(reg, i), sizeof(c));
	memcpy(&rule, reg->l.rules + (size_t)c.rule * reg->l.rule_stride,
	       sizeof(rule));
	*row = (struct sframe_jit_row) {
		.start_off	= c.start_off,
		.cfa_off	= rule.cfa_off,
		.ra_off		= rule.ra_off,
		.fp_off		= rule.fp_off,
		.cfa_base	= rule.cfa_base,
		.flags		= rule.flags,
	};
}

static void fre_get(struct sframe_jit *reg, uint32_t i,
		    struct sframe_jit_row *row)
{
	struct sframe_jit_fre fre;

	if (reg->l.compact) {
		cfre_get(reg, i, row);
		return;
	}
	memcpy(&fre, fre_ptr(reg, i), sizeof(fre));
	row->start_off = fre.start_off;
	row->cfa_off = fre.cfa_off;
	row->ra_off = fre.ra_off;
	row->fp_off = fre.fp_off;
	row->cfa_base = fre.cfa_base;
	row->flags = fre.flags;
}

/* Two words of the shared mapping at once, for the fast append. */
static atomic_ullong *dword(void *p)
{
	return (atomic_ullong *)p;
}

/* Bytes [@off, @off + 8) of a row, the same bytes of its frame row entry. */
static uint64_t row_dword(const struct sframe_jit_row *row, size_t off)
{
	uint64_t d;

	memcpy(&d, (const unsigned char *)row + off, sizeof(d));
	return d;
}

/* Eight bytes as one word of the machine's byte order. */
static uint64_t bytes8(const uint8_t b[8])
{
	uint64_t d;

	memcpy(&d, b, sizeof(d));
	return d;
}

/* Two 32-bit fields that follow each other, as one word. */
static uint64_t pair32(uint32_t first, uint32_t second)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint64_t)second << 32 | first;
#else
	return (uint64_t)first << 32 | second;
#endif
}

/* The header's two JIT-written words. */

static void count_publish(struct sframe_jit *reg, uint32_t count)
{
	reg->nr_fdes = count;
	atomic_store_explicit(word(&reg->l.hdr->fde_count), count,
			      memory_order_release);
}

/*
 * write_seqcount_begin(): the odd value must be visible before any of
 * the rewrite is, hence the release fence after it.
 */
static void seq_begin(struct sframe_jit *reg)
{
	reg->seq |= 1;
	atomic_store_explicit(word(&reg->l.hdr->seq), reg->seq,
			      memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

/* write_seqcount_end(): the rewrite must be visible before the even value. */
static void seq_end(struct sframe_jit *reg)
{
	reg->seq++;
	atomic_store_explicit(word(&reg->l.hdr->seq), reg->seq,
			      memory_order_release);
}

/* After a rewrite under the sequence count: where appends start. */
static void tail_sync(struct sframe_jit *reg)
{
	reg->tail_end = reg->nr_fdes ? fde_end(reg, reg->nr_fdes - 1) :
				       reg->text_start;
}

/* Lookups in the sorted descriptors below nr_fdes. */

/* The first descriptor that starts at or above @addr. */
static uint32_t fde_lower_bound(struct sframe_jit *reg, uint64_t addr)
{
	uint32_t lo = 0, hi = reg->nr_fdes, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fde_start(reg, mid) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The descriptors [*lo, *hi) that overlap [start, end).  A JIT mostly
 * emits code upwards, so a function past the last one is answered
 * without the two binary searches, which were most of an append's cost.
 */
static void fde_overlap(struct sframe_jit *reg, uint64_t start, uint64_t end,
			uint32_t *lo, uint32_t *hi)
{
	uint32_t n = reg->nr_fdes;

	if (reg->tail_end <= start) {
		*lo = n;
		*hi = n;
		return;
	}
	*lo = fde_lower_bound(reg, start);
	if (*lo && fde_end(reg, *lo - 1) > start)
		(*lo)--;
	*hi = fde_lower_bound(reg, end);
}

/* The live descriptor that holds @addr, or -1. */
static int64_t fde_find(struct sframe_jit *reg, uint64_t addr)
{
	struct sframe_jit_fde fde;
	uint32_t i;

	if (addr == UINT64_MAX)
		return -1;
	i = fde_lower_bound(reg, addr + 1);
	if (!i)
		return -1;
	fde_get(reg, --i, &fde);
	if (fde_dead(&fde) || addr - fde.func_start >= fde.func_size)
		return -1;
	return i;
}

/* Attaching a mapping. */

static bool area_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Two areas [a, a_end) and [b, b_end) do not overlap. */
static bool apart(uint64_t a, uint64_t a_end, uint64_t b, uint64_t b_end)
{
	return a_end <= b || b_end <= a;
}

/* The header's size and strides can hold the records of their kind. */
static bool records_ok(const struct sframe_jit_header *h, bool compact)
{
	if (compact)
		return h->header_size >= offsetof(struct sframe_jit_header,
						  reserved1) &&
		       h->fde_stride >= sizeof(struct sframe_jit_cfde) &&
		       h->fre_stride >= sizeof(struct sframe_jit_cfre) &&
		       h->rule_stride >= sizeof(struct sframe_jit_rule) &&
		       h->fde_stride % 4 == 0 && h->fre_stride % 4 == 0 &&
		       h->rule_stride % 4 == 0 && h->fde_off % 4 == 0 &&
		       h->rule_off % 4 == 0;
	return h->header_size >= offsetof(struct sframe_jit_header, reserved0) &&
	       h->fde_stride >= sizeof(struct sframe_jit_fde) &&
	       h->fre_stride >= sizeof(struct sframe_jit_fre) &&
	       h->fde_stride % 8 == 0 && h->fre_stride % 4 == 0 &&
	       h->fde_off % 8 == 0;
}

/* The rule area of a compact registry: inside the mapping, apart. */
static int rules_read(struct sframe_jit_layout *l, struct sframe_jit_header *h,
		      const struct sframe_jit_args *args, uint64_t fde_end,
		      uint64_t fre_end)
{
	uint64_t rule_end = h->rule_off +
			    (uint64_t)h->rule_capacity * h->rule_stride;

	if (h->rule_capacity < args->rule_capacity ||
	    h->rule_off < h->header_size ||
	    !area_ok(h->rule_off, rule_end - h->rule_off, h->map_size) ||
	    !apart(h->rule_off, rule_end, h->fde_off, fde_end) ||
	    !apart(h->rule_off, rule_end, h->fre_off, fre_end))
		return -EPROTO;
	l->compact = true;
	l->rules = (unsigned char *)h + h->rule_off;
	l->rule_stride = h->rule_stride;
	l->rule_cap = h->rule_capacity;
	return 0;
}

/*
 * Read the layout of the mapping at @h, which the backend made for
 * @args, and check it: a JIT refuses a layout it does not know.  The
 * fast append is for the kernel's version 1 record layout, and for
 * registries without a perf map (@flags), whose every line costs a
 * write(2) anyway.
 */
static int layout_read(struct sframe_jit_layout *l, struct sframe_jit_header *h,
		       const struct sframe_jit_args *args, uint32_t flags)
{
	bool compact = args->flags & SFRAME_JIT_F_COMPACT;
	uint64_t fde_end, fre_end;

	if (h->magic != SFRAME_JIT_MAGIC || h->version != SFRAME_JIT_VERSION)
		return -EPROTO;
	if (!(h->flags & SFRAME_JIT_F_COMPACT) != !compact ||
	    !records_ok(h, compact))
		return -EPROTO;
	if (h->text_start != args->text_start ||
	    h->text_end != args->text_end ||
	    h->fde_capacity < args->fde_capacity ||
	    h->fre_capacity < args->fre_capacity)
		return -EPROTO;
	fde_end = h->fde_off + (uint64_t)h->fde_capacity * h->fde_stride;
	fre_end = h->fre_off + (uint64_t)h->fre_capacity * h->fre_stride;
	if (h->fde_off < h->header_size || h->fre_off % 4 ||
	    !area_ok(h->fde_off, fde_end - h->fde_off, h->map_size) ||
	    !area_ok(h->fre_off, fre_end - h->fre_off, h->map_size) ||
	    !apart(h->fde_off, fde_end, h->fre_off, fre_end))
		return -EPROTO;

	memset(l, 0, sizeof(*l));
	if (compact && rules_read(l, h, args, fde_end, fre_end))
		return -EPROTO;
	l->hdr = h;
	l->fdes = (unsigned char *)h + h->fde_off;
	l->fres = (unsigned char *)h + h->fre_off;
	l->map_size = h->map_size;
	l->fde_stride = h->fde_stride;
	l->fre_stride = h->fre_stride;
	l->fde_cap = h->fde_capacity;
	l->fre_cap = h->fre_capacity;
	if (!compact && h->fde_stride == sizeof(struct sframe_jit_fde) &&
	    h->fre_stride == sizeof(struct sframe_jit_fre) &&
	    h->fre_off % 8 == 0 && !(flags & SFRAME_JIT_F_PERF_MAP))
		l->fast_fde_cap = l->fde_cap;
	return 0;
}

/*
 * Unmap a mapping whose layout was refused, if its size is plausible,
 * and close its descriptor in any case: that ends its registration.
 */
static void refused_unmap(struct sframe_jit *reg, struct sframe_jit_header *h,
			  int fd)
{
	if (h->magic == SFRAME_JIT_MAGIC && h->map_size)
		reg->ops->unmap(reg->ops_priv, h, h->map_size, fd);
	else if (fd >= 0)
		close(fd);
}

/*
 * The process's registries, and fork().
 *
 * A child made by fork() inherits no JIT registration, and not the
 * mapping of a kernel registry either (it is VM_DONTCOPY): only the
 * registry's descriptor, and the library's handle, which would point at
 * memory the child does not have.  So the library keeps every registry
 * of the process in a list, and its pthread_atfork() handlers give each
 * kernel registry in the child a registry of its own: the parent's
 * records, copied by the kernel from the inherited descriptor
 * (SFRAME_JIT_COPY), of the same shape, registered for the same range.
 * The handle then points at that copy, and the inherited descriptor,
 * which would keep the parent's registry allocated and charged as long
 * as the child holds it, is closed.
 *
 * The handlers run in the forking thread with every registry's lock
 * held across the fork, taken in list order after the list lock, so
 * that no record, count or seq is half written in the copy and no lock
 * is left held by a thread the child does not have.  A thread of the
 * caller that holds its own lock while calling into the library (as
 * sframe-run does) must take that lock in its prepare handler before
 * ours: handlers registered earlier prepare later, so ours are
 * registered by a constructor that runs before those of the objects
 * that use the library.
 */
static pthread_mutex_t regs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sframe_jit *regs;

/* Under regs_lock. */
static void regs_add(struct sframe_jit *reg)
{
	reg->prev = NULL;
	reg->next = regs;
	if (regs)
		regs->prev = reg;
	regs = reg;
}

/* Under regs_lock. */
static void regs_del(struct sframe_jit *reg)
{
	if (reg->prev)
		reg->prev->next = reg->next;
	else
		regs = reg->next;
	if (reg->next)
		reg->next->prev = reg->prev;
	reg->next = NULL;
	reg->prev = NULL;
}

static void fork_prepare(void)
{
	struct sframe_jit *reg;

	pthread_mutex_lock(&regs_lock);
	for (reg = regs; reg; reg = reg->next) {
		sframe_jit__lock(&reg->lock);
		if (reg->flags & SFRAME_JIT_F_PERF_MAP)
			pthread_mutex_lock(&reg->perf_map.lock);
	}
}

static void fork_parent(void)
{
	struct sframe_jit *reg;

	for (reg = regs; reg; reg = reg->next) {
		if (reg->flags & SFRAME_JIT_F_PERF_MAP)
			pthread_mutex_unlock(&reg->perf_map.lock);
		sframe_jit__unlock(&reg->lock);
	}
	pthread_mutex_unlock(&regs_lock);
}

/*
 * A child whose copy the kernel refused keeps the library's handle
 * working on an empty registry in private memory, of the same layout,
 * which the kernel does not read: the JIT goes on publishing, and its
 * frames in the child are unwound by frame pointer, as on a kernel
 * without the call.  Its records are lost, since the child cannot read
 * the parent's mapping.  If even that memory cannot be had, the
 * registry holds nothing and takes nothing (-ENOSPC).
 */
static void fork_fallback(struct sframe_jit *reg,
			  const struct sframe_jit_args *args)
{
	static struct sframe_jit_header none;
	struct sframe_jit_layout l;
	long addr;
	int fd;

	reg->ops = &sframe_jit__mem_backend;
	reg->ops_priv = NULL;
	reg->nr_fdes = 0;
	reg->tail_end = reg->text_start;
	reg->nr_dead = 0;
	reg->remove_hint = 0;
	reg->remove_step = 1;
	reg->remove_misses = 0;
	sframe_jit__index_from(reg, 0);
	reg->fre_used = 0;
	reg->fre_dead = 0;
	reg->rule_used = 0;
	reg->seq = 0;
	if (reg->cont)
		memset(reg->cont, 0,
		       (reg->l.fde_cap + 63) / 64 * sizeof(*reg->cont));

	addr = sframe_jit__mem_create(NULL, args, &fd);
	if (addr >= 0 && !layout_read(&l, (void *)addr, args, reg->flags) &&
	    l.fde_cap == reg->l.fde_cap) {
		l.fd = -1;
		reg->l = l;
		return;
	}
	if (addr >= 0)
		sframe_jit__unmap(NULL, (void *)addr,
				  ((struct sframe_jit_header *)addr)->map_size,
				  -1);
	memset(&reg->l, 0, sizeof(reg->l));
	reg->l.hdr = &none;
	reg->l.fd = -1;
	reg->flags |= SFRAME_JIT_F_NO_GROW;
}

/*
 * Give the child a registry of its own for @reg, a kernel one: a copy
 * of the parent's, of the same shape, so that every offset and count the
 * library keeps holds in it, and of the same strides, since the old
 * mapping is not there to copy records from one by one.
 */
static void fork_child_reg(struct sframe_jit *reg)
{
	struct sframe_jit_args args = {
		.text_start	= reg->text_start,
		.text_end	= reg->text_end,
		.fde_capacity	= reg->l.fde_cap,
		.fre_capacity	= reg->l.fre_cap,
	};
	int src_fd = reg->l.fd, fd = -1;
	struct sframe_jit_layout l;
	long addr;

	if (src_fd < 0 || !reg->ops->copy)
		return;
	if (reg->l.compact) {
		args.flags = SFRAME_JIT_F_COMPACT;
		args.rule_capacity = reg->l.rule_cap;
	}
	addr = reg->ops->copy(reg->ops_priv, &args, src_fd, &fd);
	if (addr >= 0 &&
	    (layout_read(&l, (void *)addr, &args, reg->flags) ||
	     l.fde_cap != reg->l.fde_cap || l.fre_cap != reg->l.fre_cap ||
	     l.fde_stride != reg->l.fde_stride ||
	     l.fre_stride != reg->l.fre_stride ||
	     l.rule_stride != reg->l.rule_stride)) {
		refused_unmap(reg, (void *)addr, fd);
		addr = -EPROTO;
	}
	close(src_fd);
	if (addr < 0) {
		fork_fallback(reg, &args);
		return;
	}
	l.fd = fd;
	reg->l = l;
}

/*
 * The child has no other thread: each lock starts afresh, without the
 * waiters bit that threads of the parent may have left in it.
 */
static void fork_child(void)
{
	struct sframe_jit *reg;

	for (reg = regs; reg; reg = reg->next) {
		fork_child_reg(reg);
		if (reg->flags & SFRAME_JIT_F_PERF_MAP)
			pthread_mutex_unlock(&reg->perf_map.lock);
		atomic_store_explicit(&reg->lock.state, SFRAME_JIT_LOCK_FREE,
				      memory_order_release);
	}
	pthread_mutex_unlock(&regs_lock);
}

/*
 * Priority 101, the first an application may use: before the default
 * constructors of sframe-run, which links the library in and registers
 * handlers of its own.
 */
__attribute__((constructor(101))) static void regs_atfork_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Options. */

/**
 * sframe_jit__check_opts() - the size rules of an options structure
 * @opts: the structure.
 * @sz: its size, as the caller knows it.
 * @first: the size of its first version.
 * @known: its size as this library knows it.
 *
 * As for the kernel's extensible structures: a caller's structure may be
 * older (smaller) or newer (larger) than the library's, if the bytes the
 * library does not know are zero.
 *
 * Return: 0; -EINVAL below @first; -E2BIG for a non-zero unknown byte.
 */
int sframe_jit__check_opts(const void *opts, size_t sz, size_t first,
			   size_t known)
{
	const unsigned char *p = opts;
	size_t i;

	if (sz < first)
		return -EINVAL;
	for (i = known; i < sz; i++)
		if (p[i])
			return -E2BIG;
	return 0;
}

static uint32_t opt_max(uint32_t val, uint32_t limit)
{
	return val && val < limit ? val : limit;
}

/*
 * SFRAME_JIT_F_COMPACT_RECORDS: with shared rows, over at most 4 GiB,
 * and a rule capacity only with it.  The capacity's default comes once
 * the row capacity is known.
 */
static int compact_opts(const struct sframe_jit_opts *opts,
			struct sframe_jit_args *args)
{
	if (!(opts->flags & SFRAME_JIT_F_COMPACT_RECORDS))
		return opts->rule_capacity ? -EINVAL : 0;
	if (!(opts->flags & SFRAME_JIT_F_SHARE_ROWS) ||
	    opts->rule_capacity > SFRAME_JIT_MAX_RULES ||
	    args->text_end - args->text_start > SFRAME_JIT_COMPACT_SPAN)
		return -EINVAL;
	args->flags = SFRAME_JIT_F_COMPACT;
	args->rule_capacity = opts->rule_capacity;
	return 0;
}

static int opts_apply(struct sframe_jit *reg, const struct sframe_jit_opts *o,
		      struct sframe_jit_args *args)
{
	struct sframe_jit_opts opts = { 0 };
	int err;

	if (o) {
		err = sframe_jit__check_opts(o, o->sz,
					     offsetof(struct sframe_jit_opts,
						      perf_map_path) +
					     sizeof(o->perf_map_path),
					     sizeof(opts));
		if (err)
			return err;
		memcpy(&opts, o, o->sz < sizeof(opts) ? o->sz : sizeof(opts));
	}
	if (opts.flags & ~KNOWN_FLAGS)
		return -EINVAL;
	if (opts.perf_map_path && !(opts.flags & SFRAME_JIT_F_PERF_MAP))
		return -EINVAL;
	err = compact_opts(&opts, args);
	if (err)
		return err;

	reg->flags = opts.flags;
	reg->max_fdes = opt_max(opts.max_fde_capacity, SFRAME_JIT_MAX_FDES);
	reg->max_fres = opt_max(opts.max_fre_capacity, SFRAME_JIT_MAX_FRES);
	reg->compact_threshold = opts.compact_threshold;
	reg->compact_min = opts.compact_threshold ?: COMPACT_MIN;
	args->fde_capacity = opts.fde_capacity ?: DEFAULT_FDES;
	if (args->fde_capacity > reg->max_fdes && !opts.fde_capacity)
		args->fde_capacity = reg->max_fdes;
	args->fre_capacity = opts.fre_capacity;
	if (!args->fre_capacity) {
		uint64_t rows = (uint64_t)args->fde_capacity *
				DEFAULT_ROWS_PER_FDE;

		args->fre_capacity = rows < reg->max_fres ? rows : reg->max_fres;
	}
	if (args->fde_capacity > reg->max_fdes ||
	    args->fre_capacity > reg->max_fres)
		return -EINVAL;
	if ((args->flags & SFRAME_JIT_F_COMPACT) && !args->rule_capacity)
		args->rule_capacity = args->fre_capacity < SFRAME_JIT_MAX_RULES ?
				      args->fre_capacity : SFRAME_JIT_MAX_RULES;
	return 0;
}

/**
 * sframe_jit__create() - sframe_jit_create() through a given backend
 * @text_start: as for sframe_jit_create().
 * @text_end: as for sframe_jit_create().
 * @opts: as for sframe_jit_create(); its SFRAME_JIT_F_NO_KERNEL is moot.
 * @ops: the backend.
 * @ops_priv: its private pointer.
 * @regp: as for sframe_jit_create().
 *
 * The tests' hook, and what sframe_jit_create() itself calls.
 *
 * Return: as sframe_jit_create().
 */
int sframe_jit__create(uint64_t text_start, uint64_t text_end,
		       const struct sframe_jit_opts *opts,
		       const struct sframe_jit_backend *ops, void *ops_priv,
		       struct sframe_jit **regp)
{
	struct sframe_jit_args args = {
		.text_start	= text_start,
		.text_end	= text_end,
	};
	struct sframe_jit_header *h;
	struct sframe_jit *reg;
	long addr;
	int err, fd;

	if (!regp || text_start >= text_end)
		return -EINVAL;
	reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	reg->ops = ops;
	reg->ops_priv = ops_priv;
	reg->perf_map.fd = -1;
	reg->remove_step = 1;
	err = opts_apply(reg, opts, &args);
	if (err)
		goto free_reg;
	err = -ENOMEM;
	reg->scratch = malloc(sizeof(*reg->scratch) * args.fde_capacity);
	if (!reg->scratch)
		goto free_reg;
	/* The writer lock is unlocked as calloc() left it. */
	if (reg->flags & SFRAME_JIT_F_PERF_MAP) {
		err = sframe_jit__perf_map_open(&reg->perf_map,
						opts->perf_map_path);
		if (err)
			goto free_scratch;
	}

	/*
	 * From the registry's creation to its place in the list, a fork()
	 * would give the child a descriptor the list does not lead to.
	 */
	pthread_mutex_lock(&regs_lock);
	addr = ops->create(ops_priv, &args, &fd);
	if (addr < 0) {
		err = addr;
		goto unlock;
	}
	h = (struct sframe_jit_header *)addr;
	err = layout_read(&reg->l, h, &args, reg->flags);
	if (err) {
		refused_unmap(reg, h, fd);
		goto unlock;
	}
	reg->l.fd = fd;
	if (reg->l.fde_cap > args.fde_capacity) {
		/* More room than asked for: the scratch must cover it. */
		uint64_t *s = realloc(reg->scratch,
				      sizeof(*s) * reg->l.fde_cap);

		if (!s) {
			err = -ENOMEM;
			reg->ops->unmap(reg->ops_priv, h, reg->l.map_size, fd);
			goto unlock;
		}
		reg->scratch = s;
	}
	if (reg->l.compact) {
		reg->cont = calloc((reg->l.fde_cap + 63) / 64,
				   sizeof(*reg->cont));
		if (!reg->cont) {
			err = -ENOMEM;
			reg->ops->unmap(reg->ops_priv, h, reg->l.map_size, fd);
			goto unlock;
		}
	}
	reg->text_start = text_start;
	reg->text_end = text_end;
	reg->tail_end = text_start;
	regs_add(reg);
	pthread_mutex_unlock(&regs_lock);
	*regp = reg;
	return 0;

unlock:
	pthread_mutex_unlock(&regs_lock);
	sframe_jit__perf_map_close(&reg->perf_map);
free_scratch:
	free(reg->scratch);
free_reg:
	free(reg);
	return err;
}

int sframe_jit_create(uint64_t text_start, uint64_t text_end,
		      const struct sframe_jit_opts *opts,
		      struct sframe_jit **regp)
{
	const struct sframe_jit_backend *ops = &sframe_jit__kernel_backend;

	if (opts && opts->sz >= offsetof(struct sframe_jit_opts, flags) +
				sizeof(opts->flags) &&
	    (opts->flags & SFRAME_JIT_F_NO_KERNEL))
		ops = &sframe_jit__mem_backend;
	return sframe_jit__create(text_start, text_end, opts, ops, NULL, regp);
}

void sframe_jit_destroy(struct sframe_jit *reg)
{
	if (!reg)
		return;
	/*
	 * Unmapping the registry ends its registration, and closing its
	 * descriptor frees it.  Both under the list lock, so that a child
	 * forked meanwhile finds the registry in the list with its mapping
	 * or inherits neither.
	 */
	pthread_mutex_lock(&regs_lock);
	regs_del(reg);
	reg->ops->unmap(reg->ops_priv, reg->l.hdr, reg->l.map_size,
			reg->l.fd);
	pthread_mutex_unlock(&regs_lock);
	sframe_jit__perf_map_close(&reg->perf_map);
	free(reg->scratch);
	free(reg->cont);
	sframe_jit__index_free(reg);
	free(reg);
}

/* Compaction. */

static int key_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Pack the rows of live functions to the start of the row area, in the
 * order they sit in it, so that each block moves down or stays: a row
 * block starts at or above the rows of every block sorted before it.
 */
static void compact_rows(struct sframe_jit *reg)
{
	struct sframe_jit_fde fde;
	uint32_t i, n = 0, dst = 0;
	bool sorted = true;

	for (i = 0; i < reg->nr_fdes; i++) {
		fde_get(reg, i, &fde);
		if (fde_dead(&fde))
			continue;
		reg->scratch[n] = (uint64_t)fde.fre_start << 32 | i;
		if (n && reg->scratch[n] < reg->scratch[n - 1])
			sorted = false;
		n++;
	}
	/*
	 * Functions appended in address order have their rows in that order
	 * too: the sort, most of a compaction's cost, is then not needed.
	 */
	if (!sorted)
		qsort(reg->scratch, n, sizeof(*reg->scratch), key_cmp);

	for (i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)reg->scratch[i];

		fde_get(reg, idx, &fde);
		if (fde.fre_start != dst) {
			words_move(fre_ptr(reg, dst), fre_ptr(reg, fde.fre_start),
				   (size_t)fde.fre_count * reg->l.fre_stride);
			fde.fre_start = dst;
			words_store(fde_ptr(reg, idx) +
				    offsetof(struct sframe_jit_fde, fre_start),
				    &fde.fre_start, sizeof(fde.fre_start));
		}
		dst += fde.fre_count;
	}
	reg->fre_used = dst;
	reg->fre_dead = 0;
}

/*
 * The row slots that no live descriptor uses.  Shared rows may still be
 * another function's: none of them counts as dead.
 */
static uint32_t rows_dead(const struct sframe_jit *reg)
{
	if (reg->flags & SFRAME_JIT_F_SHARE_ROWS)
		return 0;
	return reg->fre_dead;
}

/*
 * Drop the tombstones, keeping the live descriptors in order.  The
 * remove hint follows the descriptor it named, or the next live one,
 * so that removals in address order go on without a search; the index
 * forgets the descriptors from the first tombstone on, which move.
 */
static uint32_t compact_fdes(struct sframe_jit *reg)
{
	uint32_t i, j = 0, hint = UINT32_MAX, moved = UINT32_MAX;
	struct sframe_jit_fde fde;

	for (i = 0; i < reg->nr_fdes; i++) {
		if (i == reg->remove_hint)
			hint = j;
		fde_get(reg, i, &fde);
		if (fde_dead(&fde)) {
			if (moved == UINT32_MAX)
				moved = i;
			continue;
		}
		if (i != j)
			words_move(fde_ptr(reg, j), fde_ptr(reg, i),
				   reg->l.fde_stride);
		j++;
	}
	words_zero(fde_ptr(reg, j), (size_t)(reg->nr_fdes - j) *
		   reg->l.fde_stride);
	reg->remove_hint = hint == UINT32_MAX ? j : hint;
	sframe_jit__index_from(reg, moved);
	return j;
}

static uint32_t compact_locked(struct sframe_jit *reg)
{
	uint32_t old = reg->nr_fdes, count;

	/*
	 * compact_rows() moves each descriptor's rows as a block of its
	 * own: with shared rows it would move one block twice.
	 */
	if (!reg->nr_dead && !reg->fre_dead)
		return 0;
	if (reg->flags & SFRAME_JIT_F_SHARE_ROWS)
		return 0;
	seq_begin(reg);
	compact_rows(reg);
	count = compact_fdes(reg);
	reg->nr_fdes = count;
	atomic_store_explicit(word(&reg->l.hdr->fde_count), count,
			      memory_order_relaxed);
	seq_end(reg);
	tail_sync(reg);
	reg->nr_dead = 0;
	reg->nr_compactions++;
	return old - count;
}

static uint32_t compact_limit(struct sframe_jit *reg)
{
	uint32_t t = reg->nr_fdes / 4;

	if (reg->compact_threshold)
		return reg->compact_threshold;
	return t > COMPACT_MIN ? t : COMPACT_MIN;
}

/* Growth. */

/*
 * The replacement copied our records with its own strides.  If they are
 * not ours (a kernel that grew its records in between, which a running
 * kernel does not do), copy them again, record by record, from the old
 * mapping.  The copy's sequence count is the old one's: ours.
 */
static void layout_recopy(struct sframe_jit *reg,
			  const struct sframe_jit_layout *old)
{
	struct sframe_jit_layout new = reg->l;
	uint32_t i;

	if (new.fde_stride == old->fde_stride &&
	    new.fre_stride == old->fre_stride)
		return;
	seq_begin(reg);
	for (i = 0; i < reg->nr_fdes; i++) {
		words_store(new.fdes + (size_t)i * new.fde_stride,
			    old->fdes + (size_t)i * old->fde_stride,
			    sizeof(struct sframe_jit_fde));
		words_zero(new.fdes + (size_t)i * new.fde_stride +
			   sizeof(struct sframe_jit_fde),
			   new.fde_stride - sizeof(struct sframe_jit_fde));
	}
	for (i = 0; i < reg->fre_used; i++) {
		words_store(new.fres + (size_t)i * new.fre_stride,
			    old->fres + (size_t)i * old->fre_stride,
			    sizeof(struct sframe_jit_fre));
		words_zero(new.fres + (size_t)i * new.fre_stride +
			   sizeof(struct sframe_jit_fre),
			   new.fre_stride - sizeof(struct sframe_jit_fre));
	}
	atomic_store_explicit(word(&new.hdr->fde_count), reg->nr_fdes,
			      memory_order_relaxed);
	seq_end(reg);
}

/*
 * Replace the registry by one of @fde_cap descriptors and @fre_cap rows,
 * both at least the current ones.  The kernel reads the old registry
 * until it swaps in the new one and the new one from then on; the writer
 * lock keeps every writer off both meanwhile, as the ABI asks.
 */
static int grow_locked(struct sframe_jit *reg, uint32_t fde_cap,
		       uint32_t fre_cap)
{
	struct sframe_jit_args args = {
		.text_start	= reg->text_start,
		.text_end	= reg->text_end,
		.fde_capacity	= fde_cap,
		.fre_capacity	= fre_cap,
	};
	struct sframe_jit_layout old = reg->l, new;
	struct sframe_jit_header *h;
	uint64_t *scratch;
	long addr;
	int err, fd;

	scratch = malloc(sizeof(*scratch) * fde_cap);
	if (!scratch)
		return -ENOMEM;
	addr = reg->ops->replace(reg->ops_priv, &args, old.hdr, old.fd, &fd);
	if (addr < 0) {
		free(scratch);
		return addr;
	}
	h = (struct sframe_jit_header *)addr;
	err = layout_read(&new, h, &args, reg->flags);
	if (!err && new.fde_cap > fde_cap) {
		uint64_t *s = realloc(scratch, sizeof(*s) * new.fde_cap);

		if (s)
			scratch = s;
		else
			err = -ENOMEM;
	}
	if (err) {
		/*
		 * The new registry is the one registered, and unmapping it
		 * unregisters the range: the kernel stops reading it, and
		 * the process keeps its table, which only it sees now.
		 */
		refused_unmap(reg, h, fd);
		free(scratch);
		return err;
	}

	new.fd = fd;
	reg->l = new;
	layout_recopy(reg, &old);
	free(reg->scratch);
	reg->scratch = scratch;
	reg->ops->unmap(reg->ops_priv, old.hdr, old.map_size, old.fd);
	reg->nr_grows++;
	return 0;
}

/* A capacity of at least @need: the current one doubled until it fits. */
static uint32_t grown(uint32_t cap, uint64_t need, uint32_t max)
{
	uint64_t c = cap;

	while (c < need)
		c *= 2;
	return c < max ? c : max;
}

/*
 * Make room to publish @fdes more descriptors with @fres more rows:
 * compact when that frees enough and is worth it, else grow, else
 * compact whatever it frees, else the registry is full.
 */
static int room_locked(struct sframe_jit *reg, uint32_t fdes, uint32_t fres)
{
	uint64_t need_fdes = (uint64_t)reg->nr_fdes + fdes;
	uint64_t need_fres = (uint64_t)reg->fre_used + fres;
	uint64_t live_fdes = reg->nr_fdes - reg->nr_dead;
	uint32_t fde_cap, fre_cap;
	bool compact_fits, worth;
	int err = -ENOSPC;

	if (need_fdes <= reg->l.fde_cap && need_fres <= reg->l.fre_cap)
		return 0;
	compact_fits = !(reg->flags & SFRAME_JIT_F_SHARE_ROWS) &&
		       live_fdes + fdes <= reg->l.fde_cap &&
		       (uint64_t)reg->fre_used - rows_dead(reg) + fres <=
		       reg->l.fre_cap;
	worth = (uint64_t)reg->nr_dead * 8 >= reg->l.fde_cap ||
		(uint64_t)rows_dead(reg) * 8 >= reg->l.fre_cap;
	if (compact_fits && worth) {
		compact_locked(reg);
		return 0;
	}

	fde_cap = grown(reg->l.fde_cap, need_fdes, reg->max_fdes);
	fre_cap = grown(reg->l.fre_cap, need_fres, reg->max_fres);
	if (!(reg->flags & SFRAME_JIT_F_NO_GROW) && fde_cap >= need_fdes &&
	    fre_cap >= need_fres) {
		err = grow_locked(reg, fde_cap, fre_cap);
		if (!err)
			return 0;
	}
	if (compact_fits) {
		compact_locked(reg);
		return 0;
	}
	return err;
}

/* Adding functions. */

/**
 * sframe_jit__check_rows() - check a function's rows as the kernel will
 * @rows: the rows.
 * @nr_rows: their number.
 * @limit: the function's size, or its stub size.
 *
 * Return: 0, or -EINVAL for rows the kernel would call malformed.
 */
int sframe_jit__check_rows(const struct sframe_jit_row *rows,
			   uint32_t nr_rows, uint32_t limit)
{
	uint32_t i;

	if (!nr_rows || rows[0].start_off)
		return -EINVAL;
	for (i = 0; i < nr_rows; i++) {
		if (rows[i].start_off >= limit)
			return -EINVAL;
		if (i && rows[i].start_off <= rows[i - 1].start_off)
			return -EINVAL;
		if (rows[i].cfa_base != SFRAME_JIT_ROW_CFA_SP &&
		    rows[i].cfa_base != SFRAME_JIT_ROW_CFA_FP)
			return -EINVAL;
		if (rows[i].flags & ~ROW_FLAGS)
			return -EINVAL;
	}
	return 0;
}

/*
 * A function of at least one byte inside the range, which is set at
 * creation: no lock needed to read it.
 */
static bool func_in_range(const struct sframe_jit *reg, uint64_t start,
			  uint32_t size)
{
	return start >= reg->text_start && start < reg->text_end &&
	       (uint64_t)size - 1 < reg->text_end - start;
}

static int func_check(struct sframe_jit *reg, const struct sframe_jit__func *fn,
		      const struct sframe_jit_row *rows)
{
	uint32_t limit = fn->stub_size ?: fn->size;

	if (!fn->size || fn->stub_size > UINT8_MAX)
		return -EINVAL;
	if (!func_in_range(reg, fn->start, fn->size))
		return -ERANGE;
	return sframe_jit__check_rows(rows, fn->nr_rows, limit);
}

/* -EEXIST if a live function overlaps @fn. */
static int overlap_check(struct sframe_jit *reg,
			 const struct sframe_jit__func *fn)
{
	struct sframe_jit_fde old;
	uint32_t lo, hi, i;

	fde_overlap(reg, fn->start, fn->start + fn->size, &lo, &hi);
	for (i = lo; i < hi; i++) {
		fde_get(reg, i, &old);
		if (!fde_dead(&old))
			return -EEXIST;
	}
	return 0;
}

/*
 * Publish the descriptor of @fn, whose rows are at @fre_start already
 * and whose place overlap_check() found free.  Above every descriptor it
 * is an append; anywhere else it goes in under the sequence count, in
 * place of the tombstones it overlaps.
 */
static void fde_publish_locked(struct sframe_jit *reg,
			       const struct sframe_jit__func *fn,
			       uint32_t fre_start)
{
	struct sframe_jit_fde fde = {
		.func_start	= fn->start,
		.func_size	= fn->size,
		.fre_start	= fre_start,
		.fre_count	= fn->nr_rows,
		.type		= fn->stub_size ? SFRAME_JIT_FDE_PCMASK :
						  SFRAME_JIT_FDE_PCINC,
		.rep_size	= fn->stub_size,
	};
	uint32_t lo, hi, count;

	fde_overlap(reg, fn->start, fn->start + fn->size, &lo, &hi);
	if (lo == reg->nr_fdes) {
		fde_put(reg, lo, &fde);
		reg->tail_end = fn->start + fn->size;
		count_publish(reg, reg->nr_fdes + 1);
		return;
	}

	seq_begin(reg);
	sframe_jit__index_from(reg, lo);
	count = reg->nr_fdes + 1 - (hi - lo);
	if (hi != lo + 1)
		words_move(fde_ptr(reg, lo + 1), fde_ptr(reg, hi),
			   (size_t)(reg->nr_fdes - hi) * reg->l.fde_stride);
	fde_put(reg, lo, &fde);
	if (count < reg->nr_fdes)
		words_zero(fde_ptr(reg, count),
			   (size_t)(reg->nr_fdes - count) * reg->l.fde_stride);
	reg->nr_dead -= hi - lo;
	reg->nr_fdes = count;
	atomic_store_explicit(word(&reg->l.hdr->fde_count), count,
			      memory_order_relaxed);
	seq_end(reg);
	tail_sync(reg);
}

/* Publish @fn, whose rows are checked, with rows of its own. */
static int add_locked(struct sframe_jit *reg, const struct sframe_jit__func *fn,
		      const struct sframe_jit_row *rows)
{
	uint32_t i, fre_start;
	int err;

	/* Refuse before making room, so that a refusal changes nothing. */
	err = overlap_check(reg, fn);
	if (err)
		return err;
	err = room_locked(reg, 1, fn->nr_rows);
	if (err)
		return err;

	/* Rows first, into slots no published descriptor uses. */
	fre_start = reg->fre_used;
	for (i = 0; i < fn->nr_rows; i++)
		fre_put(reg, reg->fre_used + i, &rows[i]);
	reg->fre_used += fn->nr_rows;
	fde_publish_locked(reg, fn, fre_start);
	return 0;
}

static void perf_map_name(struct sframe_jit *reg, uint64_t start,
			  uint32_t size, const char *name)
{
	if (!(reg->flags & SFRAME_JIT_F_PERF_MAP) || !name)
		return;
	sframe_jit__perf_map_write(&reg->perf_map, start, size, name);
}

static void perf_map_add(struct sframe_jit *reg,
			 const struct sframe_jit__func *fn)
{
	perf_map_name(reg, fn->start, fn->size, fn->name);
}

/* The row of a function that never moves the stack pointer, on x86-64. */
static const struct sframe_jit_row frameless_row = {
	.cfa_base	= SFRAME_JIT_ROW_CFA_SP,
	.cfa_off	= 8,
	.ra_off		= -8,
};

static int add_one(struct sframe_jit *reg, struct sframe_jit__func *fn,
		   const struct sframe_jit_row *rows)
{
	int err;

	if (!reg)
		return -EINVAL;
	if (reg->l.compact)
		return -EOPNOTSUPP;
	if (!rows) {
		if (fn->nr_rows)
			return -EINVAL;
		rows = &frameless_row;
		fn->nr_rows = 1;
	}
	err = func_check(reg, fn, rows);
	if (err)
		return err;
	sframe_jit__lock(&reg->lock);
	err = add_locked(reg, fn, rows);
	sframe_jit__unlock(&reg->lock);
	if (!err)
		perf_map_add(reg, fn);
	return err;
}

/* The start_off of a row, out of the first word row_dword() reads of it. */
static uint32_t dword_start_off(uint64_t d)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint32_t)d;
#else
	return d >> 32;
#endif
}

/* Not inlined: its frame would be the fast append's. */
static __attribute_noinline__ int
add_general(struct sframe_jit *reg, uint64_t start, uint32_t size,
	    const struct sframe_jit_row *rows, uint32_t nr_rows,
	    const char *name)
{
	struct sframe_jit__func fn = {
		.start		= start,
		.size		= size,
		.nr_rows	= nr_rows,
		.name		= name,
	};

	return add_one(reg, &fn, rows);
}

/*
 * The ways out of the fast append but success, each called in tail
 * position and kept out of line: the fast append then holds its values
 * in the registers a call clobbers and saves none of its own, which
 * under callgrind was 10 of its instructions.
 */

/* Under the lock, the general path decides, taking the lock itself. */
static __attribute_noinline__ int
append_unlock_general(struct sframe_jit *reg, uint64_t start, uint32_t size,
		      const struct sframe_jit_row *rows, uint32_t nr_rows,
		      const char *name)
{
	sframe_jit__unlock(&reg->lock);
	return add_general(reg, start, size, rows, nr_rows, name);
}

/*
 * A row was refused after the bookkeeping moved past the function: take
 * it back.  The descriptor in the slot at the old count, which no reader
 * uses, says where the function's rows began.
 */
static __attribute_noinline__ int
append_withdraw(struct sframe_jit *reg)
{
	struct sframe_jit_fde fde;

	fde_get(reg, --reg->nr_fdes, &fde);
	reg->fre_used = fde.fre_start;
	tail_sync(reg);
	sframe_jit__unlock(&reg->lock);
	return -EINVAL;
}

static __attribute_noinline__ int append_wake(struct sframe_jit *reg)
{
	sframe_jit__lock_wake(&reg->lock);
	return 0;
}

/*
 * The common case of sframe_jit_add() in one pass, under the lock: a
 * function above every published one, into a registry of the kernel's
 * record layout that has room for it.  The descriptor goes into the slot
 * at the count and each row into a free slot as it is checked: no reader
 * uses those slots until the count moves, so a refusal leaves the
 * published registry as it was.  The checks are those of func_check()
 * and sframe_jit__check_rows(): the function inside the range, start
 * offsets strictly increasing from 0 to below @size, known bases and
 * flags (checked once, on the rows' words together).
 *
 * Records go out in aligned 64-bit stores of two words and 32-bit
 * stores of one: see "The stores" in Documentation/sframe_jit.rst.
 *
 * Return: 0 or -EINVAL, with the lock dropped; otherwise what the
 * general path returns.
 */
static __always_inline int
append_fast(struct sframe_jit *reg, uint64_t start, uint32_t size,
	    const struct sframe_jit_row *rows, uint32_t nr_rows,
	    const char *name)
{
	/* Bytes 8 to 15 of a row: ra_off, fp_off, cfa_base, flags, padding. */
	const uint64_t keep = bytes8((const uint8_t[8]) {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0 });
	const uint64_t bad = bytes8((const uint8_t[8]) {
		0, 0, 0, 0, (uint8_t)~SFRAME_JIT_ROW_CFA_FP,
		(uint8_t)~ROW_FLAGS, 0, 0 });
	uint32_t first = reg->fre_used, n = reg->nr_fdes;
	const unsigned char *src, *src_end;
	uint64_t end, lo, hi, bases_flags;
	unsigned char *p;
	uintptr_t delta;
	size_t len;

	/*
	 * fast_fde_cap is 0 for other record layouts and for a registry
	 * with a perf map, the one case where @name matters.
	 */
	if (n >= reg->l.fast_fde_cap)
		return append_unlock_general(reg, start, size, rows, nr_rows,
					     name);
	/*
	 * tail_end is never below text_start, so this is also the range
	 * check.  A row count past the room, or 0, is refused before any
	 * row is read.
	 */
	if (__builtin_add_overflow(start, size, &end) ||
	    end > reg->text_end || start < reg->tail_end || !nr_rows ||
	    nr_rows > reg->l.fre_cap - first)
		return append_unlock_general(reg, start, size, rows, nr_rows,
					     NULL);

	/*
	 * The bookkeeping goes first, so that nothing but the rows' values
	 * is live across their loop; append_withdraw() takes it back.
	 */
	reg->tail_end = end;
	p = reg->l.fdes + (size_t)n * sizeof(struct sframe_jit_fde);
	reg->nr_fdes = ++n;
	reg->fre_used = first + nr_rows;

	atomic_store_explicit(dword(p), start, memory_order_relaxed);
	atomic_store_explicit(word(p + 8), size, memory_order_relaxed);
	atomic_store_explicit(word(p + 12), first, memory_order_relaxed);
	/* flags, type (PCINC) and rep_size are zero. */
	atomic_store_explicit(dword(p + 16), pair32(nr_rows, 0),
			      memory_order_relaxed);

	len = (size_t)nr_rows * sizeof(*rows);
	src_end = (const unsigned char *)rows + len;
	if (((const struct sframe_jit_row *)src_end)[-1].start_off >= size)
		return append_withdraw(reg);

	p = reg->l.fres + (size_t)first * sizeof(struct sframe_jit_fre);
	lo = row_dword(rows, 0);
	if (dword_start_off(lo))
		return append_withdraw(reg);
	hi = row_dword(rows, 8) & keep;
	bases_flags = hi;
	atomic_store_explicit(dword(p), lo, memory_order_relaxed);
	atomic_store_explicit(dword(p + 8), hi, memory_order_relaxed);

	/*
	 * Each later row's slot is at the same distance from it: one
	 * pointer steps through both, a register fewer than two.
	 */
	delta = (uintptr_t)p - (uintptr_t)rows;
	for (src = (const unsigned char *)rows + sizeof(*rows); src != src_end;
	     src += sizeof(*rows)) {
		const struct sframe_jit_row *r = (const void *)src;

		lo = row_dword(r, 0);
		if (dword_start_off(lo) <= r[-1].start_off)
			return append_withdraw(reg);
		hi = row_dword(r, 8) & keep;
		bases_flags |= hi;
		atomic_store_explicit(dword((unsigned char *)src + delta), lo,
				      memory_order_relaxed);
		atomic_store_explicit(dword((unsigned char *)src + delta + 8),
				      hi, memory_order_relaxed);
	}
	if (bases_flags & bad)
		return append_withdraw(reg);

	atomic_store_explicit(word(&reg->l.hdr->fde_count), n,
			      memory_order_release);
	if (sframe_jit__unlock_contended(&reg->lock))
		return append_wake(reg);
	return 0;
}

/* Another writer holds the lock: wait for it, then append as usual. */
static __attribute_noinline__ int
append_contended(struct sframe_jit *reg, uint64_t start, uint32_t size,
		 const struct sframe_jit_row *rows, uint32_t nr_rows,
		 const char *name)
{
	sframe_jit__lock_slow(&reg->lock);
	return append_fast(reg, start, size, rows, nr_rows, name);
}

int sframe_jit_add(struct sframe_jit *reg, uint64_t start, uint32_t size,
		   const struct sframe_jit_row *rows, uint32_t nr_rows,
		   const char *name)
{
	if (!reg || !rows)
		return add_general(reg, start, size, rows, nr_rows, name);
	/* One atomic instruction; a lock held takes the call out of line. */
	if (!sframe_jit__trylock(&reg->lock))
		return append_contended(reg, start, size, rows, nr_rows, name);
	return append_fast(reg, start, size, rows, nr_rows, name);
}

int sframe_jit_add_stubs(struct sframe_jit *reg, uint64_t start,
			 uint32_t size, uint32_t stub_size,
			 const struct sframe_jit_row *rows, uint32_t nr_rows,
			 const char *name)
{
	struct sframe_jit__func fn = {
		.start		= start,
		.size		= size,
		.stub_size	= stub_size,
		.nr_rows	= nr_rows,
		.name		= name,
	};

	if (!stub_size || !rows)
		return -EINVAL;
	return add_one(reg, &fn, rows);
}

/* Removal. */

/*
 * The tombstone bit, where it sits in the word of flags, type and
 * rep_size (a compact descriptor's: of fre_count, flags and rep_size).
 */
static uint32_t tombstone_bit(bool compact)
{
	const struct sframe_jit_fde fde = { .flags = SFRAME_JIT_FDE_TOMBSTONE };
	const struct sframe_jit_cfde cfde = { .flags = SFRAME_JIT_FDE_TOMBSTONE };
	uint32_t w;

	if (compact)
		memcpy(&w, (const unsigned char *)&cfde +
		       offsetof(struct sframe_jit_cfde, fre_count), sizeof(w));
	else
		memcpy(&w, (const unsigned char *)&fde +
		       offsetof(struct sframe_jit_fde, flags), sizeof(w));
	return w;
}

/* Where a compact descriptor's fre_count is in that word. */
static unsigned int tombstone_count_shift(void)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return 0;
#else
	return 16;
#endif
}

/* The fre_count of a descriptor, the word before its flags' word. */
static uint32_t tombstone_prev_word(const unsigned char *p)
{
	uint32_t count;

	memcpy(&count, p - sizeof(count), sizeof(count));
	return count;
}

/* The offset of the word tombstone_bit() is in. */
static size_t tombstone_off(bool compact)
{
	return compact ? offsetof(struct sframe_jit_cfde, fre_count) :
			 offsetof(struct sframe_jit_fde, flags);
}

/*
 * Mark the descriptor at @fde a tombstone, with one store of the word
 * that holds its flags, and add its row count to *@rows; false if it is
 * one already.  The caller counts it (tombstones_count()).
 */
static __always_inline bool tombstone_mark_at(unsigned char *fde, bool compact,
					      uint32_t *rows)
{
	unsigned char *p = fde + tombstone_off(compact);
	uint32_t w, bit = tombstone_bit(compact);

	memcpy(&w, p, sizeof(w));
	if (w & bit)
		return false;
	atomic_store_explicit(word(p), w | bit, memory_order_release);
	/*
	 * The row count is the word's low half in a compact descriptor
	 * (fre_count, flags, rep_size), the word before it in the other.
	 */
	if (compact)
		*rows += (uint16_t)(w >> tombstone_count_shift());
	else
		*rows += tombstone_prev_word(p);
	return true;
}

static __always_inline bool tombstone_mark(struct sframe_jit *reg, uint32_t i,
					   bool compact, uint32_t *rows)
{
	return tombstone_mark_at(fde_ptr(reg, i), compact, rows);
}

/*
 * The counts of tombstones and dead rows, after @dead more with @rows.
 * The rows are counted whether or not they are shared, without a test
 * on the removal's path; rows_dead() reads them.
 */
static void tombstones_count(struct sframe_jit *reg, uint32_t dead,
			     uint32_t rows)
{
	reg->nr_dead += dead;
	reg->fre_dead += rows;
}

static __always_inline int tombstone_as(struct sframe_jit *reg, uint32_t i,
					bool compact)
{
	uint32_t rows = 0;

	if (!tombstone_mark(reg, i, compact, &rows))
		return -ENOENT;
	tombstones_count(reg, 1, rows);
	return 0;
}

static int tombstone_locked(struct sframe_jit *reg, uint32_t i)
{
	return tombstone_as(reg, i, reg->l.compact);
}

/*
 * Descriptor @i is a later piece of a function split in a compact
 * registry (compact.c), whose descriptors never move.
 */
static bool fde_cont(const struct sframe_jit *reg, uint32_t i)
{
	return reg->cont && (reg->cont[i / 64] >> (i % 64) & 1);
}

/* Tombstone the later pieces of the function whose first is @i. */
static void pieces_tombstone(struct sframe_jit *reg, uint32_t i)
{
	while (++i < reg->nr_fdes && fde_cont(reg, i))
		tombstone_locked(reg, i);
}

/* The end of the function whose first descriptor is @i, all pieces. */
static uint64_t func_end(struct sframe_jit *reg, uint32_t i)
{
	while (i + 1 < reg->nr_fdes && fde_cont(reg, i + 1))
		i++;
	return fde_end(reg, i);
}

static void compact_if_due(struct sframe_jit *reg)
{
	/* The limit is at least compact_min: most removals stop here. */
	if (reg->nr_dead > reg->compact_min &&
	    reg->nr_dead > compact_limit(reg))
		compact_locked(reg);
}

/* The descriptor that starts at @start, or nr_fdes: a binary search. */
static uint32_t fde_search(struct sframe_jit *reg, uint64_t start)
{
	uint32_t i = fde_lower_bound(reg, start);

	if (i < reg->nr_fdes && fde_start(reg, i) == start)
		return i;
	return reg->nr_fdes;
}

/* The hint missed this many times: a removal order it cannot follow. */
#define REMOVE_MISSES_INDEX	8

/*
 * A removal the hint missed, without an index up to date: a binary
 * search for the first few such, then the index, made or caught up
 * with the appends since.  A JIT that removes in address order, or at
 * a step that the hint learns after one miss, never pays for an index.
 * The step is learnt from the last removal's descriptor.
 */
static __attribute__((noinline)) uint32_t remove_miss(struct sframe_jit *reg,
						      uint64_t start)
{
	uint32_t last = reg->remove_hint - reg->remove_step, i;

	i = reg->nr_fdes;
	if (reg->remove_misses >= REMOVE_MISSES_INDEX)
		i = sframe_jit__index_find_slow(reg, start);
	else
		reg->remove_misses++;
	if (i == reg->nr_fdes)
		i = fde_search(reg, start);
	reg->remove_step = i > last ? i - last : 1;
	return i;
}

/*
 * The descriptor that starts at @start, or nr_fdes.  Starts are unique,
 * so a hint or a slot that names a descriptor with that start names the
 * one wanted, whatever moved since.  A JIT mostly retires code in the
 * order it emitted it, and a collector that sweeps its code cache in
 * address order frees some methods and keeps others between them: the
 * hint is the last descriptor removed plus the step between the last
 * two.  A collector that frees in any other order has the index.
 */
static __always_inline uint32_t remove_find(struct sframe_jit *reg,
					    uint64_t start, bool compact)
{
	uint32_t i = reg->remove_hint;

	if (sframe_jit__index_ready(reg))
		i = sframe_jit__index_probe(reg, start, compact);
	else if (i >= reg->nr_fdes ||
		 sframe_jit__fde_start_as(reg, i, compact) != start)
		return remove_miss(reg, start);
	if (i == reg->nr_fdes)
		i = fde_search(reg, start);
	return i;
}

static __always_inline int remove_as(struct sframe_jit *reg, uint64_t start,
				     bool compact)
{
	uint32_t i = remove_find(reg, start, compact);

	if (i == reg->nr_fdes || (compact && fde_cont(reg, i)) ||
	    tombstone_as(reg, i, compact))
		return -ENOENT;
	if (compact && reg->cont)
		pieces_tombstone(reg, i);
	reg->remove_hint = i + reg->remove_step;
	return 0;
}

/* Split functions (reg->cont) are only in compact registries. */
static __always_inline int remove_locked(struct sframe_jit *reg,
					 uint64_t start)
{
	if (reg->l.compact)
		return remove_as(reg, start, true);
	return remove_as(reg, start, false);
}

int sframe_jit_remove(struct sframe_jit *reg, uint64_t start)
{
	int err;

	if (!reg)
		return -EINVAL;
	sframe_jit__lock(&reg->lock);
	err = remove_locked(reg, start);
	if (!err)
		compact_if_due(reg);
	sframe_jit__unlock(&reg->lock);
	return err;
}

/*
 * Retire the functions inside [@start, @end) of a compact registry,
 * whose functions may be split in pieces.
 */
static int remove_range_compact(struct sframe_jit *reg, uint64_t start,
				uint64_t end)
{
	uint32_t i, n = reg->nr_fdes, dead = 0, rows = 0;
	uint64_t s;

	for (i = fde_lower_bound(reg, start); i < n; i++) {
		s = sframe_jit__fde_start_as(reg, i, true);
		if (s >= end)
			break;
		if (fde_cont(reg, i) || func_end(reg, i) - s > end - s ||
		    !tombstone_mark(reg, i, true, &rows))
			continue;
		dead++;
		/* pieces_tombstone() counts the later pieces itself. */
		if (reg->cont)
			pieces_tombstone(reg, i);
	}
	tombstones_count(reg, dead, rows);
	return dead;
}

/*
 * The same in the kernel's layout, a descriptor a function.  This loop
 * runs over a tenth of a code cache at once: the records' address and
 * stride are in locals, since a store into a descriptor could be one
 * into the registry's fields for the compiler, and the counts are
 * stored once.
 */
static int remove_range_plain(struct sframe_jit *reg, uint64_t start,
			      uint64_t end)
{
	uint32_t i = fde_lower_bound(reg, start), n = reg->nr_fdes;
	const size_t stride = reg->l.fde_stride;
	unsigned char *p = fde_ptr(reg, i);
	uint32_t dead = 0, rows = 0, size;
	uint64_t s;

	for (; i < n; i++, p += stride) {
		memcpy(&s, p + offsetof(struct sframe_jit_fde, func_start),
		       sizeof(s));
		if (s >= end)
			break;
		memcpy(&size, p + offsetof(struct sframe_jit_fde, func_size),
		       sizeof(size));
		if (size > end - s || !tombstone_mark_at(p, false, &rows))
			continue;
		dead++;
	}
	tombstones_count(reg, dead, rows);
	return dead;
}

int sframe_jit_remove_range(struct sframe_jit *reg, uint64_t start,
			    uint64_t end)
{
	int n;

	if (!reg || start > end)
		return -EINVAL;
	sframe_jit__lock(&reg->lock);
	if (reg->l.compact)
		n = remove_range_compact(reg, start, end);
	else
		n = remove_range_plain(reg, start, end);
	if (n)
		compact_if_due(reg);
	sframe_jit__unlock(&reg->lock);
	return n;
}

int sframe_jit_compact(struct sframe_jit *reg)
{
	int n;

	if (!reg)
		return -EINVAL;
	sframe_jit__lock(&reg->lock);
	n = compact_locked(reg);
	sframe_jit__unlock(&reg->lock);
	return n;
}

int sframe_jit_grow(struct sframe_jit *reg, uint32_t fde_capacity,
		    uint32_t fre_capacity)
{
	int err = 0;

	if (!reg)
		return -EINVAL;
	if (reg->l.compact)
		return -EOPNOTSUPP;
	sframe_jit__lock(&reg->lock);
	if (fde_capacity < reg->l.fde_cap)
		fde_capacity = reg->l.fde_cap;
	if (fre_capacity < reg->l.fre_cap)
		fre_capacity = reg->l.fre_cap;
	if (fde_capacity > reg->max_fdes || fre_capacity > reg->max_fres)
		err = -ENOSPC;
	else if (fde_capacity > reg->l.fde_cap ||
		 fre_capacity > reg->l.fre_cap)
		err = grow_locked(reg, fde_capacity, fre_capacity);
	sframe_jit__unlock(&reg->lock);
	return err;
}

/**
 * sframe_jit__add_batch() - add functions all together, or none
 * @reg: the registry.
 * @funcs: the functions; each one's rows start at @rows[first_row].
 * @nr_funcs: their number.
 * @rows: the rows of all of them.
 *
 * Under one hold of the writer lock: room for all first, then each one;
 * on error, those already added are removed again.
 *
 * Return: @nr_funcs, or the first error as sframe_jit_add() reports it.
 */
int sframe_jit__add_batch(struct sframe_jit *reg,
			  const struct sframe_jit__func *funcs,
			  uint32_t nr_funcs, const struct sframe_jit_row *rows)
{
	uint64_t total = 0;
	uint32_t i, j;
	int err = 0;

	if (reg->l.compact)
		return -EOPNOTSUPP;
	for (i = 0; i < nr_funcs; i++) {
		err = func_check(reg, &funcs[i], rows + funcs[i].first_row);
		if (err)
			return err;
		total += funcs[i].nr_rows;
	}
	if (total > SFRAME_JIT_MAX_FRES || nr_funcs > SFRAME_JIT_MAX_FDES)
		return -ENOSPC;

	sframe_jit__lock(&reg->lock);
	err = room_locked(reg, nr_funcs, total);
	for (i = 0; !err && i < nr_funcs; i++)
		err = add_locked(reg, &funcs[i], rows + funcs[i].first_row);
	if (err) {
		for (j = 0; j + 1 < i; j++)
			remove_locked(reg, funcs[j].start);
	}
	sframe_jit__unlock(&reg->lock);
	if (err)
		return err;
	for (i = 0; i < nr_funcs; i++)
		perf_map_add(reg, &funcs[i]);
	return nr_funcs;
}

/* Check a batch whose rows are @nr_rows at @rows, which it indexes. */
/* One row as sframe_jit__check_rows() wants it, its order aside. */
static bool row_sound(const struct sframe_jit_row *r)
{
	return (r->cfa_base == SFRAME_JIT_ROW_CFA_SP ||
		r->cfa_base == SFRAME_JIT_ROW_CFA_FP) && !(r->flags & ~ROW_FLAGS);
}

/*
 * The shared rows are checked once, not once per function that reads
 * them (libLLVM-14: 440,000 rows, read as 860,000): bit i of @breaks is
 * set where row i is unsound or does not start after row i - 1.  A
 * window of rows is then what sframe_jit__check_rows() accepts if its
 * first row is sound and starts at 0, no later row sets a bit, and the
 * last row, which starts latest, starts below the limit.
 */
static uint64_t *breaks_make(const struct sframe_jit_row *rows,
			     uint32_t nr_rows)
{
	uint64_t *breaks = calloc(nr_rows / 64 + 1, sizeof(*breaks));
	uint32_t i;

	if (!breaks)
		return NULL;
	for (i = 0; i < nr_rows; i++)
		if (!row_sound(&rows[i]) ||
		    (i && rows[i].start_off <= rows[i - 1].start_off))
			breaks[i / 64] |= 1ULL << (i % 64);
	return breaks;
}

/* No bit of @breaks set in [@lo, @hi). */
static bool breaks_none(const uint64_t *breaks, uint32_t lo, uint32_t hi)
{
	uint64_t word;
	uint32_t w;

	for (; lo < hi; lo = (w + 1) * 64) {
		w = lo / 64;
		word = breaks[w] >> (lo % 64);
		if (hi - lo < 64 - lo % 64)
			word &= (1ULL << (hi - lo)) - 1;
		if (word)
			return false;
	}
	return true;
}

/* func_check(), with the rows' checks made once in @breaks. */
static int shared_func_check(struct sframe_jit *reg,
			     const struct sframe_jit__func *fn,
			     const struct sframe_jit_row *rows,
			     const uint64_t *breaks)
{
	const struct sframe_jit_row *first = rows + fn->first_row;
	uint32_t limit = fn->stub_size ?: fn->size;

	if (!fn->size || fn->stub_size > UINT8_MAX)
		return -EINVAL;
	if (!func_in_range(reg, fn->start, fn->size))
		return -ERANGE;
	if (!fn->nr_rows || first->start_off || !row_sound(first) ||
	    !breaks_none(breaks, fn->first_row + 1,
			 fn->first_row + fn->nr_rows) ||
	    first[fn->nr_rows - 1].start_off >= limit)
		return -EINVAL;
	return 0;
}

static int shared_check(struct sframe_jit *reg,
			const struct sframe_jit__func *funcs,
			uint32_t nr_funcs, const struct sframe_jit_row *rows,
			uint32_t nr_rows)
{
	uint64_t *breaks;
	uint32_t i;
	int err = 0;

	if (nr_funcs > SFRAME_JIT_MAX_FDES || nr_rows > SFRAME_JIT_MAX_FRES)
		return -ENOSPC;
	breaks = breaks_make(rows, nr_rows);
	if (!breaks)
		return -ENOMEM;
	for (i = 0; i < nr_funcs && !err; i++) {
		if (funcs[i].first_row > nr_rows ||
		    funcs[i].nr_rows > nr_rows - funcs[i].first_row)
			err = -EINVAL;
		else
			err = shared_func_check(reg, &funcs[i], rows, breaks);
	}
	free(breaks);
	return err;
}

/**
 * sframe_jit__add_shared() - add functions that share their rows
 * @reg: the registry, with SFRAME_JIT_F_SHARE_ROWS.
 * @funcs: the functions; each one's rows are @rows[first_row] on.
 * @nr_funcs: their number.
 * @rows: the rows of all of them, which they may share.
 * @nr_rows: the number of @rows.
 *
 * As sframe_jit__add_batch(), but @rows go into the registry once, as
 * one block, and each descriptor points into it.  Within a hold of the
 * writer lock the block is written before any descriptor that uses it
 * is published, as for a single function.  On error the descriptors
 * added are removed again; the block stays used.
 *
 * Into a compact registry, sframe_jit__add_compact() adds them.
 *
 * Return: @nr_funcs, or the first error as sframe_jit_add() reports it;
 * -EINVAL for a registry without SFRAME_JIT_F_SHARE_ROWS, which could
 * compact the shared rows apart.
 */
int sframe_jit__add_shared(struct sframe_jit *reg,
			   const struct sframe_jit__func *funcs,
			   uint32_t nr_funcs,
			   const struct sframe_jit_row *rows,
			   uint32_t nr_rows)
{
	uint32_t i, j, base;
	int err;

	if (!reg || !(reg->flags & SFRAME_JIT_F_SHARE_ROWS))
		return -EINVAL;
	if (reg->l.compact)
		return sframe_jit__add_compact(reg, funcs, nr_funcs, rows,
					       nr_rows, NULL);
	err = shared_check(reg, funcs, nr_funcs, rows, nr_rows);
	if (err)
		return err;

	sframe_jit__lock(&reg->lock);
	for (i = 0; !err && i < nr_funcs; i++)
		err = overlap_check(reg, &funcs[i]);
	if (!err)
		err = room_locked(reg, nr_funcs, nr_rows);
	if (err)
		goto unlock;
	base = reg->fre_used;
	for (i = 0; i < nr_rows; i++)
		fre_put(reg, base + i, &rows[i]);
	reg->fre_used += nr_rows;
	for (i = 0; !err && i < nr_funcs; i++) {
		/* A batch may overlap itself. */
		err = overlap_check(reg, &funcs[i]);
		if (!err)
			fde_publish_locked(reg, &funcs[i],
					   base + funcs[i].first_row);
	}
	if (err) {
		for (j = 0; j + 1 < i; j++)
			remove_locked(reg, funcs[j].start);
	}
unlock:
	sframe_jit__unlock(&reg->lock);
	if (err)
		return err;
	for (i = 0; i < nr_funcs; i++)
		perf_map_add(reg, &funcs[i]);
	return nr_funcs;
}

/* Compact registries: an import of shared rows, appended. */

/*
 * A compact batch goes above the published descriptors, in order: the
 * descriptors of a compact registry never move, so that the pieces of
 * a function stay together.
 */
static int compact_order_check(struct sframe_jit *reg,
			       const struct sframe_jit__func *funcs,
			       uint32_t nr_funcs)
{
	uint32_t i;

	for (i = 0; i < nr_funcs; i++) {
		/* Stubs are for sframe_jit_add_stubs(), which is refused. */
		if (funcs[i].stub_size)
			return -EOPNOTSUPP;
		if (i && funcs[i].start < funcs[i - 1].start + funcs[i - 1].size)
			return -EINVAL;
	}
	if (!nr_funcs || funcs[0].start >= reg->tail_end)
		return 0;
	return overlap_check(reg, &funcs[0]) ?: -EOPNOTSUPP;
}

/* One compact row, one word. */
static void cfre_put(struct sframe_jit *reg, uint32_t i, uint32_t start_off,
		     uint32_t rule)
{
	const struct sframe_jit_cfre c = {
		.start_off	= start_off,
		.rule		= rule,
	};
	unsigned char *p = fre_ptr(reg, i);
	uint32_t w;

	memcpy(&w, &c, sizeof(w));
	atomic_store_explicit(word(p), w, memory_order_relaxed);
	words_zero(p + sizeof(c), reg->l.fre_stride - sizeof(c));
}

/*
 * The shared rows into the slots from @base, as they are, each naming
 * its rule by its index after the rules already there.  A row that
 * starts 64 KiB or more into its function is in no piece's window (the
 * later pieces have rows of their own), and keeps its rule only.
 */
static void compact_rows_put(struct sframe_jit *reg,
			     const struct sframe_jit__row_rules *rr,
			     const struct sframe_jit_row *rows,
			     uint32_t nr_rows, uint32_t base)
{
	uint32_t i, off;

	for (i = 0; i < nr_rows; i++) {
		off = rows[i].start_off;
		if (off > SFRAME_JIT__CFRE_MAX_OFF)
			off = SFRAME_JIT__CFRE_MAX_OFF;
		cfre_put(reg, base + i, off, reg->rule_used + rr->idx[i]);
	}
}

/* The rules into the slots from rule_used on. */
static void compact_rules_put(struct sframe_jit *reg,
			      const struct sframe_jit__row_rules *rr)
{
	unsigned char *p;
	uint32_t i;

	for (i = 0; i < rr->nr_rules; i++) {
		p = reg->l.rules + (size_t)(reg->rule_used + i) *
				   reg->l.rule_stride;
		words_store(p, &rr->rules[i], sizeof(rr->rules[i]));
		words_zero(p + sizeof(rr->rules[i]),
			   reg->l.rule_stride - sizeof(rr->rules[i]));
	}
}

/* Mark descriptor slot @i a later piece of a function, or a first one. */
static void cont_set(struct sframe_jit *reg, uint32_t i, bool cont)
{
	uint64_t bit = 1ULL << (i % 64);

	if (cont)
		reg->cont[i / 64] |= bit;
	else
		reg->cont[i / 64] &= ~bit;
}

/*
 * The descriptors of @fn's pieces from slot *@fde on, and the rows of
 * the later pieces from slot *@extra on, rebased to their piece; the
 * room is checked as they go, for the slots are not published yet.
 */
static int compact_func_put(struct sframe_jit *reg,
			    const struct sframe_jit__row_rules *rr,
			    const struct sframe_jit__func *fn,
			    const struct sframe_jit_row *rows, uint32_t base,
			    uint32_t *fde, uint32_t *extra)
{
	const struct sframe_jit_row *fr = rows + fn->first_row;
	const uint16_t *fi = rr->idx + fn->first_row;
	struct sframe_jit__piece p;
	struct sframe_jit_fde d;
	uint32_t r, k;

	for (r = 0; r < fn->nr_rows; r = p.end) {
		sframe_jit__piece_next(fn, fr, r, &p);
		if (*fde >= reg->l.fde_cap ||
		    (r && p.end - p.first > reg->l.fre_cap - *extra))
			return -ENOSPC;
		d = (struct sframe_jit_fde) {
			.func_start	= fn->start + p.off,
			.func_size	= p.size,
			.fre_start	= r ? *extra : base + fn->first_row,
			.fre_count	= p.end - p.first,
		};
		for (k = p.first; r && k < p.end; k++)
			cfre_put(reg, (*extra)++, fr[k].start_off - p.off,
				 reg->rule_used + fi[k]);
		cont_set(reg, *fde, r);
		cfde_put(reg, (*fde)++, &d);
	}
	return 0;
}

/* Write the batch into free slots, then publish it with one count. */
static int import_compact_locked(struct sframe_jit *reg,
				 const struct sframe_jit__func *funcs,
				 uint32_t nr_funcs,
				 const struct sframe_jit_row *rows,
				 uint32_t nr_rows,
				 const struct sframe_jit__row_rules *rr)
{
	uint32_t i, fde = reg->nr_fdes, base = reg->fre_used;
	uint32_t extra = base + nr_rows;
	int err;

	err = compact_order_check(reg, funcs, nr_funcs);
	if (err)
		return err;
	if (nr_rows > reg->l.fre_cap - base ||
	    rr->nr_rules > reg->l.rule_cap - reg->rule_used)
		return -ENOSPC;
	compact_rows_put(reg, rr, rows, nr_rows, base);
	for (i = 0; i < nr_funcs; i++) {
		err = compact_func_put(reg, rr, &funcs[i], rows, base, &fde,
				       &extra);
		if (err)
			return err;
	}
	compact_rules_put(reg, rr);
	reg->rule_used += rr->nr_rules;
	reg->fre_used = extra;
	if (nr_funcs)
		reg->tail_end = funcs[nr_funcs - 1].start +
				funcs[nr_funcs - 1].size;
	count_publish(reg, fde);
	return 0;
}

/**
 * sframe_jit__add_compact() - add functions that share rows, compactly
 * @reg: the registry, with SFRAME_JIT_F_COMPACT_RECORDS.
 * @funcs: the functions, in address order; each one's rows are
 *	@rows[first_row] on.
 * @nr_funcs: their number.
 * @rows: the rows of all of them, which they may share.
 * @nr_rows: the number of @rows.
 * @rr: the rule of each of @rows, as sframe_jit__compact_caps() found
 *	them; NULL to find them here.
 *
 * As sframe_jit__add_shared(), into compact records: the rows once, as
 * one block, their rules deduplicated, the functions split where a
 * compact row or descriptor cannot hold them (compact.c).  The batch
 * goes above the functions already there.  Nothing is published before
 * everything is written, and nothing at all on error.
 *
 * Return: @nr_funcs; -EINVAL for a bad function or row, or functions
 * out of order; -ERANGE outside the range; -EEXIST over a live
 * function; -EOPNOTSUPP below the last one; -ENOSPC when the
 * descriptors, rows or rules do not fit; -ENOMEM.
 */
int sframe_jit__add_compact(struct sframe_jit *reg,
			    const struct sframe_jit__func *funcs,
			    uint32_t nr_funcs,
			    const struct sframe_jit_row *rows,
			    uint32_t nr_rows,
			    const struct sframe_jit__row_rules *rr)
{
	struct sframe_jit__row_rules own = { 0 };
	uint32_t i;
	int err;

	if (!reg || !reg->l.compact)
		return -EINVAL;
	err = shared_check(reg, funcs, nr_funcs, rows, nr_rows);
	if (!err && !rr) {
		err = sframe_jit__row_rules_make(rows, nr_rows, &own);
		rr = &own;
	}
	if (err)
		return err;
	sframe_jit__lock(&reg->lock);
	err = import_compact_locked(reg, funcs, nr_funcs, rows, nr_rows, rr);
	sframe_jit__unlock(&reg->lock);
	sframe_jit__row_rules_free(&own);
	if (err)
		return err;
	for (i = 0; i < nr_funcs; i++)
		perf_map_add(reg, &funcs[i]);
	return nr_funcs;
}

/* Reading back. */

int sframe_jit_find(struct sframe_jit *reg, uint64_t addr,
		    struct sframe_jit_func *func, struct sframe_jit_row *rows,
		    uint32_t max_rows)
{
	struct sframe_jit_fde fde;
	int64_t i;
	uint32_t r;

	if (!reg || (max_rows && !rows))
		return -EINVAL;
	sframe_jit__lock(&reg->lock);
	i = fde_find(reg, addr);
	if (i < 0) {
		sframe_jit__unlock(&reg->lock);
		return -ENOENT;
	}
	fde_get(reg, i, &fde);
	for (r = 0; r < fde.fre_count && r < max_rows; r++)
		fre_get(reg, fde.fre_start + r, &rows[r]);
	sframe_jit__unlock(&reg->lock);
	if (func) {
		func->start = fde.func_start;
		func->size = fde.func_size;
		func->nr_rows = fde.fre_count;
		func->stub_size = fde.type == SFRAME_JIT_FDE_PCMASK ?
				  fde.rep_size : 0;
	}
	return 0;
}

int sframe_jit_get_info(struct sframe_jit *reg, struct sframe_jit_info *info)
{
	struct sframe_jit_info i = { .sz = sizeof(i) };
	size_t sz;

	if (!reg || !info ||
	    info->sz < offsetof(struct sframe_jit_info, kernel) +
		       sizeof(info->kernel))
		return -EINVAL;
	sz = info->sz < sizeof(i) ? info->sz : sizeof(i);
	sframe_jit__lock(&reg->lock);
	i.text_start = reg->text_start;
	i.text_end = reg->text_end;
	i.fde_capacity = reg->l.fde_cap;
	i.fre_capacity = reg->l.fre_cap;
	i.nr_funcs = reg->nr_fdes - reg->nr_dead;
	i.nr_tombstones = reg->nr_dead;
	i.nr_rows_used = reg->fre_used;
	i.nr_rows_live = reg->fre_used - rows_dead(reg);
	i.nr_grows = reg->nr_grows;
	i.nr_compactions = reg->nr_compactions;
	i.kernel = reg->ops->kernel;
	i.nr_lock_waits = reg->lock.nr_waits;
	i.lock_wait_ns = reg->lock.wait_ns;
	sframe_jit__unlock(&reg->lock);
	i.nr_perf_map_errors = sframe_jit__perf_map_errors(&reg->perf_map);
	i.sz = info->sz;
	memcpy(info, &i, sz);
	return 0;
}
