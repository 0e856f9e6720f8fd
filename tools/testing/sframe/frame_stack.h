/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two builds of frame_stack.c that frame_bench.c walks: with frame
 * pointers (frame_stack_fp) and without (frame_stack_nofp).
 */
#ifndef FRAME_STACK_H
#define FRAME_STACK_H

/* What the innermost frame calls: the measurement, on this stack. */
typedef long (*frame_stack_leaf)(void *arg);

long frame_stack_fp(int depth, frame_stack_leaf leaf, void *arg);
long frame_stack_nofp(int depth, frame_stack_leaf leaf, void *arg);

/* Where each build's innermost frame records its return address. */
extern void *frame_stack_fp_ra;
extern void *frame_stack_nofp_ra;

#endif /* FRAME_STACK_H */
