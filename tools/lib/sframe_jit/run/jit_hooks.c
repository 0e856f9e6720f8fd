// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libgcc's frame registration, interposed: LLVM's MCJIT and ORC (lli,
 * PostgreSQL's llvmjit) hand each object's relocated .eh_frame to
 * __register_frame() so that C++ exceptions unwind through JIT code.
 * Each call goes on to libgcc's function first, so that they still do,
 * then its code is published (frames.c) or unpublished; and each is a
 * moment at which the JIT's list of the GDB JIT interface holds still
 * (gdbjit.c).
 *
 * libgcc's function is found after the preload in the global scope, or
 * in libgcc_s.so.1 where it is not there (a JIT loaded into a local
 * scope by dlopen()), loaded if need be, as the JIT that calls it would
 * have it loaded.  Without it, a registration is only published, and a
 * deregistration returns what libgcc's returns for an unknown one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "env_flag.h"
#include "sframe_run.h"

#define SFRAME_RUN_API __attribute__((visibility("default")))

/* Entries of a __register_frame_table() table taken at most. */
#define MAX_TABLE		4096

/*
 * After it published something, the worker looks for more every
 * millisecond for a tenth of a second before it blocks: a JIT that
 * registers in bursts then never pays for a wake-up, and one that
 * registers now and then pays one per burst.
 */
#define WORKER_NAP_NS		1000000
#define WORKER_NAPS		100

enum real_fn {
	R_REGISTER,
	R_REGISTER_INFO,
	R_REGISTER_INFO_BASES,
	R_REGISTER_TABLE,
	R_REGISTER_INFO_TABLE,
	R_REGISTER_INFO_TABLE_BASES,
	R_DEREGISTER,
	R_DEREGISTER_INFO,
	R_DEREGISTER_INFO_BASES,
	NR_REAL,
};

static const char *const real_names[NR_REAL] = {
	[R_REGISTER]			= "__register_frame",
	[R_REGISTER_INFO]		= "__register_frame_info",
	[R_REGISTER_INFO_BASES]		= "__register_frame_info_bases",
	[R_REGISTER_TABLE]		= "__register_frame_table",
	[R_REGISTER_INFO_TABLE]		= "__register_frame_info_table",
	[R_REGISTER_INFO_TABLE_BASES]	= "__register_frame_info_table_bases",
	[R_DEREGISTER]			= "__deregister_frame",
	[R_DEREGISTER_INFO]		= "__deregister_frame_info",
	[R_DEREGISTER_INFO_BASES]	= "__deregister_frame_info_bases",
};

static void *real_fns[NR_REAL];
static struct sframe_run_frames frames;
static struct sframe_run_gdbjit gdbjit;
static bool active;
static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
static bool worker_running;
/*
 * Set while libgcc's function runs: libgcc's __register_frame() may
 * reach its __register_frame_info() through the PLT, that is, us.
 * Initial-exec: the preload is loaded with the program, in its static
 * TLS, and each registration then reads it without a call.
 */
static __thread bool in_real __attribute__((tls_model("initial-exec")));

