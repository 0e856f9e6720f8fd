// SPDX-License-Identifier: GPL-2.0
/*
 * Import of .sframe sections: gcc's own (fixture.c, built with
 * -Wa,--gsframe), checked row by row against what libsframe from GNU
 * binutils decodes of the same section, and hand-built version 2
 * sections, well and badly formed.
 *
 * This file links libsframe, which is GPL-3.0-or-later.
 */
#include <gelf.h>
#include <sframe-api.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"

#define ROWS_MAX	64

struct object {
	char *image;
	size_t size;
	Elf *elf;
};

struct section {
	const char *data;
	size_t size;
	uint64_t addr;
	size_t ndx;
};

static void object_open(struct object *o, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", test_env.fixtures, name);
	o->image = file_read(path, &o->size);
	if (!o->image)
		test_skip("cannot read %s (SFRAME_JIT_FIXTURES)", path);
	ASSERT(elf_version(EV_CURRENT) != EV_NONE);
	o->elf = elf_memory(o->image, o->size);
	ASSERT(o->elf);
}

static void object_close(struct object *o)
{
	elf_end(o->elf);
	free(o->image);
}

static bool section_find(struct object *o, const char *name,
			 struct section *s)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t shstrndx;

	ASSERT(!elf_getshdrstrndx(o->elf, &shstrndx));
	while ((scn = elf_nextscn(o->elf, scn))) {
		ASSERT(gelf_getshdr(scn, &shdr));
		if (strcmp(elf_strptr(o->elf, shstrndx, shdr.sh_name), name))
			continue;
		s->data = o->image + shdr.sh_offset;
		s->size = shdr.sh_size;
		s->addr = shdr.sh_addr;
		s->ndx = elf_ndxscn(scn);
		return true;
	}
	return false;
}

/* A function symbol's value and section, by name. */
static bool symbol_find(struct object *o, const char *name, GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym sym;
	size_t i;

	while ((scn = elf_nextscn(o->elf, scn))) {
		ASSERT(gelf_getshdr(scn, &shdr));
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			ASSERT(gelf_getsym(data, i, &sym));
			if (GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    !strcmp(elf_strptr(o->elf, shdr.sh_link,
					       sym.st_name), name)) {
				*out = sym;
				return true;
			}
		}
	}
	return false;
}

/* The name of the function symbol at @value, or NULL. */
static const char *symbol_at(struct object *o, uint64_t value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	GElf_Sym sym;
	size_t i;

	while ((scn = elf_nextscn(o->elf, scn))) {
		ASSERT(gelf_getshdr(scn, &shdr));
		if (shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			ASSERT(gelf_getsym(data, i, &sym));
			if (GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_value == value)
				return elf_strptr(o->elf, shdr.sh_link,
						  sym.st_name);
		}
	}
	return NULL;
}

static struct sframe_jit *registry(struct test_backend *tb, uint64_t start,
				   uint64_t size,
				   const struct sframe_jit_opts *opts)
{
	test_backend_init(tb);
	return reg_new(tb, start, start + size, opts);
}

/* Page-rounded room for @size bytes of copied code. */
static uint64_t code_room(uint64_t size)
{
	return (size + 4095) & ~4095ULL;
}

/*
 * Compare the function that libsframe decodes as @fidx of @dctx with the
 * one the registry holds at @addr; return its number of rows.
 */
