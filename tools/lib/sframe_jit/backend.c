// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where registries come from: sframe_jit_open(2), or private memory laid
 * out exactly as the kernel lays a registry out (the header page, the
 * descriptor area at fde_off, the rows at fre_off aligned to 64 bytes,
 * for a compact registry the rules at rule_off aligned the same, the
 * whole rounded up to pages).  See the "Layout" section of
 * Documentation/userspace-api/sframe.rst.
 *
 * A kernel registry is a file: sframe_jit_open(2) returns its
 * descriptor, already registered, and the process maps it once.  The
 * library keeps the descriptor with the mapping, because a child made by
 * fork() has neither the mapping (it is VM_DONTCOPY) nor the
 * registration, and needs the descriptor it inherits to copy the
 * parent's registry into one of its own (registry.c, "fork()").
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sframe_jit_internal.h"
#include "sframe_nr.h"

/* The kernel aligns the row and rule areas to SMP_CACHE_BYTES, 64 on x86. */
#define SFRAME_JIT_FRE_ALIGN	64

/* Flags that say what a registry holds, and those that name a source. */
#define KIND_FLAGS	(SFRAME_JIT_F_COMPACT | SFRAME_JIT_F_STATS)
#define SRC_FLAGS	(SFRAME_JIT_REPLACE | SFRAME_JIT_COPY)

/*
 * The sysctl comes with the system call.  Without it the number may
 * belong to another call on a kernel newer than the series (472 is the
 * first number mainline has not assigned yet), which must never be made.
 */
static int sframe_jit_open(struct sframe_jit_args *args)
{
	long ret;

	if (access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK))
		return -ENOSYS;
	ret = syscall(__NR_sframe_jit_open, args, sizeof(*args));
	return ret == -1 ? -errno : (int)ret;
}

/*
 * Map the registry of @fd as the kernel allows it to be mapped: once,
 * whole, shared, never executable.  On failure the descriptor is
 * closed, which ends the registration of a registry never mapped.
 */
