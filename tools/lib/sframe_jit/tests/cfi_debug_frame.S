/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions whose call frame information is in .debug_frame alone, as a
 * JIT describes its code to a debugger, for the test of
 * SFRAME_JIT_CFI_F_DEBUG_FRAME (cfi_test.c).  As in cfi_fixture.S, each
 * instruction's length is written beside it, so that the offsets where
 * the rules change are known.  Linked with -nostdlib into
 * cfi_debug_frame.so, which then has no .eh_frame at all, and with
 * cfi_fixture.o into cfi_both_frames.so, an object with both sections
 * that cover different functions, as one linked from objects built with
 * and without -fasynchronous-unwind-tables has them; never run.
 */

#define FUNC(name)	.globl name; .type name, @function; name:
#define END(name)	.size name, . - name

	.cfi_sections .debug_frame
	.text

/* No frame: one row. */
FUNC(dbgf_leaf)
	.cfi_startproc
	leal	1(%rdi), %eax		/* 3 */
	ret
	.cfi_endproc
END(dbgf_leaf)

/* push %rbp; mov %rsp,%rbp; ...; leave; ret: rows at 0, 1, 4 and 11. */
FUNC(dbgf_fp)
	.cfi_startproc
	pushq	%rbp			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp		/* 3, ends at 4 */
	.cfi_def_cfa_register %rbp
	subq	$16, %rsp		/* 4 */
	xorl	%eax, %eax		/* 2 */
	leave				/* 1, ends at 11 */
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
END(dbgf_fp)

/* sub $24,%rsp; ...; add $24,%rsp; ret: rows at 0, 4 and 12. */
FUNC(dbgf_sub_rsp)
	.cfi_startproc
	subq	$24, %rsp		/* 4 */
	.cfi_def_cfa_offset 32
	movq	%rdi, (%rsp)		/* 4 */
	addq	$24, %rsp		/* 4, ends at 12 */
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(dbgf_sub_rsp)

/*
 * RBP and RBX pushed without a frame pointer, and two epilogues, the
 * first one's state remembered and restored for the second: rows at 0,
 * 1, 2, 7, 8, 9, 15 and 16.
 */
FUNC(dbgf_two_exits)
	.cfi_startproc
	pushq	%rbp			/* 1 */
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	pushq	%rbx			/* 1, ends at 2 */
	.cfi_def_cfa_offset 24
	.cfi_offset %rbx, -24
	testl	%edi, %edi		/* 2 */
	je	1f			/* 2 */
	popq	%rbx			/* 1, ends at 7 */
	.cfi_remember_state
	.cfi_restore %rbx
	.cfi_def_cfa_offset 16
	popq	%rbp			/* 1, ends at 8 */
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret				/* ends at 9 */
1:
	.cfi_restore_state
	movl	$1, %eax		/* 5 */
	popq	%rbx			/* 1, ends at 15 */
	.cfi_restore %rbx
	.cfi_def_cfa_offset 16
	popq	%rbp			/* 1, ends at 16 */
	.cfi_restore %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
END(dbgf_two_exits)
