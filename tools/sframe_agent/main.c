// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sframe-agent: give running processes the unwind tables of their code,
 * from outside, with nothing loaded into them.
 *
 *	sframe-agent [-v]... -p PID[,PID...]
 *
 * Each executable mapping of a file gets the file's table: its .sframe
 * section where it has one, else its .eh_frame converted; the vDSO
 * too.  Each file is converted once, however many processes map it, and
 * the kernel keeps one copy of its table for all of them.  The tables
 * stay registered after the agent exits, until the process execs or
 * exits; perf record --call-graph=sframe -p PID then unwinds the
 * process's code without frame pointers.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sframe_agent.h"

#ifndef SFRAME_AGENT_VERSION
#define SFRAME_AGENT_VERSION	"0.1"
#endif

int agent_verbose;

/**
 * agent_log() - a message on stderr, at a verbosity level
 * @level: 0 always, 1 with -v, 2 with -vv.
 * @fmt: printf() format.
 */
void agent_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > agent_verbose)
		return;
	va_start(ap, fmt);
	fputs("sframe-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void usage(FILE *f)
{
	fputs("Usage: sframe-agent [OPTION]... -p PID[,PID]...\n"
	      "Register the unwind tables of running processes' code with the\n"
	      "kernel, so that perf and BPF unwind their user stacks without\n"
	      "frame pointers.\n"
	      "\n"
	      "  -p, --pid=PID[,PID]...  the processes (may be repeated)\n"
	      "  -v, --verbose           say more; twice for each mapping\n"
	      "  -h, --help              this help\n"
	      "  -V, --version           the version\n"
	      "\n"
	      "The caller needs the rights process_vm_writev(2) needs over each\n"
	      "process.  See sframe-agent(1).\n", f);
}

struct pids {
	pid_t *pid;
	size_t nr;
};

static int pids_add(struct pids *p, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	pid_t *n;
	long v;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > 0x3fffffff) {
			free(copy);
			return -EINVAL;
		}
		n = realloc(p->pid, (p->nr + 1) * sizeof(*n));
		if (!n) {
			free(copy);
			return -ENOMEM;
		}
		p->pid = n;
		p->pid[p->nr++] = v;
	}
	free(copy);
	return 0;
}

/* One line of what was done, as perf prints its own at exit. */
static void summary(const struct agent_stats *st)
{
	fprintf(stderr, "sframe-agent: %lu process%s (%lu unreachable), ",
		st->procs, st->procs == 1 ? "" : "es", st->procs_failed);
	fprintf(stderr, "%lu mappings: %lu registered, ", st->maps,
		st->registered);
	fprintf(stderr, "%lu with a table of their own, ", st->own);
	fprintf(stderr, "%lu without unwind information, ", st->no_table);
	fprintf(stderr, "%lu failed; %lu rows, ", st->failed, st->rows);
	fprintf(stderr, "%lu bytes of tables handed over; ", st->bytes);
	fprintf(stderr, "%lu FDEs left to frame pointers\n", st->left);
}

static int attach_all(const struct pids *p)
{
	struct agent_stats st = { 0 };
	int err, ret = 0;
	size_t i;

	for (i = 0; i < p->nr; i++) {
		st.procs++;
		err = agent_attach(p->pid[i], &st);
		if (!err)
			continue;
		st.procs_failed++;
		ret = 1;
		agent_log(0, "%d: %s%s\n", (int)p->pid[i], strerror(-err),
			  err == -EPERM ?
			  " (the caller may not attach to it)" : "");
	}
	summary(&st);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct pids pids = { 0 };
	int c, ret;

	while ((c = getopt_long(argc, argv, "+p:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (pids_add(&pids, optarg)) {
				agent_log(0, "bad process list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'v':
			agent_verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("sframe-agent %s\n", SFRAME_AGENT_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !pids.nr) {
		usage(stderr);
		return 2;
	}
	if (!agent_kernel_has_calls()) {
		agent_log(0, "this kernel lacks process_sframe_register(2)\n");
		return 1;
	}
	ret = attach_all(&pids);
	agent_tables_free();
	free(pids.pid);
	return ret;
}
