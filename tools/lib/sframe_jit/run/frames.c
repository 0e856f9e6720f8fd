// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The code that JITs register with __register_frame() and its kin, kept
 * registered with the kernel for as long as the JIT keeps it registered
 * with libgcc: each call's functions in a registry of their own, over
 * exactly their range, made by sframe_run__publish_cfi() as an object's
 * are, and removed at the matching deregistration.
 *
 * A registration is queued and published by a worker thread
 * (sframe_run__frames_work()), so that it costs the JIT what libgcc's
 * costs, not a conversion and a system call; or, with @sync, published
 * at once.  A deregistration is never deferred: the JIT may reuse the
 * addresses as soon as it returns.  It cancels a registration still
 * queued and waits for one being converted, whose bytes the JIT may
 * free next.
 *
 * A registration is known by the pointer the JIT passes at both ends.
 * A table (__register_frame_table()) names several sections under one
 * pointer, and gets a registration for each.  Why a registry per call,
 * and what becomes of code a JIT deregisters but keeps running:
 * Documentation/sframe_jit.rst ("What JITs publish").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_run.h"

/**
 * sframe_run__frames_init() - set up the table of registered frames
 * @f: the table.
 * @ops: how ranges reach the kernel.
 */
void sframe_run__frames_init(struct sframe_run_frames *f,
			     const struct sframe_run_ops *ops)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->queued, NULL);
	pthread_cond_init(&f->done, NULL);
	f->ops = ops;
}

/**
 * sframe_run__frames_fini() - unregister everything and free the table
 * @f: the table, which no other thread uses any more.
 */
void sframe_run__frames_fini(struct sframe_run_frames *f)
{
	uint32_t i;

	for (i = 0; i < f->nr; i++)
		sframe_run__unpublish(f->ops, &f->frames[i].reg);
	free(f->frames);
	free(f->queue);
	f->queue = NULL;
	f->frames = NULL;
	f->nr = 0;
	f->cap = 0;
	pthread_cond_destroy(&f->done);
	pthread_cond_destroy(&f->queued);
	pthread_mutex_destroy(&f->lock);
}

/* An entry in @state; the caller holds the lock. */
static int frames_insert(struct sframe_run_frames *f, const void *key,
			 const void *begin,
			 enum sframe_run_frame_state state)
{
	struct sframe_run_frame *e;
	int err;

	err = sframe_jit__grow((void **)&f->frames, &f->cap, f->nr,
			       sizeof(*e));
	if (err)
		return err;
	e = &f->frames[f->nr++];
	memset(e, 0, sizeof(*e));
	e->key = key;
	e->begin = begin;
	e->id = f->next_id++;
	e->state = state;
	return 0;
}

static void frame_drop(struct sframe_run_frames *f, struct sframe_run_frame *e)
{
	*e = f->frames[--f->nr];
}

/*
 * Unpublish the kept registrations that overlap [@start, @end), for new
 * code at their addresses.  Return: how many went.
 */
