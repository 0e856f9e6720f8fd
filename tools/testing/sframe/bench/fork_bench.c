// SPDX-License-Identifier: GPL-2.0
/*
 * What a JIT registry adds to fork().  The kernel gives the child
 * nothing of it (the mapping is VM_DONTCOPY and no registration is
 * inherited), but a JIT whose children go on running its code wants
 * its table there too: libsframe_jit's atfork child handler opens a
 * registry of the same shape from the inherited descriptor with
 * SFRAME_JIT_COPY, maps it and closes the inherited descriptor.  This
 * child does the same before its first clock read, so that the fork of
 * a process with a large registry costs, in the child, at least the
 * zeroing, the copy and, at the child's exit, the freeing of that many
 * bytes; the parent's fork no longer copies anything.
 *
 *	fork_bench [-r REPS]
 *
 * For the test kernel, as root: the largest registry is hundreds of MiB,
 * which only CAP_IPC_LOCK may pin.  One worker process per case, all
 * forked before any registration so that they differ only by their
 * registry:
 *
 *   none    no registry;
 *   small   libsframe_jit's first registry, 64 descriptors and 256 rows;
 *   1e5     room for 1e5 functions of four rows;
 *   max     SFRAME_JIT_MAX_FDES and SFRAME_JIT_MAX_FRES, the largest the
 *           kernel accepts, or, where the machine has too little memory
 *           for it, the largest of the halvings of both that it could
 *           allocate (the table says which).
 *
 * The cases take turns, REPS times.  Each time the worker forks a child
 * that calls _exit(0) at once, MAX_FORKS times but for the largest
 * registry, whose fork is slow enough to time once, and takes the
 * median of each figure of its forks, timed from just before fork():
 *
 *   total   to waitpid()'s return in the parent;
 *   parent  to fork()'s return in the parent;
 *   child   to the child's first clock read in userspace, after its
 *           copy of the registry (SFRAME_JIT_COPY and mmap());
 *   freed   from waitpid()'s return to the freeing of the child's copy,
 *           which the kernel defers past an RCU grace period to a work
 *           item: the benchmark waits for it before the next fork, so
 *           that no fork pays for the one before;
 *   stall   in a second fork, the longest gap between two page faults
 *           of another thread of the forking process: dup_mmap() holds
 *           the parent's mmap lock and the lock of each of its VMAs
 *           while it runs; "of" is that fork's parent time.
 *
 * And a floor for the largest registry: as many bytes mapped with
 * MAP_POPULATE, copied with memcpy() and unmapped, in userspace: what
 * zeroing, copying and freeing those pages costs on this machine.
 * Times are wall-clock (CLOCK_MONOTONIC), cells are medians.
 * Exit status 1 if a registration or a fork failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sframe_jit.h>

#include "../bench_time.h"

#ifndef __NR_sframe_jit_open
#define __NR_sframe_jit_open 472
#endif

#define MAX_REPS	101
#define MAX_FORKS	9
#define STALL_PAGES	1024	/* the faulting thread's round, 4 MiB */
#define FREE_TIMEOUT_NS	60e9

enum { NONE, SMALL, MID, MAX, NR_CASES };

struct fork_case {
	const char *name;
	__u32 fdes;
	__u32 fres;
	int forks;	/* per run, of which the run takes the median */
	/* Filled in by the worker's registration. */
	size_t size;
	bool halved;
	int cmd_fd;
	int res_fd;
	pid_t pid;
};

static struct fork_case cases[NR_CASES] = {
	[NONE]	= { "none", 0, 0, MAX_FORKS },
	[SMALL]	= { "small", 64, 256, MAX_FORKS },
	[MID]	= { "1e5", 100000, 400000, MAX_FORKS },
	[MAX]	= { "max", SFRAME_JIT_MAX_FDES, SFRAME_JIT_MAX_FRES, 1 },
};

/* One measurement, in nanoseconds; freed < 0 if the copy stayed. */
struct sample {
	double total;
	double parent;
	double child;
	double freed;
	double stall;
	double stall_fork;
};

/* A worker's answer to its registration. */
struct ready {
	int err;
	__u32 fdes;
	__u32 fres;
	__u64 size;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void write_all(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len)
		die("write to pipe");
}

static bool read_all(int fd, void *buf, size_t len)
{
	return read(fd, buf, len) == (ssize_t)len;
}

/*
 * Live registries in the machine, in vmalloc areas: /proc/vmallocinfo
 * names the function that allocated each, and every registry, a forked
 * child's too, comes from sframe_jit_alloc(), as does the array of
 * pages of one larger than a page of page pointers.  Only the changes
 * of the count matter.
 */
static int count_registries(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	int n = 0;

	if (!f)
		die("/proc/vmallocinfo");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " sframe_jit_alloc+"))
			n++;
	fclose(f);
	return n;
}

