// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sframe-agent: give running processes the unwind tables of their code,
 * from outside, with nothing loaded into them.
 *
 *	sframe-agent [-v]... [--once] -p PID[,PID...]
 *	sframe-agent [-v]... [--once] -a
 *	sframe-agent [-v]... [--] CMD [ARG]...
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
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <gelf.h>
#include <limits.h>
#include <sys/wait.h>
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
	      "  or:  sframe-agent [OPTION]... -a\n"
	      "  or:  sframe-agent [OPTION]... [--] COMMAND [ARG]...\n"
	      "Register the unwind tables of processes' code with the kernel,\n"
	      "from outside, so that perf and BPF unwind their user stacks\n"
	      "without frame pointers.  With -p or -a, follow the processes as\n"
	      "they map code and exec until they exit or until interrupted;\n"
	      "with COMMAND, run it with its tables from its first instruction\n"
	      "and exit with its status.\n"
	      "\n"
	      "  -p, --pid=PID[,PID]...  running processes (may be repeated)\n"
	      "  -a, --all               every process, running and to come\n"
	      "      --once              register what is mapped now, and exit\n"
	      "      --cache-dir=DIR     keep converted tables in DIR (default\n"
	      "                          /var/cache/sframe-agent for root, else\n"
	      "                          $XDG_CACHE_HOME/sframe-agent)\n"
	      "      --cache-size=SIZE   at most SIZE of them: MiB, or with a\n"
	      "                          K, M or G suffix (default 512M)\n"
	      "      --no-cache          convert every file at each run\n"
	      "      --ready-fd=FD       with -p or -a, write a byte to FD and\n"
	      "                          close it once the first attach is done\n"
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
static void summary(struct agent_stats *st)
{
	fprintf(stderr, "sframe-agent: %lu process%s (%lu unreachable), ",
		st->procs, st->procs == 1 ? "" : "es", st->procs_failed);
	fprintf(stderr, "%lu execs, %lu records lost, ", st->execs, st->lost);
	fprintf(stderr, "%lu mappings: %lu registered, ", st->maps,
		st->registered);
	fprintf(stderr, "%lu with a table already, ", st->own);
	fprintf(stderr, "%lu gone before they were read, ", st->vanished);
	fprintf(stderr, "%lu without unwind information, ", st->no_table);
	fprintf(stderr, "%lu failed; %lu rows, ", st->failed, st->rows);
	fprintf(stderr, "%lu bytes of tables handed over; ", st->bytes);
	fprintf(stderr, "%lu FDEs left to frame pointers; ", st->left);
	fprintf(stderr, "%lu JIT objects registered, %lu without tables; ",
		st->jit_objs, st->jit_none);
	fprintf(stderr, "%lu frames registered, %lu without tables, ",
		st->frames, st->frames_none);
	fprintf(stderr, "%lu removed, %lu processes' earlier ones unread; ",
		st->frames_removed, st->frames_unread);
	fprintf(stderr, "cache: %lu loaded, %lu stored, %lu stale, ",
		agent_cache_stats.hits, agent_cache_stats.stored,
		agent_cache_stats.stale);
	fprintf(stderr, "%lu evicted; ", agent_cache_stats.evicted);
	fprintf(stderr, "%lu new mappings given tables %.1f ms after their mmap, ",
		st->delay.n, agent_delay_median_ms(&st->delay));
	fprintf(stderr, "at most %.1f ms\n", st->delay.max_ns / 1e6);
}

/* The default directory of converted tables, as the XDG rules place it. */
static int cache_default(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (!geteuid())
		snprintf(buf, size, "/var/cache/sframe-agent");
	else if (xdg && xdg[0] == '/')
		snprintf(buf, size, "%s/sframe-agent", xdg);
	else if (home && home[0] == '/')
		snprintf(buf, size, "%s/.cache/sframe-agent", home);
	else
		return -ENOENT;
	return 0;
}

/* A size in MiB, or in KiB, MiB or GiB with a suffix; 0 if malformed. */
static uint64_t size_parse(const char *arg)
{
	unsigned long long v;
	char *end;
	int shift;

	errno = 0;
	v = strtoull(arg, &end, 10);
	shift = 20;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (*end && strchr("KkMmGg", *end))
		end++;
	if (errno || *end || !v || v > (~0ULL >> shift))
		return 0;
	return (uint64_t)v << shift;
}

static void cache_setup(const char *dir, uint64_t limit)
{
	char def[PATH_MAX];
	int err;

	if (!dir) {
		if (cache_default(def, sizeof(def)))
			return;
		dir = def;
	}
	err = agent_cache_init(dir, limit);
	if (err)
		agent_log(1, "no cache in %s: %s\n", dir, strerror(-err));
}

static void attach_one(pid_t pid, struct agent_stats *st, bool quiet)
{
	int err;

	st->procs++;
	err = agent_attach(pid, st);
	if (!err)
		return;
	st->procs_failed++;
	if (!quiet || agent_verbose)
		agent_log(0, "%d: %s%s\n", (int)pid, strerror(-err),
			  err == -EPERM ?
			  " (the caller may not attach to it)" : "");
}

