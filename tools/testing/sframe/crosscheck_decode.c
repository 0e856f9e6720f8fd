// SPDX-License-Identifier: GPL-2.0
/*
 * Cross-check of the kernel's SFrame decoder against GNU binutils'
 * libsframe over the .sframe sections of real programs built by gas and
 * ld with --gsframe.
 *
 *	crosscheck_decode [-v] [-n RANDOM] [-s SEED] ELF...
 *
 * -v prints every mismatch rather than the first few of each file.
 *
 * For each ELF file, the section PT_GNU_SFRAME maps (at its link-time
 * address) must
 *  - be accepted by both decoders, the kernel's validation included;
 *  - have the same descriptors (start, size, row count, row start width,
 *    PCMASK, repeat size) and, in each, the same rows (start offset, CFA
 *    base and offset, RA offset, FP saved and its offset);
 *  - give, in sframe_table_find() (the section converted as the kernel
 *    converts it) and in libsframe's sframe_find_fre(),
 *    the row the table says applies: at every row's first byte, at the
 *    byte before it, and at RANDOM random PCs around the text.
 *
 * The expected row of a lookup comes from the table as libsframe decoded
 * it: the last function starting at or below the PC, if the PC is inside
 * it, and its last row starting at or below the PC's offset.  Rows of a
 * PCMASK function (PLT stubs) repeat every 16 bytes, the AMD64 PLT entry
 * size: ours is checked at each row of every stub, against the table.
 * libsframe 2.40 is not asked there, nor past such a function's end
 * before the next function: its sframe_find_fre() compares PCMASK rows
 * in an 8-bit window of the absolute address (its own FIXME), which
 * gives the wrong row past the first stub, none when the function's end
 * wraps that window, and rows of the PLT in the .plt.got after it.
 *
 * Each file is one test case; the last line is "N passed, N failed".
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xcheck.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

/* AMD64 PLT entries, which version 1 PCMASK descriptors describe. */
#define XC_PLT_ENTRY	16
/* Mismatches printed per file; all are counted. */
#define XC_SHOW		10

struct xc_file {
	const char *name;
	void *map;
	size_t map_size;
	const void *sec;
	size_t sec_size;
	uint64_t base;
};

struct xc_table {
	uint32_t nfuncs;
	struct xc_func *funcs;
	struct xc_row **rows;	/* per function */
};

struct xc_stats {
	unsigned long rows;
	unsigned long row_lookups;
	unsigned long random_lookups;
	unsigned long random_hits;
	unsigned long pcmask_lib_skipped;
	unsigned long mismatches;
};

static bool verbose;
static unsigned long nrandom = 100000;
static uint64_t rng_state = 0x5f3759df;

static uint64_t xc_rand(void)
{
	/* xorshift64*: deterministic for a given -s. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void mismatch(const struct xc_file *f, struct xc_stats *st,
		     const char *fmt, ...)
{
	va_list ap;

	if (st->mismatches++ >= XC_SHOW && !verbose)
		return;
	printf("  %s: ", f->name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Map @path and find the section its PT_GNU_SFRAME segment covers. */
static int xc_file_open(struct xc_file *f, const char *path)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	struct stat sb;
	int fd, i;

	f->name = path;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &sb)) {
		printf("  %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	f->map_size = sb.st_size;
	f->map = mmap(NULL, f->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED) {
		printf("  %s: mmap: %s\n", path, strerror(errno));
		return -1;
	}
	eh = f->map;
	if (f->map_size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) > f->map_size) {
		printf("  %s: not a 64-bit ELF file\n", path);
		return -1;
	}
	ph = (const Elf64_Phdr *)((const char *)f->map + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_GNU_SFRAME)
			continue;
		if (ph[i].p_offset + ph[i].p_filesz > f->map_size)
			break;
		f->sec = (const char *)f->map + ph[i].p_offset;
		f->sec_size = ph[i].p_filesz;
		f->base = ph[i].p_vaddr;
		return 0;
	}
	printf("  %s: no PT_GNU_SFRAME segment\n", path);
	return -1;
}

