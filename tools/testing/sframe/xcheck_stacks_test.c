// SPDX-License-Identifier: GPL-2.0
/*
 * The rule of the stack cross-check (xcheck_stacks.c) on planted walks:
 * ours wrong against references that agree must fail, a reference wrong
 * where ours and the other one agree must pass and be counted.
 *
 * Each case is a test; the last line is "N passed, N failed".
 */
#include <stdio.h>

#include "xcheck_stacks.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The interrupted PC, two callers in the program, main's caller in libc. */
#define PC	0x401100
#define F1	0x401234
#define F2	0x401345
#define LIBC	0x7f00000292ca
/* What a walker that went wrong says instead. */
#define BAD	0x7ffc00001000
#define BAD2	0x7ffc00002000

struct xc_case {
	const char *name;
	uint64_t pcs[XC_WALKERS][5];
	int n[XC_WALKERS];
	int want;
	/* Expected verdict. */
	bool ok;
	int frames;
	int bad;
	int lu_bad;
	int bt_bad;
};

#define STACK	{ PC, F1, F2, LIBC }

static const struct xc_case cases[] = {
	{
		.name = "all three agree: pass",
		.pcs = { STACK, STACK, STACK },
		.n = { 4, 4, 4 }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "ours wrong where both references agree: fail",
		.pcs = { { PC, F1, BAD, LIBC }, STACK, STACK },
		.n = { 4, 4, 4 }, .want = 4,
		.ok = false, .frames = 2, .bad = 2, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "ours ends where both references go on: fail",
		.pcs = { { PC, F1 }, STACK, STACK },
		.n = { 2, 4, 4 }, .want = 3,
		.ok = false, .frames = 2, .bad = 2, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "ours returns 0 where both references agree: fail",
		.pcs = { { PC, 0, F2, LIBC }, STACK, STACK },
		.n = { 4, 4, 4 }, .want = 4,
		.ok = false, .frames = 1, .bad = 1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		/* make check, 2026-12-01: stacks work_cxx. */
		.name = "libunwind returns 0 for libc's frame: pass, libunwind counted",
		.pcs = { { PC, LIBC }, { PC, 0 }, { PC, LIBC } },
		.n = { 2, 2, 2 }, .want = 2,
		.ok = true, .frames = 2, .bad = -1, .lu_bad = 1, .bt_bad = -1,
	},
	{
		.name = "libunwind ends early: pass, libunwind counted",
		.pcs = { STACK, { PC, F1 }, STACK },
		.n = { 4, 2, 4 }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = 2, .bt_bad = -1,
	},
	{
		.name = "libunwind goes astray, then on with garbage: pass, libunwind counted once",
		.pcs = { STACK, { PC, BAD, BAD2, LIBC }, STACK },
		.n = { 4, 4, 4 }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = 1, .bt_bad = -1,
	},
	{
		.name = "libunwind fails to start: pass, libunwind counted",
		.pcs = { STACK, { 0 }, STACK },
		.n = { 4, 0, 4 }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = 0, .bt_bad = -1,
	},
	{
		.name = "backtrace() wrong: pass, backtrace() counted",
		.pcs = { STACK, STACK, { PC, F1, BAD, BAD2 } },
		.n = { 4, 4, 4 }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = -1, .bt_bad = 2,
	},
	{
		.name = "backtrace() misses the interrupted PC: pass, backtrace() counted",
		.pcs = { STACK, STACK, { 0 } },
		.n = { 4, 4, 0 }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = -1, .bt_bad = 0,
	},
	{
		.name = "libunwind wrong, ours differs from backtrace() later: fail",
		.pcs = { { PC, F1, BAD, LIBC }, { PC, BAD, BAD2 }, STACK },
		.n = { 4, 3, 4 }, .want = 4,
		.ok = false, .frames = 2, .bad = 2, .lu_bad = 1, .bt_bad = -1,
	},
	{
		.name = "the references disagree and ours is neither: fail",
		.pcs = { { PC, BAD2 }, { PC, F1 }, { PC, BAD } },
		.n = { 2, 2, 2 }, .want = 2,
		.ok = false, .frames = 1, .bad = 1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "libunwind ended, ours differs from backtrace(): fail",
		.pcs = { { PC, BAD }, { PC }, { PC, F1 } },
		.n = { 2, 1, 2 }, .want = 2,
		.ok = false, .frames = 1, .bad = 1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "backtrace() not asked, ours agrees with libunwind: pass, nothing counted",
		.pcs = { STACK, STACK },
		.n = { 4, 4, XC_NOT_RUN }, .want = 4,
		.ok = true, .frames = 4, .bad = -1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "backtrace() not asked, ours differs from libunwind: fail",
		.pcs = { { PC, F1, BAD }, STACK },
		.n = { 3, 4, XC_NOT_RUN }, .want = 3,
		.ok = false, .frames = 2, .bad = 2, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "both references end at _start, ours goes on: pass",
		.pcs = { { PC, F1, F2, BAD }, { PC, F1, F2 }, { PC, F1, F2 } },
		.n = { 4, 3, 3 }, .want = 4,
		.ok = true, .frames = 3, .bad = -1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "no reference walks: nothing compared, pass",
		.pcs = { STACK },
		.n = { 4, 0, 0 }, .want = 4,
		.ok = true, .frames = 0, .bad = -1, .lu_bad = -1, .bt_bad = -1,
	},
	{
		.name = "only the frames asked for are compared",
		.pcs = { { PC, F1, BAD }, STACK, STACK },
		.n = { 3, 4, 4 }, .want = 2,
		.ok = true, .frames = 2, .bad = -1, .lu_bad = -1, .bt_bad = -1,
	},
};

static bool xc_run(const struct xc_case *c)
{
	struct xc_walk w[XC_WALKERS];
	struct xc_verdict v;
	bool ok;
	int r;

	for (r = 0; r < XC_WALKERS; r++)
		w[r] = (struct xc_walk){ .pcs = c->pcs[r], .n = c->n[r] };
	ok = xc_stacks_compare(w, c->want, &v);
	if (ok == c->ok && v.frames == c->frames && v.bad == c->bad &&
	    v.ref_bad[XC_OURS] == -1 && v.ref_bad[XC_LIBUNWIND] == c->lu_bad &&
	    v.ref_bad[XC_BACKTRACE] == c->bt_bad) {
		printf("ok - %s\n", c->name);
		return true;
	}
	printf("FAIL - %s\n", c->name);
	printf("    got:    %s, %d frames, bad at %d, libunwind wrong at %d, backtrace() at %d\n",
	       ok ? "pass" : "fail", v.frames, v.bad,
	       v.ref_bad[XC_LIBUNWIND], v.ref_bad[XC_BACKTRACE]);
	printf("    wanted: %s, %d frames, bad at %d, libunwind wrong at %d, backtrace() at %d\n",
	       c->ok ? "pass" : "fail", c->frames, c->bad, c->lu_bad,
	       c->bt_bad);
	return false;
}

int main(void)
{
	int i, pass = 0, fail = 0;

	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		if (xc_run(&cases[i]))
			pass++;
		else
			fail++;
	}
	printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
