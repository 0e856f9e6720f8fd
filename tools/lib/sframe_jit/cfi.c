// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Conversion of an x86-64 object's DWARF call frame information
 * (.eh_frame, or for a JIT's image .debug_frame) into the library's
 * functions and frame rows, for code that carries no .sframe: what
 * Debian 12 ships.
 *
 * The library's own CFA interpreter (cfa.c) runs each FDE's program in
 * one pass; what it cannot be sure of, it leaves to libdw (cfi_libdw.c),
 * whose rules at each point are the reference both follow.  An FDE
 * becomes one function if every point of it is expressible, and is
 * otherwise left out whole, counted by the first reason met: a function
 * with rows for part of its code would make the unwinder trust a row
 * where it should fall back to frame pointers.  What is expressible,
 * and why the rest is not, is in Documentation/sframe_jit.rst
 * ("Converting DWARF CFI").
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

struct sframe_jit_cfi {
	struct sframe_jit__func *funcs;
	uint32_t nr_funcs;
	uint32_t funcs_cap;
	bool funcs_big;
	struct sframe_jit__rows rows;
	uint64_t nr_func_rows;
	uint64_t nr_fdes;
	uint64_t nr_converted;
	uint64_t nr_unsupported[SFRAME_JIT_CFI_MAX_REASONS];
	uint64_t nr_by_libdw;
	uint8_t *outcomes;
	struct sframe_jit__row_rules rules;
	bool has_rules;
};

/*
 * One conversion: libdw's reading of the object is made on first need;
 * each function's rows are interned in @share as soon as they are made.
 * dwarf_getcfi_elf() reads .eh_frame only: a .debug_frame's CFI is read
 * through a Dwarf handle, @dwarf, which owns it.
 */
struct convert {
	struct sframe_jit_cfi *cfi;
	const struct sframe_jit__eh_frame *eh;
	Elf *elf;
	bool debug_frame;
	const struct sframe_jit__dw *dw;
	Dwarf *dwarf;
	Dwarf_CFI *dw_cfi;
	struct sframe_jit__cfa *cfa;
	struct sframe_jit__share *share;
	unsigned int how;
};

/*
 * A function over [@start, @start + @size) whose rows start at @first,
 * which are interned (and dropped if an equal sequence came before): its
 * first_row is the sequence's index until cfi_share() lays the sequences
 * out.  @stub for one whose rows repeat every @stub bytes.
 */
static int func_push(struct convert *c, uint64_t start, uint64_t size,
		     uint32_t stub, uint32_t first)
{
	struct sframe_jit_cfi *cfi = c->cfi;
	uint32_t nr = cfi->rows.nr - first;
	int64_t seq;
	int err;

	err = sframe_jit__buf_grow((void **)&cfi->funcs, &cfi->funcs_cap,
				   cfi->nr_funcs, sizeof(*cfi->funcs),
				   &cfi->funcs_big);
	if (err)
		return err;
	seq = sframe_jit__share_seq(c->share, &cfi->rows, first);
	if (seq < 0)
		return seq;
	cfi->nr_func_rows += nr;
	cfi->funcs[cfi->nr_funcs++] = (struct sframe_jit__func) {
		.start		= start,
		.size		= size,
		.stub_size	= stub,
		.first_row	= seq,
		.nr_rows	= nr,
	};
	return 0;
}

/* Rows of a function, appended from @first on. */
static int rows_append(struct sframe_jit__rows *r, uint32_t first,
		       const struct sframe_jit_row *rows, uint32_t nr)
{
	uint32_t i;
	int err = 0;

	for (i = 0; i < nr && !err; i++)
		err = sframe_jit__rows_push(r, first, &rows[i]);
	return err;
}

/*
 * The .plt's FDE, left out for its CFA expression: PLT0, and its entries
 * as stubs (plt.c).  SFRAME_JIT__FDE_LEFT_OUT if it is not the .plt's.
 */
static int plt_convert(struct convert *c, const struct sframe_jit__fde *fde)
{
	struct sframe_jit__rows *rows = &c->cfi->rows;
	struct sframe_jit__plt plt;
	uint32_t first = rows->nr;
	int err = 0;

	if (!c->eh || !sframe_jit__plt_fde(c->eh, fde, &plt))
		return SFRAME_JIT__FDE_LEFT_OUT;
	if (plt.nr_head) {
		err = rows_append(rows, first, plt.head, plt.nr_head);
		if (!err)
			err = func_push(c, fde->lo, plt.split - fde->lo, 0,
					first);
		first = rows->nr;
	}
	if (!err)
		err = rows_append(rows, first, plt.entry, plt.nr_entry);
	if (!err)
		err = func_push(c, plt.split, fde->hi - plt.split,
				SFRAME_JIT__PLT_ENTRY, first);
	return err ? err : SFRAME_JIT__FDE_ROWS;
}

/*
 * Room for the rows of @nr FDEs at once: libLLVM-14 keeps five distinct
 * rows per FDE, and growing by doubling would copy them over and over.
 * Pages of the room that are never written are never allocated.
 */
static int rows_reserve(struct sframe_jit__rows *r, uint32_t nr)
{
	return sframe_jit__rows_reserve(r, nr < UINT32_MAX / 8 ? nr * 8 :
							       UINT32_MAX / 2);
}

/* Room for a function per FDE, at once. */
static int funcs_reserve(struct sframe_jit_cfi *cfi, uint32_t nr)
{
	cfi->funcs = sframe_jit__buf_alloc((size_t)nr * sizeof(*cfi->funcs),
					   &cfi->funcs_big);
	if (!cfi->funcs)
		return -ENOMEM;
	cfi->funcs_cap = nr;
	return 0;
}

/* What leaves an FDE out before its program is looked at. */
static bool fde_unusable(const struct sframe_jit__fde *fde, unsigned int *why)
{
	if (fde->malformed)
		*why = SFRAME_JIT_CFI_MALFORMED;
	else if (fde->hi == fde->lo)
		*why = SFRAME_JIT_CFI_EMPTY;
	else if (fde->overlap)
		*why = SFRAME_JIT_CFI_OVERLAP;
	else if (fde->hi - fde->lo > UINT32_MAX)
		*why = SFRAME_JIT_CFI_RANGE;
	else
		return false;
	return true;
}

static int libdw_open(struct convert *c)
{
	c->dw = sframe_jit__dw();
	if (!c->dw)
		return -ELIBACC;
	if (!c->debug_frame) {
		c->dw_cfi = c->dw->getcfi_elf(c->elf);
		return c->dw_cfi ? 0 : -ENOEXEC;
	}
	c->dwarf = c->dw->begin_elf(c->elf, DWARF_C_READ, NULL);
	if (c->dwarf)
		c->dw_cfi = c->dw->getcfi(c->dwarf);
	return c->dw_cfi ? 0 : -ENOEXEC;
}

static void libdw_close(struct convert *c)
{
	if (c->dwarf)
		c->dw->end(c->dwarf);
	else if (c->dw_cfi)
		c->dw->cfi_end(c->dw_cfi);
}

static int by_libdw(struct convert *c, const struct sframe_jit__fde *fde,
		    unsigned int *why)
{
	int err;

	if (!c->dw_cfi) {
		err = libdw_open(c);
		if (err)
			return err;
	}
	c->cfi->nr_by_libdw++;
	return sframe_jit__libdw_fde(c->dw, c->dw_cfi, fde, &c->cfi->rows, why);
}

/*
 * One FDE: a function, or a count of why not.  The interpreter's unless
 * told otherwise, and libdw's for what the interpreter leaves to it.
 */
static int fde_convert(struct convert *c, const struct sframe_jit__fde *fde,
		       uint32_t idx)
{
	struct sframe_jit_cfi *cfi = c->cfi;
	uint32_t first = cfi->rows.nr;
	unsigned int why;
	int ret;

	if (fde_unusable(fde, &why))
		ret = SFRAME_JIT__FDE_LEFT_OUT;
	else if (c->how & SFRAME_JIT__CFI_LIBDW)
		ret = by_libdw(c, fde, &why);
	else
		ret = sframe_jit__cfa_fde(c->cfa, fde, &cfi->rows, &why);
	if (ret == SFRAME_JIT__FDE_DEFER)
		ret = by_libdw(c, fde, &why);
	if (ret < 0)
		return ret;
	if (ret == SFRAME_JIT__FDE_LEFT_OUT) {
		cfi->rows.nr = first;
		if (why == SFRAME_JIT_CFI_CFA_EXPR &&
		    (c->how & SFRAME_JIT__CFI_PLT)) {
			ret = plt_convert(c, fde);
			if (ret < 0)
				return ret;
		}
	} else {
		ret = func_push(c, fde->lo, fde->hi - fde->lo, 0, first);
		if (ret < 0)
			return ret;
		ret = SFRAME_JIT__FDE_ROWS;
	}
	if (ret == SFRAME_JIT__FDE_LEFT_OUT) {
		cfi->rows.nr = first;
		cfi->nr_unsupported[why]++;
	} else {
		why = SFRAME_JIT__CFI_CONVERTED;
		cfi->nr_converted++;
	}
	ret = 0;
	if (cfi->outcomes)
		cfi->outcomes[idx] = why;
	return ret;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct sframe_jit__fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* ld writes the FDEs of a link in address order, as a rule. */
static bool fdes_sorted(const struct sframe_jit__fde *f, uint32_t n)
{
	uint32_t i;

	for (i = 1; i < n; i++)
		if (fde_cmp(&f[i - 1], &f[i]) > 0)
			return false;
	return true;
}

static bool fde_counts(const struct sframe_jit__fde *f)
{
	return !f->malformed && f->hi > f->lo;
}

/*
 * Mark the FDEs, sorted by start, that share a byte with another: those
 * that start below the highest end before them, and those that end above
 * the lowest start after them.  A registry holds one function per
 * address, and libdw's lookup would find either FDE there.
 */
static void overlaps_mark(struct sframe_jit__fde *f, uint32_t n)
{
	uint64_t max_hi = 0, min_lo = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (!fde_counts(&f[i]))
			continue;
		if (f[i].lo < max_hi)
			f[i].overlap = true;
		if (f[i].hi > max_hi)
			max_hi = f[i].hi;
	}
	for (i = n; i-- > 0;) {
		if (!fde_counts(&f[i]))
			continue;
		if (f[i].hi > min_lo)
			f[i].overlap = true;
		if (f[i].lo < min_lo)
			min_lo = f[i].lo;
	}
}

/* A section of that name with its bytes in the image. */
static Elf_Scn *section_with_data(Elf *elf, const char *name,
				  GElf_Shdr *shdr)
{
	size_t ndx;
	Elf_Scn *scn = sframe_jit__elf_section(elf, name, &ndx, shdr);

	return scn && shdr->sh_type != SHT_NOBITS ? scn : NULL;
}

/*
 * The entries of the object's .eh_frame, or with SFRAME_JIT__CFI_DEBUG_FRAME
 * in @c's how those of its .debug_frame where it has no .eh_frame.  A
 * relocatable object's addresses are not final (its FDEs all start at 0
 * before relocation), and a separate debug file's .eh_frame is NOBITS.
 */
static int frames_get(struct convert *c, const GElf_Ehdr *ehdr,
		      struct sframe_jit__eh_frame *eh)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;

	if (ehdr->e_type != ET_EXEC && ehdr->e_type != ET_DYN)
		return -EOPNOTSUPP;
	scn = section_with_data(c->elf, ".eh_frame", &shdr);
	/*
	 * ld adds an empty .eh_frame to objects linked from code that has
	 * none: that says nothing, and .debug_frame may.
	 */
	if (scn && !shdr.sh_size)
		scn = NULL;
	if (!scn && (c->how & SFRAME_JIT__CFI_DEBUG_FRAME)) {
		scn = section_with_data(c->elf, ".debug_frame", &shdr);
		c->debug_frame = true;
	}
	if (!scn)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -ENOEXEC;
	if (c->debug_frame)
		return sframe_jit__debug_frame_read(data->d_buf, data->d_size,
						    eh);
	return sframe_jit__eh_frame_read(data->d_buf, data->d_size,
					 shdr.sh_addr, eh);
}

