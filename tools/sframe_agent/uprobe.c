// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Uprobes where a debugger sets its breakpoints, so that the agent
 * learns of new JIT code without stopping the JIT: on the GDB JIT
 * interface's __jit_debug_register_code(), which a JIT calls after each
 * change to its list, and on libgcc's __register_frame_info_bases() and
 * __deregister_frame_info_bases(), whose first argument names the
 * entries.  A perf uprobe event per CPU, for every process that runs
 * the function of that file (one probe serves every process of a
 * program under -a); each hit is a sample that names the process, with
 * the time and the argument's register.  The hits of all the rings are
 * acted on in the order they were taken: a JIT that deregisters code
 * and registers new code at the same entries, on another CPU, is seen
 * doing so in that order.  The process does not wait for the agent:
 * code it registered runs without its table until the agent has read
 * the hit, as for code it maps.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sframe_agent.h"

/* Functions probed at most: each costs a ring per CPU. */
#define MAX_PROBES	8

struct probe {
	dev_t dev;
	ino_t ino;
	uint64_t off;
	enum agent_probe_kind kind;
	struct agent_ring *ring;
	int nr;
};

/* A hit, as the sample has it: TID, TIME, REGS_USER with %rdi. */
struct hit_sample {
	struct perf_event_header h;
	uint32_t pid;
	uint32_t tid;
	uint64_t time;
	uint64_t abi;
	uint64_t di;
};

struct hit {
	uint64_t time;
	uint64_t arg;
	pid_t pid;
	enum agent_probe_kind kind;
	bool again;		/* kept from the last read */
};

static struct probe probes[MAX_PROBES];
static int nr_probes;
static struct hit *hits;
static size_t nr_hits;
static size_t cap_hits;
/* Hits of processes not known yet, at the front of @hits. */
static size_t nr_kept;
bool agent_uprobes_on;
bool agent_all;

/* The uprobe PMU's type, from sysfs; -1 without uprobes. */
static int uprobe_type(void)
{
	static int type = -2;
	FILE *f;

	if (type != -2)
		return type;
	type = -1;
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

static int probe_open(struct probe *pr, const char *path, int type)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	struct perf_event_attr attr;
	int cpu, err = 0;

	pr->ring = calloc(n > 0 ? n : 1, sizeof(*pr->ring));
	if (!pr->ring)
		return -ENOMEM;
	for (cpu = 0; cpu < n; cpu++) {
		attr = (struct perf_event_attr){
			.type = type,
			.config1 = (uintptr_t)path,
			.config2 = pr->off,
			.sample_period = 1,
			.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_REGS_USER,
			.sample_regs_user = 1ULL << PERF_REG_X86_DI,
			/* The same clock on every CPU, to order the hits. */
			.use_clockid = 1,
			.clockid = CLOCK_MONOTONIC,
			.wakeup_events = 1,
		};
		/* A hit is 40 bytes: four pages hold 409 between reads. */
		err = agent_ring_open(&pr->ring[pr->nr], &attr, -1, cpu, 4);
		if (err == -ENODEV)
			continue;
		if (err)
			break;
		pr->nr++;
	}
	if (!err && pr->nr)
		return 0;
	while (pr->nr)
		agent_ring_close(&pr->ring[--pr->nr]);
	free(pr->ring);
	return err ? err : -ENODEV;
}

/**
 * agent_uprobe_add() - probe a function of a process's file
 * @pid: the process, which maps the file.
 * @m: the mapping of the file's code, through which it is opened.
 * @t: the file's table, with its executable segments.
 * @vaddr: the function, in the file's layout.
 * @kind: what a hit means.
 *
 * A function probed already is not probed again.
 *
 * Return: 0, or a negative errno of perf_event_open(2).
 */
int agent_uprobe_add(pid_t pid, const struct agent_map *m,
		     const struct agent_table *t, uint64_t vaddr,
		     enum agent_probe_kind kind)
{
	struct probe *pr = &probes[nr_probes];
	char path[PATH_MAX];
	int i, type = uprobe_type(), err;
	uint64_t off;

