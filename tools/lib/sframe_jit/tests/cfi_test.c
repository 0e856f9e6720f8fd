// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI conversion (cfi.c): the exact rows of the functions of
 * cfi_fixture.S and the reason each other FDE is left out, FDEs damaged
 * in a copy of the fixture, what the conversion refuses, the exact rows
 * of cfi_debug_frame.S's .debug_frame with SFRAME_JIT_CFI_F_DEBUG_FRAME
 * and objects with .eh_frame unchanged by it, the import into a
 * registry, and the cross-check against libdw (cfi_xcheck.c) on the
 * fixture and a few system objects.
 */
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "cfi_xcheck.h"
#include "sframe_jit_internal.h"
#include "test.h"

#define MAX_ROWS	8
#define CONVERTS	(-1)

#define SP(start, off)							\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .cfa_off = (off), .ra_off = -8 }
#define SP_FP(start, off)						\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .cfa_off = (off), .ra_off = -8, .fp_off = -16,		\
	  .flags = SFRAME_JIT_ROW_FP_SAVED }
#define FP_FP(start)							\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_FP,	\
	  .cfa_off = 16, .ra_off = -8, .fp_off = -16,			\
	  .flags = SFRAME_JIT_ROW_FP_SAVED }
#define OUTERMOST(start)						\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .flags = SFRAME_JIT_ROW_RA_UNDEFINED }

/* A function of cfi_fixture.S and what its FDE must become. */
struct fixture_func {
	const char *name;
	int reason;		/* CONVERTS, or SFRAME_JIT_CFI_* */
	uint32_t size;
	uint32_t nr_rows;
	struct sframe_jit_row rows[MAX_ROWS];
};

static const struct fixture_func fixture_funcs[] = {
	{ "cfi_fp_leave", CONVERTS, 15, 4,
	  { SP(0, 8), SP_FP(1, 16), FP_FP(4), SP_FP(14, 8) } },
	{ "cfi_sub_rsp", CONVERTS, 26, 8,
	  { SP(0, 8), SP(1, 16), SP(5, 64), SP(13, 16), SP(14, 8),
	    SP(15, 64), SP(24, 16), SP(25, 8) } },
	{ "cfi_leaf", CONVERTS, 4, 1, { SP(0, 8) } },
	{ "cfi_same_rules", CONVERTS, 5, 3,
	  { SP(0, 8), SP_FP(1, 16), SP(4, 8) } },
	{ "cfi_realign_fp", CONVERTS, 14, 4,
	  { SP(0, 8), SP_FP(1, 16), FP_FP(4), SP_FP(13, 8) } },
	{ "cfi_drap", SFRAME_JIT_CFI_CFA_REG },
	{ "cfi_cfa_expr", SFRAME_JIT_CFI_CFA_EXPR },
	{ "cfi_cfa_breg", CONVERTS, 2, 1, { SP(0, 8) } },
	{ "cfi_ra_reg", SFRAME_JIT_CFI_RA_RULE },
	{ "cfi_rbp_val", SFRAME_JIT_CFI_RBP_RULE },
	{ "cfi_rbp_far", SFRAME_JIT_CFI_RANGE },
	{ "cfi_outermost", CONVERTS, 4, 1, { OUTERMOST(0) } },
	{ "cfi_signal", SFRAME_JIT_CFI_SIGNAL },
	{ "cfi_rbp_undefined", CONVERTS, 3, 1, { SP(0, 8) } },
	{ "cfi_long", CONVERTS, 70306, 4,
	  { SP(0, 8), SP_FP(1, 16), FP_FP(304), SP_FP(70305, 8) } },
	{ "cfi_many_states", SFRAME_JIT_CFI_RANGE },
	{ "cfi_rbp_expr", CONVERTS, 3, 3,
	  { SP(0, 8), SP_FP(1, 16), SP(2, 8) } },
	{ "cfi_ra_val_expr", SFRAME_JIT_CFI_RA_RULE },
	{ "cfi_window_save", SFRAME_JIT_CFI_RA_RULE },
	{ "cfi_offset_on_expr", SFRAME_JIT_CFI_MALFORMED },
};

/* The fixture's FDEs that the interpreter leaves to libdw. */
#define FIXTURE_BY_LIBDW	1

