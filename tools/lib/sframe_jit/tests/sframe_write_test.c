// SPDX-License-Identifier: GPL-2.0
/*
 * The SFrame encoder (sframe_write.c): the converted tables of this
 * machine's libraries and of cfi_fixture.S written as sections, each
 * field walked against the table by a reader of this file's own, read
 * back by sframe_jit_import_sframe() function by function, and written
 * again to the same bytes; a hand-built table against the bytes the
 * format gives for it; the limits of a function's start and what the
 * encoder refuses.
 */
#include <gelf.h>
#include <string.h>

#include "test.h"

#define HDR_SIZE	28
#define FDE_SIZE	20
#define GIB		0x40000000ULL
#define PAGE		0x1000ULL

/* The functions and rows a section must hold, whatever built them. */
struct want {
	uint32_t nr;
	uint64_t nr_rows;
	struct sframe_jit_func *funcs;
	const struct sframe_jit_row **rows;
};

static void want_of_cfi(struct want *w, const struct sframe_jit_cfi *cfi)
{
	uint32_t i;

	w->nr = sframe_jit_cfi_nr_funcs(cfi);
	w->nr_rows = 0;
	w->funcs = calloc(w->nr + 1, sizeof(*w->funcs));
	w->rows = calloc(w->nr + 1, sizeof(*w->rows));
	ASSERT(w->funcs && w->rows);
	for (i = 0; i < w->nr; i++) {
		ASSERT_EQ(sframe_jit_cfi_func(cfi, i, &w->funcs[i],
					      &w->rows[i]), 0);
		w->nr_rows += w->funcs[i].nr_rows;
	}
}

static void want_of_funcs(struct want *w, const struct sframe_jit__func *f,
			  uint32_t nr, const struct sframe_jit_row *rows)
{
	uint32_t i;

	w->nr = nr;
	w->nr_rows = 0;
	w->funcs = calloc(nr + 1, sizeof(*w->funcs));
	w->rows = calloc(nr + 1, sizeof(*w->rows));
	ASSERT(w->funcs && w->rows);
	for (i = 0; i < nr; i++) {
		w->funcs[i] = (struct sframe_jit_func) {
			.start = f[i].start, .size = f[i].size,
			.nr_rows = f[i].nr_rows,
		};
		w->rows[i] = rows + f[i].first_row;
		w->nr_rows += f[i].nr_rows;
	}
}

static void want_free(struct want *w)
{
	free(w->funcs);
	free(w->rows);
}

/* The section's bytes as the SFrame specification defines them. */

