// SPDX-License-Identifier: GPL-2.0
/*
 * C code between JIT frames, built with -fomit-frame-pointer and
 * -Wa,--gsframe: it keeps no frame record, and the executable's .sframe
 * section, which binfmt_elf registers at exec, is the only description
 * of its frame.  Only the SFrame unwinder gets through it.
 *
 * The frame must be one that a guess cannot unwind: values live across
 * the call keep callee-saved registers, %rbp among them, on the stack,
 * and an array whose address escapes keeps a stack adjustment below
 * them.  %rbp holds data, not a frame address, while the callee runs.
 * `objdump -d sample_bridge.o` shows the frame this gives.
 */
#include "sample_bridge.h"

long (*sample_bridge_callee)(long x);
unsigned long sample_bridge_ret;

long sample_bridge(long x)
{
	long a = x * 3 + 1, b = x ^ 0x5a5a, c = x - 7, d = x * x, e = x + 11;
	long keep[4] = { a, b, c, d };
	long r;

	sample_bridge_ret = (unsigned long)__builtin_return_address(0);
	/* The array must be in memory, on this frame, across the call. */
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = sample_bridge_callee(a);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 2 * b + 3 * c + 5 * d + 7 * e + keep[0] + keep[3];
}
