/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the one field of the mm that sframe_lookup.c reads, and
 * READ_ONCE() and WRITE_ONCE(), which the kernel's header brings along.
 */
#ifndef _SFRAME_LOOKUP_LINUX_MM_TYPES_H
#define _SFRAME_LOOKUP_LINUX_MM_TYPES_H

#include <linux/compiler.h>
#include <linux/rcupdate.h>

struct sframe_mm;

struct mm_struct {
	struct sframe_mm __rcu *sframe;
};

#endif /* _SFRAME_LOOKUP_LINUX_MM_TYPES_H */
