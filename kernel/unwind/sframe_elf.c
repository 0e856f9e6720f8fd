// SPDX-License-Identifier: GPL-2.0
/*
 * Validated private copies of ELF .sframe sections.  The unwinder may
 * not fault in NMI context and a process seldom touches its own .sframe
 * pages, so it reads the kernel's copy, never the process's section,
 * converted into a table of bounded lookups (sframe_table_build()).
 * The copy is immutable once made: forked children share it.
 */
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sframe_internal.h"

/* Convert a validated copy for lookups of bounded work (sframe.h). */
static int sframe_elf_convert(struct sframe_elf_copy *elf)
{
	size_t size;
	int err;

	err = sframe_table_size(&elf->sec, &size);
	if (err)
		return err;
	elf->table = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!elf->table)
		return -ENOMEM;
	err = sframe_table_build(&elf->sec, elf->table, size);
	if (err) {
		kvfree(elf->table);
		elf->table = NULL;
	}
	return err;
}

/**
 * sframe_elf_load() - copy, validate and convert a section
 * @addr: where the section is in the current process's memory.
 * @size: its size, which the caller has bounded.
 *
 * Return: the copy, holding one reference, or an ERR_PTR: -EFAULT, or
 * the section's errors as sframe_sec_init() and sframe_sec_validate()
 * find them, or -E2BIG and -ENOMEM from its conversion into a table.
 */
struct sframe_elf_copy *sframe_elf_load(unsigned long addr,
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
	err = sframe_elf_convert(elf);
	if (err)
		goto free;
	refcount_set(&elf->ref, 1);
	return elf;
free:
	kvfree(elf);
	return ERR_PTR(err);
}

/**
 * sframe_elf_put() - drop a reference to a section copy
 * @elf: the copy.
 */
void sframe_elf_put(struct sframe_elf_copy *elf)
{
	if (!refcount_dec_and_test(&elf->ref))
		return;
	kvfree(elf->table);
	kvfree(elf);
}
