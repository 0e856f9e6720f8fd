// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-run's interposition of libgcc's frame registration, in a
 * process that preloads libsframe_run.so (make check runs it so, with
 * SFRAME_RUN_NO_KERNEL=1 and SFRAME_RUN_VERBOSE=1):
 *
 *   frames_preload JIT_FRAME_SO
 *
 * jit_frame.so's code and .eh_frame are copied into anonymous memory,
 * as a JIT writes them, and registered through __register_frame() and
 * __register_frame_info(), which reach sframe-run first.  libgcc's
 * unwinder must get through the code while it is registered, and not
 * before nor after (so the test can fail); sframe-run must report the
 * fixture's function with its five rows at registration, and its
 * removal at deregistration, from its worker or, with SFRAME_RUN_SYNC=1,
 * in the registering thread.
 *
 * The first conversion loads libdw (without SFRAME_RUN_SYNC=1 the
 * start-up thread waits for longer than the test runs, and the worker
 * converts first), and that dlopen() reaches sframe-run's own hook on
 * the converting thread: the hook must leave what it loaded to the
 * program's next dlopen(), which then registers libdw with its rows,
 * rather than convert inside the conversion (where libdw's load waits
 * for itself, or its conversion finds no libdw).  A watchdog turns a
 * deadlock into a failure.  Ends with "N passed, N failed".
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include "jit_image.h"

#define MAX_IPS		32
/* Seconds for the whole test, which takes well under one when it works. */
#define WATCHDOG_S	120

struct trace {
	uintptr_t ips[MAX_IPS];
	unsigned int nr;
};

static struct jit_image im;
static int passed, failed;
/* libgcc's struct object, which it keeps as its own; larger than it. */
static long ob[16];

static void result(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (ok)
		passed++;
	else
		failed++;
}

static _Unwind_Reason_Code trace_one(struct _Unwind_Context *ctx, void *arg)
{
	struct trace *t = arg;

	if (t->nr == MAX_IPS)
		return _URC_END_OF_STACK;
	t->ips[t->nr++] = _Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

static void in_jit(void *arg)
{
	_Unwind_Backtrace(trace_one, arg);
}

/* Calls into the copied code, whose frame libgcc must unwind through. */
__attribute__((noinline)) int through_jit(struct trace *t)
{
	void (*jit_call)(void (*fn)(void *), void *arg) =
		(void (*)(void (*)(void *), void *))(uintptr_t)im.text;

	memset(t, 0, sizeof(*t));
	jit_call(in_jit, t);
	/* Not a tail call: the frame must be there to return to. */
	return (int)t->nr;
}

/* Whether the unwinder got past the JIT's frame into through_jit(). */
static bool unwinds_through_jit(void)
{
	uintptr_t caller = (uintptr_t)through_jit;
	struct trace t;
	unsigned int i;

	through_jit(&t);
	for (i = 0; i + 1 < t.nr; i++)
		if (t.ips[i] > im.text && t.ips[i] <= im.text + im.text_size)
			return t.ips[i + 1] > caller && t.ips[i + 1] < caller + 256;
	return false;
}

/* Where sframe-run's verbose lines go: stderr, for the whole run. */
static int log_fd = -1;

static bool logged(const char *want)
{
	static char buf[65536];
	ssize_t n;

	n = pread(log_fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, want);
}

/*
 * Whether sframe-run reported the function's registration (+) or its
 * removal (-) of @begin: a registration comes from sframe-run's worker,
 * within milliseconds, unless SFRAME_RUN_SYNC=1.
 */
static bool reported(char sign, const void *begin)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	char want[256];
	int i;

	if (sign == '+')
		snprintf(want, sizeof(want),
			 "sframe-run: + frame %p: [%#llx, %#llx) jit 1 of 1 FDEs, %d rows\n",
			 begin, (unsigned long long)im.text,
			 (unsigned long long)(im.text + im.text_size),
			 JIT_CALL_NR_ROWS);
	else
		snprintf(want, sizeof(want),
			 "sframe-run: - frame %p: [%#llx, %#llx)\n", begin,
			 (unsigned long long)im.text,
			 (unsigned long long)(im.text + im.text_size));
	for (i = 0; i < 5000 && !logged(want); i++)
		nanosleep(&ms, NULL);
	return logged(want);
}

/* Whether libdw is loaded; a dlopen(), so sframe-run's hook runs too. */
static bool libdw_loaded(void)
{
	void *h = dlopen("libdw.so.1", RTLD_NOLOAD | RTLD_LAZY);

	if (h)
		dlclose(h);
	return h;
}

static void put_count(int n)
{
	char buf[16];
	int i = sizeof(buf);

	do
		buf[--i] = '0' + n % 10;
	while ((n /= 10) && i);
	if (write(STDOUT_FILENO, buf + i, sizeof(buf) - i) < 0)
		_exit(2);
}

/* stdout is line-buffered: what was printed is out; add the count. */
static void watchdog(int sig)
{
	static const char msg[] =
		"not ok - the test ends in time (deadlocked?)\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	put_count(passed);
	if (write(STDOUT_FILENO, " passed, ", 9) < 0)
		_exit(2);
	put_count(failed + 1);
	if (write(STDOUT_FILENO, " failed\n", 8) < 0)
		_exit(2);
	_exit(1);
}

static void with_register_frame(void)
{
	__register_frame(im.eh_frame);
	result(reported('+', im.eh_frame),
	       "__register_frame() publishes the function with its rows");
	result(unwinds_through_jit(),
	       "libgcc unwinds through code registered by __register_frame()");
	__deregister_frame(im.eh_frame);
	result(reported('-', im.eh_frame),
	       "__deregister_frame() unpublishes it");
	result(!unwinds_through_jit(),
	       "libgcc stops at the code after __deregister_frame()");
}

static void with_register_frame_info(void)
{
	void *got;

	__register_frame_info(im.eh_frame, ob);
	result(reported('+', im.eh_frame),
	       "__register_frame_info() publishes the function with its rows");
	result(unwinds_through_jit(),
	       "libgcc unwinds through code registered by __register_frame_info()");
	got = __deregister_frame_info(im.eh_frame);
	result(reported('-', im.eh_frame) && got == ob,
	       "__deregister_frame_info() unpublishes it and returns libgcc's object");
	result(!unwinds_through_jit(),
	       "libgcc stops at the code after __deregister_frame_info()");
}

int main(int argc, char **argv)
{
	FILE *log;
	bool sync;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s JIT_FRAME_SO\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, watchdog);
	alarm(WATCHDOG_S);
	log = tmpfile();
	if (!log || dup2(fileno(log), 2) < 0)
		return 1;
	log_fd = fileno(log);
	sync = getenv("SFRAME_RUN_SYNC") && strcmp(getenv("SFRAME_RUN_SYNC"), "0");
	err = jit_image_load(argv[1], &im);
	if (err) {
		printf("not ok - load %s: %s\n0 passed, 1 failed\n", argv[1],
		       strerror(-err));
		return 1;
	}
	result(!unwinds_through_jit(),
	       "libgcc stops at the copied code before it is registered");
	if (!sync)
		result(!libdw_loaded(),
		       "libdw is not loaded before the first registration");
	with_register_frame();
	with_register_frame_info();
	result(libdw_loaded() && logged("libdw.so.1: jit ") &&
	       !logged("libdw.so.1: nothing registered"),
	       "libdw, loaded by a conversion, is registered at the next dlopen()");
	jit_image_free(&im);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
