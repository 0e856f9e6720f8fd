/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hooks through which the rest of the kernel reaches the unwind
 * tables that processes register with sframe_jit_open(2) and
 * sframe_register(2), one block per caller.
 */
#ifndef _LINUX_SFRAME_REGISTER_H
#define _LINUX_SFRAME_REGISTER_H

#include <linux/errno.h>
#include <linux/types.h>

struct mm_struct;

/* Fork and exit of an mm, from kernel/fork.c. */
#ifdef CONFIG_SFRAME_REGISTER
int sframe_mm_fork(struct mm_struct *oldmm, struct mm_struct *mm);
void sframe_mm_exit(struct mm_struct *mm);
#else
static inline int sframe_mm_fork(struct mm_struct *oldmm,
				 struct mm_struct *mm)
{
	return 0;
}

static inline void sframe_mm_exit(struct mm_struct *mm)
{
}
#endif

/* Exec of an ELF object, from fs/binfmt_elf.c. */
#ifdef CONFIG_SFRAME_REGISTER
int sframe_register_elf_exec(struct mm_struct *mm, unsigned long sec_addr,
			     unsigned long sec_size, unsigned long text_start,
			     unsigned long text_end);
#else
static inline int sframe_register_elf_exec(struct mm_struct *mm,
					   unsigned long sec_addr,
					   unsigned long sec_size,
					   unsigned long text_start,
					   unsigned long text_end)
{
	return -EOPNOTSUPP;
}
#endif

/* The perf user callchain, from the architecture's perf code. */
struct perf_callchain_entry_ctx;

#ifdef CONFIG_SFRAME_REGISTER
bool sframe_callchain_wanted(bool asked);
bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
			   unsigned long pc, unsigned long sp, unsigned long fp,
			   bool at_entry);
#else
static inline bool sframe_callchain_wanted(bool asked)
{
	return false;
}

static inline bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
					 unsigned long pc, unsigned long sp,
					 unsigned long fp, bool at_entry)
{
	return false;
}
#endif

#endif /* _LINUX_SFRAME_REGISTER_H */
