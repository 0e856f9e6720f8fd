// SPDX-License-Identifier: GPL-2.0
/*
 * The .plt's FDE as stubs (plt.c, SFRAME_JIT_CFI_F_PLT): recognised in
 * the objects of the system, where ld wrote it, as PLT0's rows and one
 * entry's, repeating every 16 bytes, written as a PCMASK function and
 * read back; and recognised only as ld writes it, a byte changed
 * anywhere in it leaving it out as before.
 */
#include <gelf.h>
#include <string.h>

#include <dwarf.h>

#include "test.h"

static const char *const plt_objects[] = {
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/usr/bin/python3",
};

/* The .plt section of the object at @data; false without one. */
static bool plt_section(const char *data, size_t size, GElf_Shdr *plt)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *name;
	bool found = false;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, plt))
			break;
		name = elf_strptr(elf, shstrndx, plt->sh_name);
		found = name && !strcmp(name, ".plt");
	}
	elf_end(elf);
	return found;
}

/* The function of @cfi that starts at @start; false if none does. */
static bool func_at(const struct sframe_jit_cfi *cfi, uint64_t start,
		    struct sframe_jit_func *f, const struct sframe_jit_row **r)
{
	uint32_t i, n = sframe_jit_cfi_nr_funcs(cfi);

	for (i = 0; i < n; i++)
		if (!sframe_jit_cfi_func(cfi, i, f, r) && f->start == start)
			return true;
	return false;
}

static void row_expect(const struct sframe_jit_row *r, uint32_t start,
		       int32_t cfa)
{
	EXPECT_EQ(r->start_off, start);
	EXPECT_EQ(r->cfa_base, SFRAME_JIT_ROW_CFA_SP);
	EXPECT_EQ(r->cfa_off, cfa);
	EXPECT_EQ(r->ra_off, -8);
	EXPECT_EQ(r->flags, 0);
}

/*
 * ld's .plt: PLT0 pushes once (CFA SP + 16, then SP + 24 after its
 * second push), each entry jumps, then pushes at 6 and jumps at 11.
 */
static void plt_expect(const char *path)
{
	struct sframe_jit_cfi_stats plain = { .sz = sizeof(plain) };
	struct sframe_jit_cfi_stats stubs = { .sz = sizeof(stubs) };
	struct sframe_jit_cfi *a, *b;
	const struct sframe_jit_row *r;
	struct sframe_jit_func f;
	GElf_Shdr plt;
	size_t size;
	char *data;

	data = file_read(path, &size);
	if (!data || !plt_section(data, size, &plt) || plt.sh_size <= 16) {
		free(data);
		test_log("%s: no .plt of entries here", path);
		return;
	}
	ASSERT(sframe_jit_cfi_convert(data, size, &a) > 0);
	ASSERT(sframe_jit_cfi_convert_flags(data, size, SFRAME_JIT_CFI_F_PLT,
					    &b) > 0);
	sframe_jit_cfi_get_stats(a, &plain);
	sframe_jit_cfi_get_stats(b, &stubs);
	EXPECT_EQ(stubs.nr_unsupported[SFRAME_JIT_CFI_CFA_EXPR],
		  plain.nr_unsupported[SFRAME_JIT_CFI_CFA_EXPR] - 1);
	EXPECT_EQ(stubs.nr_converted, plain.nr_converted + 1);
	EXPECT_EQ(sframe_jit_cfi_nr_funcs(b), sframe_jit_cfi_nr_funcs(a) + 2);
	EXPECT(!func_at(a, plt.sh_addr, &f, &r));

	ASSERT(func_at(b, plt.sh_addr, &f, &r));
	EXPECT_EQ(f.size, 16);
	EXPECT_EQ(f.stub_size, 0);
	ASSERT_EQ(f.nr_rows, 2);
	row_expect(&r[0], 0, 16);
	row_expect(&r[1], 6, 24);
	ASSERT(func_at(b, plt.sh_addr + 16, &f, &r));
	EXPECT_EQ(f.size, plt.sh_size - 16);
	EXPECT_EQ(f.stub_size, 16);
	ASSERT_EQ(f.nr_rows, 2);
	row_expect(&r[0], 0, 8);
	row_expect(&r[1], 11, 16);
	test_log("%s: .plt of %llu entries: PLT0 and stubs", path,
		 (unsigned long long)(plt.sh_size / 16 - 1));
	sframe_jit_cfi_free(a);
	sframe_jit_cfi_free(b);
	free(data);
}

TEST(plt_fde_of_system_objects_becomes_plt0_and_stubs, T_MEM)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(plt_objects); i++)
		plt_expect(plt_objects[i]);
}

