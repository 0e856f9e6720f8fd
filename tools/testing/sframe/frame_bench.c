// SPDX-License-Identifier: GPL-2.0
/*
 * Cost per frame of a user stack walk, on the same stacks, side by side:
 *
 *  fp		a frame-pointer walk, the floor (stacks with frame pointers);
 *  ours	the kernel's SFrame walker, kernel/unwind/sframe_user.c and
 *		the decoders built unchanged (uwalk.h), over the sections'
 *		converted tables, as the kernel registers them;
 *  ours-lin	the same, with each lookup in the section itself, which
 *		walks the function's rows, as the kernel did before it
 *		converted sections;
 *  libsframe	the same walk with binutils' libsframe for each lookup
 *		(sframe_find_fre() on the program's .sframe);
 *  libgcc	libgcc_s's _Unwind_Backtrace() over .eh_frame;
 *  lu-step	libunwind: unw_getcontext(), unw_init_local(), unw_step();
 *  lu-bt	libunwind's unw_backtrace(), its cached fast path.
 *
 *	frame_bench [-r RUNS] [-f FRAMES] DEPTH...
 *
 * For each DEPTH, a recursion DEPTH deep is built with frame pointers
 * and without (frame_stack.c); at its bottom each walker walks the same
 * DEPTH + 3 frames, over and over, for about FRAMES frames per run.
 * Before timing, every walker must have found the recursion's return
 * address DEPTH times: the same stack.  Times are the thread's CPU time,
 * so that time spent descheduled on a shared machine does not count;
 * each cell is the median of RUNS runs, walkers interleaved within a
 * run.  Printed: ns per frame and, in parentheses, the ratio to ours.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sframe-api.h>

#include "bench_time.h"
#include "frame_stack.h"
#include "uwalk.h"

#define NOINLINE	__attribute__((noinline))
#define MAX_FRAMES	1024
#define MAX_RUNS	101
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

typedef int (*walker)(uint64_t *pcs, int max);

/* The frame-pointer walk: each frame record is (caller's fp, RA). */
static NOINLINE int walk_fp(uint64_t *pcs, int max)
{
	const uint64_t *fp = __builtin_frame_address(0);
	int n = 0;

	while (n < max && fp) {
		pcs[n++] = fp[1];
		fp = (const uint64_t *)fp[0];
	}
	return n;
}

/* The program's .sframe, decoded by libsframe. */
static struct {
	sframe_decoder_ctx *ctx;
	uint64_t addr;
	int8_t ra_off;
	int8_t fp_off;
} ls;

static int ls_find(struct dl_phdr_info *info, size_t size, void *data)
{
	int i, err = 0;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != 0x6474e554)	/* PT_GNU_SFRAME */
			continue;
		ls.addr = info->dlpi_addr + ph->p_vaddr;
		ls.ctx = sframe_decode((const char *)ls.addr, ph->p_memsz,
				       &err);
		ls.ra_off = sframe_decoder_get_fixed_ra_offset(ls.ctx);
		ls.fp_off = sframe_decoder_get_fixed_fp_offset(ls.ctx);
	}
	return 1;	/* the program is the first object */
}

/* One frame by libsframe's row; false where it has none. */
static bool ls_step(uint64_t *pc, uint64_t *sp, uint64_t *fp, bool first)
{
	int64_t rel = (int64_t)(*pc - !first - ls.addr);
	sframe_frame_row_entry fre;
	uint64_t cfa;
	int32_t off;
	int err = 0;

	if (rel < INT32_MIN || rel > INT32_MAX ||
	    sframe_find_fre(ls.ctx, (int32_t)rel, &fre))
		return false;
	cfa = sframe_fre_get_base_reg_id(&fre, &err) == SFRAME_BASE_REG_SP ?
	      *sp : *fp;
	cfa += sframe_fre_get_cfa_offset(ls.ctx, &fre, &err);
	off = sframe_fre_get_fp_offset(ls.ctx, &fre, &err);
	if (!err)
		*fp = *(const uint64_t *)(cfa + off);
	else if (ls.fp_off)
		*fp = *(const uint64_t *)(cfa + ls.fp_off);
	*pc = *(const uint64_t *)(cfa + ls.ra_off);
	*sp = cfa;
	return true;
}

