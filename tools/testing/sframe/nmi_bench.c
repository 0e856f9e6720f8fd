// SPDX-License-Identifier: GPL-2.0
/*
 * The work of one sample's walk over hostile sections: the kernel's
 * walker, kernel/unwind/sframe_user.c and the decoders built unchanged
 * (uwalk.h), over sections of hostile.h registered as the kernel
 * registers them, and a stack that returns into the same costly place
 * of a section at every frame.
 *
 *	nmi_bench [-c] [-r RUNS] [-d DEPTH]...
 *
 * Each case is walked with each depth limit (default 127, perf's
 * default, and 65535), by the converted tables ("table", the kernel's
 * lookup) and, at depth 127, by the sections themselves ("linear",
 * sframe_sec_find(), the kernel's lookup before the conversion).  A
 * case the kernel refuses to register is walked all the same: its
 * frames then get the frame-pointer fallback, as they would in the
 * kernel.  Printed per walk: frames walked and the median thread CPU
 * time of RUNS walks.  With -c, each walk runs once more between
 * callgrind client requests that zero the counters and dump them as
 * "nmi CASE MODE DEPTH", for mk/bench/15-nmi to count instructions per
 * sample under valgrind --tool=callgrind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"
#include "hostile.h"
#include "uwalk.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NOINLINE	__attribute__((noinline))

#ifdef HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)	((void)(name))
#endif

#define TEXT(k)		(0x100000000000UL + (uint64_t)(k) * 0x100000000UL)
#define MAX_DEPTHS	8
#define MAX_RUNS	31
#define LINEAR_DEPTH	127

struct hcase {
	const char *name;
	const char *what;
	uint8_t version;
	uint32_t fillers;	/* one-row functions before the hostile one */
	uint32_t size;
	uint32_t rows;
	bool mask;
	int err;
	uint64_t pc;
};

#define HCASE(n, w, v, fl, sz, nr, m)					\
	{ .name = (n), .what = (w), .version = (v), .fillers = (fl),	\
	  .size = (sz), .rows = (nr), .mask = (m) }

static struct hcase cases[] = {
	HCASE("rows-65535", "v2, a function of 65535 rows, PC at the last",
	      2, 0, 0xffff, 0xffff, false),
	HCASE("v1-rows-65535", "v1, the same", 1, 0, 0xffff, 0xffff, false),
	HCASE("v1-mask-65535", "v1 PCMASK of 65535 masks, all tried", 1, 0,
	      0x10000, 0xffff, true),
	HCASE("v1-mask-16", "v1 PCMASK of 16 masks, the cap", 1, 0, 0x100,
	      16, true),
	HCASE("funcs-1M", "2^20 - 1 one-row functions, then 65535 rows", 2,
	      (1U << 20) - 1, 0xffff, 0xffff, false),
};

#define NR_CASES	ARRAY_SIZE(cases)

static uint64_t *words;
static uint64_t *pcs;

static void register_case(struct hcase *c, unsigned int k)
{
	struct hs_sec s = { .version = c->version };
	uint32_t i, f;

	for (i = 0; i < c->fillers; i++)
		hs_add(&s, 16, 1, false);
	f = hs_add(&s, c->size, c->rows, c->mask);
	hs_finish(&s);
	c->err = uwalk_add_section(s.data, s.size, TEXT(k), TEXT(k),
				   TEXT(k) + s.text_len);
	/* Past the last row; for masks, the offset every mask matches. */
	c->pc = TEXT(k) + f + c->size - 1;
}

/* One sample: the walk from the case's PC up the crafted stack. */
static NOINLINE int sample(const struct hcase *c, int depth)
{
	return uwalk_regs(c->pc, (uint64_t)words, 0, pcs, depth);
}

static void run(const struct hcase *c, bool linear, int depth, int runs,
		bool cg)
{
	double ns[MAX_RUNS], t;
	char name[96];
	int r, n = 0;

	uwalk_set_linear(linear);
	for (r = 0; r < runs; r++) {
		t = thread_ns();
		n = sample(c, depth);
		ns[r] = thread_ns() - t;
	}
	if (cg) {
		snprintf(name, sizeof(name), "nmi %s %s %d", c->name,
			 linear ? "linear" : "table", depth);
		CALLGRIND_ZERO_STATS;
		sample(c, depth);
		CALLGRIND_DUMP_STATS_AT(name);
	}
	uwalk_set_linear(false);
	printf("%-14s %-7s %6d %6d %14.0f\n", c->name,
	       linear ? "linear" : "table", depth, n, median(ns, runs));
}

int main(int argc, char **argv)
{
	int depths[MAX_DEPTHS], nd = 0, runs = 3, opt, max = 0, i;
	unsigned int k;
	bool cg = false;

	while ((opt = getopt(argc, argv, "cr:d:")) != -1) {
		switch (opt) {
		case 'c':
			cg = true;
			break;
		case 'r':
			runs = atoi(optarg);
			break;
		case 'd':
			if (nd == MAX_DEPTHS)
				goto usage;
			depths[nd++] = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc || runs < 1 || runs > MAX_RUNS)
		goto usage;
	if (!nd) {
		depths[nd++] = LINEAR_DEPTH;
		depths[nd++] = 65535;
	}
	for (i = 0; i < nd; i++) {
		if (depths[i] < 1 || depths[i] > 65535)
			goto usage;
		max = depths[i] > max ? depths[i] : max;
	}
	if (uwalk_init() < 0)
		return 1;
	words = malloc((max + 1) * sizeof(*words));
	pcs = malloc((max + 1) * sizeof(*pcs));
	if (!words || !pcs)
		return 1;
	printf("# cases (registration: 0 or the errno the kernel returns):\n");
	for (k = 0; k < NR_CASES; k++) {
		register_case(&cases[k], k);
		printf("#   %-14s %-50s %d\n", cases[k].name, cases[k].what,
		       cases[k].err);
	}
	printf("# ns: median thread CPU time of %d samples\n", runs);
	printf("%-14s %-7s %6s %6s %14s\n", "case", "lookup", "depth",
	       "frames", "ns/sample");
	for (k = 0; k < NR_CASES; k++) {
		/* The stack the walk climbs: every frame the same. */
		hs_stack(words, max, cases[k].pc + 1);
		for (i = 0; i < nd; i++) {
			if (depths[i] <= LINEAR_DEPTH)
				run(&cases[k], true, depths[i], runs, cg);
			run(&cases[k], false, depths[i], runs, cg);
		}
	}
	return 0;
usage:
	fprintf(stderr, "usage: %s [-c] [-r RUNS] [-d DEPTH]...\n", argv[0]);
	return 2;
}
