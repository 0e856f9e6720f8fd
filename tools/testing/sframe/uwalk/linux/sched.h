/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: "current" is the walking thread, whose mm holds the
 * index uwalk.c built from the process's loaded objects.
 */
#ifndef _SFRAME_UWALK_LINUX_SCHED_H
#define _SFRAME_UWALK_LINUX_SCHED_H

#include <linux/rcupdate.h>

struct sframe_mm;

struct mm_struct {
	struct sframe_mm __rcu *sframe;
};

struct task_struct {
	struct mm_struct *mm;
};

extern struct task_struct uwalk_task;
#define current	(&uwalk_task)

/* Validation and conversion let the scheduler in; nothing to do here. */
static inline void cond_resched(void)
{
}

#endif /* _SFRAME_UWALK_LINUX_SCHED_H */