static int fdes_convert(struct convert *c, struct sframe_jit__eh_frame *eh)
{
	struct sframe_jit__fde *fdes = eh->fdes;
	uint32_t i, nr = eh->nr_fdes;
	int err = 0;

	if (!nr)
		return 0;
	if (c->how & SFRAME_JIT__CFI_OUTCOMES) {
		c->cfi->outcomes = malloc(nr);
		if (!c->cfi->outcomes)
			return -ENOMEM;
	}
	c->eh = eh;
	err = sframe_jit__cfa_new(eh, &c->cfa);
	if (err)
		return err;
	/* Functions repeat shapes: a third as many sequences, about. */
	err = sframe_jit__share_new(nr / 2, &c->share);
	if (err)
		goto out_cfa;
	err = rows_reserve(&c->cfi->rows, nr);
	if (!err)
		err = funcs_reserve(c->cfi, nr);
	if (err)
		goto out_cfa;
	if (!fdes_sorted(fdes, nr) && sframe_jit__fdes_sort(eh))
		qsort(fdes, nr, sizeof(*fdes), fde_cmp);
	fdes = eh->fdes;
	overlaps_mark(fdes, nr);
	for (i = 0; i < nr && !err; i++)
		err = fde_convert(c, &fdes[i], i);
	libdw_close(c);
out_cfa:
	sframe_jit__cfa_free(c->cfa);
	return err;
}

