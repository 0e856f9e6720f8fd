/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the per-mm index as far as sframe_lookup.c names it.
 * What is built against these shims calls sframe_region_find() on index
 * entries of its own making and never searches an index, so the tree
 * holds nothing and mtree_load() finds nothing.
 */
#ifndef _SFRAME_LOOKUP_LINUX_MAPLE_TREE_H
#define _SFRAME_LOOKUP_LINUX_MAPLE_TREE_H

#include <stddef.h>

struct maple_tree {
	void *root;
};

static inline void *mtree_load(struct maple_tree *mt, unsigned long index)
{
	return NULL;
}

#endif /* _SFRAME_LOOKUP_LINUX_MAPLE_TREE_H */
