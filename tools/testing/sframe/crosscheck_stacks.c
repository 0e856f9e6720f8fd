// SPDX-License-Identifier: GPL-2.0
/*
 * Real stacks: the kernel's SFrame walker (uwalk.h) against libunwind
 * and glibc's backtrace(), on the stacks of a running program, sampled
 * by a CPU-time timer at random intervals.
 *
 * Built as a library to LD_PRELOAD into the program (any program linked
 * by ld with .sframe; objects without it are walked only as far as the
 * tables reach, see below):
 *
 *	XC_STACKS_NAME=name XC_STACKS_REPORT=file \
 *	LD_PRELOAD=.../crosscheck_stacks.so program args
 *
 * Environment: XC_STACKS_NAME names the program in the report (default:
 * its path); XC_STACKS_REPORT is a file the result line is appended to
 * (default: standard error); XC_STACKS_SECONDS bounds the sampling in
 * seconds of the main thread's CPU time (default 3); XC_STACKS_MIN is
 * the fewest samples that must have their top frame in a table (default
 * 100); XC_STACKS_SEED seeds the intervals.
 *
 * In each SIGPROF, which a high-resolution timer sends the main thread
 * 50 to 1050 microseconds after the last one, the handler walks the interrupted stack
 * from the signal's context three ways: uwalk_ucontext(), libunwind's
 * unw_init_local2(UNW_INIT_SIGNAL_FRAME) with unw_step(), and
 * backtrace(), whose array is taken from the interrupted PC on.
 *
 * What is compared: the frames our tables cover, and the one the last of
 * them returns to.  Debian's libc and ld.so carry no .sframe; where the
 * walk reaches a PC no table describes (main's caller in libc, a libc
 * function that calls back into the program, or a sample that lands in
 * libc or the vDSO), the kernel's walker falls back to one frame-pointer
 * step, which in code built without frame pointers yields garbage: the
 * comparison stops at that PC, after checking it.  Every frame before it
 * must be confirmed by the references (xcheck_stacks.c has the rule):
 * ours must be what libunwind and backtrace() say where they agree, and
 * what one of them says where they do not, or where one has no frame
 * (ended early, returned 0, or failed to start).  The reference that
 * parts from ours and the other one has failed, not ours: the sample
 * passes, and the reference failures of each are counted and printed
 * apart from the mismatches, which fail the program.
 *
 * One exception: a sample that interrupts libgcc's unwinder (a C++
 * exception being thrown) is not walked by backtrace(), which is libgcc's
 * unwinder too and not reentrant there (its FDE cache is caught half
 * updated, and it crashes); ours is compared with libunwind alone.
 *
 * The result line starts with "ok" or "FAIL"; details of the first
 * mismatching samples and of the first reference failures follow,
 * symbolized.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "uwalk.h"
#include "xcheck_stacks.h"

#define XC_DEPTH	256
/* The handler's own frames that backtrace() reports before the signal's. */
#define XC_BT_EXTRA	16
#define XC_KEEP		4

/* A sample kept for the report: a mismatch, or a reference failure. */
struct xc_bad {
	int n[XC_WALKERS];
	int at;
	enum xc_walker who;	/* the reference that failed, or XC_OURS */
	uint64_t pcs[XC_WALKERS][32];
};

static struct {
	pid_t pid;
	timer_t timer;
	bool armed;
	bool stop;
	bool in_handler;	/* atomic: read by xc_on_fault() */
	uint64_t rng;
	struct timespec until;
	unsigned long min;
	/* Counters, written by the handler only. */
	unsigned long samples;
	unsigned long top_covered;
	unsigned long frames;
	unsigned long reached_end;
	unsigned long deepest;
	unsigned long bad;
	unsigned long ref_bad[XC_WALKERS];
	unsigned long ref_bad_all;
	unsigned long no_ref;
	unsigned long in_libgcc;
	/* libgcc_s's executable segments. */
	uint64_t gcc_start;
	uint64_t gcc_end;
	struct xc_bad keep[XC_KEEP];
	struct xc_bad keep_ref[XC_KEEP];
} xc;

