/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cross-check of the CFI conversion against libdw, shared by the
 * cfi_check program and the test suite (cfi_test.c): see cfi_xcheck.c.
 */
#ifndef SFRAME_JIT_TESTS_CFI_XCHECK_H
#define SFRAME_JIT_TESTS_CFI_XCHECK_H

#include <stdint.h>
#include <stdio.h>

#include "sframe_jit.h"

/**
 * struct xc_result - what the cross-check of one or more objects found
 * @objects: objects converted and checked.
 * @stats: the conversions' statistics, added up.
 * @nr_funcs: functions converted (the same as @stats.nr_converted).
 * @addrs: addresses checked.
 * @mismatches: addresses where the rows and libdw disagree.
 * @convert_ns: time spent in sframe_jit_cfi_convert().
 * @fde_diffs: FDEs the interpreter and the libdw path convert apart,
 *	by outcome or by rows (cfi_paths.c).
 * @nr_by_libdw: FDEs the interpreter left to libdw.
 * @libdw_ns: time spent converting with libdw alone.
 */
struct xc_result {
	uint64_t objects;
	struct sframe_jit_cfi_stats stats;
	uint64_t nr_funcs;
	uint64_t addrs;
	uint64_t mismatches;
	uint64_t convert_ns;
	uint64_t fde_diffs;
	uint64_t nr_by_libdw;
	uint64_t libdw_ns;
};

/**
 * xc_object() - convert one object, then check its rows against libdw
 * @path: the object's file.
 * @res: filled in for this object.
 * @log: where to print mismatches, or NULL.
 * @max_print: mismatches to print in full; the rest are only counted.
 *
 * Return: 0; the error of sframe_jit_cfi_convert(); -errno of reading
 * the file.
 */
int xc_object(const char *path, struct xc_result *res, FILE *log,
	      unsigned int max_print);

/**
 * xc_agent_ns() - time an object's conversion as sframe-agent makes it
 * @path: the object's file.
 *
 * The CFI converted with the .plt's stubs (SFRAME_JIT_CFI_F_PLT), then
 * written as an SFrame section (sframe_jit_cfi_encode()): what the
 * agent does with a file it has no cached table of.
 *
 * Return: the nanoseconds of both, or a negative errno.
 */
int64_t xc_agent_ns(const char *path);

/**
 * xc_paths() - convert one object both ways and compare, FDE by FDE
 * @path: the object's file, for the messages.
 * @image: its bytes.
 * @size: their number.
 * @res: its @fde_diffs, @nr_by_libdw and @libdw_ns are added to.
 * @log: where to print differences, or NULL.
 * @max_print: differences to print.
 *
 * Return: 0, or the error of a conversion.
 */
int xc_paths(const char *path, const void *image, size_t size,
	     struct xc_result *res, FILE *log, unsigned int max_print);

/* Add @one to @sum. */
void xc_add(struct xc_result *sum, const struct xc_result *one);

/* One line of counts, with the unsupported FDEs by reason. */
void xc_print(FILE *f, const char *what, const struct xc_result *res);

#endif /* SFRAME_JIT_TESTS_CFI_XCHECK_H */
