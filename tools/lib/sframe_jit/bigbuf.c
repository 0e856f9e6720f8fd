// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The large arrays of a conversion, mapped on their own and in huge
 * pages where the kernel gives them.
 *
 * Converting libLLVM-14 writes about 16 MB of fresh memory: the rows
 * before they are shared, the FDEs and their sort keys.  In 4 KiB pages
 * that is 4,000 page faults, and on the host that measured it a quarter
 * of the conversion's CPU time went to them (9 of 40 ms).  Mapped with
 * MADV_HUGEPAGE, each aligned 2 MiB of the array takes one fault.
 *
 * The arrays get mappings of their own rather than the advice on memory
 * malloc() gave: a block from the heap stays the process's once freed,
 * and the advice would go on holding for memory the program uses after
 * the conversion.  A mapping is gone with its array.  Small arrays stay
 * with malloc(): a JIT's table of one function must not cost a mapping.
 * A huge page holds memory in 2 MiB: an array has at most that much
 * more resident than it uses, and only while the conversion holds it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sframe_jit_internal.h"

#define HUGE_SIZE	(2UL << 20)

/*
 * The length of a mapping: whole huge pages, so that the array's last
 * megabytes do not take a fault per 4 KiB page.
 */
static size_t huge_round(size_t bytes)
{
	return (bytes + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
}

/**
 * sframe_jit__big_alloc() - map a large array
 * @bytes: its size, at least SFRAME_JIT__BIG_MIN.
 *
 * The mapping starts on a 2 MiB boundary, so that every whole 2 MiB of
 * it can be one huge page; the advice is only advice, and a kernel
 * without transparent huge pages, or set to "never", maps 4 KiB pages.
 * Pages never written are never allocated.
 *
 * Return: the array, zeroed, for sframe_jit__big_free(); NULL when it
 * cannot be mapped.
 */
void *sframe_jit__big_alloc(size_t bytes)
{
	size_t len = huge_round(bytes), head;
	uintptr_t p, aligned;
	void *m;

	if (len < bytes || len + HUGE_SIZE < len)
		return NULL;
	m = mmap(NULL, len + HUGE_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	p = (uintptr_t)m;
	aligned = (p + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1);
	head = aligned - p;
	if (head)
		munmap(m, head);
	munmap((void *)(aligned + len), HUGE_SIZE - head);
	madvise((void *)aligned, len, MADV_HUGEPAGE);
	return (void *)aligned;
}

/**
 * sframe_jit__big_resize() - grow or shrink a large array
 * @p: the array, from sframe_jit__big_alloc().
 * @old_bytes: the size it was mapped with.
 * @new_bytes: the size it gets, not 0.
 *
 * The contents up to the smaller size stay; a shrunk array stays where
 * it is, a grown one may move.
 *
 * Return: the array, or NULL with @p unchanged.
 */
void *sframe_jit__big_resize(void *p, size_t old_bytes, size_t new_bytes)
{
	size_t len = huge_round(new_bytes);
	void *m;

	if (len < new_bytes)
		return NULL;
	m = mremap(p, huge_round(old_bytes), len, MREMAP_MAYMOVE);
	return m == MAP_FAILED ? NULL : m;
}

/**
 * sframe_jit__big_free() - unmap a large array
 * @p: the array, from sframe_jit__big_alloc() or sframe_jit__big_resize().
 * @bytes: the size it was last mapped with.
 */
void sframe_jit__big_free(void *p, size_t bytes)
{
	munmap(p, huge_round(bytes));
}

/**
 * sframe_jit__buf_alloc() - an array, mapped if it is large
 * @bytes: its size.
 * @big: set to whether it was mapped, for sframe_jit__buf_free().
 *
 * Return: the array, or NULL.
 */
void *sframe_jit__buf_alloc(size_t bytes, bool *big)
{
	*big = bytes >= SFRAME_JIT__BIG_MIN;
	return *big ? sframe_jit__big_alloc(bytes) : malloc(bytes ?: 1);
}

/**
 * sframe_jit__buf_free() - free what sframe_jit__buf_alloc() gave
 * @p: the array, or NULL.
 * @bytes: the size it was allocated or last resized with.
 * @big: whether it was mapped.
 */
void sframe_jit__buf_free(void *p, size_t bytes, bool big)
{
	if (big && p)
		sframe_jit__big_free(p, bytes);
	else if (!big)
		free(p);
}

/**
 * sframe_jit__buf_grow() - sframe_jit__grow() for an array that may
 * become large
 * @arr: the array, from sframe_jit__buf_alloc() or this function, or
 *	NULL with a @cap of 0.
 * @cap: its elements; doubled when it is full.
 * @nr: the element to make room for.
 * @elem: the size of one.
 * @big: whether *@arr is mapped; set once it becomes so, when its
 *	contents move into a mapping.
 *
 * Return: 0, -ENOMEM, or -E2BIG past 2^31 elements.
 */
int sframe_jit__buf_grow(void **arr, uint32_t *cap, uint32_t nr,
			 size_t elem, bool *big)
{
	uint32_t n = *cap ? *cap * 2 : 64;
	size_t bytes = (size_t)n * elem;
	void *p;

	if (nr < *cap)
		return 0;
	if (*cap > UINT32_MAX / 2)
		return -E2BIG;
	if (*big) {
		p = sframe_jit__big_resize(*arr, (size_t)*cap * elem, bytes);
	} else if (bytes < SFRAME_JIT__BIG_MIN) {
		p = realloc(*arr, bytes);
	} else {
		p = sframe_jit__big_alloc(bytes);
		if (p) {
			memcpy(p, *arr, (size_t)*cap * elem);
			free(*arr);
			*big = true;
		}
	}
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}
