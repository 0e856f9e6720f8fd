// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which objects are registered: the tracker keeps one entry per loaded
 * object, brought in step with snapshots of the loader's list, and
 * publishes each new object's table once.
 *
 * Converting an object's CFI takes long (libLLVM-14: a fifth of a
 * second), so it happens without the lock, between two holds of it:
 * the entry is marked busy, converted, and published if the entry is
 * still there, which its id tells.  Any thread may do that work: the
 * start-up thread, the one that called dlopen(), or both at once, each
 * taking the next pending entry.  The lock is never held across
 * dl_iterate_phdr() (objects.c says why); snapshots taken without it
 * may then arrive out of order, and the loader's count of loads and
 * unloads tells which one is the later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_run.h"

/**
 * sframe_run__tracker_init() - start with no objects
 * @t: the tracker.
 * @ops: how ranges reach the kernel.
 */
void sframe_run__tracker_init(struct sframe_run_tracker *t,
			      const struct sframe_run_ops *ops)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->ops = ops;
	t->next_id = 1;
}

static bool same_obj(const struct sframe_run_obj *a,
		     const struct sframe_run_obj *b)
{
	return a->bias == b->bias && a->text_start == b->text_start &&
	       a->text_end == b->text_end && !strcmp(a->name, b->name);
}

static struct sframe_run_entry *entry_find(struct sframe_run_tracker *t,
					   const struct sframe_run_obj *obj)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (same_obj(&t->entries[i].obj, obj))
			return &t->entries[i];
	return NULL;
}

static struct sframe_run_entry *entry_by_id(struct sframe_run_tracker *t,
					    uint64_t id)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (t->entries[i].id == id)
			return &t->entries[i];
	return NULL;
}

static void entry_unpublish(struct sframe_run_tracker *t,
			    struct sframe_run_entry *e)
{
	if (e->state != SFRAME_RUN_DONE)
		return;
	if (t->report)
		t->report(e, true);
	if (e->reg.kind != SFRAME_RUN_NONE)
		t->nr_unpublished++;
	sframe_run__unpublish(t->ops, &e->reg);
}

/* Drop the entries of objects that went; a busy one's work is lost. */
static void entries_sweep(struct sframe_run_tracker *t)
{
	uint32_t i, j = 0;

	for (i = 0; i < t->nr; i++) {
		struct sframe_run_entry *e = &t->entries[i];

		if (!e->seen) {
			entry_unpublish(t, e);
			sframe_run__obj_free(&e->obj);
			continue;
		}
		if (i != j)
			t->entries[j] = *e;
		j++;
	}
	t->nr = j;
}

static int entry_add(struct sframe_run_tracker *t, struct sframe_run_obj *obj)
{
	int err;

	err = sframe_jit__grow((void **)&t->entries, &t->cap, t->nr,
			       sizeof(*t->entries));
	if (err)
		return err;
	t->entries[t->nr++] = (struct sframe_run_entry) {
		.obj	= *obj,
		.state	= SFRAME_RUN_PENDING,
		.id	= t->next_id++,
		.seen	= true,
	};
	/* The entry owns the name now. */
	obj->name = NULL;
	return 0;
}

/**
 * sframe_run__tracker_apply() - bring the entries in step with a snapshot
 * @t: the tracker.
 * @snap: the snapshot; the names of new objects move into @t.
 *
 * Objects that are gone are unpublished now; new ones become pending,
 * for sframe_run__tracker_work().  A snapshot older than the last one
 * applied changes nothing.
 *
 * Return: 0, or -ENOMEM with the objects that found no room left out
 * (a later snapshot tries them again).
 */
int sframe_run__tracker_apply(struct sframe_run_tracker *t,
			      struct sframe_run_snapshot *snap)
{
	struct sframe_run_entry *e;
	uint32_t i;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	if (snap->gen < t->gen)
		goto unlock;
	for (i = 0; i < t->nr; i++)
		t->entries[i].seen = false;
	for (i = 0; i < snap->nr; i++) {
		e = entry_find(t, &snap->objs[i]);
		if (e)
			e->seen = true;
		else if (!err)
			err = entry_add(t, &snap->objs[i]);
	}
	entries_sweep(t);
	/* A failed addition must not make the next snapshot look stale. */
	if (!err)
		t->gen = snap->gen;
unlock:
	pthread_mutex_unlock(&t->lock);
	return err;
}

/**
 * sframe_run__tracker_sync() - apply a snapshot of the objects loaded now
 * @t: the tracker.
 *
 * Return: 0, or -ENOMEM.
 */
