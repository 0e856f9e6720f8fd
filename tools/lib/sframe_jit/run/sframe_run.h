/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sframe-run: the shared object that sframe-run preloads into a program
 * to register the unwind tables of the objects it loads.  Internal to
 * this directory and its tests; Documentation/sframe_jit.rst ("sframe-run")
 * describes what it does and why.
 *
 * The pieces, one file each:
 *
 *   objects.c   what is loaded: a snapshot from dl_iterate_phdr();
 *   publish.c   one object's table: its .sframe, or its CFI converted,
 *               into the kernel, and out again;
 *   tracker.c   which objects are registered, kept in step with the
 *               snapshots, with the conversions done outside its lock;
 *   preload.c   the process: start-up, dlopen()/dlclose(), fork(),
 *               unshare()/setns();
 *   startup.c   the start-up thread, which converts after a wait;
 *   dlopen_path.c  dlopen() searched in its caller's run path;
 *   eh_blob.c   the raw .eh_frame a JIT registers, converted;
 *   frames.c    what JITs register through __register_frame() and its
 *               kin, published for as long as it stays registered;
 *   gdbjit.c    the objects of the GDB JIT interface: their names in
 *               the perf map, their rows where they have their own;
 *   jit_hooks.c the __register_frame() family, passed on to libgcc.
 *
 * A producer of rows other than an object's CFI publishes a range
 * through sframe_run__publish_cfi() and unpublishes it as publish.c
 * does.
 */
#ifndef __SFRAME_RUN_H
#define __SFRAME_RUN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/sframe.h>

#include "sframe_jit_internal.h"

/**
 * struct sframe_run_obj - one loaded object, as the loader reports it
 * @name: its file: dlpi_name, /proc/self/exe for the executable, or
 *	the loader's name of the vDSO; owned.
 * @bias: what the loader added to the object's addresses (dlpi_addr).
 * @text_start: lowest address of its executable PT_LOAD segments.
 * @text_end: end of the highest one.
 * @sframe_start: address of its PT_GNU_SFRAME segment, 0 if none.
 * @sframe_size: that segment's size.
 * @image: for an object without a file (the vDSO), its image in
 *	memory; NULL for the others, whose file is read.
 * @image_size: bytes at @image.
 */
struct sframe_run_obj {
	char *name;
	uint64_t bias;
	uint64_t text_start;
	uint64_t text_end;
	uint64_t sframe_start;
	uint64_t sframe_size;
	const void *image;
	size_t image_size;
};

/**
 * struct sframe_run_snapshot - the objects loaded at one moment
 * @objs: the objects, in the loader's order (executable first).
 * @nr: their number.
 * @gen: dlpi_adds + dlpi_subs when it was taken: a snapshot of a
 *	larger @gen is a later one.
 */
struct sframe_run_snapshot {
	struct sframe_run_obj *objs;
	uint32_t nr;
	uint64_t gen;
};

int sframe_run__snapshot(struct sframe_run_snapshot *snap);
uint64_t sframe_run__gen(void);
void sframe_run__snapshot_free(struct sframe_run_snapshot *snap);
void sframe_run__obj_free(struct sframe_run_obj *obj);

/**
 * struct sframe_run_ops - how ranges reach the kernel
 * @jit: creates JIT registries; NULL for sframe_jit_open(2).
 * @jit_priv: its private pointer.
 * @elf_register: sframe_register(2) of an object's .sframe: 0 or -errno.
 * @unregister: sframe_unregister(2) of the section registered at
 *	@sframe_start: 0 or -errno.
 *
 * The kernel's, or the tests' stand-ins.
 */
struct sframe_run_ops {
	const struct sframe_jit_backend *jit;
	void *jit_priv;
	int (*elf_register)(const struct sframe_setup *setup);
	int (*unregister)(uint64_t sframe_start);
};

extern const struct sframe_run_ops sframe_run__kernel_ops;
extern const struct sframe_run_ops sframe_run__private_ops;

/* What became of an object's table. */
enum sframe_run_kind {
	SFRAME_RUN_NONE,	/* nothing registered: see @err */
	SFRAME_RUN_ELF,		/* its .sframe, sframe_register(2) */
	SFRAME_RUN_JIT,		/* its CFI converted, in a JIT registry */
};

