// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_register(2): registration of user unwind tables.  The call
 * checks its arguments, makes the registry (sframe_jit.c) or the section
 * copy (sframe_elf.c), and publishes it in the process's index
 * (sframe_mm.c) under the mmap lock.  binfmt_elf registers the
 * executable's and the interpreter's sections at exec the same way.
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/security.h>
#include <linux/sframe_register.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <uapi/linux/sframe.h>

#include "sframe_internal.h"

static bool sframe_range_ok(u64 start, u64 end)
{
	return start < end && end <= TASK_SIZE;
}

/*
 * JIT registries: SFRAME_REGISTER_JIT makes one, SFRAME_REPLACE_JIT a
 * larger one of the same kind for the same range.
 *
 * A compact registry needs rules, at most as many as a row's 16-bit
 * index can name, and a range that its descriptors' 32-bit offsets can
 * span; a version 1 registry has no rule area, and a rule capacity for
 * it is a mistake the caller should hear of.
 */
static int sframe_check_jit_rules(const struct sframe_jit_args *args)
{
	if (!(args->flags & SFRAME_JIT_F_COMPACT))
		return args->rule_capacity ? -EINVAL : 0;
	if (!args->rule_capacity || args->rule_capacity > SFRAME_JIT_MAX_RULES)
		return -EINVAL;
	if (args->text_end - args->text_start > (1ULL << 32))
		return -EINVAL;
	return 0;
}

static int sframe_check_jit_args(const struct sframe_jit_args *args)
{
	if (args->flags & ~(SFRAME_JIT_F_COMPACT | SFRAME_JIT_F_STATS))
		return -EINVAL;
	if (!sframe_range_ok(args->text_start, args->text_end))
		return -EINVAL;
	if (!args->fde_capacity || args->fde_capacity > SFRAME_JIT_MAX_FDES ||
	    !args->fre_capacity || args->fre_capacity > SFRAME_JIT_MAX_FRES)
		return -EINVAL;
	return sframe_check_jit_rules(args);
}

/*
 * SFRAME_REPLACE_JIT: @new must be of @old's kind, as the records are
 * copied as they are, and hold at least what @old holds in every area.
 */
static bool sframe_jit_can_replace(const struct sframe_jit_view *new,
				   const struct sframe_jit_view *old)
{
	return new->compact == old->compact &&
	       new->fde_cap >= old->fde_cap && new->fre_cap >= old->fre_cap &&
	       new->rule_cap >= old->rule_cap;
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
		err = sframe_index_check(smm, reg->view.text_start,
					 reg->view.text_end);
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
	reg->published = true;
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
	reg = sframe_jit_alloc(mm, &(struct sframe_jit_view){
		.text_start = args->text_start,
		.text_end = args->text_end,
		.compact = args->flags & SFRAME_JIT_F_COMPACT,
		.stats = args->flags & SFRAME_JIT_F_STATS,
		.fde_cap = args->fde_capacity,
		.fre_cap = args->fre_capacity,
		.rule_cap = args->rule_capacity,
	});
	if (PTR_ERR(reg) == -EDQUOT)
		return -ENOMEM;
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
		if (!sframe_jit_can_replace(&reg->view, &old->jit->view))
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

/*
 * The file and offset the section at @addr is mapped from, if one
 * mapping of a file holds all of it: processes that map the same
 * section may share one copy of it.
 */
static bool sframe_elf_key(struct mm_struct *mm, unsigned long addr,
			   unsigned long size, struct sframe_elf_key *key)
{
	struct vm_area_struct *vma;
	bool found = false;

	if (mmap_read_lock_killable(mm))
		return false;
	vma = vma_lookup(mm, addr);
	if (vma && vma->vm_file && size <= vma->vm_end - addr) {
		key->inode = file_inode(vma->vm_file);
		key->pos = ((u64)vma->vm_pgoff << PAGE_SHIFT) +
			   (addr - vma->vm_start);
		key->user = current_user();
		found = true;
	}
	mmap_read_unlock(mm);
	return found;
}

static int sframe_add_elf(struct mm_struct *mm, unsigned long sec_addr,
			  unsigned long sec_size, unsigned long start,
			  unsigned long end)
{
	struct sframe_elf_copy *elf;
	struct sframe_elf_key key;
	struct sframe_region *r;
	struct sframe_mm *smm;
	bool keyed;
	int err;

	if (!sframe_range_ok(start, end))
		return -EINVAL;
	if (sec_size < SFRAME_HDR_SIZE || sec_size > SFRAME_ELF_MAX_SIZE)
		return -EINVAL;
	keyed = sframe_elf_key(mm, sec_addr, sec_size, &key);
	elf = sframe_elf_get(sec_addr, sec_size, keyed ? &key : NULL);
	if (PTR_ERR(elf) == -EDQUOT)
		return -ENOMEM;
	if (IS_ERR(elf))
		return PTR_ERR(elf);
	err = -ENOMEM;
	r = sframe_region_new(start, end);
	if (!r)
		goto put_elf;
	r->kind = SFRAME_REGION_ELF;
	r->elf = elf;
	r->bias = sec_addr - elf->sec.base;

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
		/* A child no longer inherits the registry's mapping. */
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
		struct sframe_elf_args elf;
		struct sframe_unregister_args unreg;
		struct sframe_jit_args jit;
	} a;
	int err;

	switch (op) {
	case SFRAME_REGISTER_ELF:
		err = sframe_copy_args(&a.elf, sizeof(a.elf), uargs, usize,
				       SFRAME_ELF_ARGS_SIZE_VER0);
		if (err)
			return err;
		if (a.elf.text_size > TASK_SIZE)
			return -EINVAL;
		return sframe_add_elf(current->mm, a.elf.sframe_start,
				      a.elf.sframe_size, a.elf.text_start,
				      a.elf.text_start + a.elf.text_size);
	case SFRAME_UNREGISTER:
		err = sframe_copy_args(&a.unreg, sizeof(a.unreg), uargs, usize,
				       SFRAME_UNREGISTER_ARGS_SIZE_VER0);
		if (err)
			return err;
		return sframe_unregister(&a.unreg);
	/* JIT registries: sframe_register_jit(). */
	case SFRAME_REGISTER_JIT:
	case SFRAME_REPLACE_JIT:
		err = sframe_copy_args(&a.jit, sizeof(a.jit), uargs, usize,
				       SFRAME_JIT_ARGS_SIZE_VER0);
		if (err)
			return err;
		return sframe_register_jit(&a.jit, op == SFRAME_REPLACE_JIT);
	default:
		return -EINVAL;
	}
}