static uint64_t xc_rand(void)
{
	xc.rng ^= xc.rng >> 12;
	xc.rng ^= xc.rng << 25;
	xc.rng ^= xc.rng >> 27;
	return xc.rng * 0x2545f4914f6cdd1dULL;
}

static void xc_arm(void)
{
	struct itimerspec it = {
		.it_value.tv_nsec = 50000 + xc_rand() % 1000000,
	};

	timer_settime(xc.timer, 0, &it, NULL);
}

static int xc_libunwind(ucontext_t *uc, uint64_t *pcs, int max)
{
	unw_cursor_t c;
	unw_word_t ip;
	int n = 0;

	if (unw_init_local2(&c, uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	while (n < max) {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		pcs[n++] = ip;
		if (unw_step(&c) <= 0)
			break;
	}
	return n;
}

/* backtrace() from the interrupted PC on; 0 if it is not there. */
static int xc_backtrace(uint64_t pc, uint64_t *pcs, int max)
{
	void *bt[XC_DEPTH + XC_BT_EXTRA];
	int n = backtrace(bt, XC_DEPTH + XC_BT_EXTRA), i, k;

	for (i = 0; i < n && i < XC_BT_EXTRA; i++)
		if ((uint64_t)bt[i] == pc)
			break;
	if (i == n || i == XC_BT_EXTRA)
		return 0;
	for (k = 0; i < n && k < max; i++, k++)
		pcs[k] = (uint64_t)bt[i];
	return k;
}

/* Keep sample @k of its kind in @keep, if it is one of the first. */
static void xc_keep(struct xc_bad *keep, unsigned long k,
		    uint64_t pcs[XC_WALKERS][XC_DEPTH], const int n[XC_WALKERS],
		    int at, enum xc_walker who)
{
	struct xc_bad *b;
	int w, i;

	if (k >= XC_KEEP)
		return;
	b = &keep[k];
	b->at = at;
	b->who = who;
	for (w = 0; w < XC_WALKERS; w++) {
		b->n[w] = n[w];
		for (i = 0; i < n[w] && i < 32; i++)
			b->pcs[w][i] = pcs[w][i];
	}
}

/*
 * Judge the three walks over the frames our tables cover and the frame
 * the last of them returns to, and count what was found.
 */
static void xc_compare(uint64_t pcs[XC_WALKERS][XC_DEPTH],
		       const int n[XC_WALKERS])
{
	struct xc_walk w[XC_WALKERS];
	struct xc_verdict v;
	int covered = 0, r;
	bool ok;

	while (covered < n[XC_OURS] &&
	       uwalk_covered(pcs[XC_OURS][covered], !covered))
		covered++;
	for (r = 0; r < XC_WALKERS; r++)
		w[r] = (struct xc_walk){ .pcs = pcs[r], .n = n[r] };
	ok = xc_stacks_compare(w, covered + 1, &v);
	for (r = XC_LIBUNWIND; r < XC_WALKERS; r++) {
		if (v.ref_bad[r] < 0)
			continue;
		xc_keep(xc.keep_ref, xc.ref_bad_all++, pcs, n, v.ref_bad[r], r);
		xc.ref_bad[r]++;
	}
	if (!ok) {
		xc_keep(xc.keep, xc.bad++, pcs, n, v.bad, XC_OURS);
		return;
	}
	if (!v.frames) {
		xc.no_ref++;
		return;
	}
	xc.top_covered += covered > 0;
	xc.frames += v.frames;
	xc.reached_end += covered < n[XC_OURS];
	if ((unsigned long)covered > xc.deepest)
		xc.deepest = covered;
}

static bool xc_time_up(void)
{
	struct timespec now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	return now.tv_sec > xc.until.tv_sec ||
	       (now.tv_sec == xc.until.tv_sec &&
		now.tv_nsec >= xc.until.tv_nsec);
}

/* Is any frame libunwind found in libgcc_s? */
static bool xc_in_libgcc(const uint64_t *pcs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (pcs[i] >= xc.gcc_start && pcs[i] < xc.gcc_end)
			return true;
	return false;
}

static void xc_on_prof(int sig, siginfo_t *si, void *ucv)
{
	static uint64_t pcs[XC_WALKERS][XC_DEPTH];
	ucontext_t *uc = ucv;
	int n[XC_WALKERS], saved = errno;

	if (xc.stop)
		return;
	__atomic_store_n(&xc.in_handler, true, __ATOMIC_RELAXED);
	n[XC_OURS] = uwalk_ucontext(uc, pcs[XC_OURS], XC_DEPTH);
	n[XC_LIBUNWIND] = xc_libunwind(uc, pcs[XC_LIBUNWIND], XC_DEPTH);
	if (xc_in_libgcc(pcs[XC_LIBUNWIND], n[XC_LIBUNWIND])) {
		/* See the head of this file: ours and libunwind only. */
		xc.in_libgcc++;
		n[XC_BACKTRACE] = XC_NOT_RUN;
	} else {
		n[XC_BACKTRACE] = xc_backtrace(pcs[XC_OURS][0],
					       pcs[XC_BACKTRACE], XC_DEPTH);
	}
	xc.samples++;
	xc_compare(pcs, n);
	if (xc_time_up())
		xc.stop = true;
	else
		xc_arm();
	__atomic_store_n(&xc.in_handler, false, __ATOMIC_RELAXED);
	errno = saved;
}

static void xc_print_stack(FILE *out, const char *who, const uint64_t *pcs,
			   int n)
{
	const char *obj, *sym;
	uint64_t base;
	Dl_info di;
	int i;

	if (n == XC_NOT_RUN) {
		fprintf(out, "    %s: not asked\n", who);
		return;
	}
	fprintf(out, "    %s (%d frames):\n", who, n);
	for (i = 0; i < n && i < 32; i++) {
		obj = "?";
		sym = "";
		base = 0;
		if (dladdr((void *)pcs[i], &di)) {
			obj = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
			obj = obj ? obj + 1 : di.dli_fname ? di.dli_fname : "?";
			base = (uint64_t)di.dli_fbase;
			if (di.dli_sname)
				sym = di.dli_sname;
		}
		fprintf(out, "      #%d %#lx %s+%#lx %s%s\n", i,
			(unsigned long)pcs[i], obj,
			(unsigned long)(pcs[i] - base), sym,
			uwalk_covered(pcs[i], !i) ? "" : " (no table)");
	}
}

static const char *xc_name(void)
{
	static char exe[256];
	const char *n = getenv("XC_STACKS_NAME");
	ssize_t len;

	if (n)
		return n;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0)
		return "?";
	exe[len] = 0;
	return exe;
}

static void xc_report(void)
{
	static const char *const who[XC_WALKERS] = {
		"ours (kernel/unwind/sframe_user.c)", "libunwind",
		"backtrace()",
	};
	const char *path = getenv("XC_STACKS_REPORT");
	unsigned long funcs;
	int objs = uwalk_objects(&funcs);
	FILE *out = stderr;
	bool ok;
	int i, w;

	if (path)
		out = fopen(path, "a");
	if (!out)
		out = stderr;
	ok = !xc.bad && xc.top_covered >= xc.min;
	fprintf(out,
		"%s stacks %s: %lu samples, %lu with the top frame in our tables (%d objects, %lu functions), %lu frames compared, deepest %lu, %lu ended at a frame without a table, %lu in libgcc's unwinder (no backtrace()), reference failures: %lu of libunwind, %lu of backtrace(), %lu samples with no reference walk: %lu mismatches\n",
		ok ? "ok" : "FAIL", xc_name(), xc.samples, xc.top_covered,
		objs, funcs, xc.frames, xc.deepest, xc.reached_end,
		xc.in_libgcc, xc.ref_bad[XC_LIBUNWIND],
		xc.ref_bad[XC_BACKTRACE], xc.no_ref, xc.bad);
	if (xc.top_covered < xc.min)
		fprintf(out, "  fewer than %lu samples in our tables\n", xc.min);
	for (i = 0; i < XC_KEEP && i < (int)xc.bad; i++) {
		fprintf(out, "  mismatch %d at frame %d:\n", i, xc.keep[i].at);
		for (w = 0; w < XC_WALKERS; w++)
			xc_print_stack(out, who[w], xc.keep[i].pcs[w],
				       xc.keep[i].n[w]);
	}
	for (i = 0; i < XC_KEEP && i < (int)xc.ref_bad_all; i++) {
		fprintf(out,
			"  reference failure %d, of %s at frame %d (not a mismatch: ours agrees with the other):\n",
			i, who[xc.keep_ref[i].who], xc.keep_ref[i].at);
		for (w = 0; w < XC_WALKERS; w++)
			xc_print_stack(out, who[w], xc.keep_ref[i].pcs[w],
				       xc.keep_ref[i].n[w]);
	}
	if (out != stderr)
		fclose(out);
}

/*
 * A crash, in the program or in one of the walks: say where, with the
 * stack as our walker sees it, then die of the signal.
 */
static void xc_on_fault(int sig, siginfo_t *si, void *ucv)
{
	static const char *const who[1] = { "at the fault, by ours" };
	uint64_t pcs[64];
	FILE *out = stderr;
	const char *path = getenv("XC_STACKS_REPORT");
	int n = uwalk_ucontext(ucv, pcs, 64);

	if (path)
		out = fopen(path, "a");
	if (!out)
		out = stderr;
	fprintf(out, "FAIL stacks %s: signal %d at address %p, %s a sample\n",
		xc_name(), sig, si->si_addr,
		__atomic_load_n(&xc.in_handler, __ATOMIC_RELAXED) ?
		"while walking" : "outside");
	xc_print_stack(out, who[0], pcs, n);
	fflush(out);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int xc_find_libgcc(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t a;
	int i;

	if (!strstr(info->dlpi_name, "/libgcc_s.so"))
		return 0;
	xc.gcc_start = UINT64_MAX;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		a = info->dlpi_addr + ph->p_vaddr;
		if (a < xc.gcc_start)
			xc.gcc_start = a;
		if (a + ph->p_memsz > xc.gcc_end)
			xc.gcc_end = a + ph->p_memsz;
	}
	return 1;
}

static unsigned long xc_env(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v ? strtoul(v, NULL, 0) : def;
}

__attribute__((constructor)) static void xc_start(void)
{
	struct sigevent sev = {
		.sigev_notify = SIGEV_THREAD_ID,
		.sigev_signo = SIGPROF,
	};
	struct sigaction sa = {
		.sa_sigaction = xc_on_prof,
		.sa_flags = SA_SIGINFO | SA_RESTART,
	};
	struct sigaction fault = { .sa_flags = SA_SIGINFO };
	uint64_t warm[XC_DEPTH];
	void *bt[4];

	/* Children are not sampled: they have no timer, and no preload. */
	unsetenv("LD_PRELOAD");
	xc.pid = getpid();
	xc.rng = xc_env("XC_STACKS_SEED", 0x9e3779b97f4a7c15ULL) | 1;
	xc.min = xc_env("XC_STACKS_MIN", 100);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &xc.until);
	xc.until.tv_sec += xc_env("XC_STACKS_SECONDS", 3);
	if (uwalk_init() < 0) {
		fprintf(stderr, "crosscheck_stacks: uwalk_init failed\n");
		return;
	}
	/* backtrace() loads libgcc_s on first use: not in the handler. */
	backtrace(bt, 4);
	dl_iterate_phdr(xc_find_libgcc, NULL);
	uwalk_here(warm, XC_DEPTH);
	sev._sigev_un._tid = syscall(SYS_gettid);
	fault.sa_sigaction = xc_on_fault;
	sigaction(SIGSEGV, &fault, NULL);
	sigaction(SIGBUS, &fault, NULL);
	if (sigaction(SIGPROF, &sa, NULL) ||
	    timer_create(CLOCK_MONOTONIC, &sev, &xc.timer)) {
		perror("crosscheck_stacks: timer");
		return;
	}
	xc.armed = true;
	xc_arm();
}

__attribute__((destructor)) static void xc_end(void)
{
	if (!xc.armed || getpid() != xc.pid)
		return;
	xc.stop = true;
	timer_delete(xc.timer);
	xc_report();
}
