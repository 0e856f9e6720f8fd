/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_SFRAME_H
#define _UAPI_LINUX_SFRAME_H

/*
 * sframe_register(2) and sframe_unregister(2): a dynamic loader tells the
 * kernel where the .sframe section of an object it mapped lies, so that
 * the user stack unwinder walks the object's code without frame pointers.
 *
 *	int sframe_register(struct sframe_setup *setup, size_t size);
 *	int sframe_unregister(struct sframe_setup *setup, size_t size);
 *
 * These are the calls proposed for loaders on the list ("unwind: Add
 * sframe_(un)register() system calls", v2 of 2026-05-28), in their
 * form: @size must be the size of a structure version the kernel knows
 * (EINVAL otherwise), and a registration is removed by the address of
 * its section alone, the other fields zero.
 *
 * process_sframe_register(2) and process_sframe_unregister(2): an agent
 * with ptrace rights over a process registers, and removes, a table it
 * holds for a code range of that process, named by a pidfd.
 *
 *	int process_sframe_register(int pidfd,
 *				    struct sframe_process_setup *setup,
 *				    size_t size, unsigned int flags);
 *	int process_sframe_unregister(int pidfd,
 *				      struct sframe_process_setup *setup,
 *				      size_t size, unsigned int flags);
 *
 * Documentation/userspace-api/sframe.rst is the full description.
 */

#include <linux/types.h>

/**
 * struct sframe_setup - an object's .sframe section and the code it covers
 * @sframe_start: address of the section in the caller's memory.
 * @sframe_size: its size in bytes, at most SFRAME_MAX_SIZE.
 * @text_start: first byte of the code the section describes.
 * @text_size: bytes of that code, at least 1; the range must end at or
 *	below TASK_SIZE and be mapped executable.
 *
 * sframe_register() validates the section and keeps a private copy of
 * it, so the caller may unmap or change the section afterwards without
 * effect.  A section that is not well formed, one whose functions
 * overlap included, is refused with ENOEXEC.  Only PCs inside the text
 * range are looked up in the section.
 */
struct sframe_setup {
	__u64 sframe_start;
	__u64 sframe_size;
	__u64 text_start;
	__u64 text_size;
};

#define SFRAME_SETUP_SIZE_VER0	32

/**
 * struct sframe_process_setup - a table an agent registers for a process
 * @sframe_start: address of an SFrame section in the caller's memory.
 * @sframe_size: its size in bytes, at most SFRAME_MAX_SIZE.
 * @sframe_addr: the address, in the target process, that the section's
 *	function starts are relative to: where the section would be if it
 *	lay beside the code it describes.
 * @text_start: first byte of the code in the target process.
 * @text_size: bytes of that code, at least 1; the range must end at or
 *	below TASK_SIZE and be mapped executable in the target.
 * @flags: none are defined; must be 0.
 *
 * The argument of process_sframe_register(2) and
 * process_sframe_unregister(2), which take its size: a caller built
 * against a later version passes a larger structure, whose further
 * bytes must be zero on a kernel that does not know them (E2BIG
 * otherwise).  Unregistration names the range by @text_start and
 * @text_size, the other fields zero.
 */
struct sframe_process_setup {
	__u64 sframe_start;
	__u64 sframe_size;
	__u64 sframe_addr;
	__u64 text_start;
	__u64 text_size;
	__u64 flags;
};

#define SFRAME_PROCESS_SETUP_SIZE_VER0	48

/* Largest .sframe section accepted. */
#define SFRAME_MAX_SIZE		(64U << 20)

#endif /* _UAPI_LINUX_SFRAME_H */
