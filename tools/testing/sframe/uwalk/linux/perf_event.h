/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the callchain entry that sframe_callchain_user() fills,
 * and perf_callchain_store() as the kernel has it, without contexts.
 */
#ifndef _SFRAME_UWALK_LINUX_PERF_EVENT_H
#define _SFRAME_UWALK_LINUX_PERF_EVENT_H

#include <linux/types.h>

struct perf_callchain_entry {
	u64 nr;
	u64 *ip;
};

struct perf_callchain_entry_ctx {
	struct perf_callchain_entry *entry;
	u32 max_stack;
	u32 nr;
};

static inline int perf_callchain_store(struct perf_callchain_entry_ctx *ctx,
				       u64 ip)
{
	if (ctx->nr >= ctx->max_stack)
		return -1;
	ctx->entry->ip[ctx->entry->nr++] = ip;
	ctx->nr++;
	return 0;
}

#endif /* _SFRAME_UWALK_LINUX_PERF_EVENT_H */
