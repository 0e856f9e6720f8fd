/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_AGENT_H
#define __PERF_SFRAME_AGENT_H

#include <sys/types.h>

struct target;

/**
 * struct sframe_agent - the sframe-agent perf record started
 * @pid: the agent, or 0 when none runs for perf.
 * @pidfd: a pidfd of it, or -1.
 * @argv: the workload's command line, the agent's in front of it.
 */
struct sframe_agent {
	pid_t pid;
	int pidfd;
	const char **argv;
};

int sframe_agent__start(struct sframe_agent *agent,
			const struct target *target, int *argc,
			const char ***argv);
void sframe_agent__stop(struct sframe_agent *agent);

#endif /* __PERF_SFRAME_AGENT_H */