static uint32_t get_u(const unsigned char *p, unsigned int width)
{
	uint32_t v = 0;
	unsigned int i;

	for (i = 0; i < 1U << width; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static int32_t get_s(const unsigned char *p, unsigned int width)
{
	uint32_t v = get_u(p, width);

	if (width == 0)
		return (int8_t)v;
	return width == 1 ? (int16_t)v : (int32_t)v;
}

/* Width codes: 0 for 1 byte, 1 for 2, 2 for 4. */
static unsigned int least_u(uint32_t v)
{
	return v < 0x100 ? 0 : v < 0x10000 ? 1 : 2;
}

static unsigned int least_s(int32_t v)
{
	return v >= -128 && v < 128 ? 0 : v >= -32768 && v < 32768 ? 1 : 2;
}

static void header_expect(const unsigned char *p, size_t size,
			  const struct want *w)
{
	ASSERT(size >= HDR_SIZE);
	EXPECT_EQ(get_u(p, 1), 0xdee2);
	EXPECT_EQ(p[2], 2);		/* version */
	EXPECT_EQ(p[3], 0x1);		/* FDE_SORTED alone */
	EXPECT_EQ(p[4], 3);		/* AMD64, little endian */
	EXPECT_EQ((int8_t)p[5], 0);	/* FP not fixed */
	EXPECT_EQ((int8_t)p[6], -8);	/* RA at CFA - 8 */
	EXPECT_EQ(p[7], 0);		/* no auxiliary header */
	EXPECT_EQ(get_u(p + 8, 2), w->nr);
	EXPECT_EQ(get_u(p + 12, 2), w->nr_rows);
	EXPECT_EQ(get_u(p + 20, 2), 0);
	EXPECT_EQ(get_u(p + 24, 2), (uint64_t)w->nr * FDE_SIZE);
	EXPECT_EQ(HDR_SIZE + (uint64_t)w->nr * FDE_SIZE + get_u(p + 16, 2),
		  size);
}

/*
 * The length of the frame row entry at @p if it is @row's, with start
 * addresses of width @aw; 0 if it is not.  The return address is the
 * header's; an outermost row has no offsets, and then the SP bit.
 */
static size_t fre_match(const unsigned char *p, unsigned int aw,
			const struct sframe_jit_row *row)
{
	unsigned int n = 0, w = 0, k, base;
	const unsigned char *off;
	int32_t want[2];

	if (!(row->flags & SFRAME_JIT_ROW_RA_UNDEFINED)) {
		want[n++] = row->cfa_off;
		if (row->flags & SFRAME_JIT_ROW_FP_SAVED)
			want[n++] = row->fp_off;
	}
	for (k = 0; k < n; k++)
		if (least_s(want[k]) > w)
			w = least_s(want[k]);
	base = n && row->cfa_base == SFRAME_JIT_ROW_CFA_FP ? 0 : 1;
	if (get_u(p, aw) != row->start_off ||
	    p[1U << aw] != (base | n << 1 | w << 5))
		return 0;
	off = p + (1U << aw) + 1;
	for (k = 0; k < n; k++)
		if (get_s(off + k * (1U << w), w) != want[k])
			return 0;
	return (1U << aw) + 1 + n * (1U << w);
}

/* The bytes of function @f's descriptor and rows; false where not. */
static bool func_match(const unsigned char *fde, const unsigned char *fres,
		       uint64_t *fre_off, const struct sframe_jit_func *f,
		       const struct sframe_jit_row *rows, uint64_t vaddr)
{
	unsigned int aw = 0;
	size_t len;
	uint32_t r;

	for (r = 0; r < f->nr_rows; r++)
		if (least_u(rows[r].start_off) > aw)
			aw = least_u(rows[r].start_off);
	if ((int64_t)(int32_t)get_u(fde, 2) != (int64_t)(f->start - vaddr) ||
	    get_u(fde + 4, 2) != f->size || get_u(fde + 8, 2) != *fre_off ||
	    get_u(fde + 12, 2) != f->nr_rows || fde[16] != aw ||
	    fde[17] || get_u(fde + 18, 1))
		return false;
	for (r = 0; r < f->nr_rows; r++) {
		len = fre_match(fres + *fre_off, aw, &rows[r]);
		if (!len)
			return false;
		*fre_off += len;
	}
	return true;
}

/* Each descriptor and row, in order, as @w has them; nothing more. */
static void walk_expect(const unsigned char *p, const struct want *w,
			uint64_t vaddr)
{
	const unsigned char *fres = p + HDR_SIZE + (size_t)w->nr * FDE_SIZE;
	uint64_t fre_off = 0;
	uint32_t i, bad = 0;

	for (i = 0; i < w->nr && bad < 5; i++) {
		if (func_match(p + HDR_SIZE + (size_t)i * FDE_SIZE, fres,
			       &fre_off, &w->funcs[i], w->rows[i], vaddr))
			continue;
		test_fail(__FILE__, __LINE__,
			  "function %u at %#llx: descriptor or rows differ",
			  i, (unsigned long long)w->funcs[i].start);
		bad++;
	}
	EXPECT_EQ(bad, 0);
	if (!bad)
		EXPECT_EQ(fre_off, get_u(p + 16, 2));
}

/*
 * The section read back by the library's own reader, into a registry
 * over the functions moved by a bias, as the loader moves code: each
 * function found at its start, with its size and its rows.
 */
static void import_expect(const void *buf, size_t size, const struct want *w,
			  uint64_t vaddr)
{
	static struct sframe_jit_row got[65536];
	const struct sframe_jit_func *last = &w->funcs[w->nr - 1];
	uint64_t lo = w->funcs[0].start, hi = last->start + last->size;
	uint64_t base = arena(hi - lo + PAGE), bias = base - lo;
	struct sframe_jit_func f;
	struct sframe_jit *reg;
	uint32_t i, bad = 0;

	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = w->nr,
			.fre_capacity = w->nr_rows,
			.flags = SFRAME_JIT_F_NO_KERNEL | SFRAME_JIT_F_NO_GROW);
	ASSERT_EQ(sframe_jit_create(base, base + (hi - lo), &opts, &reg), 0);
	ASSERT_EQ(sframe_jit_import_sframe(reg, buf, size, vaddr + bias),
		  w->nr);
	for (i = 0; i < w->nr; i++) {
		const struct sframe_jit_func *want = &w->funcs[i];

		ASSERT(want->nr_rows <= ARRAY_SIZE(got));
		if (!sframe_jit_find(reg, want->start + bias, &f, got,
				     ARRAY_SIZE(got)) &&
		    f.start == want->start + bias && f.size == want->size &&
		    f.nr_rows == want->nr_rows && !f.stub_size &&
		    rows_equal(got, w->rows[i], f.nr_rows))
			continue;
		if (bad++ < 5)
			test_fail(__FILE__, __LINE__,
				  "function %u at %#llx does not read back",
				  i, (unsigned long long)want->start);
	}
	EXPECT_EQ(bad, 0);
	sframe_jit_destroy(reg);
}

/* Every check of the bytes of @w written for @vaddr. */
static void section_expect(const void *buf, size_t size,
			   const struct want *w, uint64_t vaddr)
{
	header_expect(buf, size, w);
	walk_expect(buf, w, vaddr);
	if (w->nr)
		import_expect(buf, size, w, vaddr);
}

/* A failed call leaves the caller's buffer and size alone. */
static int encode_fails(const struct sframe_jit_cfi *cfi, uint64_t vaddr)
{
	void *buf = &buf;
	size_t size = 7;
	int err;

	err = sframe_jit_cfi_encode(cfi, vaddr, &buf, &size);
	if (!err) {
		free(buf);
		return 0;
	}
	EXPECT(buf == &buf);
	EXPECT_EQ(size, 7);
	return err;
}

/*
 * func_start is a signed 32-bit offset: the last function at most
 * INT32_MAX above the section, the first at most 2 GiB below it.
 */
static void range_expect(const struct sframe_jit_cfi *cfi,
			 const struct want *w)
{
	uint64_t lo = w->funcs[0].start, last = w->funcs[w->nr - 1].start;

	EXPECT_EQ(encode_fails(cfi, last - INT32_MAX), 0);
	EXPECT_EQ(encode_fails(cfi, last - INT32_MAX - 1), -ERANGE);
	EXPECT_EQ(encode_fails(cfi, lo + 2 * GIB), 0);
	EXPECT_EQ(encode_fails(cfi, lo + 2 * GIB + 1), -ERANGE);
	EXPECT_EQ(encode_fails(cfi, last + 3 * GIB), -ERANGE);
	EXPECT_EQ(encode_fails(cfi, lo - 3 * GIB), -ERANGE);
}

/* The same bytes again, and from another conversion of the same object. */
static void same_bytes_expect(const struct sframe_jit_cfi *cfi,
			      const void *img, size_t img_size,
			      uint64_t vaddr, const void *buf, size_t size)
{
	struct sframe_jit_cfi *again;
	void *buf2;
	size_t size2;
	int k;

	ASSERT(sframe_jit_cfi_convert(img, img_size, &again) >= 0);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(sframe_jit_cfi_encode(k ? again : cfi, vaddr, &buf2,
						&size2), 0);
		EXPECT(size2 == size && !memcmp(buf, buf2, size));
		free(buf2);
	}
	sframe_jit_cfi_free(again);
}

