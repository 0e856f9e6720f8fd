// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Conversion of an x86-64 object's DWARF call frame information
 * (.eh_frame, or for a JIT's image .debug_frame) into the library's
 * functions and frame rows, for code that carries no .sframe: what
 * Debian 12 ships.
 *
 * libdw evaluates the CFA programs; this file only reads the rules it
 * reports at each point and keeps those a row can say.  An FDE becomes
 * one function if every point of it is expressible, and is otherwise
 * left out whole, counted by the first reason met: a function with rows
 * for part of its code would make the unwinder trust a row where it
 * should fall back to frame pointers.  What is expressible, and why the
 * rest is not, is in Documentation/sframe_jit.rst ("Converting DWARF
 * CFI").
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

/* DWARF register numbers of the x86-64 psABI. */
#define DWARF_RBP		6
#define DWARF_RSP		7
#define DWARF_RA		16

/* A call pushes the return address just below the CFA. */
#define X86_64_RA_OFF		(-8)

/*
 * States of one FDE beyond which it is left out ("range"): each state
 * costs a replay of the program up to it (see probe()), so this bounds
 * the work of one FDE to about 3 * 10^7 CFA instructions.  The most in
 * Debian 12's /usr/lib/x86_64-linux-gnu is 3320.
 */
#define MAX_STATES		8192

struct sframe_jit_cfi {
	struct sframe_jit__func *funcs;
	uint32_t nr_funcs;
	uint32_t funcs_cap;
	struct sframe_jit_row *rows;
	uint32_t nr_rows;
	uint32_t rows_cap;
	uint64_t nr_func_rows;
	uint64_t nr_fdes;
	uint64_t nr_unsupported[SFRAME_JIT_CFI_MAX_REASONS];
};

/*
 * A location rule that says "saved at CFA + *@off".  libdw states
 * DW_CFA_offset and its kin as DW_OP_call_frame_cfa followed, for a
 * non-zero offset, by DW_OP_plus_uconst of the offset even when it is
 * negative: the operand is its two's complement, added modulo 2^64.  An
 * expression rule (DW_CFA_expression) comes as the same operations when
 * its expression only adds a constant to the CFA, which libdw pushes
 * first, and means the same.  Value rules end in DW_OP_stack_value and
 * are not locations.
 */
static bool at_cfa(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (!nops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The CFA: DW_CFA_def_cfa and its kin come as DW_OP_bregx; an
 * expression (DW_CFA_def_cfa_expression) of one DW_OP_bregN is the
 * same value.  Stack realignment through a dynamic realignment
 * argument pointer (DRAP) puts the CFA in another register (r10 or r13
 * with GCC), then in an expression; under a frame pointer it needs
 * neither, and converts.
 */
static bool cfa_rule(Dwarf_Frame *frame, struct sframe_jit_row *row,
		     unsigned int *why)
{
	Dwarf_Op *ops;
	size_t nops;
	uint64_t reg;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) || !nops) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 &&
		   ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		*why = SFRAME_JIT_CFI_CFA_EXPR;
		return false;
	}
	if (reg != DWARF_RSP && reg != DWARF_RBP) {
		*why = SFRAME_JIT_CFI_CFA_REG;
		return false;
	}
	if (off < INT32_MIN || off > INT32_MAX) {
		*why = SFRAME_JIT_CFI_RANGE;
		return false;
	}
	row->cfa_base = reg == DWARF_RSP ? SFRAME_JIT_ROW_CFA_SP :
					   SFRAME_JIT_ROW_CFA_FP;
	row->cfa_off = off;
	return true;
}

/*
 * The return address, which is not undefined: at CFA - 8, which is what
 * a call leaves and what an SFrame section for x86-64 fixes.
 */
static bool ra_rule(const Dwarf_Op *ops, size_t nops,
		    struct sframe_jit_row *row, unsigned int *why)
{
	int64_t off;

	if (!at_cfa(ops, nops, &off) || off != X86_64_RA_OFF) {
		*why = SFRAME_JIT_CFI_RA_RULE;
		return false;
	}
	row->ra_off = off;
	return true;
}

/*
 * The caller's RBP: saved at CFA + offset, or not touched.  libdw starts
 * every x86-64 FDE from the psABI's state, in which RBP, callee-saved,
 * has the same value; "undefined" says the caller's value is lost, and a
 * row can only say it is still in RBP, as a frame pointer walk assumes.
 */
static bool rbp_rule(Dwarf_Frame *frame, struct sframe_jit_row *row,
		     unsigned int *why)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;

	if (dwarf_frame_register(frame, DWARF_RBP, mem, &ops, &nops)) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	if (!nops)
		return true;
	if (!at_cfa(ops, nops, &off)) {
		*why = SFRAME_JIT_CFI_RBP_RULE;
		return false;
	}
	if (off < INT16_MIN || off > INT16_MAX) {
		*why = SFRAME_JIT_CFI_RANGE;
		return false;
	}
	row->flags |= SFRAME_JIT_ROW_FP_SAVED;
	row->fp_off = off;
	return true;
}