/*
 * Functions of the same shape get the same rows: a registry with
 * SFRAME_JIT_F_SHARE_ROWS takes them as they are, and the table itself
 * shrinks as much.
 */
static int cfi_share(struct convert *c)
{
	struct sframe_jit__rows *r = &c->cfi->rows;
	int err;

	err = sframe_jit__share_place(c->share, r, c->cfi->funcs,
				      c->cfi->nr_funcs);
	if (err)
		return err;
	sframe_jit__rows_trim(r);
	return 0;
}

/**
 * sframe_jit__cfi_convert() - sframe_jit_cfi_convert(), with a choice
 * @image: as for sframe_jit_cfi_convert().
 * @size: as for sframe_jit_cfi_convert().
 * @how: SFRAME_JIT__CFI_* bits: every FDE by libdw rather than by the
 *	interpreter, for the cross-check; keep each FDE's outcome, for
 *	sframe_jit__cfi_outcomes(); take the .debug_frame of an image
 *	without .eh_frame.
 * @cfip: as for sframe_jit_cfi_convert().
 *
 * Not every .debug_frame can be believed at every address: one that
 * GCC writes with -fno-asynchronous-unwind-tables is only exact at
 * calls.  So the objects of files keep to .eh_frame, and only a caller
 * that knows its source, a JIT that describes its code to a debugger
 * in a .debug_frame (QEMU's TCG), asks for the other section.
 *
 * Return: as for sframe_jit_cfi_convert(); -ENOENT when the image has
 * neither section that @how allows.
 */
