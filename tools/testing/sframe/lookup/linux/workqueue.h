/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: struct work_struct, which the registry object embeds
 * to be freed in process context; nothing here queues it.
 */
#ifndef _SFRAME_LOOKUP_LINUX_WORKQUEUE_H
#define _SFRAME_LOOKUP_LINUX_WORKQUEUE_H

struct work_struct {
	void (*func)(struct work_struct *work);
};

#endif /* _SFRAME_LOOKUP_LINUX_WORKQUEUE_H */
