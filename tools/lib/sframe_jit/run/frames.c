// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The code that JITs register with __register_frame() and its kin, kept
 * registered with the kernel for as long as the JIT keeps it registered
 * with libgcc: each call's functions in a registry of their own, over
 * exactly their range, made by sframe_run__publish_cfi() as an object's
 * are, and removed at the matching deregistration.
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
	f->ops = ops;
}

/**
 * sframe_run__frames_fini() - unregister everything and free the table
 * @f: the table.
 */
void sframe_run__frames_fini(struct sframe_run_frames *f)
{
	uint32_t i;

	for (i = 0; i < f->nr; i++)
		sframe_run__unpublish(f->ops, &f->frames[i].reg);
	free(f->frames);
	f->frames = NULL;
	f->nr = 0;
	f->cap = 0;
	pthread_mutex_destroy(&f->lock);
}

static int frames_insert(struct sframe_run_frames *f, const void *key,
			 const void *begin, struct sframe_run_reg *reg)
{
	struct sframe_run_frame *e;
	int err;

	pthread_mutex_lock(&f->lock);
	err = sframe_jit__grow((void **)&f->frames, &f->cap, f->nr,
			       sizeof(*e));
	if (!err) {
		e = &f->frames[f->nr++];
		e->key = key;
		e->begin = begin;
		e->reg = *reg;
		e->id = f->next_id++;
		e->kept = false;
		f->nr_published++;
	}
	pthread_mutex_unlock(&f->lock);
	return err;
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
		if (!e->kept || e->reg.end <= start || e->reg.start >= end) {
			i++;
			continue;
		}
		sframe_run__unpublish(f->ops, &e->reg);
		*e = f->frames[--f->nr];
		f->nr_kept--;
		n++;
	}
	pthread_mutex_unlock(&f->lock);
	return n;
}

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
	err = sframe_run__publish_cfi(f->ops, start, end, cfi, 0, reg);
	if (err == -EEXIST && kept_evict(f, start, end))
		err = sframe_run__publish_cfi(f->ops, start, end, cfi, 0, reg);
	sframe_jit_cfi_free(cfi);
	return err;
}

/**
 * sframe_run__frames_add() - publish the code of one registered section
 * @f: the table.
 * @key: what the JIT will deregister it by: @begin, or the table that
 *	holds it.
 * @begin: the section's first entry, or a lone FDE.
 *
 * Converts and publishes without the table's lock, which only guards
 * the entries.  A range that overlaps a live registration (the same
 * section twice) is refused by the kernel and left to the first; one
 * that overlaps kept code (sframe_run__frames_remove()) replaces it.
 *
 * Return: 0, or why nothing was published.
 */
int sframe_run__frames_add(struct sframe_run_frames *f, const void *key,
			   const void *begin)
{
	struct sframe_run_reg reg;
	int err;

	err = frames_publish(f, begin, &reg);
	if (f->report)
		f->report(begin, &reg, false);
	if (err)
		return err;
	err = frames_insert(f, key, begin, &reg);
	if (err)
		sframe_run__unpublish(f->ops, &reg);
	return err;
}

/* Unpublish the oldest kept registrations past SFRAME_RUN_MAX_KEPT. */
static void kept_trim(struct sframe_run_frames *f)
{
	struct sframe_run_frame *oldest;
	uint32_t i;

	while (f->nr_kept > SFRAME_RUN_MAX_KEPT) {
		oldest = NULL;
		for (i = 0; i < f->nr; i++)
			if (f->frames[i].kept &&
			    (!oldest || f->frames[i].id < oldest->id))
				oldest = &f->frames[i];
		sframe_run__unpublish(f->ops, &oldest->reg);
		*oldest = f->frames[--f->nr];
		f->nr_kept--;
	}
}

/*
 * Take the live registrations of @key out of the table, into @out, or
 * with @f->keep mark them kept (and copy them to @out all the same).
 */
static uint32_t frames_take(struct sframe_run_frames *f, const void *key,
			    struct sframe_run_frame *out, uint32_t max)
{
	struct sframe_run_frame *e;
	uint32_t i, n = 0;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nr && n < max;) {
		e = &f->frames[i];
		if (e->kept || e->key != key) {
			i++;
			continue;
		}
		out[n++] = *e;
		f->nr_unpublished++;
		if (f->keep) {
			e->kept = true;
			f->nr_kept++;
			i++;
		} else {
			*e = f->frames[--f->nr];
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
 * Return: the number of registrations that @key ended.
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
