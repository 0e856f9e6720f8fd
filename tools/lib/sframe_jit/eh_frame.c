// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The address ranges of the FDEs of an .eh_frame or .debug_frame
 * section, for the CFI conversion (cfi.c).
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
 * augmentation names if it names an absolute encoding.
 *
 * The section comes from a file: every read stays inside the entry it
 * belongs to, as libdw reports its bounds.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>

#include "sframe_jit_internal.h"

/* What an FDE needs of its CIE. */
struct cie_info {
	Dwarf_Off off;
	uint8_t fde_enc;
	bool ok;
};

struct fde_walk {
	const unsigned char *buf;
	uint64_t addr;
	bool debug_frame;
	struct cie_info *cies;
	uint32_t nr_cies;
	uint32_t cies_cap;
	struct sframe_jit__fde *fdes;
	uint32_t nr_fdes;
	uint32_t fdes_cap;
};

static bool read_fixed(const uint8_t **p, const uint8_t *end,
		       unsigned int bytes, bool sign, uint64_t *val)
{
	uint64_t v = 0;
	unsigned int i;

	if (end - *p < (ptrdiff_t)bytes)
		return false;
	for (i = 0; i < bytes; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	if (sign && bytes < 8 && (v >> (8 * bytes - 1)) & 1)
		v |= ~0ULL << (8 * bytes);
	*p += bytes;
	*val = v;
	return true;
}

static bool read_leb(const uint8_t **p, const uint8_t *end, bool sign,
		     uint64_t *val)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return false;
		b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~0ULL << shift;
	*val = v;
	return true;
}

/* A value in the format of @enc (its low four bits). */
static bool read_format(const uint8_t **p, const uint8_t *end, uint8_t enc,
			uint64_t *val)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return read_fixed(p, end, 8, false, val);
	case DW_EH_PE_udata2:
		return read_fixed(p, end, 2, false, val);
	case DW_EH_PE_sdata2:
		return read_fixed(p, end, 2, true, val);
	case DW_EH_PE_udata4:
		return read_fixed(p, end, 4, false, val);
	case DW_EH_PE_sdata4:
		return read_fixed(p, end, 4, true, val);
	case DW_EH_PE_uleb128:
		return read_leb(p, end, false, val);
	case DW_EH_PE_sleb128:
		return read_leb(p, end, true, val);
	default:
		return false;
	}
}

/*
 * An address encoded as @enc.  Text-, data- and function-relative and
 * aligned values need bases that .eh_frame on x86-64 does not use, and an
 * indirect one a read of the loaded image.
 */
static bool read_pointer(const struct fde_walk *w, const uint8_t **p,
			 const uint8_t *end, uint8_t enc, uint64_t *val)
{
	uint64_t field = w->addr + (uint64_t)(*p - w->buf);

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return false;
	if ((enc & 0x70) != DW_EH_PE_absptr &&
	    ((enc & 0x70) != DW_EH_PE_pcrel || w->debug_frame))
		return false;
	if (!read_format(p, end, enc, val))
		return false;
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		*val += field;
	return true;
}

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
			    !read_format(&p, end, penc, &skip))
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

static int cie_add(struct fde_walk *w, Dwarf_Off off, const Dwarf_CIE *cie)
{
	struct cie_info *c;
	int err;

	err = sframe_jit__grow((void **)&w->cies, &w->cies_cap, w->nr_cies,
			       sizeof(*c));
	if (err)
		return err;
	c = &w->cies[w->nr_cies++];
	c->off = off;
	c->ok = cie_fde_encoding(cie, &c->fde_enc);
	return 0;
}

/* CIEs come in the order of their offsets; an FDE's precedes it. */
static const struct cie_info *cie_find(const struct fde_walk *w,
				       Dwarf_Off off)
{
	uint32_t lo = 0, hi = w->nr_cies, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (w->cies[mid].off == off)
			return &w->cies[mid];
		if (w->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* An FDE, or with NULL @fde an entry libdw could not read. */
static int fde_add(struct fde_walk *w, const Dwarf_FDE *fde)
{
	const struct cie_info *cie = fde ? cie_find(w, fde->CIE_pointer) : NULL;
	struct sframe_jit__fde *f;
	const uint8_t *p;
	uint64_t lo, len;
	int err;

	err = sframe_jit__grow((void **)&w->fdes, &w->fdes_cap, w->nr_fdes,
			       sizeof(*f));
	if (err)
		return err;
	f = &w->fdes[w->nr_fdes++];
	*f = (struct sframe_jit__fde) { .malformed = true };
	if (!cie || !cie->ok)
		return 0;
	p = fde->start;
	if (!read_pointer(w, &p, fde->end, cie->fde_enc, &lo) ||
	    !read_format(&p, fde->end, cie->fde_enc, &len) ||
	    len > UINT64_MAX - lo)
		return 0;
	f->lo = lo;
	f->hi = lo + len;
	f->malformed = false;
	return 0;
}

/* The walk of either section; @w is set up but for what it collects. */
static int fdes_walk(struct fde_walk *w, size_t size,
		     struct sframe_jit__fde **fdesp, uint32_t *nr_fdesp)
{
	unsigned char ident[EI_NIDENT] = {
		[EI_CLASS]	= ELFCLASS64,
		[EI_DATA]	= ELFDATA2LSB,
	};
	Elf_Data data = {
		.d_buf	= (void *)w->buf,
		.d_type	= ELF_T_BYTE,
		.d_size	= size,
	};
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret, err = 0;

	while (!err) {
		next = (Dwarf_Off)-1;
		ret = dwarf_next_cfi(ident, &data, !w->debug_frame, off, &next,
				     &e);
		if (ret > 0)
			break;
		if (ret < 0)
			err = fde_add(w, NULL);
		else if (dwarf_cfi_cie_p(&e))
			err = cie_add(w, off, &e.cie);
		else
			err = fde_add(w, &e.fde);
		/* Entries do not overlap: each step moves forward or ends. */
		if (next == (Dwarf_Off)-1 || next <= off)
			break;
		off = next;
	}
	free(w->cies);
	if (err) {
		free(w->fdes);
		return err;
	}
	*fdesp = w->fdes;
	*nr_fdesp = w->nr_fdes;
	return 0;
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
 * Return: 0; -ENOMEM; -E2BIG past 2^31 entries.
 */
int sframe_jit__eh_frame_fdes(const void *buf, size_t size, uint64_t addr,
			      struct sframe_jit__fde **fdesp,
			      uint32_t *nr_fdesp)
{
	struct fde_walk w = { .buf = buf, .addr = addr };

	return fdes_walk(&w, size, fdesp, nr_fdesp);
}

/**
 * sframe_jit__debug_frame_fdes() - the FDEs of a .debug_frame section
 * @buf: the section's bytes.
 * @size: their number.
 * @fdesp: as for sframe_jit__eh_frame_fdes().
 * @nr_fdesp: likewise.
 *
 * As sframe_jit__eh_frame_fdes(), for the layout of .debug_frame: CIE
 * ids of all ones, CIE pointers from the section's start, and addresses
 * that must be absolute; an FDE whose CIE names a PC-relative encoding
 * is marked malformed.
 *
 * Return: as sframe_jit__eh_frame_fdes().
 */
int sframe_jit__debug_frame_fdes(const void *buf, size_t size,
				 struct sframe_jit__fde **fdesp,
				 uint32_t *nr_fdesp)
{
	struct fde_walk w = { .buf = buf, .debug_frame = true };

	return fdes_walk(&w, size, fdesp, nr_fdesp);
}
