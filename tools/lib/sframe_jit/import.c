// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Import of SFrame sections, versions 1 and 2, x86-64: the functions of
 * code that a JIT copied out of an object file into its code area, at
 * their new addresses.
 *
 * The section is untrusted input: every offset and count is checked
 * against the section's size before use, in 64-bit arithmetic, and the
 * work is bounded by the section's size.  The decoder is this file's
 * own, written from the SFrame specification; it shares no code with
 * the kernel's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_1		1
#define SFRAME_VERSION_2		2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3
#define SFRAME_HDR_SIZE			28
#define SFRAME_V1_FDE_SIZE		17
#define SFRAME_V2_FDE_SIZE		20

/* SFrame's CFA base register ids (the JIT registry's differ). */
#define SFRAME_BASE_REG_FP		0
#define SFRAME_BASE_REG_SP		1

/*
 * ld 2.40 describes each .plt with a version 1 PCMASK descriptor that
 * repeats every 16 bytes, the size of an x86-64 PLT entry; version 1
 * has no field for it.
 */
#define SFRAME_V1_PCMASK_REP		16

#ifndef R_X86_64_PC32
#define R_X86_64_PC32			2
#endif

static uint16_t get_le16(const unsigned char *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t get_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A parsed header. */
struct sframe_sec {
	const unsigned char *data;
	size_t size;
	uint8_t version;
	uint8_t flags;
	int8_t fixed_fp;
	int8_t fixed_ra;
	uint32_t num_fdes;
	uint32_t num_fres;
	uint64_t fde_start;
	uint32_t fde_size;
	uint64_t fre_start;
	uint32_t fre_len;
};

/* A descriptor, before its address is known. */
struct sframe_desc {
	uint64_t field_off;	/* of its func_start field in the section */
	int32_t start;
	uint32_t size;
	uint32_t fre_off;
	uint32_t num_fres;
	uint8_t fre_type;
	bool pcmask;
	uint8_t rep_size;
};

static bool sec_in(const struct sframe_sec *sec, uint64_t off, uint64_t len)
{
	return off <= sec->size && len <= sec->size - off;
}

static int sec_parse(struct sframe_sec *sec, const void *data, size_t size)
{
	const unsigned char *p = data;
	uint64_t hdr_end;

	if (!data || size < SFRAME_HDR_SIZE)
		return -ENOEXEC;
	if (get_le16(p) != SFRAME_MAGIC)
		return p[0] == (SFRAME_MAGIC >> 8) &&
		       p[1] == (SFRAME_MAGIC & 0xff) ? -EOPNOTSUPP : -ENOEXEC;
	if (p[2] != SFRAME_VERSION_1 && p[2] != SFRAME_VERSION_2)
		return -EOPNOTSUPP;
	if (p[4] != SFRAME_ABI_AMD64_ENDIAN_LITTLE)
		return -EOPNOTSUPP;

	sec->data = p;
	sec->size = size;
	sec->version = p[2];
	sec->flags = p[3];
	sec->fixed_fp = (int8_t)p[5];
	sec->fixed_ra = (int8_t)p[6];
	sec->num_fdes = get_le32(p + 8);
	sec->num_fres = get_le32(p + 12);
	sec->fre_len = get_le32(p + 16);
	sec->fde_size = sec->version == SFRAME_VERSION_1 ? SFRAME_V1_FDE_SIZE :
							   SFRAME_V2_FDE_SIZE;
	hdr_end = SFRAME_HDR_SIZE + (uint64_t)p[7];
	sec->fde_start = hdr_end + get_le32(p + 20);
	sec->fre_start = hdr_end + get_le32(p + 24);
	if (!sec_in(sec, sec->fde_start, (uint64_t)sec->num_fdes * sec->fde_size) ||
	    !sec_in(sec, sec->fre_start, sec->fre_len))
		return -ENOEXEC;
	/* A row takes at least two bytes: this bounds the allocations. */
	if (sec->num_fres > sec->fre_len / 2)
		return -ENOEXEC;
	return 0;
}

static int desc_get(const struct sframe_sec *sec, uint32_t i,
		    struct sframe_desc *d)
{
	const unsigned char *p;
	uint8_t info;

	d->field_off = sec->fde_start + (uint64_t)i * sec->fde_size;
	p = sec->data + d->field_off;
	info = p[16];
	d->start = (int32_t)get_le32(p);
	d->size = get_le32(p + 4);
	d->fre_off = get_le32(p + 8);
	d->num_fres = get_le32(p + 12);
	d->fre_type = info & 0xf;
	d->pcmask = (info >> 4) & 1;
	if (sec->version == SFRAME_VERSION_1)
		d->rep_size = d->pcmask ? SFRAME_V1_PCMASK_REP : 0;
	else
		d->rep_size = p[17];
	if (d->fre_type > 2 || !d->size || (d->pcmask && !d->rep_size))
		return -ENOEXEC;
	return 0;
}

static int32_t get_offset(const unsigned char *p, unsigned int size)
{
	if (size == 1)
		return (int8_t)p[0];
	if (size == 2)
		return (int16_t)get_le16(p);
	return (int32_t)get_le32(p);
}

static int fits_s16(int32_t v, int16_t *out)
{
	if (v < INT16_MIN || v > INT16_MAX)
		return -EOVERFLOW;
	*out = v;
	return 0;
}

/*
 * Convert one row: offsets are the CFA's, then the RA's unless the
 * header fixes it, then the FP's unless the header fixes it.  A row
 * without offsets marks the outermost frame.
 */
static int row_convert(const struct sframe_sec *sec, uint8_t info,
		       const int32_t *off, unsigned int n,
		       struct sframe_jit_row *row)
{
	unsigned int i = 1;
	int err;

	if (info & 0x80)
		return -EOPNOTSUPP;	/* mangled RA: not on x86-64 */
	if (!n) {
		row->cfa_base = SFRAME_JIT_ROW_CFA_SP;
		row->flags = SFRAME_JIT_ROW_RA_UNDEFINED;
		return 0;
	}
	row->cfa_base = (info & 1) == SFRAME_BASE_REG_SP ?
			SFRAME_JIT_ROW_CFA_SP : SFRAME_JIT_ROW_CFA_FP;
	row->cfa_off = off[0];
	if (sec->fixed_ra) {
		row->ra_off = sec->fixed_ra;
	} else {
		if (n <= i)
			return -ENOEXEC;
		err = fits_s16(off[i++], &row->ra_off);
		if (err)
			return err;
	}
	if (sec->fixed_fp) {
		row->fp_off = sec->fixed_fp;
		row->flags |= SFRAME_JIT_ROW_FP_SAVED;
	} else if (n > i) {
		err = fits_s16(off[i++], &row->fp_off);
		if (err)
			return err;
		row->flags |= SFRAME_JIT_ROW_FP_SAVED;
	}
	return n > i ? -ENOEXEC : 0;
}

/* Decode the rows of @d into @rows, checking them as the kernel does. */
static int rows_decode(const struct sframe_sec *sec,
		       const struct sframe_desc *d,
		       struct sframe_jit_row *rows)
{
	unsigned int addr_size = 1U << d->fre_type;
	uint64_t off = d->fre_off;
	uint32_t r, limit = d->pcmask ? d->rep_size : d->size;
	const unsigned char *p;
	int32_t offs[3];
	unsigned int n, osize, k;
	uint8_t info;
	int err;

	for (r = 0; r < d->num_fres; r++) {
		struct sframe_jit_row *row = &rows[r];

		if (off + addr_size + 1 > sec->fre_len)
			return -ENOEXEC;
		p = sec->data + sec->fre_start + off;
		memset(row, 0, sizeof(*row));
		row->start_off = addr_size == 1 ? p[0] :
				 addr_size == 2 ? get_le16(p) : get_le32(p);
		info = p[addr_size];
		n = (info >> 1) & 0xf;
		if (((info >> 5) & 3) > 2 || n > 3)
			return -ENOEXEC;
		osize = 1U << ((info >> 5) & 3);
		off += addr_size + 1;
		if (off + (uint64_t)n * osize > sec->fre_len)
			return -ENOEXEC;
		for (k = 0; k < n; k++)
			offs[k] = get_offset(sec->data + sec->fre_start + off +
					     k * osize, osize);
		off += n * osize;
		if ((r && row->start_off <= rows[r - 1].start_off) ||
		    row->start_off >= limit)
			return -ENOEXEC;
		/* A registry row cannot say "unknown" before the first. */
		if (!r && row->start_off)
			return -EOPNOTSUPP;
		err = row_convert(sec, info, offs, n, row);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Where a descriptor's function lives now: 1 with *addr set, 0 to leave
 * the function out, or a negative errno.
 */
typedef int (*place_fn)(void *ctx, uint32_t i, const struct sframe_desc *d,
			uint64_t *addr);

struct import {
	struct sframe_jit__func *funcs;
	struct sframe_jit_row *rows;
	uint32_t nr_funcs;
	uint32_t nr_rows;
};

static void import_free(struct import *im)
{
	free(im->funcs);
	free(im->rows);
}

static int import_collect(const struct sframe_sec *sec, place_fn place,
			  void *ctx, struct import *im)
{
	struct sframe_desc d;
	uint64_t rows = 0, addr;
	uint32_t i;
	int err;

	memset(im, 0, sizeof(*im));
	if (!sec->num_fdes)
		return 0;
	im->funcs = calloc(sec->num_fdes, sizeof(*im->funcs));
	im->rows = calloc(sec->num_fres ?: 1, sizeof(*im->rows));
	if (!im->funcs || !im->rows)
		return -ENOMEM;

	for (i = 0; i < sec->num_fdes; i++) {
		err = desc_get(sec, i, &d);
		if (err)
			return err;
		rows += d.num_fres;
		if (rows > sec->num_fres)
			return -ENOEXEC;
		err = place(ctx, i, &d, &addr);
		if (err < 0)
			return err;
		/* Without rows there is nothing to unwind with. */
		if (!err || !d.num_fres)
			continue;
		err = rows_decode(sec, &d, im->rows + im->nr_rows);
		if (err)
			return err;
		im->funcs[im->nr_funcs++] = (struct sframe_jit__func) {
			.start		= addr,
			.size		= d.size,
			.stub_size	= d.rep_size,
			.first_row	= im->nr_rows,
			.nr_rows	= d.num_fres,
		};
		im->nr_rows += d.num_fres;
	}
	return 0;
}

/* Function starts of a linked section: relative to it, or to the field. */
static uint64_t desc_addr(const struct sframe_sec *sec,
			  const struct sframe_desc *d, uint64_t sec_addr)
{
	uint64_t base = sec_addr;

	if (sec->version == SFRAME_VERSION_2 &&
	    (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL))
		base += d->field_off;
	return base + (int64_t)d->start;
}

struct bare_ctx {
	const struct sframe_sec *sec;
	uint64_t sframe_addr;
};

static int bare_place(void *ctx, uint32_t i, const struct sframe_desc *d,
		      uint64_t *addr)
{
	struct bare_ctx *c = ctx;

	(void)i;
	*addr = desc_addr(c->sec, d, c->sframe_addr);
	return 1;
}

int sframe_jit_import_sframe(struct sframe_jit *reg, const void *sframe,
			     size_t size, uint64_t sframe_addr)
{
	struct sframe_sec sec;
	struct bare_ctx ctx = { .sec = &sec, .sframe_addr = sframe_addr };
	struct import im;
	int err;

	if (!reg)
		return -EINVAL;
	err = sec_parse(&sec, sframe, size);
	if (err)
		return err;
	err = import_collect(&sec, bare_place, &ctx, &im);
	if (!err)
		err = sframe_jit__add_batch(reg, im.funcs, im.nr_funcs, im.rows);
	import_free(&im);
	return err;
}

/* ELF objects. */

/* What the importer knows of an object. */
struct elf_ctx {
	Elf *elf;
	GElf_Ehdr ehdr;
	const struct sframe_sec *sec;
	size_t sframe_ndx;
	GElf_Shdr sframe_shdr;
	size_t text_ndx;
	GElf_Shdr text_shdr;
	uint64_t text_addr;
	/* Relocatable objects: each function's offset in the text. */
	uint64_t *rel_off;
	uint8_t *rel_state;
};

enum { REL_NONE, REL_TEXT, REL_OTHER };

/* The symbol @r refers to, in its symbol table. */
static int rel_symbol(Elf *elf, const GElf_Shdr *rel_shdr, uint64_t sym_ndx,
		      GElf_Sym *sym)
{
	Elf_Scn *symscn = elf_getscn(elf, rel_shdr->sh_link);
	Elf_Data *data;

	if (!symscn)
		return -ENOEXEC;
	data = elf_getdata(symscn, NULL);
	if (!data || !gelf_getsym(data, sym_ndx, sym))
		return -ENOEXEC;
	return 0;
}

/*
 * Note one relocation of .sframe: the one of a func_start field gives the
 * function's place, as symbol plus addend (the field holds the function's
 * start relative to the field itself, hence PC-relative).
 */
static int rel_note(struct elf_ctx *c, const GElf_Shdr *rel_shdr,
		    uint64_t offset, uint64_t info, int64_t addend)
{
	const struct sframe_sec *sec = c->sec;
	uint64_t rel, i;
	GElf_Sym sym;
	int err;

	if (offset < sec->fde_start)
		return 0;
	rel = offset - sec->fde_start;
	if (rel % sec->fde_size || rel / sec->fde_size >= sec->num_fdes)
		return 0;
	i = rel / sec->fde_size;
	if (GELF_R_TYPE(info) != R_X86_64_PC32)
		return -EOPNOTSUPP;
	err = rel_symbol(c->elf, rel_shdr, GELF_R_SYM(info), &sym);
	if (err)
		return err;
	if (sym.st_shndx == SHN_UNDEF)
		return -ENOEXEC;
	if (sym.st_shndx != c->text_ndx) {
		c->rel_state[i] = REL_OTHER;
		return 0;
	}
	c->rel_state[i] = REL_TEXT;
	c->rel_off[i] = sym.st_value + addend;
	return 0;
}

static int rel_read(struct elf_ctx *c)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t k, n;
	int err;

	c->rel_off = calloc(c->sec->num_fdes ?: 1, sizeof(*c->rel_off));
	c->rel_state = calloc(c->sec->num_fdes ?: 1, sizeof(*c->rel_state));
	if (!c->rel_off || !c->rel_state)
		return -ENOMEM;
	while ((scn = elf_nextscn(c->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			return -ENOEXEC;
		if ((shdr.sh_type != SHT_RELA && shdr.sh_type != SHT_REL) ||
		    shdr.sh_info != c->sframe_ndx)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !shdr.sh_entsize)
			return -ENOEXEC;
		n = shdr.sh_size / shdr.sh_entsize;
		for (k = 0; k < n; k++) {
			GElf_Rela rela;
			GElf_Rel r;

			if (shdr.sh_type == SHT_RELA) {
				if (!gelf_getrela(data, k, &rela))
					return -ENOEXEC;
			} else {
				/* REL: the addend is in the field. */
				if (!gelf_getrel(data, k, &r) ||
				    !sec_in(c->sec, r.r_offset, 4))
					return -ENOEXEC;
				rela.r_offset = r.r_offset;
				rela.r_info = r.r_info;
				rela.r_addend = (int32_t)get_le32(c->sec->data +
								  r.r_offset);
			}
			err = rel_note(c, &shdr, rela.r_offset, rela.r_info,
				       rela.r_addend);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Map a function's offset in the copied text to where it lives now. */
static int text_place(struct elf_ctx *c, uint64_t off,
		      const struct sframe_desc *d, uint64_t *addr)
{
	if (off >= c->text_shdr.sh_size)
		return 0;
	if (d->size > c->text_shdr.sh_size - off)
		return -ENOEXEC;
	*addr = c->text_addr + off;
	return 1;
}

static int elf_place(void *ctx, uint32_t i, const struct sframe_desc *d,
		     uint64_t *addr)
{
	struct elf_ctx *c = ctx;
	uint64_t vaddr;

	if (c->ehdr.e_type == ET_REL) {
		if (c->rel_state[i] == REL_NONE)
			return -ENOEXEC;
		if (c->rel_state[i] == REL_OTHER)
			return 0;
		return text_place(c, c->rel_off[i], d, addr);
	}
	vaddr = desc_addr(c->sec, d, c->sframe_shdr.sh_addr);
	if (vaddr < c->text_shdr.sh_addr)
		return 0;
	return text_place(c, vaddr - c->text_shdr.sh_addr, d, addr);
}

/* A function symbol's offset in the copied text, for the perf map. */
struct sym_ent {
	uint64_t off;
	const char *name;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_ent *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static struct sym_ent *syms_read(struct elf_ctx *c, size_t *nr)
{
	struct sym_ent *syms = NULL, *s;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	size_t k, n, cnt = 0;
	GElf_Sym sym;
	const char *name;

	while ((scn = elf_nextscn(c->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB ||
		    !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		s = realloc(syms, (cnt + n) * sizeof(*syms));
		if (!s)
			break;
		syms = s;
		for (k = 0; k < n; k++) {
			if (!gelf_getsym(data, k, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx != c->text_ndx)
				continue;
			name = elf_strptr(c->elf, shdr.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			syms[cnt].off = sym.st_value;
			if (c->ehdr.e_type != ET_REL)
				syms[cnt].off -= c->text_shdr.sh_addr;
			syms[cnt++].name = name;
		}
	}
	if (syms)
		qsort(syms, cnt, sizeof(*syms), sym_cmp);
	*nr = cnt;
	return syms;
}

/* Give each function the name of a symbol at its start, if any. */
static void names_set(struct elf_ctx *c, struct import *im,
		      const struct sym_ent *syms, size_t nr)
{
	struct sym_ent key, *hit;
	uint32_t i;

	if (!nr)
		return;
	for (i = 0; i < im->nr_funcs; i++) {
		key.off = im->funcs[i].start - c->text_addr;
		hit = bsearch(&key, syms, nr, sizeof(*syms), sym_cmp);
		if (hit)
			im->funcs[i].name = hit->name;
	}
}

static int elf_open(struct elf_ctx *c, const void *image, size_t size,
		    const char *text)
{
	Elf_Scn *scn;
	int err;

	err = sframe_jit__elf_open(image, size, &c->elf, &c->ehdr);
	if (err)
		return err;
	if (!sframe_jit__elf_section(c->elf, text, &c->text_ndx,
				     &c->text_shdr) ||
	    c->text_shdr.sh_type != SHT_PROGBITS)
		return -ENOENT;
	scn = sframe_jit__elf_section(c->elf, ".sframe", &c->sframe_ndx,
				      &c->sframe_shdr);
	if (!scn)
		return -ENOENT;
	if (c->sframe_shdr.sh_type == SHT_NOBITS ||
	    c->sframe_shdr.sh_offset > size ||
	    c->sframe_shdr.sh_size > size - c->sframe_shdr.sh_offset)
		return -ENOEXEC;
	return 0;
}

int sframe_jit_import_elf(struct sframe_jit *reg, const void *image,
			  size_t size,
			  const struct sframe_jit_import_opts *opts)
{
	struct elf_ctx c = { 0 };
	struct sframe_sec sec;
	struct sym_ent *syms = NULL;
	struct import im = { 0 };
	size_t nr_syms = 0;
	const char *text;
	int err;

	if (!reg || !image || !opts)
		return -EINVAL;
	err = sframe_jit__check_opts(opts, opts->sz,
				     offsetof(struct sframe_jit_import_opts,
					      flags) + sizeof(opts->flags),
				     sizeof(*opts));
	if (err)
		return err;
	if (!opts->text_addr || (opts->flags & ~SFRAME_JIT_IMPORT_F_NO_NAMES))
		return -EINVAL;
	text = opts->text_section ?: ".text";
	c.text_addr = opts->text_addr;
	err = elf_open(&c, image, size, text);
	if (err)
		goto out;
	/* Section data straight from the image: no conversion for bytes. */
	err = sec_parse(&sec, (const unsigned char *)image +
			c.sframe_shdr.sh_offset, c.sframe_shdr.sh_size);
	if (err)
		goto out;
	c.sec = &sec;
	if (c.ehdr.e_type == ET_REL) {
		err = rel_read(&c);
		if (err)
			goto out;
	}
	err = import_collect(&sec, elf_place, &c, &im);
	if (err)
		goto out;
	if ((reg->flags & SFRAME_JIT_F_PERF_MAP) &&
	    !(opts->flags & SFRAME_JIT_IMPORT_F_NO_NAMES)) {
		syms = syms_read(&c, &nr_syms);
		names_set(&c, &im, syms, nr_syms);
	}
	err = sframe_jit__add_batch(reg, im.funcs, im.nr_funcs, im.rows);
out:
	free(syms);
	import_free(&im);
	free(c.rel_off);
	free(c.rel_state);
	if (c.elf)
		elf_end(c.elf);
	return err;
}
