/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the SMP barriers and the acquire load of
 * <asm/barrier.h>, which <linux/atomic.h> provides in the kernel, as C11
 * fences and atomics.
 */
#ifndef _SFRAME_SHIM_LINUX_ATOMIC_H
#define _SFRAME_SHIM_LINUX_ATOMIC_H

/* Orders loads before it against loads after it, as an acquire fence. */
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)

/* A load that later loads and stores cannot pass. */
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)

#endif /* _SFRAME_SHIM_LINUX_ATOMIC_H */