/**
 * struct sframe_run_reg - an object's registration
 * @kind: SFRAME_RUN_*.
 * @err: with SFRAME_RUN_NONE, why (-ENOSYS, -ENOMEM, -ENOENT: no
 *	table...); 0 otherwise.
 * @jit: the registry, with SFRAME_RUN_JIT.
 * @start: the registered range's start.
 * @end: its end.
 * @sframe_start: with SFRAME_RUN_ELF, the address of the section given
 *	to sframe_register(2), by which sframe_unregister(2) names the
 *	registration.
 * @stats: the conversion's counts, with SFRAME_RUN_JIT.
 * @map_size: the registry's pinned bytes, with SFRAME_RUN_JIT.
 * @compact: the registry holds compact records
 *	(SFRAME_JIT_F_COMPACT_RECORDS), with SFRAME_RUN_JIT.
 */
struct sframe_run_reg {
	enum sframe_run_kind kind;
	int err;
	struct sframe_jit *jit;
	uint64_t start;
	uint64_t end;
	uint64_t sframe_start;
	struct sframe_jit_cfi_stats stats;
	size_t map_size;
	bool compact;
};

/**
 * struct sframe_run_prep - what publishing an object needs, made
 *	beforehand and without a lock
 * @cfi: its converted CFI; NULL for an object with .sframe or when the
 *	conversion failed.
 * @err: why the conversion failed, or 0.
 */
struct sframe_run_prep {
	struct sframe_jit_cfi *cfi;
	int err;
};

void sframe_run__prepare(const struct sframe_run_obj *obj,
			 struct sframe_run_prep *prep);
void sframe_run__prep_free(struct sframe_run_prep *prep);

bool sframe_run__thread(void *(*fn)(void *arg), const char *name);
bool sframe_run__enter(void);
void sframe_run__leave(bool was);
bool sframe_run__inside(void);
void sframe_run__publish(const struct sframe_run_ops *ops,
			 const struct sframe_run_obj *obj,
			 struct sframe_run_prep *prep,
			 struct sframe_run_reg *reg);
int sframe_run__publish_cfi(const struct sframe_run_ops *ops,
			    uint64_t start, uint64_t end,
			    struct sframe_jit_cfi *cfi, uint64_t bias,
			    bool compact, struct sframe_run_reg *reg);
void sframe_run__unpublish(const struct sframe_run_ops *ops,
			   struct sframe_run_reg *reg);

/* States of a tracked object. */
enum sframe_run_state {
	SFRAME_RUN_PENDING,	/* loaded, not yet looked at */
	SFRAME_RUN_BUSY,	/* a thread converts it, without the lock */
	SFRAME_RUN_DONE,	/* published, or given up: see its reg */
};

/**
 * struct sframe_run_entry - one object the tracker follows
 * @obj: the object.
 * @state: SFRAME_RUN_*.
 * @id: unique for the tracker's life, so that a conversion finishing
 *	after its object went finds no entry to publish to.
 * @reg: its registration, once SFRAME_RUN_DONE.
 * @deferred: left to the start-up thread: other threads' work skips it.
 * @seen: scratch of sframe_run__tracker_apply().
 */
struct sframe_run_entry {
	struct sframe_run_obj obj;
	enum sframe_run_state state;
	uint64_t id;
	struct sframe_run_reg reg;
	bool deferred;
	bool seen;
};

/**
 * struct sframe_run_tracker - the objects of a process and their tables
 * @lock: guards everything below; never held across a conversion, nor
 *	across dl_iterate_phdr() (see tracker.c).
 * @ops: how ranges reach the kernel.
 * @entries: the objects of the last snapshot applied.
 * @nr: their number.
 * @cap: room at @entries.
 * @gen: the @gen of the last snapshot applied.
 * @next_id: the next entry's id.
 * @report: called for each object when it is done or goes, if set
 *	(under @lock; the verbose knob's printer).
 * @nr_published: registrations made, ELF and JIT.
 * @nr_unpublished: registrations removed again.
 */
struct sframe_run_tracker {
	pthread_mutex_t lock;
	const struct sframe_run_ops *ops;
	struct sframe_run_entry *entries;
	uint32_t nr;
	uint32_t cap;
	uint64_t gen;
	uint64_t next_id;
	void (*report)(const struct sframe_run_entry *e, bool gone);
	uint64_t nr_published;
	uint64_t nr_unpublished;
};

