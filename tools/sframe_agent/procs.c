// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The processes the agent gave tables to: a pidfd each, and the ranges
 * it registered there, so that code mapped later where unmapped code
 * was can take the range over (the kernel keeps an agent's registration
 * past munmap), and so that a range registered once is not again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sframe_agent.h"

#define PROC_BUCKETS	1024

static struct agent_proc *procs[PROC_BUCKETS];

static struct agent_proc **proc_slot(pid_t pid)
{
	struct agent_proc **p = &procs[(unsigned int)pid % PROC_BUCKETS];

	while (*p && (*p)->pid != pid)
		p = &(*p)->next;
	return p;
}

/**
 * agent_proc_get() - the state of a process, made on first use
 * @pid: the process.
 * @err: set to a negative errno on failure (-ESRCH, -ENOMEM).
 *
 * Return: the state, or NULL.
 */
struct agent_proc *agent_proc_get(pid_t pid, int *err)
{
	struct agent_proc **slot = proc_slot(pid), *p;
	int fd;

	if (*slot)
		return *slot;
	fd = agent_pidfd_open(pid);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	p->pid = pid;
	p->pidfd = fd;
	*slot = p;
	return p;
}

/**
 * agent_proc_find() - the state of a process, if the agent has one
 * @pid: the process.
 *
 * Return: the state, or NULL.
 */
struct agent_proc *agent_proc_find(pid_t pid)
{
	return *proc_slot(pid);
}

/**
 * agent_proc_exec() - a process exec'd: its registrations went with its mm
 * @pid: the process.
 */
void agent_proc_exec(pid_t pid)
{
	struct agent_proc *p = *proc_slot(pid);

	if (p) {
		p->nr = 0;
		agent_jit_forget(p);
		agent_frames_forget(p);
	}
}

/* A copy of @nr elements of @size at @src, or NULL (none, or no memory). */
static void *dup_array(const void *src, size_t nr, size_t size, size_t *cap)
{
	void *d = nr ? malloc(nr * size) : NULL;

	*cap = d ? nr : 0;
	if (d)
		memcpy(d, src, nr * size);
	return d;
}

/**
 * agent_proc_fork() - a process the agent knows forked
 * @parent: the process.
 * @child: its child, which has a copy of each of the agent's
 *	registrations, as the kernel copies them at fork.
 *
 * The child is known from its fork on, with what the agent registered
 * for the parent: a JIT in the child that takes back code the parent
 * registered removes the child's copy.
 */
void agent_proc_fork(pid_t parent, pid_t child)
{
	struct agent_proc *p = agent_proc_find(parent), *c;
	int err;

	if (!p || agent_proc_find(child))
		return;
	c = agent_proc_get(child, &err);
	if (!c)
		return;
	c->range = dup_array(p->range, p->nr, sizeof(*p->range), &c->cap);
	c->nr = c->cap;
	c->jit = dup_array(p->jit, p->nr_jit, sizeof(*p->jit), &c->cap_jit);
	c->nr_jit = c->cap_jit;
	c->jit_desc = p->jit_desc;
	c->eh = dup_array(p->eh, p->nr_eh, sizeof(*p->eh), &c->cap_eh);
	c->nr_eh = c->cap_eh;
	c->eh_attached = p->eh_attached;
}

/**
 * agent_proc_exit() - forget a process that exited
 * @pid: the process.
 */
void agent_proc_exit(pid_t pid)
{
	struct agent_proc **slot = proc_slot(pid), *p = *slot;

	if (!p)
		return;
	*slot = p->next;
	close(p->pidfd);
	agent_jit_forget(p);
	agent_frames_forget(p);
	free(p->range);
	free(p);
}

/**
 * agent_proc_has() - did the agent register exactly this range?
 * @p: the process.
 * @start: the range's start.
 * @end: its end.
 *
 * Return: true if it did.
 */
bool agent_proc_has(const struct agent_proc *p, uint64_t start, uint64_t end)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		if (p->range[i].start == start && p->range[i].end == end)
			return true;
	return false;
}

/**
 * agent_proc_add() - note a range the agent registered
 * @p: the process.
 * @start: the range's start.
 * @end: its end.
 *
 * Return: 0 or -ENOMEM.
 */
int agent_proc_add(struct agent_proc *p, uint64_t start, uint64_t end)
{
	struct agent_range *r;

	if (p->nr == p->cap) {
		r = realloc(p->range, (p->cap * 2 + 8) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		p->range = r;
		p->cap = p->cap * 2 + 8;
	}
	p->range[p->nr++] = (struct agent_range){ start, end };
	return 0;
}

/**
 * agent_proc_clear() - unregister the agent's ranges that overlap one
 * @p: the process.
 * @start: the range's start.
 * @end: its end.
 *
 * The code they described was unmapped, for new code is mapped there.
 *
 * Return: how many were removed.
 */
unsigned int agent_proc_clear(struct agent_proc *p, uint64_t start,
			      uint64_t end)
{
	unsigned int n = 0;
	size_t i = 0;

	while (i < p->nr) {
		if (p->range[i].start >= end || p->range[i].end <= start) {
			i++;
			continue;
		}
		agent_unregister(p->pidfd, p->range[i].start, p->range[i].end);
		p->range[i] = p->range[--p->nr];
		n++;
	}
	return n;
}

/**
 * agent_procs_free() - forget every process
 */
void agent_procs_free(void)
{
	struct agent_proc *p;
	unsigned int i;

	for (i = 0; i < PROC_BUCKETS; i++)
		while ((p = procs[i]))
			agent_proc_exit(p->pid);
}