static long kernel_map(int fd, int *fdp)
{
	off_t size = lseek(fd, 0, SEEK_END);
	void *p;
	int err;

	if (size <= 0) {
		err = size ? -errno : -EPROTO;
		close(fd);
		return err;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	*fdp = fd;
	return (long)p;
}

static long kernel_open(struct sframe_jit_args *args, int *fdp)
{
	int fd = sframe_jit_open(args);

	if (fd < 0)
		return fd;
	return kernel_map(fd, fdp);
}

static long kernel_create(void *priv, const struct sframe_jit_args *args,
			  int *fdp)
{
	struct sframe_jit_args a = *args;

	(void)priv;
	a.flags &= ~SRC_FLAGS;
	return kernel_open(&a, fdp);
}

static long kernel_replace(void *priv, const struct sframe_jit_args *args,
			   const struct sframe_jit_header *old, int old_fd,
			   int *fdp)
{
	struct sframe_jit_args a = *args;

	/* The kernel finds the old registry by its descriptor. */
	(void)priv;
	(void)old;
	a.flags = (a.flags & ~SRC_FLAGS) | SFRAME_JIT_REPLACE;
	a.src_fd = old_fd;
	return kernel_open(&a, fdp);
}

static long kernel_copy(void *priv, const struct sframe_jit_args *args,
			int src_fd, int *fdp)
{
	struct sframe_jit_args a = *args;

	(void)priv;
	a.flags = (a.flags & ~SRC_FLAGS) | SFRAME_JIT_COPY;
	a.src_fd = src_fd;
	return kernel_open(&a, fdp);
}

/**
 * sframe_jit__unmap() - unmap a registry, for both backends
 * @priv: unused.
 * @addr: the mapping.
 * @size: its map_size.
 * @fd: the registry's descriptor; -1 for private memory.
 *
 * Unmapping the registry registered for a range unregisters it; an old,
 * replaced one only goes away.  Closing the descriptor then lets the
 * kernel free the registry and give back what it charged for it.
 */
void sframe_jit__unmap(void *priv, void *addr, size_t size, int fd)
{
	(void)priv;
	munmap(addr, size);
	if (fd >= 0)
		close(fd);
}

const struct sframe_jit_backend sframe_jit__kernel_backend = {
	.create		= kernel_create,
	.replace	= kernel_replace,
	.copy		= kernel_copy,
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

/*
 * The checks sframe_jit_open(2) makes of its arguments, in its order:
 * flags, the reserved field, the range, the capacities, the rules.
 * Whether the range is below TASK_SIZE only the kernel knows.
 */
static int mem_check_args(const struct sframe_jit_args *args)
{
	bool compact = args->flags & SFRAME_JIT_F_COMPACT;

	if (args->flags & ~(KIND_FLAGS | SRC_FLAGS))
		return -EINVAL;
	if ((args->flags & SRC_FLAGS) == SRC_FLAGS)
		return -EINVAL;
	if (args->__reserved)
		return -EINVAL;
	if (args->text_start >= args->text_end)
		return -EINVAL;
	if (!args->fde_capacity || args->fde_capacity > SFRAME_JIT_MAX_FDES ||
	    !args->fre_capacity || args->fre_capacity > SFRAME_JIT_MAX_FRES)
		return -EINVAL;
	if (!compact)
		return args->rule_capacity ? -EINVAL : 0;
	if (!args->rule_capacity || args->rule_capacity > SFRAME_JIT_MAX_RULES ||
	    args->text_end - args->text_start > SFRAME_JIT_COMPACT_SPAN)
		return -EINVAL;
	return 0;
}

/* The record sizes of a registry of @flags, and a test's other ones. */
static void mem_strides(struct sframe_jit_mem_layout *l,
			const struct sframe_jit_mem_layout *layout,
			uint32_t flags)
{
	bool compact = flags & SFRAME_JIT_F_COMPACT;

	if (layout)
		*l = *layout;
	if (!l->fde_stride)
		l->fde_stride = compact ? sizeof(struct sframe_jit_cfde) :
					  sizeof(struct sframe_jit_fde);
	if (!l->fre_stride)
		l->fre_stride = compact ? sizeof(struct sframe_jit_cfre) :
					  sizeof(struct sframe_jit_fre);
	if (!l->header_size)
		l->header_size = sizeof(struct sframe_jit_header);
}

/**
 * sframe_jit__mem_offsets() - where the kernel puts a registry's areas
 * @page: the page size.
 * @fde_pages: pages between the header page and the descriptors; 0 for
 *	the kernel's layout.
 * @args: the registration.
 * @fde_stride: bytes per descriptor.
 * @fre_stride: bytes per row.
 * @off: filled in with fde_off, fre_off, rule_off (0 without
 *	SFRAME_JIT_F_COMPACT) and map_size, in this order.
 *
 * The header page, the descriptors, the rows aligned to SMP_CACHE_BYTES,
 * the rules (compact registries) aligned the same, the whole rounded up
 * to pages: the layout of the "Layout" section of sframe.rst.
 */
void sframe_jit__mem_offsets(uint64_t page, uint32_t fde_pages,
			     const struct sframe_jit_args *args,
			     uint32_t fde_stride, uint32_t fre_stride,
			     uint64_t off[4])
{
	uint64_t end;

	off[0] = page * (1 + (uint64_t)fde_pages);
	off[1] = align_up(off[0] + (uint64_t)args->fde_capacity * fde_stride,
			  SFRAME_JIT_FRE_ALIGN);
	end = off[1] + (uint64_t)args->fre_capacity * fre_stride;
	off[2] = 0;
	if (args->flags & SFRAME_JIT_F_COMPACT) {
		off[2] = align_up(end, SFRAME_JIT_FRE_ALIGN);
		end = off[2] + (uint64_t)args->rule_capacity *
			       sizeof(struct sframe_jit_rule);
	}
	off[3] = align_up(end, page);
}

static struct sframe_jit_header *
mem_map(const struct sframe_jit_mem_layout *layout,
	const struct sframe_jit_args *args)
{
	struct sframe_jit_mem_layout l = { 0 };
	struct sframe_jit_header *h;
	uint64_t off[4];
	void *p;

	mem_strides(&l, layout, args->flags);
	sframe_jit__mem_offsets(page_size(), l.fde_pages, args, l.fde_stride,
				l.fre_stride, off);
	if (off[3] > UINT32_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * The kernel's registry is pinned pages, present from the start:
	 * populate this one too, so that a JIT (or a benchmark) on this
	 * backend does not take page faults on appends that the kernel's
	 * registry never takes.
	 */
	p = mmap(NULL, off[3], PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;

	h = p;
	h->magic = SFRAME_JIT_MAGIC;
	h->version = SFRAME_JIT_VERSION;
	h->header_size = l.header_size;
	h->fde_stride = l.fde_stride;
	h->fre_stride = l.fre_stride;
	h->flags = args->flags & KIND_FLAGS;
	h->text_start = args->text_start;
	h->text_end = args->text_end;
	h->fde_off = off[0];
	h->fde_capacity = args->fde_capacity;
	h->fre_off = off[1];
	h->fre_capacity = args->fre_capacity;
	h->map_size = off[3];
	if (args->flags & SFRAME_JIT_F_COMPACT) {
		h->rule_off = off[2];
		h->rule_capacity = args->rule_capacity;
		h->rule_stride = sizeof(struct sframe_jit_rule);
	}
	return h;
}

/**
 * sframe_jit__mem_create() - sframe_jit_open(2), in private memory
 * @priv: a struct sframe_jit_mem_layout, or NULL for the kernel's layout.
 * @args: as for the system call; SFRAME_JIT_REPLACE and SFRAME_JIT_COPY
 *	are checked, not acted on.
 * @fdp: set to -1: private memory has no descriptor.
 *
 * Return: the address of a new registry, or -EINVAL for the arguments
 * the kernel refuses, or -ENOMEM.
 */
long sframe_jit__mem_create(void *priv, const struct sframe_jit_args *args,
			    int *fdp)
{
	struct sframe_jit_header *h;
	int err;

	*fdp = -1;
	err = mem_check_args(args);
	if (err)
		return err;
	h = mem_map(priv, args);
	if (!h)
		return -errno;
	return (long)h;
}

/**
 * sframe_jit__mem_replace() - SFRAME_JIT_REPLACE, in private memory
 * @priv: a struct sframe_jit_mem_layout, or NULL for the kernel's layout.
 * @args: as for the system call.
 * @old: the registry being replaced, which stays mapped.
 * @old_fd: unused: private memory has no descriptor.
 * @fdp: set to -1.
 *
 * A new registry, at least as large, with the old one's areas, count and
 * sequence count copied into it, as the kernel copies them.
 *
 * Return: its address, or -EINVAL, -ENOENT or -ENOMEM as the system
 * call would fail.
 */
long sframe_jit__mem_replace(void *priv, const struct sframe_jit_args *args,
			     const struct sframe_jit_header *old, int old_fd,
			     int *fdp)
{
	struct sframe_jit_header *h;
	int err;

	(void)old_fd;
	*fdp = -1;
	err = mem_check_args(args);
	if (err)
		return err;
	if (!old)
		return -ENOENT;
	/* The kernel's checks of the source: range, kind, capacities. */
	if (old->text_start != args->text_start ||
	    old->text_end != args->text_end ||
	    (args->flags ^ old->flags) & SFRAME_JIT_F_COMPACT ||
	    args->fde_capacity < old->fde_capacity ||
	    args->fre_capacity < old->fre_capacity ||
	    args->rule_capacity < old->rule_capacity)
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
	if (h->rule_off)
		memcpy((char *)h + h->rule_off, (const char *)old + old->rule_off,
		       (size_t)old->rule_capacity * old->rule_stride);
	h->seq = old->seq;
	h->fde_count = old->fde_count;
	return (long)h;
}

/*
 * No copy: a registry in private memory has no descriptor, and fork()
 * gives the child its own copy of the mapping as of any private memory.
 */
const struct sframe_jit_backend sframe_jit__mem_backend = {
	.create		= sframe_jit__mem_create,
	.replace	= sframe_jit__mem_replace,
	.unmap		= sframe_jit__unmap,
	.kernel		= false,
};
