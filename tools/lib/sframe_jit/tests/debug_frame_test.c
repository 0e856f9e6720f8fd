// SPDX-License-Identifier: GPL-2.0
/*
 * .debug_frame, as a JIT hands it to debuggers: an image shaped like
 * the one QEMU's TCG links into the GDB JIT interface (tcg/tcg.c,
 * tcg_register_jit_int()), an executable whose .text is NOBITS at the
 * code buffer's real address, a function code_gen_buffer over all of
 * it in .symtab, and a .debug_frame of one CIE and one FDE: the frame
 * that the prologue sets up and every translated block runs in.  The
 * conversion takes it where asked (run/gdbjit.c asks) and only there;
 * sframe-run's follower of the interface names the buffer and
 * registers its row.
 */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "../run/gdb_jit.h"
#include "../run/sframe_run.h"
#include "test.h"

/* A code buffer of QEMU's default size, less its prologue. */
#define BUF_ADDR	0x7f0000001000ull
#define BUF_SIZE	0x3fff0000ull
/* QEMU's x86-64 frame: the prologue's pushes and its spill area. */
#define FRAME_SIZE	1216

enum { SH_NULL, SH_TEXT, SH_FRAME, SH_SYMTAB, SH_STRTAB, SH_SHSTRTAB, NR_SH };

static const char shstrtab[] =
	"\0.text\0.debug_frame\0.symtab\0.strtab\0.shstrtab";
static const char strtab[] = "\0code_gen_buffer";

struct image {
	unsigned char b[1024];
	size_t n;
};

static void put(struct image *im, const void *p, size_t n)
{
	ASSERT(im->n + n <= sizeof(im->b));
	memcpy(im->b + im->n, p, n);
	im->n += n;
}

static void put_u32(struct image *im, uint32_t v)
{
	put(im, &v, sizeof(v));
}

static void put_u64(struct image *im, uint64_t v)
{
	put(im, &v, sizeof(v));
}

static void align8(struct image *im)
{
	static const unsigned char zero[8];

	put(im, zero, -im->n & 7);
}

/*
 * The CIE and FDE of QEMU's i386 backend (tcg-target.c.inc): version
 * 1, no augmentation, data alignment -8, return address column 16; the
 * FDE at absolute 8-byte addresses, CFA = RSP + FRAME_SIZE, RIP at
 * CFA - 8, RBP at CFA - 16.  With @pcrel, a "zR" CIE that names
 * PC-relative 4-byte addresses instead, which a section that is not
 * loaded cannot mean; with @addr4, a version 4 CIE of 4-byte addresses
 * in this 64-bit object.
 */
static void debug_frame(struct image *im, bool pcrel, bool addr4)
{
	static const unsigned char cie[] = {
		1, 0, 1, 0x78, 16, 0, 0, 0,	/* DW_CFA_nop padding */
	};
	static const unsigned char cie_zr[] = {
		1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0, 0, 0,
	};
	static const unsigned char cie_v4[] = {
		4, 0, 4, 0, 1, 0x78, 16, 0,
	};
	static const unsigned char insns[] = {
		0x0c, 7, (FRAME_SIZE & 0x7f) | 0x80, FRAME_SIZE >> 7,
		0x90, 1, 0x86, 2,
	};
	size_t start = im->n;

	if (addr4) {
		put_u32(im, 4 + sizeof(cie_v4));
		put_u32(im, 0xffffffff);
		put(im, cie_v4, sizeof(cie_v4));
		put_u32(im, 4 + 4 + 4 + sizeof(insns));
		put_u32(im, 0);
		put_u32(im, 0x1000);
		put_u32(im, 0x100);
	} else if (pcrel) {
		put_u32(im, 4 + sizeof(cie_zr));
		put_u32(im, 0xffffffff);
		put(im, cie_zr, sizeof(cie_zr));
		put_u32(im, 4 + 4 + 4 + 1 + sizeof(insns));
		put_u32(im, 0);
		put_u32(im, (uint32_t)(BUF_ADDR - (im->n - start)));
		put_u32(im, BUF_SIZE);
		put(im, "", 1);
	} else {
		put_u32(im, 4 + sizeof(cie));
		put_u32(im, 0xffffffff);
		put(im, cie, sizeof(cie));
		put_u32(im, 4 + 8 + 8 + sizeof(insns));
		put_u32(im, 0);
		put_u64(im, BUF_ADDR);
		put_u64(im, BUF_SIZE);
	}
	put(im, insns, sizeof(insns));
}