/* The functions of cfi_debug_frame.S, all in its .debug_frame. */
static const struct fixture_func debug_frame_funcs[] = {
	{ "dbgf_leaf", CONVERTS, 4, 1, { SP(0, 8) } },
	{ "dbgf_fp", CONVERTS, 12, 4,
	  { SP(0, 8), SP_FP(1, 16), FP_FP(4), SP_FP(11, 8) } },
	{ "dbgf_sub_rsp", CONVERTS, 13, 3, { SP(0, 8), SP(4, 32), SP(12, 8) } },
	{ "dbgf_two_exits", CONVERTS, 17, 8,
	  { SP(0, 8), SP_FP(1, 16), SP_FP(2, 24), SP_FP(7, 16), SP(8, 8),
	    SP_FP(9, 24), SP_FP(15, 16), SP(16, 8) } },
};

struct image {
	char *data;
	size_t size;
	char path[512];
};

/* The object at @path into @im; false if it cannot be read. */
static bool image_read_path(struct image *im, const char *path)
{
	snprintf(im->path, sizeof(im->path), "%s", path);
	im->data = file_read(im->path, &im->size);
	return im->data;
}

static void image_read(struct image *im, const char *name)
{
	char path[sizeof(im->path)];

	snprintf(path, sizeof(path), "%s/%s", test_env.fixtures, name);
	if (!image_read_path(im, path))
		test_skip("cannot read %s (SFRAME_JIT_FIXTURES)", path);
}

