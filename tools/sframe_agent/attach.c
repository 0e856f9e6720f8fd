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

/* The file of a mapping, as the process has it. */
static int map_open(pid_t pid, const struct agent_map *m)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* The vDSO's image, read from the process. */
static struct agent_table *vdso_table(pid_t pid, const struct agent_map *m)
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
	free(buf);
	return t;
}

static struct agent_table *map_table(pid_t pid, const struct agent_map *m)
{
	struct agent_table *t;
	int fd;

	if (!m->path)
		return vdso_table(pid, m);
	fd = map_open(pid, m);
	if (fd < 0) {
		agent_log(1, "%d: %s: %s\n", (int)pid, m->path, strerror(errno));
		return NULL;
	}
	t = agent_table_get(fd, m->path);
	close(fd);
	return t;
}

/*
 * Register @t for the executable segment that @m maps: the one whose
 * page-aligned file offset is the mapping's.
 */
static int map_register(int pidfd, const struct agent_table *t,
			const struct agent_map *m)
{
	const struct agent_segment *s;
	uint64_t bias, start, end;
	unsigned int i;

	for (i = 0; i < t->nr_seg; i++) {
		s = &t->seg[i];
		if ((s->offset & PAGE_MASK) != m->offset)
			continue;
		bias = m->start - (s->vaddr & PAGE_MASK);
		start = bias + s->vaddr;
		end = start + s->memsz;
		if (end > m->end)
			end = m->end;
		return agent_register(pidfd, t, bias, start, end);
	}
	return -ENOEXEC;
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
	struct agent_table *t;
	int pidfd, err;
	size_t i;

	pidfd = agent_pidfd_open(pid);
	if (pidfd < 0)
		return pidfd;
	err = agent_maps_read(pid, &maps);
	if (err) {
		close(pidfd);
		/* /proc/PID/maps asks for less than the agent's call. */
		return err == -EACCES ? -EPERM : err;
	}
	for (i = 0; i < maps.nr; i++) {
		st->maps++;
		t = map_table(pid, &maps.map[i]);
		if (!t || t->kind == AGENT_TABLE_FAILED) {
			st->failed++;
			continue;
		}
		if (t->kind == AGENT_TABLE_NONE) {
			st->no_table++;
			continue;
		}
		err = map_register(pidfd, t, &maps.map[i]);
		/* Nothing more can be done for this process. */
		if (err == -EPERM || err == -ESRCH)
			break;
		map_count(st, t, err, pid, &maps.map[i]);
		err = 0;
	}
	agent_maps_free(&maps);
	close(pidfd);
	return err;
}
