// SPDX-License-Identifier: GPL-2.0
/*
 * The program exec_bench executes: linked statically with the functions
 * of gen_funcs.sh and -Wa,--gsframe, so that its PT_GNU_SFRAME segment
 * holds a .sframe of a few thousand functions.
 *
 *	exec_target          exit at once: what exec_bench times
 *	exec_target wait     write a byte to stdout, then sleep until killed:
 *			     another live process of the same file
 *	exec_target check    print "registered" if binfmt_elf registered
 *			     the program's .sframe at exec, else
 *			     "unregistered" (then the registration is gone)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sframe.h>

#ifndef __NR_sframe_register
#define __NR_sframe_register 472
#endif

/* The range binfmt_elf registers: all executable PT_LOAD segments. */
static int text_range(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sframe_unregister_args *args = data;
	__u64 start = ~0ULL, end = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		if (p->p_vaddr < start)
			start = p->p_vaddr;
		if (p->p_vaddr + p->p_memsz > end)
			end = p->p_vaddr + p->p_memsz;
	}
	args->text_start = info->dlpi_addr + start;
	args->text_end = info->dlpi_addr + end;
	return 1;	/* the program itself is the first object */
}

/* Unregistering the exact range succeeds only if exec registered it. */
static int check(void)
{
	struct sframe_unregister_args args = { 0 };
	long ret;

	dl_iterate_phdr(text_range, &args);
	ret = syscall(__NR_sframe_register, SFRAME_UNREGISTER, &args,
		      sizeof(args));
	if (!ret) {
		puts("registered");
		return 0;
	}
	if (errno == ENOENT) {
		puts("unregistered");
		return 0;
	}
	printf("sframe_register: %s\n", strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 0;
	if (!strcmp(argv[1], "wait")) {
		if (write(1, "", 1) != 1)
			return 1;
		for (;;)
			pause();
	}
	if (!strcmp(argv[1], "check"))
		return check();
	return 2;
}
