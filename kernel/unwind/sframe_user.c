// SPDX-License-Identifier: GPL-2.0
/*
 * The SFrame user stack walker behind perf_event_attr.callchain_sframe
 * and BPF_F_USER_SFRAME.
 *
 * It runs in NMI or IRQ context on the sampled task: the tables are
 * found through the mm's index under RCU (sframe_register.c), JIT
 * registries are read through the kernel's mapping and ELF sections
 * from the kernel's validated copy, and the user stack only through the
 * nofault accessor.  A frame no table describes, or whose table turns
 * out unusable, gets one frame-pointer step, as the plain walker would
 * take.  Every step must move up the stack, so the walk ends, except the
 * step out of a signal frame, which may switch stacks and is paid for by
 * the depth limit.  A return address a pending uretprobe replaced is
 * mapped back to the one it replaced before the caller is looked up.
 */
#include <linux/atomic.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sframe_register.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <asm/sframe_walk.h>

#include "sframe_row.h"
#include "sframe_lookup.h"

/*
 * Samples whose walk used up its SFRAME_SAMPLE_MAX_FRAMES frames or its
 * SFRAME_SAMPLE_MAX_READS reads.
 */
static atomic_long_t sframe_budget_stopped;

/**
 * sframe_budget_stops() - samples whose walk hit its budget
 *
 * Return: how many walks stopped at SFRAME_SAMPLE_MAX_FRAMES frames or
 * for want of reads to take one more frame's worst case.
 */
unsigned long sframe_budget_stops(void)
{
	return atomic_long_read(&sframe_budget_stopped);
}

/* The architecture's rt_sigreturn trampoline (asm/sframe_walk.h). */
static const u8 sframe_sigreturn_insn[] = SFRAME_ARCH_SIGRETURN_INSN;

/*
 * Where the walk stands: the frame being unwound.  @exact_pc: the PC is
 * not a return address (the sampled one, or one a signal interrupted).
 * @at_entry: the frame is at its function's first instruction, which
 * has not run yet.  @reads: the records and user words read so far, for
 * SFRAME_SAMPLE_MAX_READS.
 */
struct sframe_walk {
	unsigned long pc;
	unsigned long sp;
	unsigned long fp;
	bool exact_pc;
	bool at_entry;
	u32 reads;
	struct sframe_region *last;
};

static bool sframe_read_word(struct sframe_walk *w, unsigned long addr,
			     unsigned long *val)
{
	w->reads++;
	if (!IS_ALIGNED(addr, sizeof(long)))
		return false;
	return !copy_from_user_nofault(val, (const void __user *)addr,
				       sizeof(*val));
}

/*
 * One frame-pointer step: the frame record at fp holds the caller's fp
 * and the return address (asm/sframe_walk.h).  Returns false where there
 * is no such record.
 */
static bool sframe_fp_step(struct sframe_walk *w)
{
	unsigned long next_fp, ra;

	if (w->fp < w->sp || w->fp > TASK_SIZE - SFRAME_ARCH_FP_RECORD_SIZE)
		return false;
	if (!sframe_read_word(w, w->fp + SFRAME_ARCH_FP_RECORD_FP, &next_fp) ||
	    !sframe_read_word(w, w->fp + SFRAME_ARCH_FP_RECORD_RA, &ra))
		return false;
	w->sp = w->fp + SFRAME_ARCH_FP_RECORD_SIZE;
	w->fp = next_fp;
	w->pc = ra;
	return true;
}

/*
 * The step for a function stopped on its first instruction: nothing is
 * pushed yet, the return address is at the stack pointer and the frame
 * pointer is still the caller's.  A frame-pointer step there would skip
 * the caller.
 */
static bool sframe_entry_step(struct sframe_walk *w)
{
	unsigned long ra;

	if (w->sp > TASK_SIZE - SFRAME_ARCH_ENTRY_RA_SIZE ||
	    !sframe_read_word(w, w->sp, &ra))
		return false;
	w->sp += SFRAME_ARCH_ENTRY_RA_SIZE;
	w->pc = ra;
	return true;
}

/* The step for a frame no table describes, or whose row cannot be used. */
static bool sframe_fallback_step(struct sframe_walk *w, bool at_entry)
{
	unsigned long old_sp = w->sp;

	if (at_entry ? !sframe_entry_step(w) : !sframe_fp_step(w))
		return false;
	return w->sp > old_sp;
}

/*
 * Whether @pc is a signal trampoline: the handler returned there.  The
 * nine bytes are read as the two aligned words that hold them wherever
 * they start, which lie on the pages the bytes do.
 */
