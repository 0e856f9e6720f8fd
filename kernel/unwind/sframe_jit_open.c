// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_jit_open(2): a new JIT registry for a code range of the calling
 * process, registered at once and returned as a file descriptor, which
 * the process maps (sframe_jit.c).  With SFRAME_JIT_REPLACE it takes
 * the place of a registry of the same range; with SFRAME_JIT_COPY it
 * starts as a copy of another one, a parent's that a forked child
 * inherited the descriptor of.
 *
 * Everything that can be refused is checked, and the registry sized and
 * charged, before its memory is allocated.
 *
 * Documentation/userspace-api/sframe.rst describes the ABI.
 */
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <uapi/linux/sframe_jit.h>

#include "sframe_internal.h"

#define SFRAME_JIT_KIND_FLAGS	(SFRAME_JIT_F_COMPACT | SFRAME_JIT_F_STATS)
#define SFRAME_JIT_SRC_FLAGS	(SFRAME_JIT_REPLACE | SFRAME_JIT_COPY)

/*
 * A compact registry needs rules, at most as many as a row's 16-bit
 * index can name, and a range that its descriptors' 32-bit offsets can
 * span; a version 1 registry has no rule area, and a rule capacity for
 * it is a mistake the caller should hear of.
 */
static int sframe_jit_check_rules(const struct sframe_jit_args *args)
{
	if (!(args->flags & SFRAME_JIT_F_COMPACT))
		return args->rule_capacity ? -EINVAL : 0;
	if (!args->rule_capacity || args->rule_capacity > SFRAME_JIT_MAX_RULES)
		return -EINVAL;
	if (args->text_end - args->text_start > (1ULL << 32))
		return -EINVAL;
	return 0;
}

static int sframe_jit_check_args(const struct sframe_jit_args *args)
{
	if (args->flags & ~(SFRAME_JIT_KIND_FLAGS | SFRAME_JIT_SRC_FLAGS))
		return -EINVAL;
	if ((args->flags & SFRAME_JIT_SRC_FLAGS) == SFRAME_JIT_SRC_FLAGS)
		return -EINVAL;
	if (args->__reserved)
		return -EINVAL;
	if (args->text_start >= args->text_end || args->text_end > TASK_SIZE)
		return -EINVAL;
	if (!args->fde_capacity || args->fde_capacity > SFRAME_JIT_MAX_FDES ||
	    !args->fre_capacity || args->fre_capacity > SFRAME_JIT_MAX_FRES)
		return -EINVAL;
	return sframe_jit_check_rules(args);
}

/*
 * The registry a new one of @shape starts from must cover the same
 * range with records of the same kind, and fit in it area by area.
 */
static bool sframe_jit_can_copy(const struct sframe_jit_view *shape,
				const struct sframe_jit_view *src)
{
	return shape->text_start == src->text_start &&
	       shape->text_end == src->text_end &&
	       shape->compact == src->compact &&
	       shape->fde_cap >= src->fde_cap && shape->fre_cap >= src->fre_cap &&
	       shape->rule_cap >= src->rule_cap;
}

/*
 * With the mmap lock held for writing: publish @reg's index entry @r in
 * @mm, in place of @old's entry if @old is given, with @src's records
 * copied in first if @src is given.
 */
static int sframe_jit_publish(struct mm_struct *mm, struct sframe_jit_reg *reg,
			      struct sframe_region *r,
			      const struct sframe_jit_reg *src,
			      struct sframe_jit_reg *old)
{
	struct sframe_mm *smm;
	int err;

	smm = sframe_mm_get(mm);
	if (!smm)
		return -ENOMEM;
	if (old) {
		/* REPLACE names the registry registered for the range. */
		if (old->mm != mm || !old->region)
			return -ENOENT;
	} else {
		err = sframe_index_check(smm, r->start, r->end, true);
		if (err)
			return err;
	}
	if (src)
		sframe_jit_copy(reg, src);
	r->kind = SFRAME_REGION_JIT;
	r->jit = reg;
	if (old) {
		/* One store: readers see the old entry or the new one. */
		err = mtree_store_range(&smm->index, r->start, r->end - 1, r,
					GFP_KERNEL_ACCOUNT);
	} else {
		err = sframe_index_insert(smm, r);
	}
	if (err)
		return err;
	refcount_inc(&reg->ref);
	reg->region = r;
	reg->published = true;
	if (old)
		sframe_region_detach(old->region);
	return 0;
}

