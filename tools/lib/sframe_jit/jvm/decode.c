// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The frame at every instruction of a piece of HotSpot code, read from
 * the code itself.
 *
 * JVMTI says where a compiled method is and how long, not what its frame
 * looks like.  HotSpot's x86-64 compilers build one frame shape (C1 and
 * C2 alike: a stack bang, "push %rbp", "sub $n,%rsp"; each return
 * "add $n,%rsp", "pop %rbp", a safepoint poll, "ret"), but where the
 * epilogues and their out-of-line poll stubs sit is known only to the
 * compiler.  So the code is decoded (capstone) and the stack pointer's
 * distance to the canonical frame address followed along every path from
 * the entry, through the branches that stay inside the code: the frame
 * of each instruction is then known exactly, prologue, body, each
 * epilogue and the poll stubs that run after one, with no assumption on
 * the compiler's choices.  Code that no path from the entry reaches runs
 * in the body's frame in an nmethod (its exception and deoptimization
 * handlers, entered with the frame built) and is left to the
 * frame-pointer fallback in a stub, where nothing says how it is
 * entered.  An instruction reached with two different frames, or after
 * one that moves the stack pointer by an amount the decoder cannot know,
 * gets no row either: a missing row costs one frame's fallback, a wrong
 * one a wrong stack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "sframe_jvm.h"

enum effect {
	FX_NONE,
	FX_SP,		/* CFA - SP grows by .arg */
	FX_PUSH_RBP,
	FX_POP_RBP,
	FX_SAVE_RBP,	/* mov %rbp, .arg(%rsp) */
	FX_RBP_IS_SP,	/* mov %rsp, %rbp */
	FX_SP_IS_RBP,	/* mov %rbp, %rsp */
	FX_LEAVE,
	FX_RBP_LOST,	/* %rbp written otherwise */
	FX_SP_LOST,	/* %rsp written by an amount not known */
	FX_SP_TO_REG,	/* mov %rsp, .arg (a register's index) */
	FX_REG_TO_SP,	/* mov .arg, %rsp */
};

/* struct insn.flags */
#define INSN_END	0x1	/* no fall-through: ret, jmp, hlt, ud2 */
#define INSN_BRANCH	0x2	/* .target is a branch target in the code */

struct insn {
	uint32_t off;
	uint32_t target;
	int32_t arg;
	uint16_t writes;	/* general registers written, by index */
	uint8_t len;
	uint8_t fx;
	uint8_t flags;
	uint8_t call;		/* a call to other code */
	uint8_t nop;
};

/*
 * The frame before an instruction runs.  Native wrappers align the
 * stack for a call ("mov %rsp,%r12; and $-16,%rsp; call; mov %r12,%rsp")
 * in a frame built on %rbp: the stack pointer is then lost, the frame
 * still known from %rbp, and found again from the copy.
 */
struct state {
	int32_t cfa;		/* CFA - SP, unless sp_lost */
	int32_t fp_off;		/* caller's %rbp at CFA + fp_off; 0: in %rbp */
	int32_t rbp;		/* %rbp = CFA + rbp when rbp_known */
	int32_t copy_cfa;	/* CFA - SP when the copy was taken */
	int8_t copy_reg;	/* register holding a copy of SP, or -1 */
	uint8_t rbp_known;
	uint8_t sp_lost;
	uint8_t seen;
	uint8_t guessed;	/* reached from code no path reaches */
	uint8_t bad;		/* conflict, or no way to the CFA */
};

struct decoder {
	const uint8_t *code;
	uint32_t size;
	uint64_t addr;
	struct insn *insns;
	uint32_t nr_insns;
	struct state *st;
	uint32_t *work;
	uint32_t nr_work;
	bool guessing;
	bool wrong_guess;
	uint32_t *guessed;	/* instructions of the current guess */
	uint32_t nr_guessed;
	struct sframe_jvm_decode_stats stats;
};

static bool is_reg(const cs_x86_op *op, x86_reg reg)
{
	return op->type == X86_OP_REG && op->reg == reg;
}

static bool is_sp_mem(const cs_x86_op *op)
{
	return op->type == X86_OP_MEM && op->mem.base == X86_REG_RSP &&
	       op->mem.index == X86_REG_INVALID &&
	       op->mem.segment == X86_REG_INVALID;
}

