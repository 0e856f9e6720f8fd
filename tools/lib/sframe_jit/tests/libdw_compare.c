// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's user callchain against libdw, sample by sample: run a
 * command with one task-clock event whose samples carry both the chain
 * the kernel walked (with the SFrame tables the process registered, or
 * with frame pointers under --fp) and a copy of the user registers and
 * stack, then unwind each copy with libdw and compare the two frame by
 * frame.  mk/layers/66-libdw_compare runs it in the test kernel.
 *
 *	libdw_compare [--fp] [--period NS] [--show N] NAME -- CMD [ARGS...]
 *
 * A sample is complete for an unwinder when its chain reaches main: a
 * frame in the executable right below one in libc.so.6 (main called by
 * __libc_start_call_main).  Wherever libdw's is complete, each of its
 * frames must be the kernel's frame at the same depth, PCs compared
 * exactly: both give the sample's IP first and plain return addresses
 * after it (libdw's dwfl_frame_pc() does not subtract one; it only says
 * the caller's PC is a return address).  The kernel's chain may go on
 * past libdw's last frame, never stop short of it.  Where the chains
 * part at a frame whose code sframe-run's conversion leaves out (its
 * .eh_frame FDE is not expressible, tests/dwcmp_cover.c), the kernel
 * walked it with frame pointers by design: such samples are counted
 * apart ("uncovered") from mismatches of the SFrame walk.
 *
 * Prints "# " lines for people (--show N: the first N disagreements of
 * each kind in full, 3 by default) and one line for scripts:
 *	libdw_compare NAME mode=sframe|fp samples=N lost=N libdw_complete=N
 *	    agree=N uncovered=N mismatch=N kernel_complete=N
 * where agree, uncovered and mismatch split the libdw-complete samples.
 * Exits 0 once the command ran and exited 0, whatever the counts.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "dwcmp.h"

/* Why libdw's unwinds stopped short of main: this many reasons kept. */
#define MAX_REASONS	8

/* Mismatches printed in full (--show), to debug from the test's log. */
static unsigned long show = 3;

struct counts {
	size_t libdw_complete;
	size_t kernel_complete;
	size_t agree;
	size_t mismatch;
	size_t uncovered;	/* parted in code left to frame pointers */
	size_t outermost;	/* libdw ended at a frame with no caller */
	size_t kernel_deeper;	/* complete, and the kernel went on */
	size_t prefix_mismatch;	/* libdw stopped early, and disagreed */
	char *reason[MAX_REASONS];
	size_t nr_reason[MAX_REASONS + 1];	/* the last: any other */
};

/* The executable: the first file mapped after the exec. */
static const char *exe_path(const struct dwcmp_run *run)
{
	return run->nr_maps ? run->maps[0].path : "";
}

static const struct dwcmp_map *map_of(const struct dwcmp_run *run,
				      uint64_t pc)
{
	size_t i;

	for (i = run->nr_maps; i-- > 0;)
		if (pc >= run->maps[i].start &&
		    pc - run->maps[i].start < run->maps[i].len)
			return &run->maps[i];
	return NULL;
}

static bool is_libc(const struct dwcmp_map *m)
{
	const char *base;

	if (!m)
		return false;
	base = strrchr(m->path, '/');
	return base && !strncmp(base + 1, "libc.so.", 8);
}

static bool reaches_main(const struct dwcmp_run *run, const uint64_t *pcs,
			 unsigned int nr)
{
	const struct dwcmp_map *m, *caller;
	unsigned int i;

	for (i = 1; i < nr; i++) {
		m = map_of(run, pcs[i - 1]);
		caller = map_of(run, pcs[i]);
		if (m && !strcmp(m->path, exe_path(run)) && is_libc(caller))
			return true;
	}
	return false;
}

/* The first depth where the chains differ, or -1 if the kernel's holds libdw's. */
static int first_difference(const struct dwcmp_sample *s, const uint64_t *pcs,
			    unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (i >= s->nr_chain || s->chain[i] != pcs[i])
			return (int)i;
	return -1;
}