static int compare_func(sframe_decoder_ctx *dctx, unsigned int fidx,
			struct sframe_jit *reg, uint64_t addr,
			uint32_t *max_start, int32_t *max_cfa)
{
	struct sframe_jit_row rows[ROWS_MAX];
	uint32_t num_fres, size;
	struct sframe_jit_func fn;
	unsigned char info;
	int32_t start;
	unsigned int j;
	int err;

	ASSERT_EQ(0, sframe_decoder_get_funcdesc(dctx, fidx, &num_fres, &size,
						 &start, &info));
	ASSERT(num_fres <= ROWS_MAX);
	err = sframe_jit_find(reg, addr, &fn, rows, ROWS_MAX);
	if (err) {
		test_fail(__FILE__, __LINE__, "function %u not imported at %#llx",
			  fidx, (unsigned long long)addr);
		return 0;
	}
	EXPECT_EQ(addr, fn.start);
	EXPECT_EQ(size, fn.size);
	EXPECT_EQ(num_fres, fn.nr_rows);
	EXPECT_EQ((info >> 4) & 1 ? 16 : 0, fn.stub_size);
	for (j = 0; j < num_fres && j < fn.nr_rows; j++) {
		sframe_frame_row_entry fre;
		int32_t cfa, ra, fp;
		unsigned int base;
		int e_base = 0, e_cfa = 0, e_ra = 0, e_fp = 0;

		ASSERT_EQ(0, sframe_decoder_get_fre(dctx, fidx, j, &fre));
		base = sframe_fre_get_base_reg_id(&fre, &e_base);
		cfa = sframe_fre_get_cfa_offset(dctx, &fre, &e_cfa);
		ra = sframe_fre_get_ra_offset(dctx, &fre, &e_ra);
		fp = sframe_fre_get_fp_offset(dctx, &fre, &e_fp);
		EXPECT_EQ(0, e_base);
		EXPECT_EQ(0, e_cfa);
		/* libsframe 2.40 leaves a fixed RA offset to the caller. */
		if (e_ra == SFRAME_ERR_FREOFFSET_NOPRESENT &&
		    sframe_decoder_get_fixed_ra_offset(dctx)) {
			ra = sframe_decoder_get_fixed_ra_offset(dctx);
			e_ra = 0;
		}
		EXPECT_EQ(0, e_ra);
		EXPECT_EQ(fre.fre_start_addr, rows[j].start_off);
		EXPECT_EQ(base == SFRAME_BASE_REG_SP ? SFRAME_JIT_ROW_CFA_SP :
						       SFRAME_JIT_ROW_CFA_FP,
			  rows[j].cfa_base);
		EXPECT_EQ(cfa, rows[j].cfa_off);
		EXPECT_EQ(ra, rows[j].ra_off);
		if (e_fp) {
			EXPECT_EQ(0, rows[j].flags);
		} else {
			EXPECT_EQ(SFRAME_JIT_ROW_FP_SAVED, rows[j].flags);
			EXPECT_EQ(fp, rows[j].fp_off);
		}
		if (rows[j].start_off > *max_start)
			*max_start = rows[j].start_off;
		if (rows[j].cfa_off > *max_cfa)
			*max_cfa = rows[j].cfa_off;
	}
	return num_fres;
}

static sframe_decoder_ctx *decode(const struct section *sframe)
{
	sframe_decoder_ctx *dctx;
	int err = 0;

	dctx = sframe_decode(sframe->data, sframe->size, &err);
	if (!dctx)
		test_fail(__FILE__, __LINE__, "libsframe: %s",
			  sframe_errmsg(err));
	ASSERT(dctx);
	return dctx;
}

/* A linked object: every function of .text, where the text now lives. */
TEST(import_of_a_shared_object_matches_libsframe_row_by_row, T_BOTH)
{
	struct section sframe, text;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object so;
	sframe_decoder_ctx *dctx;
	uint32_t max_start = 0;
	int32_t max_cfa = 0;
	unsigned int i, n;
	uint64_t code;
	int funcs = 0;

	object_open(&so, "fixture.so");
	ASSERT(section_find(&so, ".sframe", &sframe));
	ASSERT(section_find(&so, ".text", &text));
	code = arena(code_room(text.size));
	reg = registry(&tb, code, code_room(text.size), NULL);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_addr = code);
		n = sframe_jit_import_elf(reg, so.image, so.size, &opts);
	}
	dctx = decode(&sframe);
	for (i = 0; i < sframe_decoder_get_num_fidx(dctx); i++) {
		uint32_t num_fres, size;
		unsigned char info;
		int32_t start;
		uint64_t vaddr;

		ASSERT_EQ(0, sframe_decoder_get_funcdesc(dctx, i, &num_fres,
							 &size, &start, &info));
		/* Version 1: function starts are relative to the section. */
		vaddr = sframe.addr + start;
		if (vaddr < text.addr || vaddr >= text.addr + text.size)
			continue;
		compare_func(dctx, i, reg, code + vaddr - text.addr,
			     &max_start, &max_cfa);
		funcs++;
	}
	EXPECT_EQ(funcs, n);
	EXPECT_EQ(6, funcs);
	/* The fixture reaches 2- and 4-byte row starts and offsets. */
	EXPECT(max_start > 0xffff);
	EXPECT(max_cfa > 0x7fff);
	{
		struct sframe_jit_info info = { .sz = sizeof(info) };

		EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
		EXPECT_EQ(funcs, info.nr_funcs);
	}
	sframe_decoder_free(&dctx);
	sframe_jit_destroy(reg);
	object_close(&so);
}

