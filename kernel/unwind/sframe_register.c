// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_register(2): registration of user unwind tables.
 *
 * A process's registered code ranges live in a maple tree hung off its
 * mm (struct sframe_mm).  The unwinder searches the tree under RCU from
 * NMI context.  Writers hold the mmap lock: for writing in the system
 * call, at exec and at fork; from a registry mapping's ->close() during
 * munmap or exit, with every other writer excluded.  Removed entries are
 * freed after an RCU grace period.
 *
 * A JIT registry is vmalloc memory that the kernel reads through its own
 * mapping and that the process maps through ->fault(), so that fork does
 * not share the pages: the child's mapping is pointed at a copy.
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/security.h>
#include <linux/sframe_register.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/sysctl.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <uapi/linux/sframe.h>

#include "sframe.h"

/**
 * struct sframe_jit_reg - a JIT registry
 * @ref: one for its file, one for each mapping of it, one for its index
 *	entry, and one for a system call working on it.
 * @base: the kernel's mapping of the registry.
 * @size: bytes at @base, page aligned.
 * @text_start: the registered code range's start.
 * @text_end: its end.
 * @fde_off: private copies of the layout written into the header:
 *	the header is shared with the process and never read back.
 * @fde_cap: descriptor capacity.
 * @fre_off: offset of the frame-row area.
 * @fre_cap: frame-row capacity.
 * @user: the user charged for @size in locked memory.
 * @acct_mm: the process whose pinned_vm (VmPin) shows the charge.
 * @mm: the process the registry was made for (not a reference).
 * @uaddr: where it is mapped in @mm.
 * @region: its index entry while registered; protected by the mmap lock.
 * @mapped: the one mapping the registry allows was made: its file may
 *	not be mapped again.
 * @free_work: frees the registry in process context.
 */
struct sframe_jit_reg {
	refcount_t ref;
	void *base;
	unsigned long size;
	unsigned long text_start;
	unsigned long text_end;
	u32 fde_off;
	u32 fde_cap;
	u32 fre_off;
	u32 fre_cap;
	struct user_struct *user;
	struct mm_struct *acct_mm;
	struct mm_struct *mm;
	unsigned long uaddr;
	struct sframe_region *region;
	bool mapped;
	struct work_struct free_work;
};

/**
 * struct sframe_elf_copy - a validated private copy of an ELF .sframe
 * @ref: one per index entry; entries of forked children share the copy.
 * @sec: the parsed header, pointing into @data.
 * @rcu: frees the copy after the last reader.
 * @data: the section's bytes.
 */
struct sframe_elf_copy {
	refcount_t ref;
	struct sframe_sec sec;
	struct rcu_head rcu;
	u8 data[];
};

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

static int __init sframe_register_init(void)
{
	register_sysctl_init("kernel", sframe_sysctls);
	return 0;
}
late_initcall(sframe_register_init);

/* The index, for a writer holding the mmap lock or tearing the mm down. */
static struct sframe_mm *sframe_mm_locked(struct mm_struct *mm)
{
	return rcu_dereference_protected(mm->sframe,
					 lockdep_is_held(&mm->mmap_lock) ||
					 !atomic_read(&mm->mm_users));
}

static struct sframe_mm *sframe_mm_get(struct mm_struct *mm)
{
	struct sframe_mm *smm = sframe_mm_locked(mm);

	if (smm)
		return smm;
	smm = kzalloc(sizeof(*smm), GFP_KERNEL_ACCOUNT);
	if (!smm)
		return NULL;
	mt_init_flags(&smm->index, MT_FLAGS_USE_RCU);
	rcu_assign_pointer(mm->sframe, smm);
	return smm;
}