/* Bytes of a section of @img; 0 where it has none. */
static uint64_t section_bytes(const void *img, size_t size, const char *name)
{
	Elf_Scn *scn = NULL;
	uint64_t bytes = 0;
	size_t shstrndx;
	GElf_Shdr shdr;
	const char *n;
	Elf *elf;

	ASSERT(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_memory((char *)img, size);
	ASSERT(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while (!bytes && (scn = elf_nextscn(elf, scn))) {
		ASSERT(gelf_getshdr(scn, &shdr));
		n = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (n && !strcmp(n, name))
			bytes = shdr.sh_size;
	}
	elf_end(elf);
	return bytes;
}

/* What the rows of @w exercise: outermost, FP saved, FP base. */
static void shapes_count(const struct want *w, uint32_t shapes[3])
{
	const struct sframe_jit_row *row;
	uint32_t i, r;

	memset(shapes, 0, 3 * sizeof(*shapes));
	for (i = 0; i < w->nr; i++) {
		for (r = 0; r < w->funcs[i].nr_rows; r++) {
			row = &w->rows[i][r];
			shapes[0] += !!(row->flags & SFRAME_JIT_ROW_RA_UNDEFINED);
			shapes[1] += !!(row->flags & SFRAME_JIT_ROW_FP_SAVED);
			shapes[2] += row->cfa_base == SFRAME_JIT_ROW_CFA_FP;
		}
	}
}

/*
 * @path's table written for a section past its code and for one before
 * it (func_start negative, then positive), checked, read back and
 * written again; its limits; and the sizes, for the kernel's budgets.
 */
static void object_round_trip(const char *path, uint32_t min_funcs,
			      uint32_t shapes[3])
{
	struct sframe_jit_cfi *cfi;
	uint64_t vaddr[2], end;
	struct want w;
	size_t size, len;
	void *img, *buf;
	int k, n;

	img = file_read(path, &size);
	if (!img)
		test_skip("no %s to read", path);
	n = sframe_jit_cfi_convert(img, size, &cfi);
	ASSERT(n >= (int)min_funcs);
	want_of_cfi(&w, cfi);
	end = w.funcs[n - 1].start + w.funcs[n - 1].size;
	vaddr[0] = (end + PAGE - 1) & ~(PAGE - 1);
	vaddr[1] = w.funcs[0].start & ~(PAGE - 1);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(sframe_jit_cfi_encode(cfi, vaddr[k], &buf, &len), 0);
		section_expect(buf, len, &w, vaddr[k]);
		same_bytes_expect(cfi, img, size, vaddr[k], buf, len);
		free(buf);
	}
	range_expect(cfi, &w);
	test_log("%s: %u functions, %llu rows: SFrame v2 %zu bytes, .eh_frame %llu, .eh_frame_hdr %llu",
		 path, w.nr, (unsigned long long)w.nr_rows, len,
		 (unsigned long long)section_bytes(img, size, ".eh_frame"),
		 (unsigned long long)section_bytes(img, size, ".eh_frame_hdr"));
	if (shapes)
		shapes_count(&w, shapes);
	want_free(&w);
	sframe_jit_cfi_free(cfi);
	free(img);
}

TEST(sframe_encode_of_libc_reads_back_every_function, T_MEM)
{
	object_round_trip("/lib/x86_64-linux-gnu/libc.so.6", 1000, NULL);
}

TEST(sframe_encode_of_libstdcxx_reads_back_every_function, T_MEM)
{
	object_round_trip("/lib/x86_64-linux-gnu/libstdc++.so.6", 1000, NULL);
}

TEST(sframe_encode_of_libz_reads_back_every_function, T_MEM)
{
	object_round_trip("/lib/x86_64-linux-gnu/libz.so.1", 50, NULL);
}

TEST(sframe_encode_of_python3_reads_back_every_function, T_MEM)
{
	object_round_trip("/usr/bin/python3", 1000, NULL);
}

TEST_TIMEOUT(sframe_encode_of_libllvm_reads_back_every_function, T_MEM, 300)
{
	object_round_trip("/usr/lib/llvm-14/lib/libLLVM-14.so.1", 90000, NULL);
}

/* The hand-written CFI of each shape: outermost rows, FP saved and base. */
TEST(sframe_encode_of_the_cfi_fixture_keeps_outermost_and_fp_rows, T_MEM)
{
	char path[512];
	uint32_t shapes[3];

	snprintf(path, sizeof(path), "%s/cfi_fixture.so", test_env.fixtures);
	object_round_trip(path, 10, shapes);
	EXPECT(shapes[0] >= 1);
	EXPECT(shapes[1] >= 4);
	EXPECT(shapes[2] >= 2);
}

#define SP(start, off)							\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .cfa_off = (off), .ra_off = -8 }
#define SP_FP(start, off, fp)						\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .cfa_off = (off), .ra_off = -8, .fp_off = (fp),		\
	  .flags = SFRAME_JIT_ROW_FP_SAVED }
