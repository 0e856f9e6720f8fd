// SPDX-License-Identifier: GPL-2.0
/*
 * The JIT registry: vmalloc memory that the kernel reads through its own
 * mapping, behind a file that sframe_jit_open(2) returns, which the
 * process maps once (sframe_jit_mmap.c).  The file and the mapping each
 * own a reference on the registry.  The pages are charged to the user's
 * tables (sframe_charge()) and to the memory cgroup.
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <uapi/linux/sframe_jit.h>

#include "sframe_internal.h"

/*
 * The registry's memory for the kernel to write: the view keeps it
 * const for the decoder, which only ever reads.
 */
static void *sframe_jit_mem(const struct sframe_jit_reg *reg)
{
	return (void *)reg->view.base;
}

/**
 * sframe_jit_uncharge() - give a registry's charge back
 * @reg: the registry.
 *
 * Once, whoever asks first: the mapping's close when nothing can reach
 * the registry again (sframe_jit_mmap.c), or the registry's freeing.
 */
void sframe_jit_uncharge(struct sframe_jit_reg *reg)
{
	unsigned long pages = reg->size >> PAGE_SHIFT;

	if (atomic_xchg(&reg->uncharged, 1))
		return;
	sframe_uncharge(reg->user, pages);
	atomic64_sub(pages, &reg->mm->pinned_vm);
}

static void sframe_jit_free_work(struct work_struct *work)
{
	struct sframe_jit_reg *reg = container_of(work, struct sframe_jit_reg,
						  free_work);
	unsigned long off;

	/* ->fault() pointed the pages at the file's mapping, as perf does. */
	for (off = 0; off < reg->size; off += PAGE_SIZE)
		vmalloc_to_page(reg->view.base + off)->mapping = NULL;
	vfree(reg->view.base);
	free_uid(reg->user);
	mmdrop(reg->mm);
	kfree(reg);
}

static void sframe_jit_free_rcu(struct rcu_head *rcu)
{
	struct sframe_jit_reg *reg = container_of(rcu, struct sframe_jit_reg,
						  rcu);

	schedule_work(&reg->free_work);
}

/**
 * sframe_jit_put() - drop a reference to a registry
 * @reg: the registry.
 *
 * The last reference gives the charge back at once: a process whose
 * registry is gone (its file released, unmapped, exited) no longer
 * counts it against its limit, even while the memory waits for the
 * NMI-context readers that may still see it.  The memory is freed after an RCU
 * grace period, by a work item.  Safe in any context but NMI.
 */
void sframe_jit_put(struct sframe_jit_reg *reg)
{
	if (!refcount_dec_and_test(&reg->ref))
		return;
	sframe_jit_uncharge(reg);
	call_rcu(&reg->rcu, sframe_jit_free_rcu);
}

/**
 * sframe_jit_put_sync() - drop a reference to a registry, in process context
 * @reg: the registry.
 *
 * If that was the last reference, the registry is uncharged before the
 * call returns, and freed too if no index ever published it, so that no
 * reader can have seen it: a registration that failed is gone by the
 * time its caller sees the error.
 */
void sframe_jit_put_sync(struct sframe_jit_reg *reg)
{
	might_sleep();
	if (!refcount_dec_and_test(&reg->ref))
		return;
	sframe_jit_uncharge(reg);
	if (reg->published)
		call_rcu(&reg->rcu, sframe_jit_free_rcu);
	else
		sframe_jit_free_work(&reg->free_work);
}

/* Bytes per descriptor and per row of a registry of @v's kind. */
static u32 sframe_jit_fde_size(const struct sframe_jit_view *v)
{
	return v->compact ? sizeof(struct sframe_jit_cfde) :
			    sizeof(struct sframe_jit_fde);
}

static u32 sframe_jit_fre_size(const struct sframe_jit_view *v)
{
	return v->compact ? sizeof(struct sframe_jit_cfre) :
			    sizeof(struct sframe_jit_fre);
}

/*
 * Lay out a registry of @v's kind and capacities: the header page, the
 * descriptors, then the rows and, in a compact registry, the rules, each
 * of these two starting on a cache line, so that no line holds records
 * of two areas.  sframe.rst documents the layout, and the library's
 * private memory backend mirrors it.  Sets @v's offsets and returns the
 * size, a few hundred MiB at most, as the capacities are bounded.
 */
static u64 sframe_jit_layout(struct sframe_jit_view *v)
{
	u64 end;

	BUILD_BUG_ON(sizeof(struct sframe_jit_header) > PAGE_SIZE);
	v->fde_off = PAGE_SIZE;
	end = PAGE_SIZE + (u64)v->fde_cap * sframe_jit_fde_size(v);
	v->fre_off = ALIGN(end, SMP_CACHE_BYTES);
	end = v->fre_off + (u64)v->fre_cap * sframe_jit_fre_size(v);
	v->rule_off = 0;
	if (v->compact) {
		v->rule_off = ALIGN(end, SMP_CACHE_BYTES);
		end = v->rule_off +
		      (u64)v->rule_cap * sizeof(struct sframe_jit_rule);
	}
	return PAGE_ALIGN(end);
}