/* Memory accounting, as for io_uring rings: the user's locked_vm. */
static int sframe_charge(struct user_struct *user, unsigned long pages,
			 bool enforce)
{
	unsigned long limit, cur, new;

	if (!enforce || capable(CAP_IPC_LOCK)) {
		atomic_long_add(pages, &user->locked_vm);
		return 0;
	}
	limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	cur = atomic_long_read(&user->locked_vm);
	do {
		if (check_add_overflow(cur, pages, &new) || new > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	return 0;
}

static void sframe_uncharge(struct sframe_jit_reg *reg)
{
	unsigned long pages = reg->size >> PAGE_SHIFT;

	atomic_long_sub(pages, &reg->user->locked_vm);
	free_uid(reg->user);
	atomic64_sub(pages, &reg->acct_mm->pinned_vm);
	mmdrop(reg->acct_mm);
}

static void sframe_jit_free_work(struct work_struct *work)
{
	struct sframe_jit_reg *reg = container_of(work, struct sframe_jit_reg,
						  free_work);
	unsigned long off;

	/* ->fault() pointed the pages at the file's mapping, as perf does. */
	for (off = 0; off < reg->size; off += PAGE_SIZE)
		vmalloc_to_page(reg->base + off)->mapping = NULL;
	vfree(reg->base);
	sframe_uncharge(reg);
	kfree(reg);
}

/* May be called from an RCU callback: the freeing itself is deferred. */
static void sframe_jit_put(struct sframe_jit_reg *reg)
{
	if (refcount_dec_and_test(&reg->ref))
		schedule_work(&reg->free_work);
}

/*
 * The same from a system call that may sleep: a registration that
 * failed is gone, and uncharged, by the time the caller sees the error.
 */
static void sframe_jit_put_sync(struct sframe_jit_reg *reg)
{
	might_sleep();
	if (refcount_dec_and_test(&reg->ref))
		sframe_jit_free_work(&reg->free_work);
}

static void sframe_jit_init_header(struct sframe_jit_reg *reg)
{
	struct sframe_jit_header *h = reg->base;

	h->magic = SFRAME_JIT_MAGIC;
	h->version = SFRAME_JIT_VERSION;
	h->header_size = sizeof(*h);
	h->fde_stride = sizeof(struct sframe_jit_fde);
	h->fre_stride = sizeof(struct sframe_jit_fre);
	h->flags = 0;	/* no registration flags are defined yet */
	h->text_start = reg->text_start;
	h->text_end = reg->text_end;
	h->fde_off = reg->fde_off;
	h->fde_capacity = reg->fde_cap;
	h->fre_off = reg->fre_off;
	h->fre_capacity = reg->fre_cap;
	h->map_size = reg->size;
}

/*
 * A new, zeroed registry with its header filled in, charged to the
 * current user and shown in @mm's VmPin.  The caller holds its only
 * reference.
 */
static struct sframe_jit_reg *
sframe_jit_alloc(struct mm_struct *mm, unsigned long start, unsigned long end,
		 u32 fde_cap, u32 fre_cap, bool enforce)
{
	struct sframe_jit_reg *reg;
	u64 fre_off, size;
	int err = -ENOMEM;

	BUILD_BUG_ON(sizeof(struct sframe_jit_header) > PAGE_SIZE);
	fre_off = ALIGN(PAGE_SIZE + (u64)fde_cap * sizeof(struct sframe_jit_fde),
			SMP_CACHE_BYTES);
	size = PAGE_ALIGN(fre_off + (u64)fre_cap * sizeof(struct sframe_jit_fre));

	reg = kzalloc(sizeof(*reg), GFP_KERNEL_ACCOUNT);
	if (!reg)
		return ERR_PTR(-ENOMEM);
	reg->user = get_uid(current_user());
	err = sframe_charge(reg->user, size >> PAGE_SHIFT, enforce);
	if (err)
		goto free_reg;
	reg->base = vmalloc_user(size);
	if (!reg->base) {
		err = -ENOMEM;
		goto uncharge;
	}
	reg->size = size;
	reg->acct_mm = mm;
	mmgrab(mm);
	atomic64_add(size >> PAGE_SHIFT, &mm->pinned_vm);
	refcount_set(&reg->ref, 1);
	INIT_WORK(&reg->free_work, sframe_jit_free_work);
	reg->text_start = start;
	reg->text_end = end;
	reg->fde_off = PAGE_SIZE;
	reg->fde_cap = fde_cap;
	reg->fre_off = fre_off;
	reg->fre_cap = fre_cap;
	sframe_jit_init_header(reg);
	return reg;

uncharge:
	atomic_long_sub(size >> PAGE_SHIFT, &reg->user->locked_vm);
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
	page = vmalloc_to_page(reg->base + (vmf->pgoff << PAGE_SHIFT));
	get_page(page);
	page->mapping = vmf->vma->vm_file->f_mapping;
	page->index = vmf->pgoff;
	vmf->page = page;
	return 0;
}

static void sframe_index_remove(struct mm_struct *mm, struct sframe_region *r);

static void sframe_jit_vm_open(struct vm_area_struct *vma)
{
	struct sframe_jit_reg *reg = vma->vm_private_data;

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

/*
 * The file behind @reg's mapping; it owns a reference on @reg, dropped
 * when its last user (the mapping, or the caller) puts it.
 */
static struct file *sframe_jit_file(struct sframe_jit_reg *reg)
{
	struct file *file;

	file = anon_inode_getfile("[sframe_jit]", &sframe_jit_fops, reg,
				  O_RDWR);
	if (!IS_ERR(file))
		refcount_inc(&reg->ref);
	return file;
}

/* Map @reg into the current process; the caller holds the mmap lock. */
static unsigned long sframe_jit_map(struct sframe_jit_reg *reg,
				    struct file *file)
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

static void sframe_elf_put(struct sframe_elf_copy *elf)
{
	if (refcount_dec_and_test(&elf->ref))
		kvfree(elf);
}

static void sframe_region_free_rcu(struct rcu_head *rcu)
{
	struct sframe_region *r = container_of(rcu, struct sframe_region, rcu);

	if (r->kind == SFRAME_REGION_JIT)
		sframe_jit_put(r->jit);
	else
		sframe_elf_put(r->elf);
	kfree(r);
}

static struct sframe_region *sframe_region_new(unsigned long start,
					       unsigned long end)
{
	struct sframe_region *r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);

	if (r) {
		r->start = start;
		r->end = end;
	}
	return r;
}

/* Room for one more entry that overlaps none?  Caller holds mmap lock. */
static int sframe_index_check(struct sframe_mm *smm, unsigned long start,
			      unsigned long end)
{
	unsigned long index = start;

	if (smm->nr >= READ_ONCE(sysctl_sframe_max_registrations))
		return -ENOSPC;
	if (mt_find(&smm->index, &index, end - 1))
		return -EEXIST;
	return 0;
}

static int sframe_index_insert(struct sframe_mm *smm, struct sframe_region *r)
{
	int err;

	err = mtree_insert_range(&smm->index, r->start, r->end - 1, r,
				 GFP_KERNEL_ACCOUNT);
	if (!err)
		smm->nr++;
	return err;
}

static void sframe_region_detach(struct sframe_region *r)
{
	if (r->kind == SFRAME_REGION_JIT)
		r->jit->region = NULL;
	call_rcu(&r->rcu, sframe_region_free_rcu);
}

/*
 * A registry that is no longer registered (unregistered, or replaced)
 * stays mapped until the process unmaps it, but a child does not
 * inherit it: fork copies registered registries only.  Needs the mmap
 * lock held for writing.
 */
static void sframe_jit_orphan(struct mm_struct *mm, struct sframe_jit_reg *reg)
{
	struct vm_area_struct *vma = vma_lookup(mm, reg->uaddr);

	if (vma && vma->vm_ops == &sframe_jit_vm_ops &&
	    vma->vm_private_data == reg)
		vm_flags_set(vma, VM_DONTCOPY);
}

static void sframe_index_remove(struct mm_struct *mm, struct sframe_region *r)
{
	struct sframe_mm *smm = sframe_mm_locked(mm);

	mtree_erase(&smm->index, r->start);
	smm->nr--;
	sframe_region_detach(r);
}

/* The entry for exactly [start, end), or NULL. */
static struct sframe_region *sframe_index_exact(struct sframe_mm *smm,
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

static bool sframe_range_ok(u64 start, u64 end)
{
	return start < end && end <= TASK_SIZE;
}

static int sframe_check_jit_args(const struct sframe_jit_args *args)
{
	if (args->flags)
		return -EINVAL;
	if (!sframe_range_ok(args->text_start, args->text_end))
		return -EINVAL;
	if (!args->fde_capacity || args->fde_capacity > SFRAME_JIT_MAX_FDES ||
	    !args->fre_capacity || args->fre_capacity > SFRAME_JIT_MAX_FRES)
		return -EINVAL;
	return 0;
}

/*
 * Carry the published state of @old into @new, which is at least as
 * large in both areas.  The producer is not appending meanwhile (the
 * ABI asks it not to); if it is, it only hurts its own stack traces.
 */
static void sframe_jit_copy(struct sframe_jit_reg *new,
			    const struct sframe_jit_reg *old)
{
	const struct sframe_jit_header *oh = old->base;
	struct sframe_jit_header *nh = new->base;

	memcpy(new->base + new->fde_off, old->base + old->fde_off,
	       (size_t)old->fde_cap * sizeof(struct sframe_jit_fde));
	memcpy(new->base + new->fre_off, old->base + old->fre_off,
	       (size_t)old->fre_cap * sizeof(struct sframe_jit_fre));
	nh->seq = READ_ONCE(oh->seq);
	nh->fde_count = READ_ONCE(oh->fde_count);
}

/*
 * With the mmap lock held: check that @reg may be added (or replace the
 * entry @old), map it and publish its index entry @r.
 */
static long sframe_jit_install(struct mm_struct *mm, struct sframe_jit_reg *reg,
			       struct file *file, struct sframe_region *r,
			       struct sframe_region *old)
{
	struct sframe_mm *smm = sframe_mm_get(mm);
	unsigned long addr;
	int err;

	if (!smm)
		return -ENOMEM;
	if (!old) {
		err = sframe_index_check(smm, reg->text_start, reg->text_end);
		if (err)
			return err;
	}
	addr = sframe_jit_map(reg, file);
	if (IS_ERR_VALUE(addr))
		return addr;

	r->kind = SFRAME_REGION_JIT;
	r->jit = reg;
	if (old) {
		sframe_jit_copy(reg, old->jit);
		/* One store: readers see the old entry or the new one. */
		err = mtree_store_range(&smm->index, r->start, r->end - 1, r,
					GFP_KERNEL_ACCOUNT);
	} else {
		err = sframe_index_insert(smm, r);
	}
	if (err) {
		do_munmap(mm, addr, reg->size, NULL);
		return err;
	}
	refcount_inc(&reg->ref);
	reg->region = r;
	if (old) {
		sframe_jit_orphan(mm, old->jit);
		sframe_region_detach(old);
	}
	return addr;
}

static long sframe_register_jit(const struct sframe_jit_args *args,
				bool replace)
{
	struct mm_struct *mm = current->mm;
	struct sframe_region *r, *old = NULL;
	struct sframe_jit_reg *reg;
	struct file *file;
	long ret;

	ret = sframe_check_jit_args(args);
	if (ret)
		return ret;
	reg = sframe_jit_alloc(mm, args->text_start, args->text_end,
			       args->fde_capacity, args->fre_capacity, true);
	if (IS_ERR(reg))
		return PTR_ERR(reg);
	ret = -ENOMEM;
	r = sframe_region_new(args->text_start, args->text_end);
	if (!r)
		goto put_reg;
	file = sframe_jit_file(reg);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto free_region;
	}
	/* As vm_mmap_pgoff() does before do_mmap(), outside the lock. */
	ret = security_mmap_file(file, PROT_READ | PROT_WRITE, MAP_SHARED);
	if (ret)
		goto put_file;
	ret = -EINTR;
	if (mmap_write_lock_killable(mm))
		goto put_file;
	if (replace) {
		old = sframe_index_exact(sframe_mm_locked(mm), args->text_start,
					 args->text_end);
		ret = -ENOENT;
		if (!old || old->kind != SFRAME_REGION_JIT)
			goto unlock;
		ret = -EINVAL;
		if (reg->fde_cap < old->jit->fde_cap ||
		    reg->fre_cap < old->jit->fre_cap)
			goto unlock;
	}
	ret = sframe_jit_install(mm, reg, file, r, old);
	if (!IS_ERR_VALUE(ret))
		r = NULL;
unlock:
	mmap_write_unlock(mm);
put_file:
	fput(file);
free_region:
	kfree(r);
put_reg:
	sframe_jit_put_sync(reg);
	return ret;
}

/* Is all of [start, end) mapped executable?  Caller holds mmap lock. */
static bool sframe_text_is_exec(struct mm_struct *mm, unsigned long start,
				unsigned long end)
{
	VMA_ITERATOR(vmi, mm, start);
	struct vm_area_struct *vma;
	unsigned long next = start;

	for_each_vma_range(vmi, vma, end) {
		if (vma->vm_start > next || !(vma->vm_flags & VM_EXEC))
			return false;
		next = vma->vm_end;
		if (next >= end)
			return true;
	}
	return false;
}

/* Copy and validate a section from the current process's memory. */
static struct sframe_elf_copy *sframe_elf_load(unsigned long addr,
					       unsigned long size)
{
	struct sframe_elf_copy *elf;
	int err;

	elf = kvmalloc(struct_size(elf, data, size), GFP_KERNEL_ACCOUNT);
	if (!elf)
		return ERR_PTR(-ENOMEM);
	err = -EFAULT;
	if (copy_from_user(elf->data, (const void __user *)addr, size))
		goto free;
	err = sframe_sec_init(&elf->sec, elf->data, size, addr);
	if (!err)
		err = sframe_sec_validate(&elf->sec);
	if (err)
		goto free;
	refcount_set(&elf->ref, 1);
	return elf;
free:
	kvfree(elf);
	return ERR_PTR(err);
}

static int sframe_add_elf(struct mm_struct *mm, unsigned long sec_addr,
			  unsigned long sec_size, unsigned long start,
			  unsigned long end)
{
	struct sframe_elf_copy *elf;
	struct sframe_region *r;
	struct sframe_mm *smm;
	int err;

	if (!sframe_range_ok(start, end))
		return -EINVAL;
	if (sec_size < SFRAME_HDR_SIZE || sec_size > SFRAME_ELF_MAX_SIZE)
		return -EINVAL;
	elf = sframe_elf_load(sec_addr, sec_size);
	if (IS_ERR(elf))
		return PTR_ERR(elf);
	err = -ENOMEM;
	r = sframe_region_new(start, end);
	if (!r)
		goto put_elf;
	r->kind = SFRAME_REGION_ELF;
	r->elf = elf;

	err = -EINTR;
	if (mmap_write_lock_killable(mm))
		goto free_region;
	err = -EACCES;
	if (!sframe_text_is_exec(mm, start, end))
		goto unlock;
	err = -ENOMEM;
	smm = sframe_mm_get(mm);
	if (!smm)
		goto unlock;
	err = sframe_index_check(smm, start, end);
	if (!err)
		err = sframe_index_insert(smm, r);
unlock:
	mmap_write_unlock(mm);
	if (!err)
		return 0;
free_region:
	kfree(r);
put_elf:
	sframe_elf_put(elf);
	return err;
}

/**
 * sframe_register_elf_exec() - register an ELF object's .sframe at exec
 * @mm: the new process image, whose mappings hold the object.
 * @sec_addr: where the PT_GNU_SFRAME segment is mapped.
 * @sec_size: its size.
 * @text_start: start of the object's executable segments.
 * @text_end: their end.
 *
 * Called by binfmt_elf for the executable and its interpreter, from the
 * exec'ing task.  The caller ignores failures: a malformed table must
 * not fail the exec.
 *
 * Return: 0 or a negative errno as for SFRAME_REGISTER_ELF.
 */
int sframe_register_elf_exec(struct mm_struct *mm, unsigned long sec_addr,
			     unsigned long sec_size, unsigned long text_start,
			     unsigned long text_end)
{
	return sframe_add_elf(mm, sec_addr, sec_size, text_start, text_end);
}

static int sframe_unregister(const struct sframe_unregister_args *args)
{
	struct mm_struct *mm = current->mm;
	struct sframe_region *r;
	int err = -ENOENT;

	if (args->flags)
		return -EINVAL;
	if (!sframe_range_ok(args->text_start, args->text_end))
		return -EINVAL;
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	r = sframe_index_exact(sframe_mm_locked(mm), args->text_start,
			       args->text_end);
	if (r) {
		if (r->kind == SFRAME_REGION_JIT)
			sframe_jit_orphan(mm, r->jit);
		sframe_index_remove(mm, r);
		err = 0;
	}
	mmap_write_unlock(mm);
	return err;
}

/* The size-versioned argument convention of clone3() and openat2(). */
static int sframe_copy_args(void *dst, size_t ksize, const void __user *src,
			    size_t usize, size_t ver0)
{
	if (usize < ver0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(dst, ksize, src, usize);
}

SYSCALL_DEFINE3(sframe_register, unsigned int, op, void __user *, uargs,
		size_t, usize)
{
	union {
		struct sframe_jit_args jit;
		struct sframe_elf_args elf;
		struct sframe_unregister_args unreg;
	} a;
	int err;

	switch (op) {
	case SFRAME_REGISTER_JIT:
	case SFRAME_REPLACE_JIT:
		err = sframe_copy_args(&a.jit, sizeof(a.jit), uargs, usize,
				       SFRAME_JIT_ARGS_SIZE_VER0);
		if (err)
			return err;
		return sframe_register_jit(&a.jit, op == SFRAME_REPLACE_JIT);
	case SFRAME_REGISTER_ELF:
		err = sframe_copy_args(&a.elf, sizeof(a.elf), uargs, usize,
				       SFRAME_ELF_ARGS_SIZE_VER0);
		if (err)
			return err;
		if (a.elf.flags)
			return -EINVAL;
		return sframe_add_elf(current->mm, a.elf.sframe_addr,
				      a.elf.sframe_size, a.elf.text_start,
				      a.elf.text_end);
	case SFRAME_UNREGISTER:
		err = sframe_copy_args(&a.unreg, sizeof(a.unreg), uargs, usize,
				       SFRAME_UNREGISTER_ARGS_SIZE_VER0);
		if (err)
			return err;
		return sframe_unregister(&a.unreg);
	default:
		return -EINVAL;
	}
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
 * fork: point the child's mapping of a registry at a copy of its pages,
 * at the same address, and register the copy if the parent's registry
 * is registered.  A mapping that is no longer registered (left behind by
 * SFRAME_UNREGISTER or SFRAME_REPLACE_JIT and inherited despite
 * VM_DONTCOPY, through MADV_DOFORK) gets a copy too: the two processes
 * never share registry pages.
 */
static int sframe_fork_jit(struct mm_struct *mm, struct sframe_mm *smm,
			   struct vm_area_struct *vma)
{
	struct sframe_jit_reg *old = vma->vm_private_data, *reg;
	struct sframe_region *nr;
	struct file *file;
	int err;

	reg = sframe_jit_alloc(mm, old->text_start, old->text_end,
			       old->fde_cap, old->fre_cap, false);
	if (IS_ERR(reg))
		return PTR_ERR(reg);
	memcpy(reg->base, old->base, reg->size);
	file = sframe_jit_file(reg);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto put_reg;
	}
	if (old->region) {
		err = -ENOMEM;
		nr = sframe_region_new(old->region->start, old->region->end);
		if (!nr)
			goto put_file;
		nr->kind = SFRAME_REGION_JIT;
		nr->jit = reg;
		err = sframe_index_insert(smm, nr);
		if (err) {
			kfree(nr);
			goto put_file;
		}
		reg->region = nr;
		/* The creation reference is the index's. */
		refcount_inc(&reg->ref);
	}
	/* The child's mapping is the one mapping its file allows. */
	reg->mapped = true;
	reg->mm = mm;
	reg->uaddr = vma->vm_start;
	sframe_jit_swap_file(vma, file);
	vma->vm_private_data = reg;
	sframe_jit_put(old);
	/* The mapping holds the creation reference, or the one above. */
	return 0;

put_file:
	fput(file);
put_reg:
	sframe_jit_put_sync(reg);
	return err;
}

static int sframe_fork_elf(struct sframe_mm *smm, const struct sframe_region *r)
{
	struct sframe_region *nr = sframe_region_new(r->start, r->end);
	int err;

	if (!nr)
		return -ENOMEM;
	nr->kind = SFRAME_REGION_ELF;
	nr->elf = r->elf;
	refcount_inc(&nr->elf->ref);
	err = sframe_index_insert(smm, nr);
	if (err) {
		sframe_elf_put(nr->elf);
		kfree(nr);
	}
	return err;
}

/**
 * sframe_mm_fork() - copy a process's registrations into its child
 * @oldmm: the parent's mm.
 * @mm: the child's mm, whose mappings dup_mmap() has just copied.
 *
 * Called by dup_mmap() with both mmap locks held for writing.  Every JIT
 * registry the child maps gets its own copy of the pages at the same
 * address, registered if the parent's is; ELF registrations share the
 * parent's immutable copy.
 *
 * Return: 0 or -ENOMEM, which fails the fork.
 */
int sframe_mm_fork(struct mm_struct *oldmm, struct mm_struct *mm)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct sframe_mm *old = sframe_mm_locked(oldmm), *smm;
	struct vm_area_struct *vma;
	struct sframe_region *r;
	unsigned long index = 0;
	int err;

	/* A process that never registered anything maps no registry. */
	if (!old)
		return 0;
	smm = sframe_mm_get(mm);
	if (!smm)
		return -ENOMEM;
	for_each_vma(vmi, vma) {
		if (vma->vm_ops != &sframe_jit_vm_ops)
			continue;
		err = sframe_fork_jit(mm, smm, vma);
		if (err)
			return err;
	}
	mt_for_each(&old->index, r, index, ULONG_MAX) {
		if (r->kind != SFRAME_REGION_ELF)
			continue;
		err = sframe_fork_elf(smm, r);
		if (err)
			return err;
	}
	return 0;
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
	mt_for_each(&smm->index, r, index, ULONG_MAX)
		sframe_region_detach(r);
	RCU_INIT_POINTER(mm->sframe, NULL);
	mtree_destroy(&smm->index);
	kfree_rcu(smm, rcu);
}

/**
 * sframe_region_lookup() - find the registration covering an address
 * @mm: the process.
 * @addr: a user address.
 *
 * Safe in NMI context.  The caller holds rcu_read_lock() for as long as
 * it uses the result.
 *
 * Return: the entry, or NULL if no registration covers @addr.
 */
struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr)
{
	struct sframe_mm *smm = rcu_dereference(mm->sframe);

	return smm ? mtree_load(&smm->index, addr) : NULL;
}

/* The kernel's counters in the registry's header: approximate by design. */
static void sframe_jit_count(const struct sframe_jit_reg *reg,
			     enum sframe_find_result res)
{
	struct sframe_jit_stats *st = &((struct sframe_jit_header *)reg->base)->stats;
	__u64 *c = NULL;

	WRITE_ONCE(st->lookups, READ_ONCE(st->lookups) + 1);
	switch (res) {
	case SFRAME_FIND_HIT:
		c = &st->hits;
		break;
	case SFRAME_FIND_TOMBSTONE:
		c = &st->tombstone_hits;
		break;
	case SFRAME_FIND_RETRY:
		c = &st->seq_retries;
		break;
	case SFRAME_FIND_MALFORMED:
		c = &st->malformed;
		break;
	case SFRAME_FIND_NONE:
		break;
	}
	if (c)
		WRITE_ONCE(*c, READ_ONCE(*c) + 1);
}

/**
 * sframe_region_find() - the frame row of a registered region for a PC
 * @r: an entry found by sframe_region_lookup(), under the same RCU read
 *	section.
 * @pc: the address to look up.
 * @row: filled in on a hit.
 *
 * Safe in NMI context: a JIT registry is read through the kernel's
 * mapping with the layout the kernel keeps privately, and its counters
 * are updated; an ELF section is read from the kernel's copy.
 *
 * Return: an enum sframe_find_result.
 */
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row)
{
	const struct sframe_jit_reg *reg;
	struct sframe_jit_view v;
	enum sframe_find_result res;

	if (r->kind == SFRAME_REGION_ELF)
		return sframe_sec_find(&r->elf->sec, pc, row);
	reg = r->jit;
	v = (struct sframe_jit_view){
		.base = reg->base,
		.fde_off = reg->fde_off,
		.fde_cap = reg->fde_cap,
		.fre_off = reg->fre_off,
		.fre_cap = reg->fre_cap,
		.text_start = reg->text_start,
		.text_end = reg->text_end,
	};
	res = sframe_jit_find(&v, pc, row);
	sframe_jit_count(reg, res);
	return res;
}
