/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: refcount_t, which the registry object embeds; nothing
 * built against these shims takes or drops a reference.
 */
#ifndef _SFRAME_LOOKUP_LINUX_REFCOUNT_H
#define _SFRAME_LOOKUP_LINUX_REFCOUNT_H

typedef struct {
	int refs;
} refcount_t;

#endif /* _SFRAME_LOOKUP_LINUX_REFCOUNT_H */