static void sframe_jit_init_header(struct sframe_jit_reg *reg)
{
	struct sframe_jit_header *h = sframe_jit_mem(reg);
	const struct sframe_jit_view *v = &reg->view;

	h->magic = SFRAME_JIT_MAGIC;
	h->version = SFRAME_JIT_VERSION;
	h->header_size = sizeof(*h);
	h->fde_stride = sframe_jit_fde_size(v);
	h->fre_stride = sframe_jit_fre_size(v);
	h->flags = (v->compact ? SFRAME_JIT_F_COMPACT : 0) |
		   (v->stats ? SFRAME_JIT_F_STATS : 0);
	if (v->compact) {
		h->rule_off = v->rule_off;
		h->rule_capacity = v->rule_cap;
		h->rule_stride = sizeof(struct sframe_jit_rule);
	}
	h->text_start = reg->view.text_start;
	h->text_end = reg->view.text_end;
	h->fde_off = reg->view.fde_off;
	h->fde_capacity = reg->view.fde_cap;
	h->fre_off = reg->view.fre_off;
	h->fre_capacity = reg->view.fre_cap;
	h->map_size = reg->size;
}

/*
 * vmalloc_user() memory, but charged to the memory cgroup of the task
 * that allocates it, the caller.  Not inlined, so that /proc/vmallocinfo names
 * its caller, a function of this file, as the registry's allocator.
 */
static noinline void *sframe_jit_vmalloc(unsigned long size)
{
	return __vmalloc_node_range(size, SHMLBA, VMALLOC_START, VMALLOC_END,
				    GFP_KERNEL_ACCOUNT | __GFP_ZERO,
				    PAGE_KERNEL, VM_USERMAP, NUMA_NO_NODE,
				    __builtin_return_address(0));
}

/**
 * sframe_jit_alloc() - a new registry
 * @mm: the process the registry is for: it is registered there, only
 *	there may it be mapped, and its VmPin shows the charge.
 * @shape: the registry's text range, kind (compact or not),
 *	capacities and counting, checked by the caller; the rest of it is
 *	ignored.
 *
 * A zeroed registry with its header filled in, charged to the current
 * user's tables (sframe_charge()) and to the current memory cgroup.  The
 * caller holds its only reference.
 *
 * Return: the registry, ERR_PTR(-EDQUOT) past the user's limit, or
 * ERR_PTR(-ENOMEM).
 */
struct sframe_jit_reg *sframe_jit_alloc(struct mm_struct *mm,
					const struct sframe_jit_view *shape)
{
	struct sframe_jit_view view = {
		.text_start = shape->text_start,
		.text_end = shape->text_end,
		.compact = shape->compact,
		.fde_cap = shape->fde_cap,
		.fre_cap = shape->fre_cap,
		.rule_cap = shape->compact ? shape->rule_cap : 0,
		.stats = shape->stats,
	};
	struct sframe_jit_reg *reg;
	u64 size = sframe_jit_layout(&view);
	int err = -ENOMEM;

	reg = kzalloc(sizeof(*reg), GFP_KERNEL_ACCOUNT);
	if (!reg)
		return ERR_PTR(-ENOMEM);
	reg->user = get_uid(current_user());
	err = sframe_charge(reg->user, size >> PAGE_SHIFT);
	if (err)
		goto free_reg;
	view.base = sframe_jit_vmalloc(size);
	if (!view.base) {
		err = -ENOMEM;
		goto uncharge;
	}
	reg->size = size;
	reg->mm = mm;
	mmgrab(mm);
	atomic64_add(size >> PAGE_SHIFT, &mm->pinned_vm);
	refcount_set(&reg->ref, 1);
	INIT_WORK(&reg->free_work, sframe_jit_free_work);
	reg->view = view;
	sframe_jit_init_header(reg);
	return reg;

uncharge:
	sframe_uncharge(reg->user, size >> PAGE_SHIFT);
free_reg:
	free_uid(reg->user);
	kfree(reg);
	return ERR_PTR(err);
}

/* The registry's size, which userspace maps: lseek(fd, 0, SEEK_END). */
static loff_t sframe_jit_llseek(struct file *file, loff_t offset, int whence)
{
	struct sframe_jit_reg *reg = file->private_data;

	return fixed_size_llseek(file, offset, whence, reg->size);
}