int sframe_jit__cfi_convert(const void *image, size_t size, unsigned int how,
			    struct sframe_jit_cfi **cfip)
{
	struct sframe_jit__eh_frame eh = { 0 };
	struct convert c = { .how = how };
	GElf_Ehdr ehdr;
	int err;

	if (!image || !cfip)
		return -EINVAL;
	err = sframe_jit__elf_open(image, size, &c.elf, &ehdr);
	if (err)
		return err;
	err = frames_get(&c, &ehdr, &eh);
	if (err)
		goto out_elf;
	c.cfi = calloc(1, sizeof(*c.cfi));
	if (!c.cfi) {
		err = -ENOMEM;
		goto out_eh;
	}
	c.cfi->nr_fdes = eh.nr_fdes;
	err = fdes_convert(&c, &eh);
	if (!err && c.share)
		err = cfi_share(&c);
	sframe_jit__share_free(c.share);
	if (err) {
		sframe_jit_cfi_free(c.cfi);
		goto out_eh;
	}
	*cfip = c.cfi;
	err = c.cfi->nr_funcs;
out_eh:
	sframe_jit__eh_frame_free(&eh);
out_elf:
	elf_end(c.elf);
	return err;
}

int sframe_jit_cfi_convert(const void *image, size_t size,
			   struct sframe_jit_cfi **cfip)
{
	return sframe_jit__cfi_convert(image, size, 0, cfip);
}

/**
 * sframe_jit_cfi_convert_flags() - sframe_jit_cfi_convert(), with flags
 * @image: as for sframe_jit_cfi_convert().
 * @size: bytes at @image.
 * @flags: SFRAME_JIT_CFI_F_* bits.
 * @cfip: as for sframe_jit_cfi_convert().
 *
 * Return: as sframe_jit_cfi_convert(); -EINVAL for an unknown flag.
 */
int sframe_jit_cfi_convert_flags(const void *image, size_t size,
				 unsigned int flags,
				 struct sframe_jit_cfi **cfip)
{
	unsigned int how = 0;

	if (flags & ~(SFRAME_JIT_CFI_F_DEBUG_FRAME | SFRAME_JIT_CFI_F_PLT))
		return -EINVAL;
	if (flags & SFRAME_JIT_CFI_F_DEBUG_FRAME)
		how |= SFRAME_JIT__CFI_DEBUG_FRAME;
	if (flags & SFRAME_JIT_CFI_F_PLT)
		how |= SFRAME_JIT__CFI_PLT;
	return sframe_jit__cfi_convert(image, size, how, cfip);
}

