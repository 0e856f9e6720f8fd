/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: the harness's <linux/compiler.h>, the address-space
 * annotations sframe_user.c uses, and a READ_ONCE() that first calls
 * sframe_fuzz_shared_read().  Every load the decoder makes from memory
 * another thread may write goes through READ_ONCE() or
 * smp_load_acquire(), so the hook lets a target run a writer's next
 * store between any two of them: a deterministic interleaving, chosen by
 * the fuzzer's input.
 */
#ifndef _SFRAME_FUZZ_LINUX_COMPILER_H
#define _SFRAME_FUZZ_LINUX_COMPILER_H

#include_next <linux/compiler.h>

#define __user
#define __rcu

/* Called before each shared load; each target defines it. */
void sframe_fuzz_shared_read(void);

#undef READ_ONCE
#define READ_ONCE(x) ({						\
	sframe_fuzz_shared_read();				\
	__atomic_load_n(&(x), __ATOMIC_RELAXED); })

#endif /* _SFRAME_FUZZ_LINUX_COMPILER_H */
