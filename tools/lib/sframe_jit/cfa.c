// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A single-pass interpreter of the x86-64 CFA programs of .eh_frame,
 * which gives each FDE exactly the rows, or the reason to leave it out,
 * that the libdw path (cfi_libdw.c) gives it, at one step per
 * instruction instead of one replay of the program per state.
 *
 * The libdw path asks for the state at a probe address, which libdw
 * computes by replaying the program up to the first advance past the
 * probe, and probes next where that advance goes.  Every advance the
 * replay passed is at or below the probe, so below the next one too:
 * the next replay passes the same instructions into the same state and
 * goes on from there.  One pass over the program therefore serves every
 * probe; this file keeps the probe address, and the advance past it ends
 * the probe (probe_end()).  The span libdw would report, and check, is
 * the state's @start.
 *
 * Whatever libdw would fail on, or might parse otherwise than this file
 * (DWARF expressions with operations beyond a plain few, pointer
 * encodings other than eh_frame.c's, operands cut short, register
 * numbers libdw refuses), the interpreter does not guess at: it leaves
 * the FDE to libdw (SFRAME_JIT__FDE_DEFER), which converts it as it
 * always did.  Debian 12's objects have none; make cfi-check compares
 * the two paths FDE by FDE.
 *
 * The rules are libdw's: an FDE starts from the psABI's state (RBP and
 * the return address have the same value, the CFA is undefined), then
 * its CIE's initial instructions; a register set to nothing is
 * undefined; DW_CFA_restore gives a register its rule after the CIE;
 * libdw keeps a register's offset in 61 bits, and so does this file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_read.h"
#include "sframe_jit_internal.h"

/* DWARF register numbers of the x86-64 psABI. */
#define DWARF_RBP		6
#define DWARF_RSP		7
#define DWARF_RA		16

/* A call pushes the return address just below the CFA. */
#define X86_64_RA_OFF		(-8)

/*
 * Register numbers from which on the FDE goes to libdw, which refuses
 * some of them (INT32_MAX / 8 on): far more than x86-64 has.
 */
#define MAX_REGNO		0x100000

/* Remembered states beyond which the FDE goes to libdw. */
#define MAX_DEPTH		64

/* The rule for RBP or for the return address, as far as a row cares. */
enum slot {
	SLOT_UNDEFINED,		/* undefined, or set to nothing */
	SLOT_SAME,		/* same value */
	SLOT_AT_CFA,		/* saved at CFA + off */
	SLOT_OTHER,		/* a value, or in another register */
};

enum cfa_kind {
	CFA_UNDEFINED,
	CFA_REG,		/* DW_CFA_def_cfa and its kin */
	CFA_EXPR_REG,		/* an expression of one DW_OP_breg */
	CFA_EXPR,		/* any other expression */
	CFA_INVALID,		/* an offset or register set on anything else */
};

struct rule {
	uint8_t slot;
	int64_t off;
};

struct state {
	uint64_t start;
	uint64_t cfa_reg;
	uint64_t cfa_off;
	uint8_t cfa;
	struct rule ra;
	struct rule rbp;
};

/* What became of a CIE's initial instructions. */
enum cie_done {
	CIE_TODO,
	CIE_OK,
	CIE_LIBDW,
};

struct sframe_jit__cfa {
	const struct sframe_jit__eh_frame *eh;
	struct state *cie_states;
	uint8_t *cie_done;
	struct state stack[MAX_DEPTH];
};

/* Results of a step, besides -errno. */
enum {
	GO,
	DONE,
	LEFT_OUT,
	DEFER,
};

/*
 * One run of a program: a CIE's initial instructions (@init NULL), or
 * an FDE's instructions, from its CIE's state @init.
 */
struct run {
	struct sframe_jit__cfa *c;
	const struct sframe_jit__cie *cie;
	const struct state *init;
	const uint8_t *p;
	const uint8_t *end;
	struct state st;
	uint32_t depth;
	uint64_t loc;
	const struct sframe_jit__fde *fde;
	uint64_t probe;
	uint32_t states;
	uint32_t first;
	struct sframe_jit__rows *rows;
	unsigned int why;
};

static bool uleb(struct run *r, uint64_t *v)
{
	return dw_read_uleb(&r->p, r->end, v);
}

static bool sleb(struct run *r, uint64_t *v)
{
	return dw_read_leb(&r->p, r->end, true, v);
}