/**
 * sframe_jit__cfi_outcomes() - what became of each FDE
 * @cfi: a table converted with SFRAME_JIT__CFI_OUTCOMES.
 * @nrp: set to the number of FDEs.
 *
 * Return: for each FDE in address order, its SFRAME_JIT_CFI_* reason or
 * SFRAME_JIT__CFI_CONVERTED; NULL without SFRAME_JIT__CFI_OUTCOMES.
 */
const uint8_t *sframe_jit__cfi_outcomes(const struct sframe_jit_cfi *cfi,
					uint32_t *nrp)
{
	*nrp = cfi->nr_fdes;
	return cfi->outcomes;
}

/**
 * sframe_jit__cfi_nr_by_libdw() - FDEs the interpreter left to libdw
 * @cfi: the table.
 *
 * Return: the FDEs converted by libdw, all of them with
 * SFRAME_JIT__CFI_LIBDW.
 */
uint64_t sframe_jit__cfi_nr_by_libdw(const struct sframe_jit_cfi *cfi)
{
	return cfi->nr_by_libdw;
}

void sframe_jit_cfi_free(struct sframe_jit_cfi *cfi)
{
	if (!cfi)
		return;
	sframe_jit__buf_free(cfi->funcs,
			     (size_t)cfi->funcs_cap * sizeof(*cfi->funcs),
			     cfi->funcs_big);
	sframe_jit__rows_free(&cfi->rows);
	free(cfi->outcomes);
	sframe_jit__row_rules_free(&cfi->rules);
	free(cfi);
}

uint32_t sframe_jit_cfi_nr_funcs(const struct sframe_jit_cfi *cfi)
{
	return cfi ? cfi->nr_funcs : 0;
}

int sframe_jit_cfi_func(const struct sframe_jit_cfi *cfi, uint32_t idx,
			struct sframe_jit_func *func,
			const struct sframe_jit_row **rowsp)
{
	const struct sframe_jit__func *f;

	if (!cfi || !func)
		return -EINVAL;
	if (idx >= cfi->nr_funcs)
		return -ENOENT;
	f = &cfi->funcs[idx];
	*func = (struct sframe_jit_func) {
		.start		= f->start,
		.size		= f->size,
		.stub_size	= f->stub_size,
		.nr_rows	= f->nr_rows,
	};
	if (rowsp)
		*rowsp = cfi->rows.rows + f->first_row;
	return 0;
}

/**
 * sframe_jit__cfi_table() - the functions and rows of a converted table
 * @cfi: the table.
 * @nr_funcs: set to the number of functions.
 * @rows: set to the rows that the functions' first_row index.
 *
 * For the SFrame encoder (sframe_write.c), which takes functions and
 * rows as the registry's batch calls do.
 *
 * Return: the functions, in address order; NULL when there are none.
 */
const struct sframe_jit__func *
sframe_jit__cfi_table(const struct sframe_jit_cfi *cfi, uint32_t *nr_funcs,
		      const struct sframe_jit_row **rows)
{
	*nr_funcs = cfi->nr_funcs;
	*rows = cfi->rows.rows;
	return cfi->nr_funcs ? cfi->funcs : NULL;
}

int sframe_jit_cfi_get_stats(const struct sframe_jit_cfi *cfi,
			     struct sframe_jit_cfi_stats *stats)
{
	struct sframe_jit_cfi_stats s = { .sz = sizeof(s) };
	size_t sz;
	unsigned int i;

	if (!cfi || !stats ||
	    stats->sz < offsetof(struct sframe_jit_cfi_stats, row_bytes) +
			sizeof(stats->row_bytes))
		return -EINVAL;
	sz = stats->sz < sizeof(s) ? stats->sz : sizeof(s);
	s.nr_fdes = cfi->nr_fdes;
	s.nr_converted = cfi->nr_converted;
	for (i = 0; i < SFRAME_JIT_CFI_MAX_REASONS; i++)
		s.nr_unsupported[i] = cfi->nr_unsupported[i];
	s.nr_rows = cfi->nr_func_rows;
	s.row_bytes = cfi->nr_func_rows * sizeof(*cfi->rows.rows);
	s.nr_shared_rows = cfi->rows.nr;
	s.sz = stats->sz;
	memcpy(stats, &s, sz);
	return 0;
}

