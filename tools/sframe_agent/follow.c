// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Following processes as they map code, exec and exit, through perf's
 * side-band records: a dummy software event on each CPU, which counts
 * nothing and samples nothing, with mmap2, comm_exec and task records,
 * as perf record itself follows the processes it profiles.  Chosen over
 * a BPF program on the mmap and exec paths because it needs no program
 * in the kernel and no BTF, is available wherever perf is, and carries
 * everything the agent needs: the new mapping's range, offset, file and
 * protection, the exec, and the exit.  The records arrive after the
 * fact: a process runs the code it just mapped until the agent has read
 * the record and registered the table, which the summary's wait counts
 * (40 ms, the median, under software emulation with a warm cache).
 *
 * Per CPU, because the kernel does not let a buffer be mapped for an
 * inherited per-task event: with @pid, the events follow that process
 * and the children it makes from then on.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sframe_agent.h"

/*
 * Pages of each CPU's records: 512 KiB, some 4000 mmap2 records, room
 * for an exec storm while the agent converts a file.
 */
#define FOLLOW_PAGES	128

struct agent_follow {
	struct agent_ring *cpu;
	int nr;
};

static int follow_cpu_open(struct agent_ring *r, pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.inherit = pid > 0,
		/*
		 * Each record ends with its time, on the clock the summary's
		 * waits are read on: the time of the mmap, for those.
		 */
		.sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TIME,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/*
		 * Woken at every record: wakeup_events counts samples only,
		 * and a dummy event has none, so that without a watermark of
		 * a byte the agent read its records at its poll's timeout.
		 */
		.watermark = 1,
		.wakeup_watermark = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return agent_ring_open(r, &attr, pid, cpu, FOLLOW_PAGES);
}

/**
 * agent_follow_open() - start following processes
 * @pid: the process to follow, with the children it makes from now on;
 *	-1 for every process.
 * @fp: set on success.
 *
 * Return: 0, or a negative errno: perf_event_open(2)'s (-EACCES under
 * kernel.perf_event_paranoid without CAP_PERFMON), or -ENOMEM.
 */
int agent_follow_open(pid_t pid, struct agent_follow **fp)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct agent_follow *f;
	int err = 0, i;

	f = calloc(1, sizeof(*f));
	if (!f || n < 1)
		goto nomem;
	f->cpu = calloc(n, sizeof(*f->cpu));
	if (!f->cpu)
		goto nomem;
	for (i = 0; i < n; i++) {
		err = follow_cpu_open(&f->cpu[f->nr], pid, i);
		/* A CPU that is offline has no events. */
		if (err == -ENODEV)
			continue;
		if (err)
			break;
		f->nr++;
	}
	if (!err && f->nr) {
		*fp = f;
		return 0;
	}
	agent_follow_close(f);
	return err ? err : -ENODEV;
nomem:
	free(f);
	return -ENOMEM;
}

/**
 * agent_follow_fds() - the descriptors to poll for records
 * @f: the follower.
 * @pfd: filled with up to @max of them; NULL to count them.
 * @max: room at @pfd.
 *
 * Return: how many it has, one per CPU.
 */
int agent_follow_fds(const struct agent_follow *f, struct pollfd *pfd,
		     int max)
{
	int i;

	for (i = 0; pfd && i < f->nr && i < max; i++)
		pfd[i] = (struct pollfd){ .fd = f->cpu[i].fd, .events = POLLIN };
	return f->nr;
}

/* The time that ends a record (sample_id_all, PERF_SAMPLE_TIME alone). */
static uint64_t record_time(const char *rec)
{
	const struct perf_event_header *h = (const void *)rec;
	uint64_t t;

	memcpy(&t, rec + h->size - sizeof(t), sizeof(t));
	return t;
}

/**
 * agent_delay_add() - count a mapping's wait for its table, ended now
 * @d: the counts.
 * @since_ns: when it was mapped, on CLOCK_MONOTONIC.
 */
