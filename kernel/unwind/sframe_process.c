// SPDX-License-Identifier: GPL-2.0
/*
 * process_sframe_register(2) and process_sframe_unregister(2): an agent
 * gives tables to the code of another process, named by a pidfd, so that
 * a process already running, or every process of a machine, is unwound
 * without anything injected into it.
 *
 * The caller needs the rights process_vm_writev(2) needs over the
 * target (PTRACE_MODE_ATTACH_REALCREDS): it could write the process's
 * memory, and a table can only mislead the process's own stack traces.
 * The table is an SFrame section in the caller's memory; the kernel
 * keeps a validated copy of it, as sframe_register(2) does, charged to
 * the caller, and shares it between the processes that map the same
 * code of the same file when the caller hands the same bytes for it
 * (sframe_elf.c): an agent that converts each file once gives one copy
 * to all the processes that run it.
 *
 * An agent's entry is an ELF entry of the target's index with
 * SFRAME_REGION_F_AGENT set.  fork gives it to the child, as the
 * mapping it describes; exec and exit drop it.  The process's own
 * sframe_unregister(2) does not remove it, and the process's own
 * registration of a range that holds it whole replaces it
 * (sframe_index_insert()); an agent never replaces what the process
 * registered: it gets EEXIST.
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <uapi/linux/sframe.h>

#include "sframe_internal.h"

/*
 * The arguments both calls take: no flag is defined, and the structure
 * is extensible as clone3(2)'s, bytes past the one this kernel knows
 * zero.
 */
static int sframe_process_copy(struct sframe_process_setup *s,
			       const struct sframe_process_setup __user *u,
			       size_t usize, unsigned int flags)
{
	if (flags || usize < SFRAME_PROCESS_SETUP_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(s, sizeof(*s), u, usize);
}

/* The target's mm, with a reference, if the caller may attach to it. */
static struct mm_struct *sframe_process_mm(int pidfd)
{
	struct task_struct *task;
	unsigned int f_flags;
	struct mm_struct *mm;

	task = pidfd_get_task(pidfd, &f_flags);
	if (IS_ERR(task))
		return ERR_CAST(task);
	mm = mm_access(task, PTRACE_MODE_ATTACH_REALCREDS);
	put_task_struct(task);
	/* As process_vm_writev(2) says it. */
	if (PTR_ERR(mm) == -EACCES)
		return ERR_PTR(-EPERM);
	return mm;
}

/*
 * The file and offset of the code: the key by which the copy is shared
 * with the other processes that map the same code, for which the agent
 * hands the same bytes.
 */
static bool sframe_text_key(struct mm_struct *mm, unsigned long start,
			    unsigned long end, struct sframe_elf_key *key)
{
	struct vm_area_struct *vma;
	bool found = false;

	if (mmap_read_lock_killable(mm))
		return false;
	vma = vma_lookup(mm, start);
	if (vma && vma->vm_file && end <= vma->vm_end) {
		key->inode = file_inode(vma->vm_file);
		key->pos = ((u64)vma->vm_pgoff << PAGE_SHIFT) +
			   (start - vma->vm_start);
		key->user = current_user();
		key->text = true;
		found = true;
	}
	mmap_read_unlock(mm);
	return found;
}

static bool sframe_process_args_ok(const struct sframe_process_setup *s)
{
	return !s->flags && s->text_size <= TASK_SIZE &&
	       s->sframe_start <= TASK_SIZE && s->sframe_addr <= TASK_SIZE &&
	       sframe_elf_args_ok(s->sframe_size, s->text_start,
				  s->text_start + s->text_size);
}

SYSCALL_DEFINE4(process_sframe_register, int, pidfd,
		const struct sframe_process_setup __user *, usetup,
		size_t, usize, unsigned int, flags)
{
	struct sframe_process_setup s;
	struct sframe_elf_args a;
	struct sframe_elf_key key;
	struct mm_struct *mm;
	int err;

	err = sframe_process_copy(&s, usetup, usize, flags);
	if (err)
		return err;
	if (!sframe_process_args_ok(&s))
		return -EINVAL;
	mm = sframe_process_mm(pidfd);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	a = (struct sframe_elf_args){
		.src = s.sframe_start, .base = s.sframe_addr,
		.size = s.sframe_size, .start = s.text_start,
		.end = s.text_start + s.text_size, .agent = true,
	};
	if (sframe_text_key(mm, a.start, a.end, &key))
		a.key = &key;
	err = sframe_add_elf_to(mm, &a);
	mmput(mm);
	return err;
}

/* Remove the agent's entry for exactly [@start, @end) of @mm. */
static int sframe_process_remove(struct mm_struct *mm, unsigned long start,
				 unsigned long end)
{
	struct sframe_region *r;
	int err = -ENOENT;

	if (mmap_write_lock_killable(mm))
		return -EINTR;
	r = sframe_index_exact(sframe_mm_locked(mm), start, end);
	/* What the process registered itself is not the agent's. */
	if (r && test_bit(SFRAME_REGION_F_AGENT, &r->flags)) {
		sframe_index_remove(mm, r);
		err = 0;
	}
	mmap_write_unlock(mm);
	return err;
}

SYSCALL_DEFINE4(process_sframe_unregister, int, pidfd,
		const struct sframe_process_setup __user *, usetup,
		size_t, usize, unsigned int, flags)
{
	struct sframe_process_setup s;
	struct mm_struct *mm;
	int err;

	err = sframe_process_copy(&s, usetup, usize, flags);
	if (err)
		return err;
	if (s.flags || s.sframe_start || s.sframe_size || s.sframe_addr ||
	    !s.text_size || s.text_size > TASK_SIZE ||
	    s.text_start > TASK_SIZE - s.text_size)
		return -EINVAL;
	mm = sframe_process_mm(pidfd);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	err = sframe_process_remove(mm, s.text_start,
				    s.text_start + s.text_size);
	mmput(mm);
	return err;
}
