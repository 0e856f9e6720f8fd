// SPDX-License-Identifier: GPL-2.0
/*
 * The JIT registry: vmalloc memory that the kernel reads through its own
 * mapping and that the process maps through ->fault(), once, at the
 * registration.  Its file owns a reference on it and refuses to be
 * mapped again; fork points the child's mapping at a copy of the pages
 * with a file of its own, so that no two processes share registry pages
 * and no mapping outlives the registry it reaches.  The pages are
 * charged to the user's tables (sframe_charge()) and to the memory
 * cgroup.
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <uapi/linux/sframe.h>

#include "sframe_internal.h"

/*
 * The registry's memory for the kernel to write: the view keeps it
 * const for the decoder, which only ever reads.
 */
static void *sframe_jit_mem(const struct sframe_jit_reg *reg)
{
	return (void *)reg->view.base;
}

/* Give the charge back, once whoever asks first. */
static void sframe_jit_uncharge(struct sframe_jit_reg *reg)
{
	unsigned long pages = reg->size >> PAGE_SHIFT;

	if (atomic_xchg(&reg->uncharged, 1))
		return;
	sframe_uncharge(reg->user, pages);
	atomic64_sub(pages, &reg->acct_mm->pinned_vm);
}

/*
 * A mapping of @reg is gone.  The registry is mapped only once, so with
 * no mapping and no index entry left nothing can use it again: its
 * charge goes now, not when the file's last reference does, which at
 * exec or exit is a task_work run after the new image has registered
 * its own tables.  The caller holds the mmap lock of the mapping's mm.
 */
