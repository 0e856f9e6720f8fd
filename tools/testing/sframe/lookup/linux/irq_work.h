/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: struct irq_work, which the per-mm index embeds to ask
 * for the tables of sections registered at exec; nothing here raises it.
 */
#ifndef _SFRAME_LOOKUP_LINUX_IRQ_WORK_H
#define _SFRAME_LOOKUP_LINUX_IRQ_WORK_H

struct irq_work {
	void (*func)(struct irq_work *work);
};

#endif /* _SFRAME_LOOKUP_LINUX_IRQ_WORK_H */
