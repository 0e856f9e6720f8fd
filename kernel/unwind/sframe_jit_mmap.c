// SPDX-License-Identifier: GPL-2.0
/*
 * The mapping of a JIT registry, the mm side of sframe_jit.c: the
 * process maps the registry's file once, in its own address space,
 * through ->fault(), as perf maps its ring buffer.  It is set up with
 * the flags mm has and nothing else: VM_DONTCOPY, so that fork gives a
 * child neither the mapping nor the registration; VM_DONTEXPAND, with
 * ->may_split() and ->mremap() refusing, so that it neither grows,
 * splits nor moves; VM_MAYEXEC cleared.  Its munmap ends the
 * registration.  No VMA is edited here but the one being set up.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>

#include "sframe_internal.h"

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

	refcount_inc(&reg->ref);
}

static void sframe_jit_vm_close(struct vm_area_struct *vma)
{
	struct sframe_jit_reg *reg = vma->vm_private_data;

	/*
	 * Only the registry's own mapping in its own process unregisters
	 * it: not the copy mremap() makes and we refuse, not the mapping a
	 * child got because its parent cleared VM_DONTCOPY (MADV_DOFORK).
	 */
	if (reg->region && vma->vm_mm == reg->mm && vma->vm_start == reg->uaddr)
		sframe_index_remove(vma->vm_mm, reg->region);
	/*
	 * With no descriptor left, this mapping's reference is the file's
	 * last: nothing can reach the registry again, and its charge goes
	 * now rather than when the file's release runs, which at exec is
	 * after binfmt_elf has charged the new image's tables.
	 */
	if (!reg->region && file_count(vma->vm_file) == 1)
		sframe_jit_uncharge(reg);
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
 * sframe_jit_get_unmapped_area() - admit a registry's one mapping
 * @file: the registry's file.
 * @addr: the address asked for.
 * @len: the length; the registry's whole size.
 * @pgoff: the offset; 0.
 * @flags: the mmap flags; MAP_SHARED.
 *
 * A registry is mapped once, by the process it was made for.  Every way
 * to map a file runs through here first, before anything is unmapped:
 * mmap() of the descriptor, in that process or in one it was passed to,
 * and remap_file_pages() on the mapping.  Refusing here keeps the
 * mapping, its contents and its registration as they were.  Called with
 * the mmap lock held for writing, as ->mmap() is.
 *
 * Return: the address to map at; -EACCES in another process, -EBUSY if
 * the registry is mapped already, -EINVAL for any other offset, length
 * or a private mapping.
 */
unsigned long sframe_jit_get_unmapped_area(struct file *file,
					   unsigned long addr, unsigned long len,
					   unsigned long pgoff, unsigned long flags)
{
	struct sframe_jit_reg *reg = file->private_data;

	if (current->mm != reg->mm)
		return -EACCES;
	if (reg->mapped)
		return -EBUSY;
	if (pgoff || len != reg->size || !(flags & MAP_SHARED))
		return -EINVAL;
	return mm_get_unmapped_area(current->mm, file, addr, len, pgoff, flags);
}

/**
 * sframe_jit_mmap() - set up the VMA of a registry's mapping
 * @file: the registry's file.
 * @vma: the mapping, which sframe_jit_get_unmapped_area() admitted.
 *
 * Kept to setting up the VMA, so that a port to ->mmap_prepare() moves
 * these lines and nothing else.  The mapping is never executable, never
 * grows, and is not inherited.
 *
 * Return: 0; -EPERM for an executable mapping.
 */
int sframe_jit_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct sframe_jit_reg *reg = file->private_data;

	if (WARN_ON_ONCE(reg->mapped) || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	reg->mapped = true;
	reg->uaddr = vma->vm_start;
	vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTCOPY, VM_MAYEXEC);
	vma->vm_ops = &sframe_jit_vm_ops;
	vma->vm_private_data = reg;
	refcount_inc(&reg->ref);
	return 0;
}