/* Written as a PCMASK function, the stubs read back as stubs. */
TEST(plt_stubs_encode_and_read_back, T_MEM)
{
	const char *path = plt_objects[0];
	struct sframe_jit_row rows[4];
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_func f;
	struct sframe_jit *reg;
	GElf_Shdr plt;
	size_t size, len;
	char *data;
	void *sec;

	data = file_read(path, &size);
	if (!data || !plt_section(data, size, &plt) || plt.sh_size < 64) {
		free(data);
		test_skip("no .plt of entries in %s", path);
	}
	ASSERT(sframe_jit_cfi_convert_flags(data, size, SFRAME_JIT_CFI_F_PLT,
					    &cfi) > 0);
	ASSERT_EQ(sframe_jit_cfi_encode(cfi, 0, &sec, &len), 0);
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.fde_capacity = sframe_jit_cfi_nr_funcs(cfi),
			.fre_capacity = 1 << 20,
			.flags = SFRAME_JIT_F_NO_KERNEL | SFRAME_JIT_F_NO_GROW);
	ASSERT_EQ(sframe_jit_create(0x100000000ULL, 0x100000000ULL + size,
				    &opts, &reg), 0);
	ASSERT_EQ(sframe_jit_import_sframe(reg, sec, len, 0x100000000ULL),
		  (int)sframe_jit_cfi_nr_funcs(cfi));
	/* The third entry's twelfth byte: after its push. */
	ASSERT_EQ(sframe_jit_find(reg, 0x100000000ULL + plt.sh_addr + 16 +
				  2 * 16 + 11, &f, rows, 4), 0);
	EXPECT_EQ(f.start, 0x100000000ULL + plt.sh_addr + 16);
	EXPECT_EQ(f.stub_size, 16);
	ASSERT_EQ(f.nr_rows, 2);
	row_expect(&rows[1], 11, 16);
	sframe_jit_destroy(reg);
	free(sec);
	sframe_jit_cfi_free(cfi);
	free(data);
}

/* ld's CIE and .plt FDE, as the recogniser sees them after eh_frame.c. */
static const uint8_t cie_insns[] = {
	DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1, DW_CFA_nop,
};

static const uint8_t fde_insns[] = {
	DW_CFA_def_cfa_offset, 16,
	DW_CFA_advance_loc | 6,
	DW_CFA_def_cfa_offset, 24,
	DW_CFA_advance_loc | 10,
	DW_CFA_def_cfa_expression, 11,
	DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and,
	DW_OP_lit11, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus,
	DW_CFA_nop, DW_CFA_nop,
};

static bool recognised(const uint8_t *cie_b, const uint8_t *fde_b,
		       uint64_t lo, uint64_t hi, struct sframe_jit__plt *plt)
{
	struct sframe_jit__cie cie = {
		.insns = cie_b, .insns_end = cie_b + sizeof(cie_insns),
		.code_align = 1, .data_align = -8, .ra_reg = 16,
		.usable = true,
	};
	struct sframe_jit__fde fde = {
		.lo = lo, .hi = hi, .insns = fde_b,
		.insns_end = fde_b + sizeof(fde_insns), .cie = 0,
	};
	struct sframe_jit__eh_frame eh = { .cies = &cie, .nr_cies = 1 };

	return sframe_jit__plt_fde(&eh, &fde, plt);
}

TEST(plt_fde_is_recognised_as_ld_writes_it_and_only_so, T_MEM)
{
	uint8_t cie[sizeof(cie_insns)], fde[sizeof(fde_insns)];
	struct sframe_jit__plt plt;
	unsigned int i, n = 0;

	ASSERT(recognised(cie_insns, fde_insns, 0x1000, 0x1100, &plt));
	EXPECT_EQ(plt.split, 0x1010);
	EXPECT_EQ(plt.nr_head, 2);
	EXPECT_EQ(plt.head[1].start_off, 6);
	EXPECT_EQ(plt.head[1].cfa_off, 24);
	EXPECT_EQ(plt.nr_entry, 2);
	EXPECT_EQ(plt.entry[1].start_off, 11);
	EXPECT_EQ(plt.entry[1].cfa_off, 16);
	/* Entries off a 16-byte boundary, or not a whole number of them. */
	EXPECT(!recognised(cie_insns, fde_insns, 0x1008, 0x1108, &plt));
	EXPECT(!recognised(cie_insns, fde_insns, 0x1000, 0x1108, &plt));
	/* Its operands are read: K (byte 9) and N (byte 14). */
	memcpy(fde, fde_insns, sizeof(fde));
	fde[9] = 24;
	fde[14] = DW_OP_lit12;
	ASSERT(recognised(cie_insns, fde, 0x1000, 0x1100, &plt));
	EXPECT_EQ(plt.entry[0].cfa_off, 24);
	EXPECT_EQ(plt.entry[1].start_off, 12);
	EXPECT_EQ(plt.entry[1].cfa_off, 32);
	/*
	 * Any other byte changed (by one, which keeps the lengths) but the
	 * padding and the CFA offsets: another program.
	 */
	for (i = 0; i < sizeof(fde_insns) - 2; i++) {
		if (i == 1 || i == 4 || i == 9 || i == 14)
			continue;
		memcpy(fde, fde_insns, sizeof(fde));
		fde[i]++;
		if (recognised(cie_insns, fde, 0x1000, 0x1100, &plt))
			test_fail(__FILE__, __LINE__,
				  "FDE byte %u changed: still recognised", i);
		n++;
	}
	for (i = 0; i < sizeof(cie_insns) - 1; i++) {
		memcpy(cie, cie_insns, sizeof(cie));
		cie[i]++;
		if (recognised(cie, fde_insns, 0x1000, 0x1100, &plt))
			test_fail(__FILE__, __LINE__,
				  "CIE byte %u changed: still recognised", i);
		n++;
	}
	test_log("%u changed programs left out", n);
}
