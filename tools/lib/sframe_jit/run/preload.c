// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsframe_run.so, which sframe-run puts in LD_PRELOAD: registers the
 * unwind tables of every object the process loads, at start-up and at
 * each dlopen(), and unregisters them at dlclose(); and those of the
 * code JITs register with libgcc and announce to debuggers
 * (jit_hooks.c), whose lists it also reads at each pthread_create().
 *
 * Why LD_PRELOAD and not LD_AUDIT, why a thread at start-up, and what
 * happens at fork() and exec: Documentation/sframe_jit.rst, "sframe-run".
 *
 * Nothing here may make the program fail: every error leaves an object
 * to the kernel's frame pointer fallback, and SFRAME_RUN_VERBOSE=1 says
 * so on stderr.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "env_flag.h"
#include "seccomp.h"
#include "sframe_run.h"

#define SFRAME_RUN_API __attribute__((visibility("default")))

static struct sframe_run_tracker tracker;
static bool active;
static bool verbose;
/*
 * How long the start-up thread waits before it converts: a program
 * that is over by then (a compiler's driver, a shell's command) costs
 * no conversion at all.  At least this, and DELAY_SCALE times the CPU
 * time the process took to get to the constructor (delay_get()).
 */
#define DELAY_MIN_MS	20
#define DELAY_SCALE	10
static unsigned long delay_ms = DELAY_MIN_MS;
static void *(*real_dlopen)(const char *file, int mode);
static int (*real_dlclose)(void *handle);
static int (*real_unshare)(int flags);
static int (*real_setns)(int fd, int nstype);
static int (*real_pthread_create)(pthread_t *thread,
				  const pthread_attr_t *attr,
				  void *(*start)(void *arg), void *arg);

static void report_jit(const struct sframe_run_entry *e)
{
	const struct sframe_jit_cfi_stats *s = &e->reg.stats;
	char why[256] = "";
	size_t len = 0;
	unsigned int r;

	for (r = 0; r < SFRAME_JIT_CFI_NR_REASONS; r++) {
		if (!s->nr_unsupported[r] || len >= sizeof(why))
			continue;
		len += snprintf(why + len, sizeof(why) - len, " %s %llu",
				sframe_jit_cfi_reason_str(r),
				(unsigned long long)s->nr_unsupported[r]);
	}
	fprintf(stderr,
		"sframe-run: + %s: jit %llu of %llu FDEs, %llu rows in %llu, %zu bytes pinned (%s); left to frame pointers %llu:%s\n",
		e->obj.name, (unsigned long long)s->nr_converted,
		(unsigned long long)s->nr_fdes, (unsigned long long)s->nr_rows,
		(unsigned long long)s->nr_shared_rows, e->reg.map_size,
		e->reg.compact ? "compact" : "version 1",
		(unsigned long long)(s->nr_fdes - s->nr_converted),
		len ? why : " none");
}

/* The verbose knob's printer; called under the tracker's lock. */
static void report(const struct sframe_run_entry *e, bool gone)
{
	int saved = errno;

	if (gone)
		fprintf(stderr, "sframe-run: - %s\n", e->obj.name);
	else if (e->reg.kind == SFRAME_RUN_JIT)
		report_jit(e);
	else if (e->reg.kind == SFRAME_RUN_ELF)
		fprintf(stderr, "sframe-run: + %s: elf .sframe, %llu bytes\n",
			e->obj.name, (unsigned long long)e->obj.sframe_size);
	else
		fprintf(stderr, "sframe-run: + %s: nothing registered: %s\n",
			e->obj.name, e->reg.err == -ENOENT ?
			"no unwind table" : strerror(-e->reg.err));
	errno = saved;
}

/*
 * Bring the tracker in step with the loader and publish what is new,
 * but for what the start-up thread has yet to do.
 */
static void update(void)
{
	int saved = errno;

	if (!active || sframe_run__inside())
		return;
	sframe_run__enter();
	sframe_run__tracker_sync(&tracker);
	sframe_run__tracker_work(&tracker, false);
	sframe_run__hooks_poll();
	sframe_run__leave(false);
	errno = saved;
}

