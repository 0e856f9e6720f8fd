// SPDX-License-Identifier: GPL-2.0
/*
 * The tests' backend: it passes each operation to the in-memory backend
 * (with the layout a case chose) or to the kernel's, and lets a case
 * inject failures, spoil a header, count operations, keep replaced
 * mappings alive for a reader thread, and find the mapping in use.
 */
#include <string.h>
#include <sys/mman.h>

#include "test.h"

static void *base_priv(struct test_backend *tb)
{
	return tb->base->kernel ? NULL : &tb->layout;
}

static long tb_map(struct test_backend *tb, long addr)
{
	struct sframe_jit_header *h = (struct sframe_jit_header *)addr;

	if (addr < 0)
		return addr;
	if (tb->spoil_next) {
		/* The JIT's view only: the kernel never reads it back. */
		h->magic = ~SFRAME_JIT_MAGIC;
		tb->spoil_next = false;
	}
	atomic_store_explicit(&tb->current, h, memory_order_release);
	return addr;
}

static long tb_create(void *priv, const struct sframe_jit_args *args,
		      int *fdp)
{
	struct test_backend *tb = priv;

	tb->nr_creates++;
	if (tb->fail_create) {
		int err = tb->fail_create;

		tb->fail_create = 0;
		return -err;
	}
	return tb_map(tb, tb->base->create(base_priv(tb), args, fdp));
}

static long tb_replace(void *priv, const struct sframe_jit_args *args,
		       const struct sframe_jit_header *old, int old_fd,
		       int *fdp)
{
	struct test_backend *tb = priv;

	tb->nr_replaces++;
	if (tb->fail_replace) {
		int err = tb->fail_replace;

		tb->fail_replace = 0;
		return -err;
	}
	return tb_map(tb, tb->base->replace(base_priv(tb), args, old, old_fd,
					    fdp));
}

/* In a forked child: the child's copy of the test backend counts. */
static long tb_copy(void *priv, const struct sframe_jit_args *args,
		    int src_fd, int *fdp)
{
	struct test_backend *tb = priv;

	tb->nr_copies++;
	if (tb->fail_copy) {
		int err = tb->fail_copy;

		tb->fail_copy = 0;
		return -err;
	}
	if (!tb->base->copy)
		return -EOPNOTSUPP;
	return tb_map(tb, tb->base->copy(base_priv(tb), args, src_fd, fdp));
}

static void tb_unmap(void *priv, void *addr, size_t size, int fd)
{
	struct test_backend *tb = priv;

	tb->nr_unmaps++;
	if (tb->defer_unmap &&
	    tb->nr_deferred < (int)ARRAY_SIZE(tb->deferred) &&
	    addr != atomic_load(&tb->current)) {
		tb->deferred[tb->nr_deferred] = addr;
		tb->deferred_fd[tb->nr_deferred] = fd;
		tb->deferred_size[tb->nr_deferred++] = size;
		return;
	}
	tb->base->unmap(NULL, addr, size, fd);
}

/* Two tables, so that each says whether the kernel reads the registry. */
const struct sframe_jit_backend test_ops_mem = {
	.create		= tb_create,
	.replace	= tb_replace,
	.copy		= tb_copy,
	.unmap		= tb_unmap,
	.kernel		= false,
};

const struct sframe_jit_backend test_ops_kernel = {
	.create		= tb_create,
	.replace	= tb_replace,
	.copy		= tb_copy,
	.unmap		= tb_unmap,
	.kernel		= true,
};

void test_backend_init(struct test_backend *tb)
{
	memset(tb, 0, sizeof(*tb));
	tb->base = test_env.kernel ? &sframe_jit__kernel_backend :
				     &sframe_jit__mem_backend;
}

void test_backend_release(struct test_backend *tb)
{
	int i;

	for (i = 0; i < tb->nr_deferred; i++)
		tb->base->unmap(NULL, tb->deferred[i], tb->deferred_size[i],
				tb->deferred_fd[i]);
	tb->nr_deferred = 0;
}
