// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_register(2) and sframe_unregister(2): a dynamic loader
 * registers the .sframe section of an object it mapped, in the form the
 * calls proposed for loaders take (struct sframe_setup).  The call
 * checks its arguments, makes or finds the section copy (sframe_elf.c),
 * and publishes it in the process's index (sframe_mm.c) under the mmap
 * lock.  binfmt_elf registers the executable's and the interpreter's
 * sections at exec, by default with no copy yet: the copy is made when
 * a sample first needs it (sframe_exec.c).
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/cred.h>
#include <linux/mm.h>
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

/**
 * sframe_elf_key() - where a section is mapped from, for sharing
 * @mm: the process.
 * @addr: the section's address in @mm.
 * @size: its size.
 * @key: the file, offset and current user, if found.
 *
 * Processes of one user that map the same section of the same file may
 * share one copy of it.  Takes @mm's mmap lock for reading.
 *
 * Return: true if one mapping of a file holds the whole section.
 */
bool sframe_elf_key(struct mm_struct *mm, unsigned long addr,
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
		key->text = false;
		found = true;
	}
	mmap_read_unlock(mm);
	return found;
}

/*
 * What a registration of [@start, @end) would be refused for, checked
 * under the read lock before the section is read or anything is
 * allocated or charged for it; the write lock checks again.
 */
static int sframe_add_precheck(struct mm_struct *mm, unsigned long start,
			       unsigned long end, bool agent)
{
	struct sframe_mm *smm;
	int err = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	if (!sframe_text_is_exec(mm, start, end))
		err = -EACCES;
	smm = sframe_mm_locked(mm);
	if (!err && smm)
		err = sframe_index_check(smm, start, end, !agent);
	mmap_read_unlock(mm);
	return err;
}

/*
 * Publish @r for [@start, @end) under the write lock, with the checks of
 * sframe_add_precheck() made again: another thread may have changed the
 * mappings or the index meanwhile.  On failure @r is the caller's.
 */
static int sframe_add_region(struct mm_struct *mm, struct sframe_region *r)
{
	struct sframe_mm *smm;
	int err;

	if (mmap_write_lock_killable(mm))
		return -EINTR;
	err = -EACCES;
	if (!sframe_text_is_exec(mm, r->start, r->end))
		goto unlock;
	err = -ENOMEM;
	smm = sframe_mm_get(mm);
	if (!smm)
		goto unlock;
	err = sframe_index_check(smm, r->start, r->end,
				 !test_bit(SFRAME_REGION_F_AGENT, &r->flags));
	if (!err)
		err = sframe_index_insert(smm, r);
unlock:
	mmap_write_unlock(mm);
	return err;
}

/**
 * sframe_elf_args_ok() - are a section's size and a code range possible?
 * @size: the section's size.
 * @start: the range's first byte.
 * @end: its end (exclusive).
 *
 * Return: true if a registration may be tried.
 */
bool sframe_elf_args_ok(unsigned long size, unsigned long start,
			unsigned long end)
{
	return sframe_range_ok(start, end) && size >= SFRAME_HDR_SIZE &&
	       size <= SFRAME_MAX_SIZE;
}

/**
 * sframe_add_elf_to() - register an ELF section for a code range of @mm
 * @mm: the process the range belongs to: the caller's, or, for an agent,
 *	another whose mm the caller holds.
 * @a: the section, read from the caller's memory, and the range.
 *
 * Checks what would refuse the registration before the section is read,
 * then takes a copy (sframe_elf_get(), charged to the caller) and
 * publishes it.
 *
 * Return: 0 or a negative errno as for sframe_register(2).
 */
int sframe_add_elf_to(struct mm_struct *mm, const struct sframe_elf_args *a)
{
	struct sframe_elf_copy *elf;
	struct sframe_region *r;
	int err;

	if (!sframe_elf_args_ok(a->size, a->start, a->end))
		return -EINVAL;
	err = sframe_add_precheck(mm, a->start, a->end, a->agent);
	if (err)
		return err;
	elf = sframe_elf_get(a->src, a->base, a->size, a->key);
	if (PTR_ERR(elf) == -EDQUOT)
		return -ENOMEM;
	if (IS_ERR(elf))
		return PTR_ERR(elf);
	err = -ENOMEM;
	r = sframe_region_new(a->start, a->end);
	if (!r)
		goto put_elf;
	r->kind = SFRAME_REGION_ELF;
	r->elf = elf;
	r->bias = a->base - elf->sec.base;
	if (a->agent)
		__set_bit(SFRAME_REGION_F_AGENT, &r->flags);
	err = sframe_add_region(mm, r);
	if (!err)
		return 0;
	kfree(r);
put_elf:
	sframe_elf_put(elf);
	return err;
}

