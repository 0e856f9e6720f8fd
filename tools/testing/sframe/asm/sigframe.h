/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the x86-64 signal frame the kernel writes, as
 * arch/x86/include/asm/sigframe.h and uapi/asm/sigcontext.h define it,
 * spelled out so that it does not meet the C library's struct
 * sigcontext.  The walker reads the interrupted registers from it.
 */
#ifndef _SFRAME_SHIM_ASM_SIGFRAME_H
#define _SFRAME_SHIM_ASM_SIGFRAME_H

#include <assert.h>
#include <stddef.h>
#include <linux/types.h>

struct sigcontext {
	u64 r8, r9, r10, r11, r12, r13, r14, r15;
	u64 di, si, bp, bx, dx, ax, cx, sp, ip;
	u64 flags;
	u16 cs, gs, fs, ss;
	u64 err, trapno, oldmask, cr2;
	u64 fpstate;
	u64 reserved1[8];
};

struct sframe_shim_stack {
	void *ss_sp;
	int ss_flags;
	size_t ss_size;
};

struct ucontext {
	unsigned long uc_flags;
	struct ucontext *uc_link;
	struct sframe_shim_stack uc_stack;
	struct sigcontext uc_mcontext;
	u64 uc_sigmask;
};

struct rt_sigframe {
	char *pretcode;
	struct ucontext uc;
	u8 info[128];
};

/* The offsets of the x86-64 psABI and of glibc's ucontext_t gregs. */
static_assert(offsetof(struct rt_sigframe, uc.uc_mcontext) == 48,
	      "the sigcontext follows pretcode and the ucontext head");
static_assert(offsetof(struct sigcontext, bp) == 10 * 8 &&
	      offsetof(struct sigcontext, sp) == 15 * 8 &&
	      offsetof(struct sigcontext, ip) == 16 * 8,
	      "REG_RBP, REG_RSP and REG_RIP");
static_assert(sizeof(struct sigcontext) == 256, "struct sigcontext_64");

#endif /* _SFRAME_SHIM_ASM_SIGFRAME_H */
