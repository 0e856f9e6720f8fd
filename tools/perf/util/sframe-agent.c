// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-agent for perf record --call-graph=sframe: the kernel walks a
 * user stack with the tables the process registered, and a process
 * built without .sframe, or one already running, registered none.
 * sframe-agent(1) registers them from outside; perf record starts it
 * for what it records, so that one command does:
 *
 *  - a workload is run as "sframe-agent -- COMMAND", which execs
 *    COMMAND in place (same pid) with its tables from its first
 *    instruction;
 *  - -p PID[,PID...] and -a start "sframe-agent -p PIDS" or
 *    "sframe-agent -a", which follows the processes, and perf waits
 *    until the agent has attached to them before it records; the agent
 *    is stopped with SIGINT at the end and prints its summary.
 *
 * The agent is a grandchild, not perf's child: perf record's SIGCHLD
 * and wait() belong to its workload.  It is named by the environment's
 * PERF_SFRAME_AGENT, default "sframe-agent" in $PATH; "none" turns it
 * off.  Without it perf records as before, with the tables processes
 * registered themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "debug.h"
#include "sframe-agent.h"
#include "target.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif

/* How long perf waits for the agent's first attach: a cold cache. */
#define AGENT_READY_MS		120000
/* How long it waits for the agent's summary at the end. */
#define AGENT_STOP_MS		10000

/* The agent's path: PERF_SFRAME_AGENT, or sframe-agent in $PATH. */
static const char *agent_path(char *buf, size_t size)
{
	const char *name = getenv("PERF_SFRAME_AGENT"), *dirs, *end;
	size_t len;

	if (name && !strcmp(name, "none"))
		return NULL;
	if (name && *name)
		return access(name, X_OK) ? NULL : name;
	dirs = getenv("PATH");
	while (dirs && *dirs) {
		end = strchrnul(dirs, ':');
		len = end - dirs;
		if (len && len + sizeof("/sframe-agent") <= size) {
			snprintf(buf, size, "%.*s/sframe-agent", (int)len,
				 dirs);
			if (!access(buf, X_OK))
				return buf;
		}
		dirs = *end ? end + 1 : end;
	}
	return NULL;
}

/* The workload's command line, with "AGENT --" in front of it. */
static int agent_wrap(struct sframe_agent *agent, const char *path,
		      int *argc, const char ***argv)
{
	const char **v = calloc(*argc + 3, sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[0] = strdup(path);
	if (!v[0]) {
		free(v);
		return -ENOMEM;
	}
	v[1] = "--";
	memcpy(v + 2, *argv, *argc * sizeof(*v));
	agent->argv = v;
	*argv = v;
	*argc += 2;
	return 0;
}

/*
 * The grandchild: the agent, its ready descriptor @wfd.  The child in
 * between writes the agent's pid to @wfd and exits.
 */
static void agent_exec(const char *path, const struct target *target,
		       int wfd)
{
	char fd_arg[32];
	pid_t pid;

	pid = fork();
	if (pid) {
		if (pid > 0 && write(wfd, &pid, sizeof(pid)) != sizeof(pid))
			pid = -1;
		_exit(pid > 0 ? 0 : 1);
	}
	snprintf(fd_arg, sizeof(fd_arg), "--ready-fd=%d", wfd);
	if (target->pid)
		execlp(path, path, fd_arg, "-p", target->pid, NULL);
	else
		execlp(path, path, fd_arg, "-a", NULL);
	_exit(127);
}

/* Read @size bytes from @fd within @ms; false at its end or the timeout. */
static bool read_within(int fd, void *buf, size_t size, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && read(fd, buf, size) == (ssize_t)size;
}

/* -p or -a: the agent, started and attached. */
static int agent_spawn(struct sframe_agent *agent, const char *path,
		       const struct target *target)
{
	int fds[2], status;
	char ready;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!pid) {
		close(fds[0]);
		/* The agent keeps the write end; it alone closes it. */
		fcntl(fds[1], F_SETFD, 0);
		agent_exec(path, target, fds[1]);
	}
	close(fds[1]);
	waitpid(pid, &status, 0);
	if (!read_within(fds[0], &agent->pid, sizeof(agent->pid), 1000)) {
		close(fds[0]);
		return -ECHILD;
	}
	agent->pidfd = syscall(__NR_pidfd_open, agent->pid, 0);
	/* A byte once attached; the pipe's end if it exited before. */
	if (!read_within(fds[0], &ready, 1, AGENT_READY_MS)) {
		close(fds[0]);
		sframe_agent__stop(agent);
		return -ECHILD;
	}
	close(fds[0]);
	return 0;
}

/**
 * sframe_agent__start() - start sframe-agent for what perf records
 * @agent: filled in; sframe_agent__stop() it at the end.
 * @target: what perf records.
 * @argc: the workload's argument count, two more if it is wrapped.
 * @argv: the workload's command line, the agent's in front if wrapped.
 *
 * Nothing is started for a target the agent cannot follow (threads,
 * users, cgroups), or when the agent is not there; perf then records
 * with the tables the processes registered themselves.
 *
 * Return: 0, or a negative errno after a warning; perf records anyway.
 */
int sframe_agent__start(struct sframe_agent *agent,
			const struct target *target, int *argc,
			const char ***argv)
{
	char buf[PATH_MAX];
	const char *path;
	int err;

	*agent = (struct sframe_agent){ .pidfd = -1 };
	/* target__validate() copies -p's list to @tid: -t alone is threads. */
	if ((target->tid && !target->pid) || target->uid_str ||
	    (!target->pid && !target->system_wide && !target->cpu_list &&
	     !*argc))
		return 0;
	path = agent_path(buf, sizeof(buf));
	if (!path) {
		/* Not installed is no error; a name that is not there is. */
		if (getenv("PERF_SFRAME_AGENT") &&
		    strcmp(getenv("PERF_SFRAME_AGENT"), "none"))
			pr_warning("PERF_SFRAME_AGENT=%s cannot be run\n",
				   getenv("PERF_SFRAME_AGENT"));
		else
			pr_debug("no sframe-agent in $PATH\n");
		return 0;
	}
	if (target->pid || target->system_wide || target->cpu_list)
		err = agent_spawn(agent, path, target);
	else
		err = agent_wrap(agent, path, argc, argv);
	if (err)
		pr_warning("%s did not start (%s): only the tables processes registered themselves are used\n",
			   path, strerror(-err));
	return err;
}

/**
 * sframe_agent__stop() - stop the agent perf record started
 * @agent: the agent, or none.
 *
 * It prints its summary as it exits: perf waits for that, a while.
 */
void sframe_agent__stop(struct sframe_agent *agent)
{
	struct pollfd p = { .fd = agent->pidfd, .events = POLLIN };

	if (agent->pidfd >= 0) {
		/* Not exited yet: the pid is still the agent's. */
		if (poll(&p, 1, 0) == 0 && !kill(agent->pid, SIGINT))
			poll(&p, 1, AGENT_STOP_MS);
		close(agent->pidfd);
	} else if (agent->pid > 0) {
		/* A kernel without pidfds: the pid, unchecked. */
		kill(agent->pid, SIGINT);
	}
	if (agent->argv)
		free((char *)agent->argv[0]);
	free(agent->argv);
	*agent = (struct sframe_agent){ .pidfd = -1 };
}