/* A process registers a section of its own memory for its own code. */
static int sframe_add_elf(struct mm_struct *mm, unsigned long sec_addr,
			  unsigned long sec_size, unsigned long start,
			  unsigned long end)
{
	struct sframe_elf_args a = {
		.src = sec_addr, .base = sec_addr, .size = sec_size,
		.start = start, .end = end,
	};
	struct sframe_elf_key key;

	if (!sframe_elf_args_ok(sec_size, start, end))
		return -EINVAL;
	if (sframe_elf_key(mm, sec_addr, sec_size, &key))
		a.key = &key;
	return sframe_add_elf_to(mm, &a);
}

/*
 * At exec, by default: an entry for the section with no table yet,
 * whose table a sample builds when it first meets the range
 * (sframe_exec.c).  Nothing is copied, validated or charged here, so
 * that exec costs what it did without the series; the range is taken,
 * as a loader's registration of it would find.
 */
static int sframe_add_elf_exec(struct mm_struct *mm, unsigned long sec_addr,
			       unsigned long sec_size, unsigned long start,
			       unsigned long end)
{
	struct sframe_region *r;
	int err;

	if (!sframe_elf_args_ok(sec_size, start, end))
		return -EINVAL;
	err = sframe_add_precheck(mm, start, end, false);
	if (err)
		return err;
	r = sframe_region_new(start, end);
	if (!r)
		return -ENOMEM;
	r->kind = SFRAME_REGION_ELF;
	r->sec_addr = sec_addr;
	r->sec_size = sec_size;
	r->cred = get_current_cred();
	err = sframe_add_region(mm, r);
	if (err) {
		put_cred(r->cred);
		kfree(r);
	}
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
 * not fail the exec.  The table is built when a sample first needs it,
 * or here with kernel.sframe_exec_eager set.
 *
 * Return: 0 or a negative errno as for sframe_register(2).
 */
int sframe_register_elf_exec(struct mm_struct *mm, unsigned long sec_addr,
			     unsigned long sec_size, unsigned long text_start,
			     unsigned long text_end)
{
	if (sframe_exec_eager())
		return sframe_add_elf(mm, sec_addr, sec_size, text_start,
				      text_end);
	return sframe_add_elf_exec(mm, sec_addr, sec_size, text_start,
				   text_end);
}

/* Where the process that registered @r has the section. */
static unsigned long sframe_region_section(const struct sframe_region *r)
{
	if (!r->elf)
		return r->sec_addr;
	return r->elf->sec.base + r->bias;
}

/*
 * The ELF registration of the section at @addr.  The index is keyed by
 * code range, so this walks it: at most kernel.sframe_max_registrations
 * entries, under the mmap lock, in a call a loader makes at dlclose().
 * An agent's entries are not the process's to remove.
 */
static struct sframe_region *sframe_find_section(struct sframe_mm *smm,
						 unsigned long addr)
{
	struct sframe_region *r;
	unsigned long index = 0;

	if (!smm)
		return NULL;
	mt_for_each(&smm->index, r, index, ULONG_MAX) {
		if (r->kind == SFRAME_REGION_ELF &&
		    !test_bit(SFRAME_REGION_F_AGENT, &r->flags) &&
		    sframe_region_section(r) == addr)
			return r;
	}
	return NULL;
}

/*
 * The loader calls take the sizes of the structure versions they know,
 * and no other: a newer structure on an older kernel is refused, for
 * the caller to fall back.
 */
static int sframe_copy_setup(struct sframe_setup *setup,
			     const struct sframe_setup __user *usetup,
			     size_t usize)
{
	if (usize != SFRAME_SETUP_SIZE_VER0)
		return -EINVAL;
	if (copy_from_user(setup, usetup, sizeof(*setup)))
		return -EFAULT;
	return 0;
}

SYSCALL_DEFINE2(sframe_register, struct sframe_setup __user *, usetup,
		size_t, usize)
{
	struct sframe_setup s;
	int err;

	err = sframe_copy_setup(&s, usetup, usize);
	if (err)
		return err;
	if (s.text_size > TASK_SIZE || s.sframe_start > TASK_SIZE)
		return -EINVAL;
	return sframe_add_elf(current->mm, s.sframe_start, s.sframe_size,
			      s.text_start, s.text_start + s.text_size);
}

/* A registration is named by its section's address alone. */
SYSCALL_DEFINE2(sframe_unregister, struct sframe_setup __user *, usetup,
		size_t, usize)
{
	struct mm_struct *mm = current->mm;
	struct sframe_region *r;
	struct sframe_setup s;
	int err;

	err = sframe_copy_setup(&s, usetup, usize);
	if (err)
		return err;
	if (!s.sframe_start || s.sframe_size || s.text_start || s.text_size)
		return -EINVAL;
	if (mmap_write_lock_killable(mm))
		return -EINTR;
	r = sframe_find_section(sframe_mm_locked(mm), s.sframe_start);
	err = -ENOENT;
	if (r) {
		sframe_index_remove(mm, r);
		err = 0;
	}
	mmap_write_unlock(mm);
	return err;
}