static NOINLINE int walk_libsframe(uint64_t *pcs, int max)
{
	uint64_t pc, sp, fp;
	int n = 0;

	asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=r"(pc), "=r"(sp), "=r"(fp));
	while (n < max) {
		pcs[n++] = pc;
		if (!ls_step(&pc, &sp, &fp, n == 1))
			break;
	}
	/* No tail call: the walk reads this frame. */
	asm volatile("" : "+r"(n));
	return n;
}

/*
 * libunwind exports an _Unwind_Backtrace() and an _Unwind_GetIP() of its
 * own: libgcc's are taken from libgcc_s by name.
 */
static typeof(_Unwind_Backtrace) *gcc_backtrace;
static typeof(_Unwind_GetIP) *gcc_getip;

struct gcc_walk {
	uint64_t *pcs;
	int n;
	int max;
};

static _Unwind_Reason_Code gcc_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct gcc_walk *w = arg;

	w->pcs[w->n++] = gcc_getip(ctx);
	return w->n < w->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

static NOINLINE int walk_libgcc(uint64_t *pcs, int max)
{
	struct gcc_walk w = { .pcs = pcs, .max = max };

	gcc_backtrace(gcc_frame, &w);
	return w.n;
}

/* The same walk as uwalk_here(), from here, looking rows up linearly. */
static NOINLINE int walk_ours_linear(uint64_t *pcs, int max)
{
	uint64_t pc, sp, fp;
	int n;

	asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=r"(pc), "=r"(sp), "=r"(fp));
	uwalk_set_linear(true);
	n = uwalk_regs(pc, sp, fp, pcs, max);
	uwalk_set_linear(false);
	/* No tail call: the walk reads this frame. */
	asm volatile("" : "+r"(n));
	return n;
}

static NOINLINE int walk_lu_step(uint64_t *pcs, int max)
{
	unw_context_t uc;
	unw_cursor_t c;
	unw_word_t ip;
	int n = 0;

	unw_getcontext(&uc);
	if (unw_init_local(&c, &uc) < 0)
		return 0;
	while (n < max) {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		pcs[n++] = ip;
		if (unw_step(&c) <= 0)
			break;
	}
	return n;
}

static NOINLINE int walk_lu_bt(uint64_t *pcs, int max)
{
	return unw_backtrace((void **)pcs, max);
}

static const struct {
	const char *name;
	walker fn;
	bool needs_fp;
} walkers[] = {
	{ "fp", walk_fp, true },
	/* Called directly, as the others: the walk starts in it. */
	{ "ours", uwalk_here, false },
	{ "ours-lin", walk_ours_linear, false },
	{ "libsframe", walk_libsframe, false },
	{ "libgcc", walk_libgcc, false },
	{ "lu-step", walk_lu_step, false },
	{ "lu-bt", walk_lu_bt, false },
};

#define NWALKERS	ARRAY_SIZE(walkers)
#define OURS		1

struct cell {
	bool fp_stack;
	int frames;		/* walked per walk */
	long walks;		/* per timing */
	void *ra;		/* the recursion's return address */
	int depth;
	int runs;
	double ns[NWALKERS][MAX_RUNS];
	bool failed;
};

/*
 * Same stack: every walker sees the recursion's return address DEPTH
 * times.  Inlined into measure(), to walk from where the timed walks do.
 */
static __always_inline bool check_walkers(struct cell *c)
{
	uint64_t pcs[MAX_FRAMES];
	unsigned int w;
	int n, i, seen;

	for (w = 0; w < NWALKERS; w++) {
		if (walkers[w].needs_fp && !c->fp_stack)
			continue;
		n = walkers[w].fn(pcs, c->frames);
		for (i = 0, seen = 0; i < n; i++)
			seen += pcs[i] == (uint64_t)c->ra;
		if (n != c->frames || seen != c->depth) {
			fprintf(stderr,
				"frame_bench: %s on the %s stack: %d frames, the recursion %d times, want %d and %d\n",
				walkers[w].name, c->fp_stack ? "fp" : "nofp",
				n, seen, c->frames, c->depth);
			return false;
		}
	}
	return true;
}