	if (!agent_uprobes_on || !agent_table_offset(t, vaddr, &off))
		return 0;
	for (i = 0; i < nr_probes; i++)
		if (probes[i].dev == t->id.dev && probes[i].ino == t->id.ino &&
		    probes[i].off == off)
			return 0;
	if (type < 0 || nr_probes == MAX_PROBES)
		return -ENOSPC;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	*pr = (struct probe){
		.dev = t->id.dev, .ino = t->id.ino, .off = off, .kind = kind,
	};
	err = probe_open(pr, path, type);
	if (err) {
		agent_log(1, "%d: %s: no uprobe: %s\n", (int)pid, m->path,
			  strerror(-err));
		return err;
	}
	nr_probes++;
	return 0;
}

/**
 * agent_uprobe_fds() - the descriptors to poll for hits
 * @pfd: filled with up to @max of them; NULL to count them.
 * @max: room at @pfd.
 *
 * Return: how many there are, one per probe and CPU.
 */
int agent_uprobe_fds(struct pollfd *pfd, int max)
{
	int i, j, n = 0;

	for (i = 0; i < nr_probes; i++)
		for (j = 0; j < probes[i].nr; j++, n++)
			if (pfd && n < max)
				pfd[n] = (struct pollfd){
					.fd = probes[i].ring[j].fd,
					.events = POLLIN,
				};
	return n;
}

/* A hit, kept for its turn. */
static void uprobe_record(const char *rec, void *arg)
{
	const struct hit_sample *r = (const void *)rec;
	const struct probe *pr = arg;

	struct hit *n;

	if (r->h.type != PERF_RECORD_SAMPLE || r->h.size < sizeof(*r))
		return;
	if (nr_hits == cap_hits) {
		n = realloc(hits, (cap_hits * 2 + 64) * sizeof(*n));
		if (!n) {
			agent_log(1, "uprobe hit dropped: %s\n",
				  strerror(ENOMEM));
			return;
		}
		hits = n;
		cap_hits = cap_hits * 2 + 64;
	}
	hits[nr_hits++] = (struct hit){
		.time = r->time, .arg = r->abi ? r->di : 0, .pid = r->pid,
		.kind = pr->kind,
	};
}

static int hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * One hit, in its turn: the process's list or registry changed.  False
 * for a process the agent does not know (yet).
 */
static bool hit_act(const struct hit *h, struct agent_stats *st)
{
	struct agent_proc *p = agent_proc_find(h->pid);
	int err;

	if (!p && agent_all)
		p = agent_proc_get(h->pid, &err);
	if (!p)
		return false;
	switch (h->kind) {
	case AGENT_PROBE_GDB_JIT:
		agent_jit_walk(p, st);
		break;
	case AGENT_PROBE_FRAME_REG:
		if (h->arg)
			agent_frames_add(p, h->arg, st);
		break;
	case AGENT_PROBE_FRAME_DEREG:
		if (h->arg)
			agent_frames_remove(p, h->arg, st);
		break;
	}
	return true;
}

/**
 * agent_uprobe_read() - act on every hit, in the order they were taken
 * @st: what was done, added to.
 *
 * A hit of a process the agent does not know is kept for the next read:
 * a child whose fork record the agent reads after the hit is known then,
 * and the hit still comes in its turn.  One unknown then is not followed.
 */
void agent_uprobe_read(struct agent_stats *st)
{
	size_t k, kept = 0;
	int i, j;

	nr_hits = nr_kept;
	for (i = 0; i < nr_probes; i++)
		for (j = 0; j < probes[i].nr; j++)
			agent_ring_read(&probes[i].ring[j], uprobe_record,
					&probes[i]);
	qsort(hits, nr_hits, sizeof(hits[0]), hit_cmp);
	for (k = 0; k < nr_hits; k++) {
		if (hit_act(&hits[k], st) || hits[k].again)
			continue;
		hits[kept] = hits[k];
		hits[kept++].again = true;
	}
	nr_kept = kept;
}

/**
 * agent_uprobes_close() - remove every probe
 */
void agent_uprobes_close(void)
{
	while (nr_probes) {
		struct probe *pr = &probes[--nr_probes];

		while (pr->nr)
			agent_ring_close(&pr->ring[--pr->nr]);
		free(pr->ring);
	}
	free(hits);
	hits = NULL;
	cap_hits = 0;
	nr_hits = 0;
	nr_kept = 0;
}
