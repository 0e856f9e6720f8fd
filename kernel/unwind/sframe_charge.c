// SPDX-License-Identifier: GPL-2.0
/*
 * What registrations may pin: JIT registries and validated ELF section
 * copies are charged to a count of the user's own, user_struct's
 * sframe_pages, held to kernel.sframe_user_pinned_kb, and to the memory
 * cgroup of the task that allocates them.  Not to the user's locked_vm:
 * that is the RLIMIT_MEMLOCK budget io_uring's registered buffers,
 * AF_XDP and perf's buffers need, and ELF tables are made at every exec
 * of a binary that has one, asked for by no one.
 *
 * Documentation/userspace-api/sframe.rst, "Pinned memory", says why.
 */
#include <linux/capability.h>
#include <linux/init.h>
#include <linux/overflow.h>
#include <linux/sched/user.h>
#include <linux/sysctl.h>
#include <linux/user_namespace.h>

#include "sframe_internal.h"

/*
 * What each user may pin in tables: a JIT of 100,000 small functions
 * needs about 9 MiB, growing its registry by replacement briefly holds
 * the old one as well, and the tables of the ELF objects a process maps
 * take a few MiB more.
 */
static unsigned int sysctl_sframe_user_pinned_kb = 16384;

static struct ctl_table sframe_charge_sysctls[] = {
	{
		.procname	= "sframe_user_pinned_kb",
		.data		= &sysctl_sframe_user_pinned_kb,
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

/*
 * May the current task go past the limit?  Asked only once it would, so
 * that the audit log does not hear of every exec and fork, and without
 * an audit record: refusing a table is not an access denied.
 */
static bool sframe_over_limit_ok(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK);
}

/**
 * sframe_charge() - charge pages to a user's pinned tables
 * @user: the user, normally current_user().
 * @pages: pages to charge.
 *
 * Held to kernel.sframe_user_pinned_kb, which CAP_IPC_LOCK in the
 * initial user namespace bypasses; the count includes what it let past.
 *
 * Return: 0, or -EDQUOT past the limit, which callers tell apart from a
 * failed allocation.
 */
int sframe_charge(struct user_struct *user, unsigned long pages)
{
	unsigned long limit, cur, new;
	bool over_ok = false, asked = false;

	limit = READ_ONCE(sysctl_sframe_user_pinned_kb) >> (PAGE_SHIFT - 10);
	cur = atomic_long_read(&user->sframe_pages);
	do {
		if (check_add_overflow(cur, pages, &new))
			return -EDQUOT;
		if (new > limit && !asked) {
			over_ok = sframe_over_limit_ok();
			asked = true;
		}
		if (new > limit && !over_ok)
			return -EDQUOT;
	} while (!atomic_long_try_cmpxchg(&user->sframe_pages, &cur, new));
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
	atomic_long_sub(pages, &user->sframe_pages);
}