int sframe_run__tracker_sync(struct sframe_run_tracker *t)
{
	struct sframe_run_snapshot snap;
	uint64_t gen = sframe_run__gen();
	bool same;
	int err;

	pthread_mutex_lock(&t->lock);
	same = t->nr && gen == t->gen;
	pthread_mutex_unlock(&t->lock);
	if (same)
		return 0;
	err = sframe_run__snapshot(&snap);
	if (err)
		return err;
	err = sframe_run__tracker_apply(t, &snap);
	sframe_run__snapshot_free(&snap);
	return err;
}

/*
 * Take the next pending entry, deferred ones only with @all: its id and
 * a copy of its object.
 */
static uint64_t work_take(struct sframe_run_tracker *t,
			  struct sframe_run_obj *copy, bool all)
{
	uint64_t id = 0;
	uint32_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr; i++) {
		struct sframe_run_entry *e = &t->entries[i];
		char *name;

		if (e->state != SFRAME_RUN_PENDING || (e->deferred && !all))
			continue;
		name = strdup(e->obj.name);
		if (!name)
			break;
		*copy = e->obj;
		copy->name = name;
		e->state = SFRAME_RUN_BUSY;
		id = e->id;
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return id;
}

static void work_finish(struct sframe_run_tracker *t, uint64_t id,
			struct sframe_run_prep *prep)
{
	struct sframe_run_entry *e;

	pthread_mutex_lock(&t->lock);
	e = entry_by_id(t, id);
	/* Gone meanwhile, or made pending again in a forked child. */
	if (e && e->state == SFRAME_RUN_BUSY) {
		sframe_run__publish(t->ops, &e->obj, prep, &e->reg);
		e->state = SFRAME_RUN_DONE;
		if (e->reg.kind != SFRAME_RUN_NONE)
			t->nr_published++;
		if (t->report)
			t->report(e, false);
	}
	pthread_mutex_unlock(&t->lock);
}

/**
 * sframe_run__tracker_defer() - leave the pending objects to one thread
 * @t: the tracker.
 *
 * Marks every pending object deferred: sframe_run__tracker_work() takes
 * it only when told to take all, as the start-up thread is, so that a
 * dlopen() meanwhile converts only what it loaded itself.
 */
void sframe_run__tracker_defer(struct sframe_run_tracker *t)
{
	uint32_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr; i++)
		if (t->entries[i].state == SFRAME_RUN_PENDING)
			t->entries[i].deferred = true;
	pthread_mutex_unlock(&t->lock);
}

/**
 * sframe_run__tracker_work() - publish the pending objects
 * @t: the tracker.
 * @all: take deferred objects too.
 *
 * Converts and publishes one pending object after the other until none
 * is left; other threads may do the same meanwhile.
 *
 * Return: the number of objects this call looked at.
 */
uint32_t sframe_run__tracker_work(struct sframe_run_tracker *t, bool all)
{
	struct sframe_run_prep prep;
	struct sframe_run_obj copy;
	uint32_t n = 0;
	uint64_t id;

	while ((id = work_take(t, &copy, all))) {
		sframe_run__prepare(&copy, &prep);
		work_finish(t, id, &prep);
		sframe_run__prep_free(&prep);
		sframe_run__obj_free(&copy);
		n++;
	}
	return n;
}

/**
 * sframe_run__tracker_forked() - make a forked child's tracker its own
 * @t: the tracker, whose lock the forking thread took before fork().
 *
 * The child has the parent's registrations (the kernel copies JIT
 * registries and shares ELF registrations at fork) and only the
 * forking thread: conversions other threads were doing are lost, so
 * their objects are pending again, and no longer deferred to a thread
 * the child does not have: the child's next sframe_run__tracker_work()
 * takes them.
 */
void sframe_run__tracker_forked(struct sframe_run_tracker *t)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		if (t->entries[i].state == SFRAME_RUN_BUSY)
			t->entries[i].state = SFRAME_RUN_PENDING;
		t->entries[i].deferred = false;
	}
	pthread_mutex_unlock(&t->lock);
}

/**
 * sframe_run__tracker_live() - the registrations the tracker holds
 * @t: the tracker.
 *
 * Return: the number of objects registered by it now.
 */
uint32_t sframe_run__tracker_live(struct sframe_run_tracker *t)
{
	uint32_t i, n = 0;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr; i++)
		if (t->entries[i].state == SFRAME_RUN_DONE &&
		    t->entries[i].reg.kind != SFRAME_RUN_NONE)
			n++;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/**
 * sframe_run__tracker_fini() - unpublish everything and free the tracker
 * @t: the tracker; no other call on it may run.
 */
void sframe_run__tracker_fini(struct sframe_run_tracker *t)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		entry_unpublish(t, &t->entries[i]);
		sframe_run__obj_free(&t->entries[i].obj);
	}
	free(t->entries);
	t->entries = NULL;
	t->nr = 0;
	t->cap = 0;
	pthread_mutex_destroy(&t->lock);
}
