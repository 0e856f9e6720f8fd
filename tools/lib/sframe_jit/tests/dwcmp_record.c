// SPDX-License-Identifier: GPL-2.0
/*
 * libdw_compare's recorder: one task-clock event on a child command
 * whose every sample carries both the kernel's user callchain
 * (PERF_SAMPLE_CALLCHAIN, walked with SFrame when asked) and what a
 * DWARF unwinder needs (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER),
 * plus the executable mappings to find the code.  Only the last image
 * the command execs counts: sframe-run is a shell script that execs it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "dwcmp.h"

/* Ring data pages (a power of two) and the user stack bytes copied. */
#define RING_PAGES	2048
#define STACK_COPY	32768

/*
 * perf_event_attr.callchain_sframe, bit 40 of the flags word that
 * follows read_format (include/uapi/linux/perf_event.h of the patched
 * tree; the system's headers do not name it).
 */
#define ATTR_CALLCHAIN_SFRAME	(1ULL << 40)

_Static_assert(offsetof(struct perf_event_attr, read_format) + 16 ==
	       offsetof(struct perf_event_attr, wakeup_events),
	       "one 64-bit flags word between read_format and wakeup_events");

/* The user registers asked for, in the order a sample holds them. */
enum {
	PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP,
	PR_R8 = 16, PR_R15 = 23,
};

#define REGS_MASK	(((1ULL << (PR_IP + 1)) - 1) | \
			 (((1ULL << (PR_R15 + 1)) - 1) & ~((1ULL << PR_R8) - 1)))

/* DWARF number of each register of REGS_MASK, lowest bit first. */
static const unsigned char dwarf_of[] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 8, 9, 10, 11, 12, 13, 14, 15,
};

_Static_assert(sizeof(dwarf_of) == DWCMP_NREGS, "one DWARF number a register");

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t size;
	unsigned char rec[65536];	/* a record that wraps, made whole */
};

static void *grow(void *arr, size_t *cap, size_t nr, size_t elem)
{
	void *p;

	if (nr < *cap)
		return arr;
	*cap = *cap ? 2 * *cap : 256;
	p = realloc(arr, *cap * elem);
	if (!p) {
		perror("libdw_compare: realloc");
		exit(2);
	}
	return p;
}

/*
 * Through memcpy(): a store through another type's pointer need not be
 * ordered after the bitfield stores to the same word.
 */
static void set_callchain_sframe(struct perf_event_attr *attr)
{
	char *word = (char *)attr + offsetof(struct perf_event_attr, read_format) +
		     sizeof(attr->read_format);
	uint64_t flags;

	memcpy(&flags, word, sizeof(flags));
	flags |= ATTR_CALLCHAIN_SFRAME;
	memcpy(word, &flags, sizeof(flags));
}

static void attr_init(struct perf_event_attr *attr, bool sframe,
		      uint64_t period_ns)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->sample_period = period_ns;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			    PERF_SAMPLE_STACK_USER;
	attr->sample_regs_user = REGS_MASK;
	attr->sample_stack_user = STACK_COPY;
	attr->sample_max_stack = DWCMP_MAX_FRAMES;
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = 1;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = RING_PAGES * sysconf(_SC_PAGESIZE) / 4;
	if (sframe)
		set_callchain_sframe(attr);
}

/* A new image: what the previous one left does not describe it. */
static void on_exec(struct dwcmp_run *run)
{
	pid_t pid = run->pid;
	uint64_t lost = run->lost;
	unsigned int execs = run->execs;

	dwcmp_run_reset(run);
	run->pid = pid;
	run->lost = lost;
	run->execs = execs + 1;
}

static void on_mmap2(struct dwcmp_run *run, const unsigned char *p)
{
	const struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
		char filename[];
	} *m = (const void *)p;
	struct dwcmp_map *map;

	run->maps = grow(run->maps, &run->cap_maps, run->nr_maps,
			 sizeof(*run->maps));
	map = &run->maps[run->nr_maps++];
	map->start = m->addr;
	map->len = m->len;
	map->pgoff = m->pgoff;
	map->path = strdup(m->filename);
	if (!map->path) {
		perror("libdw_compare: strdup");
		exit(2);
	}
}

static void take(uint64_t *dst, const unsigned char **p, size_t n)
{
	memcpy(dst, *p, n * sizeof(*dst));
	*p += n * sizeof(*dst);
}

/* The kernel's chain without its PERF_CONTEXT_* markers. */
static void take_chain(struct dwcmp_sample *s, const unsigned char **p)
{
	uint64_t nr, ip, i;

	take(&nr, p, 1);
	for (i = 0; i < nr; i++) {
		take(&ip, p, 1);
		if (ip >= PERF_CONTEXT_MAX)
			continue;
		if (s->nr_chain < DWCMP_MAX_FRAMES)
			s->chain[s->nr_chain++] = ip;
	}
}

static bool take_regs(struct dwcmp_sample *s, const unsigned char **p)
{
	uint64_t abi, v;
	unsigned int i;

	take(&abi, p, 1);
	if (abi != PERF_SAMPLE_REGS_ABI_64)
		return false;
	for (i = 0; i < DWCMP_NREGS; i++) {
		take(&v, p, 1);
		s->regs[dwarf_of[i]] = v;
	}
	s->sp = s->regs[7];
	return true;
}

static void take_stack(struct dwcmp_sample *s, const unsigned char **p)
{
	uint64_t size, dyn;
	const unsigned char *data;

	take(&size, p, 1);
	if (!size)
		return;
	data = *p;
	*p += size;
	take(&dyn, p, 1);
	s->stack_size = dyn < size ? dyn : size;
	s->stack = malloc(s->stack_size ? s->stack_size : 1);
	if (!s->stack) {
		perror("libdw_compare: malloc");
		exit(2);
	}
	memcpy(s->stack, data, s->stack_size);
}

