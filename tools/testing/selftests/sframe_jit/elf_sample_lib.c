// SPDX-License-Identifier: GPL-2.0
/*
 * elf_sample_lib.so, which elf_sample_test dlopen()s: two frames of a
 * shared library between frames of the program.  Built with
 * -fomit-frame-pointer and -Wa,--gsframe, so its .sframe section, which
 * the test registers with SFRAME_REGISTER_ELF, is the only description of
 * its frames.
 *
 * Each function keeps six values live across its call, so that every
 * callee-saved register, %rbp among them, holds data on the stack, and
 * an array whose address escapes keeps a stack adjustment below them.
 * `objdump -d --sframe elf_sample_lib.so` shows the frames.
 */
#include "elf_sample.h"

#ifdef __clang__
#define CHAIN_FN __attribute__((__noinline__))
#else
/* No inlining, cloning or merging: the function that runs is this one. */
#define CHAIN_FN __attribute__((__noipa__))
#endif

#define EXPORT __attribute__((__visibility__("default")))

/* The return addresses of the two functions, outer first. */
EXPORT unsigned long elf_lib_ret[ELF_LIB_NR];

/* Read once each: values a compiler cannot recompute after the call. */
static volatile long seed[6] = { 3, 5, 7, 11, 13, 17 };

static CHAIN_FN long elf_lib_inner(long x, elf_sample_cb cb)
{
	long a = x + seed[0], b = x ^ seed[1], c = x - seed[2];
	long d = x * seed[3], e = x + seed[4], f = x * seed[5];
	long keep[5] = { a, b, c, d, e };
	long r;

	elf_lib_ret[ELF_LIB_INNER] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = cb(a);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 2 * b + 3 * c + 5 * d + 7 * e + 11 * f + keep[4];
}

EXPORT CHAIN_FN long elf_lib_outer(long x, elf_sample_cb cb)
{
	long a = x - seed[5], b = x * seed[4], c = x ^ seed[3];
	long d = x + seed[2], e = x - seed[1], f = x * seed[0];
	long keep[3] = { a, c, e };
	long r;

	elf_lib_ret[ELF_LIB_OUTER] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = elf_lib_inner(b, cb);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + keep[1];
}