/*
 * The delay, unless SFRAME_RUN_DELAY_MS sets it: scaled by how long the
 * loader took to get the process here, in its CPU time, because a
 * fixed delay is right for one machine only.  Under software emulation
 * everything is 30 to 100 times slower, a program that ends in 300 ms
 * there ends in 10 here, and a conversion on a second emulated CPU
 * slows the program's as much as running beside it on the first (the
 * emulated CPUs share the host's): the wait must grow as the machine
 * slows down.  On real hardware the loader takes a millisecond or two
 * for most programs, and the wait stays 20 ms; for lli-14, whose
 * libLLVM takes 8 ms to relocate, it is 80 ms.
 */
static unsigned long delay_get(void)
{
	const char *v = getenv("SFRAME_RUN_DELAY_MS");
	struct timespec ts;
	unsigned long ms;

	if (v && *v)
		return strtoul(v, NULL, 10);
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return DELAY_MIN_MS;
	ms = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return ms * DELAY_SCALE > DELAY_MIN_MS ? ms * DELAY_SCALE :
						 DELAY_MIN_MS;
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&tracker.lock);
	sframe_run__hooks_fork_prepare();
}

static void fork_parent(void)
{
	sframe_run__hooks_fork_parent();
	pthread_mutex_unlock(&tracker.lock);
}

static void fork_child(void)
{
	sframe_run__hooks_fork_child();
	sframe_run__startup_forked();
	sframe_run__tracker_forked(&tracker);
}

static void resolve(void)
{
	if (!real_dlopen)
		real_dlopen = dlsym(RTLD_NEXT, "dlopen");
	if (!real_dlclose)
		real_dlclose = dlsym(RTLD_NEXT, "dlclose");
	if (!real_unshare)
		real_unshare = dlsym(RTLD_NEXT, "unshare");
	if (!real_setns)
		real_setns = dlsym(RTLD_NEXT, "setns");
}

__attribute__((constructor)) static void sframe_run_init(void)
{
	const struct sframe_run_ops *ops = &sframe_run__kernel_ops;
	int saved = errno;

	resolve();
	verbose = sframe_run__env_flag("SFRAME_RUN_VERBOSE");
	if (sframe_run__env_flag("SFRAME_RUN_NO_KERNEL")) {
		ops = &sframe_run__private_ops;
	} else if (access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK)) {
		if (verbose)
			fputs("sframe-run: no sframe_jit_open(2) in this kernel\n",
			      stderr);
		goto out;
	} else if (sframe_run__calls_filtered()) {
		if (verbose)
			fputs("sframe-run: a seccomp filter keeps the calls from the kernel\n",
			      stderr);
		goto out;
	}
	sframe_run__tracker_init(&tracker, ops);
	if (verbose)
		tracker.report = report;
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		goto out;
	sframe_run__enter();
	sframe_run__hooks_init(ops, verbose);
	active = true;
	sframe_run__tracker_sync(&tracker);
	sframe_run__leave(false);
	delay_ms = delay_get();
	if (verbose && !sframe_run__env_flag("SFRAME_RUN_SYNC"))
		fprintf(stderr, "sframe-run: start-up thread waits %lu ms\n",
			delay_ms);
	if (sframe_run__env_flag("SFRAME_RUN_SYNC"))
		goto work;
	sframe_run__tracker_defer(&tracker);
	if (sframe_run__startup_start(&tracker, delay_ms))
		goto out;
	/* Without the thread, this one does it all, deferred or not. */
work:
	sframe_run__enter();
	sframe_run__tracker_work(&tracker, true);
	sframe_run__leave(false);
out:
	errno = saved;
}

/**
 * dlopen() - the loader's dlopen(), then the new objects registered
 * @file: as for dlopen().
 * @mode: as for dlopen().
 *
 * A bare name is searched in the run path of the program's caller, not
 * of this object (dlopen_path.c).
 *
 * Return: what dlopen() returned.
 */
