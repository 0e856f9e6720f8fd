/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions whose call frame information the CFI conversion test
 * (cfi_test.c) knows byte by byte: each one's instructions are written
 * out with their lengths, so that the offsets where its rules change are
 * fixed, and its .cfi_* directives are those GCC writes for the shape
 * (or, through .cfi_escape, what .cfi_* cannot say).  Linked with
 * -nostdlib into cfi_fixture.so, whose .eh_frame then holds these FDEs
 * alone; never run.
 */

#define FUNC(name)	.globl name; .type name, @function; name:
#define END(name)	.size name, . - name

	.text

/* push %rbp; mov %rsp,%rbp; ...; leave; ret: rows at 0, 1, 4 and 14. */
FUNC(cfi_fp_leave)
	.cfi_startproc
	pushq	%rbp			/* 1 byte */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp		/* 3 */
	.cfi_def_cfa_register %rbp
	subq	$32, %rsp		/* 4 */
	movl	$1, %eax		/* 5 */
	leave				/* 1, ends at 14 */
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
END(cfi_fp_leave)

/*
 * push %rbx; sub $48,%rsp, and two epilogues, the first one's state
 * remembered and restored for the second: rows at 0, 1, 5, 13, 14, 15,
 * 24 and 25.
 */
FUNC(cfi_sub_rsp)
	.cfi_startproc
	pushq	%rbx			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	subq	$48, %rsp		/* 4, ends at 5 */
	.cfi_def_cfa_offset 64
	testl	%edi, %edi		/* 2 */
	je	1f			/* 2 */
	addq	$48, %rsp		/* 4, ends at 13 */
	.cfi_remember_state
	.cfi_def_cfa_offset 16
	popq	%rbx			/* 1, ends at 14 */
	.cfi_restore %rbx
	.cfi_def_cfa_offset 8
	ret				/* ends at 15 */
1:
	.cfi_restore_state
	movl	$2, %eax		/* 5 */
	addq	$48, %rsp		/* 4, ends at 24 */
	.cfi_def_cfa_offset 16
	popq	%rbx			/* ends at 25 */
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(cfi_sub_rsp)

/* No frame: one row. */
FUNC(cfi_leaf)
	.cfi_startproc
	leal	1(%rdi), %eax		/* 3 */
	ret
	.cfi_endproc
END(cfi_leaf)

/*
 * Directives that restate the rules in force at 2 and 3: libdw starts a
 * state at each, the conversion keeps one row for the three.  After the
 * pop, RBP is restored to the CIE's rule.  Rows at 0, 1 and 4.
 */
FUNC(cfi_same_rules)
	.cfi_startproc
	pushq	%rbp			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	nop
	.cfi_def_cfa_offset 16
	nop
	.cfi_offset %rbp, -16
	popq	%rbp			/* ends at 4 */
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(cfi_same_rules)

/*
 * Stack realignment under a frame pointer: %rsp is realigned after
 * %rbp holds the frame, whose CFA stays %rbp + 16.  Converts: rows at 0,
 * 1, 4 and 13.
 */
FUNC(cfi_realign_fp)
	.cfi_startproc
	pushq	%rbp			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp		/* 3 */
	.cfi_def_cfa_register %rbp
	andq	$-32, %rsp		/* 4 */
	subq	$64, %rsp		/* 4 */
	leave				/* ends at 13 */
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
END(cfi_realign_fp)

/*
 * Stack realignment through a DRAP register, as GCC writes it for a
 * function that realigns and reads its stack arguments: the CFA is %r10
 * first, then an expression that loads the saved %r10.  Left out:
 * cfa_reg, the first reason met.
 */
FUNC(cfi_drap)
	.cfi_startproc
	leaq	8(%rsp), %r10		/* 5 */
	.cfi_def_cfa %r10, 0
	andq	$-32, %rsp
	pushq	-8(%r10)
	pushq	%rbp
	/* DW_CFA_expression %rbp: DW_OP_breg6 0 */
	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00
	movq	%rsp, %rbp
	pushq	%r10
	/* DW_CFA_def_cfa_expression: DW_OP_breg6 -8, DW_OP_deref */
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06
	popq	%r10
	.cfi_def_cfa %r10, 0
	popq	%rbp
	leaq	-8(%r10), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
END(cfi_drap)

/*
 * The CFA by a DWARF expression from the first byte, the one ld writes
 * for a PLT: %rsp + 8, plus 8 past the 11th byte of each 16.  Left out:
 * cfa_expr.
 */
FUNC(cfi_cfa_expr)
	.cfi_startproc
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 8, DW_OP_breg16 0,
	 * DW_OP_lit15, DW_OP_and, DW_OP_lit11, DW_OP_ge, DW_OP_lit3,
	 * DW_OP_shl, DW_OP_plus
	 */
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b
	.cfi_escape 0x2a, 0x33, 0x24, 0x22
	nop
	ret
	.cfi_endproc