static bool section_get(const struct image *im, const char *name,
			GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;
	bool found = false;
	Elf *elf;

	ASSERT(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_memory(im->data, im->size);
	ASSERT(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while (!found && (scn = elf_nextscn(elf, scn))) {
		ASSERT(gelf_getshdr(scn, shdr));
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		found = n && !strcmp(n, name);
	}
	elf_end(elf);
	return found;
}

/* The value of the symbol @name of the fixture. */
static uint64_t symbol(const struct image *im, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	uint64_t value = 0;
	GElf_Sym sym;
	size_t k;
	Elf *elf;

	elf = elf_memory(im->data, im->size);
	ASSERT(elf);
	while (!value && (scn = elf_nextscn(elf, scn))) {
		ASSERT(gelf_getshdr(scn, &shdr));
		if (shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (k = 0; data && k < shdr.sh_size / shdr.sh_entsize; k++) {
			const char *n;

			if (!gelf_getsym(data, k, &sym))
				break;
			n = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (n && !strcmp(n, name))
				value = sym.st_value;
		}
	}
	elf_end(elf);
	ASSERT(value);
	return value;
}

/* The function of @cfi that holds @addr, as its index, or -1. */
static int64_t func_at(const struct sframe_jit_cfi *cfi, uint64_t addr,
		       struct sframe_jit_func *f,
		       const struct sframe_jit_row **rows)
{
	uint32_t i;

	for (i = 0; i < sframe_jit_cfi_nr_funcs(cfi); i++) {
		ASSERT_EQ(0, sframe_jit_cfi_func(cfi, i, f, rows));
		if (addr >= f->start && addr - f->start < f->size)
			return i;
	}
	return -1;
}

static bool row_eq(const struct sframe_jit_row *a,
		   const struct sframe_jit_row *b)
{
	return a->start_off == b->start_off && a->cfa_base == b->cfa_base &&
	       a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off && a->flags == b->flags;
}

static void rows_expect(const char *name, const struct sframe_jit_row *got,
			const struct sframe_jit_row *want, uint32_t n)
{
	uint32_t r;

	for (r = 0; r < n; r++) {
		if (row_eq(&got[r], &want[r]))
			continue;
		test_fail(__FILE__, __LINE__,
			  "%s row %u: start %u base %u cfa %d ra %d fp %d flags %#x, want start %u base %u cfa %d ra %d fp %d flags %#x",
			  name, r, got[r].start_off, got[r].cfa_base,
			  got[r].cfa_off, got[r].ra_off, got[r].fp_off,
			  got[r].flags, want[r].start_off, want[r].cfa_base,
			  want[r].cfa_off, want[r].ra_off, want[r].fp_off,
			  want[r].flags);
	}
}

/* The conversion @how (SFRAME_JIT__CFI_*): the interpreter's, or libdw's. */
static struct sframe_jit_cfi *cfi_of_how(const struct image *im,
					 unsigned int how)
{
	struct sframe_jit_cfi *cfi = NULL;
	int n;

	n = sframe_jit__cfi_convert(im->data, im->size, how, &cfi);
	if (n < 0)
		test_fail(__FILE__, __LINE__, "converting %s: %d", im->path, n);
	ASSERT(n >= 0 && cfi);
	EXPECT_EQ(n, sframe_jit_cfi_nr_funcs(cfi));
	return cfi;
}

static struct sframe_jit_cfi *cfi_of(const struct image *im)
{
	return cfi_of_how(im, 0);
}

/* @nr functions of a fixture, each converted as it says or left out. */
static void funcs_expect(const struct image *im,
			 const struct sframe_jit_cfi *cfi,
			 const struct fixture_func *funcs, unsigned int nr)
{
	const struct sframe_jit_row *rows;
	const struct fixture_func *ff;
	struct sframe_jit_func f;
	unsigned int i;
	uint64_t addr;

	for (i = 0; i < nr; i++) {
		ff = &funcs[i];
		addr = symbol(im, ff->name);
		if (ff->reason != CONVERTS) {
			if (func_at(cfi, addr, &f, &rows) >= 0)
				test_fail(__FILE__, __LINE__,
					  "%s converted, should not be",
					  ff->name);
			continue;
		}
		if (func_at(cfi, addr, &f, &rows) < 0) {
			test_fail(__FILE__, __LINE__, "%s not converted",
				  ff->name);
			continue;
		}
		EXPECT_EQ(addr, f.start);
		EXPECT_EQ(ff->size, f.size);
		EXPECT_EQ(0, f.stub_size);
		EXPECT_EQ(ff->nr_rows, f.nr_rows);
		if (f.nr_rows == ff->nr_rows)
			rows_expect(ff->name, rows, ff->rows, f.nr_rows);
	}
}

static void fixture_rows_expect(const struct image *im,
				const struct sframe_jit_cfi *cfi)
{
	funcs_expect(im, cfi, fixture_funcs, ARRAY_SIZE(fixture_funcs));
}

/* The interpreter, which leaves one FDE of the fixture to libdw. */
TEST(cfi_fixture_functions_convert_to_their_exact_rows, T_MEM)
{
	struct sframe_jit_cfi *cfi;
	struct image im;

	image_read(&im, "cfi_fixture.so");
	cfi = cfi_of(&im);
	fixture_rows_expect(&im, cfi);
	EXPECT_EQ(FIXTURE_BY_LIBDW, sframe_jit__cfi_nr_by_libdw(cfi));
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

/* The same rows from libdw alone, which the interpreter must match. */
TEST(cfi_fixture_functions_convert_to_the_same_rows_by_libdw, T_MEM)
{
	struct sframe_jit_cfi *cfi;
	struct image im;

	image_read(&im, "cfi_fixture.so");
	cfi = cfi_of_how(&im, SFRAME_JIT__CFI_LIBDW);
	fixture_rows_expect(&im, cfi);
	EXPECT_EQ(ARRAY_SIZE(fixture_funcs), sframe_jit__cfi_nr_by_libdw(cfi));
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

static void stats_get(const struct sframe_jit_cfi *cfi,
		      struct sframe_jit_cfi_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->sz = sizeof(*st);
	ASSERT_EQ(0, sframe_jit_cfi_get_stats(cfi, st));
}

TEST(cfi_left_out_fdes_are_counted_by_reason, T_MEM)
{
	uint64_t want[SFRAME_JIT_CFI_MAX_REASONS] = { 0 };
	struct sframe_jit_cfi_stats st;
	struct sframe_jit_cfi *cfi;
	uint64_t converted = 0, rows = 0;
	struct image im;
	unsigned int i;

	image_read(&im, "cfi_fixture.so");
	cfi = cfi_of(&im);
	for (i = 0; i < ARRAY_SIZE(fixture_funcs); i++) {
		if (fixture_funcs[i].reason == CONVERTS) {
			converted++;
			rows += fixture_funcs[i].nr_rows;
		} else {
			want[fixture_funcs[i].reason]++;
		}
	}
	stats_get(cfi, &st);
	EXPECT_EQ(ARRAY_SIZE(fixture_funcs), st.nr_fdes);
	EXPECT_EQ(converted, st.nr_converted);
	for (i = 0; i < SFRAME_JIT_CFI_MAX_REASONS; i++)
		if (st.nr_unsupported[i] != want[i])
			test_fail(__FILE__, __LINE__, "%s: %llu, want %llu",
				  sframe_jit_cfi_reason_str(i) ?: "?",
				  (unsigned long long)st.nr_unsupported[i],
				  (unsigned long long)want[i]);
	EXPECT_EQ(rows, st.nr_rows);
	EXPECT_EQ(rows * sizeof(struct sframe_jit_row), st.row_bytes);
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

/* The fixture's FDEs left out for @reason, undamaged. */
static uint64_t fixture_left_out(int reason)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fixture_funcs); i++)
		n += fixture_funcs[i].reason == reason;
	return n;
}

/* The offset in .eh_frame of the FDE whose function starts at @addr. */
static uint64_t fde_of(const struct image *im, const GElf_Shdr *eh,
		       uint64_t addr)
{
	const unsigned char *s = (const unsigned char *)im->data + eh->sh_offset;
	uint64_t off = 0;
	uint32_t len, id;
	int32_t pc;

	while (off + 16 <= eh->sh_size) {
		memcpy(&len, s + off, 4);
		memcpy(&id, s + off + 4, 4);
		memcpy(&pc, s + off + 8, 4);
		ASSERT(len && len != 0xffffffff);
		/* pcrel sdata4, as ld writes it for x86-64. */
		if (id && eh->sh_addr + off + 8 + pc == addr)
			return off;
		off += 4 + len;
	}
	ASSERT(!"no FDE for the address");
	return 0;
}

static void put32(struct image *im, const GElf_Shdr *eh, uint64_t off,
		  uint32_t v)
{
	memcpy(im->data + eh->sh_offset + off, &v, 4);
}

/*
 * In a copy of the fixture: one FDE made empty, one made to reach into
 * the next (both then overlap), one pointed at a CIE that is not there.
 */
TEST(cfi_damaged_fdes_are_counted_empty_overlap_and_malformed, T_MEM)
{
	struct sframe_jit_cfi_stats st;
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_func f;
	struct image im;
	GElf_Shdr eh;
	uint64_t off;

	image_read(&im, "cfi_fixture.so");
	ASSERT(section_get(&im, ".eh_frame", &eh));
	off = fde_of(&im, &eh, symbol(&im, "cfi_leaf"));
	put32(&im, &eh, off + 12, 0);
	off = fde_of(&im, &eh, symbol(&im, "cfi_fp_leave"));
	put32(&im, &eh, off + 12, 16);
	off = fde_of(&im, &eh, symbol(&im, "cfi_same_rules"));
	put32(&im, &eh, off + 4, off + 4 - 8);

	cfi = cfi_of(&im);
	stats_get(cfi, &st);
	EXPECT_EQ(ARRAY_SIZE(fixture_funcs), st.nr_fdes);
	EXPECT_EQ(1, st.nr_unsupported[SFRAME_JIT_CFI_EMPTY]);
	EXPECT_EQ(2, st.nr_unsupported[SFRAME_JIT_CFI_OVERLAP]);
	EXPECT_EQ(1 + fixture_left_out(SFRAME_JIT_CFI_MALFORMED),
		  st.nr_unsupported[SFRAME_JIT_CFI_MALFORMED]);
	EXPECT(func_at(cfi, symbol(&im, "cfi_fp_leave"), &f, NULL) < 0);
	EXPECT(func_at(cfi, symbol(&im, "cfi_sub_rsp"), &f, NULL) < 0);
	EXPECT(func_at(cfi, symbol(&im, "cfi_realign_fp"), &f, NULL) >= 0);
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

TEST(cfi_convert_refuses_what_it_cannot_use, T_MEM)
{
	struct sframe_jit_cfi_stats st = { .sz = 8 };
	struct sframe_jit_cfi *cfi = NULL;
	struct sframe_jit_func f;
	struct image so, o;
	GElf_Shdr shstr;
	char *p;

	image_read(&so, "cfi_fixture.so");
	image_read(&o, "cfi_fixture.o");
	EXPECT_EQ(-EINVAL, sframe_jit_cfi_convert(NULL, so.size, &cfi));
	EXPECT_EQ(-EINVAL, sframe_jit_cfi_convert(so.data, so.size, NULL));
	EXPECT_EQ(-ENOEXEC, sframe_jit_cfi_convert("not an object", 14, &cfi));
	EXPECT_EQ(-EOPNOTSUPP, sframe_jit_cfi_convert(o.data, o.size, &cfi));
	EXPECT(!cfi);

	/* 32-bit, big-endian: refused before libelf reads the header. */
	so.data[EI_CLASS] = ELFCLASS32;
	EXPECT_EQ(-EOPNOTSUPP, sframe_jit_cfi_convert(so.data, so.size, &cfi));
	so.data[EI_CLASS] = ELFCLASS64;
	so.data[EI_DATA] = ELFDATA2MSB;
	EXPECT_EQ(-EOPNOTSUPP, sframe_jit_cfi_convert(so.data, so.size, &cfi));
	so.data[EI_DATA] = ELFDATA2LSB;

	/* No section of that name any more: no .eh_frame. */
	ASSERT(section_get(&so, ".shstrtab", &shstr));
	p = memmem(so.data + shstr.sh_offset, shstr.sh_size, ".eh_frame",
		   sizeof(".eh_frame"));
	ASSERT(p);
	p[1] = 'E';
	EXPECT_EQ(-ENOENT, sframe_jit_cfi_convert(so.data, so.size, &cfi));
	EXPECT(!cfi);
	p[1] = 'e';

	cfi = cfi_of(&so);
	EXPECT_EQ(-EINVAL, sframe_jit_cfi_get_stats(cfi, &st));
	EXPECT_EQ(-ENOENT, sframe_jit_cfi_func(cfi, sframe_jit_cfi_nr_funcs(cfi),
					       &f, NULL));
	EXPECT(!sframe_jit_cfi_reason_str(SFRAME_JIT_CFI_NR_REASONS));
	EXPECT(!strcmp("cfa_expr",
		       sframe_jit_cfi_reason_str(SFRAME_JIT_CFI_CFA_EXPR)));
	sframe_jit_cfi_free(cfi);
	sframe_jit_cfi_free(NULL);
	free(so.data);
	free(o.data);
}

TEST(cfi_convert_finds_no_eh_frame_in_a_debug_frame_object, T_MEM)
{
	struct sframe_jit_cfi *cfi = NULL;
	struct image im;
	GElf_Shdr shdr;

	image_read(&im, "cfi_debug_frame.so");
	/* Without either, the object would not test what it is for. */
	ASSERT(!section_get(&im, ".eh_frame", &shdr));
	ASSERT(section_get(&im, ".debug_frame", &shdr));
	EXPECT_EQ(-ENOENT, sframe_jit_cfi_convert(im.data, im.size, &cfi));
	EXPECT_EQ(-ENOENT,
		  sframe_jit_cfi_convert_flags(im.data, im.size, 0, &cfi));
	EXPECT(!cfi);
	free(im.data);
}

TEST(cfi_debug_frame_flag_converts_debug_frame_to_its_exact_rows, T_MEM)
{
	struct sframe_jit_cfi_stats st;
	struct sframe_jit_cfi *cfi = NULL;
	struct image im;
	int n;

	image_read(&im, "cfi_debug_frame.so");
	n = sframe_jit_cfi_convert_flags(im.data, im.size,
					 SFRAME_JIT_CFI_F_DEBUG_FRAME, &cfi);
	ASSERT_EQ(ARRAY_SIZE(debug_frame_funcs), n);
	ASSERT(cfi);
	EXPECT_EQ(n, sframe_jit_cfi_nr_funcs(cfi));
	funcs_expect(&im, cfi, debug_frame_funcs,
		     ARRAY_SIZE(debug_frame_funcs));
	stats_get(cfi, &st);
	EXPECT_EQ(n, st.nr_fdes);
	EXPECT_EQ(n, st.nr_converted);
	/*
	 * By the interpreter: the public flag is not the internal bit of
	 * the same value, which would hand every FDE to libdw.
	 */
	EXPECT_EQ(0, sframe_jit__cfi_nr_by_libdw(cfi));
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

/*
 * ld's default link adds an empty .eh_frame to the fixture: an object
 * with nothing in .eh_frame is read from its .debug_frame all the same.
 */
TEST(cfi_debug_frame_flag_reads_past_an_empty_eh_frame, T_MEM)
{
	struct sframe_jit_cfi *cfi = NULL;
	struct image im;
	int n;

	image_read(&im, "cfi_debug_frame_ld.so");
	n = sframe_jit_cfi_convert_flags(im.data, im.size,
					 SFRAME_JIT_CFI_F_DEBUG_FRAME, &cfi);
	ASSERT_EQ(ARRAY_SIZE(debug_frame_funcs), n);
	funcs_expect(&im, cfi, debug_frame_funcs,
		     ARRAY_SIZE(debug_frame_funcs));
	sframe_jit_cfi_free(cfi);
	cfi = NULL;
	EXPECT_EQ(-ENOENT, sframe_jit_cfi_convert(im.data, im.size, &cfi));
	EXPECT(!cfi);
	free(im.data);
}

/* libdw, the reference, agrees with the rows written for the fixture. */
TEST(cfi_debug_frame_fixture_converts_to_the_same_rows_by_libdw, T_MEM)
{
	struct sframe_jit_cfi *cfi;
	struct image im;

	image_read(&im, "cfi_debug_frame.so");
	cfi = cfi_of_how(&im, SFRAME_JIT__CFI_DEBUG_FRAME |
			      SFRAME_JIT__CFI_LIBDW);
	EXPECT_EQ(ARRAY_SIZE(debug_frame_funcs), sframe_jit_cfi_nr_funcs(cfi));
	funcs_expect(&im, cfi, debug_frame_funcs,
		     ARRAY_SIZE(debug_frame_funcs));
	EXPECT_EQ(ARRAY_SIZE(debug_frame_funcs),
		  sframe_jit__cfi_nr_by_libdw(cfi));
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

/*
 * Two conversions of one object: the same counts, functions and rows.
 * Only the first function that differs is reported: in libc a broken
 * conversion would differ at thousands.
 */
static void cfi_same(const char *what, const struct sframe_jit_cfi *want,
		     const struct sframe_jit_cfi *got)
{
	const struct sframe_jit_row *rw, *rg;
	struct sframe_jit_cfi_stats sw, sg;
	struct sframe_jit_func fw, fg;
	uint32_t i, r, n;

	stats_get(want, &sw);
	stats_get(got, &sg);
	EXPECT_EQ(sw.nr_fdes, sg.nr_fdes);
	EXPECT_EQ(sw.nr_converted, sg.nr_converted);
	EXPECT(!memcmp(sw.nr_unsupported, sg.nr_unsupported,
		       sizeof(sw.nr_unsupported)));
	EXPECT_EQ(sw.nr_rows, sg.nr_rows);
	EXPECT_EQ(sw.nr_shared_rows, sg.nr_shared_rows);
	n = sframe_jit_cfi_nr_funcs(want);
	EXPECT_EQ(n, sframe_jit_cfi_nr_funcs(got));
	if (n != sframe_jit_cfi_nr_funcs(got))
		return;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, sframe_jit_cfi_func(want, i, &fw, &rw));
		ASSERT_EQ(0, sframe_jit_cfi_func(got, i, &fg, &rg));
		if (fw.start != fg.start || fw.size != fg.size ||
		    fw.nr_rows != fg.nr_rows || fw.stub_size != fg.stub_size) {
			test_fail(__FILE__, __LINE__,
				  "%s: function %u at %#llx size %u rows %u stub %u, want %#llx size %u rows %u stub %u",
				  what, i, (unsigned long long)fg.start,
				  fg.size, fg.nr_rows, fg.stub_size,
				  (unsigned long long)fw.start, fw.size,
				  fw.nr_rows, fw.stub_size);
			return;
		}
		for (r = 0; r < fw.nr_rows && row_eq(&rg[r], &rw[r]); r++)
			;
		if (r < fw.nr_rows) {
			rows_expect(what, rg, rw, fw.nr_rows);
			return;
		}
	}
}

/*
 * @im converted by sframe_jit_cfi_convert_flags() with no flag and with
 * SFRAME_JIT_CFI_F_DEBUG_FRAME, each compared with
 * sframe_jit_cfi_convert()'s table; the flagged table is returned.
 */
static struct sframe_jit_cfi *flags_same(const struct image *im)
{
	static const unsigned int flags[] = { 0, SFRAME_JIT_CFI_F_DEBUG_FRAME };
	struct sframe_jit_cfi *want = NULL, *got = NULL;
	unsigned int i;
	char what[600];
	int n;

	n = sframe_jit_cfi_convert(im->data, im->size, &want);
	ASSERT(n > 0 && want);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		snprintf(what, sizeof(what), "%s, flags %#x", im->path,
			 flags[i]);
		sframe_jit_cfi_free(got);
		got = NULL;
		EXPECT_EQ(n, sframe_jit_cfi_convert_flags(im->data, im->size,
							  flags[i], &got));
		ASSERT(got);
		cfi_same(what, want, got);
	}
	sframe_jit_cfi_free(want);
	return got;
}

/*
 * An object with .eh_frame is converted from it alone, flag or not:
 * cfi_both_frames.so's .debug_frame describes functions its .eh_frame
 * does not, which must stay out.
 */
TEST(cfi_debug_frame_flag_leaves_an_object_with_eh_frame_as_it_is, T_MEM)
{
	const struct sframe_jit_row *rows;
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_func f;
	struct image im;
	GElf_Shdr shdr;
	unsigned int i;

	image_read(&im, "cfi_fixture.so");
	cfi = flags_same(&im);
	fixture_rows_expect(&im, cfi);
	sframe_jit_cfi_free(cfi);
	free(im.data);

	image_read(&im, "cfi_both_frames.so");
	ASSERT(section_get(&im, ".eh_frame", &shdr));
	ASSERT(section_get(&im, ".debug_frame", &shdr));
	cfi = flags_same(&im);
	fixture_rows_expect(&im, cfi);
	for (i = 0; i < ARRAY_SIZE(debug_frame_funcs); i++)
		if (func_at(cfi, symbol(&im, debug_frame_funcs[i].name), &f,
			    &rows) >= 0)
			test_fail(__FILE__, __LINE__,
				  "%s converted from .debug_frame",
				  debug_frame_funcs[i].name);
	sframe_jit_cfi_free(cfi);
	free(im.data);

	if (!image_read_path(&im, "/usr/lib/x86_64-linux-gnu/libc.so.6")) {
		test_log("no %s: not compared", im.path);
		return;
	}
	sframe_jit_cfi_free(flags_same(&im));
	free(im.data);
}

TEST(cfi_convert_flags_refuses_what_cfi_convert_refuses, T_MEM)
{
	const unsigned int flag = SFRAME_JIT_CFI_F_DEBUG_FRAME;
	struct sframe_jit_cfi *cfi = NULL;
	struct image so, o;
	GElf_Shdr shstr;
	char *p;

	image_read(&so, "cfi_debug_frame.so");
	image_read(&o, "cfi_debug_frame.o");
	EXPECT_EQ(-EINVAL,
		  sframe_jit_cfi_convert_flags(NULL, so.size, flag, &cfi));
	EXPECT_EQ(-EINVAL,
		  sframe_jit_cfi_convert_flags(so.data, so.size, flag, NULL));
	EXPECT_EQ(-ENOEXEC,
		  sframe_jit_cfi_convert_flags("not an object", 14, flag, &cfi));
	/* Its .debug_frame's FDEs all start at 0 until relocated. */
	EXPECT_EQ(-EOPNOTSUPP,
		  sframe_jit_cfi_convert_flags(o.data, o.size, flag, &cfi));
	EXPECT(!cfi);

	/* Neither section: no CFI to take. */
	ASSERT(section_get(&so, ".shstrtab", &shstr));
	p = memmem(so.data + shstr.sh_offset, shstr.sh_size, ".debug_frame",
		   sizeof(".debug_frame"));
	ASSERT(p);
	p[1] = 'D';
	EXPECT_EQ(-ENOENT,
		  sframe_jit_cfi_convert_flags(so.data, so.size, flag, &cfi));
	EXPECT(!cfi);
	free(so.data);
	free(o.data);
}

/*
 * Bits the call does not know are refused whatever the object, before
 * it is read; 0x2 and 0x4 are the internal SFRAME_JIT__CFI_* bits, which
 * must not be reachable through the public flags.
 */
TEST(cfi_convert_flags_refuses_unknown_flags_and_leaves_cfip_alone, T_MEM)
{
	static const unsigned int bad[] = {
		0x4, 0x8, 0x80000000, SFRAME_JIT_CFI_F_DEBUG_FRAME | 0x4, ~0u,
	};
	static const char *const names[] = {
		"cfi_debug_frame.so", "cfi_fixture.so",
	};
	static char not_a_table;
	struct sframe_jit_cfi *const untouched = (void *)&not_a_table;
	struct sframe_jit_cfi *cfi;
	unsigned int i, j;
	struct image im;
	int err;

	for (j = 0; j < ARRAY_SIZE(names); j++) {
		image_read(&im, names[j]);
		for (i = 0; i < ARRAY_SIZE(bad); i++) {
			cfi = untouched;
			err = sframe_jit_cfi_convert_flags(im.data, im.size,
							   bad[i], &cfi);
			if (err == -EINVAL && cfi == untouched)
				continue;
			test_fail(__FILE__, __LINE__,
				  "%s, flags %#x: %d, table %s, want %d, untouched",
				  names[j], bad[i], err,
				  cfi == untouched ? "untouched" : "set",
				  -EINVAL);
		}
		free(im.data);
	}
}

TEST(cfi_import_adds_every_function_at_the_load_bias, T_BOTH)
{
	struct sframe_jit_row rows[MAX_ROWS];
	const struct sframe_jit_row *want;
	struct sframe_jit_func f, got;
	struct sframe_jit_info info = { .sz = sizeof(info) };
	struct sframe_jit_cfi *cfi;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code, room, bias;
	struct image im;
	GElf_Shdr text;
	uint32_t i, n;

	image_read(&im, "cfi_fixture.so");
	ASSERT(section_get(&im, ".text", &text));
	cfi = cfi_of(&im);
	n = sframe_jit_cfi_nr_funcs(cfi);
	room = (text.sh_size + 4095) & ~4095ULL;
	code = arena(2 * room);
	bias = code - text.sh_addr;

	/* Not all of the code fits in the range: none is added. */
	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + 4096, NULL);
	EXPECT_EQ(-ERANGE, sframe_jit_import_cfi(reg, cfi, bias));
	EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
	EXPECT_EQ(0, info.nr_funcs);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + room, NULL);
	EXPECT_EQ(-EINVAL, sframe_jit_import_cfi(reg, NULL, bias));
	ASSERT_EQ(n, sframe_jit_import_cfi(reg, cfi, bias));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, sframe_jit_cfi_func(cfi, i, &f, &want));
		ASSERT(f.nr_rows <= MAX_ROWS);
		ASSERT_EQ(0, sframe_jit_find(reg, f.start + bias, &got, rows,
					     MAX_ROWS));
		EXPECT_EQ(f.start + bias, got.start);
		EXPECT_EQ(f.size, got.size);
		EXPECT_EQ(f.nr_rows, got.nr_rows);
		rows_expect("imported", rows, want, f.nr_rows);
	}
	EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
	EXPECT_EQ(n, info.nr_funcs);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
	sframe_jit_cfi_free(cfi);
	free(im.data);
}

