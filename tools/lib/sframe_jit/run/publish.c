// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One object's table into the kernel and out again: its .sframe through
 * sframe_register(2) where the object has a PT_GNU_SFRAME segment,
 * otherwise its .eh_frame converted to rows, in a JIT registry over its
 * executable range with capacities that fit the rows exactly and rows
 * shared between functions of one shape (SFRAME_JIT_F_SHARE_ROWS), of
 * compact records where the kernel has them and the table fits them
 * (SFRAME_JIT_F_COMPACT_RECORDS: about a third of the bytes), of
 * version 1 records otherwise.
 *
 * Nothing here fails the program: every error ends as a registration of
 * kind SFRAME_RUN_NONE that says why, and the kernel's unwinder falls
 * back to frame pointers for that object.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sframe_run.h"
#include "sframe_nr.h"

_Static_assert(sizeof(struct sframe_setup) == SFRAME_SETUP_SIZE_VER0,
	       "the calls take exactly the structure of version 0");

/* As backend.c: no call where the sysctl says the number is not ours. */
static int kernel_call(long nr, struct sframe_setup *setup)
{
	long ret;

	if (access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK))
		return -ENOSYS;
	ret = syscall(nr, setup, sizeof(*setup));
	return ret == -1 ? -errno : (int)ret;
}

static int kernel_elf_register(const struct sframe_setup *setup)
{
	struct sframe_setup s = *setup;

	return kernel_call(__NR_sframe_register, &s);
}

/* A registration is named by its section's address, the rest zero. */
static int kernel_unregister(uint64_t sframe_start)
{
	struct sframe_setup s = { .sframe_start = sframe_start };

	return kernel_call(__NR_sframe_unregister, &s);
}

const struct sframe_run_ops sframe_run__kernel_ops = {
	.elf_register	= kernel_elf_register,
	.unregister	= kernel_unregister,
};

static int private_elf_register(const struct sframe_setup *setup)
{
	(void)setup;
	return -EOPNOTSUPP;
}

static int private_unregister(uint64_t sframe_start)
{
	(void)sframe_start;
	return 0;
}

/*
 * All the work but the kernel's: registries in private memory, laid out
 * as the kernel's, and no ELF registration.  For measuring the cost on
 * a kernel without the system call (SFRAME_RUN_NO_KERNEL=1).
 */
const struct sframe_run_ops sframe_run__private_ops = {
	.jit		= &sframe_jit__mem_backend,
	.elf_register	= private_elf_register,
	.unregister	= private_unregister,
};

static int convert_file(const char *path, struct sframe_jit_cfi **cfip)
{
	struct stat st;
	void *image;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !st.st_size) {
		err = -ENOEXEC;
		goto out_close;
	}
	image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (image == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	err = sframe_jit_cfi_convert(image, st.st_size, cfip);
	munmap(image, st.st_size);
out_close:
	close(fd);
	return err;
}

/**
 * sframe_run__prepare() - convert an object's CFI, if it needs it
 * @obj: the object.
 * @prep: filled in; free it with sframe_run__prep_free().
 *
 * The slow part of publishing, which needs no lock: reads the object's
 * file (or, for the vDSO, its image in memory) and converts its
 * .eh_frame.  An object with a PT_GNU_SFRAME segment needs nothing.
 */
void sframe_run__prepare(const struct sframe_run_obj *obj,
			 struct sframe_run_prep *prep)
{
	int ret;

	memset(prep, 0, sizeof(*prep));
	if (obj->sframe_start)
		return;
	if (obj->image)
		ret = sframe_jit_cfi_convert(obj->image, obj->image_size,
					     &prep->cfi);
	else
		ret = convert_file(obj->name, &prep->cfi);
	if (ret < 0)
		prep->err = ret;
}

/**
 * sframe_run__prep_free() - free what sframe_run__prepare() made
 * @prep: the preparation.
 */
void sframe_run__prep_free(struct sframe_run_prep *prep)
{
	sframe_jit_cfi_free(prep->cfi);
	prep->cfi = NULL;
}

static int jit_create(const struct sframe_run_ops *ops, uint64_t start,
		      uint64_t end, const struct sframe_jit_opts *opts,
		      struct sframe_jit **regp)
{
	if (ops->jit)
		return sframe_jit__create(start, end, opts, ops->jit,
					  ops->jit_priv, regp);
	return sframe_jit_create(start, end, opts, regp);
}

/* A registry of @opts, for [@start, @end), filled with @cfi. */
static int jit_fill(const struct sframe_run_ops *ops, uint64_t start,
		    uint64_t end, const struct sframe_jit_opts *opts,
		    const struct sframe_jit_cfi *cfi, uint64_t bias,
		    struct sframe_jit **jitp)
{
	int ret = jit_create(ops, start, end, opts, jitp);

	if (ret)
		return ret;
	ret = sframe_jit_import_cfi(*jitp, cfi, bias);
	if (ret < 0) {
		sframe_jit_destroy(*jitp);
		*jitp = NULL;
		return ret;
	}
	return 0;
}

/*
 * A compact registry, sized exactly: the descriptors after splitting,
 * the shared rows and those of the pieces, the distinct rules.
 */
static int jit_compact(const struct sframe_run_ops *ops, uint64_t start,
		       uint64_t end, struct sframe_jit_cfi *cfi,
		       uint64_t bias, struct sframe_jit **jitp)
{
	int ret;

	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.flags = SFRAME_JIT_F_SHARE_ROWS | SFRAME_JIT_F_NO_GROW |
				 SFRAME_JIT_F_COMPACT_RECORDS);
	ret = sframe_jit_cfi_compact_caps(cfi, &opts);
	if (ret)
		return ret;
	return jit_fill(ops, start, end, &opts, cfi, bias, jitp);
}

