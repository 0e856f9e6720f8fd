/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Code of the shapes HotSpot's x86-64 compilers emit, for
 * jvm_decode_test.c: each label names a point whose frame the test
 * expects, as the comment beside it says (CFA - SP; where the caller's
 * %rbp is saved).  Never run, only decoded.
 */
	.text

/* A C2 method: stack bang, frame, a call, two epilogues, the poll
 * stub an epilogue branches to, right after a call to a stub that never
 * returns (as C1 lays its exception stubs out), exception and
 * deoptimization handlers that no path from the entry reaches. */
	.globl	c2_method, c2_push, c2_sub, c2_body, c2_epi_add, c2_epi_pop
	.globl	c2_epi_poll, c2_ret, c2_slow, c2_slow_pop, c2_slow_jmp
	.globl	c2_throw, c2_poll_stub, c2_exc, c2_deopt, c2_deopt_next
	.globl	c2_end
c2_method:
	movl	%eax, -0x14000(%rsp)	/* 8 */
c2_push:
	pushq	%rbp			/* 8 */
c2_sub:
	subq	$0x30, %rsp		/* 16, rbp at -16 */
c2_body:
	addq	$1, %rsi		/* 64, rbp at -16 */
	call	outside
	testq	%rax, %rax
	je	c2_slow
	jl	c2_throw
c2_epi_add:
	addq	$0x30, %rsp		/* 64 */
c2_epi_pop:
	popq	%rbp			/* 16 */
c2_epi_poll:
	cmpq	0x340(%r15), %rsp	/* 8, rbp in its register */
	ja	c2_poll_stub
c2_ret:
	ret				/* 8 */
c2_slow:
	movq	%rax, %rsi		/* 64 */
	addq	$0x30, %rsp
c2_slow_pop:
	popq	%rbp			/* 16 */
c2_slow_jmp:
	jmp	outside			/* 8 */
c2_throw:
	call	outside			/* 64: a stub that never returns */
c2_poll_stub:
	movabsq	$0, %r10		/* 8: after the epilogue */
	movq	%r10, 0x358(%r15)
	jmp	outside
	hlt
	hlt
c2_exc:
	movabsq	$0, %rbx		/* 64: the body's */
	jmp	outside
c2_deopt:
	call	c2_deopt_next		/* 64 */
c2_deopt_next:
	subq	$5, (%rsp)		/* 72 */
	jmp	outside
c2_end:

/* An OSR method: its OSR entry builds the frame again and jumps into
 * the loop. */
	.globl	osr_method, osr_loop, osr_entry, osr_entry_push, osr_end
osr_method:
	movl	%eax, -0x14000(%rsp)
	pushq	%rbp
	subq	$0x20, %rsp
osr_loop:
	decl	%ecx			/* 48 */
	jne	osr_loop
	addq	$0x20, %rsp
	popq	%rbp
	ret
osr_entry:
	movl	%eax, -0x14000(%rsp)	/* 8 */
osr_entry_push:
	pushq	%rbp			/* 8 */
	subq	$0x20, %rsp
	call	outside
	jmp	osr_loop
osr_end:

/* A native wrapper: a frame on %rbp, the stack aligned for the call
 * with a copy of %rsp in %r12. */
	.globl	wrap, wrap_mov, wrap_align, wrap_call, wrap_back, wrap_leave
	.globl	wrap_ret, wrap_end
wrap:
	pushq	%rbp			/* 8 */
wrap_mov:
	movq	%rsp, %rbp		/* 16 */
	subq	$0x20, %rsp
	movq	%rsp, %r12		/* 48 */
wrap_align:
	andq	$-16, %rsp		/* 48 */
wrap_call:
	call	outside			/* %rbp + 16 */
	movq	%r12, %rsp		/* %rbp + 16 */
wrap_back:
	xorq	%r12, %r12		/* 48 */
wrap_leave:
	leave				/* 48 */
wrap_ret:
	ret				/* 8 */
wrap_end:

/* A method made not entrant: a jump written over its stack bang, the
 * bang's last two bytes left; no path from the entry reaches the body,
 * where threads already in it still run. */
	.globl	patched, patched_body, patched_pop, patched_ret, patched_end
patched:
	.byte	0xe9			/* 8 */
	.long	outside - . - 4
	.byte	0xfe, 0xff
	pushq	%rbp
	subq	$0x30, %rsp
patched_body:
	addq	$1, %rsi		/* 64 */
	call	outside
	addq	$0x30, %rsp
patched_pop:
	popq	%rbp			/* 16 */
patched_ret:
	ret				/* 8 */
patched_end:

/* A stub that loses its stack pointer with no frame pointer. */
	.globl	lost, lost_and, lost_end
lost:
	subq	$8, %rsp		/* 8 */
lost_and:
	andq	$-16, %rsp		/* 16 */
	call	outside			/* nothing known */
	ret
lost_end:

outside:
	ret
	.section .note.GNU-stack,"",@progbits
