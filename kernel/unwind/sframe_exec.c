// SPDX-License-Identifier: GPL-2.0
/*
 * The tables of the sections binfmt_elf registers at exec, built when a
 * sample first needs them rather than at exec.
 *
 * Copying, validating and converting a section at every exec would make
 * every exec of a program built with --gsframe slower, profiled or not.
 * So exec only takes the range (sframe_register.c), and the first
 * sample that meets it, in NMI context, asks for its table: the flag
 * of the entry, an irq_work, then a work item that builds the table in
 * the process's mm, with the credentials and memory cgroup of the exec
 * that registered it, and replaces the entry with one that has it.
 * Samples meanwhile fall back to frame pointers for that range.  A
 * build that fails (a malformed section, the user's limit) leaves the
 * entry as it is, describing nothing.  kernel.sframe_exec_eager makes
 * exec build the table itself, as sframe_register(2) does.
 */
#include <linux/cred.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/workqueue.h>

#include "sframe_internal.h"

static unsigned int sysctl_sframe_exec_eager;

static struct ctl_table sframe_exec_sysctls[] = {
	{
		.procname	= "sframe_exec_eager",
		.data		= &sysctl_sframe_exec_eager,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

static int __init sframe_exec_sysctl_init(void)
{
	register_sysctl_init("kernel", sframe_exec_sysctls);
	return 0;
}
late_initcall(sframe_exec_sysctl_init);

/**
 * sframe_exec_eager() - build the tables of exec at exec?
 *
 * Return: kernel.sframe_exec_eager.
 */
bool sframe_exec_eager(void)
{
	return READ_ONCE(sysctl_sframe_exec_eager);
}

/**
 * sframe_exec_want() - ask for the table of a section registered at exec
 * @r: an ELF entry of current's index with no table yet.
 *
 * Safe in NMI context, under the RCU read lock the walker holds: the
 * first call for @r raises its index's irq_work, whose handler queues
 * the build.
 */
void sframe_exec_want(struct sframe_region *r)
{
	struct sframe_mm *smm;

	if (test_bit(SFRAME_REGION_F_WANTED, &r->flags) ||
	    test_and_set_bit(SFRAME_REGION_F_WANTED, &r->flags))
		return;
	smm = rcu_dereference(current->mm->sframe);
	if (smm)
		irq_work_queue(&smm->build_irq);
}

static void sframe_exec_kick(struct irq_work *work)
{
	struct sframe_mm *smm = container_of(work, struct sframe_mm,
					     build_irq);

	queue_work(system_unbound_wq, &smm->build_work);
}

/* What one build needs of the entry, copied out under the mmap lock. */
struct sframe_exec_job {
	struct sframe_region *r;
	unsigned long start;
	unsigned long end;
	unsigned long sec_addr;
	unsigned long sec_size;
	const struct cred *cred;
};

/* The next entry a sample wants a table for, if any. */
static bool sframe_exec_next(struct sframe_mm *smm, struct sframe_exec_job *j)
{
	struct sframe_region *r;
	unsigned long index = 0;
	bool found = false;

	mmap_read_lock(smm->mm);
	mt_for_each(&smm->index, r, index, ULONG_MAX) {
		if (r->kind != SFRAME_REGION_ELF || r->elf ||
		    !test_bit(SFRAME_REGION_F_WANTED, &r->flags) ||
		    test_and_set_bit(SFRAME_REGION_F_TRIED, &r->flags))
			continue;
		*j = (struct sframe_exec_job){
			.r = r, .start = r->start, .end = r->end,
			.sec_addr = r->sec_addr, .sec_size = r->sec_size,
			.cred = get_cred(r->cred),
		};
		found = true;
		break;
	}
	mmap_read_unlock(smm->mm);
	return found;
}

/*
 * The section's copy, made as the exec's own registration would have
 * made it: read from the process's memory, charged to its user and to
 * its memory cgroup, shared with the processes of that user that map
 * the same file.
 */
static struct sframe_elf_copy *sframe_exec_copy(struct mm_struct *mm,
						const struct sframe_exec_job *j)
{
	struct mem_cgroup *memcg, *old_memcg;
	const struct cred *old_cred;
	struct sframe_elf_copy *elf;
	struct sframe_elf_key key;
	bool keyed;

	old_cred = override_creds(j->cred);
	memcg = get_mem_cgroup_from_mm(mm);
	old_memcg = set_active_memcg(memcg);
	keyed = sframe_elf_key(mm, j->sec_addr, j->sec_size, &key);
	elf = sframe_elf_get(j->sec_addr, j->sec_addr, j->sec_size,
			     keyed ? &key : NULL);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	revert_creds(old_cred);
	return elf;
}

/*
 * Replace the entry with one that has the table, if it is still the
 * same entry: munmap or sframe_unregister(2) may have removed it.
 */
static void sframe_exec_publish(struct sframe_mm *smm,
				const struct sframe_exec_job *j,
				struct sframe_elf_copy *elf)
{
	struct sframe_region *nr = sframe_region_new(j->start, j->end);
	int err = -ENOENT;

	if (nr) {
		nr->kind = SFRAME_REGION_ELF;
		nr->elf = elf;
		nr->bias = j->sec_addr - elf->sec.base;
	}
	mmap_write_lock(smm->mm);
	if (nr && sframe_index_exact(smm, j->start, j->end) == j->r &&
	    !j->r->elf)
		err = mtree_store_range(&smm->index, j->start, j->end - 1, nr,
					GFP_KERNEL_ACCOUNT);
	if (!err)
		sframe_region_detach(j->r);
	mmap_write_unlock(smm->mm);
	if (err) {
		kfree(nr);
		sframe_elf_put(elf);
	}
}

static void sframe_exec_build(struct work_struct *work)
{
	struct sframe_mm *smm = container_of(work, struct sframe_mm,
					     build_work);
	struct mm_struct *mm = smm->mm;
	struct sframe_elf_copy *elf;
	struct sframe_exec_job j;

	if (!mmget_not_zero(mm))
		return;
	kthread_use_mm(mm);
	while (sframe_exec_next(smm, &j)) {
		elf = sframe_exec_copy(mm, &j);
		if (!IS_ERR(elf))
			sframe_exec_publish(smm, &j, elf);
		put_cred(j.cred);
		cond_resched();
	}
	kthread_unuse_mm(mm);
	/* Not mmput(): its last reference would wait for this work. */
	mmput_async(mm);
}

/**
 * sframe_exec_init() - set up a new index's table builds
 * @smm: the index.
 */
void sframe_exec_init(struct sframe_mm *smm)
{
	init_irq_work(&smm->build_irq, sframe_exec_kick);
	INIT_WORK(&smm->build_work, sframe_exec_build);
}

/**
 * sframe_exec_stop() - wait for an index's table builds before it goes
 * @smm: the index, which no reader can find any more: no sample raises
 *	its irq_work again.
 *
 * Sleeps.
 */
void sframe_exec_stop(struct sframe_mm *smm)
{
	irq_work_sync(&smm->build_irq);
	cancel_work_sync(&smm->build_work);
}