/*
 * The row of one state, all but its start; or why there is none, the
 * CFA's reason before the return address's before RBP's.  An undefined
 * return address marks the outermost frame (_start, a new thread's
 * first function), where nothing else of the frame matters: the unwind
 * stops there.
 */
static bool frame_row(Dwarf_Frame *frame, struct sframe_jit_row *row,
		      unsigned int *why)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	memset(row, 0, sizeof(*row));
	if (dwarf_frame_register(frame, DWARF_RA, mem, &ops, &nops)) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	/* No operations and not NULL: "undefined". */
	if (!nops && ops) {
		row->cfa_base = SFRAME_JIT_ROW_CFA_SP;
		row->flags = SFRAME_JIT_ROW_RA_UNDEFINED;
		return true;
	}
	return cfa_rule(frame, row, why) && ra_rule(ops, nops, row, why) &&
	       rbp_rule(frame, row, why);
}

/*
 * The state of @fde at @addr as libdw computes it, and in *@end where
 * that state stops holding.
 *
 * dwarf_frame_info() reports the span [start, end) of the state: libdw
 * replays the FDE's program from its start, and start and end are the
 * locations its advances (DW_CFA_advance_loc*, DW_CFA_set_loc) reach on
 * either side of @addr, or the FDE's own bounds.  Only an advance starts
 * a new state, so no rule changes inside a span: probing at the FDE's
 * start, then at each span's end, visits every state once and skips
 * none, with one probe per advance.  Each probe replays the program
 * from the start, quadratic in the advances of one FDE; they are few
 * (libLLVM-14.so.1 has nine rows per function on average, and converts
 * in a fifth of a second), and a decoder of our own that stepped
 * through the program would be a second CFA interpreter to trust.
 *
 * A span that does not hold @addr, or that begins below the FDE, would
 * be another FDE's (which the overlap check rules out) or that of a
 * program that moves backwards: malformed.
 */
static bool probe(Dwarf_CFI *dw, const struct sframe_jit__fde *fde,
		  uint64_t addr, struct sframe_jit_row *row, uint64_t *end,
		  unsigned int *why)
{
	Dwarf_Addr start, stop;
	Dwarf_Frame *frame;
	bool signal, ok = false;
	int ra;

	if (dwarf_cfi_addrframe(dw, addr, &frame)) {
		*why = SFRAME_JIT_CFI_MALFORMED;
		return false;
	}
	ra = dwarf_frame_info(frame, &start, &stop, &signal);
	if (ra < 0 || start > addr || stop <= addr || start < fde->lo)
		*why = SFRAME_JIT_CFI_MALFORMED;
	else if (signal)
		*why = SFRAME_JIT_CFI_SIGNAL;
	else if (ra != DWARF_RA)
		*why = SFRAME_JIT_CFI_RA_RULE;
	else
		ok = frame_row(frame, row, why);
	free(frame);
	*end = stop < fde->hi ? stop : fde->hi;
	return ok;
}

static bool same_rules(const struct sframe_jit_row *a,
		       const struct sframe_jit_row *b)
{
	return a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->flags == b->flags;
}

/* Append a row of the function whose rows start at @first. */
static int row_push(struct sframe_jit_cfi *cfi, uint32_t first,
		    const struct sframe_jit_row *row)
{
	int err;

	if (cfi->nr_rows > first &&
	    same_rules(&cfi->rows[cfi->nr_rows - 1], row))
		return 0;
	err = sframe_jit__grow((void **)&cfi->rows, &cfi->rows_cap,
			       cfi->nr_rows, sizeof(*row));
	if (err)
		return err;
	cfi->rows[cfi->nr_rows++] = *row;
	return 0;
}

static int func_push(struct sframe_jit_cfi *cfi,
		     const struct sframe_jit__fde *fde, uint32_t first)
{
	int err;

	err = sframe_jit__grow((void **)&cfi->funcs, &cfi->funcs_cap,
			       cfi->nr_funcs, sizeof(*cfi->funcs));
	if (err)
		return err;
	cfi->funcs[cfi->nr_funcs++] = (struct sframe_jit__func) {
		.start		= fde->lo,
		.size		= fde->hi - fde->lo,
		.first_row	= first,
		.nr_rows	= cfi->nr_rows - first,
	};
	return 0;
}

