/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: READ_ONCE() and WRITE_ONCE() as the relaxed atomic
 * load and store they stand for (plain moves on x86-64, as the kernel's),
 * and __always_inline.
 */
#ifndef _SFRAME_SHIM_LINUX_COMPILER_H
#define _SFRAME_SHIM_LINUX_COMPILER_H

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

/* __always_inline, as glibc defines it the kernel's way */
#include <sys/cdefs.h>

#endif /* _SFRAME_SHIM_LINUX_COMPILER_H */