/* A version 1 registry, sized exactly for the functions and shared rows. */
static int jit_v1(const struct sframe_run_ops *ops, uint64_t start,
		  uint64_t end, const struct sframe_jit_cfi *cfi,
		  uint64_t bias, const struct sframe_jit_cfi_stats *st,
		  struct sframe_jit **jitp)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.fde_capacity = st->nr_converted,
			.fre_capacity = st->nr_shared_rows,
			.flags = SFRAME_JIT_F_SHARE_ROWS | SFRAME_JIT_F_NO_GROW);
	return jit_fill(ops, start, end, &opts, cfi, bias, jitp);
}

/**
 * sframe_run__publish_cfi() - publish converted rows for a code range
 * @ops: how ranges reach the kernel.
 * @start: the range's start.
 * @end: its end.
 * @cfi: the rows, at the addresses of the object's layout.
 * @bias: what to add to them.
 * @compact: try a compact registry first.
 * @reg: the registration, SFRAME_RUN_JIT or SFRAME_RUN_NONE.
 *
 * The one way rows reach the kernel, for objects' CFI and for any
 * later producer of a code range's rows: a registry sized for exactly
 * these functions and their shared rows, which never grows.  With
 * @compact, of compact records, unless the kernel refuses them (EINVAL:
 * a kernel without SFRAME_JIT_F_COMPACT, or a range past 4 GiB) or the
 * table does not fit them (-ENOSPC: more than 65536 distinct rules):
 * then of version 1 records, as without.
 *
 * Return: 0, or the error also left in @reg->err.
 */
int sframe_run__publish_cfi(const struct sframe_run_ops *ops,
			    uint64_t start, uint64_t end,
			    struct sframe_jit_cfi *cfi, uint64_t bias,
			    bool compact, struct sframe_run_reg *reg)
{
	struct sframe_jit *jit = NULL;
	int ret = -EINVAL;

	memset(reg, 0, sizeof(*reg));
	reg->stats.sz = sizeof(reg->stats);
	sframe_jit_cfi_get_stats(cfi, &reg->stats);
	if (!reg->stats.nr_converted) {
		ret = -ENOENT;
		goto fail;
	}

	if (compact)
		ret = jit_compact(ops, start, end, cfi, bias, &jit);
	reg->compact = !ret;
	if (ret == -EINVAL || ret == -ENOSPC)
		ret = jit_v1(ops, start, end, cfi, bias, &reg->stats, &jit);
	if (ret)
		goto fail;
	reg->kind = SFRAME_RUN_JIT;
	reg->jit = jit;
	reg->start = start;
	reg->end = end;
	reg->map_size = jit->l.map_size;
	return 0;
fail:
	reg->kind = SFRAME_RUN_NONE;
	reg->err = ret;
	return ret;
}

static void publish_elf(const struct sframe_run_ops *ops,
			const struct sframe_run_obj *obj,
			struct sframe_run_reg *reg)
{
	struct sframe_setup setup = {
		.sframe_start	= obj->sframe_start,
		.sframe_size	= obj->sframe_size,
		.text_start	= obj->text_start,
		.text_size	= obj->text_end - obj->text_start,
	};
	int ret = ops->elf_register(&setup);

	memset(reg, 0, sizeof(*reg));
	/*
	 * EEXIST: binfmt_elf registered the executable or the interpreter
	 * at exec; the range is covered, and not ours to unregister.
	 */
	if (ret) {
		reg->kind = SFRAME_RUN_NONE;
		reg->err = ret;
		return;
	}
	reg->kind = SFRAME_RUN_ELF;
	reg->start = obj->text_start;
	reg->end = obj->text_end;
	reg->sframe_start = setup.sframe_start;
}

/**
 * sframe_run__publish() - register an object's table
 * @ops: how ranges reach the kernel.
 * @obj: the object.
 * @prep: what sframe_run__prepare() made of it; its rows are consumed.
 * @reg: the registration.
 */
void sframe_run__publish(const struct sframe_run_ops *ops,
			 const struct sframe_run_obj *obj,
			 struct sframe_run_prep *prep,
			 struct sframe_run_reg *reg)
{
	if (obj->sframe_start) {
		publish_elf(ops, obj, reg);
		return;
	}
	if (!prep->cfi) {
		memset(reg, 0, sizeof(*reg));
		reg->kind = SFRAME_RUN_NONE;
		reg->err = prep->err ?: -ENOENT;
		return;
	}
	sframe_run__publish_cfi(ops, obj->text_start, obj->text_end,
				prep->cfi, obj->bias, true, reg);
	/* The stats stay; the rows are in the registry now. */
	sframe_run__prep_free(prep);
}

/**
 * sframe_run__unpublish() - remove an object's registration
 * @ops: how ranges reach the kernel.
 * @reg: the registration; SFRAME_RUN_NONE afterwards.
 *
 * Unmapping a JIT registry unregisters it; an ELF registration is
 * removed by the address of its section.  An error (the registration
 * gone with an exec, say) leaves nothing to undo.
 */
void sframe_run__unpublish(const struct sframe_run_ops *ops,
			   struct sframe_run_reg *reg)
{
	if (reg->kind == SFRAME_RUN_JIT)
		sframe_jit_destroy(reg->jit);
	else if (reg->kind == SFRAME_RUN_ELF)
		ops->unregister(reg->sframe_start);
	reg->kind = SFRAME_RUN_NONE;
	reg->jit = NULL;
}
