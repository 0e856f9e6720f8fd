/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A frame row: the rule that gives a frame's caller state, as both the
 * ELF section decoder and the JIT registry reader return it, and its
 * evaluation (sframe_row.c).  Nothing here touches a task or an mm.
 */
#ifndef _KERNEL_UNWIND_SFRAME_ROW_H
#define _KERNEL_UNWIND_SFRAME_ROW_H

#include <linux/types.h>

/* struct sframe_row.cfa_base */
enum sframe_cfa_base {
	SFRAME_CFA_BASE_SP,
	SFRAME_CFA_BASE_FP,
};

/**
 * struct sframe_row - the frame rule that applies at one PC
 * @cfa_base: enum sframe_cfa_base, the register the CFA is computed from.
 * @ra_undefined: outermost frame: there is no return address, and the
 *	unwind ends here.  The other fields are then zero.
 * @fp_saved: the caller's frame pointer is saved at CFA + @fp_off;
 *	otherwise the frame pointer is unchanged in the caller.
 * @signal: the function is a signal frame (SFrame version 3): the
 *	return address is not that of a call.
 * @cfa_off: CFA = @cfa_base + @cfa_off.
 * @ra_off: the return address is saved at CFA + @ra_off.
 * @fp_off: see @fp_saved.
 *
 * The same rule describes ELF SFrame rows and JIT registry rows; the
 * caller's stack pointer is the CFA.  sframe_row_apply() evaluates it.
 */
struct sframe_row {
	u8 cfa_base;
	bool ra_undefined;
	bool fp_saved;
	bool signal;
	s32 cfa_off;
	s32 ra_off;
	s32 fp_off;
};

/**
 * enum sframe_find_result - outcome of a PC lookup
 * @SFRAME_FIND_HIT: the row for the PC was found.
 * @SFRAME_FIND_NONE: nothing describes the PC: no function covers it, or
 *	(ELF) its function has no row at or before it.
 * @SFRAME_FIND_TOMBSTONE: (JIT) the function covering the PC was
 *	reclaimed.
 * @SFRAME_FIND_RETRY: (JIT) the registry was being rewritten (its
 *	sequence count was odd or changed); the PC is unknown this time.
 * @SFRAME_FIND_MALFORMED: the descriptor or rows met on the way are
 *	malformed, or use a rule this decoder does not handle.
 *
 * Only a hit gives a row.  For every other result the unwinder treats
 * the frame as undescribed and falls back to the frame pointer.
 */
enum sframe_find_result {
	SFRAME_FIND_HIT,
	SFRAME_FIND_NONE,
	SFRAME_FIND_TOMBSTONE,
	SFRAME_FIND_RETRY,
	SFRAME_FIND_MALFORMED,
};

/**
 * struct sframe_step - where one frame's caller state is, per its row
 * @cfa: the canonical frame address, which is the caller's stack pointer.
 * @ra_addr: user address the return address is to be read from.
 * @fp_addr: user address the caller's frame pointer is to be read from,
 *	if @fp_saved.
 * @fp_saved: the frame pointer was saved; otherwise it is unchanged.
 */
struct sframe_step {
	unsigned long cfa;
	unsigned long ra_addr;
	unsigned long fp_addr;
	bool fp_saved;
};

int sframe_row_apply(const struct sframe_row *row, unsigned long sp,
		     unsigned long fp, struct sframe_step *step);

#endif /* _KERNEL_UNWIND_SFRAME_ROW_H */
