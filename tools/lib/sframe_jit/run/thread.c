// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-run's own threads: the start-up conversions and the worker that
 * publishes what JITs register.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "sframe_run.h"

/**
 * sframe_run__thread() - start one of sframe-run's threads
 * @fn: what it runs.
 * @name: its name, as ps and perf show it.
 *
 * Detached, for nothing joins it, and with every signal blocked, so that
 * the program's signals go to the program's own threads.
 *
 * Return: true if the thread runs.
 */
bool sframe_run__thread(void *(*fn)(void *arg), const char *name)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t tid;
	int err;

	if (pthread_attr_init(&attr))
		return false;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&tid, &attr, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!err)
		pthread_setname_np(tid, name);
	return !err;
}
