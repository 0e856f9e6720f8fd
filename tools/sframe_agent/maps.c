// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process's executable mappings, from /proc/PID/maps: the code that
 * may need a table.  Mappings of files, and the vDSO, which has none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_agent.h"

static int maps_add(struct agent_maps *maps, const struct agent_map *m)
{
	struct agent_map *n;

	n = realloc(maps->map, (maps->nr + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	maps->map = n;
	maps->map[maps->nr++] = *m;
	return 0;
}

/*
 * One line: "start-end perms offset dev inode path".  Only executable
 * mappings of files (a path that starts with "/") and the vDSO count.
 */
static int maps_line(struct agent_maps *maps, const char *line)
{
	struct agent_map m = { 0 };
	unsigned long long start, end, off;
	char perms[8];
	int name = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms,
		   &off, &name) < 4 || !name || perms[2] != 'x')
		return 0;
	m.start = start;
	m.end = end;
	m.offset = off;
	line += name;
	if (!strncmp(line, "[vdso]", 6)) {
		m.path = NULL;
	} else if (line[0] == '/') {
		m.path = strndup(line, strcspn(line, "\n"));
		if (!m.path)
			return -ENOMEM;
	} else {
		return 0;
	}
	if (maps_add(maps, &m)) {
		free(m.path);
		return -ENOMEM;
	}
	return 0;
}

/**
 * agent_maps_read() - read a process's executable mappings
 * @pid: the process.
 * @maps: filled in; agent_maps_free() it.
 *
 * Return: 0, or a negative errno (-ESRCH for a process that is gone).
 */
int agent_maps_read(pid_t pid, struct agent_maps *maps)
{
	char path[64], *line = NULL;
	size_t len = 0;
	int err = 0;
	FILE *f;

	memset(maps, 0, sizeof(*maps));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && getline(&line, &len, f) > 0)
		err = maps_line(maps, line);
	free(line);
	fclose(f);
	if (err)
		agent_maps_free(maps);
	return err;
}

/**
 * agent_maps_free() - free what agent_maps_read() read
 * @maps: the mappings.
 */
void agent_maps_free(struct agent_maps *maps)
{
	size_t i;

	for (i = 0; i < maps->nr; i++)
		free(maps->map[i].path);
	free(maps->map);
	memset(maps, 0, sizeof(*maps));
}

/**
 * agent_open_mapping() - open the file a process maps at an address
 * @pid: the process.
 * @addr: an address inside one of its file mappings.
 *
 * Through /proc/PID/map_files, so that it is the very file mapped.
 *
 * Return: a descriptor, or a negative errno (-ENOENT if no file is
 * mapped at @addr).
 */
int agent_open_mapping(pid_t pid, uint64_t addr)
{
	unsigned long long start, end;
	char path[96], *line = NULL;
	size_t len = 0;
	int fd = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &len, f) > 0) {
		if (sscanf(line, "%llx-%llx", &start, &end) != 2 ||
		    addr < start || addr >= end || !strchr(line, '/'))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx",
			 (int)pid, start, end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		break;
	}
	free(line);
	fclose(f);
	return fd;
}