#define FP_FP(start, off, fp)						\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_FP,	\
	  .cfa_off = (off), .ra_off = -8, .fp_off = (fp),		\
	  .flags = SFRAME_JIT_ROW_FP_SAVED }
#define OUTERMOST(start)						\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .flags = SFRAME_JIT_ROW_RA_UNDEFINED }

/*
 * Three functions, one per start address width (1 byte, 4, 2), with
 * rows of each base, offsets of each width, an outermost row; the
 * section 0x80 bytes into the first page, so that the first function's
 * start is negative.
 */
static const struct sframe_jit_row hand_rows[] = {
	SP(0, 8), SP_FP(1, 16, -16), FP_FP(4, 16, -16), OUTERMOST(0x1f),
	SP(0, 8), SP(0x1234, 200), FP_FP(0x10000, 0x12345, -300),
	SP_FP(0x1ffff, 8, -128),
	SP(0, 8), SP(0x100, 0x80),
};

#define HAND_VADDR	0x80

static void hand_funcs(struct sframe_jit__func f[3], uint64_t base)
{
	f[0] = (struct sframe_jit__func) {
		.start = base + 0x40, .size = 0x20, .first_row = 0,
		.nr_rows = 4,
	};
	f[1] = (struct sframe_jit__func) {
		.start = base + 0x100, .size = 0x20000, .first_row = 4,
		.nr_rows = 4,
	};
	f[2] = (struct sframe_jit__func) {
		.start = base + 0x30000, .size = 0x300, .first_row = 8,
		.nr_rows = 2,
	};
}

