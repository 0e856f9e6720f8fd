/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: the task, its mm and the x86-64 user address limit, as
 * far as sframe_user.c sees them.  The target sets sframe_fuzz_current.
 */
#ifndef _SFRAME_FUZZ_LINUX_SCHED_H
#define _SFRAME_FUZZ_LINUX_SCHED_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/types.h>

struct sframe_mm;

struct mm_struct {
	struct sframe_mm __rcu *sframe;
};

struct task_struct {
	struct mm_struct *mm;
};

extern struct task_struct *sframe_fuzz_current;
#define current			sframe_fuzz_current

/* x86-64 with 4-level page tables: the last user page is left unmapped. */
#define PAGE_SIZE		4096UL
#define TASK_SIZE		((1UL << 47) - PAGE_SIZE)

#define IS_ALIGNED(x, a)	(((x) & ((__typeof__(x))(a) - 1)) == 0)

/* Validation and conversion let the scheduler in; nothing to do here. */
static inline void cond_resched(void)
{
}

#endif /* _SFRAME_FUZZ_LINUX_SCHED_H */
