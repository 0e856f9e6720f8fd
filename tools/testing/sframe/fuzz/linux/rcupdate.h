/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: RCU read sections as a nesting count, so that a target
 * can check that the walker dereferences the index only inside one and
 * leaves none open.
 */
#ifndef _SFRAME_FUZZ_LINUX_RCUPDATE_H
#define _SFRAME_FUZZ_LINUX_RCUPDATE_H

#include <linux/compiler.h>

extern int sframe_fuzz_rcu_depth;

/* Called where the kernel would have lockdep complain; aborts. */
void sframe_fuzz_rcu_misuse(const char *what);

static inline void rcu_read_lock(void)
{
	sframe_fuzz_rcu_depth++;
}

static inline void rcu_read_unlock(void)
{
	if (sframe_fuzz_rcu_depth <= 0)
		sframe_fuzz_rcu_misuse("an unlock without a lock");
	sframe_fuzz_rcu_depth--;
}

#define rcu_access_pointer(p)	(p)

#define rcu_dereference(p) ({					\
	if (sframe_fuzz_rcu_depth <= 0)				\
		sframe_fuzz_rcu_misuse("rcu_dereference() outside a read section"); \
	(p); })

#endif /* _SFRAME_FUZZ_LINUX_RCUPDATE_H */
