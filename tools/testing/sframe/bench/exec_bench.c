// SPDX-License-Identifier: GPL-2.0
/*
 * What registering an executable's .sframe costs its exec: fork(),
 * execve() of a program that exits at once, and waitpid(), N times in
 * a row, of the same static program with and without its PT_GNU_SFRAME
 * program header (exec_target, and its copy by sframe_nophdr).
 *
 *	exec_bench [-r REPS] [-n N] PLAIN SFRAME
 *
 * For the test kernel.  PLAIN must be the copy without PT_GNU_SFRAME and
 * SFRAME the program with it; their "check" mode must say that exec
 * registered SFRAME's section and not PLAIN's.  Three cases take turns,
 * REPS times, N execs each:
 *
 *   plain   PLAIN, which binfmt_elf registers nothing for;
 *   first   SFRAME, with no other process of it alive: every exec
 *           copies, validates and converts the section anew;
 *   later   SFRAME, while another process of it sleeps, started before
 *           the N execs and killed after them: a kernel that shares one
 *           validated copy between the processes mapping the same file
 *           would find it there.
 *
 * A cell is the median over the REPS runs of the mean time of an exec,
 * in microseconds of wall-clock time (CLOCK_MONOTONIC), and its ratio to
 * plain.  Exit status 1 if a program failed or the checks did not hold.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench_time.h"

#define MAX_REPS	101

enum { PLAIN, FIRST, LATER, NR_CASES };

static const char *const case_names[NR_CASES] = {
	[PLAIN]	= "plain",
	[FIRST]	= "first",
	[LATER]	= "later",
};

static const char *const case_desc[NR_CASES] = {
	[PLAIN]	= "without PT_GNU_SFRAME",
	[FIRST]	= "with it, no other process of it",
	[LATER]	= "with it, another process of it alive",
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Start @path with @arg (or none) and stdout on @out_fd (or unchanged). */
static pid_t spawn(const char *path, const char *arg, int out_fd)
{
	char *const argv[] = { (char *)path, (char *)arg, NULL };
	char *const envp[] = { NULL };
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (out_fd >= 0 && dup2(out_fd, 1) < 0)
			_exit(126);
		execve(path, argv, envp);
		_exit(127);
	}
	return pid;
}

static void reap(pid_t pid, const char *path)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "exec_bench: %s failed (status %#x)\n", path,
			status);
		exit(1);
	}
}

/* The mean time of one fork, execve and waitpid of @path, @n times. */
static double time_execs(const char *path, int n)
{
	double t0 = wall_ns();
	int i;

	for (i = 0; i < n; i++)
		reap(spawn(path, NULL, -1), path);
	return (wall_ns() - t0) / n;
}

/* @path's own word on its registration: "registered" or "unregistered". */
static void expect(const char *path, const char *want)
{
	char buf[64] = "";
	int fd[2];
	ssize_t len;
	pid_t pid;

	if (pipe(fd))
		die("pipe");
	pid = spawn(path, "check", fd[1]);
	close(fd[1]);
	len = read(fd[0], buf, sizeof(buf) - 1);
	close(fd[0]);
	reap(pid, path);
	buf[len > 0 ? len : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, want)) {
		fprintf(stderr, "exec_bench: %s says \"%s\" at exec, not \"%s\"\n",
			path, buf, want);
		exit(1);
	}
}

/* Another process of @path, asleep once it has written its byte. */
static pid_t start_sleeper(const char *path)
{
	int fd[2];
	pid_t pid;
	char c;

	if (pipe(fd))
		die("pipe");
	pid = spawn(path, "wait", fd[1]);
	close(fd[1]);
	if (read(fd[0], &c, 1) != 1) {
		fprintf(stderr, "exec_bench: %s wait did not start\n", path);
		exit(1);
	}
	close(fd[0]);
	return pid;
}

static void stop_sleeper(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static double run_case(int c, const char *plain, const char *sframe, int n)
{
	double t;
	pid_t pid;

	if (c == PLAIN)
		return time_execs(plain, n);
	if (c == FIRST)
		return time_execs(sframe, n);
	pid = start_sleeper(sframe);
	t = time_execs(sframe, n);
	stop_sleeper(pid);
	return t;
}

static double min_max(const double *v, int n, int sign)
{
	double r = v[0];
	int i;

	for (i = 1; i < n; i++)
		if ((v[i] - r) * sign > 0)
			r = v[i];
	return r;
}

int main(int argc, char **argv)
{
	static double t[NR_CASES][MAX_REPS];
	double med[NR_CASES], sorted[MAX_REPS];
	int reps = 7, n = 100, opt, r, c;
	const char *plain, *sframe;
	char ratio[16];

	while ((opt = getopt(argc, argv, "r:n:")) != -1) {
		switch (opt) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2)
		goto usage;
	if (reps < 1 || reps > MAX_REPS || n < 1) {
		fprintf(stderr, "exec_bench: REPS must be 1 to %d, N positive\n",
			MAX_REPS);
		return 2;
	}
	plain = argv[optind];
	sframe = argv[optind + 1];
	expect(plain, "unregistered");
	expect(sframe, "registered");

	/* A round untimed, for the page cache and the allocators. */
	for (c = 0; c < NR_CASES; c++)
		run_case(c, plain, sframe, n);
	for (r = 0; r < reps; r++)
		for (c = 0; c < NR_CASES; c++)
			t[c][r] = run_case(c, plain, sframe, n);

	printf("# fork(), execve(), waitpid(): us of wall-clock time per exec,\n");
	printf("# medians of %d runs of %d execs each, the cases in turn\n",
	       reps, n);
	printf("%-6s %-37s %9s %8s %9s %19s\n", "case", "binary", "us/exec",
	       "ratio", "added", "us min..max");
	for (c = 0; c < NR_CASES; c++) {
		memcpy(sorted, t[c], reps * sizeof(double));
		med[c] = median(sorted, reps);
	}
	for (c = 0; c < NR_CASES; c++) {
		snprintf(ratio, sizeof(ratio), "x %.3f", med[c] / med[PLAIN]);
		printf("%-6s %-37s %9.1f %8s %9.1f %9.1f..%.1f\n",
		       case_names[c], case_desc[c], med[c] / 1e3, ratio,
		       (med[c] - med[PLAIN]) / 1e3,
		       min_max(t[c], reps, -1) / 1e3,
		       min_max(t[c], reps, 1) / 1e3);
	}
	return 0;

usage:
	fprintf(stderr, "usage: %s [-r REPS] [-n N] PLAIN SFRAME\n", argv[0]);
	return 2;
}
