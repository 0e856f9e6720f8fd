/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the SMP barriers and the acquire load of
 * <asm/barrier.h>, which <linux/atomic.h> provides in the kernel, and
 * atomic_long_t, as C11 fences and atomics, and atomic_t, which the
 * registry object embeds.
 */
#ifndef _SFRAME_SHIM_LINUX_ATOMIC_H
#define _SFRAME_SHIM_LINUX_ATOMIC_H

/* Orders loads before it against loads after it, as an acquire fence. */
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)

/* A load that later loads and stores cannot pass. */
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)

/* A counter that any context may increment, as the kernel's. */
typedef struct {
	long counter;
} atomic_long_t;

#define atomic_long_inc(v)	__atomic_fetch_add(&(v)->counter, 1,	\
						   __ATOMIC_RELAXED)
#define atomic_long_read(v)	__atomic_load_n(&(v)->counter,		\
						__ATOMIC_RELAXED)

/* Nothing built against these shims uses one: the type alone. */
typedef struct {
	int counter;
} atomic_t;

#endif /* _SFRAME_SHIM_LINUX_ATOMIC_H */