/* The index of a general register (0 %rax ... 15 %r15), or -1. */
static int gpr(x86_reg r)
{
	static const x86_reg r64[] = {
		X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX,
		X86_REG_RSP, X86_REG_RBP, X86_REG_RSI, X86_REG_RDI,
		X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
	};
	/* A 32-bit write clears the upper half: it loses the copy too. */
	static const x86_reg r32[] = {
		X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX,
		X86_REG_ESP, X86_REG_EBP, X86_REG_ESI, X86_REG_EDI,
		X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
		X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D,
	};
	int i;

	for (i = 0; i < 16; i++)
		if (r64[i] == r || r32[i] == r)
			return i;
	return -1;
}

#define GPR_SP	4
#define GPR_BP	5

/* The general registers @ci writes; all of them when capstone cannot say. */
static uint16_t written(csh cs, const cs_insn *ci)
{
	cs_regs rd, wr;
	uint8_t nr_rd, nr_wr, i;
	uint16_t mask = 0;

	if (cs_regs_access(cs, ci, rd, &nr_rd, wr, &nr_wr))
		return 0xffff;
	for (i = 0; i < nr_wr; i++) {
		int k = gpr(wr[i]);

		if (k >= 0)
			mask |= 1u << k;
	}
	return mask;
}

static void classify_arith(struct insn *in, const cs_x86 *x, int sign)
{
	if (x->op_count == 2 && x->operands[1].type == X86_OP_IMM) {
		in->fx = FX_SP;
		in->arg = (int32_t)(sign * x->operands[1].imm);
	} else {
		in->fx = FX_SP_LOST;
	}
}

static void classify_mov(struct insn *in, const cs_x86 *x)
{
	const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];

	if (x->op_count != 2)
		return;
	if (is_reg(dst, X86_REG_RSP) && is_reg(src, X86_REG_RBP))
		in->fx = FX_SP_IS_RBP;
	else if (is_reg(dst, X86_REG_RSP) && src->type == X86_OP_REG &&
		 src->size == 8 && gpr(src->reg) >= 0)
		in->fx = FX_REG_TO_SP, in->arg = gpr(src->reg);
	else if (is_reg(dst, X86_REG_RSP))
		in->fx = FX_SP_LOST;
	else if (is_reg(src, X86_REG_RSP) && dst->type == X86_OP_REG &&
		 dst->size == 8 && gpr(dst->reg) >= 0 &&
		 gpr(dst->reg) != GPR_BP)
		in->fx = FX_SP_TO_REG, in->arg = gpr(dst->reg);
	else if (is_reg(dst, X86_REG_RBP))
		in->fx = is_reg(src, X86_REG_RSP) ? FX_RBP_IS_SP : FX_RBP_LOST;
	else if (is_sp_mem(dst) && is_reg(src, X86_REG_RBP))
		in->fx = FX_SAVE_RBP, in->arg = (int32_t)dst->mem.disp;
}

static void classify_branch(struct decoder *d, struct insn *in,
			    const cs_x86 *x, bool end)
{
	uint64_t t;

	if (end)
		in->flags |= INSN_END;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return;
	t = (uint64_t)x->operands[0].imm;
	if (t >= d->addr && t < d->addr + d->size) {
		in->flags |= INSN_BRANCH;
		in->target = (uint32_t)(t - d->addr);
	}
}

/* What one instruction does to the frame and to the flow. */
static void classify(struct decoder *d, csh cs, const cs_insn *ci,
		     struct insn *in)
{
	const cs_x86 *x = &ci->detail->x86;

	in->writes = written(cs, ci);
	in->nop = ci->id == X86_INS_NOP;
	switch (ci->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		in->fx = x->op_count == 1 && is_reg(&x->operands[0], X86_REG_RBP) ?
			 FX_PUSH_RBP : FX_SP;
		in->arg = 8;
		return;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		in->fx = FX_SP;
		in->arg = -8;
		if (x->op_count == 1 && is_reg(&x->operands[0], X86_REG_RBP))
			in->fx = FX_POP_RBP;
		else if (x->op_count == 1 && is_reg(&x->operands[0], X86_REG_RSP))
			in->fx = FX_SP_LOST;
		return;
	case X86_INS_LEAVE:
		in->fx = FX_LEAVE;
		return;
	case X86_INS_RET:
		in->flags |= INSN_END;
		return;
	case X86_INS_HLT:
	case X86_INS_UD2:
	case X86_INS_INT3:
		in->flags |= INSN_END;
		return;
	case X86_INS_JMP:
		classify_branch(d, in, x, true);
		return;
	case X86_INS_CALL:
		/* "call next; ..." pushes its own address and goes on. */
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM &&
		    (uint64_t)x->operands[0].imm == ci->address + ci->size)
			in->fx = FX_SP, in->arg = 8;
		else
			in->call = 1;
		return;
	}
	if (cs_insn_group(cs, ci, X86_GRP_JUMP)) {
		classify_branch(d, in, x, false);
		return;
	}
	if (x->op_count >= 1 && is_reg(&x->operands[0], X86_REG_RSP) &&
	    (x->operands[0].access & CS_AC_WRITE)) {
		if (ci->id == X86_INS_SUB)
			classify_arith(in, x, 1);
		else if (ci->id == X86_INS_ADD)
			classify_arith(in, x, -1);
		else if (ci->id == X86_INS_LEA && x->op_count == 2 &&
			 is_sp_mem(&x->operands[1]))
			in->fx = FX_SP, in->arg = -(int32_t)x->operands[1].mem.disp;
		else if (ci->id == X86_INS_MOV)
			classify_mov(in, x);
		else
			in->fx = FX_SP_LOST;
		return;
	}
	if (ci->id == X86_INS_MOV)
		classify_mov(in, x);
	if (in->fx == FX_NONE && (in->writes & (1u << GPR_SP)))
		in->fx = FX_SP_LOST;
	else if (in->fx == FX_NONE && (in->writes & (1u << GPR_BP)))
		in->fx = FX_RBP_LOST;
}