static void xc_file_close(struct xc_file *f)
{
	if (f->map && f->map != MAP_FAILED)
		munmap(f->map, f->map_size);
}

static void xc_table_free(struct xc_table *t)
{
	uint32_t i;

	for (i = 0; t->rows && i < t->nfuncs; i++)
		free(t->rows[i]);
	free(t->rows);
	free(t->funcs);
}

/* The whole table as libsframe decodes it: the reference. */
static int xc_table_load(struct xc_table *t, const struct xc_lib *l)
{
	uint32_t i, r;

	t->nfuncs = xc_lib_num_funcs(l);
	t->funcs = calloc(t->nfuncs + 1, sizeof(*t->funcs));
	t->rows = calloc(t->nfuncs + 1, sizeof(*t->rows));
	if (!t->funcs || !t->rows)
		return -ENOMEM;
	for (i = 0; i < t->nfuncs; i++) {
		if (xc_lib_func(l, i, &t->funcs[i]))
			return -EINVAL;
		t->rows[i] = calloc(t->funcs[i].num_fres + 1,
				    sizeof(*t->rows[i]));
		if (!t->rows[i])
			return -ENOMEM;
		for (r = 0; r < t->funcs[i].num_fres; r++)
			if (xc_lib_row(l, i, r, &t->rows[i][r]))
				return -EINVAL;
	}
	return 0;
}

static bool same_rule(const struct xc_row *a, const struct xc_row *b)
{
	if (a->ra_undefined || b->ra_undefined)
		return a->ra_undefined == b->ra_undefined;
	return a->cfa_sp == b->cfa_sp && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_saved == b->fp_saved &&
	       (!a->fp_saved || a->fp_off == b->fp_off);
}

static const char *rule_str(const struct xc_row *r, char *buf, size_t len)
{
	if (r->ra_undefined)
		snprintf(buf, len, "ra-undefined");
	else if (r->fp_saved)
		snprintf(buf, len, "cfa=%s%+d ra=c%+d fp=c%+d",
			 r->cfa_sp ? "sp" : "fp", r->cfa_off, r->ra_off,
			 r->fp_off);
	else
		snprintf(buf, len, "cfa=%s%+d ra=c%+d fp=u",
			 r->cfa_sp ? "sp" : "fp", r->cfa_off, r->ra_off);
	return buf;
}

static const char *func_str(const struct xc_func *fn, char *buf, size_t len)
{
	snprintf(buf, len, "%#" PRIx64 "+%u rows %u type %u mask %d rep %u",
		 fn->start, fn->size, fn->num_fres, fn->fre_type, fn->pcmask,
		 fn->rep_size);
	return buf;
}

static void compare_funcs(const struct xc_file *f, const struct xc_ours *o,
			  const struct xc_table *t, struct xc_stats *st)
{
	char a[96], b[96];
	struct xc_func of;
	struct xc_row orow;
	uint32_t i, r;

	for (i = 0; i < t->nfuncs; i++) {
		const struct xc_func *lf = &t->funcs[i];

		if (xc_ours_func(o, i, &of)) {
			mismatch(f, st, "function %u: ours fails to decode", i);
			continue;
		}
		if (of.start != lf->start || of.size != lf->size ||
		    of.num_fres != lf->num_fres ||
		    of.fre_type != lf->fre_type || of.pcmask != lf->pcmask ||
		    of.rep_size != lf->rep_size) {
			mismatch(f, st, "function %u: ours %s, libsframe %s", i,
				 func_str(&of, a, sizeof(a)),
				 func_str(lf, b, sizeof(b)));
			continue;
		}
		for (r = 0; r < lf->num_fres; r++) {
			const struct xc_row *lr = &t->rows[i][r];

			st->rows++;
			if (xc_ours_row(o, i, r, &orow)) {
				mismatch(f, st, "function %u row %u: ours fails to decode",
					 i, r);
				continue;
			}
			if (orow.start != lr->start || !same_rule(&orow, lr))
				mismatch(f, st,
					 "function %u row %u: ours @%u %s, libsframe @%u %s",
					 i, r, orow.start,
					 rule_str(&orow, a, sizeof(a)),
					 lr->start, rule_str(lr, b, sizeof(b)));
		}
	}
}