static bool sframe_at_sigreturn(struct sframe_walk *w)
{
	unsigned long at = w->pc & ~(sizeof(long) - 1);
	unsigned long insn[2];

	if (!sframe_read_word(w, at, &insn[0]) ||
	    !sframe_read_word(w, at + sizeof(long), &insn[1]))
		return false;
	return !memcmp((u8 *)insn + (w->pc - at), sframe_sigreturn_insn,
		       sizeof(sframe_sigreturn_insn));
}

/*
 * The step out of a signal frame: the interrupted registers are in the
 * frame's sigcontext, where the architecture says (asm/sframe_walk.h).
 * They may be on another stack (sigaltstack), above or below this one.
 */
static bool sframe_signal_step(struct sframe_walk *w)
{
	unsigned long sc, ip, sp, fp;

	if (w->sp < sizeof(long) ||
	    w->sp > TASK_SIZE - SFRAME_ARCH_SIGFRAME_SIZE)
		return false;
	sc = sframe_arch_sigcontext(w->sp);
	if (!sframe_read_word(w, sc + SFRAME_ARCH_SC_PC, &ip) ||
	    !sframe_read_word(w, sc + SFRAME_ARCH_SC_SP, &sp) ||
	    !sframe_read_word(w, sc + SFRAME_ARCH_SC_FP, &fp))
		return false;
	if (sp >= TASK_SIZE)
		return false;
	w->pc = ip;
	w->sp = sp;
	w->fp = fp;
	/* The interrupted PC is the next instruction to run, not a return. */
	w->exact_pc = true;
	return true;
}

/*
 * One step by a frame row: read the return address and the saved frame
 * pointer where the row says.  Returns 1 for a step taken, 0 at the
 * outermost frame, -1 where the row cannot be followed.
 */
static int sframe_row_step(struct sframe_walk *w, const struct sframe_row *row)
{
	struct sframe_step step;
	unsigned long ra, fp = w->fp;
	int ret;

	ret = sframe_row_apply(row, w->sp, w->fp, &step);
	if (ret == -ENOENT)
		return 0;
	if (ret || step.cfa <= w->sp || step.cfa > TASK_SIZE)
		return -1;
	if (!sframe_read_word(w, step.ra_addr, &ra))
		return -1;
	if (step.fp_saved && !sframe_read_word(w, step.fp_addr, &fp))
		return -1;
	w->sp = step.cfa;
	w->fp = fp;
	w->pc = ra;
	return 1;
}

/*
 * The registration covering @pc: most frames of a stack return into the
 * object of the frame before, so the entry found last is tried before
 * the index.  An entry stays valid for the whole walk, under its RCU
 * read section, even if it is removed meanwhile: the walk then sees the
 * registrations as they were when it started, as it would a moment
 * earlier.
 */
static struct sframe_region *sframe_region_cached(struct mm_struct *mm,
						  struct sframe_walk *w,
						  unsigned long pc)
{
	struct sframe_region *r = w->last;

	if (r && sframe_region_covers(r, pc))
		return r;
	w->reads += SFRAME_INDEX_MAX_READS;
	r = sframe_region_lookup(mm, pc);
	if (r)
		w->last = r;
	return r;
}

#ifdef CONFIG_UPROBES
#include <linux/uprobes.h>

/*
 * The task's pending uretprobe returns the walk has not met yet, newest
 * first, and the trampoline each of them put in place of a return
 * address.
 */
struct sframe_uret {
	const struct return_instance *next;
	unsigned long tramp;
};

static void sframe_uret_init(struct sframe_uret *u)
{
	struct uprobe_task *utask = current->utask;

	u->next = utask ? READ_ONCE(utask->return_instances) : NULL;
	u->tramp = u->next ? uprobe_get_trampoline_vaddr() : 0;
}

/*
 * A pending uretprobe put its trampoline where the probed function's
 * return address was; no table describes the trampoline, and its
 * caller's is the one to look up.  Map @pc, where the frame now being
 * unwound returns to with stack pointer @sp, back to that return
 * address.  The trampolines up the stack are the task's return
 * instances in their order; a run of chained ones (a probed function
 * tail-called by another) shares one trampoline.  As when the
 * trampoline runs (uprobe_handle_trampoline(), with x86's rule for a
 * return in arch_uretprobe_is_alive()), a run is passed over when the
 * next run's stack pointer at entry lies below @sp: the return address
 * just read is that next run's, or an older one's, and the function of
 * the run passed over was left by longjmp() without the kernel
 * dropping its instance yet.
 *
 * The list is the task's own and the walk runs on it, so no instance is
 * freed meanwhile; the walk only moves on along it, and it is no longer
 * than MAX_URETPROBE_DEPTH.  Returns false when no instance is left for
 * the trampoline: the return address is lost, and the walk ends.
 */
