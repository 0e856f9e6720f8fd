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
 */
struct xc_result {
	uint64_t objects;
	struct sframe_jit_cfi_stats stats;
	uint64_t nr_funcs;
	uint64_t addrs;
	uint64_t mismatches;
	uint64_t convert_ns;
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

/* Add @one to @sum. */
void xc_add(struct xc_result *sum, const struct xc_result *one);

/* One line of counts, with the unsupported FDEs by reason. */
void xc_print(FILE *f, const char *what, const struct xc_result *res);

#endif /* SFRAME_JIT_TESTS_CFI_XCHECK_H */