/* Every process now running but this one; kernel threads have no code. */
static void attach_all(struct agent_stats *st)
{
	struct dirent *d;
	DIR *dir;
	long pid;

	dir = opendir("/proc");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		pid = strtol(d->d_name, NULL, 10);
		if (pid > 0 && pid != getpid())
			attach_one(pid, st, true);
	}
	closedir(dir);
}

/* The descriptor --ready-fd names, or -1. */
static int ready_fd = -1;

/* A descriptor number that names an open descriptor, or -1. */
static int fd_parse(const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || v < 0 || v > INT_MAX ||
	    fcntl((int)v, F_GETFD) < 0)
		return -1;
	return (int)v;
}

/*
 * The first attach is done: a profiler that started the agent, and waits
 * on the descriptor's other end, starts recording.
 */
static void ready(void)
{
	char c = 1;

	if (ready_fd < 0)
		return;
	if (write(ready_fd, &c, 1) != 1)
		agent_log(1, "the ready descriptor %d: %s\n", ready_fd,
			  strerror(errno));
	close(ready_fd);
	ready_fd = -1;
}

/* -p: attach, then follow until they exit. */
static int mode_pids(const struct pids *p, bool once, struct agent_stats *st)
{
	struct agent_run r;
	size_t i;
	int ret = 0;

	if (agent_run_init(&r, p->nr)) {
		agent_log(0, "%s\n", strerror(ENOMEM));
		return 1;
	}
	/* First, so that nothing mapped during the attach is missed. */
	for (i = 0; i < p->nr && !once; i++)
		agent_run_follow(&r, p->pid[i]);
	for (i = 0; i < p->nr; i++) {
		attach_one(p->pid[i], st, false);
		agent_run_wait(&r, p->pid[i]);
	}
	if (st->procs_failed)
		ret = 1;
	ready();
	if (!once && r.nr_f)
		agent_run_loop(&r, st);
	agent_run_close(&r);
	return ret;
}

/* -a: every process, and those to come. */
static int mode_all(bool once, struct agent_stats *st)
{
	struct agent_run r;

	if (agent_run_init(&r, 1)) {
		agent_log(0, "%s\n", strerror(ENOMEM));
		return 1;
	}
	if (!once && agent_run_follow(&r, -1)) {
		agent_run_close(&r);
		return 1;
	}
	attach_all(st);
	ready();
	if (!once)
		agent_run_loop(&r, st);
	agent_run_close(&r);
	return 0;
}

/*
 * COMMAND: exec'd in this process, which keeps its pid and its exit
 * status; this returns in the helper that follows it, at its exit.
 */
static int mode_cmd(char **argv, struct agent_stats *st)
{
	struct agent_run r;
	pid_t prog;
	int err;

	err = agent_exec(argv, &prog);
	/* -ECHILD: it ended before its exec, which it reported. */
	if (err) {
		if (err != -ECHILD)
			agent_log(0, "cannot trace %s: %s\n", argv[0],
				  strerror(-err));
		return 1;
	}
	/* COMMAND takes its own signals; the agent follows it to its end. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	err = agent_run_init(&r, 1);
	if (!err) {
		agent_run_follow(&r, prog);
		agent_run_wait(&r, prog);
	}
	if (agent_start_run(prog, st) == 0 && !err)
		agent_run_loop(&r, st);
	agent_run_close(&r);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "once", no_argument, NULL, 'o' },
		{ "cache-dir", required_argument, NULL, 'C' },
		{ "cache-size", required_argument, NULL, 'S' },
		{ "no-cache", no_argument, NULL, 'N' },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct agent_stats st = { 0 };
	struct pids pids = { 0 };
	bool all = false, once = false, cmd, cache = true;
	const char *cache_dir = NULL;
	uint64_t cache_size = 512ULL << 20;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+p:avhV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (pids_add(&pids, optarg)) {
				agent_log(0, "bad process list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'a':
			all = true;
			break;
		case 'o':
			once = true;
			break;
		case 'C':
			cache_dir = optarg;
			break;
		case 'S':
			cache_size = size_parse(optarg);
			if (!cache_size) {
				agent_log(0, "bad cache size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'N':
			cache = false;
			break;
		case 'R':
			ready_fd = fd_parse(optarg);
			if (ready_fd < 0) {
				agent_log(0, "--ready-fd=%s: not an open descriptor\n",
					  optarg);
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
	/* Exactly one of -p, -a and COMMAND; --once not with COMMAND. */
	cmd = optind < argc;
	if (!!pids.nr + all + cmd != 1 || (once && cmd)) {
		usage(stderr);
		return 2;
	}
	if (!agent_kernel_has_calls()) {
		agent_log(0, "this kernel lacks process_sframe_register(2)\n");
		return 1;
	}
	elf_version(EV_CURRENT);
	agent_uprobes_on = !once;
	agent_all = all;
	if (cache)
		cache_setup(cache_dir, cache_size);
	agent_run_signals();
	if (pids.nr)
		ret = mode_pids(&pids, once, &st);
	else if (all)
		ret = mode_all(once, &st);
	else
		ret = mode_cmd(argv + optind, &st);
	/* After COMMAND, its shell may be back: a word only if asked. */
	if (!cmd || agent_verbose)
		summary(&st);
	agent_uprobes_close();
	agent_procs_free();
	agent_tables_free();
	free(st.delay.us);
	free(pids.pid);
	return ret;
}
