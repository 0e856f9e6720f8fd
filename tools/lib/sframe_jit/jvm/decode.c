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
 * compiler.  So the code is decoded (Zydis) and the stack pointer's
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

#include <Zydis/Zydis.h>

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
#define INSN_END	0x1	/* ret, jmp, hlt, ud2: not followed */
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
	uint16_t calls;		/* calls gone past on the way here */
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
	uint32_t *calls;	/* calls whose way on the next round takes */
	uint32_t nr_calls;
	bool guessing;
	bool wrong_guess;
	uint32_t *guessed;	/* instructions of the current guess */
	uint32_t nr_guessed;
	struct sframe_jvm_decode_stats stats;
};

static bool is_reg(const ZydisDecodedOperand *op, ZydisRegister reg)
{
	return op->type == ZYDIS_OPERAND_TYPE_REGISTER && op->reg.value == reg;
}

static bool is_sp_mem(const ZydisDecodedOperand *op)
{
	return op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
	       op->mem.type == ZYDIS_MEMOP_TYPE_MEM &&
	       op->mem.base == ZYDIS_REGISTER_RSP &&
	       op->mem.index == ZYDIS_REGISTER_NONE &&
	       op->mem.segment != ZYDIS_REGISTER_FS &&
	       op->mem.segment != ZYDIS_REGISTER_GS;
}

static bool writes(const ZydisDecodedOperand *op)
{
	return op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE;
}

/* The index of the general register holding @r (0 %rax ... 15 %r15), or -1. */
static int gpr(ZydisRegister r)
{
	static const ZydisRegister r64[] = {
		ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
		ZYDIS_REGISTER_RBX, ZYDIS_REGISTER_RSP, ZYDIS_REGISTER_RBP,
		ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8,
		ZYDIS_REGISTER_R9, ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11,
		ZYDIS_REGISTER_R12, ZYDIS_REGISTER_R13, ZYDIS_REGISTER_R14,
		ZYDIS_REGISTER_R15,
	};
	ZydisRegister full;
	int i;

	full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	for (i = 0; i < 16; i++)
		if (r64[i] == full)
			return i;
	return -1;
}

#define GPR_SP	4
#define GPR_BP	5

/*
 * The general registers an instruction writes, implicitly too (push,
 * call, cpuid); any part of one counts as the whole.
 */
static uint16_t written(const ZydisDecodedInstruction *zi,
			const ZydisDecodedOperand *ops)
{
	uint16_t mask = 0;
	int i, k;

	for (i = 0; i < zi->operand_count; i++) {
		if (ops[i].type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !writes(&ops[i]))
			continue;
		k = gpr(ops[i].reg.value);
		if (k >= 0)
			mask |= 1u << k;
	}
	return mask;
}

static void classify_arith(struct insn *in, const ZydisDecodedOperand *ops,
			   int nr, int sign)
{
	if (nr == 2 && ops[1].type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
		in->fx = FX_SP;
		in->arg = (int32_t)(sign * ops[1].imm.value.s);
	} else {
		in->fx = FX_SP_LOST;
	}
}

static void classify_mov(struct insn *in, const ZydisDecodedOperand *ops,
			 int nr)
{
	const ZydisDecodedOperand *dst = &ops[0], *src = &ops[1];

	if (nr != 2)
		return;
	if (is_reg(dst, ZYDIS_REGISTER_RSP) && is_reg(src, ZYDIS_REGISTER_RBP))
		in->fx = FX_SP_IS_RBP;
	else if (is_reg(dst, ZYDIS_REGISTER_RSP) &&
		 src->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		 src->size == 64 && gpr(src->reg.value) >= 0)
		in->fx = FX_REG_TO_SP, in->arg = gpr(src->reg.value);
	else if (is_reg(dst, ZYDIS_REGISTER_RSP))
		in->fx = FX_SP_LOST;
	else if (is_reg(src, ZYDIS_REGISTER_RSP) &&
		 dst->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		 dst->size == 64 && gpr(dst->reg.value) >= 0 &&
		 gpr(dst->reg.value) != GPR_BP)
		in->fx = FX_SP_TO_REG, in->arg = gpr(dst->reg.value);
	else if (is_reg(dst, ZYDIS_REGISTER_RBP))
		in->fx = is_reg(src, ZYDIS_REGISTER_RSP) ? FX_RBP_IS_SP :
							   FX_RBP_LOST;
	else if (is_sp_mem(dst) && is_reg(src, ZYDIS_REGISTER_RBP))
		in->fx = FX_SAVE_RBP, in->arg = (int32_t)dst->mem.disp.value;
}

