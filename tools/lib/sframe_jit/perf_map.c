// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The perf map: one "START SIZE NAME" line per function, in hexadecimal,
 * appended to /tmp/perf-PID.map, where perf report looks for the names
 * of JIT code.
 *
 * Each registry opens its own descriptor with O_APPEND and writes each
 * line with a single write(): two registries, or two processes, that
 * append to the same file interleave whole lines, with no state shared
 * between them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sframe_jit_internal.h"

/* Longer names are cut; perf's own symbol names stop at 512 bytes. */
#define PERF_MAP_LINE	640

static int perf_map_reopen(struct sframe_jit_perf_map *pm)
{
	char buf[sizeof("/tmp/perf-.map") + 3 * sizeof(pid_t)];
	const char *path = pm->path;
	pid_t pid = getpid();
	int fd;

	if (!path) {
		snprintf(buf, sizeof(buf), "/tmp/perf-%d.map", (int)pid);
		path = buf;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (pm->fd >= 0)
		close(pm->fd);
	pm->fd = fd;
	pm->pid = pid;
	return 0;
}

/**
 * sframe_jit__perf_map_open() - open a registry's perf map
 * @pm: the writer to set up.
 * @path: the file, or NULL for /tmp/perf-PID.map.
 *
 * Return: 0, or a negative errno of open(2) or of an allocation.
 */
int sframe_jit__perf_map_open(struct sframe_jit_perf_map *pm, const char *path)
{
	int err;

	pm->fd = -1;
	pm->nr_errors = 0;
	pm->path = NULL;
	if (path) {
		pm->path = strdup(path);
		if (!pm->path)
			return -ENOMEM;
	}
	err = pthread_mutex_init(&pm->lock, NULL);
	if (err) {
		free(pm->path);
		return -err;
	}
	err = perf_map_reopen(pm);
	if (err) {
		pthread_mutex_destroy(&pm->lock);
		free(pm->path);
	}
	return err;
}

/**
 * sframe_jit__perf_map_close() - close a perf map, if open
 * @pm: the writer.  The file stays, for perf to read.
 */
void sframe_jit__perf_map_close(struct sframe_jit_perf_map *pm)
{
	if (pm->fd < 0)
		return;
	close(pm->fd);
	pm->fd = -1;
	pthread_mutex_destroy(&pm->lock);
	free(pm->path);
	pm->path = NULL;
}

/* The line for a function, cut to fit, with no newline in its name. */
static size_t perf_map_line(char *line, uint64_t start, uint64_t size,
			    const char *name)
{
	size_t len, i, head;
	int n;

	n = snprintf(line, PERF_MAP_LINE, "%" PRIx64 " %" PRIx64 " ",
		     start, size);
	head = n;
	len = strnlen(name, PERF_MAP_LINE - 1 - head);
	memcpy(line + head, name, len);
	for (i = head; i < head + len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[head + len] = '\n';
	return head + len + 1;
}

/**
 * sframe_jit__perf_map_write() - append one function's line
 * @pm: the writer.
 * @start: the function's address.
 * @size: its size.
 * @name: its name; newlines become spaces, and a long one is cut.
 *
 * A child created by fork() writes the functions it adds to its own
 * /tmp/perf-PID.map, which it opens on its first line; a path given at
 * creation is kept.
 *
 * Return: 0, or a negative errno; a failure is counted.
 */
int sframe_jit__perf_map_write(struct sframe_jit_perf_map *pm,
			       uint64_t start, uint64_t size, const char *name)
{
	char line[PERF_MAP_LINE];
	size_t len;
	ssize_t n;
	int err = 0;

	len = perf_map_line(line, start, size, name);
	pthread_mutex_lock(&pm->lock);
	if (!pm->path && getpid() != pm->pid)
		err = perf_map_reopen(pm);
	if (!err) {
		do {
			n = write(pm->fd, line, len);
		} while (n < 0 && errno == EINTR);
		if (n < 0)
			err = -errno;
		else if ((size_t)n != len)
			err = -EIO;
	}
	if (err)
		pm->nr_errors++;
	pthread_mutex_unlock(&pm->lock);
	return err;
}

/**
 * sframe_jit__perf_map_errors() - lines that could not be written
 * @pm: the writer, open or not.
 *
 * Return: the count.
 */
uint64_t sframe_jit__perf_map_errors(struct sframe_jit_perf_map *pm)
{
	uint64_t n;

	if (pm->fd < 0)
		return 0;
	pthread_mutex_lock(&pm->lock);
	n = pm->nr_errors;
	pthread_mutex_unlock(&pm->lock);
	return n;
}
