// SPDX-License-Identifier: GPL-2.0
/*
 * The stacks frame_bench.c walks: a recursion of a given depth, built
 * twice, with frame pointers (FRAME_STACK_FN = frame_stack_fp) and
 * without (frame_stack_nofp), both with --gsframe.  FRAME_STACK_RA names
 * where the innermost frame records its return address.  Each frame keeps a
 * little data live across its call, as ordinary code does.
 */

#include "frame_stack.h"

/* The return address of each recursive call: each walk must show it. */
void *FRAME_STACK_RA;

__attribute__((noinline)) long FRAME_STACK_FN(int depth,
					      frame_stack_leaf leaf, void *arg)
{
	long local[4] = { depth, depth * 3, depth * 5, depth * 7 };
	long r;

	/* The array stays in the frame, in memory, across the call. */
	__asm__ __volatile__("" : : "r" (local) : "memory");
	if (depth <= 0) {
		FRAME_STACK_RA = __builtin_return_address(0);
		r = leaf(arg);
	} else {
		r = FRAME_STACK_FN(depth - 1, leaf, arg);
	}
	/* Not a sibling call: each level keeps its frame. */
	return r + local[depth & 3];
}
