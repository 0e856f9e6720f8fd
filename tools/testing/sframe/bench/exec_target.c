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
 *			     "unregistered" (then the registration is gone),
 *			     "no PT_GNU_SFRAME" for a program without one,
 *			     or without the PT_NULL that sframe_nophdr
 *			     left in its place
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sframe.h>

#ifndef __NR_sframe_unregister
#define __NR_sframe_unregister 474
#endif

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

/*
 * What names the registration binfmt_elf makes: the address of the
 * PT_GNU_SFRAME segment at the load bias, the other fields zero.  In the
 * copy sframe_nophdr made, that header is PT_NULL with its address and
 * size kept: the one PT_NULL header with a size.
 */
static int sframe_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sframe_setup *setup = data;
	const ElfW(Phdr) *ph;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_GNU_SFRAME ||
		    (ph->p_type == PT_NULL && ph->p_memsz))
			setup->sframe_start = info->dlpi_addr + ph->p_vaddr;
	}
	return 1;	/* the program itself is the first object */
}

/* Unregistering the section succeeds only if exec registered it. */
static int check(void)
{
	struct sframe_setup setup = { 0 };
	long ret;

	dl_iterate_phdr(sframe_segment, &setup);
	if (!setup.sframe_start) {
		puts("no PT_GNU_SFRAME");
		return 1;
	}
	ret = syscall(__NR_sframe_unregister, &setup, sizeof(setup));
	if (!ret) {
		puts("registered");
		return 0;
	}
	if (errno == ENOENT) {
		puts("unregistered");
		return 0;
	}
	printf("sframe_unregister: %s\n", strerror(errno));
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
