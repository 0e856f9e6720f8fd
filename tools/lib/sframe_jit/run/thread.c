// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-run's own threads: the start-up conversions and the worker that
 * publishes what JITs register; and which threads, its own or the
 * program's, are doing its work at the moment.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "sframe_run.h"

/*
 * Set while this thread converts or publishes for sframe-run.  A
 * conversion may dlopen() libdw (the library loads it when it first
 * needs it), and that reaches sframe-run's own dlopen(), which must not
 * start another conversion inside the first: it would wait in
 * pthread_once() for the libdw load that its own thread is doing.
 * Initial-exec: the preload comes with the program, in its static TLS.
 */
static __thread bool busy __attribute__((tls_model("initial-exec")));

/**
 * sframe_run__enter() - mark this thread as doing sframe-run's work
 *
 * Return: whether it already was, for sframe_run__leave().
 */
bool sframe_run__enter(void)
{
	bool was = busy;

	busy = true;
	return was;
}

/**
 * sframe_run__leave() - end what sframe_run__enter() began
 * @was: what sframe_run__enter() returned.
 */
void sframe_run__leave(bool was)
{
	busy = was;
}

/**
 * sframe_run__inside() - whether this thread is doing sframe-run's work
 *
 * The loader hooks (dlopen(), dlclose()) do nothing then: the objects
 * a conversion loaded are taken at the next call from the program.
 *
 * Return: true between sframe_run__enter() and sframe_run__leave(), and
 * on sframe-run's own threads.
 */
bool sframe_run__inside(void)
{
	return busy;
}

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
