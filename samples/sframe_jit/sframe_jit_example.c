// SPDX-License-Identifier: GPL-2.0
/*
 * The libsframe_jit API in one program: a toy JIT that emits two x86-64
 * functions and a run of stubs, publishes their unwind rows, runs them,
 * imports the .sframe of code it copies from its own executable (built
 * with -Wa,--gsframe), and retires, compacts and grows.  Where the kernel
 * lacks sframe_jit_open(2) it keeps a private table (with the same perf
 * map), which is what a JIT would do too.
 *
 *	sframe_jit_example [--check]
 *
 * With --check the last line reads "1 passed, 0 failed" (or "0 passed,
 * 1 failed"), for tools/lib/sframe_jit's make check.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sframe_jit/sframe_jit.h>

#define CODE_SIZE	(256 << 10)
#define COPY_AT		(64 << 10)	/* where the copied code goes */

/* 0 push %rbp; 1 mov %rsp,%rbp; 4 mov $42,%eax; 9 pop %rbp; 10 ret */
static const unsigned char answer_code[] = {
	0x55, 0x48, 0x89, 0xe5, 0xb8, 0x2a, 0, 0, 0, 0x5d, 0xc3,
};

static const struct sframe_jit_x86_64_epilogue answer_exit = {
	.pop_rbp = 10, .ret = 11,
};

static const struct sframe_jit_x86_64_frame answer_frame = {
	.push_rbp = 1, .mov_rbp = 4, .nr_epilogues = 1, .epilogue = &answer_exit,
};

/* lea 1(%rdi),%eax; ret: no frame at all */
static const unsigned char add1_code[] = { 0x8d, 0x47, 0x01, 0xc3 };

/* Stubs of 16 bytes, "push $n; jmp common", as rows given explicitly. */
static const struct sframe_jit_row stub_rows[] = {
	{ .start_off = 0, .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	{ .start_off = 2, .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 16,
	  .ra_off = -8 },
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(-err));
	return err;
}

/* The .text of an ELF image: its bytes and size, or NULL. */
static const void *elf_text(const unsigned char *image, size_t size,
			    size_t *text_size)
{
	const Elf64_Ehdr *eh = (const void *)image;
	const Elf64_Shdr *sh, *str;
	int i;

	if (size < sizeof(*eh) || memcmp(image, ELFMAG, SELFMAG) ||
	    eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) > size)
		return NULL;
	sh = (const void *)(image + eh->e_shoff);
	str = &sh[eh->e_shstrndx];
	for (i = 0; i < eh->e_shnum; i++) {
		if (strcmp((const char *)image + str->sh_offset + sh[i].sh_name,
			   ".text") || sh[i].sh_offset + sh[i].sh_size > size)
			continue;
		*text_size = sh[i].sh_size;
		return image + sh[i].sh_offset;
	}
	return NULL;
}

/* Copy our own .text into the code area and import its unwind rows. */
static int import_self(struct sframe_jit *reg, unsigned char *dst)
{
	SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
			.text_addr = (unsigned long)dst);
	unsigned char *image = malloc(4 << 20);
	size_t size, text_size = 0;
	const void *text;
	int n = -ENOENT;
	FILE *f;

	f = image ? fopen("/proc/self/exe", "rb") : NULL;
	if (!f) {
		free(image);
		return -ENOMEM;
	}
	size = fread(image, 1, 4 << 20, f);
	fclose(f);
	text = elf_text(image, size, &text_size);
	if (text && text_size <= CODE_SIZE - COPY_AT) {
		memcpy(dst, text, text_size);
		n = sframe_jit_import_elf(reg, image, size, &opts);
	}
	free(image);
	return n;
}

static int run(void)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 4,
			.flags = SFRAME_JIT_F_PERF_MAP);
	struct sframe_jit_info info = { .sz = sizeof(info) };
	struct sframe_jit_row rows[8];
	struct sframe_jit_func fn;
	struct sframe_jit *reg;
	int (*answer)(void);
	int (*add1)(int x);
	unsigned char *code;
	int err, i;

	code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return fail("mmap", -ENOMEM);
	err = sframe_jit_create((unsigned long)code,
				(unsigned long)code + CODE_SIZE, &opts, &reg);
	if (err == -ENOSYS) {
		printf("no sframe_jit_open(2) here: a private table\n");
		opts.flags |= SFRAME_JIT_F_NO_KERNEL;
		err = sframe_jit_create((unsigned long)code,
					(unsigned long)code + CODE_SIZE, &opts,
					&reg);
	}
	if (err)
		return fail("sframe_jit_create", err);

	/* Emit, then publish before anything runs the code. */
	memcpy(code, answer_code, sizeof(answer_code));
	memcpy(code + 16, add1_code, sizeof(add1_code));
	memset(code + 32, 0xcc, 4 * 16);
	err = sframe_jit_add_x86_64(reg, (unsigned long)code,
				    sizeof(answer_code), &answer_frame,
				    "jit_answer");
	err = err ?: sframe_jit_add(reg, (unsigned long)code + 16,
				    sizeof(add1_code), NULL, 0, "jit_add1");
	err = err ?: sframe_jit_add_stubs(reg, (unsigned long)code + 32, 4 * 16,
					  16, stub_rows, 2, "jit_stubs");
	if (err)
		return fail("sframe_jit_add", err);
	i = import_self(reg, code + COPY_AT);
	if (i < 0)
		return fail("sframe_jit_import_elf", i);
	printf("imported %d functions of our own .text\n", i);
	if (mprotect(code, CODE_SIZE, PROT_READ | PROT_EXEC))
		return fail("mprotect", -EACCES);
	answer = (int (*)(void))code;
	add1 = (int (*)(int))(code + 16);
	printf("answer() = %d, add1(41) = %d\n", answer(), add1(41));

	err = sframe_jit_find(reg, (unsigned long)code + 5, &fn, rows, 8);
	if (err)
		return fail("sframe_jit_find", err);
	for (i = 0; i < (int)fn.nr_rows; i++)
		printf("  row at +%u: CFA = %s%+d\n", rows[i].start_off,
		       rows[i].cfa_base == SFRAME_JIT_ROW_CFA_FP ? "rbp" : "rsp",
		       rows[i].cfa_off);

	/* The code cache drops add1 and the copied code, then compacts. */
	err = sframe_jit_remove(reg, (unsigned long)code + 16);
	if (err)
		return fail("sframe_jit_remove", err);
	i = sframe_jit_remove_range(reg, (unsigned long)code + COPY_AT,
				    (unsigned long)code + CODE_SIZE);
	printf("retired %d copied functions, compaction dropped %d\n", i,
	       sframe_jit_compact(reg));
	err = sframe_jit_grow(reg, 1024, 4096);
	if (err)
		return fail("sframe_jit_grow", err);
	sframe_jit_get_info(reg, &info);
	printf("%u live, %u/%u descriptors, %u/%u rows, %llu grows%s\n",
	       info.nr_funcs, info.nr_funcs + info.nr_tombstones,
	       info.fde_capacity, info.nr_rows_used, info.fre_capacity,
	       (unsigned long long)info.nr_grows,
	       info.kernel ? ", read by the kernel" : "");
	sframe_jit_destroy(reg);
	munmap(code, CODE_SIZE);
	return info.nr_funcs == 2 ? 0 : -EPROTO;
}

int main(int argc, char **argv)
{
	int err = run();

	if (argc > 1 && !strcmp(argv[1], "--check"))
		printf("%d passed, %d failed\n", !err, !!err);
	return !!err;
}
