/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lookups the unwinder makes per frame (sframe_lookup.c).  The
 * entry is opaque here, so that the unwinder also builds in userspace
 * (tools/testing/sframe) over an index of the harness's own.
 */
#ifndef _KERNEL_UNWIND_SFRAME_LOOKUP_H
#define _KERNEL_UNWIND_SFRAME_LOOKUP_H

#include <linux/types.h>

struct mm_struct;
struct sframe_region;
struct sframe_row;

struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr);
bool sframe_region_covers(const struct sframe_region *r, unsigned long addr);
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row, u32 *reads);

#endif /* _KERNEL_UNWIND_SFRAME_LOOKUP_H */