static bool uleb_reg(struct run *r, uint64_t *reg)
{
	return uleb(r, reg) && *reg < MAX_REGNO;
}

/* A rule's offset as libdw keeps it, in a 61-bit field. */
static int64_t off61(uint64_t v)
{
	return (int64_t)(v << 3) >> 3;
}

static int set_slot(struct run *r, uint64_t reg, enum slot slot,
		    uint64_t off)
{
	struct rule *rule;

	if (reg >= MAX_REGNO)
		return DEFER;
	if (reg == DWARF_RBP)
		rule = &r->st.rbp;
	else if (reg == DWARF_RA)
		rule = &r->st.ra;
	else
		return GO;
	rule->slot = slot;
	rule->off = slot == SLOT_AT_CFA ? off61(off) : 0;
	return GO;
}

/* DW_CFA_restore: not among a CIE's own instructions. */
static int restore(struct run *r, uint64_t reg)
{
	if (!r->init || reg >= MAX_REGNO)
		return DEFER;
	if (reg == DWARF_RBP)
		r->st.rbp = r->init->rbp;
	else if (reg == DWARF_RA)
		r->st.ra = r->init->ra;
	return GO;
}

static int remember(struct run *r)
{
	if (r->depth == MAX_DEPTH)
		return DEFER;
	r->c->stack[r->depth++] = r->st;
	return GO;
}

static int restore_state(struct run *r)
{
	if (!r->depth)
		return DEFER;
	r->st = r->c->stack[--r->depth];
	return GO;
}

static int def_cfa(struct run *r, uint64_t reg, uint64_t off)
{
	r->st.cfa = CFA_REG;
	r->st.cfa_reg = reg;
	r->st.cfa_off = off;
	return GO;
}

/* DW_CFA_def_cfa_register and _offset change only a register's CFA. */
static void cfa_needs_reg(struct run *r)
{
	if (r->st.cfa != CFA_REG)
		r->st.cfa = CFA_INVALID;
}

/*
 * The size of a DWARF operation's operands, for the operations that
 * libdw parses in .eh_frame without a unit and this file trusts it to
 * accept; false for any other.  Branches are left out: libdw checks
 * their targets.
 */
static bool op_skip(uint8_t op, const uint8_t **p, const uint8_t *end)
{
	static const uint8_t fixed[] = {
		[DW_OP_addr] = 8,
		[DW_OP_const1u] = 1, [DW_OP_const1s] = 1,
		[DW_OP_const2u] = 2, [DW_OP_const2s] = 2,
		[DW_OP_const4u] = 4, [DW_OP_const4s] = 4,
		[DW_OP_const8u] = 8, [DW_OP_const8s] = 8,
		[DW_OP_pick] = 1,
		[DW_OP_deref_size] = 1,
	};
	uint64_t v;

	if ((op >= DW_OP_lit0 && op <= DW_OP_lit31) ||
	    (op >= DW_OP_reg0 && op <= DW_OP_reg31))
		return true;
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
		return dw_read_leb(p, end, true, &v);
	switch (op) {
	case DW_OP_constu:
	case DW_OP_plus_uconst:
	case DW_OP_regx:
		return dw_read_uleb(p, end, &v);
	case DW_OP_consts:
		return dw_read_leb(p, end, true, &v);
	case DW_OP_bregx:
		return dw_read_uleb(p, end, &v) &&
		       dw_read_leb(p, end, true, &v);
	case DW_OP_deref: case DW_OP_dup: case DW_OP_drop: case DW_OP_over:
	case DW_OP_swap: case DW_OP_rot: case DW_OP_abs: case DW_OP_and:
	case DW_OP_div: case DW_OP_minus: case DW_OP_mod: case DW_OP_mul:
	case DW_OP_neg: case DW_OP_not: case DW_OP_or: case DW_OP_plus:
	case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: case DW_OP_xor:
	case DW_OP_eq: case DW_OP_ge: case DW_OP_gt: case DW_OP_le:
	case DW_OP_lt: case DW_OP_ne: case DW_OP_nop:
		return true;
	default:
		if (op >= sizeof(fixed) || !fixed[op])
			return false;
		return dw_read_fixed(p, end, fixed[op], false, &v);
	}
}

/* What an expression is, as far as a rule cares. */
enum expr_shape {
	EXPR_UNKNOWN,		/* for libdw to parse */
	EXPR_OTHER,		/* parses, and is none of the below */
	EXPR_BREG,		/* one DW_OP_bregN or DW_OP_bregx */
	EXPR_PLUS,		/* one DW_OP_plus_uconst */
};

