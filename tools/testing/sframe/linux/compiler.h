/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: READ_ONCE() as the relaxed atomic load it stands for,
 * and __always_inline.
 */
#ifndef _SFRAME_SHIM_LINUX_COMPILER_H
#define _SFRAME_SHIM_LINUX_COMPILER_H

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

/* __always_inline, as glibc defines it the kernel's way */
#include <sys/cdefs.h>

#endif /* _SFRAME_SHIM_LINUX_COMPILER_H */