/*
 * One lookup: ours must give the row @want (or nothing if @want is
 * NULL); libsframe too, and its function must be @func, unless
 * @check_lib is false.
 */
static void check_lookup(const struct xc_file *f, const struct xc_ours *o,
			 const struct xc_lib *l, uint64_t pc,
			 const struct xc_row *want, uint32_t func,
			 bool check_lib, struct xc_stats *st)
{
	char a[64], b[64];
	struct xc_row orow, lrow;
	uint32_t lfunc = UINT32_MAX;
	int ores, lres;

	ores = xc_ours_find(o, pc, &orow);
	if (ores < 0)
		mismatch(f, st, "pc %#" PRIx64 ": ours reports a malformed table", pc);
	else if (ores != !!want)
		mismatch(f, st, "pc %#" PRIx64 ": ours %s, table %s", pc,
			 ores ? "hit" : "none", want ? "hit" : "none");
	else if (want && !same_rule(&orow, want))
		mismatch(f, st, "pc %#" PRIx64 ": ours %s, table %s", pc,
			 rule_str(&orow, a, sizeof(a)),
			 rule_str(want, b, sizeof(b)));

	if (!check_lib) {
		st->pcmask_lib_skipped++;
		return;
	}
	lres = xc_lib_find(l, pc, &lrow, &lfunc);
	if (lres != !!want)
		mismatch(f, st, "pc %#" PRIx64 ": libsframe %s, table %s", pc,
			 lres ? "hit" : "none", want ? "hit" : "none");
	else if (want && (lfunc != func || lrow.start != want->start ||
			  !same_rule(&lrow, want)))
		mismatch(f, st,
			 "pc %#" PRIx64 ": libsframe function %u @%u %s, table function %u @%u %s",
			 pc, lfunc, lrow.start, rule_str(&lrow, a, sizeof(a)),
			 func, want->start, rule_str(want, b, sizeof(b)));
}

/* Lookups at each row's first byte and the byte before it. */
static void lookup_rows(const struct xc_file *f, const struct xc_ours *o,
			const struct xc_lib *l, const struct xc_table *t,
			struct xc_stats *st)
{
	uint32_t i, r, k, stubs;

	for (i = 0; i < t->nfuncs; i++) {
		const struct xc_func *fn = &t->funcs[i];
		const struct xc_row *rows = t->rows[i];

		if (fn->pcmask) {
			stubs = fn->size / XC_PLT_ENTRY;
			for (k = 0; k < stubs; k++)
				for (r = 0; r < fn->num_fres; r++) {
					check_lookup(f, o, l,
						     fn->start + k * XC_PLT_ENTRY + rows[r].start,
						     &rows[r], i, false, st);
					st->row_lookups++;
				}
			continue;
		}
		for (r = 0; r < fn->num_fres; r++) {
			check_lookup(f, o, l, fn->start + rows[r].start,
				     &rows[r], i, true, st);
			st->row_lookups++;
			if (!r)
				continue;
			check_lookup(f, o, l, fn->start + rows[r].start - 1,
				     &rows[r - 1], i, true, st);
			st->row_lookups++;
		}
	}
}

/*
 * The function a PC falls in: the last one starting at or below it,
 * if the PC is inside it.
 */