static bool sframe_uret_pc(struct sframe_uret *u, unsigned long *pc,
			   unsigned long sp)
{
	const struct return_instance *ri = u->next, *next;

	if (!u->tramp || *pc != u->tramp)
		return true;
	for (;;) {
		if (!ri)
			return false;
		for (next = ri; next->chained && next->next; next = next->next)
			;
		next = next->next;
		if (!next || sp <= next->stack)
			break;
		ri = next;
	}
	*pc = ri->orig_ret_vaddr;
	u->next = next;
	return true;
}
#else
struct sframe_uret {
};

static void sframe_uret_init(struct sframe_uret *u)
{
}

static bool sframe_uret_pc(struct sframe_uret *u, unsigned long *pc,
			   unsigned long sp)
{
	return true;
}
#endif

/*
 * Unwind one frame.  For a caller's frame the PC is a return address,
 * which may lie just past the end of the calling function: look up the
 * byte before it.  A table that describes the frame wins over the
 * entry rule, as it does over frame pointers.  A signal frame is one
 * the table marks, or, where no table describes it, the trampoline's
 * code at the PC.
 */
static bool sframe_step(struct mm_struct *mm, struct sframe_walk *w)
{
	unsigned long pc = w->exact_pc ? w->pc : w->pc - 1;
	bool at_entry = w->at_entry;
	struct sframe_region *r;
	struct sframe_row row;
	int ret;

	w->exact_pc = false;
	w->at_entry = false;
	r = sframe_region_cached(mm, w, pc);
	if (r && sframe_region_find(r, pc, &row, &w->reads) ==
		 SFRAME_FIND_HIT) {
		if (row.signal)
			return sframe_signal_step(w);
		ret = sframe_row_step(w, &row);
		if (ret >= 0)
			return ret > 0;
	} else if (sframe_at_sigreturn(w)) {
		return sframe_signal_step(w);
	}
	return sframe_fallback_step(w, at_entry);
}

/**
 * sframe_callchain_user() - walk the current task's user stack by SFrame
 * @entry: the callchain being filled; the sampled PC is already in it.
 * @pc: the sampled user instruction pointer.
 * @sp: the user stack pointer.
 * @fp: the user frame pointer.
 * @at_entry: the task is stopped on the first instruction of a function
 *	(a uprobe there), before it pushed anything.  Where no table
 *	describes that function, its return address is taken from @sp.
 *
 * Safe in NMI context.  The walk stops at the outermost frame a table
 * marks, at the depth limit, after SFRAME_SAMPLE_MAX_FRAMES frames or
 * before a frame whose worst case would take its reads past
 * SFRAME_SAMPLE_MAX_READS (both counted, see sframe_budget_stops()), at
 * a frame neither a table nor a frame record describes, or when the
 * stack pointer would not move up; only the step out of a signal frame
 * may move it anywhere.  Where a
 * pending uretprobe's trampoline stands for a return address, the chain
 * holds the return address, the sampled PC included.
 *
 * Return: true if the walk was done here; false if the task registered
 * no tables, for the caller to walk frame pointers as before.
 */
bool sframe_callchain_user(struct perf_callchain_entry_ctx *entry,
			   unsigned long pc, unsigned long sp, unsigned long fp,
			   bool at_entry)
{
	struct sframe_walk w = {
		.pc = pc, .sp = sp, .fp = fp,
		.exact_pc = true, .at_entry = at_entry,
	};
	struct mm_struct *mm = current->mm;
	unsigned int frames = 0;
	struct sframe_uret uret;

	if (!mm || !rcu_access_pointer(mm->sframe))
		return false;
	/*
	 * Trampolines are mapped back before their caller is looked up, and
	 * the chain keeps none for perf's fix-up after the walk to assign
	 * again: it would start over at the newest instance.  A task stopped
	 * on the trampoline is about to run its caller's code; the sampled
	 * PC, stored last, is mapped in place.
	 */
	sframe_uret_init(&uret);
	if (!sframe_uret_pc(&uret, &w.pc, w.sp))
		return true;
	if (w.pc != pc && entry->entry->nr &&
	    entry->entry->ip[entry->entry->nr - 1] == pc)
		entry->entry->ip[entry->entry->nr - 1] = w.pc;
	rcu_read_lock();
	while (entry->nr < entry->max_stack) {
		/* Bounds the sample's work whatever the depth limit. */
		if (frames++ == SFRAME_SAMPLE_MAX_FRAMES ||
		    w.reads > SFRAME_SAMPLE_MAX_READS - SFRAME_FRAME_MAX_READS) {
			atomic_long_inc(&sframe_budget_stopped);
			break;
		}
		if (!sframe_step(mm, &w) || !sframe_uret_pc(&uret, &w.pc, w.sp) ||
		    !w.pc || w.pc >= TASK_SIZE)
			break;
		if (perf_callchain_store(entry, w.pc))
			break;
	}
	rcu_read_unlock();
	return true;
}