static void print_pc(const struct dwcmp_run *run, const char *who, uint64_t pc)
{
	const struct dwcmp_map *m = map_of(run, pc);

	printf("#   %-6s %#llx", who, (unsigned long long)pc);
	if (m)
		printf(" %s+%#llx", m->path,
		       (unsigned long long)(pc - m->start + m->pgoff));
	printf("\n");
}

/* Where they part, with the frames both still agree on above it. */
static void show_mismatch(const struct dwcmp_run *run, const char *what,
			  size_t idx, const struct dwcmp_sample *s,
			  const uint64_t *pcs, unsigned int nr, int depth)
{
	int i;

	printf("# %s in sample %zu at depth %d (kernel %u frames, libdw %u):\n",
	       what, idx, depth, s->nr_chain, nr);
	for (i = 0; i < depth; i++)
		print_pc(run, "both", pcs[i]);
	if ((unsigned int)depth < s->nr_chain)
		print_pc(run, "kernel", s->chain[depth]);
	else
		printf("#   kernel (none)\n");
	print_pc(run, "libdw", pcs[depth]);
}

/*
 * Whether sframe-run's table describes the frame at @pc, the one whose
 * caller the chains disagree on; a return address (@ret) is looked up
 * less one, in the call.
 */
static bool table_covers(const struct dwcmp_run *run, uint64_t pc, bool ret)
{
	uint64_t addr = ret ? pc - 1 : pc, bias;
	const struct dwcmp_map *m = map_of(run, addr);

	return m && dwcmp_load_bias(m->path, m->start, m->pgoff, &bias) &&
	       dwcmp_covered(m, bias, addr);
}

static void count_reason(struct counts *c, const char *why)
{
	unsigned int i;

	for (i = 0; i < MAX_REASONS && c->reason[i]; i++)
		if (!strcmp(c->reason[i], why))
			break;
	if (i < MAX_REASONS && !c->reason[i])
		c->reason[i] = strdup(why);
	if (i < MAX_REASONS && !c->reason[i])
		i = MAX_REASONS;
	c->nr_reason[i]++;
}

static const char *stop_reason(int end)
{
	if (end < 0)
		return dwcmp_unwinder_error();
	return end ? "more frames than the kernel keeps" :
		     "no caller (outermost frame) before main";
}

static void compare_one(const struct dwcmp_run *run, size_t idx,
			struct dwcmp_unwinder *uw, struct counts *c)
{
	const struct dwcmp_sample *s = &run->samples[idx];
	uint64_t pcs[DWCMP_MAX_FRAMES];
	const char *why;
	unsigned int nr;
	int end, diff;

	end = dwcmp_unwind(uw, s, pcs, &nr);
	why = stop_reason(end);
	if (end == 0)
		c->outermost++;
	if (reaches_main(run, s->chain, s->nr_chain))
		c->kernel_complete++;
	diff = first_difference(s, pcs, nr);
	if (!reaches_main(run, pcs, nr)) {
		count_reason(c, why);
		if (diff >= 0 && c->prefix_mismatch++ < show)
			show_mismatch(run, "incomplete libdw stack differs",
				      idx, s, pcs, nr, diff);
		return;
	}
	c->libdw_complete++;
	if (diff < 0) {
		c->agree++;
		if (s->nr_chain > nr)
			c->kernel_deeper++;
		return;
	}
	if (diff > 0 && !table_covers(run, pcs[diff - 1], diff > 1)) {
		if (c->uncovered++ < show)
			show_mismatch(run, "parted in code left to frame pointers",
				      idx, s, pcs, nr, diff);
		return;
	}
	if (c->mismatch++ < show)
		show_mismatch(run, "mismatch", idx, s, pcs, nr, diff);
}

static unsigned int pct(size_t part, size_t whole)
{
	return whole ? (unsigned int)(100 * part / whole) : 0;
}