/*
 * A relocatable object: starts come from .rela.sframe.  The shared
 * object linked from it is the oracle: its rows, decoded by libsframe,
 * for the function of the same name, at the symbol's offset in the
 * object's .text.
 */
TEST(import_of_a_relocatable_object_places_functions_by_relocation, T_BOTH)
{
	struct section so_sframe, o_text, o_other;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object so, o;
	sframe_decoder_ctx *dctx;
	uint32_t max_start = 0;
	int32_t max_cfa = 0;
	unsigned int i;
	uint64_t code;
	int n, funcs = 0;

	object_open(&so, "fixture.so");
	object_open(&o, "fixture.o");
	ASSERT(section_find(&so, ".sframe", &so_sframe));
	ASSERT(section_find(&o, ".text", &o_text));
	ASSERT(section_find(&o, "other_text", &o_other));
	code = arena(code_room(o_text.size));
	reg = registry(&tb, code, code_room(o_text.size), NULL);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_addr = code);
		n = sframe_jit_import_elf(reg, o.image, o.size, &opts);
	}
	dctx = decode(&so_sframe);
	for (i = 0; i < sframe_decoder_get_num_fidx(dctx); i++) {
		uint32_t num_fres, size;
		unsigned char info;
		const char *name;
		int32_t start;
		GElf_Sym sym;

		ASSERT_EQ(0, sframe_decoder_get_funcdesc(dctx, i, &num_fres,
							 &size, &start, &info));
		name = symbol_at(&so, so_sframe.addr + start);
		if (!name || !symbol_find(&o, name, &sym) ||
		    sym.st_shndx != o_text.ndx)
			continue;
		compare_func(dctx, i, reg, code + sym.st_value, &max_start,
			     &max_cfa);
		funcs++;
	}
	EXPECT_EQ(6, funcs);
	EXPECT_EQ(funcs, n);
	sframe_jit_destroy(reg);

	/* The function in the other section, alone. */
	code = arena(4096);
	reg = registry(&tb, code, 4096, NULL);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_section = "other_text",
				.text_addr = code);
		EXPECT_EQ(1, sframe_jit_import_elf(reg, o.image, o.size, &opts));
	}
	EXPECT_EQ(0, sframe_jit_find(reg, code, NULL, NULL, 0));
	sframe_jit_destroy(reg);
	sframe_decoder_free(&dctx);
	object_close(&o);
	object_close(&so);
}

/* ld 2.40 describes the PLT entries as version 1 PCMASK stubs. */
TEST(import_of_the_plt_gives_stubs_of_16_bytes, T_BOTH)
{
	struct section sframe, plt;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object so;
	sframe_decoder_ctx *dctx;
	uint32_t max_start = 0;
	int32_t max_cfa = 0;
	unsigned int i;
	uint64_t code;
	int n, funcs = 0, stubs = 0;

	object_open(&so, "fixture.so");
	ASSERT(section_find(&so, ".sframe", &sframe));
	ASSERT(section_find(&so, ".plt", &plt));
	code = arena(4096);
	reg = registry(&tb, code, 4096, NULL);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_section = ".plt", .text_addr = code);
		n = sframe_jit_import_elf(reg, so.image, so.size, &opts);
	}
	dctx = decode(&sframe);
	for (i = 0; i < sframe_decoder_get_num_fidx(dctx); i++) {
		uint32_t num_fres, size;
		unsigned char info;
		int32_t start;
		uint64_t vaddr;

		ASSERT_EQ(0, sframe_decoder_get_funcdesc(dctx, i, &num_fres,
							 &size, &start, &info));
		vaddr = sframe.addr + start;
		if (vaddr < plt.addr || vaddr >= plt.addr + plt.size)
			continue;
		compare_func(dctx, i, reg, code + vaddr - plt.addr,
			     &max_start, &max_cfa);
		stubs += (info >> 4) & 1;
		funcs++;
	}
	EXPECT_EQ(funcs, n);
	EXPECT_EQ(1, stubs);
	sframe_decoder_free(&dctx);
	sframe_jit_destroy(reg);
	object_close(&so);
}