/*
 * The block of DW_CFA_def_cfa_expression and its kin at @p, of which the
 * program steps over @len bytes.  For EXPR_BREG, *@reg and *@off; for
 * EXPR_PLUS, *@off.
 */
static enum expr_shape expr_shape(const uint8_t *p, uint64_t len,
				  uint64_t *reg, uint64_t *off)
{
	const uint8_t *end = p + len, *q;
	unsigned int nops = 0;
	uint8_t op = 0;

	for (q = p; q < end; nops++) {
		op = *q++;
		if (!op_skip(op, &q, end))
			return EXPR_UNKNOWN;
	}
	if (!nops || q != end)
		return EXPR_UNKNOWN;
	if (nops > 1)
		return EXPR_OTHER;
	op = *p++;
	if (op == DW_OP_plus_uconst) {
		dw_read_uleb(&p, end, off);
		return EXPR_PLUS;
	}
	if (op >= DW_OP_breg0 && op <= DW_OP_breg31)
		*reg = op - DW_OP_breg0;
	else if (op != DW_OP_bregx || !dw_read_uleb(&p, end, reg))
		return EXPR_OTHER;
	dw_read_leb(&p, end, true, off);
	return EXPR_BREG;
}

/* The block of an expression instruction: its length, then the bytes. */
static bool expr_block(struct run *r, const uint8_t **block, uint64_t *len)
{
	if (!uleb(r, len) || *len > (uint64_t)(r->end - r->p))
		return false;
	*block = r->p;
	r->p += *len;
	return true;
}

/*
 * DW_CFA_def_cfa_expression: one DW_OP_bregN or DW_OP_bregx is a
 * register plus an offset, as the libdw path reads it; another
 * expression is a reason ("cfa_expr") once libdw would parse it.
 */
static int def_cfa_expr(struct run *r)
{
	const uint8_t *block;
	uint64_t len, reg = 0, off = 0;

	if (!expr_block(r, &block, &len))
		return DEFER;
	switch (expr_shape(block, len, &reg, &off)) {
	case EXPR_BREG:
		def_cfa(r, reg, off);
		r->st.cfa = CFA_EXPR_REG;
		return GO;
	case EXPR_OTHER:
	case EXPR_PLUS:
		r->st.cfa = CFA_EXPR;
		return GO;
	default:
		return DEFER;
	}
}

/*
 * DW_CFA_expression and DW_CFA_val_expression.  libdw gives the rule as
 * the expression after a push of the CFA, so a location of one
 * DW_OP_plus_uconst is a slot at the CFA plus its operand, which libdw
 * does not cut to 61 bits; anything else, or a value, is no slot.
 */
static int reg_expr(struct run *r, bool value)
{
	const uint8_t *block;
	uint64_t reg, len, breg, off = 0;
	enum expr_shape shape;

	if (!uleb_reg(r, &reg) || !expr_block(r, &block, &len))
		return DEFER;
	if (reg != DWARF_RBP && reg != DWARF_RA)
		return GO;
	shape = expr_shape(block, len, &breg, &off);
	if (shape == EXPR_UNKNOWN)
		return DEFER;
	if (shape == EXPR_PLUS && !value) {
		set_slot(r, reg, SLOT_AT_CFA, 0);
		(reg == DWARF_RBP ? &r->st.rbp : &r->st.ra)->off = (int64_t)off;
		return GO;
	}
	return set_slot(r, reg, SLOT_OTHER, 0);
}

static bool row_cfa(const struct state *st, struct sframe_jit_row *row,
		    unsigned int *why)
{
	int64_t off = (int64_t)st->cfa_off;

	if (st->cfa == CFA_EXPR) {
		*why = SFRAME_JIT_CFI_CFA_EXPR;
		return false;
	}
	if (st->cfa != CFA_REG && st->cfa != CFA_EXPR_REG) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	if (st->cfa_reg != DWARF_RSP && st->cfa_reg != DWARF_RBP) {
		*why = SFRAME_JIT_CFI_CFA_REG;
		return false;
	}
	if (off < INT32_MIN || off > INT32_MAX) {
		*why = SFRAME_JIT_CFI_RANGE;
		return false;
	}
	row->cfa_base = st->cfa_reg == DWARF_RSP ? SFRAME_JIT_ROW_CFA_SP :
						   SFRAME_JIT_ROW_CFA_FP;
	row->cfa_off = off;
	return true;
}

