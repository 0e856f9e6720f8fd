/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rule of the stack cross-check (crosscheck_stacks.c): when are the
 * kernel's walker and two reference unwinders, libunwind and backtrace(),
 * said to agree on a sampled stack, and when is it a reference that is
 * wrong rather than ours.  Pure, so that xcheck_stacks_test.c can plant
 * disagreements in it.
 */
#ifndef _SFRAME_XCHECK_STACKS_H
#define _SFRAME_XCHECK_STACKS_H

#include <stdbool.h>
#include <stdint.h>

enum xc_walker {
	XC_OURS,
	XC_LIBUNWIND,
	XC_BACKTRACE,
	XC_WALKERS,
};

/* struct xc_walk.n of a reference that was not asked for this sample. */
#define XC_NOT_RUN	(-1)

/**
 * struct xc_walk - one walker's view of a sampled stack
 * @pcs: the interrupted PC, then one return address per caller; a 0
 *	entry ends the walk there.
 * @n: entries at @pcs; 0 if the walker failed, XC_NOT_RUN if it was not
 *	asked (no witness, and no failure either).
 */
struct xc_walk {
	const uint64_t *pcs;
	int n;
};

/**
 * struct xc_verdict - what xc_stacks_compare() found
 * @frames: frames compared and confirmed by a reference (those before
 *	@bad if ours is wrong).
 * @bad: the first frame at which ours is wrong, or -1.
 * @ref_bad: for each reference, the frame at which it went wrong while
 *	ours was confirmed by the other one, or -1 (XC_OURS's is always
 *	-1).
 */
struct xc_verdict {
	int frames;
	int bad;
	int ref_bad[XC_WALKERS];
};

bool xc_stacks_compare(const struct xc_walk w[XC_WALKERS], int want,
		       struct xc_verdict *v);

#endif /* _SFRAME_XCHECK_STACKS_H */
