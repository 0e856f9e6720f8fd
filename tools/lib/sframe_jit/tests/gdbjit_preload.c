// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-run's reading of the GDB JIT interface at pthread_create(), in
 * a process that preloads libsframe_run.so (make check runs it so, with
 * SFRAME_RUN_NO_KERNEL=1):
 *
 *   gdbjit_preload JIT_FRAME_SO
 *
 * The program is a JIT as QEMU's TCG is one: it links an object into
 * its own __jit_debug_descriptor once, after sframe-run started, and
 * then starts a thread, calling nothing else that sframe-run sees in
 * between.  sframe-run must have named the object's function in
 * /tmp/perf-PID.map by the time pthread_create() returns, and not
 * before it is called (so the test can fail).  The executable exports
 * the descriptor (-rdynamic), as QEMU's does.  Ends with "N passed, N
 * failed".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../run/gdb_jit.h"

#define JIT_REGISTER_FN		1
#define JIT_UNREGISTER_FN	2

struct jit_descriptor __jit_debug_descriptor = { .version = 1 };

/* Where a debugger breaks: it must stay a call that does nothing. */
void __attribute__((noinline)) __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

static int passed, failed;

static void result(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (ok)
		passed++;
	else
		failed++;
}

static char *file_read(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
	if (n > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*size = n;
	}
	fclose(f);
	return buf;
}

/* Whether the perf map names jit_frame.so's function. */
static bool named(const char *map)
{
	char buf[256];
	size_t n;
	FILE *f;

	f = fopen(map, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, "1000 13 jit_call\n");
}

static void *thread_fn(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	struct jit_code_entry e = { 0 };
	char map[64];
	pthread_t t;
	size_t size;
	char *so;

	so = argc == 2 ? file_read(argv[1], &size) : NULL;
	if (!so) {
		fprintf(stderr, "usage: %s JIT_FRAME_SO\n", argv[0]);
		return 2;
	}
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	unlink(map);

	e.symfile_addr = so;
	e.symfile_size = size;
	__jit_debug_descriptor.first_entry = &e;
	__jit_debug_descriptor.relevant_entry = &e;
	__jit_debug_descriptor.action_flag = JIT_REGISTER_FN;
	__jit_debug_register_code();
	result(!named(map), "the object is not named before a thread starts");

	if (pthread_create(&t, NULL, thread_fn, NULL)) {
		result(false, "pthread_create()");
	} else {
		result(named(map),
		       "the object is named when pthread_create() returns");
		pthread_join(t, NULL);
	}

	/* Unlinked before it is freed, as a JIT does. */
	__jit_debug_descriptor.first_entry = NULL;
	__jit_debug_descriptor.action_flag = JIT_UNREGISTER_FN;
	__jit_debug_register_code();
	unlink(map);
	free(so);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
