// SPDX-License-Identifier: GPL-2.0
/*
 * Which user callchain requests the SFrame walker serves: those that ask
 * (perf_event_attr.callchain_sframe, BPF_F_USER_SFRAME), and, when the
 * administrator says so, every one.
 */
#include <linux/compiler.h>
#include <linux/init.h>
#include <linux/sframe_register.h>
#include <linux/sysctl.h>

/*
 * kernel.sframe_user_callchains: at 1, every user callchain of a task
 * that registered tables is walked with them, asked for or not, so that
 * profilers that know nothing of callchain_sframe or BPF_F_USER_SFRAME
 * (perf --call-graph=fp, bpftrace's ustack, bcc's profile) get whole
 * stacks through JIT code.  At 0, the default, only requests that ask
 * are: a system-wide change of what those tools record is the
 * administrator's to make.
 */
static unsigned int sysctl_sframe_user_callchains;

static struct ctl_table sframe_request_sysctls[] = {
	{
		.procname	= "sframe_user_callchains",
		.data		= &sysctl_sframe_user_callchains,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static int __init sframe_request_init(void)
{
	register_sysctl_init("kernel", sframe_request_sysctls);
	return 0;
}
late_initcall(sframe_request_init);

/**
 * sframe_callchain_wanted() - walk a user callchain with the SFrame tables?
 * @asked: the request asked for it (perf_event_attr.callchain_sframe,
 *	BPF_F_USER_SFRAME).
 *
 * Safe in NMI context.
 *
 * Return: true if @asked, or if kernel.sframe_user_callchains is 1.  The
 * walk itself still leaves a task without tables to the caller.
 */
bool sframe_callchain_wanted(bool asked)
{
	return asked || READ_ONCE(sysctl_sframe_user_callchains);
}