/*
 * Would the registration be let in?  Asked before anything is
 * allocated, so that a call that is refused costs the kernel nothing;
 * sframe_jit_publish() asks again under the write lock, where only the
 * caller's own concurrent calls can have changed the answer.
 */
static int sframe_jit_precheck(struct mm_struct *mm,
			       const struct sframe_jit_view *shape,
			       const struct sframe_jit_reg *old)
{
	struct sframe_mm *smm;
	int err = 0;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	smm = sframe_mm_locked(mm);
	if (old) {
		if (old->mm != mm || !old->region)
			err = -ENOENT;
	} else if (smm) {
		err = sframe_index_check(smm, shape->text_start,
					 shape->text_end, true);
	}
	mmap_read_unlock(mm);
	return err;
}

/* Register @reg in the current process, from @src if given. */
static int sframe_jit_register(struct sframe_jit_reg *reg,
			       struct sframe_jit_reg *src, bool replace)
{
	struct mm_struct *mm = current->mm;
	struct sframe_region *r;
	int err;

	r = sframe_region_new(reg->view.text_start, reg->view.text_end);
	if (!r)
		return -ENOMEM;
	err = -EINTR;
	if (mmap_write_lock_killable(mm))
		goto free_region;
	err = sframe_jit_publish(mm, reg, r, src, replace ? src : NULL);
	mmap_write_unlock(mm);
	if (!err)
		return 0;
free_region:
	kfree(r);
	return err;
}

/* The descriptor and the registry a new one starts from. */
static struct file *sframe_jit_src(const struct sframe_jit_args *args,
				   const struct sframe_jit_view *shape,
				   struct sframe_jit_reg **src)
{
	struct file *file = fget(args->src_fd);
	int err = -EBADF;

	if (!file)
		return ERR_PTR(err);
	err = -EINVAL;
	*src = sframe_jit_from_file(file);
	if (*src && sframe_jit_can_copy(shape, &(*src)->view))
		return file;
	fput(file);
	return ERR_PTR(err);
}

static long sframe_jit_open(const struct sframe_jit_args *args)
{
	struct sframe_jit_view shape = {
		.text_start = args->text_start,
		.text_end = args->text_end,
		.compact = args->flags & SFRAME_JIT_F_COMPACT,
		.stats = args->flags & SFRAME_JIT_F_STATS,
		.fde_cap = args->fde_capacity,
		.fre_cap = args->fre_capacity,
		.rule_cap = args->rule_capacity,
	};
	struct sframe_jit_reg *reg, *src = NULL;
	struct file *src_file = NULL, *file;
	int fd, err;

	err = sframe_jit_check_args(args);
	if (err)
		return err;
	if (args->flags & SFRAME_JIT_SRC_FLAGS) {
		src_file = sframe_jit_src(args, &shape, &src);
		if (IS_ERR(src_file))
			return PTR_ERR(src_file);
	}
	err = sframe_jit_precheck(current->mm, &shape,
				  args->flags & SFRAME_JIT_REPLACE ? src : NULL);
	if (err)
		goto put_src;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		err = fd;
		goto put_src;
	}
	reg = sframe_jit_alloc(current->mm, &shape);
	if (IS_ERR(reg)) {
		err = PTR_ERR(reg) == -EDQUOT ? -ENOMEM : PTR_ERR(reg);
		goto put_fd;
	}
	file = sframe_jit_file(reg);
	if (IS_ERR(file)) {
		err = PTR_ERR(file);
		goto put_reg;
	}
	err = sframe_jit_register(reg, src, args->flags & SFRAME_JIT_REPLACE);
	if (err)
		goto put_file;
	sframe_jit_put_sync(reg);
	if (src_file)
		fput(src_file);
	fd_install(fd, file);
	return fd;

put_file:
	fput(file);
put_reg:
	sframe_jit_put_sync(reg);
put_fd:
	put_unused_fd(fd);
put_src:
	if (src_file)
		fput(src_file);
	return err;
}

SYSCALL_DEFINE2(sframe_jit_open, const struct sframe_jit_args __user *, uargs,
		size_t, usize)
{
	struct sframe_jit_args args;
	int err;

	if (usize < SFRAME_JIT_ARGS_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	err = copy_struct_from_user(&args, sizeof(args), uargs, usize);
	if (err)
		return err;
	return sframe_jit_open(&args);
}