/* The number of functions starting at or below @pc. */
static uint32_t table_below(const struct xc_table *t, uint64_t pc)
{
	uint32_t lo = 0, hi = t->nfuncs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->funcs[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct xc_func *table_func(const struct xc_table *t, uint64_t pc,
					uint32_t *idx)
{
	uint32_t lo = table_below(t, pc);

	if (!lo || pc >= t->funcs[lo - 1].start + t->funcs[lo - 1].size)
		return NULL;
	*idx = lo - 1;
	return &t->funcs[lo - 1];
}

/*
 * Is @pc past the end of a PCMASK function, with no function after it
 * below @pc?  libsframe 2.40 is not asked there either: its 8-bit window
 * finds the PLT's rows in the bytes that follow it (.plt.got).
 */
static bool past_pcmask(const struct xc_table *t, uint64_t pc)
{
	uint32_t lo = table_below(t, pc);

	return lo && t->funcs[lo - 1].pcmask;
}

/* Lookups at random PCs from a little before the first function on. */
static void lookup_random(const struct xc_file *f, const struct xc_ours *o,
			  const struct xc_lib *l, const struct xc_table *t,
			  struct xc_stats *st)
{
	const struct xc_func *last = &t->funcs[t->nfuncs - 1];
	uint64_t lo = t->funcs[0].start, hi = last->start + last->size;
	const struct xc_func *fn;
	const struct xc_row *want;
	uint64_t pc, span;
	uint32_t i = 0, r;
	unsigned long n;

	lo = lo > 256 ? lo - 256 : 0;
	hi += 256;
	span = hi - lo;
	for (n = 0; n < nrandom; n++) {
		pc = lo + xc_rand() % span;
		fn = table_func(t, pc, &i);
		if (fn && fn->pcmask)
			continue;	/* see the head of this file */
		want = NULL;
		for (r = 0; fn && r < fn->num_fres; r++)
			if (t->rows[i][r].start <= pc - fn->start)
				want = &t->rows[i][r];
		st->random_lookups++;
		st->random_hits += !!want;
		check_lookup(f, o, l, pc, want, i, !past_pcmask(t, pc), st);
	}
}

static bool check_file(const char *path)
{
	struct xc_table t = {};
	struct xc_stats st = {};
	struct xc_file f = {};
	struct xc_ours *o = NULL;
	struct xc_lib *l = NULL;
	char err[128];
	int ret;
	bool ok = false, compared = false;

	if (xc_file_open(&f, path))
		goto out;
	ret = xc_ours_open(&o, f.sec, f.sec_size, f.base);
	if (ret) {
		printf("  %s: ours refuses the section: %s\n", path,
		       strerror(-ret));
		goto out;
	}
	if (xc_lib_open(&l, f.sec, f.sec_size, f.base, err, sizeof(err))) {
		printf("  %s: libsframe refuses the section: %s\n", path, err);
		goto out;
	}
	if (xc_table_load(&t, l)) {
		printf("  %s: libsframe fails to decode its table\n", path);
		goto out;
	}
	if (xc_ours_num_funcs(o) != t.nfuncs || !t.nfuncs) {
		printf("  %s: ours has %u functions, libsframe %u\n", path,
		       xc_ours_num_funcs(o), t.nfuncs);
		goto out;
	}
	compare_funcs(&f, o, &t, &st);
	lookup_rows(&f, o, l, &t, &st);
	lookup_random(&f, o, l, &t, &st);
	compared = true;
	ok = !st.mismatches;
	printf("%s %s: %u functions, %lu rows, ", ok ? "ok" : "FAIL", path,
	       t.nfuncs, st.rows);
	printf("%lu lookups at row edges (%lu in PLT stubs: ours only), ",
	       st.row_lookups, st.pcmask_lib_skipped);
	printf("%lu at random PCs (%lu hits): %lu mismatches\n",
	       st.random_lookups, st.random_hits, st.mismatches);
out:
	if (!compared)
		printf("FAIL %s\n", path);
	xc_table_free(&t);
	xc_lib_close(l);
	if (o)
		xc_ours_close(o);
	xc_file_close(&f);
	return ok;
}

int main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0;
	int opt, i;

	while ((opt = getopt(argc, argv, "vn:s:")) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		case 'n':
			nrandom = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) | 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-v] [-n RANDOM] [-s SEED] ELF...\n",
				argv[0]);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "%s: no ELF file given\n", argv[0]);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		if (check_file(argv[i]))
			passed++;
		else
			failed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
