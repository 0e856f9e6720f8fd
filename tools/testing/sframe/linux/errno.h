/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: the system's errno values are the kernel's. */
#ifndef _SFRAME_SHIM_LINUX_ERRNO_H
#define _SFRAME_SHIM_LINUX_ERRNO_H

#include_next <linux/errno.h>

#endif /* _SFRAME_SHIM_LINUX_ERRNO_H */