/* Lines the cross-check printed, as the runner's "# " lines. */
static void log_lines(char *buf)
{
	char *line, *save = NULL;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		test_log("%s", line);
}

static void xcheck(const char *path, bool required)
{
	struct xc_result res;
	char *buf = NULL;
	size_t len = 0;
	FILE *log;
	int err;

	if (access(path, R_OK)) {
		if (required)
			test_fail(__FILE__, __LINE__, "no %s", path);
		else
			test_log("no %s: not checked", path);
		return;
	}
	log = open_memstream(&buf, &len);
	ASSERT(log);
	err = xc_object(path, &res, log, 5);
	if (!err)
		xc_print(log, path, &res);
	fclose(log);
	log_lines(buf);
	free(buf);
	EXPECT_EQ(0, err);
	if (err)
		return;
	EXPECT(res.nr_funcs > 0);
	EXPECT(res.addrs > res.nr_funcs);
	EXPECT_EQ(0, res.mismatches);
	EXPECT_EQ(0, res.fde_diffs);
}

TEST(cfi_cross_check_finds_libdw_at_every_sampled_address, T_MEM)
{
	struct image im;

	image_read(&im, "cfi_fixture.so");
	xcheck(im.path, true);
	free(im.data);
	xcheck("/usr/lib/x86_64-linux-gnu/libc.so.6", true);
	xcheck("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", false);
	xcheck("/usr/bin/python3", false);
}
