/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: <linux/sframe_register.h> includes it for others. */
#ifndef _SFRAME_UWALK_LINUX_REFCOUNT_H
#define _SFRAME_UWALK_LINUX_REFCOUNT_H

#endif /* _SFRAME_UWALK_LINUX_REFCOUNT_H */
