// SPDX-License-Identifier: GPL-2.0
/*
 * The interim "make demo": show sframe_register(2) at work in the test
 * kernel.  It registers a JIT registry, publishes one function through
 * the shared-memory protocol, shows that the kernel registered this
 * program's own PT_GNU_SFRAME at exec, and that fork copies the
 * registry.  The profiling demo replaces it once the unwinder lands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/sframe.h>

#ifndef __NR_sframe_register
#define __NR_sframe_register 463
#endif

static long sframe_register(unsigned int op, void *args, size_t size)
{
	long ret = syscall(__NR_sframe_register, op, args, size);

	return ret == -1 ? -errno : ret;
}

/* Publish "push rbp; mov rbp, rsp; ...; pop rbp; ret" at @start. */
static void publish(struct sframe_jit_header *h, unsigned long start)
{
	struct sframe_jit_fde *fde = (void *)((char *)h + h->fde_off);
	struct sframe_jit_fre *fre = (void *)((char *)h + h->fre_off);
	struct sframe_jit_fre rows[] = {
		{ .start_off = 0, .cfa_off = 8, .ra_off = -8 },
		{ .start_off = 1, .cfa_off = 16, .ra_off = -8, .fp_off = -16,
		  .flags = SFRAME_JIT_FRE_FP_SAVED },
		{ .start_off = 4, .cfa_off = 16, .ra_off = -8, .fp_off = -16,
		  .cfa_base = SFRAME_JIT_CFA_FP, .flags = SFRAME_JIT_FRE_FP_SAVED },
		{ .start_off = 63, .cfa_off = 8, .ra_off = -8 },
	};
	unsigned int n = atomic_load_explicit((_Atomic __u32 *)&h->fde_count,
					      memory_order_relaxed);

	memcpy(fre, rows, sizeof(rows));
	fde[n] = (struct sframe_jit_fde){ .func_start = start, .func_size = 64,
					  .fre_start = 0, .fre_count = 4 };
	atomic_store_explicit((_Atomic __u32 *)&h->fde_count, n + 1,
			      memory_order_release);
}

static int find_sframe(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sframe_elf_args *a = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == 0x6474e554) {
			a->sframe_addr = info->dlpi_addr + p->p_vaddr;
			a->sframe_size = p->p_memsz;
		} else if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			a->text_start = info->dlpi_addr + p->p_vaddr;
			a->text_end = a->text_start + p->p_memsz;
		}
	}
	return 1;	/* the executable comes first */
}

int main(void)
{
	static char code[1 << 16] __attribute__((aligned(4096)));
	struct sframe_jit_args args = {
		.text_start = (unsigned long)code,
		.text_end = (unsigned long)code + sizeof(code),
		.fde_capacity = 256, .fre_capacity = 1024,
	};
	struct sframe_elf_args self = { 0 };
	struct sframe_jit_header *h;
	struct utsname u;
	long ret;
	pid_t pid;

	uname(&u);
	printf("kernel %s\n", u.release);
	ret = sframe_register(SFRAME_REGISTER_JIT, &args, sizeof(args));
	if (ret < 0 && ret > -4096) {
		printf("sframe_register(SFRAME_REGISTER_JIT): %s\n", strerror(-ret));
		return 1;
	}
	h = (void *)ret;
	printf("JIT registry for [%#llx, %#llx) mapped at %p: magic %#x, version %u,\n"
	       "  %u descriptors at +%u, %u rows at +%u, %u bytes\n",
	       (unsigned long long)h->text_start, (unsigned long long)h->text_end,
	       (void *)h, h->magic, h->version, h->fde_capacity, h->fde_off,
	       h->fre_capacity, h->fre_off, h->map_size);
	publish(h, args.text_start);
	printf("published one function: fde_count = %u (no system call)\n",
	       h->fde_count);
	ret = sframe_register(SFRAME_REGISTER_JIT, &args, sizeof(args));
	printf("registering the same range again: %s\n", strerror(-ret));

	dl_iterate_phdr(find_sframe, &self);
	ret = sframe_register(SFRAME_REGISTER_ELF, &self, sizeof(self));
	printf("this program's .sframe (%llu bytes) was registered at exec: %s\n",
	       (unsigned long long)self.sframe_size,
	       ret == -EEXIST ? "yes (EEXIST)" : strerror(-ret));

	pid = fork();
	if (pid == 0) {
		h->fde_count = 0;
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	printf("after a child cleared its copy: fde_count here = %u\n",
	       h->fde_count);
	ret = sframe_register(SFRAME_REPLACE_JIT, &args, sizeof(args));
	printf("replaced with a new registry at %#lx: fde_count = %u\n", ret,
	       ((struct sframe_jit_header *)ret)->fde_count);
	return 0;
}
