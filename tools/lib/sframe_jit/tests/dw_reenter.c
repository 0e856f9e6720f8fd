// SPDX-License-Identifier: GPL-2.0
/*
 * The library's load of libdw (dw.c), entered again from inside the
 * dlopen() that loads it, as sframe-run's dlopen() hook does when it
 * converts the objects just loaded on the thread that loads them:
 *
 *   dw_reenter
 *
 * This program's dlopen() stands for that hook: it passes the call on
 * and then, for libdw, asks the library for libdw again on the same
 * thread and starts a thread that asks too.  The inner call must get
 * NULL at once rather than wait for its own load; the other thread and
 * the outer call must get libdw's functions.  A deadlock ends in the
 * watchdog, as a failure.  Linked without libdw, so that the library's
 * dlopen() loads it.  Ends with "N passed, N failed".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sframe_jit_internal.h"

/* Seconds: a load takes milliseconds, even under emulation. */
#define WATCHDOG_S	120

static bool nested;
static const struct sframe_jit__dw *inner;
static const struct sframe_jit__dw *other;
static pthread_t other_tid;
static bool other_started;
static int passed, failed;

static void *ask(void *arg)
{
	(void)arg;
	other = sframe_jit__dw();
	return NULL;
}

/**
 * dlopen() - the loader's, then libdw asked for again, as a hook would
 * @file: as for dlopen().
 * @mode: as for dlopen().
 *
 * Return: what the loader's dlopen() returned.
 */
void *dlopen(const char *file, int mode)
{
	void *(*real)(const char *file, int mode) = dlsym(RTLD_NEXT, "dlopen");
	void *h;

	if (!real)
		return NULL;
	h = real(file, mode);
	if (h && file && !strcmp(file, "libdw.so.1") && !nested) {
		nested = true;
		inner = sframe_jit__dw();
		other_started = !pthread_create(&other_tid, NULL, ask, NULL);
	}
	return h;
}

static void result(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* Nothing is printed before the load returns: the counts are these. */
static void watchdog(int sig)
{
	static const char msg[] =
		"not ok - sframe_jit__dw() returns while dlopen() asks for it again (deadlock)\n"
		"0 passed, 1 failed\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(void)
{
	const struct sframe_jit__dw *outer;

	signal(SIGALRM, watchdog);
	alarm(WATCHDOG_S);
	outer = sframe_jit__dw();
	if (other_started)
		pthread_join(other_tid, NULL);
	alarm(0);

	result(nested, "the library loads libdw through dlopen()");
	result(nested && !inner,
	       "a call from inside that dlopen() gets NULL, not a wait for itself");
	result(outer && outer->next_cfi && outer->frame_register,
	       "the outer call gets libdw's functions");
	result(other_started && other == outer,
	       "another thread meanwhile waits for the load and gets them too");
	result(sframe_jit__dw() == outer,
	       "a later call on the loading thread gets them");
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
