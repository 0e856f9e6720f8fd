/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: copy_from_user_nofault() reads only the walking
 * thread's stack, from just below the stack pointer the walk started
 * from (uwalk_regs() sets the bounds) to the top of the stack, which is
 * mapped; anywhere else it fails, as the kernel's fails where a page is
 * absent, rather than fault.
 */
#ifndef _SFRAME_UWALK_LINUX_UACCESS_H
#define _SFRAME_UWALK_LINUX_UACCESS_H

#include <errno.h>
#include <string.h>
#include <linux/types.h>

#define __user

/* The x86-64 user address space with 4-level paging, as the kernel's. */
#define TASK_SIZE	((1UL << 47) - 4096)

#ifndef IS_ALIGNED
#define IS_ALIGNED(x, a)	(((x) & ((__typeof__(x))(a) - 1)) == 0)
#endif

/* Initial-exec: read in signal handlers, also from a preloaded library. */
extern __thread unsigned long uwalk_stack_lo
	__attribute__((tls_model("initial-exec")));
extern __thread unsigned long uwalk_stack_hi
	__attribute__((tls_model("initial-exec")));

static inline long copy_from_user_nofault(void *dst, const void __user *src,
					  size_t size)
{
	unsigned long lo = uwalk_stack_lo, hi = uwalk_stack_hi;
	unsigned long a = (unsigned long)src;

	if (a < lo || a > hi || size > hi - a)
		return -EFAULT;
	memcpy(dst, src, size);
	return 0;
}

#endif /* _SFRAME_UWALK_LINUX_UACCESS_H */
