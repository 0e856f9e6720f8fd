// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What sframe-run costs, medians of REPS runs:
 *
 *   sframe_run_bench tables [--reps N] FILE...
 *	for each object, the CPU time of converting its CFI (row sharing
 *	included) and of creating and filling a registry sized exactly,
 *	of compact records as sframe-run makes it (in private memory,
 *	laid out as the kernel's: the kernel's own share is the pages'
 *	allocation), the registry's bytes, per function too, and the
 *	bytes and time of the version 1 registry of the same shared rows,
 *	and the bytes of one without shared rows;
 *
 *   sframe_run_bench startup [--reps N] -- CMD [ARGS...]
 *	the wall-clock time and the CPU time (user and system, of CMD and
 *	its threads, as wait4() reports them) of running CMD to its exit;
 *
 *   sframe_run_bench pair [--reps N] -- CMD_A [ARGS...] --vs CMD_B [ARGS...]
 *	the same of two commands run in turn, A B A B ..., and the median
 *	of the ratios B/A pair by pair, which holds when the machine's speed
 *	drifts (a loaded host, software emulation);
 *
 *   sframe_run_bench sizes FILE...
 *	what each object's converted table would take in the kernel as the
 *	compact JIT registry sframe-run makes, as the version 1 one it
 *	falls back to, and as an SFrame version 2 section
 *	made of the same rows and registered with sframe_register(2) (the
 *	table the kernel decodes it into, which is what it keeps: 20 bytes
 *	per function, 8 per row and 16 per distinct rule, plus its header
 *	and the copy's, which "elf_total" rounds to pages with the table:
 *	Documentation/userspace-api/sframe.rst, "The table of an ELF
 *	section").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sframe_jit_internal.h"

#define MAX_REPS	101

static double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *map_file(const char *path, size_t *size)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*size = st.st_size;
	return p;
}

struct table_run {
	double convert_ns;
	double register_ns;
	double v1_register_ns;
	size_t map_size;
	size_t v1_size;
	size_t unshared_size;
	struct sframe_jit_cfi_stats st;
};

/* The bytes of a registry of @fdes descriptors and @fres rows. */
static size_t registry_size(uint32_t fdes, uint32_t fres, uint32_t flags)
{
	struct sframe_jit *reg;
	size_t size;
	uint64_t base = 1ULL << 40;

	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = fdes,
			.fre_capacity = fres,
			.flags = flags | SFRAME_JIT_F_NO_KERNEL);
	if (sframe_jit_create(base, base + (1ULL << 32), &opts, &reg))
		return 0;
	size = reg->l.map_size;
	sframe_jit_destroy(reg);
	return size;
}

/* Create a registry of @opts over the table's span and import it. */
static int table_fill(const struct sframe_jit_cfi *cfi,
		      const struct sframe_jit_opts *opts, size_t *map_size)
{
	uint32_t n = sframe_jit_cfi_nr_funcs(cfi);
	struct sframe_jit_func lo, hi;
	struct sframe_jit *reg;
	int ret;

	sframe_jit_cfi_func(cfi, 0, &lo, NULL);
	sframe_jit_cfi_func(cfi, n - 1, &hi, NULL);
	ret = sframe_jit_create(lo.start, hi.start + hi.size, opts, &reg);
	if (ret)
		return ret;
	ret = sframe_jit_import_cfi(reg, cfi, 0);
	*map_size = reg->l.map_size;
	sframe_jit_destroy(reg);
	return ret < 0 ? ret : 0;
}

/* What sframe-run does: a compact registry sized by the table. */
static int table_compact(struct sframe_jit_cfi *cfi, size_t *map_size)
{
	int ret;

	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.flags = SFRAME_JIT_F_NO_KERNEL | SFRAME_JIT_F_NO_GROW |
				 SFRAME_JIT_F_SHARE_ROWS |
				 SFRAME_JIT_F_COMPACT_RECORDS);
	ret = sframe_jit_cfi_compact_caps(cfi, &opts);
	if (ret)
		return ret;
	return table_fill(cfi, &opts, map_size);
}