/* The bare section of the whole object, moved as one block. */
TEST(import_sframe_resolves_starts_against_the_given_address, T_BOTH)
{
	struct section sframe, text;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object so;
	sframe_decoder_ctx *dctx;
	uint64_t code, span, delta;
	uint32_t max_start = 0;
	int32_t max_cfa = 0;
	unsigned int i;
	int n;

	object_open(&so, "fixture.so");
	ASSERT(section_find(&so, ".sframe", &sframe));
	ASSERT(section_find(&so, ".text", &text));
	span = code_room(sframe.addr);
	code = arena(span);
	delta = code;	/* the object's address 0 lands at code */
	reg = registry(&tb, code, span, NULL);
	n = sframe_jit_import_sframe(reg, sframe.data, sframe.size,
				     sframe.addr + delta);
	dctx = decode(&sframe);
	EXPECT_EQ(sframe_decoder_get_num_fidx(dctx), n);
	for (i = 0; i < sframe_decoder_get_num_fidx(dctx); i++) {
		uint32_t num_fres, size;
		unsigned char info;
		int32_t start;

		ASSERT_EQ(0, sframe_decoder_get_funcdesc(dctx, i, &num_fres,
							 &size, &start, &info));
		compare_func(dctx, i, reg, sframe.addr + start + delta,
			     &max_start, &max_cfa);
	}
	sframe_decoder_free(&dctx);
	sframe_jit_destroy(reg);
	object_close(&so);
}

TEST(import_names_functions_in_the_perf_map, T_MEM)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, ropts, .flags = SFRAME_JIT_F_PERF_MAP);
	struct section text;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object o;
	char path[] = "/tmp/sframe_jit_test.XXXXXX", *buf, want[64];
	uint64_t code;
	GElf_Sym sym;
	size_t size;
	int fd;

	object_open(&o, "fixture.o");
	ASSERT(section_find(&o, ".text", &text));
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	close(fd);
	ropts.perf_map_path = path;
	code = arena(code_room(text.size));
	reg = registry(&tb, code, code_room(text.size), &ropts);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_addr = code);
		EXPECT_EQ(6, sframe_jit_import_elf(reg, o.image, o.size, &opts));
	}
	buf = file_read(path, &size);
	ASSERT(buf);
	ASSERT(symbol_find(&o, "big_stack", &sym));
	snprintf(want, sizeof(want), "%llx %llx big_stack\n",
		 (unsigned long long)(code + sym.st_value),
		 (unsigned long long)sym.st_size);
	EXPECT(memmem(buf, size, want, strlen(want)));
	EXPECT(memmem(buf, size, " leaf\n", 6));
	EXPECT(memmem(buf, size, " long_body\n", 11));
	free(buf);
	sframe_jit_destroy(reg);
	unlink(path);
	object_close(&o);
}

TEST(import_adds_all_functions_or_none, T_BOTH)
{
	struct section text;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct sframe_jit_info info = { .sz = sizeof(info) };
	struct object o;
	uint64_t code, room;

	object_open(&o, "fixture.o");
	ASSERT(section_find(&o, ".text", &text));
	room = code_room(text.size);
	code = arena(room);
	/* The range ends inside the text: -ERANGE, nothing added. */
	reg = registry(&tb, code, text.size / 2, NULL);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_addr = code);
		EXPECT_EQ(-ERANGE, sframe_jit_import_elf(reg, o.image, o.size,
							 &opts));
	}
	EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
	EXPECT_EQ(0, info.nr_funcs);
	EXPECT_EQ(0, info.nr_rows_used);
	sframe_jit_destroy(reg);

	/* A live function in the way: those added before it go again. */
	reg = registry(&tb, code, room, NULL);
	{
		SFRAME_JIT_OPTS(sframe_jit_import_opts, opts,
				.text_addr = code);
		GElf_Sym sym;

		ASSERT(symbol_find(&o, "long_body", &sym));
		EXPECT_EQ(0, sframe_jit_add(reg, code + sym.st_value + 8, 8,
					    NULL, 0, NULL));
		EXPECT_EQ(-EEXIST, sframe_jit_import_elf(reg, o.image, o.size,
							 &opts));
	}
	EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
	EXPECT_EQ(1, info.nr_funcs);
	sframe_jit_destroy(reg);
	object_close(&o);
}