/* Written from the SFrame specification, byte by byte. */
static const unsigned char hand_section[] = {
	/* magic, version 2, FDE_SORTED, AMD64 LE, FP free, RA -8, no aux */
	0xe2, 0xde, 0x02, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x03, 0x00, 0x00, 0x00,		/* num_fdes */
	0x0a, 0x00, 0x00, 0x00,		/* num_fres */
	0x37, 0x00, 0x00, 0x00,		/* fre_len */
	0x00, 0x00, 0x00, 0x00,		/* fdeoff */
	0x3c, 0x00, 0x00, 0x00,		/* freoff */
	/* start -0x40, size, fre_off, num_fres, 1-byte starts, PCINC */
	0xc0, 0xff, 0xff, 0xff, 0x20, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	/* start 0x80, 4-byte starts */
	0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
	0x0d, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00,
	/* start 0x2ff80, 2-byte starts */
	0x80, 0xff, 0x02, 0x00, 0x00, 0x03, 0x00, 0x00,
	0x2e, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00,
	/* SP + 8; SP + 16, FP at -16; FP + 16, the same; outermost */
	0x00, 0x03, 0x08,
	0x01, 0x05, 0x10, 0xf0,
	0x04, 0x04, 0x10, 0xf0,
	0x1f, 0x01,
	/* SP + 8; SP + 200; FP + 0x12345, FP at -300; SP + 8, at -128 */
	0x00, 0x00, 0x00, 0x00, 0x03, 0x08,
	0x34, 0x12, 0x00, 0x00, 0x23, 0xc8, 0x00,
	0x00, 0x00, 0x01, 0x00, 0x44, 0x45, 0x23, 0x01, 0x00,
	0xd4, 0xfe, 0xff, 0xff,
	0xff, 0xff, 0x01, 0x00, 0x05, 0x08, 0x80,
	/* SP + 8; SP + 128 */
	0x00, 0x00, 0x03, 0x08,
	0x00, 0x01, 0x23, 0x80, 0x00,
};

TEST(sframe_encode_of_a_hand_built_table_gives_the_specified_bytes, T_MEM)
{
	struct sframe_jit__func funcs[3];
	uint64_t base = arena(0x40000);
	struct want w;
	size_t size;
	void *buf;

	hand_funcs(funcs, base);
	ASSERT_EQ(sframe_jit__sframe_encode(funcs, 3, hand_rows,
					    base + HAND_VADDR, &buf, &size), 0);
	EXPECT_EQ(size, sizeof(hand_section));
	EXPECT(size == sizeof(hand_section) &&
	       !memcmp(buf, hand_section, size));
	want_of_funcs(&w, funcs, 3, hand_rows);
	section_expect(buf, size, &w, base + HAND_VADDR);
	want_free(&w);
	free(buf);
}