END(cfi_cfa_expr)

/*
 * An expression of a single DW_OP_breg7 8 is CFA = %rsp + 8, as
 * DW_CFA_def_cfa would say: converts, one row.
 */
FUNC(cfi_cfa_breg)
	.cfi_startproc
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 8 */
	.cfi_escape 0x0f, 0x02, 0x77, 0x08
	nop
	ret
	.cfi_endproc
END(cfi_cfa_breg)

/* The return address popped into a register, as vfork does: ra_rule. */
FUNC(cfi_ra_reg)
	.cfi_startproc
	popq	%rdi			/* 1 */
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %rdi
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rip, -8
	ret
	.cfi_endproc
END(cfi_ra_reg)

/* RBP as a value rather than a saved slot: rbp_rule. */
FUNC(cfi_rbp_val)
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_val_offset %rbp, -16
	popq	%rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(cfi_rbp_val)

/* RBP saved further from the CFA than a row's 16 bits reach: range. */
FUNC(cfi_rbp_far)
	.cfi_startproc
	subq	$40008, %rsp		/* 7 */
	.cfi_def_cfa_offset 40016
	movq	%rbp, (%rsp)
	.cfi_offset %rbp, -40016
	movq	(%rsp), %rbp
	.cfi_restore %rbp
	addq	$40008, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(cfi_rbp_far)

/*
 * The outermost frame: the return address undefined from the first
 * byte, as in _start.  One outermost row, whatever the CFA does after.
 */
FUNC(cfi_outermost)
	.cfi_startproc
	.cfi_undefined %rip
	xorl	%ebp, %ebp		/* 2 */
	pushq	%rax
	.cfi_adjust_cfa_offset 8
	hlt
	.cfi_endproc
END(cfi_outermost)


/* A signal frame ("S" augmentation): signal. */
FUNC(cfi_signal)
	.cfi_startproc
	.cfi_signal_frame
	nop
	ret
	.cfi_endproc
END(cfi_signal)

/*
 * RBP said undefined: a row cannot say the caller's RBP is lost, only
 * that it is still in RBP.  Converts: one row.
 */
FUNC(cfi_rbp_undefined)
	.cfi_startproc
	.cfi_undefined %rbp
	xorl	%ebp, %ebp
	ret
	.cfi_endproc
END(cfi_rbp_undefined)

/*
 * Advances of two and four bytes (DW_CFA_advance_loc2 and 4): rows at
 * 0, 1, 304 and 70305.
 */
FUNC(cfi_long)
	.cfi_startproc
	pushq	%rbp			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	.skip	300, 0x90
	movq	%rsp, %rbp		/* ends at 304 */
	.cfi_def_cfa_register %rbp
	.skip	70000, 0x90
	popq	%rbp			/* ends at 70305 */
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
END(cfi_long)

/*
 * RBP saved by an expression of one DW_OP_plus_uconst, whose operand
 * (2^64 - 16, ten bytes of ULEB128) libdw adds to the CFA it pushes:
 * the same slot as .cfi_offset %rbp, -16.  Rows at 0, 1 and 2.
 */
FUNC(cfi_rbp_expr)
	.cfi_startproc
	pushq	%rbp			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_escape 0x10, 0x06, 0x0b, 0x23, 0xf0, 0xff, 0xff, 0xff, 0xff
	.cfi_escape 0xff, 0xff, 0xff, 0xff, 0x01
	popq	%rbp			/* ends at 2 */
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(cfi_rbp_expr)

/* The return address as a value (DW_CFA_val_expression, DW_OP_lit1). */
FUNC(cfi_ra_val_expr)
	.cfi_startproc
	.cfi_escape 0x16, 0x10, 0x01, 0x31
	ret
	.cfi_endproc
END(cfi_ra_val_expr)

/*
 * DW_CFA_GNU_window_save, SPARC's, which libdw applies on any machine
 * but AArch64: the return address at the CFA itself, ra_rule.  The
 * interpreter leaves it to libdw, the one FDE of the fixture it does.
 */
FUNC(cfi_window_save)
	.cfi_startproc
	.cfi_escape 0x2d
	ret
	.cfi_endproc
END(cfi_window_save)

/*
 * An offset set on a CFA that an expression gives: libdw makes the CFA
 * invalid, malformed.
 */
FUNC(cfi_offset_on_expr)
	.cfi_startproc
	.cfi_escape 0x0f, 0x02, 0x77, 0x08
	.cfi_def_cfa_offset 16
	ret
	.cfi_endproc
END(cfi_offset_on_expr)

/*
 * A state at each of 8192 bytes, all with the same rules: more states
 * than the conversion replays for one FDE.  Left out: range.
 */
FUNC(cfi_many_states)
	.cfi_startproc
	.rept	8192
	nop
	.cfi_def_cfa_offset 8
	.endr
	ret
	.cfi_endproc
END(cfi_many_states)
