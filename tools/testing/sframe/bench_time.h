/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the timed benchmarks of tools/testing/sframe share: the thread's
 * CPU time, which leaves out the time a shared machine keeps the
 * benchmark descheduled, wall-clock time where the work spans
 * processes, and the median of a cell's runs.
 */
#ifndef _SFRAME_BENCH_TIME_H
#define _SFRAME_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static inline double thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Wall-clock time, for what spans processes (fork, exec, wait). */
static inline double wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the @n values at @v, which it sorts. */
static inline double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* _SFRAME_BENCH_TIME_H */
