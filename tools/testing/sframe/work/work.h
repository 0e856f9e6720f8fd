/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Workloads for the stack cross-checks (crosscheck_stacks.c): programs
 * whose call graphs are deep and varied, spread over code built with and
 * without frame pointers and over a shared library.
 */
#ifndef _SFRAME_WORK_H
#define _SFRAME_WORK_H

/*
 * The compiler must assume that the memory at @p is read and written
 * here: the object stays in memory, in its frame, and the stores before
 * this point happen.
 */
static inline void barrier_data(void *p)
{
	__asm__ __volatile__("" : : "r" (p) : "memory");
}

/* A step of the call graph: recurse @depth more levels from @x. */
typedef long (*work_fn)(int depth, long x);

/* work_main.c: picks the next step pseudo-randomly. */
long work_dispatch(int depth, long x);

/* work_fp.c, built -O0 with frame pointers. */
long work_fp(int depth, long x);
long work_fp_args(int depth, long a, long b, long c, long d, long e,
		  long f, long g, long h);

/* libwork.so, built -O2 without frame pointers. */
long lib_apply(work_fn fn, int depth, long x);
long lib_chain(work_fn fn, int depth, long x);

#endif /* _SFRAME_WORK_H */