void agent_delay_add(struct agent_delay *d, uint64_t since_ns)
{
	struct timespec ts;
	uint64_t now, wait = UINT64_MAX;
	uint32_t *n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	/* A time to come is a misread record: counted as the longest wait. */
	if (now >= since_ns)
		wait = now - since_ns;
	if (wait > d->max_ns)
		d->max_ns = wait;
	d->n++;
	if (d->nr == d->cap && d->cap < AGENT_DELAY_MAX) {
		n = realloc(d->us, (d->cap ? 2 * d->cap : 1024) * sizeof(*n));
		if (!n)
			return;
		d->us = n;
		d->cap = d->cap ? 2 * d->cap : 1024;
	}
	if (d->nr < d->cap)
		d->us[d->nr++] = wait / 1000 < UINT32_MAX ? wait / 1000 :
							    UINT32_MAX;
}

static int us_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * agent_delay_median_ms() - the median wait
 * @d: the counts; the waits kept are sorted.
 *
 * Return: the median of the waits kept, in milliseconds; 0 with none.
 */
double agent_delay_median_ms(struct agent_delay *d)
{
	if (!d->nr)
		return 0;
	qsort(d->us, d->nr, sizeof(*d->us), us_cmp);
	return d->us[(d->nr - 1) / 2] / 1000.0;
}

/*
 * An mmap2 record: the mapping, if it is code, and what waited for its
 * range to be executable (mprotect(2) to executable gives one too).
 */
static void follow_mmap2(const char *rec, struct agent_stats *st)
{
	const struct {
		struct perf_event_header h;
		__u32 pid, tid;
		__u64 addr, len, pgoff;
		__u32 maj, min;
		__u64 ino, ino_generation;
		__u32 prot, flags;
		char filename[];
	} *r = (const void *)rec;
	struct agent_map m = {
		.start = r->addr, .end = r->addr + r->len,
		.offset = r->pgoff,
	};
	unsigned long before;
	struct agent_proc *p;
	int err;

	if (!(r->prot & PROT_EXEC))
		return;
	p = agent_proc_find(r->pid);
	if (p && p->nr_eh)
		agent_frames_exec(p, m.start, m.end, st);
	if (!strcmp(r->filename, "[vdso]"))
		m.path = NULL;
	else if (r->filename[0] == '/')
		m.path = (char *)r->filename;
	else
		return;
	p = agent_proc_get(r->pid, &err);
	if (!p)
		return;
	before = st->registered;
	agent_map_add(p, &m, st);
	if (st->registered != before)
		agent_delay_add(&st->delay, record_time(rec));
}

static void follow_record(const char *rec, void *arg)
{
	struct agent_stats *st = arg;
	const struct perf_event_header *h = (const void *)rec;
	const __u32 *pid = (const void *)(h + 1);

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		follow_mmap2(rec, st);
		break;
	case PERF_RECORD_COMM:
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
			agent_proc_exec(pid[0]);
			st->execs++;
		}
		break;
	case PERF_RECORD_LOST:
		/* id, then how many: a process may have gone without tables. */
		st->lost += ((const __u64 *)(h + 1))[1];
		break;
	case PERF_RECORD_FORK:
		/* pid, ppid, tid: a new process, not a thread. */
		if (pid[0] != pid[1] && pid[0] == pid[2])
			agent_proc_fork(pid[1], pid[0]);
		break;
	case PERF_RECORD_EXIT:
		/* The thread group's leader: the process. */
		if (pid[0] == pid[2])
			agent_proc_exit(pid[0]);
		break;
	}
}

/**
 * agent_follow_read() - act on every record that arrived
 * @f: the follower.
 * @st: what was done, added to.
 */
void agent_follow_read(struct agent_follow *f, struct agent_stats *st)
{
	int i;

	for (i = 0; i < f->nr; i++)
		agent_ring_read(&f->cpu[i], follow_record, st);
}

/**
 * agent_follow_close() - stop following
 * @f: the follower, or NULL.
 */
void agent_follow_close(struct agent_follow *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->nr; i++)
		agent_ring_close(&f->cpu[i]);
	free(f->cpu);
	free(f);
}
