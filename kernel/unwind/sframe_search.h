/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checked binary search that the ELF section decoder and the JIT
 * registry reader share: both search records that the process wrote and
 * may have left out of order.
 */
#ifndef _KERNEL_UNWIND_SFRAME_SEARCH_H
#define _KERNEL_UNWIND_SFRAME_SEARCH_H

#include <linux/types.h>

/*
 * Binary search for the last entry whose key is at or below a target.
 * It checks each key it probes against those probed before: the keys
 * must be sorted (strictly, with @strict) and lie within [@lo_key,
 * @hi_key].  A key out of order ends the search: a table the process
 * left unsorted is malformed, never searched into a wrong entry.
 */
struct sframe_search {
	u32 lo;
	u32 hi;
	unsigned long lo_key;
	unsigned long hi_key;
	bool strict;
};

static inline u32 sframe_search_mid(const struct sframe_search *s)
{
	return s->lo + (s->hi - s->lo) / 2;
}

/* Narrow the search by @key, that of entry @mid; false if out of order. */
static inline bool sframe_search_step(struct sframe_search *s, u32 mid,
				      unsigned long key, unsigned long target)
{
	if (key <= target) {
		if (key < s->lo_key || (s->strict && key == s->lo_key))
			return false;
		s->lo = mid + 1;
		s->lo_key = key;
	} else {
		if (key > s->hi_key || (s->strict && key == s->hi_key))
			return false;
		s->hi = mid;
		s->hi_key = key;
	}
	return true;
}

#endif /* _KERNEL_UNWIND_SFRAME_SEARCH_H */