static void symtab(struct image *im)
{
	Elf64_Sym sym[2] = {
		[1] = {
			.st_name	= 1,
			.st_info	= ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx	= SH_TEXT,
			.st_value	= BUF_ADDR,
			.st_size	= BUF_SIZE,
		},
	};

	put(im, sym, sizeof(sym));
}

static void section(Elf64_Shdr *sh, uint32_t name, uint32_t type,
		    size_t off, size_t size)
{
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_offset = off;
	sh->sh_size = size;
}

/* The image; with @pcrel or @addr4, a .debug_frame it may not hold. */
static void image_build(struct image *im, bool pcrel, bool addr4)
{
	Elf64_Ehdr eh = {
		.e_ident	= { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3,
				    ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type		= ET_EXEC,
		.e_machine	= EM_X86_64,
		.e_version	= EV_CURRENT,
		.e_ehsize	= sizeof(Elf64_Ehdr),
		.e_shentsize	= sizeof(Elf64_Shdr),
		.e_shnum	= NR_SH,
		.e_shstrndx	= SH_SHSTRTAB,
	};
	Elf64_Shdr sh[NR_SH] = { 0 };
	size_t off;

	im->n = sizeof(eh);
	off = im->n;
	debug_frame(im, pcrel, addr4);
	section(&sh[SH_FRAME], 7, SHT_PROGBITS, off, im->n - off);
	align8(im);
	off = im->n;
	symtab(im);
	section(&sh[SH_SYMTAB], 20, SHT_SYMTAB, off, im->n - off);
	sh[SH_SYMTAB].sh_link = SH_STRTAB;
	sh[SH_SYMTAB].sh_info = 1;
	sh[SH_SYMTAB].sh_entsize = sizeof(Elf64_Sym);
	off = im->n;
	put(im, strtab, sizeof(strtab));
	section(&sh[SH_STRTAB], 28, SHT_STRTAB, off, sizeof(strtab));
	off = im->n;
	put(im, shstrtab, sizeof(shstrtab));
	section(&sh[SH_SHSTRTAB], 36, SHT_STRTAB, off, sizeof(shstrtab));
	/* The code is elsewhere: NOBITS at its address, as QEMU writes it. */
	section(&sh[SH_TEXT], 1, SHT_NOBITS, 0, BUF_SIZE);
	sh[SH_TEXT].sh_addr = BUF_ADDR;
	sh[SH_TEXT].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	align8(im);
	eh.e_shoff = im->n;
	put(im, sh, sizeof(sh));
	memcpy(im->b, &eh, sizeof(eh));
}

static void row_expect(const struct sframe_jit_row *row)
{
	EXPECT_EQ(row->start_off, 0);
	EXPECT_EQ(row->cfa_base, SFRAME_JIT_ROW_CFA_SP);
	EXPECT_EQ(row->cfa_off, FRAME_SIZE);
	EXPECT_EQ(row->ra_off, -8);
	EXPECT_EQ(row->flags, SFRAME_JIT_ROW_FP_SAVED);
	EXPECT_EQ(row->fp_off, -16);
}

TEST(debug_frame_converts_to_one_function_over_the_buffer, T_MEM)
{
	const struct sframe_jit_row *rows;
	struct sframe_jit_cfi *cfi = NULL;
	struct sframe_jit_func f;
	struct image im;

	image_build(&im, false, false);
	ASSERT_EQ(sframe_jit__cfi_convert(im.b, im.n,
					  SFRAME_JIT__CFI_DEBUG_FRAME, &cfi), 1);
	ASSERT_EQ(sframe_jit_cfi_func(cfi, 0, &f, &rows), 0);
	EXPECT_EQ(f.start, BUF_ADDR);
	EXPECT_EQ(f.size, BUF_SIZE);
	ASSERT_EQ(f.nr_rows, 1);
	row_expect(&rows[0]);
	/* The interpreter's, not left to libdw. */
	EXPECT_EQ(sframe_jit__cfi_nr_by_libdw(cfi), 0);
	sframe_jit_cfi_free(cfi);
}

/* libdw, the reference, reads the section through a Dwarf handle. */
TEST(debug_frame_by_libdw_gives_the_same_row, T_MEM)
{
	const struct sframe_jit_row *rows;
	struct sframe_jit_cfi *cfi = NULL;
	struct sframe_jit_func f;
	struct image im;

	image_build(&im, false, false);
	ASSERT_EQ(sframe_jit__cfi_convert(im.b, im.n,
					  SFRAME_JIT__CFI_DEBUG_FRAME |
					  SFRAME_JIT__CFI_LIBDW, &cfi), 1);
	EXPECT_EQ(sframe_jit__cfi_nr_by_libdw(cfi), 1);
	ASSERT_EQ(sframe_jit_cfi_func(cfi, 0, &f, &rows), 0);
	EXPECT_EQ(f.start, BUF_ADDR);
	EXPECT_EQ(f.size, BUF_SIZE);
	ASSERT_EQ(f.nr_rows, 1);
	row_expect(&rows[0]);
	sframe_jit_cfi_free(cfi);
}

TEST(debug_frame_is_taken_only_where_asked, T_MEM)
{
	struct sframe_jit_cfi *cfi = NULL;
	struct image im;

	image_build(&im, false, false);
	EXPECT_EQ(sframe_jit_cfi_convert(im.b, im.n, &cfi), -ENOENT);
	EXPECT_EQ(sframe_jit__cfi_convert(im.b, im.n, 0, &cfi), -ENOENT);
	EXPECT(!cfi);
}

TEST(debug_frame_with_pc_relative_addresses_is_malformed, T_MEM)
{
	struct sframe_jit_cfi_stats st = { .sz = sizeof(st) };
	struct sframe_jit_cfi *cfi = NULL;
	struct image im;

	image_build(&im, true, false);
	ASSERT_EQ(sframe_jit__cfi_convert(im.b, im.n,
					  SFRAME_JIT__CFI_DEBUG_FRAME, &cfi), 0);
	ASSERT_EQ(sframe_jit_cfi_get_stats(cfi, &st), 0);
	EXPECT_EQ(st.nr_fdes, 1);
	EXPECT_EQ(st.nr_unsupported[SFRAME_JIT_CFI_MALFORMED], 1);
	sframe_jit_cfi_free(cfi);
}

TEST(gdb_jit_debug_frame_object_is_named_and_registered, T_MEM)
{
	struct jit_descriptor d = { .version = 1 };
	char map[] = "/tmp/sframe_jit_debug_frame_XXXXXX";
	struct sframe_jit_row rows[4];
	struct sframe_run_gdbjit g;
	struct jit_code_entry e;
	struct sframe_jit_func f;
	struct image im;
	char buf[128];
	ssize_t n;
	int fd;

	image_build(&im, false, false);
	fd = mkstemp(map);
	ASSERT(fd >= 0);
	e = (struct jit_code_entry) { NULL, NULL, (char *)im.b, im.n };
	d.first_entry = &e;

	sframe_run__gdbjit_init(&g, &sframe_run__private_ops, map);
	ASSERT_EQ(sframe_run__gdbjit_watch(&g, &d), 0);
	sframe_run__gdbjit_poll(&g);
	ASSERT_EQ(g.nr, 1);
	EXPECT_EQ(g.objs[0].nr_names, 1);
	ASSERT_EQ(g.objs[0].reg.kind, SFRAME_RUN_JIT);
	EXPECT_EQ(g.objs[0].reg.start, BUF_ADDR);
	EXPECT_EQ(g.objs[0].reg.end, BUF_ADDR + BUF_SIZE);
	ASSERT_EQ(sframe_jit_find(g.objs[0].reg.jit, BUF_ADDR + BUF_SIZE / 2,
				  &f, rows, 4), 0);
	EXPECT_EQ(f.start, BUF_ADDR);
	ASSERT_EQ(f.nr_rows, 1);
	row_expect(&rows[0]);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ASSERT(n > 0);
	buf[n] = 0;
	EXPECT(!strcmp(buf, "7f0000001000 3fff0000 code_gen_buffer\n"));

	sframe_run__gdbjit_fini(&g);
	close(fd);
	unlink(map);
}

/* libdw holds a version 4 CIE's address size to the ELF class's. */
TEST(debug_frame_of_4_byte_addresses_is_malformed, T_MEM)
{
	struct sframe_jit_cfi_stats st = { .sz = sizeof(st) };
	struct sframe_jit_cfi *cfi = NULL;
	struct image im;

	image_build(&im, false, true);
	ASSERT_EQ(sframe_jit__cfi_convert(im.b, im.n,
					  SFRAME_JIT__CFI_DEBUG_FRAME, &cfi), 0);
	ASSERT_EQ(sframe_jit_cfi_get_stats(cfi, &st), 0);
	EXPECT_EQ(st.nr_converted, 0);
	EXPECT(st.nr_unsupported[SFRAME_JIT_CFI_MALFORMED] >= 1);
	sframe_jit_cfi_free(cfi);
}