/* A direct branch's target, if it stays in the code. */
static void classify_branch(struct decoder *d, struct insn *in,
			    const ZydisDecodedInstruction *zi,
			    const ZydisDecodedOperand *ops, uint64_t pc)
{
	ZyanU64 t;

	if (ops[0].type != ZYDIS_OPERAND_TYPE_IMMEDIATE ||
	    !ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, &ops[0], pc, &t)))
		return;
	if (t >= d->addr && t < d->addr + d->size) {
		in->flags |= INSN_BRANCH;
		in->target = (uint32_t)(t - d->addr);
	}
}

/* "call next; ..." pushes its own address and goes on. */
static void classify_call(struct insn *in, const ZydisDecodedInstruction *zi,
			  const ZydisDecodedOperand *ops, uint64_t pc)
{
	ZyanU64 t;

	if (ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
	    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, &ops[0], pc, &t)) &&
	    t == pc + zi->length)
		in->fx = FX_SP, in->arg = 8;
	else
		in->call = 1;
}

static void classify_stack(struct insn *in, const ZydisDecodedInstruction *zi,
			   const ZydisDecodedOperand *ops)
{
	int nr = zi->operand_count_visible;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_PUSH:
	case ZYDIS_MNEMONIC_PUSHFQ:
		in->fx = nr == 1 && is_reg(&ops[0], ZYDIS_REGISTER_RBP) ?
			 FX_PUSH_RBP : FX_SP;
		in->arg = 8;
		return;
	case ZYDIS_MNEMONIC_POP:
	case ZYDIS_MNEMONIC_POPFQ:
		in->fx = FX_SP;
		in->arg = -8;
		if (nr == 1 && is_reg(&ops[0], ZYDIS_REGISTER_RBP))
			in->fx = FX_POP_RBP;
		else if (nr == 1 && is_reg(&ops[0], ZYDIS_REGISTER_RSP))
			in->fx = FX_SP_LOST;
		return;
	case ZYDIS_MNEMONIC_LEAVE:
		in->fx = FX_LEAVE;
		return;
	default:
		break;
	}
	if (nr >= 1 && is_reg(&ops[0], ZYDIS_REGISTER_RSP) && writes(&ops[0])) {
		if (zi->mnemonic == ZYDIS_MNEMONIC_SUB)
			classify_arith(in, ops, nr, 1);
		else if (zi->mnemonic == ZYDIS_MNEMONIC_ADD)
			classify_arith(in, ops, nr, -1);
		else if (zi->mnemonic == ZYDIS_MNEMONIC_LEA && nr == 2 &&
			 is_sp_mem(&ops[1]))
			in->fx = FX_SP, in->arg = -(int32_t)ops[1].mem.disp.value;
		else if (zi->mnemonic == ZYDIS_MNEMONIC_MOV)
			classify_mov(in, ops, nr);
		else
			in->fx = FX_SP_LOST;
		return;
	}
	if (zi->mnemonic == ZYDIS_MNEMONIC_MOV)
		classify_mov(in, ops, nr);
	if (in->fx == FX_NONE && (in->writes & (1u << GPR_SP)))
		in->fx = FX_SP_LOST;
	else if (in->fx == FX_NONE && (in->writes & (1u << GPR_BP)))
		in->fx = FX_RBP_LOST;
}

/* What one instruction does to the frame and to the flow. */
static void classify(struct decoder *d, const ZydisDecodedInstruction *zi,
		     const ZydisDecodedOperand *ops, uint64_t pc,
		     struct insn *in)
{
	in->writes = written(zi, ops);
	in->nop = zi->mnemonic == ZYDIS_MNEMONIC_NOP;
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_RET:
		in->flags |= INSN_END;
		return;
	case ZYDIS_CATEGORY_UNCOND_BR:
		in->flags |= INSN_END;
		classify_branch(d, in, zi, ops, pc);
		return;
	case ZYDIS_CATEGORY_COND_BR:
		classify_branch(d, in, zi, ops, pc);
		return;
	case ZYDIS_CATEGORY_CALL:
		classify_call(in, zi, ops, pc);
		return;
	default:
		break;
	}
	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_INT3:
		in->flags |= INSN_END;
		return;
	default:
		break;
	}
	classify_stack(in, zi, ops);
}