static bool row_rbp(const struct state *st, struct sframe_jit_row *row,
		    unsigned int *why)
{
	switch (st->rbp.slot) {
	case SLOT_UNDEFINED:
	case SLOT_SAME:
		return true;
	case SLOT_AT_CFA:
		if (st->rbp.off < INT16_MIN || st->rbp.off > INT16_MAX) {
			*why = SFRAME_JIT_CFI_RANGE;
			return false;
		}
		row->flags |= SFRAME_JIT_ROW_FP_SAVED;
		row->fp_off = st->rbp.off;
		return true;
	default:
		*why = SFRAME_JIT_CFI_RBP_RULE;
		return false;
	}
}

/*
 * The row of a state, in the order of cfi_libdw.c's frame_row(): an
 * undefined return address first (the outermost frame), then the CFA,
 * the return address and RBP.
 */
static bool frame_row(const struct state *st, struct sframe_jit_row *row,
		      unsigned int *why)
{
	memset(row, 0, sizeof(*row));
	if (st->ra.slot == SLOT_UNDEFINED) {
		row->cfa_base = SFRAME_JIT_ROW_CFA_SP;
		row->flags = SFRAME_JIT_ROW_RA_UNDEFINED;
		return true;
	}
	if (!row_cfa(st, row, why))
		return false;
	if (st->ra.slot != SLOT_AT_CFA || st->ra.off != X86_64_RA_OFF) {
		*why = SFRAME_JIT_CFI_RA_RULE;
		return false;
	}
	row->ra_off = X86_64_RA_OFF;
	return row_rbp(st, row, why);
}

/*
 * The probe's state ends: its row, or the reason the FDE is left out,
 * checked in the order of cfi_libdw.c's probe().  The row is made in
 * its slot, past the last row, and kept there unless it repeats the
 * rules of the row before it.
 */
static int probe_end(struct run *r)
{
	struct sframe_jit__rows *rows = r->rows;
	struct sframe_jit_row *row;
	int err;

	if (r->st.start < r->fde->lo)
		r->why = SFRAME_JIT_CFI_MALFORMED;
	else if (r->cie->signal)
		r->why = SFRAME_JIT_CFI_SIGNAL;
	else if (r->cie->ra_reg != DWARF_RA)
		r->why = SFRAME_JIT_CFI_RA_RULE;
	else
		goto row;
	return LEFT_OUT;
row:
	if (rows->nr == rows->cap) {
		err = sframe_jit__rows_grow(rows);
		if (err)
			return err;
	}
	row = &rows->rows[rows->nr];
	if (!frame_row(&r->st, row, &r->why))
		return LEFT_OUT;
	row->start_off = r->probe - r->fde->lo;
	if (rows->nr == r->first || !sframe_jit__same_rules(row - 1, row))
		rows->nr++;
	return GO;
}

/*
 * An advance to @loc.  At or below the probe it only moves the state's
 * start; past it, it ends the probe, and the next probe is at @loc.
 * A CIE's own instructions may not advance.
 */
static int advance(struct run *r, uint64_t loc)
{
	int ret;

	if (!r->init)
		return DEFER;
	r->loc = loc;
	if (loc > r->probe) {
		ret = probe_end(r);
		if (ret != GO)
			return ret;
		if (loc >= r->fde->hi)
			return DONE;
		r->probe = loc;
		if (++r->states > SFRAME_JIT__CFI_MAX_STATES) {
			r->why = SFRAME_JIT_CFI_RANGE;
			return LEFT_OUT;
		}
	}
	r->st.start = loc;
	return GO;
}

static int advance_by(struct run *r, uint64_t delta)
{
	return advance(r, r->loc + delta * r->cie->code_align);
}

static int advance_fixed(struct run *r, unsigned int bytes)
{
	uint64_t delta;

	if (!dw_read_fixed(&r->p, r->end, bytes, false, &delta))
		return DEFER;
	return advance_by(r, delta);
}

static int set_loc(struct run *r)
{
	const struct sframe_jit__eh_frame *eh = r->c->eh;
	uint64_t field = eh->addr + (uint64_t)(r->p - eh->buf);
	uint64_t loc;

	if (!dw_read_pointer(&r->p, r->end, r->cie->fde_enc, field, &loc))
		return DEFER;
	return advance(r, loc);
}

