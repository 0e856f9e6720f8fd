// SPDX-License-Identifier: GPL-2.0
/*
 * A JIT that announces its code in one of two ways:
 *
 *  - gdb: through the GDB JIT interface, calling
 *    __jit_debug_register_code() directly inside its own executable, as
 *    GDB's manual describes the interface: no library, no PLT, nothing
 *    an in-process preload could interpose;
 *  - frame: with libgcc's __register_frame(), given the .eh_frame
 *    entries at the address they describe the code from, as LLVM's JITs
 *    do.
 *
 *	jit_direct gdb|frame BLOB DELAY_MS SECONDS
 *
 * Copies BLOB's segments to the addresses it was linked at (the code's
 * and, for frame, the .eh_frame's, with the zeros after it that end the
 * entries), waits DELAY_MS, announces the code, then calls its entry in
 * a loop for SECONDS: main -> blob_entry -> blob_mid -> blob_leaf.
 * Then it takes the code back (the entry unlinked, or
 * __deregister_frame()), says "withdrawn" on its output, and waits to
 * be killed.
 *
 * With JIT_DIRECT_PAD=N in the environment, frame first registers N
 * objects of a CIE and no FDE, so that libgcc's list of objects, newest
 * first, holds N more behind the code's: what the agent's walk of the
 * list must stop in; with JIT_DIRECT_PAD_SIZE=BYTES too, each of them is
 * a CIE of BYTES, so that the walk reads more than it may in all.  With
 * JIT_DIRECT_BIG=BYTES, frame registers a copy
 * of the entries behind a CIE of BYTES, its FDEs' pc-relative starts
 * made right for where the copy is: entries larger than the agent reads.
 * With JIT_DIRECT_LATE=MS, frame places the code writable, not
 * executable, registers it, and makes it executable MS later, as LLVM's
 * RuntimeDyld registers before its memory manager's mprotect().
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
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

#define JIT_REGISTER_FN		1
#define JIT_UNREGISTER_FN	2

/*
 * libgcc's, which no installed header declares: looked up in libgcc_s,
 * as a JIT loaded into a scope of its own finds them.
 */
typedef void frame_fn(void *begin);

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

/* The code's pages, while JIT_DIRECT_LATE keeps them not executable. */
static void *late_at;
static size_t late_len;

/* A segment, at the address it was linked for, with @prot. */
static int segment_place(const char *img, const Elf64_Phdr *ph, int prot)
{
	uintptr_t page = ph->p_vaddr & ~4095UL;
	uintptr_t end = (ph->p_vaddr + ph->p_memsz + 4095) & ~4095UL;
	void *at;

	/* Room for the terminator that ends .eh_frame's entries. */
	if (end - (ph->p_vaddr + ph->p_memsz) < 4)
		end += 4096;
	at = mmap((void *)page, end - page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (at != (void *)page)
		return -ENOMEM;
	memcpy((void *)ph->p_vaddr, img + ph->p_offset, ph->p_filesz);
	if ((prot & PROT_EXEC) && getenv("JIT_DIRECT_LATE")) {
		late_at = at;
		late_len = end - page;
		return 0;
	}
	return mprotect(at, end - page, prot) ? -errno : 0;
}

/*
 * The blob's loadable segments, each at the address it was linked for:
 * its code, and the .eh_frame that describes it there.
 */
static int blob_place(const char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Phdr *ph;
	int i, err;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_phoff + (size_t)eh->e_phnum * sizeof(*ph) > size)
		return -ENOEXEC;
	ph = (const void *)(img + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++, ph++) {
		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		if (ph->p_offset + ph->p_filesz > size)
			return -ENOEXEC;
		err = segment_place(img, ph, ph->p_flags & PF_X ?
				    PROT_READ | PROT_EXEC : PROT_READ);
		if (err)
			return err;
	}
	return 0;
}

/* Where the blob's .eh_frame section is, or NULL. */
static void *blob_eh_frame(const char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const void *)img;
	const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
	const char *names;
	int i;

	if (eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > size ||
	    eh->e_shstrndx >= eh->e_shnum ||
	    sh[eh->e_shstrndx].sh_offset >= size)
		return NULL;
	names = img + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_name < size - sh[eh->e_shstrndx].sh_offset &&
		    !strcmp(names + sh[i].sh_name, ".eh_frame"))
			return (void *)sh[i].sh_addr;
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * An .eh_frame of one CIE (CFA = RSP + 8, the return address at CFA - 8)
 * and no FDE, then the terminator: an object for libgcc's list that
 * describes no code.
 */
static const uint32_t cie_only[] = {
	12,			/* length */
	0,			/* CIE id */
	0x78010001,		/* version 1, "", code align 1, data -8 */
	0x08070c10,		/* RA 16; DW_CFA_def_cfa rsp, 8 */
	0,			/* terminator */
};

