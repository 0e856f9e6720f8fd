// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's loop: it sleeps until a side-band record, a uprobe hit or
 * the exit of a process it waits for wakes it, reads everything that
 * came, and sleeps again.  Every ring of every CPU is in the poll set,
 * which is sized to them: a ring left out wakes nobody, and its records
 * would wait for another ring's to be read, or be lost.  The set is
 * rebuilt each turn, since a process attached meanwhile may have added
 * probes.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sframe_agent.h"

/* Set by the handler, read by the loop: sig_atomic_t, as C requires. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/**
 * agent_run_signals() - SIGINT and SIGTERM end the loop, not the agent
 */
void agent_run_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

/**
 * agent_run_init() - room for what a run follows
 * @r: the run, zeroed here.
 * @procs: how many processes it follows and waits for, at most.
 *
 * Return: 0, or -ENOMEM.
 */
int agent_run_init(struct agent_run *r, size_t procs)
{
	*r = (struct agent_run){ 0 };
	r->f = calloc(procs, sizeof(*r->f));
	r->pidfd = calloc(procs, sizeof(*r->pidfd));
	if (r->f && r->pidfd)
		return 0;
	agent_run_close(r);
	return -ENOMEM;
}

/**
 * agent_run_follow() - follow a process, or every process
 * @r: the run.
 * @pid: the process, or -1.
 *
 * Return: 0, or agent_follow_open()'s error, which is logged.
 */
int agent_run_follow(struct agent_run *r, pid_t pid)
{
	int err;

	err = agent_follow_open(pid, &r->f[r->nr_f]);
	if (err) {
		agent_log(0, "cannot follow %s: %s\n",
			  pid > 0 ? "the process" : "processes", strerror(-err));
		return err;
	}
	r->nr_f++;
	return 0;
}

/**
 * agent_run_wait() - have the loop end when a process exits
 * @r: the run.
 * @pid: the process; one that is gone already is not waited for.
 */
void agent_run_wait(struct agent_run *r, pid_t pid)
{
	r->pidfd[r->nr_pidfd++] = agent_pidfd_open(pid);
}

/* @had descriptors, of which @room were filled in: how many were. */
static int filled(int had, int room)
{
	return had < room ? had : room;
}

/*
 * The poll set: every ring and every pidfd.  Should it not grow, the
 * set holds what fits and *@partial says that the loop must not sleep
 * for long on it.
 */
static int run_fds(struct agent_run *r, bool *partial)
{
	int want = agent_uprobe_fds(NULL, 0) + r->nr_pidfd;
	struct pollfd *p;
	int i, n = 0;

	for (i = 0; i < r->nr_f; i++)
		want += agent_follow_fds(r->f[i], NULL, 0);
	if (want > r->cap_pfd) {
		p = realloc(r->pfd, want * sizeof(*p));
		if (p) {
			r->pfd = p;
			r->cap_pfd = want;
		}
	}
	*partial = want > r->cap_pfd;
	for (i = 0; i < r->nr_f; i++)
		n += filled(agent_follow_fds(r->f[i], r->pfd + n,
					     r->cap_pfd - n), r->cap_pfd - n);
	n += filled(agent_uprobe_fds(r->pfd + n, r->cap_pfd - n),
		    r->cap_pfd - n);
	for (i = 0; i < r->nr_pidfd && n < r->cap_pfd; i++)
		if (r->pidfd[i] >= 0)
			r->pfd[n++] = (struct pollfd){
				.fd = r->pidfd[i], .events = POLLIN,
			};
	return n;
}

/* Have the processes it waits for exited? */
static bool run_done(struct agent_run *r)
{
	struct pollfd p;
	int i, left = 0;

	for (i = 0; i < r->nr_pidfd; i++) {
		p = (struct pollfd){ .fd = r->pidfd[i], .events = POLLIN };
		if (r->pidfd[i] < 0)
			continue;
		if (poll(&p, 1, 0) == 1) {
			close(r->pidfd[i]);
			r->pidfd[i] = -1;
		} else {
			left++;
		}
	}
	return r->nr_pidfd && !left;
}

/**
 * agent_run_loop() - act on what comes until the end
 * @r: the run.
 * @st: what was done, added to.
 *
 * Until the processes it waits for are gone, or a signal ends it.  The
 * loop sleeps with no timeout: SIGINT and SIGTERM are blocked but inside
 * ppoll(), so that one that comes before the call is not lost.  Only a
 * poll set that could not grow has it wake every 10 ms.
 */
void agent_run_loop(struct agent_run *r, struct agent_stats *st)
{
	const struct timespec tick = { .tv_nsec = 10000000 };
	sigset_t block, old, wait;
	bool partial;
	int i, n;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	wait = old;
	sigdelset(&wait, SIGINT);
	sigdelset(&wait, SIGTERM);
	for (;;) {
		n = run_fds(r, &partial);
		ppoll(r->pfd, n, partial ? &tick : NULL, &wait);
		for (i = 0; i < r->nr_f; i++)
			agent_follow_read(r->f[i], st);
		agent_uprobe_read(st);
		if (run_done(r))
			break;
		if (interrupted)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	for (i = 0; i < r->nr_f; i++)
		agent_follow_read(r->f[i], st);
}

/**
 * agent_run_close() - stop following, and free the run
 * @r: the run.
 */
void agent_run_close(struct agent_run *r)
{
	int i;

	for (i = 0; i < r->nr_f; i++)
		agent_follow_close(r->f[i]);
	for (i = 0; i < r->nr_pidfd; i++)
		if (r->pidfd[i] >= 0)
			close(r->pidfd[i]);
	free(r->f);
	free(r->pidfd);
	free(r->pfd);
	*r = (struct agent_run){ 0 };
}
