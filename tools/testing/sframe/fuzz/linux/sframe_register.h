/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: the registration index as sframe_user.c uses it.  The
 * target defines struct sframe_region and the two lookups over its own
 * synthetic regions, dispatching to the decoder as sframe_register.c
 * does.
 */
#ifndef _SFRAME_FUZZ_LINUX_SFRAME_REGISTER_H
#define _SFRAME_FUZZ_LINUX_SFRAME_REGISTER_H

#include <linux/types.h>

struct mm_struct;
struct perf_callchain_entry_ctx;
struct sframe_region;
struct sframe_row;

struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr);
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row);
bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
			   unsigned long pc, unsigned long sp, unsigned long fp,
			   bool at_entry);

#endif /* _SFRAME_FUZZ_LINUX_SFRAME_REGISTER_H */
