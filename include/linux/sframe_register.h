/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SFRAME_REGISTER_H
#define _LINUX_SFRAME_REGISTER_H

#include <linux/maple_tree.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>

struct mm_struct;
struct perf_callchain_entry_ctx;
struct sframe_elf_copy;
struct sframe_jit_reg;
struct sframe_row;

/* What a registered code range is described by. */
enum sframe_region_kind {
	SFRAME_REGION_JIT,
	SFRAME_REGION_ELF,
};

/**
 * struct sframe_region - one entry of a process's index of code ranges
 * @start: first byte of the range.
 * @end: end of the range (exclusive).
 * @kind: which of @jit and @elf is valid.
 * @jit: the JIT registry that describes the range.
 * @elf: the ELF section that describes the range.
 * @rcu: frees the entry after NMI-context readers are done with it.
 *
 * Entries are immutable once published; changing one means replacing it.
 */
struct sframe_region {
	unsigned long start;
	unsigned long end;
	enum sframe_region_kind kind;
	union {
		struct sframe_jit_reg *jit;
		struct sframe_elf_copy *elf;
	};
	struct rcu_head rcu;
};

/**
 * struct sframe_mm - a process's registered code ranges
 * @index: sframe_region entries by code range; readers walk it under RCU
 *	with no lock, writers hold the mmap lock.
 * @nr: number of entries, capped by kernel.sframe_max_registrations.
 * @rcu: frees the index after NMI-context readers are done with it.
 */
struct sframe_mm {
	struct maple_tree index;
	unsigned int nr;
	struct rcu_head rcu;
};

#ifdef CONFIG_SFRAME_REGISTER
int sframe_mm_fork(struct mm_struct *oldmm, struct mm_struct *mm);
void sframe_mm_exit(struct mm_struct *mm);
int sframe_register_elf_exec(struct mm_struct *mm, unsigned long sec_addr,
			     unsigned long sec_size, unsigned long text_start,
			     unsigned long text_end);
struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr);
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row);
bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
			   unsigned long pc, unsigned long sp, unsigned long fp);
#else
static inline int sframe_mm_fork(struct mm_struct *oldmm,
				 struct mm_struct *mm)
{
	return 0;
}

static inline void sframe_mm_exit(struct mm_struct *mm)
{
}

static inline int sframe_register_elf_exec(struct mm_struct *mm,
					   unsigned long sec_addr,
					   unsigned long sec_size,
					   unsigned long text_start,
					   unsigned long text_end)
{
	return -EOPNOTSUPP;
}

static inline bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
					 unsigned long pc, unsigned long sp,
					 unsigned long fp)
{
	return false;
}
#endif

#endif /* _LINUX_SFRAME_REGISTER_H */