/* Leave an FDE out: drop the rows it had so far and count why. */
static int left_out(struct sframe_jit_cfi *cfi, uint32_t first,
		    unsigned int why)
{
	cfi->nr_rows = first;
	cfi->nr_unsupported[why]++;
	return 0;
}

/* One FDE: a function, or a count of why not.  0 or -errno. */
static int fde_convert(struct sframe_jit_cfi *cfi, Dwarf_CFI *dw,
		       const struct sframe_jit__fde *fde)
{
	uint32_t first = cfi->nr_rows, states = 0;
	struct sframe_jit_row row;
	uint64_t addr, end;
	unsigned int why;
	int err;

	if (fde->malformed)
		return left_out(cfi, first, SFRAME_JIT_CFI_MALFORMED);
	if (fde->hi == fde->lo)
		return left_out(cfi, first, SFRAME_JIT_CFI_EMPTY);
	if (fde->overlap)
		return left_out(cfi, first, SFRAME_JIT_CFI_OVERLAP);
	if (fde->hi - fde->lo > UINT32_MAX)
		return left_out(cfi, first, SFRAME_JIT_CFI_RANGE);
	for (addr = fde->lo; addr < fde->hi; addr = end) {
		if (++states > MAX_STATES)
			return left_out(cfi, first, SFRAME_JIT_CFI_RANGE);
		if (!probe(dw, fde, addr, &row, &end, &why))
			return left_out(cfi, first, why);
		row.start_off = addr - fde->lo;
		err = row_push(cfi, first, &row);
		if (err)
			return err;
	}
	return func_push(cfi, fde, first);
}

static int fde_cmp(const void *a, const void *b)
{
	const struct sframe_jit__fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
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

/*
 * Where the FDEs come from, and the libdw handle that evaluates them:
 * dwarf_getcfi_elf() reads .eh_frame only; a .debug_frame needs a
 * Dwarf handle, which owns its CFI.
 */
struct cfi_src {
	Elf_Data *data;
	uint64_t addr;
	bool debug_frame;
	Dwarf *dwarf;
	Dwarf_CFI *dw;
};

/* A section of that name with its bytes in the image. */
static Elf_Scn *section_with_data(Elf *elf, const char *name,
				  GElf_Shdr *shdr)
{
	size_t ndx;
	Elf_Scn *scn = sframe_jit__elf_section(elf, name, &ndx, shdr);

	return scn && shdr->sh_type != SHT_NOBITS ? scn : NULL;
}

/*
 * The object's .eh_frame, or with @flags' SFRAME_JIT__CFI_DEBUG_FRAME
 * its .debug_frame where it has no .eh_frame.  A relocatable object's
 * addresses are not final (its FDEs all start at 0 before relocation),
 * and a separate debug file's .eh_frame is NOBITS.
 */
static int src_find(Elf *elf, const GElf_Ehdr *ehdr, unsigned int flags,
		    struct cfi_src *src)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (ehdr->e_type != ET_EXEC && ehdr->e_type != ET_DYN)
		return -EOPNOTSUPP;
	scn = section_with_data(elf, ".eh_frame", &shdr);
	if (!scn && (flags & SFRAME_JIT__CFI_DEBUG_FRAME)) {
		scn = section_with_data(elf, ".debug_frame", &shdr);
		src->debug_frame = true;
	}
	if (!scn)
		return -ENOENT;
	src->data = elf_getdata(scn, NULL);
	if (!src->data)
		return -ENOEXEC;
	src->addr = shdr.sh_addr;
	return 0;
}

static int fdes_read(const struct cfi_src *src,
		     struct sframe_jit__fde **fdesp, uint32_t *nrp)
{
	if (src->debug_frame)
		return sframe_jit__debug_frame_fdes(src->data->d_buf,
						    src->data->d_size,
						    fdesp, nrp);
	return sframe_jit__eh_frame_fdes(src->data->d_buf, src->data->d_size,
					 src->addr, fdesp, nrp);
}

static int src_open(Elf *elf, struct cfi_src *src)
{
	if (!src->debug_frame) {
		src->dw = dwarf_getcfi_elf(elf);
		return src->dw ? 0 : -ENOEXEC;
	}
	src->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (src->dwarf)
		src->dw = dwarf_getcfi(src->dwarf);
	return src->dw ? 0 : -ENOEXEC;
}

static void src_close(struct cfi_src *src)
{
	if (src->dwarf)
		dwarf_end(src->dwarf);
	else if (src->dw)
		dwarf_cfi_end(src->dw);
}

