// SPDX-License-Identifier: GPL-2.0
/*
 * The runner: one child per case, TAP-like output on stdout, the child's
 * diagnostics as "# " lines, and "N passed, N failed" last.
 *
 * Exit status of a case's child: 0 passed, 1 failed, SKIP_STATUS
 * skipped; a signal or a timeout fails it.
 */
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define SKIP_STATUS		77
#define DEFAULT_TIMEOUT		60

extern const struct test_case __start_sframe_jit_tests[];
extern const struct test_case __stop_sframe_jit_tests[];

struct test_env test_env;
static bool failed;

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	failed = true;
	fprintf(stderr, "# %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void test_log(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	fputs("# SKIP ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(SKIP_STATUS);
}

bool test_failed(void)
{
	return failed;
}

static bool selected(const struct test_case *t, int argc, char **argv)
{
	unsigned int where = test_env.kernel ? T_KERNEL : T_MEM;
	int i;

	if (!(t->where & where))
		return false;
	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(t->name, argv[i]))
			return true;
	return false;
}

/* Run one case in a child; its exit status. */
static int run_one(const struct test_case *t)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		alarm(t->timeout ?: DEFAULT_TIMEOUT);
		t->fn();
		fflush(NULL);
		_exit(test_failed() ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "# killed by signal %d%s\n", WTERMSIG(status),
			WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
		return -1;
	}
	return WEXITSTATUS(status);
}

int test_run_all(int argc, char **argv)
{
	const struct test_case *t;
	int n = 0, passed = 0, nfailed = 0, skipped = 0, status;

	for (t = __start_sframe_jit_tests; t < __stop_sframe_jit_tests; t++) {
		if (!selected(t, argc, argv))
			continue;
		status = run_one(t);
		n++;
		if (status == 0) {
			printf("ok %d %s\n", n, t->name);
			passed++;
		} else if (status == SKIP_STATUS) {
			printf("ok %d %s # SKIP\n", n, t->name);
			skipped++;
		} else {
			printf("not ok %d %s\n", n, t->name);
			nfailed++;
		}
	}
	printf("1..%d\n", n);
	if (skipped)
		printf("# %d skipped\n", skipped);
	printf("%d passed, %d failed\n", passed, nfailed);
	fflush(stdout);
	return nfailed ? 1 : 0;
}