static int table_v1(const struct sframe_jit_cfi *cfi,
		    const struct sframe_jit_cfi_stats *st, size_t *map_size)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = st->nr_converted,
			.fre_capacity = st->nr_shared_rows,
			.flags = SFRAME_JIT_F_NO_KERNEL | SFRAME_JIT_F_NO_GROW |
				 SFRAME_JIT_F_SHARE_ROWS);
	return table_fill(cfi, &opts, map_size);
}

static int table_once(const void *img, size_t size, struct table_run *r)
{
	struct sframe_jit_cfi *cfi;
	double t0, t1, t2, t3;
	int n, ret;

	t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	n = sframe_jit_cfi_convert(img, size, &cfi);
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (n <= 0)
		return n ?: -ENOENT;
	r->st.sz = sizeof(r->st);
	sframe_jit_cfi_get_stats(cfi, &r->st);
	ret = table_compact(cfi, &r->map_size);
	t2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!ret)
		ret = table_v1(cfi, &r->st, &r->v1_size);
	t3 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	sframe_jit_cfi_free(cfi);
	r->convert_ns = t1 - t0;
	r->register_ns = t2 - t1;
	r->v1_register_ns = t3 - t2;
	r->unshared_size = registry_size(n, r->st.nr_rows, 0);
	return ret;
}

static int tables(int reps, char **files, int nr)
{
	double conv[MAX_REPS], regs[MAX_REPS], tot[MAX_REPS], v1[MAX_REPS];
	struct table_run r = { 0 };
	int i, k, err;

	printf("%-40s %8s %8s %9s %9s %9s %8s %11s %9s %11s %9s %9s %9s\n",
	       "object", "fdes", "funcs", "rows", "shared", "conv_ms",
	       "reg_ms", "total_ms", "bytes", "bytes/func", "v1_bytes",
	       "v1_reg_ms", "unshared");
	for (i = 0; i < nr; i++) {
		size_t size;
		void *img = map_file(files[i], &size);

		if (!img) {
			fprintf(stderr, "%s: %s\n", files[i], strerror(errno));
			return 1;
		}
		for (k = 0; k < reps; k++) {
			err = table_once(img, size, &r);
			if (err) {
				fprintf(stderr, "%s: %s\n", files[i],
					strerror(-err));
				return 1;
			}
			conv[k] = r.convert_ns / 1e6;
			regs[k] = r.register_ns / 1e6;
			tot[k] = conv[k] + regs[k];
			v1[k] = r.v1_register_ns / 1e6;
		}
		munmap(img, size);
		printf("%-40s %8llu %8llu %9llu %9llu %9.1f %8.1f %11.1f %9zu %11.1f %9zu %9.1f %9zu\n",
		       files[i], (unsigned long long)r.st.nr_fdes,
		       (unsigned long long)r.st.nr_converted,
		       (unsigned long long)r.st.nr_rows,
		       (unsigned long long)r.st.nr_shared_rows,
		       median(conv, reps), median(regs, reps),
		       median(tot, reps), r.map_size,
		       (double)r.map_size / r.st.nr_converted, r.v1_size,
		       median(v1, reps), r.unshared_size);
	}
	return 0;
}