static int fdes_convert(struct sframe_jit_cfi *cfi, Elf *elf,
			struct cfi_src *src, struct sframe_jit__fde *fdes,
			uint32_t nr)
{
	uint32_t i;
	int err;

	if (!nr)
		return 0;
	err = src_open(elf, src);
	if (err)
		goto out;
	qsort(fdes, nr, sizeof(*fdes), fde_cmp);
	overlaps_mark(fdes, nr);
	for (i = 0; i < nr && !err; i++)
		err = fde_convert(cfi, src->dw, &fdes[i]);
out:
	src_close(src);
	return err;
}

/*
 * Functions of the same shape get the same rows: a registry with
 * SFRAME_JIT_F_SHARE_ROWS takes them as they are, and the table itself
 * shrinks as much.
 */
static int cfi_share(struct sframe_jit_cfi *cfi)
{
	cfi->nr_func_rows = cfi->nr_rows;
	return sframe_jit__share_rows(cfi->funcs, cfi->nr_funcs, &cfi->rows,
				      &cfi->nr_rows);
}

/**
 * sframe_jit__cfi_convert() - sframe_jit_cfi_convert() with a choice
 * @image: as for sframe_jit_cfi_convert().
 * @size: likewise.
 * @flags: SFRAME_JIT__CFI_DEBUG_FRAME to take the .debug_frame of an
 *	image without .eh_frame.
 * @cfip: as for sframe_jit_cfi_convert().
 *
 * Not every .debug_frame can be believed at every address: one that
 * GCC writes with -fno-asynchronous-unwind-tables is only exact at
 * calls.  So the objects of files keep to .eh_frame, and only a caller
 * that knows its source, a JIT that describes its code to a debugger
 * in a .debug_frame (QEMU's TCG), asks for the other section.
 *
 * Return: as sframe_jit_cfi_convert(); -ENOENT when the image has
 * neither section that @flags allows.
 */
int sframe_jit__cfi_convert(const void *image, size_t size,
			    unsigned int flags, struct sframe_jit_cfi **cfip)
{
	struct sframe_jit__fde *fdes = NULL;
	struct cfi_src src = { 0 };
	struct sframe_jit_cfi *cfi;
	uint32_t nr_fdes = 0;
	GElf_Ehdr ehdr;
	Elf *elf;
	int err;

	if (!image || !cfip)
		return -EINVAL;
	err = sframe_jit__elf_open(image, size, &elf, &ehdr);
	if (err)
		return err;
	err = src_find(elf, &ehdr, flags, &src);
	if (!err)
		err = fdes_read(&src, &fdes, &nr_fdes);
	if (err)
		goto out_elf;
	cfi = calloc(1, sizeof(*cfi));
	if (!cfi) {
		err = -ENOMEM;
		goto out_fdes;
	}
	cfi->nr_fdes = nr_fdes;
	err = fdes_convert(cfi, elf, &src, fdes, nr_fdes);
	if (!err)
		err = cfi_share(cfi);
	if (err) {
		sframe_jit_cfi_free(cfi);
		goto out_fdes;
	}
	*cfip = cfi;
	err = cfi->nr_funcs;
out_fdes:
	free(fdes);
out_elf:
	elf_end(elf);
	return err;
}

int sframe_jit_cfi_convert(const void *image, size_t size,
			   struct sframe_jit_cfi **cfip)
{
	return sframe_jit__cfi_convert(image, size, 0, cfip);
}

void sframe_jit_cfi_free(struct sframe_jit_cfi *cfi)
{
	if (!cfi)
		return;
	free(cfi->funcs);
	free(cfi->rows);
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
		.nr_rows	= f->nr_rows,
	};
	if (rowsp)
		*rowsp = cfi->rows + f->first_row;
	return 0;
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
	s.nr_converted = cfi->nr_funcs;
	for (i = 0; i < SFRAME_JIT_CFI_MAX_REASONS; i++)
		s.nr_unsupported[i] = cfi->nr_unsupported[i];
	s.nr_rows = cfi->nr_func_rows;
	s.row_bytes = cfi->nr_func_rows * sizeof(*cfi->rows);
	s.nr_shared_rows = cfi->nr_rows;
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
	if (reg->flags & SFRAME_JIT_F_SHARE_ROWS)
		err = sframe_jit__add_shared(reg, funcs, cfi->nr_funcs,
					     cfi->rows, cfi->nr_rows);
	else
		err = sframe_jit__add_batch(reg, funcs, cfi->nr_funcs,
					    cfi->rows);
	free(funcs);
	return err;
}