static void report(const char *name, bool sframe,
		   const struct dwcmp_run *run, const struct counts *c)
{
	const char *mode = sframe ? "sframe" : "fp";
	size_t n = run->nr_samples;
	unsigned int i;

	printf("# %s: %zu samples (%llu lost) of %s\n", name, n,
	       (unsigned long long)run->lost, exe_path(run));
	printf("# %s: complete (reach main): libdw %zu (%u%%), kernel %s %zu (%u%%)\n",
	       name, c->libdw_complete, pct(c->libdw_complete, n), mode,
	       c->kernel_complete, pct(c->kernel_complete, n));
	printf("# %s: of the libdw-complete, %zu agree frame by frame with the kernel's, %zu part where sframe-run left a frame to frame pointers, %zu mismatch; %zu have kernel frames past libdw's last\n",
	       name, c->agree, c->uncovered, c->mismatch, c->kernel_deeper);
	printf("# %s: libdw reached the outermost frame in %zu; of the %zu incomplete, %zu disagree before libdw stops\n",
	       name, c->outermost, n - c->libdw_complete, c->prefix_mismatch);
	for (i = 0; i <= MAX_REASONS; i++)
		if (c->nr_reason[i])
			printf("# %s: libdw stopped short of main in %zu: %s\n",
			       name, c->nr_reason[i],
			       i < MAX_REASONS ? c->reason[i] : "other reasons");
	printf("libdw_compare %s mode=%s samples=%zu lost=%llu libdw_complete=%zu agree=%zu uncovered=%zu mismatch=%zu kernel_complete=%zu\n",
	       name, mode, n, (unsigned long long)run->lost,
	       c->libdw_complete, c->agree, c->uncovered, c->mismatch,
	       c->kernel_complete);
}

static int print_usage(void)
{
	fprintf(stderr, "usage: libdw_compare [--fp] [--period NS] [--show N] NAME -- CMD [ARGS...]\n");
	return 2;
}

int main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "fp", no_argument, NULL, 'f' },
		{ "period", required_argument, NULL, 'p' },
		{ "show", required_argument, NULL, 's' },
		{ }
	};
	unsigned long long period = 1000000;
	struct dwcmp_unwinder *uw;
	struct counts c = { };
	struct dwcmp_run run;
	bool sframe = true;
	const char *name;
	char *end;
	size_t i;
	int o;

	while ((o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		if (o == 'f') {
			sframe = false;
		} else if (o == 'p') {
			period = strtoull(optarg, &end, 0);
			if (*end || !period) {
				fprintf(stderr, "libdw_compare: bad --period '%s'\n",
					optarg);
				return 2;
			}
		} else if (o == 's') {
			show = strtoul(optarg, &end, 0);
			if (*end) {
				fprintf(stderr, "libdw_compare: bad --show '%s'\n",
					optarg);
				return 2;
			}
		} else {
			return print_usage();
		}
	}
	if (argc - optind < 3 || strcmp(argv[optind + 1], "--"))
		return print_usage();
	name = argv[optind];
	if (dwcmp_record(&run, argv + optind + 2, sframe, period))
		return 1;
	if (!WIFEXITED(run.status) || WEXITSTATUS(run.status)) {
		fprintf(stderr, "libdw_compare: %s did not exit 0 (status %#x)\n",
			argv[optind + 2], run.status);
		return 1;
	}
	uw = dwcmp_unwinder_new(&run);
	if (!uw) {
		fprintf(stderr, "libdw_compare: libdw over %zu mappings (%zu samples, %u execs): %s\n",
			run.nr_maps, run.nr_samples, run.execs,
			dwcmp_unwinder_error());
		return 1;
	}
	for (i = 0; i < run.nr_samples; i++)
		compare_one(&run, i, uw, &c);
	report(name, sframe, &run, &c);
	dwcmp_unwinder_free(uw);
	dwcmp_cover_free();
	dwcmp_run_reset(&run);
	for (i = 0; i < MAX_REASONS; i++)
		free(c.reason[i]);
	return 0;
}