/*
 * The file's last user, its descriptor or its mapping, is gone.  A
 * registry never mapped, or whose mapping went with its process, may
 * still be registered: unregister it in the process it was made for,
 * unless that process's mm is being torn down, which drops every
 * registration itself.  __fput() runs in process context.
 */
static int sframe_jit_release(struct inode *inode, struct file *file)
{
	struct sframe_jit_reg *reg = file->private_data;
	struct mm_struct *mm = reg->mm;

	if (mmget_not_zero(mm)) {
		mmap_write_lock(mm);
		if (reg->region)
			sframe_index_remove(mm, reg->region);
		mmap_write_unlock(mm);
		mmput(mm);
	}
	sframe_jit_put_sync(reg);
	return 0;
}

static void sframe_jit_show_fdinfo(struct seq_file *m, struct file *file)
{
	const struct sframe_jit_reg *reg = file->private_data;

	seq_printf(m, "text_start:\t%#lx\n", reg->view.text_start);
	seq_printf(m, "text_end:\t%#lx\n", reg->view.text_end);
	seq_printf(m, "map_size:\t%lu\n", reg->size);
	seq_printf(m, "registered:\t%d\n", !!READ_ONCE(reg->region));
}

static const struct file_operations sframe_jit_fops = {
	.get_unmapped_area	= sframe_jit_get_unmapped_area,
	.mmap			= sframe_jit_mmap,
	.llseek			= sframe_jit_llseek,
	.release		= sframe_jit_release,
	.show_fdinfo		= sframe_jit_show_fdinfo,
};

/**
 * sframe_jit_file() - a file of its own for a registry
 * @reg: the registry.
 *
 * The file owns a reference on @reg, dropped when it is released.
 *
 * Return: the file or an ERR_PTR.
 */
struct file *sframe_jit_file(struct sframe_jit_reg *reg)
{
	struct file *file;

	file = anon_inode_getfile("[sframe_jit]", &sframe_jit_fops, reg, O_RDWR);
	if (!IS_ERR(file))
		refcount_inc(&reg->ref);
	return file;
}

/**
 * sframe_jit_from_file() - the registry behind a file, if it is one
 * @file: a file.
 *
 * Return: the registry, valid while the caller holds @file, or NULL.
 */
struct sframe_jit_reg *sframe_jit_from_file(struct file *file)
{
	return file->f_op == &sframe_jit_fops ? file->private_data : NULL;
}

/* Bytes copied between two chances to reschedule. */
#define SFRAME_JIT_COPY_CHUNK	(256 * 1024UL)

static void sframe_jit_copy_area(void *dst, const void *src, size_t len)
{
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = min(len - off, SFRAME_JIT_COPY_CHUNK);
		memcpy(dst + off, src + off, n);
		cond_resched();
	}
}

/**
 * sframe_jit_copy() - start a registry with another one's records
 * @new: the new registry, of @old's kind and at least as large as @old
 *	in every area, not yet published.
 * @old: the registry it replaces (SFRAME_JIT_REPLACE) or copies
 *	(SFRAME_JIT_COPY).
 *
 * Descriptors, rows and, in a compact registry, rules are copied whole,
 * published or not: a JIT may have written rows and rules ahead of the
 * descriptor that will publish them.  The producer is not appending
 * meanwhile (the ABI asks it not to); if it is, it only hurts its own
 * stack traces.  The count is read first, so that every descriptor it
 * publishes is copied.  A registry can be hundreds of MiB, copied under
 * the mmap lock: the scheduler is let in between chunks.
 */
void sframe_jit_copy(struct sframe_jit_reg *new,
		     const struct sframe_jit_reg *old)
{
	const struct sframe_jit_view *o = &old->view, *n = &new->view;
	const struct sframe_jit_header *oh = o->base;
	struct sframe_jit_header *nh = sframe_jit_mem(new);
	u32 count;

	/*
	 * Pairs with the JIT's store-release of fde_count: the descriptors
	 * and rows it publishes were written before it, so the copies of
	 * the areas below hold them.
	 */
	count = smp_load_acquire(&oh->fde_count);
	nh->seq = READ_ONCE(oh->seq);
	sframe_jit_copy_area(sframe_jit_mem(new) + n->fde_off,
			     o->base + o->fde_off,
			     (size_t)o->fde_cap * sframe_jit_fde_size(o));
	sframe_jit_copy_area(sframe_jit_mem(new) + n->fre_off,
			     o->base + o->fre_off,
			     (size_t)o->fre_cap * sframe_jit_fre_size(o));
	if (o->compact)
		sframe_jit_copy_area(sframe_jit_mem(new) + n->rule_off,
				     o->base + o->rule_off,
				     (size_t)o->rule_cap *
				     sizeof(struct sframe_jit_rule));
	nh->fde_count = count;
}

