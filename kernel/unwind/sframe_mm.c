// SPDX-License-Identifier: GPL-2.0
/*
 * A process's registered code ranges: a maple tree hung off its mm
 * (struct sframe_mm), which the unwinder searches under RCU from NMI
 * context (sframe_lookup.c).  Writers hold the mmap lock: for writing in
 * the system calls, at exec, at fork and when a registry's file is
 * released; from a registry mapping's ->close() during munmap or exit,
 * with every other writer excluded.  Removed entries are freed after an
 * RCU grace period.  fork gives the child its ELF entries, those an
 * agent registered included; exit drops them all.
 */
#include <linux/init.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sframe_register.h>
#include <linux/sysctl.h>

#include "sframe_internal.h"

static unsigned int sysctl_sframe_max_registrations = 1024;
static const unsigned int sframe_max_registrations_limit = 65536;

static struct ctl_table sframe_sysctls[] = {
	{
		.procname	= "sframe_max_registrations",
		.data		= &sysctl_sframe_max_registrations,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= (void *)&sframe_max_registrations_limit,
	},
};

static int __init sframe_mm_init(void)
{
	register_sysctl_init("kernel", sframe_sysctls);
	return 0;
}
late_initcall(sframe_mm_init);

/**
 * sframe_mm_locked() - the index of an mm, for a writer
 * @mm: the mm, whose mmap lock the caller holds or which is being torn
 *	down.
 *
 * Return: the index, or NULL if the process never registered anything.
 */
struct sframe_mm *sframe_mm_locked(struct mm_struct *mm)
{
	return rcu_dereference_protected(mm->sframe,
					 lockdep_is_held(&mm->mmap_lock) ||
					 !atomic_read(&mm->mm_users));
}

/**
 * sframe_mm_get() - the index of an mm, made on first use
 * @mm: the mm, whose mmap lock the caller holds for writing.
 *
 * Return: the index, or NULL if it could not be allocated.
 */
struct sframe_mm *sframe_mm_get(struct mm_struct *mm)
{
	struct sframe_mm *smm = sframe_mm_locked(mm);

	if (smm)
		return smm;
	smm = kzalloc(sizeof(*smm), GFP_KERNEL_ACCOUNT);
	if (!smm)
		return NULL;
	mt_init_flags(&smm->index, MT_FLAGS_USE_RCU);
	smm->mm = mm;
	mmgrab(mm);
	sframe_exec_init(smm);
	rcu_assign_pointer(mm->sframe, smm);
	return smm;
}

/**
 * sframe_region_new() - a new index entry, not yet published
 * @start: the code range's start.
 * @end: its end (exclusive).
 *
 * Return: the entry, or NULL.
 */
struct sframe_region *sframe_region_new(unsigned long start,
					unsigned long end)
{
	struct sframe_region *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);

	if (r) {
		r->start = start;
		r->end = end;
	}
	return r;
}

/*
 * An entry an agent registered for the process (sframe_process.c) gives
 * way to the process's own registration of a range that holds it all:
 * the process knows its code better than an agent that read it from
 * outside.
 */
static bool sframe_region_yields(const struct sframe_region *r,
				 unsigned long start, unsigned long end)
{
	return test_bit(SFRAME_REGION_F_AGENT, &r->flags) &&
	       r->start >= start && r->end <= end;
}

/**
 * sframe_index_check() - is there room for one more entry overlapping none?
 * @smm: the index; the caller holds the mmap lock.
 * @start: the new range's start.
 * @end: its end (exclusive).
 * @own: the process registers for itself, so entries of an agent that
 *	the range holds whole do not count (sframe_index_insert() removes
 *	them).
 *
 * Walks the entries the range overlaps: at most
 * kernel.sframe_max_registrations.
 *
 * Return: 0, -ENOSPC past kernel.sframe_max_registrations, or -EEXIST.
 */
int sframe_index_check(struct sframe_mm *smm, unsigned long start,
		       unsigned long end, bool own)
{
	struct sframe_region *r;
	unsigned long index = start;

	if (smm->nr >= READ_ONCE(sysctl_sframe_max_registrations))
		return -ENOSPC;
	mt_for_each(&smm->index, r, index, end - 1) {
		if (!own || !sframe_region_yields(r, start, end))
			return -EEXIST;
	}
	return 0;
}

/* Remove the agent's entries that give way to @r. */
static void sframe_index_evict(struct sframe_mm *smm,
			       const struct sframe_region *r)
{
	struct sframe_region *old;
	unsigned long index = r->start;

	mt_for_each(&smm->index, old, index, r->end - 1) {
		if (sframe_region_yields(old, r->start, r->end))
			sframe_index_remove(smm->mm, old);
	}
}

/**
 * sframe_index_insert() - publish an entry
 * @smm: the index; the caller holds the mmap lock for writing.
 * @r: the entry, which sframe_index_check() let in.
 *
 * An entry the process registers for itself first takes its range from
 * the agent's entries inside it.  They stay removed if the insertion
 * then fails: the process asked for the range.
 *
 * Return: 0 or a negative errno from the maple tree.
 */
int sframe_index_insert(struct sframe_mm *smm, struct sframe_region *r)
{
	int err;

	if (!test_bit(SFRAME_REGION_F_AGENT, &r->flags))
		sframe_index_evict(smm, r);
	err = mtree_insert_range(&smm->index, r->start, r->end - 1, r,
				 GFP_KERNEL_ACCOUNT);
	if (!err)
		smm->nr++;
	return err;
}

/**
 * sframe_region_detach() - free an entry once NMI readers are done with it
 * @r: an entry no reader can newly find: out of its index, or in an
 *	index no longer published.
 *
 * The entry's reference on its registry or section copy goes now, so
 * that their charge goes with the last one; they and the entry are
 * freed after a grace period that starts here, which the readers that
 * found the entry before finish within.
 */
