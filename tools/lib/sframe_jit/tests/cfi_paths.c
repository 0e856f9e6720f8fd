// SPDX-License-Identifier: GPL-2.0
/*
 * The CFA interpreter (cfa.c) against the libdw path (cfi_libdw.c), FDE
 * by FDE: the same object converted both ways must leave out the same
 * FDEs for the same reasons and give every other FDE the same function,
 * row for row.  The libdw path is the one the sampled check of
 * cfi_xcheck.c has always held against libdw's own evaluation; this
 * check carries that over to every address of every FDE.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cfi_xcheck.h"
#include "sframe_jit_internal.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool rows_same(const struct sframe_jit_row *a,
		      const struct sframe_jit_row *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].start_off != b[i].start_off ||
		    a[i].cfa_base != b[i].cfa_base ||
		    a[i].cfa_off != b[i].cfa_off ||
		    a[i].ra_off != b[i].ra_off ||
		    a[i].fp_off != b[i].fp_off || a[i].flags != b[i].flags)
			return false;
	return true;
}

static const char *outcome_str(uint8_t o)
{
	return o == SFRAME_JIT__CFI_CONVERTED ? "converted" :
	       sframe_jit_cfi_reason_str(o) ?: "?";
}

/* The functions of both, in address order: the same, or the first not. */
static uint64_t funcs_diff(const char *path,
			   const struct sframe_jit_cfi *fast,
			   const struct sframe_jit_cfi *ref, FILE *log,
			   unsigned int max_print)
{
	uint32_t i, n = sframe_jit_cfi_nr_funcs(fast);
	const struct sframe_jit_row *fr, *rr;
	struct sframe_jit_func ff, rf;
	uint64_t diffs = 0;

	if (n != sframe_jit_cfi_nr_funcs(ref))
		return 1;
	for (i = 0; i < n; i++) {
		sframe_jit_cfi_func(fast, i, &ff, &fr);
		sframe_jit_cfi_func(ref, i, &rf, &rr);
		if (ff.start == rf.start && ff.size == rf.size &&
		    ff.nr_rows == rf.nr_rows && rows_same(fr, rr, ff.nr_rows))
			continue;
		if (log && diffs < max_print)
			fprintf(log, "PATHS %s: function %#llx: %u rows, libdw's %#llx %u rows\n",
				path, (unsigned long long)ff.start, ff.nr_rows,
				(unsigned long long)rf.start, rf.nr_rows);
		diffs++;
	}
	return diffs;
}

static uint64_t outcomes_diff(const char *path,
			      const struct sframe_jit_cfi *fast,
			      const struct sframe_jit_cfi *ref, FILE *log,
			      unsigned int max_print)
{
	const uint8_t *fo, *ro;
	uint32_t i, nf, nr;
	uint64_t diffs = 0;

	fo = sframe_jit__cfi_outcomes(fast, &nf);
	ro = sframe_jit__cfi_outcomes(ref, &nr);
	if (nf != nr)
		return 1;
	for (i = 0; i < nf; i++) {
		if (fo[i] == ro[i])
			continue;
		if (log && diffs < max_print)
			fprintf(log, "PATHS %s: FDE %u: %s, libdw's %s\n", path,
				i, outcome_str(fo[i]), outcome_str(ro[i]));
		diffs++;
	}
	return diffs;
}

int xc_paths(const char *path, const void *image, size_t size,
	     struct xc_result *res, FILE *log, unsigned int max_print)
{
	struct sframe_jit_cfi *fast, *ref;
	uint64_t t0;
	int err;

	err = sframe_jit__cfi_convert(image, size, SFRAME_JIT__CFI_OUTCOMES,
				      &fast);
	if (err < 0)
		return err;
	t0 = now_ns();
	err = sframe_jit__cfi_convert(image, size, SFRAME_JIT__CFI_LIBDW |
				      SFRAME_JIT__CFI_OUTCOMES, &ref);
	res->libdw_ns += now_ns() - t0;
	if (err < 0)
		goto out_fast;
	res->nr_by_libdw += sframe_jit__cfi_nr_by_libdw(fast);
	res->fde_diffs += outcomes_diff(path, fast, ref, log, max_print);
	res->fde_diffs += funcs_diff(path, fast, ref, log, max_print);
	sframe_jit_cfi_free(ref);
	err = 0;
out_fast:
	sframe_jit_cfi_free(fast);
	return err;
}