void sframe_run__tracker_init(struct sframe_run_tracker *t,
			      const struct sframe_run_ops *ops);
void sframe_run__tracker_fini(struct sframe_run_tracker *t);
int sframe_run__tracker_sync(struct sframe_run_tracker *t);
int sframe_run__tracker_apply(struct sframe_run_tracker *t,
			      struct sframe_run_snapshot *snap);
uint32_t sframe_run__tracker_work(struct sframe_run_tracker *t, bool all);
void sframe_run__tracker_defer(struct sframe_run_tracker *t);
void sframe_run__tracker_forked(struct sframe_run_tracker *t);
uint32_t sframe_run__tracker_live(struct sframe_run_tracker *t);

void *sframe_run__dlopen_as(const void *caller, const char *file, int mode,
			    void *(*real)(const char *file, int mode));

bool sframe_run__startup_start(struct sframe_run_tracker *t,
			       unsigned long delay_ms);
bool sframe_run__startup_stop(void);
void sframe_run__startup_forked(void);

int sframe_run__blob_convert(const void *begin, struct sframe_jit_cfi **cfip,
			     uint64_t *startp, uint64_t *endp);

/* Registrations a deregistration may leave in the kernel (keep policy). */
#define SFRAME_RUN_MAX_KEPT	64
/* Registrations a deregistration takes out of the table at a time. */
#define SFRAME_RUN_TAKE_BATCH	16

/* States of a registered section. */
enum sframe_run_frame_state {
	SFRAME_RUN_FRAME_PENDING,	/* in the worker's queue */
	SFRAME_RUN_FRAME_BUSY,		/* the worker converts it, unlocked */
	SFRAME_RUN_FRAME_LIVE,		/* published: see its reg */
	SFRAME_RUN_FRAME_KEPT,		/* deregistered, kept published */
};

/**
 * struct sframe_run_frame - the code of one section a JIT registered
 * @key: the pointer its deregistration names.
 * @begin: the section, or the lone FDE.
 * @reg: its registration, once SFRAME_RUN_FRAME_LIVE or _KEPT.
 * @id: its order of arrival: the oldest kept one goes first.
 * @state: SFRAME_RUN_FRAME_*.
 */
struct sframe_run_frame {
	const void *key;
	const void *begin;
	struct sframe_run_reg reg;
	uint64_t id;
	enum sframe_run_frame_state state;
};

/**
 * struct sframe_run_frames - the code registered through __register_frame()
 * @lock: guards the fields below but @ops, @sync, @keep and @report,
 *	which are set before the first call; never held across a
 *	conversion.
 * @queued: signalled when a section is queued and @waiting is set.
 * @done: broadcast when the worker finishes a busy section.
 * @ops: how ranges reach the kernel.
 * @frames: the live and kept registrations.
 * @nr: their number.
 * @cap: room at @frames.
 * @queue: the sections queued for the worker, from @q_head to @q_nr;
 *	a cancelled one has no @begin.
 * @q_head: the next one.
 * @q_nr: the end of the queue.
 * @q_cap: room at @queue.
 * @busy: the section the worker converts, while its state is
 *	SFRAME_RUN_FRAME_BUSY.
 * @next_id: the next registration's @id.
 * @nr_pending: sections queued and not cancelled.
 * @nr_kept: kept ones among @frames.
 * @waiting: the worker waits on @queued.
 * @sync: publish in the registering thread (SFRAME_RUN_SYNC=1).
 * @keep: keep registrations past their deregistration
 *	(SFRAME_RUN_KEEP_DEREGISTERED=1).
 * @report: called for each section converted (with its @reg, whose
 *	kind says whether it was published) and deregistered, if set.
 * @nr_published: registrations made.
 * @nr_unpublished: registrations ended by a deregistration.
 * @nr_cancelled: queued sections deregistered before their turn.
 */
