// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One FDE's rows as libdw computes them: the reference the CFA
 * interpreter (cfa.c) is checked against (make cfi-check), and what
 * converts the FDEs the interpreter leaves to libdw.
 *
 * libdw evaluates the CFA program; this file only reads the rules it
 * reports at each point and keeps those a row can say.  What is
 * expressible, and why the rest is not, is in
 * Documentation/sframe_jit.rst ("Converting DWARF CFI").
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

/* DWARF register numbers of the x86-64 psABI. */
#define DWARF_RBP		6
#define DWARF_RSP		7
#define DWARF_RA		16

/* A call pushes the return address just below the CFA. */
#define X86_64_RA_OFF		(-8)

/*
 * A location rule that says "saved at CFA + *@off".  libdw states
 * DW_CFA_offset and its kin as DW_OP_call_frame_cfa followed, for a
 * non-zero offset, by DW_OP_plus_uconst of the offset even when it is
 * negative: the operand is its two's complement, added modulo 2^64.  An
 * expression rule (DW_CFA_expression) comes as the same operations when
 * its expression only adds a constant to the CFA, which libdw pushes
 * first, and means the same.  Value rules end in DW_OP_stack_value and
 * are not locations.
 */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The CFA: DW_CFA_def_cfa and its kin come as DW_OP_bregx; an
 * expression (DW_CFA_def_cfa_expression) of one DW_OP_bregN is the
 * same value.  Stack realignment through a dynamic realignment
 * argument pointer (DRAP) puts the CFA in another register (r10 or r13
 * with GCC), then in an expression; under a frame pointer it needs
 * neither, and converts.
 */
static bool cfa_rule(const struct sframe_jit__dw *dw, Dwarf_Frame *frame,
		     struct sframe_jit_row *row, unsigned int *why)
{
	Dwarf_Op *ops;
	size_t nops;
	uint64_t reg;
	int64_t off;

	if (dw->frame_cfa(frame, &ops, &nops) || !nops) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 &&
		   ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		*why = SFRAME_JIT_CFI_CFA_EXPR;
		return false;
	}
	if (reg != DWARF_RSP && reg != DWARF_RBP) {
		*why = SFRAME_JIT_CFI_CFA_REG;
		return false;
	}
	if (off < INT32_MIN || off > INT32_MAX) {
		*why = SFRAME_JIT_CFI_RANGE;
		return false;
	}
	row->cfa_base = reg == DWARF_RSP ? SFRAME_JIT_ROW_CFA_SP :
					   SFRAME_JIT_ROW_CFA_FP;
	row->cfa_off = off;
	return true;
}

/*
 * The return address, which is not undefined: at CFA - 8, which is what
 * a call leaves and what an SFrame section for x86-64 fixes.
 */
static bool ra_rule(const Dwarf_Op *ops, size_t nops,
		    struct sframe_jit_row *row, unsigned int *why)
{
	int64_t off;

	if (!at_cfa(ops, nops, &off) || off != X86_64_RA_OFF) {
		*why = SFRAME_JIT_CFI_RA_RULE;
		return false;
	}
	row->ra_off = off;
	return true;
}

/*
 * The caller's RBP: saved at CFA + offset, or not touched.  libdw starts
 * every x86-64 FDE from the psABI's state, in which RBP, callee-saved,
 * has the same value; "undefined" says the caller's value is lost, and a
 * row can only say it is still in RBP, as a frame pointer walk assumes.
 */
static bool rbp_rule(const struct sframe_jit__dw *dw, Dwarf_Frame *frame,
		     struct sframe_jit_row *row, unsigned int *why)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dw->frame_register(frame, DWARF_RBP, mem, &ops, &nops)) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	if (!nops)
		return true;
	if (!at_cfa(ops, nops, &off)) {
		*why = SFRAME_JIT_CFI_RBP_RULE;
		return false;
	}
	if (off < INT16_MIN || off > INT16_MAX) {
		*why = SFRAME_JIT_CFI_RANGE;
		return false;
	}
	row->flags |= SFRAME_JIT_ROW_FP_SAVED;
	row->fp_off = off;
	return true;
}

/*
 * The row of one state, all but its start; or why there is none, the
 * CFA's reason before the return address's before RBP's.  An undefined
 * return address marks the outermost frame (_start, a new thread's
 * first function), where nothing else of the frame matters: the unwind
 * stops there.
 */