/*
 * The instruction at @off into @map (indexed by offset), unless bytes
 * it would cover are another instruction's.  0, or -1 where the bytes do
 * not decode or overlap.
 */
static int decode_one(struct decoder *d, const ZydisDecoder *dec,
		      struct insn *map, uint8_t *covered, uint32_t off,
		      uint32_t end)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction zi;
	struct insn *in = &map[off];
	uint32_t k;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, d->code + off, end - off,
						 &zi, ops)))
		return -1;
	for (k = off; k < off + zi.length; k++)
		if (covered[k])
			return -1;
	memset(covered + off, 1, zi.length);
	in->off = off;
	in->len = zi.length;
	classify(d, &zi, ops, d->addr + off, in);
	return 0;
}

/*
 * The instructions every path from the entries meets, in the order of
 * the paths: HotSpot leaves holes in its code (a patchable jump and
 * the bytes after it, which C1 fills later), and a sweep from the start
 * would read those as instructions and lose its way into the next
 * ones.  @work has room for @d->size offsets.
 */
static void trace(struct decoder *d, const ZydisDecoder *dec,
		  struct insn *map, uint8_t *covered, uint32_t *work,
		  const uint32_t *entries, uint32_t nr_entries)
{
	uint32_t n = 0, i;

	work[n++] = 0;
	for (i = 0; i < nr_entries; i++)
		if (entries[i] < d->size)
			work[n++] = entries[i];
	while (n) {
		uint32_t off = work[--n];
		const struct insn *in = &map[off];

		if (map[off].len || covered[off])
			continue;
		if (decode_one(d, dec, map, covered, off, d->size))
			continue;
		if ((in->flags & INSN_BRANCH) && n < d->size)
			work[n++] = in->target;
		if (!(in->flags & INSN_END) && off + in->len < d->size &&
		    n < d->size)
			work[n++] = off + in->len;
	}
}

/*
 * What no path meets, swept from the start of each hole to its end.
 * Zero bytes that open a hole are the room C1 leaves after a patchable
 * jump for the instruction it will write there: not code.
 */
static void sweep(struct decoder *d, const ZydisDecoder *dec,
		  struct insn *map, uint8_t *covered)
{
	uint32_t off = 0, end;

	while (off < d->size) {
		if (covered[off]) {
			off++;
			continue;
		}
		for (end = off; end < d->size && !covered[end]; end++)
			;
		while (off < end && !d->code[off])
			off++;
		while (off < end) {
			if (decode_one(d, dec, map, covered, off, end)) {
				d->stats.bad_bytes++;
				off++;
			} else {
				off += map[off].len;
			}
		}
	}
}

/* Decode the code: along its paths first, then what they leave. */
static int disassemble(struct decoder *d, const uint32_t *entries,
		       uint32_t nr_entries)
{
	struct insn *map = calloc(d->size + 1, sizeof(*map));
	uint8_t *covered = calloc(d->size + 1, 1);
	uint32_t *work = calloc(d->size + 1, sizeof(*work));
	ZydisDecoder dec;
	uint32_t off;
	int err = -ENOMEM;

	if (!map || !covered || !work)
		goto out;
	err = -EINVAL;
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		goto out;
	trace(d, &dec, map, covered, work, entries, nr_entries);
	sweep(d, &dec, map, covered);
	err = -ENOMEM;
	d->insns = calloc(d->size + 1, sizeof(*d->insns));
	if (!d->insns)
		goto out;
	for (off = 0; off < d->size; off++)
		if (map[off].len)
			d->insns[d->nr_insns++] = map[off];
	d->stats.insns = d->nr_insns;
	err = 0;
out:
	free(map);
	free(covered);
	free(work);
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
		/*
		 * A branch into the middle of an instruction: from a path,
		 * the code is not what it was decoded as; from a guess, the
		 * guess read bytes that are not code.
		 */
		if (d->guessing)
			d->wrong_guess = true;
		else
			d->stats.conflicts++;
		return;
	}
	t = &d->st[i];
	/*
	 * A guess that loses the frame proves nothing of the code after:
	 * that code is left for a guess of its own.
	 */
	if (d->guessing && s->bad)
		return;
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
		/*
		 * The way on after a call meets code reached before, with
		 * fewer calls on the way: the call did not return.
		 */
		if (s->calls > t->calls)
			return;
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
static bool falls_through(const struct decoder *d, uint32_t k)
{
	const struct insn *in = &d->insns[k];

	return !(in->flags & INSN_END) && k + 1 < d->nr_insns &&
	       d->insns[k + 1].off == in->off + in->len;
}

