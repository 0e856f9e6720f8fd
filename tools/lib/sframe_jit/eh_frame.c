// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CIEs and FDEs of an .eh_frame or .debug_frame section, for the
 * CFI conversion (cfi.c): each FDE's address range, and for the CFA
 * interpreter (cfa.c) where its instructions are and what it needs of
 * its CIE.
 *
 * libdw walks the entries (dwarf_next_cfi()) but hands an FDE back with
 * its initial location and address range still encoded, in the pointer
 * encoding its CIE's augmentation names ('R'), and has no call that
 * decodes them.  This file decodes what x86-64 linkers write there:
 * fixed-size or LEB128 values, absolute or relative to the field.  An FDE
 * in another encoding, or whose CIE libdw cannot read, is marked
 * malformed and the walk goes on; so does an entry libdw steps over.
 *
 * A .debug_frame section is not loaded, so nothing in it can be relative
 * to its own address: its addresses are absolute, in the CIE's address
 * size, which libdw holds to the ELF class (8 bytes here), or in what an
 * augmentation names if it names an absolute encoding.  libdw reads its
 * other layout (CIE ids of all ones, CIE pointers from the section's
 * start); the instructions are the same as .eh_frame's.
 *
 * The section comes from a file: every read stays inside the entry it
 * belongs to, as libdw reports its bounds.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_read.h"
#include "sframe_jit_internal.h"

/* Where a CIE is, to find an FDE's; ok when its FDE encoding is known. */
struct cie_info {
	Dwarf_Off off;
	uint8_t fde_enc;
	bool ok;
};

struct fde_walk {
	const unsigned char *buf;
	uint64_t addr;
	bool debug_frame;
	struct cie_info *infos;
	struct sframe_jit__cie *cies;
	uint32_t nr_cies;
	uint32_t cies_cap;
	uint32_t infos_cap;
	struct sframe_jit__fde *fdes;
	uint32_t nr_fdes;
	uint32_t fdes_cap;
	bool fdes_big;
};

/* The fewest bytes of an FDE with 4-byte addresses, as compilers write. */
#define FDE_MIN_SIZE	16

/*
 * The encoding of the FDEs' addresses, from the CIE's augmentation: its
 * 'R' letter, absolute without one.  Only a sized ('z') augmentation can
 * be stepped through to find it.
 */
static bool cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	const char *a = cie->augmentation;
	uint64_t skip;
	uint8_t penc;

	*enc = DW_EH_PE_absptr;
	if (!*a)
		return true;
	if (*a != 'z')
		return false;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p;
			return true;
		case 'L':
			if (p >= end)
				return false;
			p++;
			break;
		case 'P':
			if (p >= end)
				return false;
			penc = *p++;
			if ((penc & 0x70) == DW_EH_PE_aligned ||
			    !dw_read_format(&p, end, penc, &skip))
				return false;
			break;
		case 'S':
			break;
		default:
			return false;
		}
	}
	return true;
}

/*
 * What the CFA interpreter needs of a CIE.  It runs only CIEs whose
 * augmentation it can read whole (none, or sized), so that it knows
 * whether the frames are signal frames ('S') and how long an FDE's
 * augmentation data is; libdw reads the FDEs of the others.
 */
static void cie_interp(struct sframe_jit__cie *c, const Dwarf_CIE *cie,
		       const struct cie_info *info)
{
	const char *a = cie->augmentation;

	*c = (struct sframe_jit__cie) {
		.insns		= cie->initial_instructions,
		.insns_end	= cie->initial_instructions_end,
		.code_align	= cie->code_alignment_factor,
		.data_align	= cie->data_alignment_factor,
		.ra_reg		= cie->return_address_register,
		.fde_enc	= info->fde_enc,
		.sized		= *a == 'z',
		.signal		= !!strchr(a, 'S'),
	};
	c->usable = info->ok && (!*a || *a == 'z') &&
		    c->ra_reg <= INT32_MAX && c->insns <= c->insns_end;
}

static int cie_add(struct fde_walk *w, Dwarf_Off off, const Dwarf_CIE *cie)
{
	struct cie_info *info;
	int err;

	err = sframe_jit__grow((void **)&w->cies, &w->cies_cap, w->nr_cies,
			       sizeof(*w->cies));
	if (!err)
		err = sframe_jit__grow((void **)&w->infos, &w->infos_cap,
				       w->nr_cies, sizeof(*w->infos));
	if (err)
		return err;
	info = &w->infos[w->nr_cies];
	info->off = off;
	info->ok = cie_fde_encoding(cie, &info->fde_enc) &&
		   !(w->debug_frame &&
		     (info->fde_enc & 0x70) == DW_EH_PE_pcrel);
	cie_interp(&w->cies[w->nr_cies++], cie, info);
	return 0;
}

