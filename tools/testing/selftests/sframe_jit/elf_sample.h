/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between elf_sample_test and elf_sample_lib.so, the
 * library it dlopen()s: the program calls into the library, the library
 * calls back into the program.  Both are built with -fomit-frame-pointer
 * and -Wa,--gsframe.
 */
#ifndef ELF_SAMPLE_H
#define ELF_SAMPLE_H

#define ELF_SAMPLE_LIB		"elf_sample_lib.so"
#define ELF_SAMPLE_LIB_ENTRY	"elf_lib_outer"
#define ELF_SAMPLE_LIB_RET	"elf_lib_ret"

/* The program's callback, which the library's inner function calls. */
typedef long (*elf_sample_cb)(long x);

/* The library's two frames, outer first. */
enum { ELF_LIB_OUTER, ELF_LIB_INNER, ELF_LIB_NR };

/*
 * elf_lib_outer(x, cb) calls a function of the library's own, which
 * calls cb; each stores its return address in elf_lib_ret[] first.
 */
typedef long (*elf_lib_entry)(long x, elf_sample_cb cb);

#endif /* ELF_SAMPLE_H */
