// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What sframe-run costs, medians of REPS runs:
 *
 *   sframe_run_bench tables [--reps N] FILE...
 *	for each object, the CPU time of converting its CFI (row sharing
 *	included) and of creating and filling a registry sized exactly
 *	(in private memory, laid out as the kernel's: the kernel's own
 *	share is the pages' allocation), the registry's bytes, per
 *	function too, and what a registry without shared rows would take;
 *
 *   sframe_run_bench startup [--reps N] -- CMD [ARGS...]
 *	the wall-clock time and the CPU time (user and system, of CMD and
 *	its threads, as wait4() reports them) of running CMD to its exit.
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
	size_t map_size;
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

static int table_once(const void *img, size_t size, struct table_run *r)
{
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_func lo, hi;
	struct sframe_jit *reg;
	double t0, t1, t2;
	int n, ret;

	t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	n = sframe_jit_cfi_convert(img, size, &cfi);
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (n <= 0)
		return n ?: -ENOENT;
	r->st.sz = sizeof(r->st);
	sframe_jit_cfi_get_stats(cfi, &r->st);
	sframe_jit_cfi_func(cfi, 0, &lo, NULL);
	sframe_jit_cfi_func(cfi, n - 1, &hi, NULL);

	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = n,
			.fre_capacity = r->st.nr_shared_rows,
			.flags = SFRAME_JIT_F_NO_KERNEL | SFRAME_JIT_F_NO_GROW |
				 SFRAME_JIT_F_SHARE_ROWS);
	ret = sframe_jit_create(lo.start, hi.start + hi.size, &opts, &reg);
	if (!ret) {
		ret = sframe_jit_import_cfi(reg, cfi, 0);
		r->map_size = reg->l.map_size;
	}
	t2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!ret || ret == n)
		sframe_jit_destroy(reg);
	sframe_jit_cfi_free(cfi);
	r->convert_ns = t1 - t0;
	r->register_ns = t2 - t1;
	r->unshared_size = registry_size(n, r->st.nr_rows, 0);
	return ret < 0 ? ret : 0;
}

static int tables(int reps, char **files, int nr)
{
	double conv[MAX_REPS], regs[MAX_REPS], tot[MAX_REPS];
	struct table_run r = { 0 };
	int i, k, err;

	printf("%-40s %8s %8s %9s %9s %9s %8s %11s %9s %11s %9s\n", "object",
	       "fdes", "funcs", "rows", "shared", "conv_ms", "reg_ms",
	       "total_ms", "bytes", "bytes/func", "unshared");
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
		}
		munmap(img, size);
		printf("%-40s %8llu %8llu %9llu %9llu %9.1f %8.1f %11.1f %9zu %11.1f %9zu\n",
		       files[i], (unsigned long long)r.st.nr_fdes,
		       (unsigned long long)r.st.nr_converted,
		       (unsigned long long)r.st.nr_rows,
		       (unsigned long long)r.st.nr_shared_rows,
		       median(conv, reps), median(regs, reps),
		       median(tot, reps), r.map_size,
		       (double)r.map_size / r.st.nr_converted, r.unshared_size);
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
usage:
	fprintf(stderr, "usage: %s tables [--reps N] FILE...\n"
		"       %s startup [--reps N] -- CMD [ARGS...]\n",
		argv[0], argv[0]);
	return 2;
}
