/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_SFRAME_REGISTER_H
#define _LINUX_SFRAME_REGISTER_H

#include <linux/maple_tree.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>

struct mm_struct;
struct sframe_jit_reg;

/* What a registered code range is described by. */
enum sframe_region_kind {
	SFRAME_REGION_JIT,
	SFRAME_REGION_ELF,
};

/**
 * struct sframe_elf_copy - a validated private copy of an ELF .sframe
 * @ref: one per index entry; entries of forked children share the copy.
 * @size: bytes in @data.
 * @sec_addr: the section's user address, which its PC-relative fields
 *	are relative to.
 * @rcu: frees the copy after the last reader.
 * @data: the section's bytes.
 */
struct sframe_elf_copy {
	refcount_t ref;
	size_t size;
	unsigned long sec_addr;
	struct rcu_head rcu;
	u8 data[];
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
#endif

#endif /* _LINUX_SFRAME_REGISTER_H */
