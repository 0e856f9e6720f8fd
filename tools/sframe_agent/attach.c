// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attach to a running process: every executable mapping of a file, and
 * the vDSO, gets its file's table, registered from outside.  The files
 * are opened through /proc/PID/map_files, so that the table is that of
 * the very file the process mapped, whatever its mount namespace, or a
 * file deleted or replaced since.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sframe_agent.h"

#define PAGE_MASK	(~4095ULL)

/*
 * The file of a mapping, as the process has it; -ENOENT once the
 * mapping is gone (unmapped, or the process is exiting).  Through the
 * process's root where map_files is refused.
 */
static int map_open(pid_t pid, const struct agent_map *m)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENOENT)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * The vDSO's image, read from the process; NULL with *@gone set if the
 * process has exited.
 */
static struct agent_table *vdso_table(pid_t pid, const struct agent_map *m,
				      bool *gone)
{
	size_t size = m->end - m->start;
	struct iovec local, remote;
	struct agent_table *t;
	void *buf = malloc(size);

	if (!buf)
		return NULL;
	local = (struct iovec){ .iov_base = buf, .iov_len = size };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)m->start,
				 .iov_len = size };
	t = NULL;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)size)
		t = agent_table_of_image(buf, size, "[vdso]");
	else if (errno == ESRCH || errno == EFAULT)
		*gone = true;
	else
		agent_log(1, "%d: [vdso]: %s\n", (int)pid, strerror(errno));
	free(buf);
	return t;
}

/*
 * The table of @m's file; NULL with *@gone set when the mapping is no
 * more, which a record read after the process unmapped it or exited
 * finds.
 */
static struct agent_table *map_table(const struct agent_proc *p,
				     const struct agent_map *m, bool *gone)
{
	struct agent_table *t;
	int fd;

	*gone = false;
	if (!m->path)
		return vdso_table(p->pid, m, gone);
	fd = map_open(p->pid, m);
	if (fd < 0) {
		*gone = fd == -ENOENT;
		if (!*gone)
			agent_log(1, "%d: %s: %s\n", (int)p->pid, m->path,
				  strerror(-fd));
		return NULL;
	}
	t = agent_table_get(fd, m->path);
	close(fd);
	return t;
}

/*
 * The range of the executable segment that @m maps, the one whose
 * page-aligned file offset is the mapping's, and the file's load bias.
 */
static bool map_segment(const struct agent_table *t, const struct agent_map *m,
			uint64_t *bias, uint64_t *start, uint64_t *end)
{
	const struct agent_segment *s;
	unsigned int i;

	for (i = 0; i < t->nr_seg; i++) {
		s = &t->seg[i];
		if ((s->offset & PAGE_MASK) != m->offset)
			continue;
		*bias = m->start - (s->vaddr & PAGE_MASK);
		*start = *bias + s->vaddr;
		*end = *start + s->memsz;
		if (*end > m->end)
			*end = m->end;
		return *start < *end;
	}
	return false;
}

/*
 * Register @t for @m.  A range the agent registered before, for code
 * unmapped since, gives way: the kernel keeps an agent's registration
 * until exec, exit or the agent removes it.
 */
static int map_register(struct agent_proc *p, const struct agent_table *t,
			const struct agent_map *m)
{
	uint64_t bias, start, end;
	int err;

	if (!map_segment(t, m, &bias, &start, &end))
		return -ENOEXEC;
	if (agent_proc_has(p, start, end))
		return -EALREADY;
	err = agent_register(p->pidfd, t, bias, start, end);
	if (err == -EEXIST && agent_proc_clear(p, start, end))
		err = agent_register(p->pidfd, t, bias, start, end);
	if (!err && agent_proc_add(p, start, end))
		err = -ENOMEM;
	return err;
}

static void map_count(struct agent_stats *st, const struct agent_table *t,
		      int err, pid_t pid, const struct agent_map *m)
{
	const char *name = m->path ? m->path : "[vdso]";

	if (!err) {
		st->registered++;
		st->bytes += t->sframe_size;
		st->rows += t->nr_rows;
		st->left += t->nr_left;
		agent_log(2, "%d: %s: registered\n", (int)pid, name);
	} else if (err == -EEXIST) {
		st->own++;
		agent_log(2, "%d: %s: has a table already\n", (int)pid, name);
	} else {
		st->failed++;
		agent_log(1, "%d: %s: %s\n", (int)pid, name, strerror(-err));
	}
}

/*
 * A file that defines the GDB JIT interface: its list is read now, and
 * again each time the process calls __jit_debug_register_code().
 */
static void map_jit(struct agent_proc *p, const struct agent_table *t,
		    const struct agent_map *m, struct agent_stats *st)
{
	uint64_t bias, start, end;

	if (p->jit_desc || !map_segment(t, m, &bias, &start, &end))
		return;
	p->jit_desc = bias + t->jit_desc;
	if (t->jit_reg)
		agent_uprobe_add(p->pid, m, t, t->jit_reg,
				 AGENT_PROBE_GDB_JIT);
	agent_jit_walk(p, st);
}

/* A file with libgcc's frame registry: followed from now on. */
static void map_frames(struct agent_proc *p, const struct agent_table *t,
		       const struct agent_map *m, struct agent_stats *st)
{
	uint64_t bias, start, end;

	if (map_segment(t, m, &bias, &start, &end))
		agent_frames_attach(p, t, m, bias, st);
}

/**
 * agent_map_add() - give one executable mapping of a process its table
 * @p: the process.
 * @m: the mapping.
 * @st: what was done, added to.
 *
 * Return: 0, or -EPERM or -ESRCH when nothing more can be done for the
 * process.
 */
int agent_map_add(struct agent_proc *p, const struct agent_map *m,
		  struct agent_stats *st)
{
	struct agent_table *t;
	bool gone;
	int err;

	t = map_table(p, m, &gone);
	if (gone) {
		st->vanished++;
		return 0;
	}
	st->maps++;
	if (t && t->jit_desc)
		map_jit(p, t, m, st);
	if (t && t->eh_reg)
		map_frames(p, t, m, st);
	if (!t || t->kind == AGENT_TABLE_FAILED) {
		st->failed++;
		return 0;
	}
	if (t->kind == AGENT_TABLE_NONE) {
		st->no_table++;
		return 0;
	}
	err = map_register(p, t, m);
	if (err == -EPERM || err == -ESRCH)
		return err;
	if (err != -EALREADY)
		map_count(st, t, err, p->pid, m);
	return 0;
}

/**
 * agent_attach() - give a running process the tables of its code
 * @pid: the process.
 * @st: what was done, added to.
 *
 * Return: 0, or a negative errno when the process could not be reached:
 * -ESRCH, or -EPERM without the rights process_vm_writev(2) needs.
 */
int agent_attach(pid_t pid, struct agent_stats *st)
{
	struct agent_maps maps;
	struct agent_proc *p;
	int err = 0;
	size_t i;

	p = agent_proc_get(pid, &err);
	if (!p)
		return err;
	err = agent_maps_read(pid, &maps);
	/* /proc/PID/maps asks for less than the agent's call. */
	if (err)
		return err == -EACCES ? -EPERM : err;
	for (i = 0; i < maps.nr && !err; i++)
		err = agent_map_add(p, &maps.map[i], st);
	agent_maps_free(&maps);
	return err;
}
