/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the SFrame user stack walker (kernel/unwind/sframe_user.c) knows
 * of x86-64's user frames, where no table describes a frame: the frame
 * record that frame pointers chain, where the return address is before
 * a function's first instruction has run, the code of the rt_sigreturn
 * trampoline, and where a signal frame keeps the interrupted registers.
 */
#ifndef _ASM_X86_SFRAME_WALK_H
#define _ASM_X86_SFRAME_WALK_H

#include <linux/stddef.h>
#include <linux/types.h>

#include <asm/sigframe.h>

/*
 * A frame record, at the frame pointer: the caller's frame pointer, then
 * the return address.  The caller's stack pointer is just above it.
 */
#define SFRAME_ARCH_FP_RECORD_FP	0
#define SFRAME_ARCH_FP_RECORD_RA	sizeof(long)
#define SFRAME_ARCH_FP_RECORD_SIZE	(2 * sizeof(long))

/*
 * On a function's first instruction the call has just pushed the return
 * address: it is at the stack pointer, and the caller's stack pointer
 * is just above it.
 */
#define SFRAME_ARCH_ENTRY_RA_SIZE	sizeof(long)

/*
 * The rt_sigreturn trampoline, "mov $15, %rax; syscall", as glibc and
 * musl write it; see Documentation/userspace-api/sframe.rst.
 */
#define SFRAME_ARCH_SIGRETURN_INSN					\
	{ 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 }

/*
 * The signal frame's size, at most, below the stack pointer the handler
 * returned with.
 */
#define SFRAME_ARCH_SIGFRAME_SIZE	sizeof(struct rt_sigframe)

/**
 * sframe_arch_sigcontext() - where a signal frame's registers are
 * @sp: the stack pointer at the trampoline: the handler's return popped
 *	the rt_sigframe's return address, so it points at the ucontext.
 *
 * Return: the user address of the struct sigcontext that holds the
 * interrupted registers.  The caller checks @sp against
 * SFRAME_ARCH_SIGFRAME_SIZE first.
 */
static inline unsigned long sframe_arch_sigcontext(unsigned long sp)
{
	return sp - sizeof(long) + offsetof(struct rt_sigframe, uc.uc_mcontext);
}

/* Offsets in struct sigcontext of the interrupted PC, SP and FP. */
#define SFRAME_ARCH_SC_PC	offsetof(struct sigcontext, ip)
#define SFRAME_ARCH_SC_SP	offsetof(struct sigcontext, sp)
#define SFRAME_ARCH_SC_FP	offsetof(struct sigcontext, bp)

#endif /* _ASM_X86_SFRAME_WALK_H */
