/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JIT registry reader (sframe_jit_read.c), shared by the kernel,
 * KUnit and the userspace harness in tools/testing/sframe: a registry is
 * the kernel's mapping of it and a private copy of its layout.  It does
 * not depend on the ELF section decoder.
 */
#ifndef _KERNEL_UNWIND_SFRAME_JIT_READ_H
#define _KERNEL_UNWIND_SFRAME_JIT_READ_H

#include <linux/types.h>

#include "sframe_row.h"

/*
 * Most records sframe_jit_find() reads, at the largest capacities
 * (sframe_jit_max_reads()): 8 + fls(SFRAME_JIT_MAX_FDES) +
 * fls(SFRAME_JIT_MAX_FRES).
 */
#define SFRAME_JIT_MAX_READS		(8 + 23 + 25)

/**
 * struct sframe_jit_view - the kernel's private view of a JIT registry
 * @base: the kernel's mapping of the registry: its header.
 * @fde_off: offset of the descriptor area from @base.
 * @fde_cap: descriptors the area holds.
 * @fre_off: offset of the frame-row area from @base.
 * @fre_cap: frame rows the area holds.
 * @text_start: the registered code range's start.
 * @text_end: its end (exclusive).
 * @compact: the registry holds compact records (SFRAME_JIT_F_COMPACT).
 * @rule_off: with @compact, offset of the frame-rule area from @base.
 * @rule_cap: with @compact, rules the area holds; 0 without.
 * @stats: the unwinder counts its lookups in the header's stats
 *	(SFRAME_JIT_F_STATS).
 *
 * Everything here is the kernel's own copy, never read back from the
 * shared header.  Descriptors and rows are the version 1 structures of
 * the uapi header, or with @compact struct sframe_jit_cfde and struct
 * sframe_jit_cfre, one after the other: the strides the kernel writes
 * into the shared header are their sizes.
 */
struct sframe_jit_view {
	const void *base;
	u32 fde_off;
	u32 fde_cap;
	u32 fre_off;
	u32 fre_cap;
	unsigned long text_start;
	unsigned long text_end;
	bool compact;
	u32 rule_off;
	u32 rule_cap;
	bool stats;
};

u32 sframe_jit_max_reads(const struct sframe_jit_view *v);
enum sframe_find_result sframe_jit_find(const struct sframe_jit_view *v,
					unsigned long pc,
					struct sframe_row *row);

#endif /* _KERNEL_UNWIND_SFRAME_JIT_READ_H */
