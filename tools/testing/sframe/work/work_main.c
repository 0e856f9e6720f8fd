// SPDX-License-Identifier: GPL-2.0
/*
 * A program with a deep, varied call graph for the stack cross-checks,
 * built -O2 -fomit-frame-pointer: leaf loops without a frame, alloca()
 * and VLA frames whose CFA is the frame pointer, a frame larger than a
 * page, arguments on the stack, sibling calls, register pressure,
 * mutual recursion, an interpreter loop, code gcc moves to .text.cold,
 * calls into a shared library and into frame-pointer code, and qsort()
 * calling back into the program from libc.
 *
 *	work_main [SECONDS]
 *
 * runs for SECONDS of CPU time (default 3), then prints a checksum.
 */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "work.h"

#define NOINLINE	__attribute__((noinline))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static unsigned long rng = 88172645463325252UL;

static unsigned long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Where time goes: a loop with no frame and no call. */
static NOINLINE long w_leaf(int depth, long x)
{
	long h = x;
	int i, n = 100 + (int)(next_rand() % 1500);

	for (i = 0; i < n; i++)
		h = (h << 5) - h + (i ^ (h >> 11));
	return h;
}

/* alloca(): the frame's size is known only at run time. */
static NOINLINE long w_alloca(int depth, long x)
{
	int n = 1 + (int)(next_rand() % 64), i;
	long *a = alloca(n * sizeof(*a));
	long r;

	for (i = 0; i < n; i++)
		a[i] = x + i * depth;
	r = work_dispatch(depth - 1, a[n / 2]);
	return r + a[n - 1];
}

/* A variable-length array, and a call with it live. */
static NOINLINE long w_vla(int depth, long x)
{
	int n = 8 + (int)(x & 127);
	long v[n];
	int i;

	for (i = 0; i < n; i++)
		v[i] = x ^ i;
	return work_dispatch(depth - 1, v[x & 7]) + v[n - 1];
}

/* A frame of more than a page: large CFA offsets. */
static NOINLINE long w_big(int depth, long x)
{
	char buf[6000];
	long r;

	buf[0] = (char)x;
	buf[5999] = (char)(x >> 8);
	barrier_data(buf);
	r = work_dispatch(depth - 1, x + buf[0]);
	return r + buf[5999];
}

static NOINLINE long w_ten(int depth, long a, long b, long c, long d,
			   long e, long f, long g, long h, long i, long j)
{
	return work_dispatch(depth - 1, a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j);
}

/* Ten arguments: four go on the stack. */
static NOINLINE long w_args(int depth, long x)
{
	return w_ten(depth, x, x + 1, x + 2, x + 3, x + 4, x + 5, x + 6,
		     x + 7, x + 8, x + 9) + 1;
}

/* A sibling call: this frame is gone when the callee runs. */
static NOINLINE long w_tail(int depth, long x)
{
	return work_dispatch(depth - 1, x * 3 + 1);
}

/* Values live across calls: every callee-saved register is pushed. */
static NOINLINE long w_regs(int depth, long x)
{
	long a = x * 3, b = x * 5, c = x * 7, d = x * 11, e = x * 13;
	long r;

	r = work_dispatch(depth - 1, x);
	r += w_leaf(depth, a ^ r) + b;
	return r * c + d * e + a + b;
}

static NOINLINE long w_odd(int n, long x);

static NOINLINE long w_even(int n, long x)
{
	if (n <= 0)
		return work_dispatch(n, x);
	return w_odd(n - 1, x + 2) * 3;
}

static NOINLINE long w_odd(int n, long x)
{
	if (n <= 0)
		return work_dispatch(n, x);
	return w_even(n - 1, x + 1) * 5;
}

/* Mutual recursion a few levels deep. */
static NOINLINE long w_mutual(int depth, long x)
{
	int n = (int)(next_rand() % 6);

	return w_even(depth - 1 < n ? depth - 1 : n, x) + n;
}

/* An interpreter loop that calls out from one of its cases. */
static NOINLINE long w_interp(int depth, long x)
{
	static const unsigned char prog[] = { 1, 2, 1, 3, 2, 4, 1, 0 };
	long acc = x, i;

	for (i = 0; prog[i]; i++) {
		switch (prog[i]) {
		case 1:
			acc = acc * 33 + i;
			break;
		case 2:
			acc ^= acc >> 9;
			break;
		case 3:
			acc += w_leaf(depth, acc);
			break;
		case 4:
			acc += work_dispatch(depth - 1, acc);
			break;
		}
	}
	return acc;
}

static NOINLINE __attribute__((cold)) long w_rare(int depth, long x)
{
	return work_dispatch(depth - 1, x ^ 0x5a5a) + 7;
}

/* A branch gcc moves to .text.cold, with its own descriptor. */
static NOINLINE long w_split(int depth, long x)
{
	long r = w_leaf(depth, x);

	if (__builtin_expect((r & 3) == 0, 0))
		return w_rare(depth, r) * 3;
	return work_dispatch(depth - 1, r) + r;
}

static NOINLINE long w_lib(int depth, long x)
{
	return lib_apply(work_dispatch, depth - 1, x) + 1;
}

static NOINLINE long w_lib_chain(int depth, long x)
{
	return lib_chain(work_dispatch, depth - 1, x) * 7;
}

static NOINLINE long w_fp(int depth, long x)
{
	return work_fp(depth - 1, x) + 3;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	w_leaf(0, x ^ y);
	return (x > y) - (x < y);
}

/* libc in the middle: qsort() calls back into the program. */
static NOINLINE long w_qsort(int depth, long x)
{
	long v[16];
	int i;

	/* Rarely, or most stacks would have libc in the middle. */
	if (next_rand() % 8)
		return w_leaf(depth, x);

	for (i = 0; i < 16; i++)
		v[i] = (long)next_rand();
	qsort(v, 16, sizeof(v[0]), cmp_long);
	return work_dispatch(depth - 1, v[0] ^ x) + v[15];
}

static const work_fn shapes[] = {
	w_leaf, w_alloca, w_vla, w_big, w_args, w_tail, w_regs, w_mutual,
	w_interp, w_split, w_lib, w_lib_chain, w_fp, w_qsort,
};

/**
 * work_dispatch() - the next step of the call graph
 * @depth: levels left; at 0 or below only leaf work is done.
 * @x: the value being worked on.
 *
 * Return: a value that depends on all the work done.
 */
long work_dispatch(int depth, long x)
{
	unsigned long r = next_rand();

	if (depth <= 0)
		return w_leaf(0, x ^ (long)r);
	return shapes[r % ARRAY_SIZE(shapes)](depth, x) + 1;
}

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = cpu_seconds() + (argc > 1 ? atof(argv[1]) : 3);
	unsigned long rounds = 0;
	long sum = 0;

	while (cpu_seconds() < end) {
		sum += work_dispatch(8 + (int)(next_rand() % 40), sum);
		rounds++;
	}
	printf("work_main: %lu rounds, checksum %lx\n", rounds, sum);
	return 0;
}