static uint32_t kept_evict(struct sframe_run_frames *f, uint64_t start,
			   uint64_t end)
{
	struct sframe_run_frame *e;
	uint32_t i, n = 0;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nr;) {
		e = &f->frames[i];
		if (e->state != SFRAME_RUN_FRAME_KEPT || e->reg.end <= start ||
		    e->reg.start >= end) {
			i++;
			continue;
		}
		sframe_run__unpublish(f->ops, &e->reg);
		frame_drop(f, e);
		f->nr_kept--;
		n++;
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

/* Convert and publish, without the lock. */
static int frames_publish(struct sframe_run_frames *f, const void *begin,
			  struct sframe_run_reg *reg)
{
	struct sframe_jit_cfi *cfi;
	uint64_t start, end;
	int err;

	memset(reg, 0, sizeof(*reg));
	err = sframe_run__blob_convert(begin, &cfi, &start, &end);
	if (err) {
		reg->err = err;
		return err;
	}
	/* Version 1: a JIT's code may come and go function by function. */
	err = sframe_run__publish_cfi(f->ops, start, end, cfi, 0, false, reg);
	if (err == -EEXIST && kept_evict(f, start, end))
		err = sframe_run__publish_cfi(f->ops, start, end, cfi, 0,
					      false, reg);
	sframe_jit_cfi_free(cfi);
	if (f->report)
		f->report(begin, reg, false);
	return err;
}

/* Publish now, in the registering thread. */
static int frames_add_sync(struct sframe_run_frames *f, const void *key,
			   const void *begin)
{
	struct sframe_run_frame *e;
	struct sframe_run_reg reg;
	int err;

	err = frames_publish(f, begin, &reg);
	if (err)
		return err;
	pthread_mutex_lock(&f->lock);
	err = frames_insert(f, key, begin, SFRAME_RUN_FRAME_LIVE);
	if (!err) {
		e = &f->frames[f->nr - 1];
		e->reg = reg;
		f->nr_published++;
	}
	pthread_mutex_unlock(&f->lock);
	if (err)
		sframe_run__unpublish(f->ops, &reg);
	return err;
}

/*
 * Changed under the lock, read without it by sframe_run__frames_work(),
 * so that a worker with nothing to do leaves the lock's cache line to
 * the JIT's thread.
 */
static void pending_add(struct sframe_run_frames *f, int d)
{
	__atomic_store_n(&f->nr_pending, f->nr_pending + d, __ATOMIC_RELAXED);
}

/*
 * Room at the queue's tail: moved down first if the worker took half of
 * it, so that each entry moves at most once on average.
 */
static int queue_room(struct sframe_run_frames *f)
{
	if (f->q_head && f->q_nr == f->q_cap && f->q_head >= f->q_cap / 2) {
		memmove(f->queue, f->queue + f->q_head,
			(f->q_nr - f->q_head) * sizeof(*f->queue));
		f->q_nr -= f->q_head;
		f->q_head = 0;
	}
	return sframe_jit__grow((void **)&f->queue, &f->q_cap, f->q_nr,
				sizeof(*f->queue));
}

/**
 * sframe_run__frames_add() - publish the code of one registered section
 * @f: the table.
 * @key: what the JIT will deregister it by: @begin, or the table that
 *	holds it.
 * @begin: the section's first entry, or a lone FDE.
 *
 * Queues the section for sframe_run__frames_work(), waking the thread
 * that runs it if it waits; with @f->sync, converts and publishes it
 * at once, without the table's lock.  A range that overlaps a live
 * registration (the same section twice) is refused by the kernel and
 * left to the first; one that overlaps kept code
 * (sframe_run__frames_remove()) replaces it.
 *
 * Return: 0, or why nothing was published or queued.
 */
int sframe_run__frames_add(struct sframe_run_frames *f, const void *key,
			   const void *begin)
{
	struct sframe_run_frame *e;
	int err;

	if (f->sync)
		return frames_add_sync(f, key, begin);
	pthread_mutex_lock(&f->lock);
	err = queue_room(f);
	if (!err) {
		e = &f->queue[f->q_nr++];
		e->key = key;
		e->begin = begin;
		e->id = f->next_id++;
		e->state = SFRAME_RUN_FRAME_PENDING;
		pending_add(f, 1);
		if (f->waiting)
			pthread_cond_signal(&f->queued);
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* Make the next queued section the busy one.  Under the lock. */
static bool queue_pop(struct sframe_run_frames *f)
{
	struct sframe_run_frame *e;

	while (f->q_head < f->q_nr) {
		e = &f->queue[f->q_head++];
		if (!e->begin)
			continue;
		f->busy = *e;
		f->busy.state = SFRAME_RUN_FRAME_BUSY;
		pending_add(f, -1);
		return true;
	}
	f->q_head = 0;
	f->q_nr = 0;
	return false;
}

/**
 * sframe_run__frames_work() - publish the queued sections
 * @f: the table.
 *
 * Each queued section is converted and published without the lock, as
 * @f->busy meanwhile, so that a deregistration of it waits.  An empty
 * queue is seen without the lock.
 *
 * Return: the number of sections taken from the queue.
 */
uint32_t sframe_run__frames_work(struct sframe_run_frames *f)
{
	struct sframe_run_reg reg;
	uint32_t n = 0;
	int err;

	if (!__atomic_load_n(&f->nr_pending, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&f->lock);
	while (queue_pop(f)) {
		pthread_mutex_unlock(&f->lock);
		err = frames_publish(f, f->busy.begin, &reg);
		pthread_mutex_lock(&f->lock);
		if (!err)
			err = frames_insert(f, f->busy.key, f->busy.begin,
					    SFRAME_RUN_FRAME_LIVE);
		if (!err) {
			f->frames[f->nr - 1].reg = reg;
			f->nr_published++;
		} else if (reg.kind != SFRAME_RUN_NONE) {
			sframe_run__unpublish(f->ops, &reg);
		}
		f->busy.state = SFRAME_RUN_FRAME_LIVE;
		pthread_cond_broadcast(&f->done);
		n++;
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

/**
 * sframe_run__frames_wait() - wait until a section is queued
 * @f: the table.
 */
void sframe_run__frames_wait(struct sframe_run_frames *f)
{
	pthread_mutex_lock(&f->lock);
	f->waiting = true;
	while (!f->nr_pending)
		pthread_cond_wait(&f->queued, &f->lock);
	f->waiting = false;
	pthread_mutex_unlock(&f->lock);
}

/**
 * sframe_run__frames_forked() - make a forked child's table its own
 * @f: the table, whose lock the forking thread took before fork().
 *
 * The child has no worker: a conversion the parent's was doing is
 * queued again, so that no deregistration waits for it forever.
 */
void sframe_run__frames_forked(struct sframe_run_frames *f)
{
	if (f->busy.state == SFRAME_RUN_FRAME_BUSY && !queue_room(f)) {
		f->queue[f->q_nr] = f->busy;
		f->queue[f->q_nr++].state = SFRAME_RUN_FRAME_PENDING;
		pending_add(f, 1);
	}
	f->busy.state = SFRAME_RUN_FRAME_LIVE;
	f->waiting = false;
	pthread_cond_init(&f->queued, NULL);
	pthread_cond_init(&f->done, NULL);
}

/* Unpublish the oldest kept registrations past SFRAME_RUN_MAX_KEPT. */
static void kept_trim(struct sframe_run_frames *f)
{
	struct sframe_run_frame *oldest;
	uint32_t i;

	while (f->nr_kept > SFRAME_RUN_MAX_KEPT) {
		oldest = NULL;
		for (i = 0; i < f->nr; i++)
			if (f->frames[i].state == SFRAME_RUN_FRAME_KEPT &&
			    (!oldest || f->frames[i].id < oldest->id))
				oldest = &f->frames[i];
		sframe_run__unpublish(f->ops, &oldest->reg);
		frame_drop(f, oldest);
		f->nr_kept--;
	}
}

/* Cancel the queued sections of @key.  Under the lock. */
static void queue_cancel(struct sframe_run_frames *f, const void *key)
{
	uint32_t i;

	for (i = f->q_head; i < f->q_nr; i++) {
		if (!f->queue[i].begin || f->queue[i].key != key)
			continue;
		f->queue[i].begin = NULL;
		pending_add(f, -1);
		f->nr_cancelled++;
	}
}

/*
 * Take the registrations of @key out of the table: cancel the queued
 * ones, wait for the busy one, and copy the live ones to @out, leaving
 * them kept under @f->keep.
 */
static uint32_t frames_take(struct sframe_run_frames *f, const void *key,
			    struct sframe_run_frame *out, uint32_t max)
{
	struct sframe_run_frame *e;
	uint32_t i, n = 0;

	pthread_mutex_lock(&f->lock);
	queue_cancel(f, key);
	while (f->busy.state == SFRAME_RUN_FRAME_BUSY && f->busy.key == key)
		pthread_cond_wait(&f->done, &f->lock);
	for (i = 0; i < f->nr && n < max;) {
		e = &f->frames[i];
		if (e->state != SFRAME_RUN_FRAME_LIVE || e->key != key) {
			i++;
			continue;
		}
		out[n++] = *e;
		f->nr_unpublished++;
		if (f->keep) {
			e->state = SFRAME_RUN_FRAME_KEPT;
			f->nr_kept++;
			i++;
		} else {
			frame_drop(f, e);
		}
	}
	kept_trim(f);
	pthread_mutex_unlock(&f->lock);
	return n;
}

/**
 * sframe_run__frames_remove() - unpublish what a deregistration ends
 * @f: the table.
 * @key: the pointer the JIT deregisters.
 *
 * With @f->keep, the registrations stay in the kernel until code
 * registered later overlaps them (or SFRAME_RUN_MAX_KEPT newer ones
 * are kept), for a JIT that deregisters code it still runs; otherwise
 * they go now, for one that frees the code and reuses its addresses.
 *
 * Return: the number of published registrations that @key ended.
 */
uint32_t sframe_run__frames_remove(struct sframe_run_frames *f,
				   const void *key)
{
	struct sframe_run_frame taken[SFRAME_RUN_TAKE_BATCH];
	uint32_t i, n, total = 0;

	do {
		n = frames_take(f, key, taken, SFRAME_RUN_TAKE_BATCH);
		for (i = 0; i < n; i++) {
			if (f->report)
				f->report(taken[i].begin, &taken[i].reg, true);
			if (!f->keep)
				sframe_run__unpublish(f->ops, &taken[i].reg);
		}
		total += n;
	} while (n == SFRAME_RUN_TAKE_BATCH);
	return total;
}
