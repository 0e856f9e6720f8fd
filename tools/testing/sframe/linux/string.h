/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: the C library's string functions. */
#ifndef _SFRAME_SHIM_LINUX_STRING_H
#define _SFRAME_SHIM_LINUX_STRING_H

#include_next <linux/string.h>
#include <string.h>

#endif /* _SFRAME_SHIM_LINUX_STRING_H */
