// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Raw .eh_frame as JITs hand it to __register_frame(): no ELF file
 * around it, only a pointer.  libgcc's __register_frame() takes the
 * start of a section, entries up to a zero terminator (LLVM's MCJIT and
 * ORC call it so on Linux); libunwind's takes one FDE, whose CIE lies
 * before it in the same section (LLVM with libunwind, and Apple).  The
 * first entry tells which: a CIE starts a section, an FDE stands alone.
 *
 * The entries are converted by the library's reading of raw .eh_frame
 * (sframe_jit_cfi_convert_eh_frame()), which an agent outside the
 * process uses on its copy of them too.  Documentation/sframe_jit.rst
 * ("sframe-run", "What JITs publish") gives the cost of that choice.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_run.h"

/*
 * Bytes a section walk reads at most: it trusts the lengths it meets
 * until a terminator, as libgcc does, and this bounds a walk through
 * memory that was never .eh_frame.
 */
#define BLOB_MAX		(64u << 20)

/* A length of all ones announces 64-bit DWARF, which libgcc lacks too. */
#define DWARF64_LEN		0xffffffffu

/* The entries a registration names. */
struct blob_extent {
	const uint8_t *start;
	size_t size;
	bool lone;
	uint32_t fde_index;
};

static uint32_t word(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Entries from @p to the terminator. */
static int section_extent(const uint8_t *p, struct blob_extent *x)
{
	int err = sframe_jit_eh_frame_extent(p, BLOB_MAX, &x->size);

	if (err == -EAGAIN)
		return -EOPNOTSUPP;
	if (!err)
		x->start = p;
	return err;
}

/*
 * A lone FDE and the entries from its CIE up to it: the CIE pointer is
 * the distance back from the field, and an image must hold both.  The
 * walk from the CIE has to land on the FDE, entry by entry; the FDEs it
 * passes are counted, to find this one among the converted functions.
 */
static int lone_extent(const uint8_t *fde, struct blob_extent *x)
{
	uint32_t len = word(fde), id = word(fde + 4);
	const uint8_t *p;
	uint32_t n = 0;

	if (len < 4 || len == DWARF64_LEN || id > BLOB_MAX ||
	    (uintptr_t)fde + 4 < id)
		return -ENOEXEC;
	p = fde + 4 - id;
	while (p < fde) {
		len = word(p);
		if (!len || len == DWARF64_LEN ||
		    (size_t)(fde - p) < 4 + (size_t)len)
			return -ENOEXEC;
		if (word(p + 4))
			n++;
		p += 4 + (size_t)len;
	}
	x->start = fde + 4 - id;
	x->size = (size_t)(fde - x->start) + 4 + word(fde);
	x->lone = true;
	x->fde_index = n;
	return 0;
}

static int blob_extent(const void *begin, struct blob_extent *x)
{
	const uint8_t *p = begin;

	memset(x, 0, sizeof(*x));
	if (!p || !word(p))
		return -ENOENT;
	if (word(p) == DWARF64_LEN)
		return -EOPNOTSUPP;
	if (!word(p + 4))
		return section_extent(p, x);
	return lone_extent(p, x);
}

/* A lone FDE's function, of all those between its CIE and it. */
static int lone_clip(const struct blob_extent *x, struct sframe_jit_cfi *cfi)
{
	struct sframe_jit__fde *fdes = NULL;
	uint32_t nr = 0;
	int err;

	err = sframe_jit__eh_frame_fdes(x->start, x->size, (uintptr_t)x->start,
					&fdes, &nr);
	if (err)
		return err;
	if (x->fde_index >= nr || fdes[x->fde_index].malformed)
		err = -ENOEXEC;
	else
		sframe_jit__cfi_clip(cfi, fdes[x->fde_index].lo,
				     fdes[x->fde_index].hi);
	free(fdes);
	return err;
}

static void cfi_range(const struct sframe_jit_cfi *cfi, uint64_t *startp,
		      uint64_t *endp)
{
	uint32_t nr = sframe_jit_cfi_nr_funcs(cfi);
	struct sframe_jit_func f;

	sframe_jit_cfi_func(cfi, 0, &f, NULL);
	*startp = f.start;
	sframe_jit_cfi_func(cfi, nr - 1, &f, NULL);
	*endp = f.start + f.size;
}

/**
 * sframe_run__blob_convert() - convert what a __register_frame() call names
 * @begin: its argument: the start of .eh_frame entries up to a zero
 *	terminator, or one FDE.
 * @cfip: the converted table on success, at the code's own addresses,
 *	for sframe_jit_cfi_free().
 * @startp: the lowest address of its functions.
 * @endp: the end of the highest.
 *
 * The memory at @begin must be readable as far as its entries say, as
 * it must be for libgcc and libunwind.
 *
 * Return: 0; -ENOENT when nothing converted; -ENOEXEC for a lone FDE
 * that its CIE does not lead to; -EOPNOTSUPP for 64-bit DWARF or an
 * extent past 64 MiB; -ENOMEM; the conversion's error.
 */
int sframe_run__blob_convert(const void *begin, struct sframe_jit_cfi **cfip,
			     uint64_t *startp, uint64_t *endp)
{
	struct sframe_jit_cfi *cfi = NULL;
	struct blob_extent x;
	int err;

	err = blob_extent(begin, &x);
	if (err)
		return err;
	err = sframe_jit_cfi_convert_eh_frame(x.start, x.size,
					      (uintptr_t)x.start, &cfi);
	if (err < 0)
		return err;
	err = x.lone ? lone_clip(&x, cfi) : 0;
	if (!err && !sframe_jit_cfi_nr_funcs(cfi))
		err = -ENOENT;
	if (err) {
		sframe_jit_cfi_free(cfi);
		return err;
	}
	cfi_range(cfi, startp, endp);
	*cfip = cfi;
	return 0;
}