static bool frame_row(const struct sframe_jit__dw *dw, Dwarf_Frame *frame,
		      struct sframe_jit_row *row, unsigned int *why)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	memset(row, 0, sizeof(*row));
	if (dw->frame_register(frame, DWARF_RA, mem, &ops, &nops)) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	/* No operations and not NULL: "undefined". */
	if (!nops && ops) {
		row->cfa_base = SFRAME_JIT_ROW_CFA_SP;
		row->flags = SFRAME_JIT_ROW_RA_UNDEFINED;
		return true;
	}
	return cfa_rule(dw, frame, row, why) &&
	       ra_rule(ops, nops, row, why) && rbp_rule(dw, frame, row, why);
}

/*
 * The state of @fde at @addr as libdw computes it, and in *@end where
 * that state stops holding.
 *
 * dwarf_frame_info() reports the span [start, end) of the state: libdw
 * replays the FDE's program from its start, and start and end are the
 * locations its advances (DW_CFA_advance_loc*, DW_CFA_set_loc) reach on
 * either side of @addr, or the FDE's own bounds.  Only an advance starts
 * a new state, so no rule changes inside a span: probing at the FDE's
 * start, then at each span's end, visits every state once and skips
 * none, with one probe per advance.  Each probe replays the program
 * from the start, quadratic in the advances of one FDE, which is why
 * cfa.c interprets the programs itself and leaves only what it cannot
 * be sure of to this file.
 *
 * A span that does not hold @addr, or that begins below the FDE, would
 * be another FDE's (which the overlap check rules out) or that of a
 * program that moves backwards: malformed.
 */
static bool probe(const struct sframe_jit__dw *dw, Dwarf_CFI *cfi,
		  const struct sframe_jit__fde *fde, uint64_t addr,
		  struct sframe_jit_row *row, uint64_t *end, unsigned int *why)
{
	Dwarf_Addr start, stop;
	Dwarf_Frame *frame;
	bool signal, ok = false;
	int ra;

	if (dw->cfi_addrframe(cfi, addr, &frame)) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	ra = dw->frame_info(frame, &start, &stop, &signal);
	if (ra < 0 || start > addr || stop <= addr || start < fde->lo)
		*why = SFRAME_JIT_CFI_MALFORMED;
	else if (signal)
		*why = SFRAME_JIT_CFI_SIGNAL;
	else if (ra != DWARF_RA)
		*why = SFRAME_JIT_CFI_RA_RULE;
	else
		ok = frame_row(dw, frame, row, why);
	free(frame);
	*end = stop < fde->hi ? stop : fde->hi;
	return ok;
}

/**
 * sframe_jit__libdw_fde() - one FDE's rows, as libdw computes them
 * @dw: libdw (sframe_jit__dw()).
 * @cfi: libdw's reading of the object's .eh_frame.
 * @fde: the FDE, neither malformed, empty, overlapping nor too long.
 * @rows: where its rows go, after those there.
 * @why: with SFRAME_JIT__FDE_LEFT_OUT, the reason.
 *
 * Asks libdw for the state at the FDE's start, then at the end of each
 * state (see probe()), and appends a row for each, merging those with
 * the same rules.
 *
 * Return: SFRAME_JIT__FDE_ROWS, SFRAME_JIT__FDE_LEFT_OUT, or -ENOMEM.
 */
int sframe_jit__libdw_fde(const struct sframe_jit__dw *dw, Dwarf_CFI *cfi,
			  const struct sframe_jit__fde *fde,
			  struct sframe_jit__rows *rows, unsigned int *why)
{
	uint32_t first = rows->nr, states = 0;
	struct sframe_jit_row row;
	uint64_t addr, end;
	int err;

	for (addr = fde->lo; addr < fde->hi; addr = end) {
		if (++states > SFRAME_JIT__CFI_MAX_STATES) {
			*why = SFRAME_JIT_CFI_RANGE;
			return SFRAME_JIT__FDE_LEFT_OUT;
		}
		if (!probe(dw, cfi, fde, addr, &row, &end, why))
			return SFRAME_JIT__FDE_LEFT_OUT;
		row.start_off = addr - fde->lo;
		err = sframe_jit__rows_push(rows, first, &row);
		if (err)
			return err;
	}
	return SFRAME_JIT__FDE_ROWS;
}