void sframe_region_detach(struct sframe_region *r)
{
	switch (r->kind) {
	case SFRAME_REGION_ELF:
		if (r->elf)
			sframe_elf_put(r->elf);
		else
			put_cred(r->cred);
		break;
	/* The registry has no index entry now; it may stay mapped. */
	case SFRAME_REGION_JIT:
		r->jit->region = NULL;
		sframe_jit_put(r->jit);
		break;
	}
	kfree_rcu(r, rcu);
}

/**
 * sframe_index_remove() - remove an entry from its index and free it
 * @mm: the mm, whose mmap lock the caller holds for writing.
 * @r: the entry.
 *
 * Cannot fail, as a mapping's ->close() may not: the entry is freed
 * after a grace period, so it must be out of the index first, and an
 * RCU maple tree allocates to remove a range.  That allocation is a
 * node or a few, which __GFP_NOFAIL may ask for.
 */
void sframe_index_remove(struct mm_struct *mm, struct sframe_region *r)
{
	struct sframe_mm *smm = sframe_mm_locked(mm);
	int err;

	err = mtree_store_range(&smm->index, r->start, r->end - 1, NULL,
				GFP_KERNEL_ACCOUNT | __GFP_NOFAIL);
	/*
	 * Only a range the tree cannot hold fails now.  An entry left in
	 * the index must not be freed: exit detaches it with the rest.
	 */
	if (WARN_ON_ONCE(err))
		return;
	smm->nr--;
	sframe_region_detach(r);
}

/**
 * sframe_index_exact() - the entry for exactly a range
 * @smm: the index, or NULL; the caller holds the mmap lock.
 * @start: the range's start.
 * @end: its end (exclusive).
 *
 * Return: the entry, or NULL.
 */
struct sframe_region *sframe_index_exact(struct sframe_mm *smm,
					 unsigned long start,
					 unsigned long end)
{
	struct sframe_region *r;

	if (!smm)
		return NULL;
	r = mtree_load(&smm->index, start);
	if (!r || r->start != start || r->end != end)
		return NULL;
	return r;
}

/*
 * fork: the child's entry shares the parent's section copy, or, for a
 * section whose table is not built yet, will build its own.
 */
static int sframe_fork_elf(struct sframe_mm *smm, const struct sframe_region *r)
{
	struct sframe_region *nr = sframe_region_new(r->start, r->end);
	int err;

	if (!nr)
		return -ENOMEM;
	nr->kind = SFRAME_REGION_ELF;
	nr->elf = r->elf;
	nr->bias = r->bias;
	if (test_bit(SFRAME_REGION_F_AGENT, &r->flags))
		__set_bit(SFRAME_REGION_F_AGENT, &nr->flags);
	if (nr->elf) {
		refcount_inc(&nr->elf->ref);
	} else {
		nr->cred = get_cred(r->cred);
		nr->sec_addr = r->sec_addr;
		nr->sec_size = r->sec_size;
	}
	err = sframe_index_insert(smm, nr);
	if (err)
		sframe_region_detach(nr);
	return err;
}

/**
 * sframe_mm_fork() - copy a process's registrations into its child
 * @oldmm: the parent's mm.
 * @mm: the child's mm, whose mappings dup_mmap() has just copied.
 *
 * Called by dup_mmap() with both mmap locks held for writing.  ELF
 * registrations share the parent's immutable section copy.  JIT
 * registries stay the parent's: their mappings are VM_DONTCOPY, and a
 * child that runs the inherited code opens registries of its own.
 *
 * Return: 0 or -ENOMEM, which fails the fork.
 */
int sframe_mm_fork(struct mm_struct *oldmm, struct mm_struct *mm)
{
	struct sframe_mm *old = sframe_mm_locked(oldmm), *smm;
	struct sframe_region *r;
	unsigned long index = 0;
	int err;

	if (!old)
		return 0;
	smm = sframe_mm_get(mm);
	if (!smm)
		return -ENOMEM;
	mt_for_each(&old->index, r, index, ULONG_MAX) {
		if (r->kind != SFRAME_REGION_ELF)
			continue;
		err = sframe_fork_elf(smm, r);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The index is freed in process context, once its table builds are idle
 * and no NMI-context reader can raise another.
 */
static void sframe_mm_free_work(struct work_struct *work)
{
	struct sframe_mm *smm = container_of(work, struct sframe_mm, free_work);

	sframe_exec_stop(smm);
	mmdrop(smm->mm);
	kfree(smm);
}

static void sframe_mm_free_rcu(struct rcu_head *rcu)
{
	struct sframe_mm *smm = container_of(rcu, struct sframe_mm, rcu);

	INIT_WORK(&smm->free_work, sframe_mm_free_work);
	schedule_work(&smm->free_work);
}

/**
 * sframe_mm_exit() - drop every registration of an mm being torn down
 * @mm: the mm, after exit_mmap() closed its mappings.
 *
 * Readers may still hold entries (an NMI on another CPU looking at this
 * mm through a task reference); everything is freed after a grace period.
 */
void sframe_mm_exit(struct mm_struct *mm)
{
	struct sframe_mm *smm = sframe_mm_locked(mm);
	struct sframe_region *r;
	unsigned long index = 0;

	if (!smm)
		return;
	/* Unpublished first: no reader finds an entry after its detach. */
	RCU_INIT_POINTER(mm->sframe, NULL);
	mt_for_each(&smm->index, r, index, ULONG_MAX)
		sframe_region_detach(r);
	mtree_destroy(&smm->index);
	call_rcu(&smm->rcu, sframe_mm_free_rcu);
}
