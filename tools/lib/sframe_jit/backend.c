// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where registries come from: sframe_register(2), or private memory laid
 * out exactly as the kernel lays a registry out (the header page, the
 * descriptor area at fde_off, the rows at fre_off aligned to 64 bytes,
 * the whole rounded up to pages).  See the "Layout" section of
 * Documentation/userspace-api/sframe.rst.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sframe_jit_internal.h"

#ifndef __NR_sframe_register
#define __NR_sframe_register 472
#endif

/* The kernel aligns the row area to SMP_CACHE_BYTES, 64 on x86. */
#define SFRAME_JIT_FRE_ALIGN	64

/*
 * The sysctl comes with the system call.  Without it the number may
 * belong to another call on a kernel newer than the series (472 is the
 * first number mainline has not assigned yet), which must never be made.
 */
static long sframe_register(unsigned int op, struct sframe_jit_args *args)
{
	long ret;

	if (access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK))
		return -ENOSYS;
	ret = syscall(__NR_sframe_register, op, args, sizeof(*args));
	return ret == -1 ? -errno : ret;
}

static long kernel_create(void *priv, const struct sframe_jit_args *args)
{
	struct sframe_jit_args a = *args;

	(void)priv;
	return sframe_register(SFRAME_REGISTER_JIT, &a);
}

static long kernel_replace(void *priv, const struct sframe_jit_args *args,
			   const struct sframe_jit_header *old)
{
	struct sframe_jit_args a = *args;

	/* The kernel finds the old registry by its range. */
	(void)priv;
	(void)old;
	return sframe_register(SFRAME_REPLACE_JIT, &a);
}

/**
 * sframe_jit__unmap() - unmap a registry, for both backends
 * @priv: unused.
 * @addr: the mapping.
 * @size: its map_size.
 *
 * Unmapping the registry registered for a range unregisters it; an old,
 * replaced one only goes away.
 */
void sframe_jit__unmap(void *priv, void *addr, size_t size)
{
	(void)priv;
	munmap(addr, size);
}

const struct sframe_jit_backend sframe_jit__kernel_backend = {
	.create		= kernel_create,
	.replace	= kernel_replace,
	.unmap		= sframe_jit__unmap,
	.kernel		= true,
};

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* The checks SFRAME_REGISTER_JIT makes of its arguments. */
static int mem_check_args(const struct sframe_jit_args *args)
{
	if (args->flags || args->reserved)
		return -EINVAL;
	if (args->text_start >= args->text_end)
		return -EINVAL;
	if (!args->fde_capacity || args->fde_capacity > SFRAME_JIT_MAX_FDES ||
	    !args->fre_capacity || args->fre_capacity > SFRAME_JIT_MAX_FRES)
		return -EINVAL;
	return 0;
}

static struct sframe_jit_header *
mem_map(const struct sframe_jit_mem_layout *layout,
	const struct sframe_jit_args *args)
{
	struct sframe_jit_mem_layout l = { 0 };
	size_t page = page_size();
	struct sframe_jit_header *h;
	uint64_t fde_off, fre_off, size;
	void *p;

	if (layout)
		l = *layout;
	if (!l.fde_stride)
		l.fde_stride = sizeof(struct sframe_jit_fde);
	if (!l.fre_stride)
		l.fre_stride = sizeof(struct sframe_jit_fre);
	if (!l.header_size)
		l.header_size = sizeof(struct sframe_jit_header);

	fde_off = page * (1 + (uint64_t)l.fde_pages);
	fre_off = align_up(fde_off + (uint64_t)args->fde_capacity * l.fde_stride,
			   SFRAME_JIT_FRE_ALIGN);
	size = align_up(fre_off + (uint64_t)args->fre_capacity * l.fre_stride,
			page);
	if (size > UINT32_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * The kernel's registry is pinned pages, present from the start:
	 * populate this one too, so that a JIT (or a benchmark) on this
	 * backend does not take page faults on appends that the kernel's
	 * registry never takes.
	 */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;

	h = p;
	h->magic = SFRAME_JIT_MAGIC;
	h->version = SFRAME_JIT_VERSION;
	h->header_size = l.header_size;
	h->fde_stride = l.fde_stride;
	h->fre_stride = l.fre_stride;
	h->flags = 0;
	h->text_start = args->text_start;
	h->text_end = args->text_end;
	h->fde_off = fde_off;
	h->fde_capacity = args->fde_capacity;
	h->fre_off = fre_off;
	h->fre_capacity = args->fre_capacity;
	h->map_size = size;
	return h;
}

/**
 * sframe_jit__mem_create() - SFRAME_REGISTER_JIT, in private memory
 * @priv: a struct sframe_jit_mem_layout, or NULL for the kernel's layout.
 * @args: as for the system call.
 *
 * Return: the address of a new registry, or -EINVAL for the arguments
 * the kernel refuses, or -ENOMEM.
 */
long sframe_jit__mem_create(void *priv, const struct sframe_jit_args *args)
{
	struct sframe_jit_header *h;
	int err;

	err = mem_check_args(args);
	if (err)
		return err;
	h = mem_map(priv, args);
	if (!h)
		return -errno;
	return (long)h;
}

/**
 * sframe_jit__mem_replace() - SFRAME_REPLACE_JIT, in private memory
 * @priv: a struct sframe_jit_mem_layout, or NULL for the kernel's layout.
 * @args: as for the system call.
 * @old: the registry being replaced, which stays mapped.
 *
 * A new registry, at least as large, with the old one's areas, count and
 * sequence count copied into it, as the kernel copies them.
 *
 * Return: its address, or -EINVAL, -ENOENT or -ENOMEM as the system
 * call would fail.
 */
long sframe_jit__mem_replace(void *priv, const struct sframe_jit_args *args,
			     const struct sframe_jit_header *old)
{
	struct sframe_jit_header *h;
	int err;

	err = mem_check_args(args);
	if (err)
		return err;
	if (!old || old->text_start != args->text_start ||
	    old->text_end != args->text_end)
		return -ENOENT;
	if (args->fde_capacity < old->fde_capacity ||
	    args->fre_capacity < old->fre_capacity)
		return -EINVAL;
	h = mem_map(priv, args);
	if (!h)
		return -errno;
	/* The byte copies of the kernel, bounded for a test's other layout. */
	memcpy((char *)h + h->fde_off, (const char *)old + old->fde_off,
	       min_size((size_t)old->fde_capacity * old->fde_stride,
			(size_t)h->fde_capacity * h->fde_stride));
	memcpy((char *)h + h->fre_off, (const char *)old + old->fre_off,
	       min_size((size_t)old->fre_capacity * old->fre_stride,
			(size_t)h->fre_capacity * h->fre_stride));
	h->seq = old->seq;
	h->fde_count = old->fde_count;
	return (long)h;
}

const struct sframe_jit_backend sframe_jit__mem_backend = {
	.create		= sframe_jit__mem_create,
	.replace	= sframe_jit__mem_replace,
	.unmap		= sframe_jit__unmap,
	.kernel		= false,
};
