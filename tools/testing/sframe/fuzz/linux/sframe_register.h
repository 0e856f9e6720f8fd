/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fuzzing shim: the registration index as sframe_user.c uses it.  The
 * target defines struct sframe_region and the two lookups over its own
 * synthetic regions, dispatching to the decoder as sframe_lookup.c
 * does.
 */
#ifndef _SFRAME_FUZZ_LINUX_SFRAME_REGISTER_H
#define _SFRAME_FUZZ_LINUX_SFRAME_REGISTER_H

#include <linux/types.h>

struct mm_struct;
struct perf_callchain_entry_ctx;

/* The two lookups, as the kernel's walker sees them. */
#include "sframe_lookup.h"

bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
			   unsigned long pc, unsigned long sp, unsigned long fp,
			   bool at_entry);

#endif /* _SFRAME_FUZZ_LINUX_SFRAME_REGISTER_H */