SFRAME_RUN_API void *dlopen(const char *file, int mode)
{
	void *handle;

	resolve();
	if (!real_dlopen)
		return NULL;
	handle = sframe_run__dlopen_as(__builtin_return_address(0), file,
				       mode, real_dlopen);
	if (handle)
		update();
	return handle;
}

/**
 * dlclose() - the loader's dlclose(), then the objects it unloaded
 *	unregistered
 * @handle: as for dlclose().
 *
 * Return: what dlclose() returned.
 */
SFRAME_RUN_API int dlclose(void *handle)
{
	int ret;

	resolve();
	if (!real_dlclose)
		return -1;
	ret = real_dlclose(handle);
	update();
	return ret;
}

/**
 * pthread_create() - the GDB JIT interface's lists read, then libc's
 *	pthread_create()
 * @thread: as for pthread_create().
 * @attr: likewise.
 * @start: likewise.
 * @arg: likewise.
 *
 * A JIT may link its code into the GDB JIT interface once, at start-up,
 * and call nothing sframe-run sees before the threads that run the code
 * exist: QEMU's TCG registers its code buffer as the accelerator is set
 * up, and starts the vCPU threads next.  Its list is read here, as a
 * registration reads it (only if a descriptor moved), so that the code
 * is published before any of its threads runs.
 *
 * Return: what libc's pthread_create() returned; EAGAIN without it.
 */
SFRAME_RUN_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*start)(void *arg), void *arg)
{
	int (*fn)(pthread_t *thread, const pthread_attr_t *attr,
		  void *(*start)(void *arg), void *arg);

	fn = __atomic_load_n(&real_pthread_create, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = dlsym(RTLD_NEXT, "pthread_create");
		__atomic_store_n(&real_pthread_create, fn, __ATOMIC_RELEASE);
	}
	if (!fn)
		return EAGAIN;
	if (active && !sframe_run__inside())
		sframe_run__hooks_poll_quick();
	return fn(thread, attr, start, arg);
}

/*
 * After a call that wants the caller alone in its process failed with
 * EINVAL: if the start-up thread was there, end it, call again, and
 * start it again for what it left.  A failure for any other reason, or
 * with no thread of ours, is the program's, and returned as it came.
 */
static bool startup_in_the_way(int ret)
{
	return ret && errno == EINVAL && active && sframe_run__startup_stop();
}

static void startup_again(int ret)
{
	int saved = errno;

	sframe_run__startup_start(&tracker, delay_ms);
	if (ret)
		errno = saved;
}

static int unshare_once(int flags)
{
	resolve();
	if (real_unshare)
		return real_unshare(flags);
	return syscall(SYS_unshare, flags);
}

/**
 * unshare() - libc's unshare(), with the start-up thread out of the way
 * @flags: as for unshare().
 *
 * A user namespace (and CLONE_THREAD, CLONE_SIGHAND, CLONE_VM) can be
 * unshared only by a process of one thread (unshare(2), EINVAL):
 * unshare -Ur would fail under sframe-run while its thread waits.
 *
 * Return: what unshare() returned.
 */
SFRAME_RUN_API int unshare(int flags)
{
	int ret = unshare_once(flags);

	if (!startup_in_the_way(ret))
		return ret;
	ret = unshare_once(flags);
	startup_again(ret);
	return ret;
}

static int setns_once(int fd, int nstype)
{
	resolve();
	if (real_setns)
		return real_setns(fd, nstype);
	return syscall(SYS_setns, fd, nstype);
}

/**
 * setns() - libc's setns(), with the start-up thread out of the way
 * @fd: as for setns().
 * @nstype: likewise.
 *
 * Entering a user namespace wants a process of one thread, as
 * unshare() does.
 *
 * Return: what setns() returned.
 */
SFRAME_RUN_API int setns(int fd, int nstype)
{
	int ret = setns_once(fd, nstype);

	if (!startup_in_the_way(ret))
		return ret;
	ret = setns_once(fd, nstype);
	startup_again(ret);
	return ret;
}
