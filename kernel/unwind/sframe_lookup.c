// SPDX-License-Identifier: GPL-2.0
/*
 * The lookup the unwinder (sframe_user.c) makes for each frame, in NMI
 * or IRQ context: the registration covering a PC, from the per-mm index
 * under RCU, and its frame row, from a JIT registry through the kernel's
 * mapping and private view of its layout or from an ELF section's
 * validated copy.  Nothing here sleeps, locks or faults.
 */
#include <linux/maple_tree.h>
#include <linux/mm_types.h>
#include <linux/rcupdate.h>
#include <uapi/linux/sframe_jit.h>

#include "sframe_internal.h"
#include "sframe_lookup.h"

/**
 * sframe_region_lookup() - find the registration covering an address
 * @mm: the process.
 * @addr: a user address.
 *
 * Safe in NMI context.  The caller holds rcu_read_lock() for as long as
 * it uses the result.
 *
 * Return: the entry, or NULL if no registration covers @addr.
 */
struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr)
{
	struct sframe_mm *smm = rcu_dereference(mm->sframe);

	return smm ? mtree_load(&smm->index, addr) : NULL;
}

/**
 * sframe_region_covers() - does an entry cover an address?
 * @r: an entry found by sframe_region_lookup(), under the same RCU read
 *	section.
 * @addr: a user address.
 *
 * Safe in NMI context: the range of an entry never changes.
 *
 * Return: true if @addr is in the entry's range.
 */
bool sframe_region_covers(const struct sframe_region *r, unsigned long addr)
{
	return addr >= r->start && addr < r->end;
}

/*
 * The kernel's counters in the registry's header, approximate by design,
 * kept only when the process asked for them: otherwise a sample would
 * tell it that it is being sampled, and each sampling CPU would write a
 * line of its memory.
 */
static void sframe_jit_count(const struct sframe_jit_reg *reg,
			     enum sframe_find_result res)
{
	/* The kernel's own fields in the shared header. */
	struct sframe_jit_header *h = (void *)reg->view.base;
	struct sframe_jit_stats *st = &h->stats;
	__u64 *c = NULL;

	if (!reg->view.stats)
		return;
	WRITE_ONCE(st->lookups, READ_ONCE(st->lookups) + 1);
	switch (res) {
	case SFRAME_FIND_HIT:
		c = &st->hits;
		break;
	case SFRAME_FIND_TOMBSTONE:
		c = &st->tombstone_hits;
		break;
	case SFRAME_FIND_RETRY:
		c = &st->seq_retries;
		break;
	case SFRAME_FIND_MALFORMED:
		c = &st->malformed;
		break;
	case SFRAME_FIND_NONE:
		break;
	}
	if (c)
		WRITE_ONCE(*c, READ_ONCE(*c) + 1);
}

/**
 * sframe_region_find() - the frame row of a registered region for a PC
 * @r: an entry found by sframe_region_lookup(), under the same RCU read
 *	section.
 * @pc: the address to look up.
 * @row: filled in on a hit.
 * @reads: increased by the records the lookup read, for a JIT registry
 *	the most it may read (sframe_jit_max_reads()).
 *
 * Safe in NMI context: a JIT registry is read through the kernel's
 * mapping with the layout the kernel keeps privately, and its counters
 * are updated if it has them; an ELF section is read from the table
 * converted from the kernel's copy.  A section registered at exec whose
 * table is not built yet describes nothing: its build is asked for.
 *
 * Return: an enum sframe_find_result.
 */
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row, u32 *reads)
{
	enum sframe_find_result res;
	u32 n;

	if (r->kind == SFRAME_REGION_ELF) {
		/* Registered at exec, its table is built when first wanted. */
		if (!r->elf) {
			sframe_exec_want(r);
			return SFRAME_FIND_NONE;
		}
		res = sframe_table_find_reads(r->elf->table, pc - r->bias, row,
					      &n);
		*reads += n;
		return res;
	}
	*reads += sframe_jit_max_reads(&r->jit->view);
	res = sframe_jit_find(&r->jit->view, pc, row);
	sframe_jit_count(r->jit, res);
	return res;
}
