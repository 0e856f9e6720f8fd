/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cross-check of the kernel's SFrame decoder against GNU binutils'
 * libsframe: both sides decode the same section into these neutral
 * records, each in its own translation unit, since the kernel's
 * "sframe_sec.h" and binutils' <sframe.h> define the same names.
 *
 * xcheck_ours.c decodes with kernel/unwind/sframe_sec.c, xcheck_lib.c with
 * libsframe; crosscheck_decode.c compares them.
 */
#ifndef _SFRAME_XCHECK_H
#define _SFRAME_XCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct xc_func - one function descriptor
 * @start: the function's address, with the section loaded at the base
 *	given when it was opened.
 * @size: bytes in the function.
 * @num_fres: rows of the function.
 * @fre_type: 0, 1 or 2: row start offsets of 1, 2 or 4 bytes.
 * @pcmask: rows repeat (PCMASK), as in PLT stubs.
 * @rep_size: repeat size of a PCMASK function, 0 in version 1.
 */
struct xc_func {
	uint64_t start;
	uint32_t size;
	uint32_t num_fres;
	uint8_t fre_type;
	bool pcmask;
	uint8_t rep_size;
};

/**
 * struct xc_row - one frame row, as the unwinder sees it
 * @start: offset of the row in its function (or repeat block).
 * @cfa_sp: the CFA is the stack pointer plus @cfa_off; else the frame
 *	pointer plus @cfa_off.
 * @ra_undefined: outermost frame; nothing else is set.
 * @fp_saved: the caller's frame pointer is at CFA + @fp_off.
 * @cfa_off: see @cfa_sp.
 * @ra_off: the return address is at CFA + @ra_off.
 * @fp_off: see @fp_saved.
 */
struct xc_row {
	uint32_t start;
	bool cfa_sp;
	bool ra_undefined;
	bool fp_saved;
	int32_t cfa_off;
	int32_t ra_off;
	int32_t fp_off;
};

/* Ours: kernel/unwind/sframe_sec.c.  0 or a negative errno. */
struct xc_ours;
int xc_ours_open(struct xc_ours **o, const void *data, size_t size,
		 uint64_t base);
void xc_ours_close(struct xc_ours *o);
uint32_t xc_ours_num_funcs(const struct xc_ours *o);
int xc_ours_func(const struct xc_ours *o, uint32_t i, struct xc_func *f);
int xc_ours_row(const struct xc_ours *o, uint32_t i, uint32_t r,
		struct xc_row *row);
/* 1 for a hit (@row filled, @row->start unknown), 0 if none, < 0 error. */
int xc_ours_find(const struct xc_ours *o, uint64_t pc, struct xc_row *row);

/* libsframe.  0 or a negative value, with a message in @err. */
struct xc_lib;
int xc_lib_open(struct xc_lib **l, const void *data, size_t size,
		uint64_t base, char *err, size_t errlen);
void xc_lib_close(struct xc_lib *l);
uint32_t xc_lib_num_funcs(const struct xc_lib *l);
int xc_lib_func(const struct xc_lib *l, uint32_t i, struct xc_func *f);
int xc_lib_row(const struct xc_lib *l, uint32_t i, uint32_t r,
	       struct xc_row *row);
/*
 * 1 for a hit: @row with its start, @func the index of the function that
 * holds it; 0 if libsframe finds nothing.
 */
int xc_lib_find(const struct xc_lib *l, uint64_t pc, struct xc_row *row,
		uint32_t *func);

#endif /* _SFRAME_XCHECK_H */