/* Wait until no more than @base registries are live; how long it took. */
static double wait_registries(int base)
{
	struct timespec ms = { 0, 1000000 };
	double t0 = wall_ns(), t;

	while (count_registries() > base) {
		t = wall_ns();
		if (t - t0 > FREE_TIMEOUT_NS)
			return -1;
		nanosleep(&ms, NULL);
	}
	return wall_ns() - t0;
}

/* The worker's registry, which its children copy: -1 for none. */
static int jit_fd = -1;
static struct sframe_jit_args jit_args;

/* A new registry's descriptor, mapped as a JIT maps it; -errno. */
static long jit_open(struct sframe_jit_args *args, void **map)
{
	long fd = syscall(__NR_sframe_jit_open, args, sizeof(*args));
	off_t size;

	if (fd == -1)
		return -errno;
	size = lseek(fd, 0, SEEK_END);
	*map = size > 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0) : MAP_FAILED;
	if (*map == MAP_FAILED) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

static long jit_register(__u64 start, __u32 fdes, __u32 fres)
{
	struct sframe_jit_args args = {
		.text_start	= start,
		.text_end	= start + getpagesize(),
		.fde_capacity	= fdes,
		.fre_capacity	= fres,
	};
	void *map;
	long fd = jit_open(&args, &map);

	if (fd < 0)
		return fd;
	jit_fd = fd;
	jit_args = args;
	return (long)map;
}

/* In the child: what libsframe_jit's atfork child handler does. */
static void jit_copy(void)
{
	struct sframe_jit_args args = jit_args;
	void *map;

	if (jit_fd < 0)
		return;
	args.flags = SFRAME_JIT_COPY;
	args.src_fd = jit_fd;
	if (jit_open(&args, &map) < 0)
		_exit(1);
	close(jit_fd);
}

/*
 * The registry of @c, or for the largest one the largest of its halvings
 * that the kernel could allocate.  The text range needs no code, only
 * addresses of this process that no other registration covers.
 */
static void worker_register(const struct fork_case *c, struct ready *r)
{
	const struct sframe_jit_header *h;
	void *text;
	long ret;

	r->fdes = c->fdes;
	r->fres = c->fres;
	if (!c->fdes)
		return;
	text = mmap(NULL, getpagesize(), PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (text == MAP_FAILED) {
		r->err = errno;
		return;
	}
	for (;;) {
		ret = jit_register((unsigned long)text, r->fdes, r->fres);
		if (ret != -ENOMEM || r->fdes == 1)
			break;
		r->fdes /= 2;
		r->fres /= 2;
	}
	if (ret < 0) {
		r->err = -ret;
		return;
	}
	h = (const struct sframe_jit_header *)ret;
	r->size = h->map_size;
}

static volatile __u64 *child_stamp;	/* a shared page */

static atomic_int stall_state;		/* 0 wait, 1 timing, 2 done */
static double stall_max;
static char *stall_pages;

/* Fault a fresh page after another, noting the longest gap in a fork. */
static void *stall_thread(void *arg)
{
	size_t pg = getpagesize(), i = 0;
	double prev = wall_ns(), t;

	(void)arg;
	stall_max = 0;
	while (atomic_load(&stall_state) != 2) {
		t = wall_ns();
		if (atomic_load(&stall_state) == 1 && t - prev > stall_max)
			stall_max = t - prev;
		prev = t;
		stall_pages[i * pg] = 1;
		if (++i == STALL_PAGES) {
			madvise(stall_pages, STALL_PAGES * pg, MADV_DONTNEED);
			i = 0;
		}
	}
	return NULL;
}

static pid_t fork_child(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		jit_copy();
		*child_stamp = wall_ns();
		_exit(0);
	}
	if (pid < 0)
		die("fork");
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("waitpid");
}

static void measure_fork(struct sample *s)
{
	int base = count_registries();
	double t0, t1, t2;
	pid_t pid;

	*child_stamp = 0;
	t0 = wall_ns();
	pid = fork_child();
	t1 = wall_ns();
	reap(pid);
	t2 = wall_ns();
	s->total = t2 - t0;
	s->parent = t1 - t0;
	s->child = *child_stamp - t0;
	s->freed = wait_registries(base);
}

static void measure_stall(struct sample *s)
{
	int base = count_registries();
	struct timespec ms = { 0, 1000000 };
	pthread_t thread;
	double t0;
	pid_t pid;

	atomic_store(&stall_state, 0);
	if (pthread_create(&thread, NULL, stall_thread, NULL))
		die("pthread_create");
	/* Let the thread reach its loop before the fork. */
	nanosleep(&ms, NULL);
	atomic_store(&stall_state, 1);
	t0 = wall_ns();
	pid = fork_child();
	s->stall_fork = wall_ns() - t0;
	atomic_store(&stall_state, 2);
	pthread_join(thread, NULL);
	reap(pid);
	s->stall = stall_max;
	if (wait_registries(base) < 0)
		s->freed = -1;
}