struct sframe_run_frames {
	pthread_mutex_t lock;
	pthread_cond_t queued;
	pthread_cond_t done;
	const struct sframe_run_ops *ops;
	struct sframe_run_frame *frames;
	uint32_t nr;
	uint32_t cap;
	struct sframe_run_frame *queue;
	uint32_t q_head;
	uint32_t q_nr;
	uint32_t q_cap;
	struct sframe_run_frame busy;
	uint64_t next_id;
	uint32_t nr_pending;
	uint32_t nr_kept;
	bool waiting;
	bool sync;
	bool keep;
	void (*report)(const void *begin, const struct sframe_run_reg *reg,
		       bool gone);
	uint64_t nr_published;
	uint64_t nr_unpublished;
	uint64_t nr_cancelled;
};

void sframe_run__frames_init(struct sframe_run_frames *f,
			     const struct sframe_run_ops *ops);
void sframe_run__frames_fini(struct sframe_run_frames *f);
int sframe_run__frames_add(struct sframe_run_frames *f, const void *key,
			   const void *begin);
uint32_t sframe_run__frames_remove(struct sframe_run_frames *f,
				   const void *key);
uint32_t sframe_run__frames_work(struct sframe_run_frames *f);
void sframe_run__frames_wait(struct sframe_run_frames *f);
void sframe_run__frames_forked(struct sframe_run_frames *f);

/* GDB JIT descriptors followed at most, one per defining object. */
#define SFRAME_RUN_MAX_DESCS	8

/**
 * struct sframe_run_gdbobj - one object of the GDB JIT interface
 * @image: its ELF image, as the JIT's entry gives it.
 * @size: the image's size.
 * @reg: its rows' registration, SFRAME_RUN_NONE for an object whose
 *	rows come through __register_frame() (see gdbjit.c).
 * @nr_names: its functions written to the perf map.
 * @seen: scratch of a poll.
 */
struct sframe_run_gdbobj {
	const void *image;
	uint64_t size;
	struct sframe_run_reg reg;
	uint32_t nr_names;
	bool seen;
};

/**
 * struct sframe_run_gdbjit - the objects that JITs announce to debuggers
 * @lock: guards everything below but @ops, @perf_map_path and
 *	@report; held across a poll, which converts.
 * @ops: how ranges reach the kernel.
 * @descs: the jit_descriptor structures followed.
 * @nr_descs: their number.
 * @nr_watched: the first of them, given by sframe_run__gdbjit_watch().
 * @marks: what each of @descs held at the last walk.
 * @descs_gen: sframe_run__gen() when @descs were looked up; 0 before.
 * @objs: the objects of the last poll.
 * @nr: their number.
 * @cap: room at @objs.
 * @pm: the perf map that their names go to.
 * @pm_open: @pm is open.
 * @perf_map_path: the perf map's file, NULL for /tmp/perf-PID.map.
 * @report: called for each object found and gone, if set.
 */
struct sframe_run_gdbjit {
	pthread_mutex_t lock;
	const struct sframe_run_ops *ops;
	const void *descs[SFRAME_RUN_MAX_DESCS];
	uint32_t nr_descs;
	uint32_t nr_watched;
	struct {
		const void *first;
		const void *relevant;
		uint32_t action;
	} marks[SFRAME_RUN_MAX_DESCS];
	uint64_t descs_gen;
	struct sframe_run_gdbobj *objs;
	uint32_t nr;
	uint32_t cap;
	struct sframe_jit_perf_map pm;
	bool pm_open;
	const char *perf_map_path;
	void (*report)(const struct sframe_run_gdbobj *o, bool gone);
};

void sframe_run__gdbjit_init(struct sframe_run_gdbjit *g,
			     const struct sframe_run_ops *ops,
			     const char *perf_map_path);
void sframe_run__gdbjit_fini(struct sframe_run_gdbjit *g);
int sframe_run__gdbjit_watch(struct sframe_run_gdbjit *g, const void *desc);
void sframe_run__gdbjit_poll(struct sframe_run_gdbjit *g);
void sframe_run__gdbjit_poll_quick(struct sframe_run_gdbjit *g);
void sframe_run__gdbjit_walk(struct sframe_run_gdbjit *g);

void sframe_run__hooks_init(const struct sframe_run_ops *ops, bool verbose);
void sframe_run__hooks_poll(void);
void sframe_run__hooks_poll_quick(void);
void sframe_run__hooks_fork_prepare(void);
void sframe_run__hooks_fork_parent(void);
void sframe_run__hooks_fork_child(void);

#endif /* __SFRAME_RUN_H */