/*
 * JIT_DIRECT_PAD objects of cie_only, each registered with libgcc; each
 * a CIE of JIT_DIRECT_PAD_SIZE bytes, DW_CFA_nop to its end, if set.
 */
static int pad_register(frame_fn *fn_register)
{
	const char *env = getenv("JIT_DIRECT_PAD");
	const char *size = getenv("JIT_DIRECT_PAD_SIZE");
	long i, n = env ? atol(env) : 0;
	uint32_t len = size ? atol(size) : 16;
	unsigned char *copy;

	if (len < 16)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		copy = calloc(1, len + 4);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, cie_only, 16);
		len -= 4;
		memcpy(copy, &len, sizeof(len));
		len += 4;
		fn_register(copy);
	}
	return 0;
}

/* The bytes of .eh_frame's entries at @p, the terminator left out. */
static size_t entries_len(const unsigned char *p)
{
	uint32_t len;
	size_t n = 0;

	for (;;) {
		memcpy(&len, p + n, sizeof(len));
		if (!len)
			return n;
		n += 4 + len;
	}
}

/*
 * A copy of the entries at @frame behind a CIE of @big bytes (a CIE, a
 * frameless rule, and DW_CFA_nop to its end), then the terminator.  The
 * blob's FDEs start with a pc-relative 4-byte address (gcc's "zR" with
 * DW_EH_PE_pcrel | DW_EH_PE_sdata4): each is moved by what its field
 * moved.
 */
static void *big_copy(const unsigned char *frame, size_t big)
{
	size_t len = entries_len(frame), off;
	unsigned char *p, *want;
	uint32_t n, id;
	int32_t pc;

	/* 64 MiB above the blob: within a pc-relative 4-byte reach. */
	want = (unsigned char *)(((uintptr_t)frame & ~4095UL) + (64UL << 20));
	p = mmap(want, big + len + 4, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != want)
		return NULL;
	memcpy(p, cie_only, 16);
	n = big - 4;
	memcpy(p, &n, sizeof(n));
	memcpy(p + big, frame, len);
	for (off = 0; off < len; off += 4 + n) {
		memcpy(&n, frame + off, sizeof(n));
		memcpy(&id, frame + off + 4, sizeof(id));
		if (!id)
			continue;
		memcpy(&pc, p + big + off + 8, sizeof(pc));
		pc += (intptr_t)(frame + off) - (intptr_t)(p + big + off);
		memcpy(p + big + off + 8, &pc, sizeof(pc));
	}
	return p;
}

int main(int argc, char **argv)
{
	static struct jit_code_entry entry;
	frame_fn *fn_register, *fn_deregister;
	void *gcc;
	long (*code)(long n);
	void *frame = NULL;
	bool gdb;
	double end;
	size_t size;
	char *img;
	long sum = 0;

	if (argc != 5 || (strcmp(argv[1], "gdb") && strcmp(argv[1], "frame")))
		return 2;
	gdb = !strcmp(argv[1], "gdb");
	gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	fn_register = gcc ? (frame_fn *)dlsym(gcc, "__register_frame") : NULL;
	fn_deregister = gcc ? (frame_fn *)dlsym(gcc, "__deregister_frame") : NULL;
	if (!fn_register || !fn_deregister) {
		fprintf(stderr, "jit_direct: no __register_frame()\n");
		return 1;
	}
	img = file_read(argv[2], &size);
	if (img && !gdb)
		frame = blob_eh_frame(img, size);
	if (!img || blob_place(img, size) || (!gdb && !frame)) {
		fprintf(stderr, "jit_direct: cannot place %s\n", argv[2]);
		return 1;
	}
	usleep(atoi(argv[3]) * 1000);
	if (gdb) {
		entry.symfile_addr = img;
		entry.symfile_size = size;
		__jit_debug_descriptor.first_entry = &entry;
		__jit_debug_descriptor.relevant_entry = &entry;
		__jit_debug_descriptor.action_flag = JIT_REGISTER_FN;
		__jit_debug_register_code();
	} else {
		if (pad_register(fn_register))
			return 1;
		if (getenv("JIT_DIRECT_BIG")) {
			frame = big_copy(frame, atol(getenv("JIT_DIRECT_BIG")));
			if (!frame)
				return 1;
		}
		fn_register(frame);
	}
	if (late_at) {
		usleep(atoi(getenv("JIT_DIRECT_LATE")) * 1000);
		if (mprotect(late_at, late_len, PROT_READ | PROT_EXEC))
			return 1;
	}

	code = (long (*)(long))((const Elf64_Ehdr *)img)->e_entry;
	end = now() + atof(argv[4]);
	while (now() < end)
		sum += code(20000);
	if (gdb) {
		__jit_debug_descriptor.first_entry = NULL;
		__jit_debug_descriptor.action_flag = JIT_UNREGISTER_FN;
		__jit_debug_register_code();
	} else {
		fn_deregister(frame);
	}
	printf("withdrawn %ld\n", sum & 1);
	fflush(stdout);
	for (;;)
		pause();
}