/*
 * @n forks and @n more with the stalling thread, each field of @s the
 * median of its @n values; freed < 0 if a copy stayed.
 */
static void measure_forks(int n, struct sample *s)
{
	double v[MAX_FORKS][sizeof(*s) / sizeof(double)], col[MAX_FORKS];
	bool kept = false;
	size_t f;
	int i;

	for (i = 0; i < n; i++) {
		memset(s, 0, sizeof(*s));
		measure_fork(s);
		measure_stall(s);
		kept |= s->freed < 0;
		memcpy(v[i], s, sizeof(*s));
	}
	for (f = 0; f < sizeof(*s) / sizeof(double); f++) {
		for (i = 0; i < n; i++)
			col[i] = v[i][f];
		((double *)s)[f] = median(col, n);
	}
	if (kept)
		s->freed = -1;
}

/* The floor: map, populate, copy into and unmap @size bytes. */
static double measure_floor(size_t size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
	char *src, *dst;
	double t0, t1;

	src = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (src == MAP_FAILED)
		die("mmap");
	memset(src, 0x5a, size);
	t0 = wall_ns();
	dst = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (dst == MAP_FAILED)
		die("mmap");
	memcpy(dst, src, size);
	munmap(dst, size);
	t1 = wall_ns();
	munmap(src, size);
	return t1 - t0;
}

/*
 * A worker: register, say so, then measure one fork (or the floor, for
 * @floor_size) for each byte the driver sends, until it closes the pipe.
 */
static void worker(const struct fork_case *c, int cmd_fd, int res_fd,
		   size_t floor_size)
{
	struct ready r = { 0 };
	struct sample s;
	char cmd;

	if (!floor_size)
		worker_register(c, &r);
	write_all(res_fd, &r, sizeof(r));
	if (r.err)
		exit(1);
	stall_pages = mmap(NULL, STALL_PAGES * getpagesize(),
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stall_pages == MAP_FAILED)
		die("mmap");
	while (read_all(cmd_fd, &cmd, 1)) {
		memset(&s, 0, sizeof(s));
		if (floor_size)
			s.total = measure_floor(floor_size);
		else
			measure_forks(c->forks, &s);
		write_all(res_fd, &s, sizeof(s));
	}
	exit(0);
}

static struct fork_case *workers[NR_CASES + 1];
static int nr_workers;

static void start_worker(struct fork_case *c, size_t floor_size)
{
	int cmd[2], res[2], i;
	pid_t pid;

	if (pipe(cmd) || pipe(res))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* Else the others would not see their pipe close. */
		for (i = 0; i < nr_workers; i++) {
			close(workers[i]->cmd_fd);
			close(workers[i]->res_fd);
		}
		close(cmd[1]);
		close(res[0]);
		worker(c, cmd[0], res[1], floor_size);
	}
	close(cmd[0]);
	close(res[1]);
	c->cmd_fd = cmd[1];
	c->res_fd = res[0];
	c->pid = pid;
	workers[nr_workers++] = c;
}

static void worker_ready(struct fork_case *c)
{
	struct ready r;

	if (!read_all(c->res_fd, &r, sizeof(r))) {
		fprintf(stderr, "fork_bench: worker %s died\n", c->name);
		exit(1);
	}
	if (r.err) {
		fprintf(stderr, "fork_bench: registering %u descriptors and %u rows: %s%s\n",
			r.fdes, r.fres, strerror(r.err),
			geteuid() ? " (run as root: the registry needs CAP_IPC_LOCK)" : "");
		exit(1);
	}
	c->halved = r.fdes != c->fdes;
	c->fdes = r.fdes;
	c->fres = r.fres;
	c->size = r.size;
}

static void worker_run(struct fork_case *c, struct sample *s)
{
	char cmd = 'f';

	write_all(c->cmd_fd, &cmd, 1);
	if (!read_all(c->res_fd, s, sizeof(*s))) {
		fprintf(stderr, "fork_bench: worker %s died\n", c->name);
		exit(1);
	}
}

static void worker_stop(struct fork_case *c)
{
	close(c->cmd_fd);
	close(c->res_fd);
	waitpid(c->pid, NULL, 0);
}

/* The median of one field of @n samples, in milliseconds. */
static double median_ms(const struct sample *s, int n, size_t field)
{
	double v[MAX_REPS];
	int i;

	for (i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)&s[i] + field);
	return median(v, n) / 1e6;
}