static int run_once(char **argv, double *wall, double *cpu)
{
	struct rusage ru;
	double t0 = now_ns(CLOCK_MONOTONIC);
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return -errno;
	*wall = (now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	*cpu = ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3 +
	       ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

static int startup(int reps, char **argv)
{
	double wall[MAX_REPS], cpu[MAX_REPS];
	int k, err;

	/* One run untimed: the page cache. */
	if (run_once(argv, &wall[0], &cpu[0])) {
		fprintf(stderr, "%s fails\n", argv[0]);
		return 1;
	}
	for (k = 0; k < reps; k++) {
		err = run_once(argv, &wall[k], &cpu[k]);
		if (err)
			return 1;
	}
	printf("wall_ms %.2f cpu_ms %.2f\n", median(wall, reps),
	       median(cpu, reps));
	return 0;
}

/* The median of the ratios b/a, pair by pair. */
static double ratio_median(const double *a, const double *b, int n)
{
	double r[MAX_REPS];
	int k;

	for (k = 0; k < n; k++)
		r[k] = b[k] / a[k];
	return median(r, n);
}

static int pair(int reps, char **argv)
{
	double wall[2][MAX_REPS], cpu[2][MAX_REPS], ratio;
	char **cmd[2] = { argv, NULL };
	int k, j;

	for (k = 0; argv[k]; k++) {
		if (!strcmp(argv[k], "--vs")) {
			argv[k] = NULL;
			cmd[1] = argv + k + 1;
			break;
		}
	}
	if (!cmd[1] || !cmd[1][0] || !cmd[0][0])
		return 2;
	/* One run of each untimed: the page cache. */
	for (j = 0; j < 2; j++)
		if (run_once(cmd[j], &wall[j][0], &cpu[j][0])) {
			fprintf(stderr, "%s fails\n", cmd[j][0]);
			return 1;
		}
	for (k = 0; k < reps; k++)
		for (j = 0; j < 2; j++)
			if (run_once(cmd[j], &wall[j][k], &cpu[j][k]))
				return 1;
	ratio = ratio_median(wall[0], wall[1], reps);
	printf("a_wall_ms %.2f b_wall_ms %.2f b/a %.3f", median(wall[0], reps),
	       median(wall[1], reps), ratio);
	printf(" a_cpu_ms %.2f b_cpu_ms %.2f\n", median(cpu[0], reps),
	       median(cpu[1], reps));
	return 0;
}

/* Bytes of an SFrame offset that holds every one of @v. */
static unsigned int offset_bytes(const int32_t *v, unsigned int n)
{
	unsigned int i, bytes = 1;

	for (i = 0; i < n; i++) {
		if (v[i] < INT16_MIN || v[i] > INT16_MAX)
			return 4;
		if (v[i] < INT8_MIN || v[i] > INT8_MAX)
			bytes = 2;
	}
	return bytes;
}

/*
 * An SFrame version 2 row for x86-64: the start (1, 2 or 4 bytes, by the
 * function's size), an info byte, then the CFA offset and a saved FP's
 * (the return address is at the header's fixed offset), none for an
 * outermost row.
 */
static size_t sframe_row_bytes(const struct sframe_jit_row *r, uint32_t size)
{
	unsigned int addr = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
	int32_t v[2] = { r->cfa_off, r->fp_off };
	unsigned int n = 1;

	if (r->flags & SFRAME_JIT_ROW_RA_UNDEFINED)
		return addr + 1;
	if (r->flags & SFRAME_JIT_ROW_FP_SAVED)
		n = 2;
	return addr + 1 + n * offset_bytes(v, n);
}

#define SFRAME_V2_HDR	28
#define SFRAME_V2_FDE	20
#define SFRAME_TAB_FUNC	20
#define SFRAME_TAB_ROW	8
#define SFRAME_TAB_RULE	16
/* struct sframe_table and struct sframe_elf_copy, at most */
#define SFRAME_TAB_HDR	48
#define SFRAME_ELF_COPY	256

/*
 * The rules the kernel keeps once each: what a row of the version 2
 * section decodes into (the RA at the header's fixed offset).
 */
struct rule_set {
	uint64_t *slot;		/* key + 1; 0 is empty */
	size_t mask;
	size_t nr;
};

static uint64_t rule_key(const struct sframe_jit_row *r)
{
	if (r->flags & SFRAME_JIT_ROW_RA_UNDEFINED)
		return 1;
	if (!(r->flags & SFRAME_JIT_ROW_FP_SAVED))
		return 2 | (uint64_t)r->cfa_base << 8 |
		       (uint64_t)(uint32_t)r->cfa_off << 16;
	return 3 | (uint64_t)r->cfa_base << 8 |
	       (uint64_t)(uint32_t)r->cfa_off << 16 |
	       (uint64_t)(uint16_t)r->fp_off << 48;
}

/* Count @r in @set; 0, or -ENOMEM. */
static int rule_add(struct rule_set *set, const struct sframe_jit_row *r)
{
	uint64_t key = rule_key(r), *old;
	size_t i, n;

	if (set->nr * 2 >= set->mask) {
		old = set->slot;
		n = old ? set->mask + 1 : 0;
		set->mask = n ? 2 * n - 1 : 1023;
		set->slot = calloc(set->mask + 1, sizeof(*set->slot));
		if (!set->slot)
			return -ENOMEM;
		for (i = 0; old && i < n; i++) {
			size_t j = old[i] * 0x9e3779b97f4a7c15ULL >> 20;

			while (old[i] && set->slot[j & set->mask])
				j++;
			if (old[i])
				set->slot[j & set->mask] = old[i];
		}
		free(old);
	}
	for (i = key * 0x9e3779b97f4a7c15ULL >> 20;; i++) {
		if (set->slot[i & set->mask] == key)
			return 0;
		if (!set->slot[i & set->mask]) {
			set->slot[i & set->mask] = key;
			set->nr++;
			return 0;
		}
	}
}

static size_t pages(size_t bytes)
{
	return (bytes + 4095) / 4096 * 4096;
}

static int sizes_one(const char *path)
{
	const struct sframe_jit_row *rows;
	struct sframe_jit_cfi_stats st = { .sz = sizeof(st) };
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_func f;
	size_t size, sec = SFRAME_V2_HDR, tab, jit, compact = 0;
	struct rule_set rules = { 0 };
	uint32_t i, r;
	void *img = map_file(path, &size);
	int n;

	if (!img)
		return -errno;
	n = sframe_jit_cfi_convert(img, size, &cfi);
	munmap(img, size);
	if (n < 0)
		return n;
	sframe_jit_cfi_get_stats(cfi, &st);
	for (i = 0; i < (uint32_t)n; i++) {
		sframe_jit_cfi_func(cfi, i, &f, &rows);
		sec += SFRAME_V2_FDE;
		for (r = 0; r < f.nr_rows; r++) {
			sec += sframe_row_bytes(&rows[r], f.size);
			if (rule_add(&rules, &rows[r])) {
				sframe_jit_cfi_free(cfi);
				free(rules.slot);
				return -ENOMEM;
			}
		}
	}
	free(rules.slot);
	if (n && table_compact(cfi, &compact))
		compact = 0;
	sframe_jit_cfi_free(cfi);
	tab = SFRAME_TAB_HDR + SFRAME_TAB_FUNC * st.nr_converted +
	      SFRAME_TAB_ROW * st.nr_rows + SFRAME_TAB_RULE * rules.nr;
	jit = registry_size(st.nr_converted, st.nr_shared_rows,
			    SFRAME_JIT_F_SHARE_ROWS);
	printf("%-40s %8llu %9llu %9llu %7zu %10zu %10zu %10zu %10zu %10zu\n",
	       path, (unsigned long long)st.nr_converted,
	       (unsigned long long)st.nr_rows,
	       (unsigned long long)st.nr_shared_rows, rules.nr, compact, jit,
	       sec, tab, pages(SFRAME_ELF_COPY + tab));
	return 0;
}

static int sizes(char **files, int nr)
{
	int i, err;

	printf("%-40s %8s %9s %9s %7s %10s %10s %10s %10s %10s\n", "object",
	       "funcs", "rows", "shared", "rules", "compact", "jit_v1",
	       "sframe_v2", "elf_table", "elf_total");
	for (i = 0; i < nr; i++) {
		err = sizes_one(files[i]);
		if (err) {
			fprintf(stderr, "%s: %s\n", files[i], strerror(-err));
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int reps = 5, i = 2;

	if (argc < 3)
		goto usage;
	if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
		reps = atoi(argv[i + 1]);
		i += 2;
	}
	if (reps < 1 || reps > MAX_REPS)
		goto usage;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc)
		goto usage;
	if (!strcmp(argv[1], "tables"))
		return tables(reps, argv + i, argc - i);
	if (!strcmp(argv[1], "startup"))
		return startup(reps, argv + i);
	if (!strcmp(argv[1], "pair") && !pair(reps, argv + i))
		return 0;
	if (!strcmp(argv[1], "sizes"))
		return sizes(argv + i, argc - i);
usage:
	fprintf(stderr, "usage: %s tables [--reps N] FILE...\n"
		"       %s startup [--reps N] -- CMD [ARGS...]\n"
		"       %s pair [--reps N] -- CMD_A [ARGS...] --vs CMD_B [ARGS...]\n"
		"       %s sizes FILE...\n",
		argv[0], argv[0], argv[0], argv[0]);
	return 2;
}
