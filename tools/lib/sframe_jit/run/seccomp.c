// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whether a seccomp filter stands between sframe-run and the kernel's
 * calls.  An allow-list that does not name them (systemd's
 * SystemCallFilter=, a container's profile) kills the program, or fails
 * the calls, at its first registration: sframe-run then stays out of
 * the program, as on a kernel without the calls.
 *
 * A filter cannot be read back, so the calls are tried, with arguments
 * that every kernel refuses before it does anything (a size of 0:
 * EINVAL), in a child that vfork() made: a filter that kills, kills the
 * child alone.  Only a process in seccomp's filter mode pays for it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seccomp.h"
#include "sframe_nr.h"

/* The calls sframe-run makes, to 0. */
static const long calls[] = {
	__NR_sframe_jit_open, __NR_sframe_register, __NR_sframe_unregister, 0
};

/* The Seccomp: line of /proc/self/status says 2, filter mode. */
static bool filter_mode(void)
{
	char line[128];
	bool filter = false;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Seccomp:", 8)) {
			filter = strtol(line + 8, NULL, 10) == 2;
			break;
		}
	}
	fclose(f);
	return filter;
}

/* In the vfork() child: 0 if the kernel itself refused each call. */
static int probe(void)
{
	size_t i;

	for (i = 0; calls[i]; i++)
		if (syscall(calls[i], NULL, 0) != -1 || errno != EINVAL)
			return 1;
	return 0;
}

/**
 * sframe_run__calls_filtered() - whether seccomp keeps the calls away
 *
 * Return: true if a seccomp filter is in force and one of the calls
 * sframe-run makes did not reach the kernel (the filter killed the
 * probe, or failed the call), or the probe could not be made; false
 * without a filter, or with one that lets the calls through.
 */
bool sframe_run__calls_filtered(void)
{
	int status = 0, saved = errno;
	pid_t pid, got = -1;

	if (!filter_mode())
		return false;
	pid = vfork();
	if (pid == 0)
		_exit(probe());
	/* ECHILD if SIGCHLD is ignored, which reaps it: taken as filtered. */
	if (pid > 0) {
		do
			got = waitpid(pid, &status, 0);
		while (got < 0 && errno == EINTR);
	}
	errno = saved;
	return got != pid || !WIFEXITED(status) || WEXITSTATUS(status);
}