/* The smallest or the largest total of @n samples, in milliseconds. */
static double range_ms(const struct sample *s, int n, bool max)
{
	double r = s[0].total;
	int i;

	for (i = 1; i < n; i++)
		if (max ? s[i].total > r : s[i].total < r)
			r = s[i].total;
	return r / 1e6;
}

#define MEDIAN(s, n, f)	median_ms(s, n, offsetof(struct sample, f))

static void format_size(char *buf, size_t len, size_t size)
{
	if (!size)
		snprintf(buf, len, "-");
	else if (size < 1048576)
		snprintf(buf, len, "%zu KiB", size >> 10);
	else
		snprintf(buf, len, "%.1f MiB", size / 1048576.0);
}

static void print_row(const struct fork_case *c, const struct sample *s,
		      int reps, double base)
{
	double total = MEDIAN(s, reps, total);
	char size[16], ratio[16], freed[16];
	int i, kept = 0;

	for (i = 0; i < reps; i++)
		kept += s[i].freed < 0;
	if (kept)
		snprintf(freed, sizeof(freed), "%d kept", kept);
	else
		snprintf(freed, sizeof(freed), "%.2f", MEDIAN(s, reps, freed));
	format_size(size, sizeof(size), c->size);
	snprintf(ratio, sizeof(ratio), "x %.2f", total / base);
	printf("%-6s %8u %9u %10s %9.2f %8s %9.2f %9.2f %9.2f %9s %9.2f %9.2f %9.2f..%.2f\n",
	       c->name, c->fdes, c->fres, size, total, ratio, total - base,
	       MEDIAN(s, reps, parent), MEDIAN(s, reps, child), freed,
	       MEDIAN(s, reps, stall), MEDIAN(s, reps, stall_fork),
	       range_ms(s, reps, false), range_ms(s, reps, true));
}

static void print_table(struct sample samples[][MAX_REPS], int reps,
			const struct sample *floor, size_t floor_size)
{
	double base = MEDIAN(samples[NONE], reps, total);
	double mib = floor_size / 1048576.0, added, t;
	int i;

	printf("# fork(), the child's _exit(0), waitpid(): ms of wall-clock time, medians of %d runs\n",
	       reps);
	printf("# a run of a case but max: the medians of its %d forks\n",
	       MAX_FORKS);
	printf("# ratio and added: total against none; of: the parent time of the stall's fork\n");
	printf("%-6s %8s %9s %10s %9s %8s %9s %9s %9s %9s %9s %9s %s\n",
	       "case", "FDEs", "FREs", "registry", "total", "ratio", "added",
	       "parent", "child", "freed", "stall", "of", "total min..max");
	for (i = 0; i < NR_CASES; i++)
		print_row(&cases[i], samples[i], reps, base);
	t = MEDIAN(floor, reps, total);
	added = MEDIAN(samples[MAX], reps, total) - base;
	printf("# floor: mmap(MAP_POPULATE), memcpy(), munmap() of %.1f MiB in userspace: %.2f ms, %.3f ms/MiB\n",
	       mib, t, t / mib);
	printf("# max: %.2f ms added, %.3f ms/MiB of registry, x %.2f the floor\n",
	       added, added / mib, added / t);
	if (cases[MAX].halved)
		printf("# max: NOT the kernel's largest registry: halved until it fitted in memory\n");
}

int main(int argc, char **argv)
{
	static struct sample samples[NR_CASES][MAX_REPS];
	static struct sample floor[MAX_REPS];
	struct fork_case floor_worker = { .name = "floor" };
	int reps = 5, opt, i, r;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-r REPS]\n", argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > MAX_REPS) {
		fprintf(stderr, "fork_bench: REPS must be 1 to %d\n", MAX_REPS);
		return 2;
	}
	child_stamp = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (child_stamp == MAP_FAILED)
		die("mmap");
	count_registries();	/* fail early without /proc/vmallocinfo */

	/* One at a time: a halving of the largest sees all memory free. */
	for (i = 0; i < NR_CASES; i++) {
		start_worker(&cases[i], 0);
		worker_ready(&cases[i]);
	}
	start_worker(&floor_worker, cases[MAX].size);
	worker_ready(&floor_worker);

	/* A round untimed: the first fork of each finds colder caches. */
	for (i = 0; i < NR_CASES; i++)
		worker_run(&cases[i], &samples[i][0]);
	for (r = 0; r < reps; r++) {
		for (i = 0; i < NR_CASES; i++)
			worker_run(&cases[i], &samples[i][r]);
		worker_run(&floor_worker, &floor[r]);
	}
	for (i = 0; i < NR_CASES; i++)
		worker_stop(&cases[i]);
	worker_stop(&floor_worker);
	print_table(samples, reps, floor, cases[MAX].size);
	return 0;
}
