/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The code of sframe-run's __register_frame() tests (frames_test.c,
 * frames_preload.c): linked alone into jit_frame.so, whose .text and
 * .eh_frame jit_image.c copies into anonymous memory as a JIT writes
 * them, out of every object the loader or libgcc knows.
 *
 * jit_call(fn, arg) calls fn(arg) from a frame without a frame pointer:
 * only its FDE gets an unwinder past it.  Its rows, by offset:
 *	0 CFA = SP + 8, 1 SP + 16, 5 SP + 48, 17 SP + 16, 18 SP + 8.
 */
	.text
	.globl	jit_call
	.type	jit_call, @function
jit_call:
	.cfi_startproc
	push	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub	$32, %rsp
	.cfi_def_cfa_offset 48
	mov	%rdi, %rax
	mov	%rsi, %rdi
	call	*%rax
	add	$32, %rsp
	.cfi_def_cfa_offset 16
	pop	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	jit_call, . - jit_call

	.section .note.GNU-stack, "", @progbits
