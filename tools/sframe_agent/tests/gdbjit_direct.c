// SPDX-License-Identifier: GPL-2.0
/*
 * A JIT that announces its code through the GDB JIT interface, calling
 * __jit_debug_register_code() directly inside its own executable, as
 * GDB's manual describes the interface: no library, no PLT, nothing an
 * in-process preload could interpose.
 *
 *	gdbjit_direct BLOB DELAY_MS SECONDS
 *
 * Waits DELAY_MS, copies BLOB's executable segment to the address it was
 * linked at, links BLOB's bytes into __jit_debug_descriptor's list and
 * calls __jit_debug_register_code(), then calls the code's entry in a
 * loop for SECONDS: main -> blob_entry -> blob_mid -> blob_leaf.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct jit_code_entry {
	struct jit_code_entry *next_entry;
	struct jit_code_entry *prev_entry;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version;
	uint32_t action_flag;
	struct jit_code_entry *relevant_entry;
	struct jit_code_entry *first_entry;
};

#define JIT_REGISTER_FN	1

/* The names GDB looks for; a debugger breaks on the function. */
struct jit_descriptor __jit_debug_descriptor = { .version = 1 };

__attribute__((noinline)) void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

static char *file_read(const char *path, size_t *size)
{
	struct stat st;
	char *buf;
	FILE *f;

	f = fopen(path, "re");
	if (!f || fstat(fileno(f), &st))
		return NULL;
	buf = malloc(st.st_size);
	if (buf && fread(buf, 1, st.st_size, f) != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*size = st.st_size;
	return buf;
}

/* The blob's executable segment, at the address it was linked for. */
static int code_place(const char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Phdr *ph;
	uintptr_t page, end;
	void *at;
	int i;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(*ph) > size)
		return -ENOEXEC;
	ph = (const void *)(img + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++, ph++) {
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    ph->p_offset + ph->p_filesz > size)
			continue;
		page = ph->p_vaddr & ~4095UL;
		end = (ph->p_vaddr + ph->p_memsz + 4095) & ~4095UL;
		at = mmap((void *)page, end - page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			  -1, 0);
		if (at != (void *)page)
			return -ENOMEM;
		memcpy((void *)ph->p_vaddr, img + ph->p_offset, ph->p_filesz);
		if (mprotect(at, end - page, PROT_READ | PROT_EXEC))
			return -errno;
		return 0;
	}
	return -ENOEXEC;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static struct jit_code_entry entry;
	long (*code)(long n);
	double end;
	size_t size;
	char *img;
	long sum = 0;

	if (argc != 4)
		return 2;
	img = file_read(argv[1], &size);
	if (!img || code_place(img, size)) {
		fprintf(stderr, "gdbjit_direct: cannot place %s\n", argv[1]);
		return 1;
	}
	usleep(atoi(argv[2]) * 1000);
	entry.symfile_addr = img;
	entry.symfile_size = size;
	__jit_debug_descriptor.first_entry = &entry;
	__jit_debug_descriptor.relevant_entry = &entry;
	__jit_debug_descriptor.action_flag = JIT_REGISTER_FN;
	__jit_debug_register_code();

	code = (long (*)(long))((const Elf64_Ehdr *)img)->e_entry;
	end = now() + atof(argv[3]);
	while (now() < end)
		sum += code(20000);
	printf("%ld\n", sum & 1);
	return 0;
}