/* At the bottom of the recursion: time each walker, RUNS times. */
static long measure(void *arg)
{
	struct cell *c = arg;
	uint64_t pcs[MAX_FRAMES];
	unsigned int w, k;
	double t;
	long i;
	int r;

	c->ra = c->fp_stack ? frame_stack_fp_ra : frame_stack_nofp_ra;
	if (!check_walkers(c)) {
		c->failed = true;
		return 0;
	}
	for (r = 0; r < c->runs; r++) {
		for (k = 0; k < NWALKERS; k++) {
			/* Rotate the order from run to run. */
			w = (k + r) % NWALKERS;
			if (walkers[w].needs_fp && !c->fp_stack)
				continue;
			t = thread_ns();
			for (i = 0; i < c->walks; i++)
				walkers[w].fn(pcs, c->frames);
			c->ns[w][r] = (thread_ns() - t) /
				      ((double)c->walks * c->frames);
		}
	}
	return 0;
}

static void print_cell(struct cell *c)
{
	double med[NWALKERS];
	unsigned int w;

	for (w = 0; w < NWALKERS; w++)
		med[w] = median(c->ns[w], c->runs);
	printf("%-5s %6d", c->fp_stack ? "fp" : "nofp", c->frames);
	for (w = 0; w < NWALKERS; w++) {
		if (walkers[w].needs_fp && !c->fp_stack)
			printf("  %16s", "-");
		else
			printf("  %7.1f (x%5.2f)", med[w], med[w] / med[OURS]);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	long frames_per_run = 200000;
	int runs = 11, opt, i, depth;
	unsigned int w;
	bool failed = false;
	void *gcc;

	while ((opt = getopt(argc, argv, "r:f:")) != -1) {
		switch (opt) {
		case 'r':
			runs = atoi(optarg);
			break;
		case 'f':
			frames_per_run = atol(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind == argc || runs < 1 || runs > MAX_RUNS ||
	    frames_per_run < 1)
		goto usage;
	if (uwalk_init() <= 0) {
		fprintf(stderr, "frame_bench: no .sframe section loaded\n");
		return 1;
	}
	dl_iterate_phdr(ls_find, NULL);
	gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	gcc_backtrace = gcc ? dlsym(gcc, "_Unwind_Backtrace") : NULL;
	gcc_getip = gcc ? dlsym(gcc, "_Unwind_GetIP") : NULL;
	if (!gcc_backtrace || !gcc_getip) {
		fprintf(stderr, "frame_bench: no libgcc_s.so.1\n");
		return 1;
	}
	if (!ls.ctx) {
		fprintf(stderr, "frame_bench: libsframe cannot decode .sframe\n");
		return 1;
	}
	printf("# ns per frame (ratio to ours), median of %d runs of about %ld frames\n",
	       runs, frames_per_run);
	printf("%-5s %6s", "stack", "frames");
	for (w = 0; w < NWALKERS; w++)
		printf("  %16s", walkers[w].name);
	printf("\n");
	for (i = optind; i < argc; i++) {
		depth = atoi(argv[i]);
		if (depth < 1 || depth + 3 > MAX_FRAMES)
			goto usage;
		for (int fp = 1; fp >= 0; fp--) {
			struct cell *c = calloc(1, sizeof(*c));

			c->fp_stack = fp;
			c->depth = depth;
			c->frames = depth + 3;
			c->runs = runs;
			c->walks = frames_per_run / c->frames + 1;
			if (fp)
				frame_stack_fp(depth, measure, c);
			else
				frame_stack_nofp(depth, measure, c);
			if (c->failed)
				failed = true;
			else
				print_cell(c);
			free(c);
		}
	}
	return failed;
usage:
	fprintf(stderr, "usage: %s [-r RUNS] [-f FRAMES] DEPTH...\n", argv[0]);
	return 2;
}
