/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: the harness's barriers, and an acquire load that calls
 * the shared-read hook first, as READ_ONCE() does (see compiler.h here).
 */
#ifndef _SFRAME_FUZZ_LINUX_ATOMIC_H
#define _SFRAME_FUZZ_LINUX_ATOMIC_H

#include_next <linux/atomic.h>
#include <linux/compiler.h>

#undef smp_load_acquire
/* Acquire, as in the kernel: pairs with the writer's store-release. */
#define smp_load_acquire(p) ({					\
	sframe_fuzz_shared_read();				\
	__atomic_load_n(p, __ATOMIC_ACQUIRE); })

#endif /* _SFRAME_FUZZ_LINUX_ATOMIC_H */