/* CIEs come in the order of their offsets; an FDE's precedes it. */
static int64_t cie_find(const struct fde_walk *w, Dwarf_Off off)
{
	uint32_t lo = 0, hi = w->nr_cies, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->infos[mid].off == off)
			return mid;
		if (w->infos[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/*
 * Where the FDE's instructions are, past its augmentation data, for the
 * interpreter: with none found, or a CIE it does not run, libdw reads
 * the FDE.
 */
static void fde_insns(struct sframe_jit__fde *f, const uint8_t *p,
		      const uint8_t *end, const struct sframe_jit__cie *cie,
		      uint32_t idx)
{
	uint64_t len;

	if (!cie->usable)
		return;
	if (cie->sized && (!dw_read_uleb(&p, end, &len) ||
			   len > (uint64_t)(end - p)))
		return;
	f->insns = cie->sized ? p + len : p;
	f->insns_end = end;
	f->cie = idx;
}

/* An FDE, or with NULL @fde an entry libdw could not read. */
static int fde_add(struct fde_walk *w, const Dwarf_FDE *fde)
{
	int64_t idx = fde ? cie_find(w, fde->CIE_pointer) : -1;
	const struct cie_info *cie = idx >= 0 ? &w->infos[idx] : NULL;
	struct sframe_jit__fde *f;
	const uint8_t *p;
	uint64_t lo, len;
	int err;

	err = sframe_jit__buf_grow((void **)&w->fdes, &w->fdes_cap,
				   w->nr_fdes, sizeof(*f), &w->fdes_big);
	if (err)
		return err;
	f = &w->fdes[w->nr_fdes++];
	*f = (struct sframe_jit__fde) {
		.malformed	= true,
		.cie		= SFRAME_JIT__NO_CIE,
	};
	if (!cie || !cie->ok)
		return 0;
	p = fde->start;
	if (!dw_read_pointer(&p, fde->end, cie->fde_enc,
			     w->addr + (uint64_t)(p - w->buf), &lo) ||
	    !dw_read_format(&p, fde->end, cie->fde_enc, &len) ||
	    len > UINT64_MAX - lo)
		return 0;
	f->lo = lo;
	f->hi = lo + len;
	f->malformed = false;
	fde_insns(f, p, fde->end, &w->cies[idx], idx);
	return 0;
}

/*
 * Room for as many FDEs as a section of @size bytes holds at most, as
 * compilers write them: an object's FDEs are reserved at once, in a
 * mapping if that is large (bigbuf.c), and the room never written costs
 * nothing.  Smaller entries make the array grow.
 */
static int fdes_reserve(struct fde_walk *w, size_t size)
{
	size_t n = size / FDE_MIN_SIZE + 1;

	if (n > UINT32_MAX / 2 ||
	    n * sizeof(*w->fdes) < SFRAME_JIT__BIG_MIN)
		return 0;
	w->fdes = sframe_jit__buf_alloc(n * sizeof(*w->fdes), &w->fdes_big);
	if (!w->fdes)
		return -ENOMEM;
	w->fdes_cap = n;
	return 0;
}

static void fdes_free(struct fde_walk *w)
{
	sframe_jit__buf_free(w->fdes, (size_t)w->fdes_cap * sizeof(*w->fdes),
			     w->fdes_big);
}

/* The walk of either section into @eh. */
static int frame_read(const void *buf, size_t size, uint64_t addr,
		      bool debug_frame, struct sframe_jit__eh_frame *eh)
{
	unsigned char ident[EI_NIDENT] = {
		[EI_CLASS]	= ELFCLASS64,
		[EI_DATA]	= ELFDATA2LSB,
	};
	Elf_Data data = {
		.d_buf	= (void *)buf,
		.d_type	= ELF_T_BYTE,
		.d_size	= size,
	};
	const struct sframe_jit__dw *dw = sframe_jit__dw();
	struct fde_walk w = {
		.buf		= buf,
		.addr		= addr,
		.debug_frame	= debug_frame,
	};
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret, err;

	if (!dw)
		return -ELIBACC;
	err = fdes_reserve(&w, size);
	while (!err) {
		next = (Dwarf_Off)-1;
		ret = dw->next_cfi(ident, &data, !debug_frame, off, &next, &e);
		if (ret > 0)
			break;
		if (ret < 0)
			err = fde_add(&w, NULL);
		else if (dwarf_cfi_cie_p(&e))
			err = cie_add(&w, off, &e.cie);
		else
			err = fde_add(&w, &e.fde);
		/* Entries do not overlap: each step moves forward or ends. */
		if (next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	free(w.infos);
	if (err) {
		free(w.cies);
		fdes_free(&w);
		return err;
	}
	*eh = (struct sframe_jit__eh_frame) {
		.buf		= buf,
		.addr		= addr,
		.cies		= w.cies,
		.nr_cies	= w.nr_cies,
		.fdes		= w.fdes,
		.nr_fdes	= w.nr_fdes,
		.fdes_cap	= w.fdes_cap,
		.fdes_big	= w.fdes_big,
	};
	return 0;
}

/**
 * sframe_jit__eh_frame_read() - the CIEs and FDEs of an .eh_frame section
 * @buf: the section's bytes; the result points into them.
 * @size: their number.
 * @addr: the section's address, the base of PC-relative values.
 * @eh: filled in on success, for sframe_jit__eh_frame_free(): the CIEs
 *	and the FDEs in section order, each FDE with its address range or
 *	marked malformed, and where the CFA interpreter can run it, its
 *	instructions and its CIE.
 *
 * An FDE whose CIE or addresses cannot be read is malformed, and so is
 * each entry libdw rejects but can step over.  The walk ends at the
 * section's end, at a terminator, or at an entry libdw cannot step over.
 *
 * Return: 0; -ENOMEM; -E2BIG past 2^31 entries; -ELIBACC without libdw.
 */
int sframe_jit__eh_frame_read(const void *buf, size_t size, uint64_t addr,
			      struct sframe_jit__eh_frame *eh)
{
	return frame_read(buf, size, addr, false, eh);
}

/**
 * sframe_jit__debug_frame_read() - the CIEs and FDEs of a .debug_frame
 * @buf: the section's bytes; the result points into them.
 * @size: their number.
 * @eh: as for sframe_jit__eh_frame_read().
 *
 * As sframe_jit__eh_frame_read(), for the layout of .debug_frame: CIE
 * ids of all ones, CIE pointers from the section's start, and addresses
 * that must be absolute; an FDE whose CIE names a PC-relative encoding
 * is marked malformed, and the interpreter does not run that CIE.
 *
 * Return: as sframe_jit__eh_frame_read().
 */
int sframe_jit__debug_frame_read(const void *buf, size_t size,
				 struct sframe_jit__eh_frame *eh)
{
	return frame_read(buf, size, 0, true, eh);
}

/**
 * sframe_jit__eh_frame_free() - free what sframe_jit__eh_frame_read() made
 * @eh: the section's entries.
 */
void sframe_jit__eh_frame_free(struct sframe_jit__eh_frame *eh)
{
	free(eh->cies);
	sframe_jit__buf_free(eh->fdes,
			     (size_t)eh->fdes_cap * sizeof(*eh->fdes),
			     eh->fdes_big);
	eh->cies = NULL;
	eh->fdes = NULL;
}

/**
 * sframe_jit__eh_frame_fdes() - the FDEs of an .eh_frame section
 * @buf: the section's bytes.
 * @size: their number.
 * @addr: the section's address, the base of PC-relative values.
 * @fdesp: on success, a malloc()ed array of the FDEs in section order,
 *	for free(); NULL with none.
 * @nr_fdesp: on success, their number.
 *
 * Each FDE gets its address range, or is marked malformed: an FDE whose
 * CIE or addresses cannot be read, and each entry libdw rejects but can
 * step over.  The walk ends at the section's end, at a terminator, or at
 * an entry libdw cannot step over.
 *
 * Return: 0; -ENOMEM; -E2BIG past 2^31 entries; -ELIBACC without libdw.
 */
int sframe_jit__eh_frame_fdes(const void *buf, size_t size, uint64_t addr,
			      struct sframe_jit__fde **fdesp,
			      uint32_t *nr_fdesp)
{
	struct sframe_jit__eh_frame eh;
	int err;

	err = sframe_jit__eh_frame_read(buf, size, addr, &eh);
	if (err)
		return err;
	*fdesp = eh.fdes;
	*nr_fdesp = eh.nr_fdes;
	if (eh.fdes_big) {
		/* A section of megabytes, from a JIT: rare, and copied. */
		*fdesp = malloc((size_t)(eh.nr_fdes ?: 1) * sizeof(*eh.fdes));
		if (*fdesp)
			memcpy(*fdesp, eh.fdes,
			       (size_t)eh.nr_fdes * sizeof(*eh.fdes));
		else
			err = -ENOMEM;
	} else {
		eh.fdes = NULL;
	}
	sframe_jit__eh_frame_free(&eh);
	return err;
}
