/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: the few helpers of <linux/kernel.h> the decoder uses. */
#ifndef _SFRAME_SHIM_LINUX_KERNEL_H
#define _SFRAME_SHIM_LINUX_KERNEL_H

#include_next <linux/kernel.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/types.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Like the kernel's, refuses operands of different types. */
#define min(a, b) ({					\
	__typeof__(a) __a = (a);			\
	__typeof__(b) __b = (b);			\
	(void)(&__a == &__b);				\
	__a < __b ? __a : __b; })

#endif /* _SFRAME_SHIM_LINUX_KERNEL_H */
