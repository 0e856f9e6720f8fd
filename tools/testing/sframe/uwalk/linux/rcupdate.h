/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the walker's tables are set up once before any walk
 * and never freed while one runs, so RCU reduces to plain accesses.
 */
#ifndef _SFRAME_UWALK_LINUX_RCUPDATE_H
#define _SFRAME_UWALK_LINUX_RCUPDATE_H

#define __rcu

struct rcu_head {
	void *next;
};

#define rcu_read_lock()		do { } while (0)
#define rcu_read_unlock()	do { } while (0)
#define rcu_access_pointer(p)	(p)
#define rcu_dereference(p)	(p)

#endif /* _SFRAME_UWALK_LINUX_RCUPDATE_H */
