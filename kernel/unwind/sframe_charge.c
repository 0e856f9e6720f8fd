// SPDX-License-Identifier: GPL-2.0
/*
 * What registrations may pin: JIT registries and validated ELF section
 * copies are charged to the locked memory of the user who made them,
 * held to RLIMIT_MEMLOCK plus the allowance kernel.sframe_user_mlock_kb.
 *
 * Documentation/userspace-api/sframe.rst, "Locked memory", says why.
 */
#include <linux/capability.h>
#include <linux/init.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/sysctl.h>

#include "sframe_internal.h"

/*
 * Pages each user may pin beyond its RLIMIT_MEMLOCK, as perf grants
 * perf_event_mlock_kb for its buffers: at Debian's default 8 MiB limit
 * a JIT of 100,000 small functions needs about 9 MiB, and growing its
 * registry by replacement briefly holds the old one as well.
 */
static unsigned int sysctl_sframe_user_mlock_kb = 8192;

static struct ctl_table sframe_charge_sysctls[] = {
	{
		.procname	= "sframe_user_mlock_kb",
		.data		= &sysctl_sframe_user_mlock_kb,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
};

static int __init sframe_charge_init(void)
{
	register_sysctl_init("kernel", sframe_charge_sysctls);
	return 0;
}
late_initcall(sframe_charge_init);

/* The current user's pages may reach this: RLIMIT_MEMLOCK and more. */
static unsigned long sframe_mlock_limit(void)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long extra = READ_ONCE(sysctl_sframe_user_mlock_kb) >>
			      (PAGE_SHIFT - 10);

	return size_add(limit, extra);
}

/**
 * sframe_charge() - charge pages to a user's locked memory
 * @user: the user, normally current_user().
 * @pages: pages to charge.
 *
 * As for io_uring rings: the user's locked_vm, shared with io_uring and
 * perf, held to the current task's limit unless it has CAP_IPC_LOCK,
 * which bypasses the limit but not the count.
 *
 * Return: 0, or -EDQUOT past the limit, which callers tell apart from a
 * failed allocation.
 */
int sframe_charge(struct user_struct *user, unsigned long pages)
{
	unsigned long limit, cur, new;

	if (capable(CAP_IPC_LOCK)) {
		atomic_long_add(pages, &user->locked_vm);
		return 0;
	}
	limit = sframe_mlock_limit();
	cur = atomic_long_read(&user->locked_vm);
	do {
		if (check_add_overflow(cur, pages, &new) || new > limit)
			return -EDQUOT;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

/**
 * sframe_uncharge() - give back pages sframe_charge() charged
 * @user: the user they were charged to.
 * @pages: the pages.
 *
 * Safe in any context but NMI.
 */
void sframe_uncharge(struct user_struct *user, unsigned long pages)
{
	atomic_long_sub(pages, &user->locked_vm);
}