static void *real_lookup(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	void *h;

	if (fn)
		return fn;
	h = dlopen("libgcc_s.so.1", RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		h = dlopen("libgcc_s.so.1", RTLD_LAZY);
	if (!h)
		return NULL;
	/* The handle stays open: the function must. */
	return dlsym(h, name);
}

static void *real(enum real_fn i)
{
	void *fn = __atomic_load_n(&real_fns[i], __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = real_lookup(real_names[i]);
		__atomic_store_n(&real_fns[i], fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* Whether this call is the outermost, the one that publishes. */
static bool enter(void)
{
	bool outer = !in_real;

	in_real = true;
	return outer;
}

static void leave(bool outer)
{
	in_real = !outer;
}

static void *worker(void *arg)
{
	struct timespec nap = { .tv_nsec = WORKER_NAP_NS };
	unsigned int naps = 0;

	(void)arg;
	in_real = true;
	sframe_run__enter();
	for (;;) {
		if (sframe_run__frames_work(&frames)) {
			naps = 0;
		} else if (naps < WORKER_NAPS) {
			nanosleep(&nap, NULL);
			naps++;
		} else {
			sframe_run__frames_wait(&frames);
			naps = 0;
		}
	}
	return NULL;
}

/* A thread of sframe-run's own, as the start-up thread is. */
static bool worker_create(void)
{
	return sframe_run__thread(worker, "sframe-run-jit");
}

/* The worker, started at the first registration; without it, publish now. */
static void worker_ensure(void)
{
	if (__atomic_load_n(&worker_running, __ATOMIC_ACQUIRE) || frames.sync)
		return;
	pthread_mutex_lock(&worker_lock);
	if (!worker_running && !frames.sync) {
		if (worker_create())
			__atomic_store_n(&worker_running, true, __ATOMIC_RELEASE);
		else
			frames.sync = true;
	}
	pthread_mutex_unlock(&worker_lock);
}

/*
 * In the JIT's thread, as sframe-run's work: with SFRAME_RUN_SYNC=1 the
 * conversion is here, and its load of libdw must not convert again.
 *
 * libdw first, which every conversion needs and the first registration
 * of a process loads (dw.c): the JIT's code must not run before the
 * worker can convert it.  Under emulation the load took longer than lli
 * took to reach its code, and up to three quarters of the samples in it
 * came before its rows.  Once a process, and only in one that JITs;
 * afterwards a single load.
 */
static void publish(const void *key, const void *begin)
{
	int saved = errno;
	bool was;

	if (active) {
		was = sframe_run__enter();
		sframe_jit__dw();
		worker_ensure();
		sframe_run__frames_add(&frames, key, begin);
		sframe_run__gdbjit_poll_quick(&gdbjit);
		sframe_run__leave(was);
	}
	errno = saved;
}

static void publish_table(const void *table)
{
	void *const *t = table;
	uint32_t i;

	for (i = 0; t && t[i] && i < MAX_TABLE; i++)
		publish(table, t[i]);
}

static void unpublish(const void *key)
{
	int saved = errno;
	bool was;

	if (active) {
		was = sframe_run__enter();
		sframe_run__frames_remove(&frames, key);
		sframe_run__gdbjit_poll_quick(&gdbjit);
		sframe_run__leave(was);
	}
	errno = saved;
}

/**
 * __register_frame() - libgcc's, then the section's code published
 * @begin: an .eh_frame section's start, or one FDE.
 */
SFRAME_RUN_API void __register_frame(void *begin)
{
	void (*fn)(void *begin) = real(R_REGISTER);
	bool outer = enter();

	if (fn)
		fn(begin);
	if (outer)
		publish(begin, begin);
	leave(outer);
}

/**
 * __register_frame_info() - libgcc's, then the section's code published
 * @begin: an .eh_frame section's start.
 * @ob: libgcc's object, the caller's memory.
 */
SFRAME_RUN_API void __register_frame_info(const void *begin, void *ob)
{
	void (*fn)(const void *begin, void *ob) = real(R_REGISTER_INFO);
	bool outer = enter();

	if (fn)
		fn(begin, ob);
	if (outer)
		publish(begin, begin);
	leave(outer);
}

/**
 * __register_frame_info_bases() - libgcc's, then the code published
 * @begin: an .eh_frame section's start.
 * @ob: libgcc's object.
 * @tbase: base of text-relative pointers, which x86-64 does not use.
 * @dbase: base of data-relative pointers, likewise.
 */
SFRAME_RUN_API void __register_frame_info_bases(const void *begin, void *ob,
						void *tbase, void *dbase)
{
	void (*fn)(const void *begin, void *ob, void *tbase, void *dbase) =
		real(R_REGISTER_INFO_BASES);
	bool outer = enter();

	if (fn)
		fn(begin, ob, tbase, dbase);
	if (outer)
		publish(begin, begin);
	leave(outer);
}

/**
 * __register_frame_table() - libgcc's, then each section's code published
 * @begin: a NULL-terminated array of .eh_frame sections.
 */
SFRAME_RUN_API void __register_frame_table(void *begin)
{
	void (*fn)(void *begin) = real(R_REGISTER_TABLE);
	bool outer = enter();

	if (fn)
		fn(begin);
	if (outer)
		publish_table(begin);
	leave(outer);
}

/**
 * __register_frame_info_table() - libgcc's, then each section published
 * @begin: a NULL-terminated array of .eh_frame sections.
 * @ob: libgcc's object.
 */
SFRAME_RUN_API void __register_frame_info_table(void *begin, void *ob)
{
	void (*fn)(void *begin, void *ob) = real(R_REGISTER_INFO_TABLE);
	bool outer = enter();

	if (fn)
		fn(begin, ob);
	if (outer)
		publish_table(begin);
	leave(outer);
}

/**
 * __register_frame_info_table_bases() - libgcc's, then each section
 *	published
 * @begin: a NULL-terminated array of .eh_frame sections.
 * @ob: libgcc's object.
 * @tbase: base of text-relative pointers.
 * @dbase: base of data-relative pointers.
 */
SFRAME_RUN_API void __register_frame_info_table_bases(void *begin, void *ob,
						      void *tbase, void *dbase)
{
	void (*fn)(void *begin, void *ob, void *tbase, void *dbase) =
		real(R_REGISTER_INFO_TABLE_BASES);
	bool outer = enter();

	if (fn)
		fn(begin, ob, tbase, dbase);
	if (outer)
		publish_table(begin);
	leave(outer);
}

/**
 * __deregister_frame() - libgcc's, then the code unpublished
 * @begin: what __register_frame() was given.
 */
SFRAME_RUN_API void __deregister_frame(void *begin)
{
	void (*fn)(void *begin) = real(R_DEREGISTER);
	bool outer = enter();

	if (fn)
		fn(begin);
	if (outer)
		unpublish(begin);
	leave(outer);
}

/**
 * __deregister_frame_info() - libgcc's, then the code unpublished
 * @begin: what a __register_frame_info*() call was given.
 *
 * Return: libgcc's object of the registration, as libgcc returns it;
 * NULL without libgcc.
 */
SFRAME_RUN_API void *__deregister_frame_info(const void *begin)
{
	void *(*fn)(const void *begin) = real(R_DEREGISTER_INFO);
	bool outer = enter();
	void *ob = NULL;

	if (fn)
		ob = fn(begin);
	if (outer)
		unpublish(begin);
	leave(outer);
	return ob;
}

/**
 * __deregister_frame_info_bases() - libgcc's, then the code unpublished
 * @begin: what a __register_frame_info*() call was given.
 *
 * Return: as __deregister_frame_info().
 */
SFRAME_RUN_API void *__deregister_frame_info_bases(const void *begin)
{
	void *(*fn)(const void *begin) = real(R_DEREGISTER_INFO_BASES);
	bool outer = enter();
	void *ob = NULL;

	if (fn)
		ob = fn(begin);
	if (outer)
		unpublish(begin);
	leave(outer);
	return ob;
}

/* The verbose knob's printers. */
static void frame_report(const void *begin, const struct sframe_run_reg *reg,
			 bool gone)
{
	if (gone)
		fprintf(stderr, "sframe-run: - frame %p: [%#llx, %#llx)\n",
			begin, (unsigned long long)reg->start,
			(unsigned long long)reg->end);
	else if (reg->kind == SFRAME_RUN_JIT)
		fprintf(stderr,
			"sframe-run: + frame %p: [%#llx, %#llx) jit %llu of %llu FDEs, %llu rows\n",
			begin, (unsigned long long)reg->start,
			(unsigned long long)reg->end,
			(unsigned long long)reg->stats.nr_converted,
			(unsigned long long)reg->stats.nr_fdes,
			(unsigned long long)reg->stats.nr_rows);
	else
		fprintf(stderr, "sframe-run: + frame %p: nothing registered: %s\n",
			begin, strerror(-reg->err));
}

static void gdbjit_report(const struct sframe_run_gdbobj *o, bool gone)
{
	if (gone) {
		fprintf(stderr, "sframe-run: - gdb jit object %p\n", o->image);
		return;
	}
	fprintf(stderr,
		"sframe-run: + gdb jit object %p, %llu bytes: %u names, rows %s\n",
		o->image, (unsigned long long)o->size, o->nr_names,
		o->reg.kind == SFRAME_RUN_JIT ? "registered" :
		o->reg.err == -EOPNOTSUPP ? "through __register_frame" :
		strerror(-o->reg.err));
}

/**
 * sframe_run__hooks_init() - start taking what JITs register
 * @ops: how ranges reach the kernel.
 * @verbose: print each registration on stderr.
 *
 * Called once, from the preload's constructor; until then the hooks
 * only pass the calls on.
 */
void sframe_run__hooks_init(const struct sframe_run_ops *ops, bool verbose)
{
	sframe_run__frames_init(&frames, ops);
	frames.keep = sframe_run__env_flag("SFRAME_RUN_KEEP_DEREGISTERED");
	frames.sync = sframe_run__env_flag("SFRAME_RUN_SYNC");
	sframe_run__gdbjit_init(&gdbjit, ops, NULL);
	if (verbose) {
		frames.report = frame_report;
		gdbjit.report = gdbjit_report;
	}
	sframe_run__gdbjit_poll(&gdbjit);
	active = true;
}

/**
 * sframe_run__hooks_poll() - read the GDB JIT interface's lists now
 *
 * At dlopen(), dlclose() and exit, where no JIT is inside its own
 * registration.
 */
void sframe_run__hooks_poll(void)
{
	int saved = errno;

	if (active && !in_real)
		sframe_run__gdbjit_poll(&gdbjit);
	errno = saved;
}

/**
 * sframe_run__hooks_poll_quick() - read the lists if a descriptor moved
 *
 * At pthread_create(), which may come from inside a JIT's registration
 * as from anywhere, and after LLVMOrcLLJITLookup() (orc_lookup.c), once
 * LLVM linked the code's object into the list: only the descriptors
 * already known, as at each registration.  As sframe-run's work: a
 * conversion here may be the first, load libdw, and reach the dlopen()
 * hook.
 */
void sframe_run__hooks_poll_quick(void)
{
	int saved = errno;
	bool was;

	if (active && !in_real) {
		was = sframe_run__enter();
		sframe_run__gdbjit_poll_quick(&gdbjit);
		sframe_run__leave(was);
	}
	errno = saved;
}

/*
 * The perf map must name the code that is still registered at exit, as
 * an MCJIT that never deregisters leaves it.  No lookup of descriptors:
 * it would open handles of objects the loader is unloading.  As
 * sframe-run's work: a conversion here may be the first, load libdw,
 * and reach the dlopen() hook while the walk holds the follower's lock.
 */
__attribute__((destructor)) static void hooks_exit(void)
{
	int saved = errno;
	bool was;

	if (active && !in_real) {
		was = sframe_run__enter();
		sframe_run__gdbjit_walk(&gdbjit);
		sframe_run__leave(was);
	}
	errno = saved;
}

/**
 * sframe_run__hooks_fork_prepare() - hold the hooks' locks across fork()
 */
void sframe_run__hooks_fork_prepare(void)
{
	pthread_mutex_lock(&frames.lock);
	pthread_mutex_lock(&gdbjit.lock);
}

/**
 * sframe_run__hooks_fork_parent() - release them in the parent
 */
void sframe_run__hooks_fork_parent(void)
{
	pthread_mutex_unlock(&gdbjit.lock);
	pthread_mutex_unlock(&frames.lock);
}

/**
 * sframe_run__hooks_fork_child() - and in the child, which keeps copies
 *	of the registries at the same addresses but has no worker: the
 *	next registration starts one
 */
void sframe_run__hooks_fork_child(void)
{
	sframe_run__frames_forked(&frames);
	pthread_mutex_init(&worker_lock, NULL);
	worker_running = false;
	pthread_mutex_unlock(&gdbjit.lock);
	pthread_mutex_unlock(&frames.lock);
}
