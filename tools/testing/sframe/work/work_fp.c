// SPDX-License-Identifier: GPL-2.0
/*
 * Frames built at -O0 with frame pointers: every function keeps its
 * locals in memory, and the CFA is computed from the frame pointer for
 * most of its body.
 */
#include "work.h"

/**
 * work_fp_args() - a callee with arguments on the stack
 * @depth: levels left.
 * @a: first of eight values to work on; the last two come on the stack.
 * @b: see @a.
 * @c: see @a.
 * @d: see @a.
 * @e: see @a.
 * @f: see @a.
 * @g: see @a.
 * @h: see @a.
 *
 * Return: a value that depends on all the work done.
 */
long work_fp_args(int depth, long a, long b, long c, long d, long e,
		  long f, long g, long h)
{
	long v[8] = { a, b, c, d, e, f, g, h };
	long s = 0;
	int i;

	for (i = 0; i < 8; i++)
		s = s * 31 + v[i];
	return work_dispatch(depth, s);
}

/**
 * work_fp() - a frame-pointer frame with a loop before its call
 * @depth: levels left.
 * @x: the value being worked on.
 *
 * Return: a value that depends on all the work done.
 */
long work_fp(int depth, long x)
{
	long acc = x;
	int i;

	for (i = 0; i < 200 + (x & 255); i++)
		acc = acc * 6364136223846793005L + 1442695040888963407L;
	if (acc & 1)
		return work_fp_args(depth, acc, acc >> 1, acc >> 2, acc >> 3,
				    acc >> 4, acc >> 5, acc >> 6, acc >> 7);
	return work_dispatch(depth, acc) ^ acc;
}