static const char *const reason_names[SFRAME_JIT_CFI_NR_REASONS] = {
	[SFRAME_JIT_CFI_EMPTY]		= "empty",
	[SFRAME_JIT_CFI_MALFORMED]	= "malformed",
	[SFRAME_JIT_CFI_OVERLAP]	= "overlap",
	[SFRAME_JIT_CFI_SIGNAL]		= "signal",
	[SFRAME_JIT_CFI_CFA_EXPR]	= "cfa_expr",
	[SFRAME_JIT_CFI_CFA_REG]	= "cfa_reg",
	[SFRAME_JIT_CFI_RA_RULE]	= "ra_rule",
	[SFRAME_JIT_CFI_RBP_RULE]	= "rbp_rule",
	[SFRAME_JIT_CFI_RANGE]		= "range",
};

const char *sframe_jit_cfi_reason_str(unsigned int reason)
{
	return reason < SFRAME_JIT_CFI_NR_REASONS ? reason_names[reason] : NULL;
}

/**
 * sframe_jit__cfi_clip() - keep one FDE's function of a converted table
 * @cfi: the table.
 * @lo: the FDE's first address.
 * @hi: its end.
 *
 * For a table converted from more FDEs than a caller asked for (the
 * entries between a lone FDE and its CIE): the counts become those of
 * one FDE, and the rows of the others stay, unused.
 */
void sframe_jit__cfi_clip(struct sframe_jit_cfi *cfi, uint64_t lo,
			  uint64_t hi)
{
	uint32_t i, n = 0;

	cfi->nr_func_rows = 0;
	for (i = 0; i < cfi->nr_funcs; i++) {
		if (cfi->funcs[i].start < lo ||
		    cfi->funcs[i].start + cfi->funcs[i].size > hi)
			continue;
		cfi->nr_func_rows += cfi->funcs[i].nr_rows;
		cfi->funcs[n++] = cfi->funcs[i];
	}
	cfi->nr_funcs = n;
	cfi->nr_fdes = 1;
	memset(cfi->nr_unsupported, 0, sizeof(cfi->nr_unsupported));
}

int sframe_jit_import_cfi(struct sframe_jit *reg,
			  const struct sframe_jit_cfi *cfi, uint64_t load_bias)
{
	struct sframe_jit__func *funcs;
	uint32_t i;
	int err;

	if (!reg || !cfi)
		return -EINVAL;
	if (!cfi->nr_funcs)
		return 0;
	funcs = malloc((size_t)cfi->nr_funcs * sizeof(*funcs));
	if (!funcs)
		return -ENOMEM;
	for (i = 0; i < cfi->nr_funcs; i++) {
		funcs[i] = cfi->funcs[i];
		funcs[i].start += load_bias;
	}
	if (reg->l.compact)
		err = sframe_jit__add_compact(reg, funcs, cfi->nr_funcs,
					      cfi->rows.rows, cfi->rows.nr,
					      cfi->has_rules ? &cfi->rules :
							       NULL);
	else if (reg->flags & SFRAME_JIT_F_SHARE_ROWS)
		err = sframe_jit__add_shared(reg, funcs, cfi->nr_funcs,
					     cfi->rows.rows, cfi->rows.nr);
	else
		err = sframe_jit__add_batch(reg, funcs, cfi->nr_funcs,
					    cfi->rows.rows);
	free(funcs);
	return err;
}

int sframe_jit_cfi_compact_caps(struct sframe_jit_cfi *cfi,
				struct sframe_jit_opts *opts)
{
	struct sframe_jit__compact_caps caps;
	int err;

	if (!cfi || !opts ||
	    opts->sz < offsetof(struct sframe_jit_opts, rule_capacity) +
		       sizeof(opts->rule_capacity))
		return -EINVAL;
	/* The rules found are kept, for sframe_jit_import_cfi(). */
	sframe_jit__row_rules_free(&cfi->rules);
	cfi->has_rules = false;
	err = sframe_jit__compact_caps(cfi->funcs, cfi->nr_funcs,
				       cfi->rows.rows, cfi->rows.nr, &caps,
				       &cfi->rules);
	if (err)
		return err;
	cfi->has_rules = true;
	if (caps.nr_fdes > SFRAME_JIT_MAX_FDES ||
	    caps.nr_rows > SFRAME_JIT_MAX_FRES)
		return -ENOSPC;
	/* An empty table still makes a registry of one of each. */
	opts->fde_capacity = caps.nr_fdes ?: 1;
	opts->fre_capacity = caps.nr_rows ?: 1;
	opts->rule_capacity = caps.nr_rules ?: 1;
	return 0;
}
