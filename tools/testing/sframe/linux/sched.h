/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: cond_resched() counts its calls, so that a test can
 * see that a long validation lets the scheduler in.
 */
#ifndef _SFRAME_SHIM_LINUX_SCHED_H
#define _SFRAME_SHIM_LINUX_SCHED_H

/* Weak: every object that includes this shares one counter. */
__attribute__((weak)) unsigned long sframe_shim_resched_calls;

static inline void cond_resched(void)
{
	sframe_shim_resched_calls++;
}

#endif /* _SFRAME_SHIM_LINUX_SCHED_H */
