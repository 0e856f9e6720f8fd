// SPDX-License-Identifier: GPL-2.0
/*
 * uwalk: the kernel's SFrame user stack walker in userspace; see uwalk.h.
 *
 * This file plays the kernel's part around kernel/unwind/sframe_user.c:
 * the per-mm index (sframe_region_lookup() and sframe_region_find() of
 * sframe_lookup.c) becomes a sorted array of the loaded objects'
 * sections, each validated and converted once as the kernel does with a
 * registered section, and the perf callchain entry an array of PCs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sframe_register.h>
#include <linux/uaccess.h>

#include "decoder.h"
#include "sframe_lookup.h"
#include "table_alloc.h"
#include "uwalk.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

/* Bytes below the stack pointer that the AMD64 ABI lets a function use. */
#define UWALK_RED_ZONE		128

/* Objects a process may have loaded; more are ignored. */
#define UWALK_MAX_REGIONS	256

/*
 * The index entries of this harness, opaque to the walker as the
 * kernel's are: one loaded object's section, its table and text range
 * each.
 */
struct sframe_region {
	unsigned long start;
	unsigned long end;
	struct sframe_sec sec;
	struct sframe_table *table;
};

/* Only its presence matters: the walker runs for an mm that has one. */
struct sframe_mm {
	unsigned int nr;
};

static struct sframe_region uwalk_regions[UWALK_MAX_REGIONS];
static unsigned int uwalk_nr;
static bool uwalk_linear;
static struct sframe_mm uwalk_mm_index;
static struct mm_struct uwalk_mm;

struct task_struct uwalk_task = { .mm = &uwalk_mm };
__thread unsigned long uwalk_stack_lo, uwalk_stack_hi;

/**
 * sframe_region_lookup() - the indexed region covering an address
 * @mm: the process (there is only one).
 * @addr: a user address.
 *
 * Return: the region, or NULL.
 */
struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr)
{
	unsigned int lo = 0, hi = uwalk_nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (uwalk_regions[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= uwalk_regions[lo - 1].end)
		return NULL;
	return &uwalk_regions[lo - 1];
}

/**
 * sframe_region_covers() - does a region cover an address?
 * @r: a region from sframe_region_lookup().
 * @addr: a user address.
 *
 * Return: true if @addr is in the region's range.
 */
bool sframe_region_covers(const struct sframe_region *r, unsigned long addr)
{
	return addr >= r->start && addr < r->end;
}

/**
 * sframe_region_find() - the frame row of an indexed region for a PC
 * @r: a region from sframe_region_lookup().
 * @pc: the address to look up.
 * @row: filled in on a hit.
 * @reads: increased by the records read, as the kernel counts them.
 *
 * Return: an enum sframe_find_result.
 */
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row, u32 *reads)
{
	enum sframe_find_result res;
	u32 n;

	if (uwalk_linear)
		return sframe_sec_find(&r->sec, pc, row);
	/* Kept for linear walks only: the kernel refused to convert it. */
	if (!r->table)
		return SFRAME_FIND_NONE;
	res = sframe_table_find_reads(r->table, pc, row, &n);
	*reads += n;
	return res;
}

/*
 * Register a section for [start, end) as sframe_elf.c does:
 * validated, then converted; the table is never freed.  With
 * @keep_refused, a section that validates but is refused conversion
 * (-E2BIG) stays, without a table, for linear walks.
 */
static int uwalk_register(const void *data, size_t size, unsigned long base,
			  unsigned long start, unsigned long end,
			  bool keep_refused)
{
	struct sframe_region *r;
	int ret;

	if (uwalk_nr == UWALK_MAX_REGIONS)
		return -ENOSPC;
	r = &uwalk_regions[uwalk_nr];
	ret = sframe_sec_init(&r->sec, data, size, base);
	if (!ret)
		ret = sframe_sec_validate(&r->sec);
	if (ret)
		return ret;
	ret = table_alloc_new(&r->sec, &r->table);
	if (ret) {
		if (!keep_refused || ret != -E2BIG)
			return ret;
	}
	r->start = start;
	r->end = end;
	uwalk_nr++;
	return ret;
}

/* The object's executable segments, and its SFrame section. */
static int uwalk_add_object(struct dl_phdr_info *info, size_t size,
			    void *data)
{
	const ElfW(Phdr) *sf = NULL;
	unsigned long start = ULONG_MAX, end = 0, a;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_SFRAME)
			sf = ph;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		a = info->dlpi_addr + ph->p_vaddr;
		if (a < start)
			start = a;
		if (a + ph->p_memsz > end)
			end = a + ph->p_memsz;
	}
	if (!sf || start >= end)
		return 0;
	a = info->dlpi_addr + sf->p_vaddr;
	uwalk_register((const void *)a, sf->p_filesz, a, start, end, false);
	return 0;
}

