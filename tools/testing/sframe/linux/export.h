/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: nothing to export symbols to.  The decoder exports only
 * through EXPORT_SYMBOL_IF_KUNIT(), see kunit/visibility.h.
 */
#ifndef _SFRAME_SHIM_LINUX_EXPORT_H
#define _SFRAME_SHIM_LINUX_EXPORT_H

#endif /* _SFRAME_SHIM_LINUX_EXPORT_H */