/* Decode every instruction; bytes that do not decode are skipped. */
static int disassemble(struct decoder *d)
{
	const uint8_t *p = d->code;
	size_t left = d->size;
	uint64_t pc = d->addr;
	cs_insn *ci;
	csh cs;
	int err = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	ci = cs_malloc(cs);
	d->insns = calloc(d->size, sizeof(*d->insns));
	if (!ci || !d->insns) {
		err = -ENOMEM;
		goto out;
	}
	while (left) {
		struct insn *in;

		if (!cs_disasm_iter(cs, &p, &left, &pc, ci)) {
			d->stats.bad_bytes++;
			p++, left--, pc++;
			continue;
		}
		in = &d->insns[d->nr_insns++];
		in->off = (uint32_t)(ci->address - d->addr);
		in->len = ci->size;
		classify(d, cs, ci, in);
	}
	d->stats.insns = d->nr_insns;
out:
	if (ci)
		cs_free(ci, 1);
	cs_close(&cs);
	return err;
}

static int64_t insn_at(const struct decoder *d, uint32_t off)
{
	uint32_t lo = 0, hi = d->nr_insns;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->insns[mid].off == off)
			return mid;
		if (d->insns[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The frame after @in runs, from the one before. */
static struct state step(const struct insn *in, struct state s)
{
	if (s.copy_reg >= 0 && (in->writes & (1u << s.copy_reg)) &&
	    in->fx != FX_SP_TO_REG)
		s.copy_reg = -1;
	switch (in->fx) {
	case FX_SP:
		s.cfa += in->arg;
		break;
	case FX_PUSH_RBP:
		s.cfa += 8;
		if (!s.fp_off && s.sp_lost)
			s.bad = 1;
		else if (!s.fp_off)
			s.fp_off = -s.cfa;
		break;
	case FX_POP_RBP:
		s.cfa -= 8;
		s.fp_off = 0;
		s.rbp_known = 0;
		if (s.sp_lost)
			s.bad = 1;
		break;
	case FX_SAVE_RBP:
		if (!s.fp_off && s.sp_lost)
			s.bad = 1;
		else if (!s.fp_off)
			s.fp_off = in->arg - s.cfa;
		break;
	case FX_RBP_IS_SP:
		s.rbp = -s.cfa;
		s.rbp_known = !s.sp_lost;
		break;
	case FX_SP_IS_RBP:
	case FX_LEAVE:
		if (!s.rbp_known) {
			s.bad = 1;
			break;
		}
		s.cfa = -s.rbp;
		s.sp_lost = 0;
		if (in->fx == FX_LEAVE) {
			s.cfa -= 8;
			s.fp_off = 0;
			s.rbp_known = 0;
		}
		break;
	case FX_RBP_LOST:
		s.rbp_known = 0;
		break;
	case FX_SP_LOST:
		s.sp_lost = 1;
		break;
	case FX_SP_TO_REG:
		s.copy_reg = s.sp_lost ? -1 : (int8_t)in->arg;
		s.copy_cfa = s.cfa;
		break;
	case FX_REG_TO_SP:
		if (s.copy_reg == in->arg) {
			s.cfa = s.copy_cfa;
			s.sp_lost = 0;
		} else {
			s.sp_lost = 1;
		}
		break;
	}
	/* With neither SP nor FP known there is no way to the CFA. */
	if (s.sp_lost && !s.rbp_known)
		s.bad = 1;
	/* Below the return address, or misaligned: not a frame we know. */
	if (!s.sp_lost &&
	    (s.cfa < 8 || s.cfa % 8 || s.fp_off > 0 || s.fp_off < -s.cfa))
		s.bad = 1;
	return s;
}

static struct sframe_jit_row row_of(const struct state *s, uint32_t off)
{
	struct sframe_jit_row r = {
		.start_off = off,
		.cfa_off = s->cfa,
		.ra_off = -8,
		.cfa_base = SFRAME_JIT_ROW_CFA_SP,
	};

	if (s->sp_lost) {
		r.cfa_base = SFRAME_JIT_ROW_CFA_FP;
		r.cfa_off = -s->rbp;
	}
	if (s->fp_off) {
		r.fp_off = (int16_t)s->fp_off;
		r.flags = SFRAME_JIT_ROW_FP_SAVED;
	}
	return r;
}

static bool row_equal(const struct sframe_jit_row *a,
		      const struct sframe_jit_row *b)
{
	return a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->fp_off == b->fp_off && a->flags == b->flags;
}

/* Two paths that meet must agree on the frame, and on what is known. */
static bool same_frame(const struct state *a, const struct state *b)
{
	struct sframe_jit_row x = row_of(a, 0), y = row_of(b, 0);

	return a->bad == b->bad && row_equal(&x, &y) &&
	       a->rbp_known == b->rbp_known &&
	       (!a->rbp_known || a->rbp == b->rbp);
}

static void reach(struct decoder *d, int64_t i, const struct state *s)
{
	struct state *t;

	if (i < 0) {
		/* A branch into the middle of an instruction. */
		d->stats.conflicts++;
		return;
	}
	t = &d->st[i];
	if (t->seen && d->guessing && (t->guessed != d->guessing || t->bad)) {
		/*
		 * A guess that meets a path with another frame, or code
		 * found doubtful, is wrong.
		 */
		if (t->bad || !same_frame(t, s))
			d->wrong_guess = true;
		return;
	}
	if (t->seen) {
		if (!same_frame(t, s) && !t->bad) {
			t->bad = 1;
			d->stats.conflicts++;
		}
		return;
	}
	*t = *s;
	t->seen = 1;
	t->guessed = d->guessing;
	if (d->guessing)
		d->guessed[d->nr_guessed++] = (uint32_t)i;
	d->work[d->nr_work++] = (uint32_t)i;
}

/* Follow every path from instruction @i, entered with frame @s. */
static void propagate(struct decoder *d, int64_t i, const struct state *s)
{
	reach(d, i, s);
	while (d->nr_work) {
		uint32_t k = d->work[--d->nr_work];
		const struct insn *in = &d->insns[k];
		struct state next;

		if (d->st[k].bad)
			continue;
		next = step(in, d->st[k]);
		next.seen = 0;
		if (in->flags & INSN_BRANCH)
			reach(d, insn_at(d, in->target), &next);
		if (!(in->flags & INSN_END) && k + 1 < d->nr_insns &&
		    d->insns[k + 1].off == in->off + in->len)
			reach(d, k + 1, &next);
	}
}

/*
 * The body's frame, the one the prologue builds: the frame of
 * @frame_size (HotSpot's own figure) where it is given; otherwise the
 * frame of the first call reached, which compiled code makes from its
 * body.
 */
static struct state body_frame(const struct decoder *d, uint32_t frame_size)
{
	struct state best = { .cfa = 8, .copy_reg = -1 };
	uint32_t i;

	for (i = 0; i < d->nr_insns; i++) {
		const struct state *s = &d->st[i];

		if (!s->seen || s->bad || s->sp_lost)
			continue;
		if (frame_size ? (uint32_t)s->cfa == frame_size :
				 d->insns[i].call) {
			best = *s;
			break;
		}
	}
	best.seen = 0;
	best.bad = 0;
	best.copy_reg = -1;
	return best;
}

static bool is_padding(const struct decoder *d, uint32_t i)
{
	return d->insns[i].nop;
}

static void guess(struct decoder *d, uint32_t i, const struct state *body)
{
	uint32_t k;

	d->nr_guessed = 0;
	d->wrong_guess = false;
	propagate(d, i, body);
	if (d->wrong_guess)
		for (k = 0; k < d->nr_guessed; k++)
			d->st[d->guessed[k]].bad = 1;
}

/*
 * Code no path reaches runs in the body's frame.  That is a guess,
 * which must not overrule a path: where a guessed path meets one from an
 * entry, it stops there, and if the two disagree, the guess was wrong
 * (an entry nobody named, or the padding after a jump that falls into
 * the next entry) and its code gets no row.  Padding is not where such
 * code starts.
 */
static void fill_unreached(struct decoder *d, const struct state *body)
{
	uint32_t i;

	d->guessing = true;
	for (i = 0; i < d->nr_insns; i++)
		if (!d->st[i].seen && !is_padding(d, i))
			guess(d, i, body);
	for (i = 0; i < d->nr_insns; i++)
		if (!d->st[i].seen)
			guess(d, i, body);
}

static bool known(const struct decoder *d, uint32_t i)
{
	return d->st[i].seen && !d->st[i].bad;
}

/* Runs of instructions with a known frame, each a span with its rows. */
static int emit(struct decoder *d, struct sframe_jvm_frames *out)
{
	struct sframe_jvm_span *span = NULL;
	uint32_t i;

	out->spans = calloc(d->nr_insns + 1, sizeof(*out->spans));
	out->rows = calloc(d->nr_insns + 1, sizeof(*out->rows));
	if (!out->spans || !out->rows)
		return -ENOMEM;
	/*
	 * Paths that disagree on a frame make every frame derived from
	 * either one doubtful: such code gets no row at all.
	 */
	if (d->stats.conflicts) {
		d->stats.unknown_bytes = d->size;
		return 0;
	}
	for (i = 0; i < d->nr_insns; i++) {
		const struct insn *in = &d->insns[i];
		struct sframe_jit_row r;

		if (!known(d, i)) {
			d->stats.unknown_bytes += in->len;
			span = NULL;
			continue;
		}
		if (span && span->start + span->size != in->off)
			span = NULL;
		if (!span) {
			span = &out->spans[out->nr_spans++];
			span->start = in->off;
			span->first_row = out->nr_rows;
		}
		r = row_of(&d->st[i], in->off - span->start);
		if (!span->nr_rows ||
		    !row_equal(&out->rows[out->nr_rows - 1], &r)) {
			out->rows[out->nr_rows++] = r;
			span->nr_rows++;
		}
		span->size += in->len;
	}
	return 0;
}

/**
 * sframe_jvm_decode() - the frame rows of a piece of HotSpot code
 * @code: its bytes.
 * @size: their number.
 * @addr: the address they run at.
 * @kind: how the code is entered.
 * @entries: offsets where the code is entered by a jump with only the
 *	return address on the stack, besides offset 0 (an OSR entry).
 * @nr_entries: their number.
 * @frame_size: the body's CFA - SP as HotSpot gives it, 0 if not known.
 * @out: the spans with a known frame and their rows; free with
 *	sframe_jvm_frames_free().
 *
 * Return: 0, or -ENOMEM (@out is then empty).
 */
int sframe_jvm_decode(const void *code, uint32_t size, uint64_t addr,
		      enum sframe_jvm_code_kind kind, const uint32_t *entries,
		      uint32_t nr_entries, uint32_t frame_size,
		      struct sframe_jvm_frames *out)
{
	struct decoder d = { .code = code, .size = size, .addr = addr };
	struct state entry = { .cfa = 8, .copy_reg = -1 };
	uint32_t i;
	int err;

	memset(out, 0, sizeof(*out));
	err = disassemble(&d);
	if (err)
		goto out;
	d.st = calloc(d.nr_insns + 1, sizeof(*d.st));
	d.work = calloc(d.nr_insns + 1, sizeof(*d.work));
	d.guessed = calloc(d.nr_insns + 1, sizeof(*d.guessed));
	err = -ENOMEM;
	if (!d.st || !d.work || !d.guessed)
		goto out;
	if (d.nr_insns && d.insns[0].off == 0)
		propagate(&d, 0, &entry);
	for (i = 0; i < nr_entries; i++)
		propagate(&d, insn_at(&d, entries[i]), &entry);
	if (kind == SFRAME_JVM_NMETHOD) {
		struct state body = body_frame(&d, frame_size);

		d.stats.body_cfa = body.cfa;
		fill_unreached(&d, &body);
	}
	err = emit(&d, out);
	out->stats = d.stats;
out:
	if (err)
		sframe_jvm_frames_free(out);
	free(d.insns);
	free(d.st);
	free(d.work);
	free(d.guessed);
	return err;
}

/**
 * sframe_jvm_frames_free() - free what sframe_jvm_decode() returned
 * @f: the frames; emptied.
 */
void sframe_jvm_frames_free(struct sframe_jvm_frames *f)
{
	free(f->spans);
	free(f->rows);
	memset(f, 0, sizeof(*f));
}