/*
 * Stubs, as a PLT's entries: a PCMASK descriptor whose rep_size is the
 * stub's size, and rows within one stub, which read back as stubs.
 */
TEST(sframe_encode_of_stubs_gives_a_pcmask_descriptor, T_MEM)
{
	static const struct sframe_jit_row rows[] = {
		SP(0, 16), SP(6, 24), SP(0, 8), SP(11, 16),
	};
	struct sframe_jit__func funcs[2];
	uint64_t base = arena(0x40000);
	const unsigned char *fde;
	struct sframe_jit_row got[4];
	struct sframe_jit_func f;
	struct sframe_jit *reg;
	size_t size;
	void *buf;

	funcs[0] = (struct sframe_jit__func) {
		.start = base, .size = 16, .first_row = 0, .nr_rows = 2,
	};
	funcs[1] = (struct sframe_jit__func) {
		.start = base + 16, .size = 0x60, .stub_size = 16,
		.first_row = 2, .nr_rows = 2,
	};
	ASSERT_EQ(sframe_jit__sframe_encode(funcs, 2, rows, base, &buf,
					    &size), 0);
	fde = (const unsigned char *)buf + 28;
	/* PCINC, 1-byte starts; then PCMASK (bit 4), rep_size 16. */
	EXPECT_EQ(fde[16], 0x00);
	EXPECT_EQ(fde[17], 0);
	EXPECT_EQ(fde[20 + 16], 0x10);
	EXPECT_EQ(fde[20 + 17], 16);

	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_NO_KERNEL);
	ASSERT_EQ(sframe_jit_create(base, base + 0x1000, &opts, &reg), 0);
	ASSERT_EQ(sframe_jit_import_sframe(reg, buf, size, base), 2);
	/* The third stub's twelfth byte: its second row. */
	ASSERT_EQ(sframe_jit_find(reg, base + 16 + 2 * 16 + 11, &f, got, 4),
		  0);
	EXPECT_EQ(f.start, base + 16);
	EXPECT_EQ(f.size, 0x60);
	EXPECT_EQ(f.stub_size, 16);
	ASSERT_EQ(f.nr_rows, 2);
	EXPECT_EQ(got[1].start_off, 11);
	EXPECT_EQ(got[1].cfa_off, 16);
	sframe_jit_destroy(reg);
	free(buf);
}

TEST(sframe_encode_of_no_function_is_a_bare_header, T_MEM)
{
	struct want w = { 0 };
	struct sframe_jit *reg;
	uint64_t base = arena(PAGE);
	size_t size;
	void *buf;

	ASSERT_EQ(sframe_jit__sframe_encode(NULL, 0, NULL, 0, &buf, &size), 0);
	EXPECT_EQ(size, HDR_SIZE);
	section_expect(buf, size, &w, 0);
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_NO_KERNEL);
	ASSERT_EQ(sframe_jit_create(base, base + PAGE, &opts, &reg), 0);
	EXPECT_EQ(sframe_jit_import_sframe(reg, buf, size, base), 0);
	sframe_jit_destroy(reg);
	free(buf);
}

/* One change to the hand-built table, and the encoder's answer to it. */
enum spoil {
	SPOIL_NOTHING,
	SPOIL_OUTERMOST,	/* an outermost row's fields mean nothing */
	SPOIL_RA,
	SPOIL_STUB_ROWS,	/* a stub's row starts past the stub */
	SPOIL_STUB_SIZE,	/* rep_size is one byte */
	SPOIL_BASE,
	SPOIL_FLAGS,
	SPOIL_ORDER,
	SPOIL_PAST_END,
	SPOIL_OVERLAP,
	SPOIL_SIZE,
	SPOIL_FAR,
};

static const struct {
	enum spoil spoil;
	int err;
} spoils[] = {
	{ SPOIL_NOTHING, 0 },
	{ SPOIL_OUTERMOST, 0 },
	{ SPOIL_RA, -EOPNOTSUPP },
	{ SPOIL_STUB_ROWS, -EINVAL },
	{ SPOIL_STUB_SIZE, -EINVAL },
	{ SPOIL_BASE, -EINVAL },
	{ SPOIL_FLAGS, -EINVAL },
	{ SPOIL_ORDER, -EINVAL },
	{ SPOIL_PAST_END, -EINVAL },
	{ SPOIL_OVERLAP, -EINVAL },
	{ SPOIL_SIZE, -EINVAL },
	{ SPOIL_FAR, -ERANGE },
};

