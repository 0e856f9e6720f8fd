// SPDX-License-Identifier: GPL-2.0
/*
 * What a JIT function costs arriving through __register_frame(), with
 * and without sframe-run in front of libgcc (mk/bench/47-register_frame
 * runs it both ways, under callgrind and by the clock):
 *
 *   register_frame_bench JIT_FRAME_SO N [GAP_US]
 *
 * N copies of jit_frame.so's one function and its .eh_frame, each in
 * anonymous memory of its own (tests/jit_image.c), are registered with
 * __register_frame(), each looked up once with _Unwind_Find_FDE() (the
 * work libgcc leaves to the first unwind: it sorts an object's FDEs
 * then), and deregistered.  Prints the nanoseconds per call of each
 * phase.  Under callgrind, --toggle-collect=__register_frame counts the
 * instructions of the first phase alone.
 *
 * With GAP_US, the registrations are that far apart, as a JIT that
 * compiles between them makes them, and each is timed alone: prints
 * their median instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unwind.h>

#include "../tests/jit_image.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Its own function, so that callgrind can count it alone. */
__attribute__((noinline)) static void lookup(const struct jit_image *im)
{
	struct dwarf_eh_bases bases;

	if (!_Unwind_Find_FDE((void *)(uintptr_t)(im->text + 1), &bases))
		fprintf(stderr, "no FDE for %#llx\n",
			(unsigned long long)im->text);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Each registration timed alone, @gap_us after the last one. */
static void spaced(struct jit_image *ims, long n, long gap_us)
{
	double *t = calloc(n, sizeof(*t)), t0, until;
	long i;

	if (!t)
		return;
	for (i = 0; i < n; i++) {
		until = now_ns() + gap_us * 1e3;
		while (now_ns() < until)
			;
		t0 = now_ns();
		__register_frame(ims[i].eh_frame);
		t[i] = now_ns() - t0;
	}
	qsort(t, n, sizeof(*t), cmp_double);
	printf("register %.0f ns median, %.0f ns 90th percentile, %ld us apart (%ld)\n",
	       t[n / 2], t[n * 9 / 10], gap_us, n);
	for (i = 0; i < n; i++)
		__deregister_frame(ims[i].eh_frame);
	free(t);
}

int main(int argc, char **argv)
{
	struct jit_image *ims;
	double t0, t1, t2, t3;
	long i, n;

	n = argc >= 3 ? strtol(argv[2], NULL, 10) : 0;
	if (argc > 4 || n < 1) {
		fprintf(stderr, "usage: %s JIT_FRAME_SO N [GAP_US]\n", argv[0]);
		return 2;
	}
	ims = calloc(n, sizeof(*ims));
	if (!ims)
		return 1;
	for (i = 0; i < n; i++)
		if (jit_image_load(argv[1], &ims[i]))
			return 1;
	if (argc == 4) {
		spaced(ims, n, strtol(argv[3], NULL, 10));
		goto out;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++)
		__register_frame(ims[i].eh_frame);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		lookup(&ims[i]);
	t2 = now_ns();
	for (i = 0; i < n; i++)
		__deregister_frame(ims[i].eh_frame);
	t3 = now_ns();
	printf("register %.0f ns, first lookup %.0f ns, deregister %.0f ns per function (%ld)\n",
	       (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, n);
out:
	for (i = 0; i < n; i++)
		jit_image_free(&ims[i]);
	free(ims);
	return 0;
}