static int uwalk_cmp(const void *a, const void *b)
{
	const struct sframe_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort the regions for sframe_region_lookup(); false if two overlap. */
static bool uwalk_sort(void)
{
	unsigned int i;

	/* Each region holds its section and table pointer: they move along. */
	qsort(uwalk_regions, uwalk_nr, sizeof(uwalk_regions[0]), uwalk_cmp);
	for (i = 1; i < uwalk_nr; i++)
		if (uwalk_regions[i].start < uwalk_regions[i - 1].end)
			return false;
	return true;
}

int uwalk_init(void)
{
	int ret;

	uwalk_nr = 0;
	dl_iterate_phdr(uwalk_add_object, NULL);
	if (!uwalk_sort())
		return -EINVAL;
	uwalk_mm.sframe = &uwalk_mm_index;
	ret = uwalk_thread_init();
	return ret ? ret : (int)uwalk_nr;
}

int uwalk_add_section(const void *data, size_t size, uint64_t base,
		      uint64_t start, uint64_t end)
{
	unsigned int i;
	int ret;

	for (i = 0; i < uwalk_nr; i++)
		if (start < uwalk_regions[i].end && uwalk_regions[i].start < end)
			return -EEXIST;
	ret = uwalk_register(data, size, base, start, end, true);
	if (!ret || ret == -E2BIG)
		uwalk_sort();
	return ret;
}

void uwalk_set_linear(bool linear)
{
	uwalk_linear = linear;
}

unsigned long uwalk_budget_stops(void)
{
	return sframe_budget_stops();
}

int uwalk_thread_init(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	int ret;

	ret = pthread_getattr_np(pthread_self(), &attr);
	if (ret)
		return -ret;
	ret = pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	if (ret)
		return -ret;
	uwalk_stack_hi = (unsigned long)addr + size;
	return 0;
}

int uwalk_regs(uint64_t pc, uint64_t sp, uint64_t fp, uint64_t *pcs,
	       int max)
{
	/* u64 is unsigned long long, uint64_t unsigned long: same layout. */
	struct perf_callchain_entry entry = { .ip = (u64 *)pcs };
	struct perf_callchain_entry_ctx ctx = {
		.entry = &entry,
		.max_stack = max,
	};

	if (max <= 0)
		return 0;
	/*
	 * Readable: the stack from the innermost frame's red zone up.  A
	 * row may place a saved register below the stack pointer: after
	 * "leave", before "ret", the FP slot is at CFA - 16 = SP - 8.  The
	 * 128 bytes of the AMD64 red zone are mapped, as the kernel writes a
	 * signal frame below them, and uwalk_here()'s callees use them.
	 */
	uwalk_stack_lo = sp - UWALK_RED_ZONE;
	perf_callchain_store(&ctx, pc);
	sframe_callchain_user(&ctx, pc, sp, fp, false);
	return entry.nr;
}

int uwalk_ucontext(const ucontext_t *uc, uint64_t *pcs, int max)
{
	const greg_t *g = uc->uc_mcontext.gregs;

	return uwalk_regs(g[REG_RIP], g[REG_RSP], g[REG_RBP], pcs, max);
}

__attribute__((noinline)) int uwalk_here(uint64_t *pcs, int max)
{
	uint64_t pc, sp, fp;
	int n;

	/* One asm: the PC and the stack pointer of the same instant. */
	asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=r"(pc), "=r"(sp), "=r"(fp));
	n = uwalk_regs(pc, sp, fp, pcs, max);
	/* No tail call: the walk reads this frame, which must stay. */
	asm volatile("" : "+r"(n));
	return n;
}

bool uwalk_covered(uint64_t pc, bool first)
{
	struct sframe_region *r;
	struct sframe_row row;
	u32 reads = 0;

	if (!first)
		pc--;
	r = sframe_region_lookup(&uwalk_mm, pc);
	return r && sframe_region_find(r, pc, &row, &reads) == SFRAME_FIND_HIT;
}

int uwalk_objects(unsigned long *funcs)
{
	unsigned int i;

	if (funcs) {
		*funcs = 0;
		for (i = 0; i < uwalk_nr; i++)
			*funcs += uwalk_regions[i].sec.num_fdes;
	}
	return uwalk_nr;
}
