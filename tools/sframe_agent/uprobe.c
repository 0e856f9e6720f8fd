// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Uprobes where a debugger sets its breakpoints, so that the agent
 * learns of new JIT code without stopping the JIT: on the GDB JIT
 * interface's __jit_debug_register_code(), which a JIT calls after each
 * change to its list.  A perf uprobe event per CPU, for every process
 * that runs the function of that file (one probe serves every process
 * of a program under -a); each hit is a sample that names the process,
 * whose list the agent then reads again.  The process does not wait
 * for the agent: code it registered runs without its table until the
 * agent has read the list, as for code it maps.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sframe_agent.h"

/* Files probed at most: each costs a ring per CPU. */
#define MAX_PROBES	8

struct probe {
	dev_t dev;
	ino_t ino;
	uint64_t off;
	struct agent_ring *ring;
	int nr;
};

static struct probe probes[MAX_PROBES];
static int nr_probes;
bool agent_uprobes_on;

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

/* The file offset of @vaddr, in one of @t's executable segments. */
static bool file_offset(const struct agent_table *t, uint64_t vaddr,
			uint64_t *off)
{
	const struct agent_segment *s;
	unsigned int i;

	for (i = 0; i < t->nr_seg; i++) {
		s = &t->seg[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz) {
			*off = vaddr - s->vaddr + s->offset;
			return true;
		}
	}
	return false;
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
			.sample_type = PERF_SAMPLE_TID,
			.wakeup_events = 1,
		};
		/* A hit is 16 bytes: a page holds 256 between reads. */
		err = agent_ring_open(&pr->ring[pr->nr], &attr, -1, cpu, 1);
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
 *
 * A file probed already is not probed again.
 *
 * Return: 0, or a negative errno of perf_event_open(2).
 */
int agent_uprobe_add(pid_t pid, const struct agent_map *m,
		     const struct agent_table *t, uint64_t vaddr)
{
	struct probe *pr = &probes[nr_probes];
	char path[PATH_MAX];
	int i, type = uprobe_type(), err;
	uint64_t off;

	if (!agent_uprobes_on || !file_offset(t, vaddr, &off))
		return 0;
	for (i = 0; i < nr_probes; i++)
		if (probes[i].dev == t->id.dev && probes[i].ino == t->id.ino &&
		    probes[i].off == off)
			return 0;
	if (type < 0 || nr_probes == MAX_PROBES)
		return -ENOSPC;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	*pr = (struct probe){ .dev = t->id.dev, .ino = t->id.ino, .off = off };
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
 * @fds: filled with up to @max descriptors.
 * @max: room at @fds.
 *
 * Return: how many.
 */
int agent_uprobe_fds(int *fds, int max)
{
	int i, j, n = 0;

	for (i = 0; i < nr_probes; i++)
		for (j = 0; j < probes[i].nr && n < max; j++)
			fds[n++] = probes[i].ring[j].fd;
	return n;
}

/* A hit: the process's list changed; read it again. */
static void uprobe_record(const char *rec, void *arg)
{
	const struct perf_event_header *h = (const void *)rec;
	const __u32 *pid = (const void *)(h + 1);
	struct agent_proc *p;

	if (h->type != PERF_RECORD_SAMPLE)
		return;
	p = agent_proc_find(pid[0]);
	if (p)
		agent_jit_walk(p, arg);
}

/**
 * agent_uprobe_read() - act on every hit
 * @st: what was done, added to.
 */
void agent_uprobe_read(struct agent_stats *st)
{
	int i, j;

	for (i = 0; i < nr_probes; i++)
		for (j = 0; j < probes[i].nr; j++)
			agent_ring_read(&probes[i].ring[j], uprobe_record, st);
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
}
