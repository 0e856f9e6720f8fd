// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The start-up thread: it waits a while, then converts the objects the
 * program started with, so that a program over before the wait pays
 * nothing (Documentation/sframe_jit.rst, "Start-up").
 *
 * A second thread is one the program did not make.  unshare(2) and
 * setns(2) of a user namespace want the caller alone in its process,
 * and fail with EINVAL otherwise: sframe_run__startup_stop()
 * ends the thread, for preload.c to call them again.  The wait is cut
 * short and the conversions left for later; a conversion under way is
 * finished first.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sframe_run.h"

/* How long the caller waits for the kernel to let the thread go. */
#define STARTUP_GONE_MS		1000

/*
 * @running: started and not yet returned; @stop: the thread is to return
 * without waiting longer or converting; @tid: its thread ID, for
 * sframe_run__startup_stop() to see it gone.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sframe_run_tracker *tracker;
	struct timespec until;
	pid_t tid;
	bool running;
	bool stop;
} startup = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

/* A condition on the monotonic clock, which the wait's deadline uses. */
static void cond_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&startup.cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* Until the deadline or a stop; true if it is to convert. */
static bool startup_wait(void)
{
	bool go;

	pthread_mutex_lock(&startup.lock);
	startup.tid = syscall(SYS_gettid);
	while (!startup.stop &&
	       pthread_cond_timedwait(&startup.cond, &startup.lock,
				      &startup.until) != ETIMEDOUT)
		;
	go = !startup.stop;
	pthread_mutex_unlock(&startup.lock);
	return go;
}

/*
 * At the program's own priority.  Not lower: the kernel kills the
 * thread when the program exits, but the process is gone only once the
 * thread has run again to die, and on a busy machine a thread of low
 * priority waits long for that: at nice 19, python3 -c pass on a loaded
 * host took 2.4 to 3.9 times as long under sframe-run, against 1.3 to
 * 1.7 times at nice 0 in the same series.  Nor SCHED_IDLE, which would
 * hold the exit up until a CPU idles.
 */
static void *startup_main(void *arg)
{
	(void)arg;
	sframe_run__enter();
	if (startup_wait()) {
		/* libdw, loaded now rather than at the program's start. */
		sframe_jit__dw();
		sframe_run__tracker_work(startup.tracker, true);
	}
	pthread_mutex_lock(&startup.lock);
	startup.running = false;
	pthread_cond_broadcast(&startup.cond);
	pthread_mutex_unlock(&startup.lock);
	return NULL;
}

/**
 * sframe_run__startup_start() - start the start-up thread
 * @t: the tracker whose deferred objects it converts.
 * @delay_ms: how long it waits first.
 *
 * Return: true if the thread runs; false if it could not be started,
 * and the caller does the work.
 */
bool sframe_run__startup_start(struct sframe_run_tracker *t,
			       unsigned long delay_ms)
{
	long ns;
	bool ok;

	pthread_once(&cond_once, cond_init);
	pthread_mutex_lock(&startup.lock);
	if (startup.running) {
		pthread_mutex_unlock(&startup.lock);
		return true;
	}
	startup.tracker = t;
	clock_gettime(CLOCK_MONOTONIC, &startup.until);
	ns = startup.until.tv_nsec + delay_ms % 1000 * 1000000L;
	startup.until.tv_sec += delay_ms / 1000 + ns / 1000000000L;
	startup.until.tv_nsec = ns % 1000000000L;
	startup.stop = false;
	startup.tid = 0;
	ok = sframe_run__thread(startup_main, "sframe-run");
	startup.running = ok;
	pthread_mutex_unlock(&startup.lock);
	return ok;
}

/* Whether the kernel still has thread @tid in this process. */
static bool thread_alive(pid_t tid)
{
	return !syscall(SYS_tgkill, getpid(), tid, 0) || errno != ESRCH;
}

/**
 * sframe_run__startup_stop() - end the start-up thread now
 *
 * Cuts its wait short, leaving the objects it has not converted for the
 * next sframe_run__startup_start() or the program's next dlopen(); a
 * conversion under way is finished.  Returns once the kernel no longer
 * counts the thread in the process, or after STARTUP_GONE_MS.
 *
 * Return: true if there was a thread to end.
 */
bool sframe_run__startup_stop(void)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	pid_t tid;
	int i;

	pthread_once(&cond_once, cond_init);
	pthread_mutex_lock(&startup.lock);
	if (!startup.running) {
		pthread_mutex_unlock(&startup.lock);
		return false;
	}
	startup.stop = true;
	pthread_cond_broadcast(&startup.cond);
	while (startup.running)
		pthread_cond_wait(&startup.cond, &startup.lock);
	tid = startup.tid;
	pthread_mutex_unlock(&startup.lock);
	/* It returned; the kernel lets it go a moment later. */
	for (i = 0; tid && i < STARTUP_GONE_MS && thread_alive(tid); i++)
		nanosleep(&ms, NULL);
	return true;
}

/**
 * sframe_run__startup_forked() - a forked child has no start-up thread
 *
 * Its tracker takes the deferred objects back (sframe_run__tracker_forked()).
 */
void sframe_run__startup_forked(void)
{
	pthread_mutex_init(&startup.lock, NULL);
	cond_init();
	startup.running = false;
	startup.stop = false;
}
