/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: what the kernel exports to its KUnit module is an
 * ordinary global here, as tools/include/linux/export.h has it.
 */
#ifndef _SFRAME_SHIM_KUNIT_VISIBILITY_H
#define _SFRAME_SHIM_KUNIT_VISIBILITY_H

#define EXPORT_SYMBOL_IF_KUNIT(symbol)

#endif /* _SFRAME_SHIM_KUNIT_VISIBILITY_H */