static void spoil_apply(enum spoil spoil, struct sframe_jit__func *f,
			struct sframe_jit_row *r)
{
	switch (spoil) {
	case SPOIL_NOTHING:
		break;
	case SPOIL_OUTERMOST:
		r[3].ra_off = -16;
		r[3].cfa_off = 1000;
		break;
	case SPOIL_RA:
		r[5].ra_off = -16;
		break;
	case SPOIL_STUB_ROWS:
		f[2].stub_size = 16;
		break;
	case SPOIL_STUB_SIZE:
		f[2].stub_size = 256;
		r[9].start_off = 8;
		break;
	case SPOIL_BASE:
		r[1].cfa_base = 2;
		break;
	case SPOIL_FLAGS:
		r[1].flags |= 0x80;
		break;
	case SPOIL_ORDER:
		r[2].start_off = 1;
		break;
	case SPOIL_PAST_END:
		f[0].size = 0x1f;
		break;
	case SPOIL_OVERLAP:
		f[1].start = f[0].start + f[0].size - 1;
		break;
	case SPOIL_SIZE:
		f[2].size = 0;
		f[2].nr_rows = 0;
		break;
	case SPOIL_FAR:
		f[2].start += 2 * GIB;
		break;
	}
}

/* A failed call leaves the caller's buffer and size alone. */
static int hand_encode(enum spoil spoil)
{
	struct sframe_jit_row rows[ARRAY_SIZE(hand_rows)];
	struct sframe_jit__func funcs[3];
	void *buf = &buf;
	size_t size = 7;
	int err;

	memcpy(rows, hand_rows, sizeof(rows));
	hand_funcs(funcs, 16 * GIB);
	spoil_apply(spoil, funcs, rows);
	err = sframe_jit__sframe_encode(funcs, 3, rows, 16 * GIB, &buf, &size);
	if (!err) {
		free(buf);
		return 0;
	}
	EXPECT(buf == &buf);
	EXPECT_EQ(size, 7);
	return err;
}

TEST(sframe_encode_refuses_what_a_section_cannot_say, T_MEM)
{
	void *buf = &buf;
	size_t size = 7;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(spoils); i++)
		if (hand_encode(spoils[i].spoil) != spoils[i].err)
			test_fail(__FILE__, __LINE__,
				  "change %u: not answered with %d", i,
				  spoils[i].err);

	EXPECT_EQ(sframe_jit_cfi_encode(NULL, 0, &buf, &size), -EINVAL);
	EXPECT_EQ(sframe_jit__sframe_encode(NULL, 1, hand_rows, 0, &buf,
					    &size), -EINVAL);
	EXPECT_EQ(sframe_jit__sframe_encode(NULL, 0, NULL, 0, NULL, &size),
		  -EINVAL);
	EXPECT_EQ(sframe_jit__sframe_encode(NULL, 0, NULL, 0, &buf, NULL),
		  -EINVAL);
	EXPECT(buf == &buf);
	EXPECT_EQ(size, 7);
}

/* The public call's own argument checks, on a real table. */
TEST(sframe_encode_of_a_table_checks_its_arguments, T_MEM)
{
	struct sframe_jit_cfi *cfi;
	char path[512];
	size_t size, len = 7;
	void *img, *buf = &buf;

	snprintf(path, sizeof(path), "%s/cfi_fixture.so", test_env.fixtures);
	img = file_read(path, &size);
	if (!img)
		test_skip("cannot read %s (SFRAME_JIT_FIXTURES)", path);
	ASSERT(sframe_jit_cfi_convert(img, size, &cfi) > 0);
	EXPECT_EQ(sframe_jit_cfi_encode(cfi, 0, NULL, &len), -EINVAL);
	EXPECT_EQ(sframe_jit_cfi_encode(cfi, 0, &buf, NULL), -EINVAL);
	EXPECT(buf == &buf);
	EXPECT_EQ(len, 7);
	sframe_jit_cfi_free(cfi);
	free(img);
}
