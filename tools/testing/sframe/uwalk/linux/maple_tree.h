/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: struct sframe_mm embeds a maple tree; uwalk.c keeps
 * its own sorted array of regions instead and never touches this one.
 */
#ifndef _SFRAME_UWALK_LINUX_MAPLE_TREE_H
#define _SFRAME_UWALK_LINUX_MAPLE_TREE_H

struct maple_tree {
	void *root;
};

#endif /* _SFRAME_UWALK_LINUX_MAPLE_TREE_H */
