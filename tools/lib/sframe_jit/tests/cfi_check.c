// SPDX-License-Identifier: GPL-2.0
/*
 * cfi_check: the cross-check of the CFI conversion against libdw, over
 * the ELF objects of directories (cfi_xcheck.c says what is compared).
 *
 *	cfi_check [-q] [-n N] [-t FILE] [PATH...]
 *
 * Each PATH is a file or a directory, walked recursively without
 * following symbolic links; each file is taken once, whatever links
 * name it.  The default is /usr/lib/x86_64-linux-gnu.  Files that are
 * not ELF, relocatable objects and objects without .eh_frame are
 * counted and skipped.  One line per object (-q: none), then the totals;
 * the first N mismatches (default 10) are printed in full.  Then the
 * conversion of FILE (default libLLVM-14.so.1, where Debian puts it) is
 * timed alone, best of three, with the memory its table takes; then as
 * sframe-agent makes it, with the .plt's stubs and the section written,
 * median of seven.
 *
 * Exit status 1 when an address mismatched, when the interpreter and the
 * libdw path converted an FDE apart, or when an object failed.
 */
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/sframe_jit.h>

#include "cfi_xcheck.h"

#define DEFAULT_DIR	"/usr/lib/x86_64-linux-gnu"
#define TIMING_RUNS	3
#define AGENT_RUNS	7
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const llvm_paths[] = {
	"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
	"/usr/lib/llvm-14/lib/libLLVM-14.so.1",
};

struct seen {
	dev_t dev;
	ino_t ino;
};

/* nftw() passes no context: the walk's state. */
static struct {
	bool quiet;
	unsigned int max_print;
	struct xc_result total;
	struct seen *seen;
	size_t nr_seen;
	size_t seen_cap;
	uint64_t not_elf;
	uint64_t unsupported;	/* relocatable, another machine */
	uint64_t no_eh_frame;
	uint64_t failed;
} w;

static bool seen_before(const struct stat *st)
{
	struct seen *s;
	size_t i;

	for (i = 0; i < w.nr_seen; i++)
		if (w.seen[i].dev == st->st_dev && w.seen[i].ino == st->st_ino)
			return true;
	if (w.nr_seen == w.seen_cap) {
		w.seen_cap = w.seen_cap ? 2 * w.seen_cap : 1024;
		s = realloc(w.seen, w.seen_cap * sizeof(*s));
		if (!s)
			return false;
		w.seen = s;
	}
	w.seen[w.nr_seen++] = (struct seen) { st->st_dev, st->st_ino };
	return false;
}

static void one_file(const char *path)
{
	unsigned int left = w.max_print > w.total.mismatches ?
			    w.max_print - w.total.mismatches : 0;
	struct xc_result res;
	int err;

	err = xc_object(path, &res, stdout, left);
	switch (err) {
	case 0:
		if (!w.quiet || res.mismatches || res.fde_diffs)
			xc_print(stdout, path, &res);
		xc_add(&w.total, &res);
		break;
	case -ENOEXEC:
		w.not_elf++;
		break;
	case -EOPNOTSUPP:
		w.unsupported++;
		break;
	case -ENOENT:
		w.no_eh_frame++;
		break;
	default:
		printf("FAIL %s: %s\n", path, strerror(-err));
		w.failed++;
	}
}

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode) && !seen_before(st))
		one_file(path);
	return 0;
}

static double best_ms(const char *path, struct xc_result *res)
{
	double best = -1;
	int i;

	for (i = 0; i < TIMING_RUNS; i++) {
		if (xc_object(path, res, NULL, 0))
			return -1;
		if (best < 0 || res->convert_ns / 1e6 < best)
			best = res->convert_ns / 1e6;
	}
	return best;
}

static int ms_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The same as sframe-agent converts a file it has no table of: the
 * median of AGENT_RUNS, with the best in *@best.
 */
static double agent_median_ms(const char *path, double *best)
{
	double ms[AGENT_RUNS];
	int64_t ns;
	int i;

	for (i = 0; i < AGENT_RUNS; i++) {
		ns = xc_agent_ns(path);
		if (ns < 0)
			return -1;
		ms[i] = ns / 1e6;
	}
	qsort(ms, AGENT_RUNS, sizeof(ms[0]), ms_cmp);
	*best = ms[0];
	return ms[AGENT_RUNS / 2];
}

/* The conversion of one large object, alone. */
static void time_one(const char *path)
{
	struct xc_result res;
	double ms, best;
	size_t i;

	if (!path) {
		for (i = 0; !path && i < ARRAY_SIZE(llvm_paths); i++)
			if (!access(llvm_paths[i], R_OK))
				path = llvm_paths[i];
		if (!path) {
			printf("time: no libLLVM-14.so.1 (apt-get install llvm-14)\n");
			return;
		}
	}
	ms = best_ms(path, &res);
	if (ms < 0) {
		printf("time: cannot convert %s\n", path);
		w.failed++;
		return;
	}
	printf("time: %s: convert %.1f ms (best of %d), %llu functions, ",
	       path, ms, TIMING_RUNS, (unsigned long long)res.nr_funcs);
	printf("%llu rows, row bytes %llu, registry bytes %llu ",
	       (unsigned long long)res.stats.nr_rows,
	       (unsigned long long)res.stats.row_bytes,
	       (unsigned long long)(res.nr_funcs *
				    sizeof(struct sframe_jit_fde) +
				    res.stats.nr_rows *
				    sizeof(struct sframe_jit_fre)));
	printf("(%zu per descriptor, %zu per row)\n",
	       sizeof(struct sframe_jit_fde), sizeof(struct sframe_jit_fre));
	ms = agent_median_ms(path, &best);
	if (ms >= 0)
		printf("time: %s: as sframe-agent's first conversion (the PLT's stubs too, then the SFrame section written) %.1f ms (median of %d, best %.1f)\n",
		       path, ms, AGENT_RUNS, best);
}

int main(int argc, char **argv)
{
	const char *time_path = NULL;
	int opt, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	w.max_print = 10;
	w.total.stats.sz = sizeof(w.total.stats);
	while ((opt = getopt(argc, argv, "qn:t:")) != -1) {
		switch (opt) {
		case 'q':
			w.quiet = true;
			break;
		case 'n':
			w.max_print = strtoul(optarg, NULL, 0);
			break;
		case 't':
			time_path = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-q] [-n N] [-t FILE] [PATH...]\n",
				argv[0]);
			return 2;
		}
	}
	if (optind == argc) {
		nftw(DEFAULT_DIR, visit, 32, FTW_PHYS);
	} else {
		for (i = optind; i < argc; i++)
			nftw(argv[i], visit, 32, FTW_PHYS);
	}
	printf("skipped: not ELF %llu, relocatable or not x86-64 %llu, ",
	       (unsigned long long)w.not_elf,
	       (unsigned long long)w.unsupported);
	printf("no .eh_frame %llu; failed %llu\n",
	       (unsigned long long)w.no_eh_frame,
	       (unsigned long long)w.failed);
	xc_print(stdout, "total", &w.total);
	time_one(time_path);
	free(w.seen);
	return w.total.mismatches || w.total.fde_diffs || w.failed ? 1 : 0;
}