/* DW_CFA_offset and its kin: @sign for a signed factored offset. */
static int offset_rule(struct run *r, uint64_t reg, bool sign, bool negate,
		       enum slot slot)
{
	uint64_t off;

	if (!(sign ? sleb(r, &off) : uleb(r, &off)))
		return DEFER;
	if (negate)
		off = -off;
	return set_slot(r, reg, slot, off * (uint64_t)r->cie->data_align);
}

static int offset_ext(struct run *r, bool sign, bool negate, enum slot slot)
{
	uint64_t reg;

	if (!uleb(r, &reg))
		return DEFER;
	return offset_rule(r, reg, sign, negate, slot);
}

/* A rule with a register operand only: undefined, same value, restore. */
static int reg_only(struct run *r, uint8_t op)
{
	uint64_t reg;

	if (!uleb(r, &reg))
		return DEFER;
	if (op == DW_CFA_undefined)
		return set_slot(r, reg, SLOT_UNDEFINED, 0);
	if (op == DW_CFA_same_value)
		return set_slot(r, reg, SLOT_SAME, 0);
	return restore(r, reg);
}

static int register_rule(struct run *r)
{
	uint64_t reg, other;

	if (!uleb(r, &reg) || !uleb(r, &other))
		return DEFER;
	return set_slot(r, reg, SLOT_OTHER, 0);
}

static int cfa_rule(struct run *r, uint8_t op)
{
	uint64_t reg = r->st.cfa_reg, off;

	if ((op == DW_CFA_def_cfa || op == DW_CFA_def_cfa_sf ||
	     op == DW_CFA_def_cfa_register) && !uleb(r, &reg))
		return DEFER;
	if (op == DW_CFA_def_cfa_register) {
		cfa_needs_reg(r);
		r->st.cfa_reg = reg;
		return GO;
	}
	if (op == DW_CFA_def_cfa || op == DW_CFA_def_cfa_offset) {
		if (!uleb(r, &off))
			return DEFER;
	} else {
		if (!sleb(r, &off))
			return DEFER;
		off *= (uint64_t)r->cie->data_align;
	}
	if (op == DW_CFA_def_cfa || op == DW_CFA_def_cfa_sf)
		return def_cfa(r, reg, off);
	cfa_needs_reg(r);
	r->st.cfa_off = off;
	return GO;
}

/* The instructions with an opcode of their own byte. */
static int step_ext(struct run *r, uint8_t op)
{
	uint64_t skip;

	switch (op) {
	case DW_CFA_nop:
		return GO;
	case DW_CFA_set_loc:
		return set_loc(r);
	case DW_CFA_advance_loc1:
		return advance_fixed(r, 1);
	case DW_CFA_advance_loc2:
		return advance_fixed(r, 2);
	case DW_CFA_advance_loc4:
		return advance_fixed(r, 4);
	case DW_CFA_MIPS_advance_loc8:
		return advance_fixed(r, 8);
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		return cfa_rule(r, op);
	case DW_CFA_def_cfa_expression:
		return def_cfa_expr(r);
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_restore_extended:
		return reg_only(r, op);
	case DW_CFA_offset_extended:
		return offset_ext(r, false, false, SLOT_AT_CFA);
	case DW_CFA_offset_extended_sf:
		return offset_ext(r, true, false, SLOT_AT_CFA);
	case DW_CFA_GNU_negative_offset_extended:
		return offset_ext(r, false, true, SLOT_AT_CFA);
	case DW_CFA_val_offset:
		return offset_ext(r, false, false, SLOT_OTHER);
	case DW_CFA_val_offset_sf:
		return offset_ext(r, true, false, SLOT_OTHER);
	case DW_CFA_register:
		return register_rule(r);
	case DW_CFA_expression:
		return reg_expr(r, false);
	case DW_CFA_val_expression:
		return reg_expr(r, true);
	case DW_CFA_remember_state:
		return remember(r);
	case DW_CFA_restore_state:
		return restore_state(r);
	case DW_CFA_GNU_args_size:
		return uleb(r, &skip) ? GO : DEFER;
	default:
		/* DW_CFA_GNU_window_save, and what libdw refuses. */
		return DEFER;
	}
}

static int step(struct run *r)
{
	uint8_t op = *r->p++;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		return advance_by(r, op & 0x3f);
	case DW_CFA_offset:
		return offset_rule(r, op & 0x3f, false, false, SLOT_AT_CFA);
	case DW_CFA_restore:
		return restore(r, op & 0x3f);
	default:
		return step_ext(r, op);
	}
}

