/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: the nofault user accessor, which the target implements
 * over its synthetic user memory.
 */
#ifndef _SFRAME_FUZZ_LINUX_UACCESS_H
#define _SFRAME_FUZZ_LINUX_UACCESS_H

#include <linux/compiler.h>
#include <linux/types.h>

long copy_from_user_nofault(void *dst, const void __user *src, size_t size);

#endif /* _SFRAME_FUZZ_LINUX_UACCESS_H */
