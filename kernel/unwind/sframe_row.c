// SPDX-License-Identifier: GPL-2.0
/*
 * The evaluation of a frame row, which ELF SFrame rows and JIT registry
 * rows share: where the caller's stack pointer, return address and frame
 * pointer are.  See sframe_row.h.
 */
#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/overflow.h>

#include "sframe_row.h"

/* @addr + @off, false if that leaves the address space. */
static bool sframe_add_off(unsigned long addr, s32 off, unsigned long *res)
{
	if (off < 0)
		return !check_sub_overflow(addr, (unsigned long)-(long)off, res);
	return !check_add_overflow(addr, (unsigned long)off, res);
}

/**
 * sframe_row_apply() - evaluate a frame row
 * @row: the row that applies at the frame's PC.
 * @sp: the frame's stack pointer.
 * @fp: the frame's frame pointer.
 * @step: where the caller's state is, on success.
 *
 * Computes the CFA, which is the caller's stack pointer, and the
 * addresses the caller's return address and frame pointer are saved at.
 * Reading them, with the nofault user accessors, is the caller's job, as
 * is checking that the stack moves the right way.
 *
 * Return: 0; -ENOENT if @row marks the outermost frame (the unwind is
 * complete); -ERANGE if an address would wrap around; -EINVAL for an
 * unknown CFA base register.
 */
int sframe_row_apply(const struct sframe_row *row, unsigned long sp,
		     unsigned long fp, struct sframe_step *step)
{
	unsigned long base;

	if (row->ra_undefined)
		return -ENOENT;
	if (row->cfa_base == SFRAME_CFA_BASE_SP)
		base = sp;
	else if (row->cfa_base == SFRAME_CFA_BASE_FP)
		base = fp;
	else
		return -EINVAL;
	if (!sframe_add_off(base, row->cfa_off, &step->cfa) ||
	    !sframe_add_off(step->cfa, row->ra_off, &step->ra_addr))
		return -ERANGE;
	step->fp_saved = row->fp_saved;
	step->fp_addr = 0;
	if (row->fp_saved &&
	    !sframe_add_off(step->cfa, row->fp_off, &step->fp_addr))
		return -ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sframe_row_apply);
