// SPDX-License-Identifier: GPL-2.0
/*
 * libwork.so: frames of a shared library between frames of the program,
 * reached through the PLT and returning into the program through a
 * function pointer.
 */
#include "work.h"

static __attribute__((noinline)) long lib_mix(long x, int rounds)
{
	long h = x;
	int i;

	for (i = 0; i < rounds; i++)
		h = (h ^ (h >> 7)) * 0x9e3779b97f4a7c15L + i;
	return h;
}

/**
 * lib_apply() - some work, then call back into the program
 * @fn: where to go next.
 * @depth: levels left.
 * @x: the value being worked on.
 *
 * Return: a value that depends on all the work done.
 */
long lib_apply(work_fn fn, int depth, long x)
{
	long buf[24];
	int i;

	for (i = 0; i < 24; i++)
		buf[i] = lib_mix(x + i, 8 + (x & 15));
	/* Keeps the compiler from folding the work away. */
	barrier_data(buf);
	return fn(depth, buf[(x >> 4) & 15]) + buf[3];
}

/**
 * lib_chain() - call back into the program through a sibling call
 * @fn: where to go next.
 * @depth: levels left.
 * @x: the value being worked on.
 *
 * Return: what @fn returns.
 */
long lib_chain(work_fn fn, int depth, long x)
{
	return fn(depth, lib_mix(x, 4 + (x & 63)));
}