static int run(struct run *r)
{
	int ret = GO;

	while (ret == GO && r->p < r->end)
		ret = step(r);
	return ret;
}

/* The state after a CIE's initial instructions, run once per CIE. */
static const struct state *cie_state(struct sframe_jit__cfa *c, uint32_t idx)
{
	const struct sframe_jit__cie *cie = &c->eh->cies[idx];
	struct run r;

	if (c->cie_done[idx] == CIE_TODO) {
		r = (struct run) {
			.c	= c,
			.cie	= cie,
			.p	= cie->insns,
			.end	= cie->insns_end,
			.st	= {
				.cfa	= CFA_UNDEFINED,
				.ra	= { .slot = SLOT_SAME },
				.rbp	= { .slot = SLOT_SAME },
			},
		};
		c->cie_done[idx] = run(&r) == GO ? CIE_OK : CIE_LIBDW;
		c->cie_states[idx] = r.st;
	}
	return c->cie_done[idx] == CIE_OK ? &c->cie_states[idx] : NULL;
}

/**
 * sframe_jit__cfa_fde() - one FDE's rows, by the interpreter
 * @c: the interpreter of the FDE's section.
 * @fde: the FDE, neither malformed, empty, overlapping nor too long.
 * @rows: where its rows go, after those there.
 * @why: with SFRAME_JIT__FDE_LEFT_OUT, the reason.
 *
 * Return: SFRAME_JIT__FDE_ROWS, SFRAME_JIT__FDE_LEFT_OUT, or
 * SFRAME_JIT__FDE_DEFER for an FDE to convert with
 * sframe_jit__libdw_fde() instead, with any rows appended dropped;
 * -ENOMEM.
 */
int sframe_jit__cfa_fde(struct sframe_jit__cfa *c,
			const struct sframe_jit__fde *fde,
			struct sframe_jit__rows *rows, unsigned int *why)
{
	struct run r;
	int ret;

	/* Field by field: an initializer would clear the whole run first. */
	if (fde->cie == SFRAME_JIT__NO_CIE)
		return SFRAME_JIT__FDE_DEFER;
	r.init = cie_state(c, fde->cie);
	if (!r.init)
		return SFRAME_JIT__FDE_DEFER;
	r.c = c;
	r.cie = &c->eh->cies[fde->cie];
	r.p = fde->insns;
	r.end = fde->insns_end;
	r.st = *r.init;
	r.st.start = fde->lo;
	r.depth = 0;
	r.loc = fde->lo;
	r.fde = fde;
	r.probe = fde->lo;
	r.states = 1;
	r.first = rows->nr;
	r.rows = rows;
	r.why = 0;
	ret = run(&r);
	if (ret == GO)
		ret = probe_end(&r);
	switch (ret) {
	case GO:
	case DONE:
		return SFRAME_JIT__FDE_ROWS;
	case LEFT_OUT:
		*why = r.why;
		return SFRAME_JIT__FDE_LEFT_OUT;
	case DEFER:
		rows->nr = r.first;
		return SFRAME_JIT__FDE_DEFER;
	default:
		return ret;
	}
}

/**
 * sframe_jit__cfa_new() - an interpreter for the FDEs of a section
 * @eh: the section's entries, which must outlive the interpreter.
 * @cp: the interpreter on success, for sframe_jit__cfa_free().
 *
 * Return: 0 or -ENOMEM.
 */
int sframe_jit__cfa_new(const struct sframe_jit__eh_frame *eh,
			struct sframe_jit__cfa **cp)
{
	struct sframe_jit__cfa *c = calloc(1, sizeof(*c));
	size_t n = eh->nr_cies ?: 1;

	if (!c)
		return -ENOMEM;
	c->eh = eh;
	c->cie_states = calloc(n, sizeof(*c->cie_states));
	c->cie_done = calloc(n, sizeof(*c->cie_done));
	if (!c->cie_states || !c->cie_done) {
		sframe_jit__cfa_free(c);
		return -ENOMEM;
	}
	*cp = c;
	return 0;
}

/**
 * sframe_jit__cfa_free() - free an interpreter
 * @c: the interpreter, or NULL.
 */
void sframe_jit__cfa_free(struct sframe_jit__cfa *c)
{
	if (!c)
		return;
	free(c->cie_states);
	free(c->cie_done);
	free(c);
}
