// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sframe-run CMD [ARGS...]: run CMD with the unwind tables of every
 * object it loads registered with the kernel (sframe_register(2) or
 * sframe_jit_open(2)), so that perf record --call-graph=sframe and
 * BPF_F_USER_SFRAME walk its stacks without frame pointers.  See Documentation/sframe_jit.rst.
 *
 * SFRAME_RUN_VERBOSE=1 prints what each object and JIT section got;
 * SFRAME_RUN_SYNC=1 registers the start-up objects before main(), and
 * what a JIT registers before its call returns, rather than on threads
 * of their own; SFRAME_RUN_KEEP_DEREGISTERED=1 keeps what a JIT
 * deregisters until newer code overlaps it.  libsframe_run.so reads
 * them; this program passes the environment on unchanged.
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

#ifndef SFRAME_RUN_PRELOAD
#error "SFRAME_RUN_PRELOAD: the path of libsframe_run.so"
#endif

int main(int argc, char **argv)
{
	const char *preload = getenv("SFRAME_RUN_PRELOAD");
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (argc < 2) {
		fputs("usage: sframe-run CMD [ARGS...]\n", stderr);
		return 2;
	}
	if (!preload || !*preload)
		preload = SFRAME_RUN_PRELOAD;
	if (old && *old) {
		if (asprintf(&val, "%s:%s", preload, old) < 0)
			return 125;
	} else {
		val = strdup(preload);
	}
	if (!val || setenv("LD_PRELOAD", val, 1))
		return 125;
	execvp(argv[1], argv + 1);
	/* As a shell's exec: 127 for a command not found, else 126. */
	fprintf(stderr, "sframe-run: %s: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
