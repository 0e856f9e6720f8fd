/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lookups the unwinder makes per frame (sframe_lookup.c).  The
 * entry is opaque here, so that the unwinder also builds in userspace
 * (tools/testing/sframe) over an index of the harness's own.
 */
#ifndef _KERNEL_UNWIND_SFRAME_LOOKUP_H
#define _KERNEL_UNWIND_SFRAME_LOOKUP_H

#include <linux/types.h>

#include "sframe_jit_read.h"

/*
 * Most nodes the walker reads to find the registration covering a PC: a
 * maple tree of at most 65,536 ranges (kernel.sframe_max_registrations)
 * is no more than 7 nodes high.
 */
#define SFRAME_INDEX_MAX_READS		8

/*
 * Most user words one frame's step reads: the signal trampoline's code
 * (2) and the signal frame's registers (3), or a frame's return address
 * and saved frame pointer (2).
 */
#define SFRAME_STEP_MAX_WORDS		5

/* Most reads, records and user words, one frame costs the walker. */
#define SFRAME_FRAME_MAX_READS						\
	(SFRAME_INDEX_MAX_READS + SFRAME_JIT_MAX_READS +		\
	 SFRAME_STEP_MAX_WORDS)

/*
 * The work one sample's walk does in NMI context, whatever the depth
 * limit (sframe_callchain_user()): at most SFRAME_SAMPLE_MAX_FRAMES
 * frames, and at most SFRAME_SAMPLE_MAX_READS reads, records of the
 * index and the tables and words of the user stack, counted as each
 * frame costs them (a JIT lookup by its bound).  A frame is not begun
 * unless its worst case fits, so no sample reads more.  The reads are
 * the worst case of 128 frames, perf's default depth of 127 and the
 * sampled PC: only a deeper stack of costly frames is cut by them.
 */
#define SFRAME_SAMPLE_MAX_FRAMES	512
#define SFRAME_SAMPLE_MAX_READS		(128 * SFRAME_FRAME_MAX_READS)

/* The walker's (sframe_user.c), beside its budget SFRAME_SAMPLE_MAX_FRAMES. */
unsigned long sframe_budget_stops(void);

struct mm_struct;
struct sframe_region;
struct sframe_row;

struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr);
bool sframe_region_covers(const struct sframe_region *r, unsigned long addr);
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row, u32 *reads);

#endif /* _KERNEL_UNWIND_SFRAME_LOOKUP_H */