static void on_sample(struct dwcmp_run *run, const unsigned char *p)
{
	struct dwcmp_sample *s;
	uint64_t ip, ids;

	run->samples = grow(run->samples, &run->cap_samples,
			    run->nr_samples, sizeof(*run->samples));
	s = &run->samples[run->nr_samples];
	memset(s, 0, sizeof(*s));
	take(&ip, &p, 1);
	take(&ids, &p, 1);
	s->tid = (pid_t)(ids >> 32);
	take_chain(s, &p);
	/* A sample without user registers has nothing to unwind. */
	if (!take_regs(s, &p))
		return;
	take_stack(s, &p);
	run->nr_samples++;
}

static void on_record(struct dwcmp_run *run, const struct perf_event_header *h)
{
	const unsigned char *body = (const unsigned char *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(run, body);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap2(run, body);
		break;
	case PERF_RECORD_COMM:
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			on_exec(run);
		break;
	case PERF_RECORD_LOST:
		run->lost += ((const uint64_t *)body)[1];
		break;
	}
}

/* Everything the kernel has written since the last drain. */
static void drain(struct ring *r, struct dwcmp_run *run)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	while (tail < head) {
		size_t off = tail & (r->size - 1);
		const struct perf_event_header *h = (const void *)(r->data + off);
		size_t n = h->size;

		if (off + n > r->size) {
			size_t first = r->size - off;

			memcpy(r->rec, r->data + off, first);
			memcpy(r->rec + first, r->data, n - first);
			h = (const void *)r->rec;
		}
		on_record(run, h);
		tail += n;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int ring_open(struct ring *r, pid_t pid, bool sframe,
		     uint64_t period_ns)
{
	struct perf_event_attr attr;
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	attr_init(&attr, sframe, period_ns);
	r->fd = syscall(__NR_perf_event_open, &attr, pid, -1, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0) {
		fprintf(stderr, "libdw_compare: perf_event_open: %s%s\n",
			strerror(errno), sframe && errno == EINVAL ?
			" (a kernel without callchain_sframe?)" : "");
		return -1;
	}
	r->size = RING_PAGES * ps;
	p = mmap(NULL, r->size + ps, PROT_READ | PROT_WRITE, MAP_SHARED,
		 r->fd, 0);
	if (p == MAP_FAILED) {
		perror("libdw_compare: mmap of the ring");
		close(r->fd);
		return -1;
	}
	r->meta = p;
	r->data = (unsigned char *)p + ps;
	return 0;
}

static void ring_close(struct ring *r)
{
	munmap(r->meta, r->size + (size_t)sysconf(_SC_PAGESIZE));
	close(r->fd);
}

/* A child stopped before exec until its event is open: @go's read end. */
static pid_t spawn(char *const argv[], int go[2])
{
	pid_t pid = fork();
	char c;

	if (pid)
		return pid;
	close(go[1]);
	if (read(go[0], &c, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
	fprintf(stderr, "libdw_compare: exec %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

static int follow(struct ring *r, struct dwcmp_run *run)
{
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

	for (;;) {
		pid_t w = waitpid(run->pid, &run->status, WNOHANG);

		drain(r, run);
		if (w == run->pid)
			return 0;
		if (w < 0) {
			perror("libdw_compare: waitpid");
			return -1;
		}
		if (poll(&pfd, 1, 50) < 0 && errno != EINTR) {
			perror("libdw_compare: poll");
			return -1;
		}
	}
}

/**
 * dwcmp_record() - run a command and keep its samples
 * @run: filled with the last image's maps and samples; reset first.
 * @argv: the command, NULL-terminated.
 * @sframe: whether the kernel walks the user stack with SFrame tables
 *	(attr.callchain_sframe) rather than frame pointers.
 * @period_ns: task-clock nanoseconds between samples.
 *
 * Return: 0 once the command has exited (its status in @run->status),
 * -1 with a message on stderr if it could not be sampled.
 */
int dwcmp_record(struct dwcmp_run *run, char *const argv[], bool sframe,
		 uint64_t period_ns)
{
	struct ring *r = calloc(1, sizeof(*r));
	int go[2], ret = -1;

	memset(run, 0, sizeof(*run));
	if (!r || pipe(go)) {
		perror("libdw_compare: setup");
		free(r);
		return -1;
	}
	run->pid = spawn(argv, go);
	close(go[0]);
	if (run->pid < 0) {
		perror("libdw_compare: fork");
		goto close_go;
	}
	if (ring_open(r, run->pid, sframe, period_ns)) {
		kill(run->pid, SIGKILL);
		waitpid(run->pid, NULL, 0);
		goto close_go;
	}
	if (write(go[1], "x", 1) == 1)
		ret = follow(r, run);
	else
		perror("libdw_compare: starting the child");
	ring_close(r);
close_go:
	close(go[1]);
	free(r);
	return ret;
}

/**
 * dwcmp_run_reset() - free what dwcmp_record() kept
 * @run: emptied, ready for another dwcmp_record().
 */
void dwcmp_run_reset(struct dwcmp_run *run)
{
	size_t i;

	for (i = 0; i < run->nr_samples; i++)
		free(run->samples[i].stack);
	for (i = 0; i < run->nr_maps; i++)
		free(run->maps[i].path);
	free(run->samples);
	free(run->maps);
	memset(run, 0, sizeof(*run));
}