TEST(import_elf_refuses_what_it_cannot_use, T_BOTH)
{
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object o;
	char *copy, junk[64] = "not an ELF object";
	size_t exe_size;
	void *exe;
	uint64_t code = arena(1 << 20);

	SFRAME_JIT_OPTS(sframe_jit_import_opts, opts, .text_addr = code);
	object_open(&o, "fixture.o");
	reg = registry(&tb, code, 1 << 20, NULL);
	EXPECT_EQ(-EINVAL, sframe_jit_import_elf(reg, o.image, o.size, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_import_elf(NULL, o.image, o.size, &opts));
	EXPECT_EQ(-EINVAL, sframe_jit_import_elf(reg, NULL, o.size, &opts));
	opts.text_addr = 0;
	EXPECT_EQ(-EINVAL, sframe_jit_import_elf(reg, o.image, o.size, &opts));
	opts.text_addr = code;
	opts.flags = 0x10;
	EXPECT_EQ(-EINVAL, sframe_jit_import_elf(reg, o.image, o.size, &opts));
	opts.flags = 0;
	opts.sz = 4;
	EXPECT_EQ(-EINVAL, sframe_jit_import_elf(reg, o.image, o.size, &opts));
	opts.sz = sizeof(opts);
	opts.text_section = ".nonexistent";
	EXPECT_EQ(-ENOENT, sframe_jit_import_elf(reg, o.image, o.size, &opts));
	opts.text_section = NULL;
	EXPECT_EQ(-ENOEXEC, sframe_jit_import_elf(reg, junk, sizeof(junk),
						  &opts));
	EXPECT_EQ(-ENOEXEC, sframe_jit_import_elf(reg, o.image, 10, &opts));
	copy = malloc(o.size);
	ASSERT(copy);
	memcpy(copy, o.image, o.size);
	copy[EI_CLASS] = ELFCLASS32;
	EXPECT_EQ(-EOPNOTSUPP, sframe_jit_import_elf(reg, copy, o.size, &opts));
	memcpy(copy, o.image, o.size);
	copy[EI_DATA] = ELFDATA2MSB;
	EXPECT_EQ(-EOPNOTSUPP, sframe_jit_import_elf(reg, copy, o.size, &opts));
	/* The image is never written, even when refused. */
	EXPECT_EQ(ELFDATA2MSB, copy[EI_DATA]);
	free(copy);
	/* The test binary itself carries no .sframe. */
	exe = file_read("/proc/self/exe", &exe_size);
	ASSERT(exe);
	EXPECT_EQ(-ENOENT, sframe_jit_import_elf(reg, exe, exe_size, &opts));
	free(exe);
	EXPECT_EQ(0, tb.nr_replaces);
	sframe_jit_destroy(reg);
	object_close(&o);
}

/* Hand-built sections. */

struct hfre {
	uint32_t start;
	uint8_t info;		/* SFrame's: base, count, size, mangled */
	int32_t off[4];
};

struct hfde {
	int32_t start;
	uint32_t size;
	uint8_t info;		/* row width, PCMASK */
	uint8_t rep;
	int nr;
	struct hfre fre[4];
};

/* SFrame FRE info: SP or FP base, @n offsets of 1 << @sz bytes. */
#define FRE_INFO(sp, n, sz)	((sp) | (n) << 1 | (sz) << 5)

static void put(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = v >> (8 * i);
}

/* Encode a little-endian AMD64 section; return its size. */
static size_t hsec(unsigned char *out, uint8_t version, uint8_t flags,
		   int8_t fixed_ra, const struct hfde *f, int n)
{
	size_t fde_size = version == 1 ? 17 : 20;
	size_t fre_base = 28 + n * fde_size, off = 0;
	uint32_t nfres = 0;
	int i, j, k;

	memset(out, 0, 28 + n * fde_size);
	for (i = 0; i < n; i++) {
		unsigned char *d = out + 28 + i * fde_size;

		put(d, (uint32_t)f[i].start, 4);
		put(d + 4, f[i].size, 4);
		put(d + 8, off, 4);
		put(d + 12, f[i].nr, 4);
		d[16] = f[i].info;
		if (version != 1)
			d[17] = f[i].rep;
		for (j = 0; j < f[i].nr; j++) {
			const struct hfre *r = &f[i].fre[j];
			int asz = 1 << (f[i].info & 0xf);
			int osz = 1 << ((r->info >> 5) & 3);
			unsigned char *p = out + fre_base + off;

			put(p, r->start, asz);
			p[asz] = r->info;
			for (k = 0; k < ((r->info >> 1) & 0xf); k++)
				put(p + asz + 1 + k * osz, r->off[k], osz);
			off += asz + 1 + ((r->info >> 1) & 0xf) * osz;
		}
		nfres += f[i].nr;
	}
	put(out, 0xdee2, 2);
	out[2] = version;
	out[3] = flags;
	out[4] = 3;
	out[6] = fixed_ra;
	put(out + 8, n, 4);
	put(out + 12, nfres, 4);
	put(out + 16, off, 4);
	put(out + 20, 0, 4);
	put(out + 24, n * fde_size, 4);
	return fre_base + off;
}

static const struct hfde two_funcs[] = {
	{ .start = 0x100, .size = 0x40, .nr = 2, .fre = {
		{ 0, FRE_INFO(1, 1, 0), { 8 } },
		{ 1, FRE_INFO(1, 2, 0), { 16, -16 } },
	} },
	{ .start = 0x200, .size = 0x20, .info = 0x10, .rep = 16, .nr = 1,
	  .fre = { { 0, FRE_INFO(1, 1, 0), { 16 } } } },
};

TEST(import_sframe_reads_version_2_with_and_without_pcrel, T_BOTH)
{
	struct sframe_jit_row rows[4];
	struct sframe_jit_func fn;
	struct test_backend tb;
	struct sframe_jit *reg;
	unsigned char sec[512];
	struct hfde f[2];
	uint64_t code = arena(8192);
	size_t len;

	reg = registry(&tb, code, 8192, NULL);
	len = hsec(sec, 2, 0, -8, two_funcs, 2);
	EXPECT_EQ(2, sframe_jit_import_sframe(reg, sec, len, code));
	ASSERT_EQ(0, sframe_jit_find(reg, code + 0x13f, &fn, rows, 4));
	EXPECT_EQ(code + 0x100, fn.start);
	EXPECT_EQ(2, fn.nr_rows);
	EXPECT_EQ(16, rows[1].cfa_off);
	EXPECT_EQ(-16, rows[1].fp_off);
	EXPECT_EQ(-8, rows[1].ra_off);
	EXPECT_EQ(SFRAME_JIT_ROW_FP_SAVED, rows[1].flags);
	ASSERT_EQ(0, sframe_jit_find(reg, code + 0x200, &fn, rows, 4));
	EXPECT_EQ(16, fn.stub_size);
	EXPECT_EQ(0, sframe_jit_remove_range(reg, code, code + 8192) - 2);

	/* PC-relative: each start is relative to its own field. */
	memcpy(f, two_funcs, sizeof(f));
	f[0].start = 0x1100 - 28;
	f[1].start = 0x1200 - (28 + 20);
	len = hsec(sec, 2, 0x4, -8, f, 2);
	EXPECT_EQ(2, sframe_jit_import_sframe(reg, sec, len, code));
	EXPECT_EQ(0, sframe_jit_find(reg, code + 0x1100, NULL, NULL, 0));
	EXPECT_EQ(0, sframe_jit_find(reg, code + 0x1200, NULL, NULL, 0));
	/* Version 1 has no such flag: the same bit is ignored. */
	len = hsec(sec, 1, 0x4, -8, two_funcs, 1);
	EXPECT_EQ(1, sframe_jit_import_sframe(reg, sec, len, code));
	EXPECT_EQ(0, sframe_jit_find(reg, code + 0x100, NULL, NULL, 0));
	sframe_jit_destroy(reg);
}

TEST(import_sframe_converts_every_row_form, T_BOTH)
{
	static const struct hfde f[] = {
		/* RA not fixed: CFA, RA, FP; 2- and 4-byte offsets. */
		{ .start = 0, .size = 0x20000, .info = 2, .nr = 4, .fre = {
			{ 0, FRE_INFO(1, 2, 0), { 8, -8 } },
			{ 0x10, FRE_INFO(0, 3, 1), { 16, -8, -16 } },
			{ 0x10000, FRE_INFO(1, 2, 2), { 100000, -8 } },
			/* No offsets: the outermost frame. */
			{ 0x10001, FRE_INFO(1, 0, 0), { 0 } },
		} },
	};
	struct sframe_jit_row rows[4];
	struct sframe_jit_func fn;
	struct test_backend tb;
	struct sframe_jit *reg;
	unsigned char sec[512];
	uint64_t code = arena(1 << 18);
	size_t len;

	reg = registry(&tb, code, 1 << 18, NULL);
	len = hsec(sec, 2, 0, 0, f, 1);
	EXPECT_EQ(1, sframe_jit_import_sframe(reg, sec, len, code));
	ASSERT_EQ(0, sframe_jit_find(reg, code, &fn, rows, 4));
	ASSERT_EQ(4, fn.nr_rows);
	EXPECT_EQ(SFRAME_JIT_ROW_CFA_SP, rows[0].cfa_base);
	EXPECT_EQ(0, rows[0].flags);
	EXPECT_EQ(SFRAME_JIT_ROW_CFA_FP, rows[1].cfa_base);
	EXPECT_EQ(SFRAME_JIT_ROW_FP_SAVED, rows[1].flags);
	EXPECT_EQ(-16, rows[1].fp_off);
	EXPECT_EQ(0x10000, rows[2].start_off);
	EXPECT_EQ(100000, rows[2].cfa_off);
	EXPECT_EQ(SFRAME_JIT_ROW_RA_UNDEFINED, rows[3].flags);
	sframe_jit_destroy(reg);
}

struct bad_case {
	const char *what;
	int err;
	uint8_t version;
	int8_t fixed_ra;
	struct hfde f;
	void (*spoil)(unsigned char *sec, size_t *len);
};

static void spoil_short(unsigned char *s, size_t *len)
{
	(void)s;
	*len = 27;
}

static void spoil_magic(unsigned char *s, size_t *len)
{
	(void)len;
	s[0] = 0x12;
}

static void spoil_big_endian(unsigned char *s, size_t *len)
{
	(void)len;
	s[0] = 0xde;
	s[1] = 0xe2;
}

static void spoil_version3(unsigned char *s, size_t *len)
{
	(void)len;
	s[2] = 3;
}

static void spoil_abi(unsigned char *s, size_t *len)
{
	(void)len;
	s[4] = 2;
}

static void spoil_num_fdes(unsigned char *s, size_t *len)
{
	(void)len;
	put(s + 8, 1000, 4);
}

static void spoil_fre_len(unsigned char *s, size_t *len)
{
	(void)len;
	put(s + 16, 1000, 4);
}

static void spoil_num_fres(unsigned char *s, size_t *len)
{
	(void)len;
	put(s + 12, 200, 4);
}

static void spoil_fde_rows(unsigned char *s, size_t *len)
{
	(void)len;
	put(s + 28 + 12, 2, 4);	/* more rows than the header has */
}

static void spoil_truncate_rows(unsigned char *s, size_t *len)
{
	(void)s;
	*len -= 1;
	put(s + 16, *len - 48, 4);
}

static const struct bad_case bad_cases[] = {
	{ "short", -ENOEXEC, 2, -8, { .size = 8, .nr = 1 }, spoil_short },
	{ "magic", -ENOEXEC, 2, -8, { .size = 8, .nr = 1 }, spoil_magic },
	{ "big endian", -EOPNOTSUPP, 2, -8, { .size = 8, .nr = 1 },
	  spoil_big_endian },
	{ "version 3", -EOPNOTSUPP, 2, -8, { .size = 8, .nr = 1 },
	  spoil_version3 },
	{ "aarch64", -EOPNOTSUPP, 2, -8, { .size = 8, .nr = 1 }, spoil_abi },
	{ "fdes past the end", -ENOEXEC, 2, -8, { .size = 8, .nr = 1 },
	  spoil_num_fdes },
	{ "rows past the end", -ENOEXEC, 2, -8, { .size = 8, .nr = 1 },
	  spoil_fre_len },
	{ "row count", -ENOEXEC, 2, -8, { .size = 8, .nr = 1 },
	  spoil_num_fres },
	{ "fde rows above the count", -ENOEXEC, 2, -8, { .size = 8, .nr = 1 },
	  spoil_fde_rows },
	{ "truncated row", -ENOEXEC, 2, -8, { .size = 8, .nr = 1, .fre = {
		{ 0, FRE_INFO(1, 1, 2), { 8 } } } }, spoil_truncate_rows },
	{ "row width 3", -ENOEXEC, 2, -8, { .size = 8, .info = 3, .nr = 1 } },
	{ "pcmask without size", -ENOEXEC, 2, -8,
	  { .size = 8, .info = 0x10, .nr = 1 } },
	{ "empty function", -ENOEXEC, 2, -8, { .size = 0, .nr = 1 } },
	{ "rows out of order", -ENOEXEC, 2, -8, { .size = 8, .nr = 2, .fre = {
		{ 0, FRE_INFO(1, 1, 0), { 8 } },
		{ 0, FRE_INFO(1, 1, 0), { 8 } } } } },
	{ "row past the function", -ENOEXEC, 2, -8, { .size = 8, .nr = 2,
	  .fre = { { 0, FRE_INFO(1, 1, 0), { 8 } },
		   { 8, FRE_INFO(1, 1, 0), { 8 } } } } },
	{ "first row late", -EOPNOTSUPP, 2, -8, { .size = 8, .nr = 1,
	  .fre = { { 1, FRE_INFO(1, 1, 0), { 8 } } } } },
	{ "four offsets", -ENOEXEC, 2, -8, { .size = 8, .nr = 1,
	  .fre = { { 0, FRE_INFO(1, 4, 0), { 8, 1, 2, 3 } } } } },
	{ "offset width 3", -ENOEXEC, 2, -8, { .size = 8, .nr = 1,
	  .fre = { { 0, FRE_INFO(1, 1, 3), { 8 } } } } },
	{ "mangled ra", -EOPNOTSUPP, 2, -8, { .size = 8, .nr = 1,
	  .fre = { { 0, 0x80 | FRE_INFO(1, 1, 0), { 8 } } } } },
	{ "ra missing", -ENOEXEC, 2, 0, { .size = 8, .nr = 1,
	  .fre = { { 0, FRE_INFO(1, 1, 0), { 8 } } } } },
	{ "extra offset", -ENOEXEC, 2, -8, { .size = 8, .nr = 1,
	  .fre = { { 0, FRE_INFO(1, 3, 0), { 8, -16, 4 } } } } },
	{ "fp offset too far", -EOVERFLOW, 2, -8, { .size = 8, .nr = 1,
	  .fre = { { 0, FRE_INFO(1, 2, 2), { 8, -40000 } } } } },
	{ "outside the range", -ERANGE, 2, -8, { .start = -64, .size = 8,
	  .nr = 1, .fre = { { 0, FRE_INFO(1, 1, 0), { 8 } } } } },
};

TEST(import_sframe_refuses_malformed_sections, T_BOTH)
{
	struct test_backend tb;
	struct sframe_jit *reg;
	unsigned char sec[512];
	uint64_t code = arena(4096);
	unsigned int i;
	size_t len;
	int err;

	reg = registry(&tb, code, 4096, NULL);
	for (i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *b = &bad_cases[i];
		struct hfde f = b->f;

		/* A plain first row unless the case gives one. */
		if (!f.fre[0].info)
			f.fre[0] = (struct hfre) { 0, FRE_INFO(1, 1, 0), { 8 } };
		len = hsec(sec, b->version, 0, b->fixed_ra, &f, 1);
		if (b->spoil)
			b->spoil(sec, &len);
		err = sframe_jit_import_sframe(reg, sec, len, code);
		if (err != b->err)
			test_fail(__FILE__, __LINE__, "%s: %d, want %d",
				  b->what, err, b->err);
	}
	EXPECT_EQ(-EINVAL, sframe_jit_import_sframe(NULL, sec, len, code));
	EXPECT_EQ(-ENOEXEC, sframe_jit_import_sframe(reg, NULL, 0, code));
	{
		struct sframe_jit_info info = { .sz = sizeof(info) };

		EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
		EXPECT_EQ(0, info.nr_funcs);
		EXPECT_EQ(0, info.nr_rows_used);
	}
	sframe_jit_destroy(reg);
}

/* Random damage to gcc's section: an error or a valid table, never worse. */
TEST_TIMEOUT(import_survives_damaged_sections, T_MEM, 300)
{
	struct section sframe;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct object so;
	struct table t = { 0 };
	unsigned char *copy;
	uint64_t rng = 42, code = arena(1 << 20);
	char why[256];
	int i, k, err, ok = 0;

	object_open(&so, "fixture.so");
	ASSERT(section_find(&so, ".sframe", &sframe));
	copy = malloc(sframe.size);
	ASSERT(copy);
	reg = registry(&tb, code, 1 << 20, NULL);
	for (i = 0; i < 20000; i++) {
		memcpy(copy, sframe.data, sframe.size);
		for (k = rnd(&rng) % 4; k >= 0; k--)
			copy[rnd(&rng) % sframe.size] = rnd(&rng);
		err = sframe_jit_import_sframe(reg, copy,
					       sframe.size - rnd(&rng) % 2,
					       code + sframe.addr);
		if (err >= 0) {
			ok++;
		} else if (err != -ENOEXEC && err != -EOPNOTSUPP &&
			   err != -ERANGE && err != -EOVERFLOW &&
			   err != -EEXIST) {
			test_fail(__FILE__, __LINE__, "unexpected error %d", err);
			break;
		}
		table_read_stable(reg_hdr(&tb), &t);
		if (table_check(&t, why, sizeof(why))) {
			test_fail(__FILE__, __LINE__, "%s", why);
			break;
		}
		sframe_jit_remove_range(reg, code, code + (1 << 20));
	}
	test_log("%d of %d damaged sections imported", ok, i);
	table_free(&t);
	free(copy);
	sframe_jit_destroy(reg);
	object_close(&so);
}