static void drain(struct decoder *d)
{
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
		if (!falls_through(d, k))
			continue;
		if (in->call)
			d->calls[d->nr_calls++] = k;
		else
			reach(d, k + 1, &next);
	}
}

/*
 * Follow every path from instruction @i, entered with frame @s.
 *
 * Compiled code calls stubs that never return (they throw, or
 * deoptimize), and whatever follows such a call belongs to another
 * path: the safepoint poll stub after C1's exception stubs runs after
 * an epilogue.  So paths are followed in rounds: first all code reached
 * without going past a call, then the way on after those calls, and so
 * on.  Where the way on after a call meets code an earlier round
 * reached, the call did not return; within a round, two frames for one
 * instruction are a conflict.
 */
static void propagate(struct decoder *d, int64_t i, const struct state *s)
{
	uint32_t *calls = d->calls, *next_calls = d->calls + d->nr_insns + 1;

	reach(d, i, s);
	drain(d);
	while (d->nr_calls) {
		uint32_t n = d->nr_calls, c;

		memcpy(next_calls, calls, n * sizeof(*calls));
		d->nr_calls = 0;
		for (c = 0; c < n; c++) {
			uint32_t k = next_calls[c];
			struct state next;

			if (d->st[k].bad)
				continue;
			next = step(&d->insns[k], d->st[k]);
			next.seen = 0;
			next.calls++;
			reach(d, k + 1, &next);
		}
		drain(d);
	}
}

/*
 * The body's frame, the one the prologue builds: the frame of
 * @frame_size (HotSpot's own figure) where it is given; otherwise the
 * frame of the first call reached, which compiled code makes from its
 * body.  Whether a path from an entry reached it.
 */
static bool body_frame(const struct decoder *d, uint32_t frame_size,
		       struct state *body)
{
	uint32_t i;

	for (i = 0; i < d->nr_insns; i++) {
		const struct state *s = &d->st[i];

		if (!s->seen || s->bad || s->sp_lost)
			continue;
		if (frame_size ? (uint32_t)s->cfa == frame_size :
				 d->insns[i].call) {
			*body = *s;
			body->seen = 0;
			body->bad = 0;
			body->copy_reg = -1;
			body->calls = 0;
			return true;
		}
	}
	/*
	 * A method made not entrant has a jump written over its entry,
	 * and no path from there reaches its body; threads still in it
	 * run in the frame HotSpot gives, with %rbp below the return
	 * address, as every compiled frame has it.
	 */
	*body = (struct state){
		.cfa = (int32_t)frame_size,
		.fp_off = -16,
		.copy_reg = -1,
	};
	return false;
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
	err = disassemble(&d, entries, nr_entries);
	if (err)
		goto out;
	d.st = calloc(d.nr_insns + 1, sizeof(*d.st));
	d.work = calloc(d.nr_insns + 1, sizeof(*d.work));
	d.guessed = calloc(d.nr_insns + 1, sizeof(*d.guessed));
	d.calls = calloc(2 * (d.nr_insns + 1), sizeof(*d.calls));
	err = -ENOMEM;
	if (!d.st || !d.work || !d.guessed || !d.calls)
		goto out;
	if (d.nr_insns && d.insns[0].off == 0)
		propagate(&d, 0, &entry);
	for (i = 0; i < nr_entries; i++)
		propagate(&d, insn_at(&d, entries[i]), &entry);
	if (kind == SFRAME_JVM_NMETHOD) {
		struct state body;

		if (body_frame(&d, frame_size, &body))
			d.stats.body_cfa = body.cfa;
		if (body.cfa)
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
	free(d.calls);
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