static void sframe_jit_unmapped(struct sframe_jit_reg *reg)
{
	if (atomic_dec_and_test(&reg->maps) && !reg->region)
		sframe_jit_uncharge(reg);
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
	mmdrop(reg->acct_mm);
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
 * registry is gone (unmapped, unregistered, exited) no longer counts it
 * against its limit, even while the memory waits for the NMI-context
 * readers that may still see it.  The memory is freed after an RCU
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
 * that allocates it: the caller, or at fork the parent, whose cgroup
 * the child starts in.  Not inlined, so that /proc/vmallocinfo names
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
 * @mm: the process whose VmPin shows the charge.
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
	reg->acct_mm = mm;
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

static vm_fault_t sframe_jit_fault(struct vm_fault *vmf)
{
	struct sframe_jit_reg *reg = vmf->vma->vm_private_data;
	struct page *page;

	if (vmf->pgoff >= reg->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	page = vmalloc_to_page(reg->view.base + (vmf->pgoff << PAGE_SHIFT));
	get_page(page);
	page->mapping = vmf->vma->vm_file->f_mapping;
	page->index = vmf->pgoff;
	vmf->page = page;
	return 0;
}

static void sframe_jit_vm_open(struct vm_area_struct *vma)
{
	struct sframe_jit_reg *reg = vma->vm_private_data;

	atomic_inc(&reg->maps);
	refcount_inc(&reg->ref);
}

static void sframe_jit_vm_close(struct vm_area_struct *vma)
{
	struct sframe_jit_reg *reg = vma->vm_private_data;

	/*
	 * Only the registry's own mapping in its own process unregisters
	 * it: not the copy mremap() makes and we refuse, not a child's
	 * mapping that fork has not yet pointed at the child's copy.
	 */
	if (reg->region && vma->vm_mm == reg->mm && vma->vm_start == reg->uaddr)
		sframe_index_remove(vma->vm_mm, reg->region);
	sframe_jit_unmapped(reg);
	sframe_jit_put(reg);
}

static int sframe_jit_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int sframe_jit_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct sframe_jit_vm_ops = {
	.open		= sframe_jit_vm_open,
	.close		= sframe_jit_vm_close,
	.may_split	= sframe_jit_may_split,
	.mremap		= sframe_jit_mremap,
	.fault		= sframe_jit_fault,
};

/**
 * sframe_jit_is_mapping() - is this a registry mapping?
 * @vma: a mapping.
 *
 * Return: true if @vma maps a JIT registry.
 */
bool sframe_jit_is_mapping(const struct vm_area_struct *vma)
{
	return vma->vm_ops == &sframe_jit_vm_ops;
}

/*
 * The registration maps the file once, and that mapping is the only one.
 * Every other way to map a file that userspace can reach runs through
 * here first, before anything is unmapped: remap_file_pages() on the
 * registry's own mapping, in its process or in a forked child whose
 * mapping carries a file of its own.  Refusing here keeps the mapping,
 * its contents and its registration as they were.  Called with the mmap
 * lock held for writing, as ->mmap() is.
 */
static unsigned long sframe_jit_get_unmapped_area(struct file *file,
						  unsigned long addr,
						  unsigned long len,
						  unsigned long pgoff,
						  unsigned long flags)
{
	struct sframe_jit_reg *reg = file->private_data;

	if (reg->mapped)
		return -EINVAL;
	return mm_get_unmapped_area(current->mm, file, addr, len, pgoff, flags);
}

static int sframe_jit_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct sframe_jit_reg *reg = file->private_data;

	/* ->get_unmapped_area() let only the registration's own call by. */
	if (WARN_ON_ONCE(reg->mapped) || vma->vm_pgoff ||
	    vma->vm_end - vma->vm_start != reg->size)
		return -EINVAL;
	reg->mapped = true;
	vm_flags_mod(vma, VM_DONTEXPAND, VM_MAYEXEC);
	vma->vm_ops = &sframe_jit_vm_ops;
	vma->vm_private_data = reg;
	atomic_inc(&reg->maps);
	refcount_inc(&reg->ref);
	return 0;
}

/*
 * The file's last user, its mapping or the call that made it, is gone.
 * __fput() runs in process context: a registration that failed is freed
 * and uncharged before its caller returns to userspace.
 */
static int sframe_jit_release(struct inode *inode, struct file *file)
{
	sframe_jit_put_sync(file->private_data);
	return 0;
}

static const struct file_operations sframe_jit_fops = {
	.get_unmapped_area	= sframe_jit_get_unmapped_area,
	.mmap			= sframe_jit_mmap,
	.release		= sframe_jit_release,
};

/**
 * sframe_jit_file() - a file of its own for a registry
 * @reg: the registry.
 *
 * The file owns a reference on @reg, dropped when its last user, the
 * mapping or the caller, puts it.  It is never installed in a file
 * table: only the registration maps it, after security_mmap_file().
 * It is not made with anon_inode_getfile_secure(): with no descriptor
 * there is nothing further for an LSM to decide on, and the inode of
 * its own that function makes would put each registry's mapping in an
 * address space of its own, which fork, moving a child's mapping onto
 * the copy's file, would then have to move it between.
 *
 * Return: the file or an ERR_PTR.
 */
struct file *sframe_jit_file(struct sframe_jit_reg *reg)
{
	struct file *file;

	file = anon_inode_getfile("[sframe_jit]", &sframe_jit_fops, reg,
				  O_RDWR);
	if (!IS_ERR(file))
		refcount_inc(&reg->ref);
	return file;
}

/**
 * sframe_jit_map() - map a registry into the current process
 * @reg: the registry.
 * @file: its file, from sframe_jit_file().
 *
 * The caller holds the mmap lock for writing and has passed the file
 * through security_mmap_file().
 *
 * Return: the address, or a negative errno as do_mmap() returns it.
 */
unsigned long sframe_jit_map(struct sframe_jit_reg *reg, struct file *file)
{
	unsigned long addr, populate;

	addr = do_mmap(file, 0, reg->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       0, 0, &populate, NULL);
	if (!IS_ERR_VALUE(addr)) {
		reg->mm = current->mm;
		reg->uaddr = addr;
	}
	return addr;
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
 * sframe_jit_copy() - carry a registry's published state into its successor
 * @new: the replacement, of @old's kind and at least as large as @old in
 *	every area.
 * @old: the registry being replaced.
 *
 * Descriptors, rows and, in a compact registry, rules are copied whole,
 * published or not: a JIT may have written rows and rules ahead of the
 * descriptor that will publish them.  The producer is not appending
 * meanwhile (the ABI asks it not to); if it is, it only hurts its own
 * stack traces.  A registry can be hundreds of MiB, copied under the
 * mmap lock: the scheduler is let in between chunks.
 */
void sframe_jit_copy(struct sframe_jit_reg *new,
		     const struct sframe_jit_reg *old)
{
	const struct sframe_jit_view *o = &old->view, *n = &new->view;
	const struct sframe_jit_header *oh = o->base;
	struct sframe_jit_header *nh = sframe_jit_mem(new);

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
	nh->seq = READ_ONCE(oh->seq);
	nh->fde_count = READ_ONCE(oh->fde_count);
}

/**
 * sframe_jit_orphan() - mark a registry that is no longer registered
 * @mm: the process that maps it.
 * @reg: the registry, unregistered or replaced.
 *
 * It stays mapped until the process unmaps it, but a child does not
 * inherit it: fork copies registered registries only.  The caller holds
 * the mmap lock for writing.
 */
void sframe_jit_orphan(struct mm_struct *mm, struct sframe_jit_reg *reg)
{
	struct vm_area_struct *vma = vma_lookup(mm, reg->uaddr);

	if (vma && vma->vm_ops == &sframe_jit_vm_ops &&
	    vma->vm_private_data == reg)
		vm_flags_set(vma, VM_DONTCOPY);
}

/*
 * dup_mmap() left the child's mapping on the parent's file, which would
 * reach the parent's registry: put it on @file, its own registry's.
 * Every registry file is an anon-inode file on the same inode, so the
 * mapping stays in the same address space's tree as its file changes.
 */
static void sframe_jit_swap_file(struct vm_area_struct *vma, struct file *file)
{
	VM_WARN_ON_ONCE(file->f_mapping != vma->vm_file->f_mapping);
	vma_set_file(vma, file);
	fput(file);
}

/*
 * A child whose copy of a registry would pass the limit of sframe_charge()
 * gets ordinary memory at the same address instead, as MADV_WIPEONFORK
 * gives: private, anonymous, zero-filled on first touch, not registered,
 * pinned or charged to the limit.  Its JIT can go on writing there, and
 * the fork does not fail because of a registry.  The mapping is the
 * child's own and not yet visible to anyone; dup_mmap() put it in the
 * file's tree and copied no page-table entries for it (a shared mapping
 * without an anon_vma), so it leaves the tree and becomes anonymous.
 */
static void sframe_jit_wipe_in_child(struct vm_area_struct *vma)
{
	struct file *file = vma->vm_file;
	struct address_space *mapping = file->f_mapping;
	long pages = vma_pages(vma);

	vm_stat_account(vma->vm_mm, vma->vm_flags, -pages);
	i_mmap_lock_write(mapping);
	if (vma_is_shared_maywrite(vma))
		mapping_unmap_writable(mapping);
	vma_interval_tree_remove(vma, &mapping->i_mmap);
	i_mmap_unlock_write(mapping);
	vm_flags_clear(vma, VM_SHARED | VM_MAYSHARE | VM_DONTEXPAND);
	vma->vm_file = NULL;
	fput(file);
	vma->vm_private_data = NULL;
	vma_set_anonymous(vma);
	vma->vm_pgoff = vma->vm_start >> PAGE_SHIFT;
	vma_set_page_prot(vma);
	vm_stat_account(vma->vm_mm, vma->vm_flags, pages);
}

/*
 * The child's copy of the pages.  A registry can be hundreds of MiB and
 * both mmap locks are held: copy a page at a time and let others run.
 */
static void sframe_jit_copy_pages(struct sframe_jit_reg *reg,
				  const struct sframe_jit_reg *old)
{
	unsigned long off;

	for (off = 0; off < reg->size; off += PAGE_SIZE) {
		memcpy(sframe_jit_mem(reg) + off, old->view.base + off,
		       PAGE_SIZE);
		cond_resched();
	}
}

/**
 * sframe_jit_fork() - give a forked child's registry mapping its own registry
 * @mm: the child's mm.
 * @vma: the child's copy of a registry mapping, which dup_mmap() left on
 *	the parent's registry and file.
 *
 * Called from dup_mmap() with both mmap locks held for writing.  The
 * child gets a copy of the pages, at the same address, with a file of
 * its own; past the limit of sframe_charge(), ordinary memory instead.  A
 * mapping that is no longer registered (left behind by
 * SFRAME_UNREGISTER or SFRAME_REPLACE_JIT and inherited despite
 * VM_DONTCOPY, through MADV_DOFORK) gets a copy too: the two processes
 * never share registry pages.
 *
 * Return: the child's registry, held by its mapping; NULL where the
 * child got ordinary memory; or an ERR_PTR, which fails the fork.
 */
struct sframe_jit_reg *sframe_jit_fork(struct mm_struct *mm,
				       struct vm_area_struct *vma)
{
	struct sframe_jit_reg *old = vma->vm_private_data, *reg;
	struct file *file;

	reg = sframe_jit_alloc(mm, &old->view);
	if (PTR_ERR(reg) == -EDQUOT) {
		sframe_jit_wipe_in_child(vma);
		sframe_jit_unmapped(old);
		sframe_jit_put(old);
		return NULL;
	}
	if (IS_ERR(reg))
		return reg;
	file = sframe_jit_file(reg);
	if (IS_ERR(file)) {
		sframe_jit_put_sync(reg);
		return ERR_CAST(file);
	}
	sframe_jit_copy_pages(reg, old);
	/* The child's mapping is the one mapping its file allows. */
	reg->mapped = true;
	atomic_set(&reg->maps, 1);
	reg->mm = mm;
	reg->uaddr = vma->vm_start;
	sframe_jit_swap_file(vma, file);
	vma->vm_private_data = reg;
	sframe_jit_unmapped(old);
	sframe_jit_put(old);
	return reg;
}
