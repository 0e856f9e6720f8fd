// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sframe-run [--] CMD [ARGS...]: run CMD with the unwind tables of
 * every object it loads registered with the kernel (sframe_register(2)
 * or sframe_jit_open(2)), so that perf record --call-graph=sframe and
 * BPF_F_USER_SFRAME walk its stacks without frame pointers.  See
 * Documentation/sframe_jit.rst.
 *
 * SFRAME_RUN_VERBOSE=1 prints what each object and JIT section got;
 * SFRAME_RUN_SYNC=1 registers the start-up objects before main(), and
 * what a JIT registers before its call returns, rather than on threads
 * of their own; SFRAME_RUN_KEEP_DEREGISTERED=1 keeps what a JIT
 * deregisters until newer code overlaps it.  libsframe_run.so reads
 * them; this program refuses a value that is not a yes or a no, and
 * passes the environment on otherwise unchanged.
 *
 * A program rather than a shell script: under software emulation a
 * shell's start alone made python3 -c pass 1.18 times slower.  It puts
 * the preload in front of LD_PRELOAD and executes CMD in its place, so
 * that CMD has its PID, its arguments and its exit status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env_flag.h"
#include "seccomp.h"
#include "sframe_jit_internal.h"

#ifndef SFRAME_RUN_PRELOAD
#error "SFRAME_RUN_PRELOAD: the path of libsframe_run.so"
#endif
#ifndef SFRAME_RUN_VERSION
#define SFRAME_RUN_VERSION	"0"
#endif

/* ASan's check that its runtime is the first object loaded. */
#define ASAN_LINK_ORDER		"verify_asan_link_order"

static void print_usage(FILE *f)
{
	fputs("usage: sframe-run [--] CMD [ARGS...]\n"
	      "Run CMD with the unwind tables of the objects it loads\n"
	      "registered with the kernel, for perf record --call-graph=sframe.\n"
	      "\n"
	      "  -h, --help      this text\n"
	      "  -V, --version   the version\n"
	      "\n"
	      "Environment (1/yes/on/true or 0/no/off/false):\n"
	      "  SFRAME_RUN_VERBOSE, SFRAME_RUN_SYNC,\n"
	      "  SFRAME_RUN_KEEP_DEREGISTERED, SFRAME_RUN_NO_KERNEL;\n"
	      "  SFRAME_RUN_DELAY_MS=N, SFRAME_RUN_PRELOAD=PATH.\n"
	      "See sframe-agent(1) for processes already running.\n", f);
}

/* The knobs' values, each a yes or a no; a message for the first not. */
static int knobs_check(void)
{
	const char *const *name;
	const char *v;
	bool on;

	for (name = sframe_run__env_flags; *name; name++) {
		v = getenv(*name);
		if (sframe_run__env_flag_parse(v, &on)) {
			fprintf(stderr,
				"sframe-run: %s=%s: not 1, yes, on, true, 0, no, off or false\n",
				*name, v);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Whether the kernel has the calls and seccomp lets them through: a
 * warning, once, where not, and the program then runs as it would
 * without sframe-run, with nothing loaded into it.  SFRAME_RUN_NO_KERNEL=1 does the work in
 * private memory all the same.  (A kernel with the calls may still
 * refuse a table, past its limits: that object alone is left to frame
 * pointers, which SFRAME_RUN_VERBOSE=1 reports.)
 */
static bool kernel_takes_tables(const char *cmd)
{
	if (sframe_run__env_flag("SFRAME_RUN_NO_KERNEL"))
		return true;
	if (access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK)) {
		fprintf(stderr,
			"sframe-run: warning: this kernel has no sframe_jit_open(2) (no %s): %s runs without tables\n",
			SFRAME_JIT_MAX_REGS_SYSCTL, cmd);
		return false;
	}
	if (sframe_run__calls_filtered()) {
		fprintf(stderr,
			"sframe-run: warning: a seccomp filter keeps sframe_jit_open(2) and sframe_register(2) from the kernel: %s runs without tables\n",
			cmd);
		return false;
	}
	return true;
}

/* LD_PRELOAD with @preload in front of what it held. */
static int preload_set(const char *preload)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (old && *old) {
		if (asprintf(&val, "%s:%s", preload, old) < 0)
			return -ENOMEM;
	} else {
		val = strdup(preload);
	}
	if (!val || setenv("LD_PRELOAD", val, 1))
		return -ENOMEM;
	return 0;
}

/*
 * An ASan program aborts when its runtime is not the first object
 * loaded, and the preload comes first: its check is turned off, unless
 * the user's ASAN_OPTIONS says what to do.  Other programs ignore it.
 */
static int asan_order_allow(void)
{
	const char *old = getenv("ASAN_OPTIONS");
	char *val;

	if (old && strstr(old, ASAN_LINK_ORDER))
		return 0;
	if (asprintf(&val, "%s%s" ASAN_LINK_ORDER "=0", old ? old : "",
		     old && *old ? ":" : "") < 0 ||
	    setenv("ASAN_OPTIONS", val, 1))
		return -ENOMEM;
	return 0;
}

/*
 * The options, as env(1) takes them: up to the command, or "--".  Sets
 * *@first to the command's index; returns the status to exit with now,
 * or -1 to run it.
 */
static int options(int argc, char **argv, int *first)
{
	const char *opt = argc > 1 ? argv[1] : "";

	*first = 1;
	if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(opt, "-V") || !strcmp(opt, "--version")) {
		printf("sframe-run %s\n", SFRAME_RUN_VERSION);
		return 0;
	}
	if (!strcmp(opt, "--")) {
		*first = 2;
	} else if (opt[0] == '-') {
		fprintf(stderr, "sframe-run: unknown option %s\n", opt);
		print_usage(stderr);
		return 2;
	}
	if (argc <= *first) {
		print_usage(stderr);
		return 2;
	}
	return knobs_check() ? 2 : -1;
}

int main(int argc, char **argv)
{
	const char *preload = getenv("SFRAME_RUN_PRELOAD");
	int first, status;

	status = options(argc, argv, &first);
	if (status >= 0)
		return status;
	if (!preload || !*preload)
		preload = SFRAME_RUN_PRELOAD;
	if (kernel_takes_tables(argv[first]) &&
	    (preload_set(preload) || asan_order_allow()))
		return 125;
	execvp(argv[first], argv + first);
	/* As a shell's exec: 127 for a command not found, else 126. */
	fprintf(stderr, "sframe-run: %s: %s\n", argv[first], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
