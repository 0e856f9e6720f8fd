// SPDX-License-Identifier: GPL-2.0
/*
 * Lookup cost of the kernel's SFrame decoder as the number of functions
 * grows.  kernel/unwind's decoders are built unchanged against the shims of
 * tools/testing/sframe, with -O2 and no sanitizer.  For each function
 * count, one synthetic set of x86-64 functions of the shapes gcc emits
 * (frameless leaves, frame-pointer functions, functions that save
 * callee-saved registers and allocate stack, some with a second
 * epilogue: jit_gen.c) is laid out twice, as the kernel would read it:
 *
 *  - a JIT registry (header page, descriptors, rows at 64 bytes) looked
 *    up with sframe_jit_find();
 *  - an ELF .sframe section, SFrame version 2 with PC-relative function
 *    starts as ld writes it, looked up with sframe_sec_find() (elf), as
 *    the kernel did before it converted sections, and in the table the
 *    kernel converts it into at registration, with sframe_table_find()
 *    (tab).
 *
 * Each is looked up at random PCs (any function, any offset) and at
 * sequential PCs (one PC in each function, in address order, from a
 * random first one).  Before timing, sampled lookups in both tables must
 * give the row the generator meant; every timed lookup must hit.
 *
 *	lookup_bench [-r RUNS] [-l LOOKUPS] [-s SEED] [-c] N...
 *
 * Runs go round all tables in turn, RUNS times, so that every cell of
 * the table is measured side by side with the others; a cell is the
 * median of its RUNS timings, in nanoseconds of the thread's CPU time
 * per lookup.  With -c, each
 * table and order is looked up LOOKUPS times once, between callgrind
 * client requests that zero the counters and dump them, for a run under
 * valgrind --tool=callgrind that counts instructions per lookup (see
 * mk/bench/10-lookup).  Exit status 1 if a lookup went wrong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"
#include "jit_gen.h"
#include "table_alloc.h"

/* The Makefile defines HAVE_CALLGRIND where valgrind's header is. */
#ifdef HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define HAVE_CALLGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)	((void)(name))
#endif

#define MAX_SIZES	32
#define NR_SAMPLES	4096

enum kind { JIT, ELF, TAB, NR_KINDS };
enum order { RANDOM, SEQUENTIAL, NR_ORDERS };

static const char *const kind_names[NR_KINDS] = { "jit", "elf", "tab" };
static const char *const order_names[NR_ORDERS] = { "rand", "seq" };

/* Everything built for one function count. */
struct table {
	struct jit_gen g;
	u8 *elf;
	size_t elf_size;
	struct sframe_sec sec;
	struct sframe_table *tab;
	size_t tab_size;
	unsigned long *pcs[NR_ORDERS];
	u32 *pc_funcs[NR_ORDERS];
};

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static void put_le(u8 *p, u64 v, unsigned int size)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		p[i] = v >> (8 * i);
}

/* Width code of a signed value: 0, 1, 2 for 1, 2, 4 bytes. */
static unsigned int width_code(s32 v)
{
	if (v >= -128 && v <= 127)
		return 0;
	if (v >= -32768 && v <= 32767)
		return 1;
	return 2;
}

/* Encode one row as gas does on AMD64 (RA fixed in the header). */
static u8 *put_fre(u8 *p, const struct sframe_jit_fre *r, unsigned int addr)
{
	unsigned int n = r->flags & SFRAME_JIT_FRE_FP_SAVED ? 2 : 1;
	unsigned int w = width_code(r->cfa_off), size;

	if (n == 2 && width_code(r->fp_off) > w)
		w = width_code(r->fp_off);
	size = 1U << w;
	put_le(p, r->start_off, addr);
	p += addr;
	*p++ = (r->cfa_base == SFRAME_JIT_CFA_SP) | n << 1 | w << 5;
	put_le(p, r->cfa_off, size);
	p += size;
	if (n == 2) {
		put_le(p, r->fp_off, size);
		p += size;
	}
	return p;
}

/* Row start offsets: 1, 2 or 4 bytes, as the function's size needs. */
static unsigned int fre_type(u32 size)
{
	if (size <= 0x100)
		return 0;
	if (size <= 0x10000)
		return 1;
	return 2;
}

/*
 * SFrame version 2, sorted, PC-relative function starts, fixed RA offset
 * -8, loaded right after the text, as ld lays out .sframe.
 */
static void build_elf(struct table *t)
{
	u32 fde_bytes = t->g.nr_funcs * SFRAME_V2_FDE_SIZE, i, r;
	/* At most 1 + 1 + 2 * 4 bytes per row. */
	size_t max = SFRAME_HDR_SIZE + fde_bytes + (size_t)t->g.nr_rows * 10;
	unsigned long base = align_up(t->g.text_end, 4096);
	u8 *buf = jit_gen_alloc(max), *fre, *p;
	size_t scratch;

	memset(buf, 0, SFRAME_HDR_SIZE + fde_bytes);
	fre = buf + SFRAME_HDR_SIZE + fde_bytes;
	p = fre;
	for (i = 0; i < t->g.nr_funcs; i++) {
		const struct jit_gen_func *f = &t->g.funcs[i];
		u32 off = SFRAME_HDR_SIZE + i * SFRAME_V2_FDE_SIZE;
		unsigned int type = fre_type(f->size);
		u8 *fde = buf + off;

		put_le(fde, f->start - (base + off), 4);
		put_le(fde + 4, f->size, 4);
		put_le(fde + 8, p - fre, 4);
		put_le(fde + 12, f->nr_rows, 4);
		fde[16] = type;
		for (r = 0; r < f->nr_rows; r++)
			p = put_fre(p, &t->g.rows[f->first_row + r], 1U << type);
	}
	put_le(buf, SFRAME_MAGIC, 2);
	buf[2] = SFRAME_VERSION_2;
	buf[3] = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
	buf[4] = SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	buf[6] = (u8)-8;
	put_le(buf + 8, t->g.nr_funcs, 4);
	put_le(buf + 12, t->g.nr_rows, 4);
	put_le(buf + 16, p - fre, 4);
	put_le(buf + 24, fde_bytes, 4);
	t->elf = buf;
	t->elf_size = p - buf;
	if (sframe_sec_init(&t->sec, buf, t->elf_size, base) ||
	    sframe_sec_validate(&t->sec) ||
	    sframe_table_size(&t->sec, &t->tab_size, &scratch)) {
		fprintf(stderr, "lookup_bench: bad .sframe for %u functions\n",
			t->g.nr_funcs);
		exit(1);
	}
	if (table_alloc_new(&t->sec, &t->tab)) {
		fprintf(stderr, "lookup_bench: no table for %u functions\n",
			t->g.nr_funcs);
		exit(1);
	}
	/* The bytes the kernel keeps: the table's buffer and its rules. */
	t->tab_size += sframe_table_rules_bytes(t->tab);
}

static unsigned long pc_in(const struct jit_gen_func *f)
{
	return f->start + jit_gen_below(f->size);
}

static void gen_pcs(struct table *t, u32 nr)
{
	u32 i, fi, next = jit_gen_below(t->g.nr_funcs);
	int o;

	for (o = 0; o < NR_ORDERS; o++) {
		t->pcs[o] = jit_gen_alloc(sizeof(*t->pcs[o]) * nr);
		t->pc_funcs[o] = jit_gen_alloc(sizeof(*t->pc_funcs[o]) * nr);
	}
	for (i = 0; i < nr; i++) {
		fi = jit_gen_below(t->g.nr_funcs);
		t->pcs[RANDOM][i] = pc_in(&t->g.funcs[fi]);
		t->pc_funcs[RANDOM][i] = fi;
		fi = next;
		next = next + 1 == t->g.nr_funcs ? 0 : next + 1;
		t->pcs[SEQUENTIAL][i] = pc_in(&t->g.funcs[fi]);
		t->pc_funcs[SEQUENTIAL][i] = fi;
	}
}

static enum sframe_find_result find(const struct table *t, enum kind k,
				    unsigned long pc, struct sframe_row *row)
{
	if (k == JIT)
		return sframe_jit_find(&t->g.view, pc, row);
	if (k == TAB)
		return sframe_table_find(t->tab, pc, row);
	return sframe_sec_find(&t->sec, pc, row);
}

/* The row the generator meant at @pc, by a linear scan of its rows. */
static struct sframe_row expected_row(const struct table *t, u32 fi,
				      unsigned long pc)
{
	const struct jit_gen_func *f = &t->g.funcs[fi];
	const struct sframe_jit_fre *r = &t->g.rows[f->first_row];
	u32 off = pc - f->start, i = 0;

	while (i + 1 < f->nr_rows && r[i + 1].start_off <= off)
		i++;
	r += i;
	return (struct sframe_row){
		.cfa_base = r->cfa_base == SFRAME_JIT_CFA_SP ?
			SFRAME_CFA_BASE_SP : SFRAME_CFA_BASE_FP,
		.fp_saved = r->flags & SFRAME_JIT_FRE_FP_SAVED,
		.cfa_off = r->cfa_off,
		.ra_off = r->ra_off,
		.fp_off = r->fp_off,
	};
}

static bool row_eq(const struct sframe_row *a, const struct sframe_row *b)
{
	return a->cfa_base == b->cfa_base && a->ra_undefined == b->ra_undefined &&
	       a->fp_saved == b->fp_saved && a->signal == b->signal &&
	       a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       (!a->fp_saved || a->fp_off == b->fp_off);
}

static void report_wrong(const struct table *t, int k, unsigned long pc,
			 u32 fi)
{
	fprintf(stderr, "lookup_bench: %s lookup of %#lx (function %u of %u) is wrong\n",
		kind_names[k], pc, fi, t->g.nr_funcs);
}

/* Sampled lookups of both kinds must give the generator's rows. */
static int check_table(const struct table *t, u32 nr_pcs)
{
	struct sframe_row got, want;
	u32 i, fi, n = nr_pcs < NR_SAMPLES ? nr_pcs : NR_SAMPLES;
	unsigned long pc;
	int k, o, bad = 0;

	for (o = 0; o < NR_ORDERS; o++) {
		for (i = 0; i < n; i++) {
			pc = t->pcs[o][i];
			fi = t->pc_funcs[o][i];
			want = expected_row(t, fi, pc);
			for (k = 0; k < NR_KINDS; k++) {
				if (find(t, k, pc, &got) == SFRAME_FIND_HIT &&
				    row_eq(&got, &want))
					continue;
				if (bad++ < 5)
					report_wrong(t, k, pc, fi);
			}
		}
	}
	/* Past the last function and before the first: nothing. */
	for (k = 0; k < NR_KINDS; k++) {
		if (find(t, k, t->g.funcs[t->g.nr_funcs - 1].start +
			 t->g.funcs[t->g.nr_funcs - 1].size, &got) != SFRAME_FIND_NONE ||
		    find(t, k, JIT_GEN_TEXT_START - 1, &got) != SFRAME_FIND_NONE) {
			fprintf(stderr, "lookup_bench: %s lookup outside the functions hit\n",
				kind_names[k]);
			bad++;
		}
	}
	return bad;
}

/*
 * Look every PC of one order up; the number of hits.  The lookups are
 * calls into another object file: the compiler cannot drop them.
 */
static u32 run_lookups(const struct table *t, enum kind k, enum order o,
		       u32 nr)
{
	const unsigned long *pcs = t->pcs[o];
	struct sframe_row row;
	u32 i, hits = 0;

	for (i = 0; i < nr; i++)
		hits += find(t, k, pcs[i], &row) == SFRAME_FIND_HIT;
	return hits;
}

static void print_usage(void)
{
	fprintf(stderr, "usage: lookup_bench [-r RUNS] [-l LOOKUPS] [-s SEED] [-c] N...\n");
	exit(2);
}

static void print_header(int argc, char **argv, int runs, u32 lookups,
			 bool cg)
{
	int i;

	printf("# command:");
	for (i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	if (cg) {
		printf("# callgrind mode: %u lookups per table and order\n",
		       lookups);
		return;
	}
	printf("# ns (thread CPU time) per lookup, median of %d runs of %u lookups\n",
	       runs, lookups);
	printf("# (xR): ratio to the first row; log2: log2(N) / log2(first N)\n");
	printf("# jitB/fn, elfB/fn, tabB/fn: bytes per function of the registry\n");
	printf("# (less its header page), of .sframe and of its table\n");
}

static void print_row(const struct table *t, const struct table *t0,
		      double cell[NR_KINDS][NR_ORDERS],
		      double cell0[NR_KINDS][NR_ORDERS])
{
	size_t page = sysconf(_SC_PAGESIZE);
	int k, o;

	printf("%8u %5.2f %8.1f %7.1f %7.1f %7.1f", t->g.nr_funcs,
	       (double)t->g.nr_rows / t->g.nr_funcs,
	       __builtin_log2(t->g.nr_funcs) / __builtin_log2(t0->g.nr_funcs),
	       (double)(t->g.jit_size - page) / t->g.nr_funcs,
	       (double)t->elf_size / t->g.nr_funcs,
	       (double)t->tab_size / t->g.nr_funcs);
	for (k = 0; k < NR_KINDS; k++)
		for (o = 0; o < NR_ORDERS; o++)
			printf("  %7.1f (x%4.2f)", cell[k][o],
			       cell[k][o] / cell0[k][o]);
	printf("\n");
}

static void print_columns(void)
{
	int k, o;

	printf("%8s %5s %8s %7s %7s %7s", "N", "rows", "log2", "jitB/fn",
	       "elfB/fn", "tabB/fn");
	for (k = 0; k < NR_KINDS; k++)
		for (o = 0; o < NR_ORDERS; o++)
			printf("  %8s-%-4s %-3s", kind_names[k], order_names[o],
			       "");
	printf("\n");
}

static int timed(struct table *tabs, int nr_tabs, int runs, u32 lookups)
{
	double (*samples)[NR_KINDS][NR_ORDERS][MAX_SIZES] =
		jit_gen_alloc(sizeof(*samples) * runs);
	double cell[MAX_SIZES][NR_KINDS][NR_ORDERS], t0;
	int r, i, k, o, bad = 0;

	for (r = 0; r < runs; r++)
		for (i = 0; i < nr_tabs; i++)
			for (k = 0; k < NR_KINDS; k++)
				for (o = 0; o < NR_ORDERS; o++) {
					t0 = thread_ns();
					if (run_lookups(&tabs[i], k, o, lookups) !=
					    lookups)
						bad++;
					samples[r][k][o][i] =
						(thread_ns() - t0) / lookups;
				}
	for (i = 0; i < nr_tabs; i++)
		for (k = 0; k < NR_KINDS; k++)
			for (o = 0; o < NR_ORDERS; o++) {
				double v[runs];

				for (r = 0; r < runs; r++)
					v[r] = samples[r][k][o][i];
				cell[i][k][o] = median(v, runs);
			}
	print_columns();
	for (i = 0; i < nr_tabs; i++)
		print_row(&tabs[i], &tabs[0], cell[i], cell[0]);
	free(samples);
	if (bad)
		fprintf(stderr, "lookup_bench: %d runs had lookups that missed\n",
			bad);
	return bad;
}

/* One pass per table and order, each counted apart by callgrind. */
static int counted(struct table *tabs, int nr_tabs, u32 lookups)
{
	char name[64];
	int i, k, o, bad = 0;

	if (!HAVE_CALLGRIND) {
		fprintf(stderr, "lookup_bench: built without <valgrind/callgrind.h>\n");
		return 1;
	}
	for (i = 0; i < nr_tabs; i++)
		for (k = 0; k < NR_KINDS; k++)
			for (o = 0; o < NR_ORDERS; o++) {
				snprintf(name, sizeof(name), "lookup %u %s %s %u",
					 tabs[i].g.nr_funcs, kind_names[k],
					 order_names[o], lookups);
				CALLGRIND_ZERO_STATS;
				if (run_lookups(&tabs[i], k, o, lookups) !=
				    lookups)
					bad++;
				CALLGRIND_DUMP_STATS_AT(name);
			}
	return bad;
}

int main(int argc, char **argv)
{
	struct table tabs[MAX_SIZES] = {};
	u32 lookups = 1U << 18;
	int runs = 11, opt, n = 0, i, bad = 0;
	u64 seed = 1;
	bool cg = false;
	char *end;

	while ((opt = getopt(argc, argv, "r:l:s:c")) != -1) {
		switch (opt) {
		case 'r':
			runs = atoi(optarg);
			break;
		case 'l':
			lookups = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'c':
			cg = true;
			break;
		default:
			print_usage();
		}
	}
	if (optind == argc || argc - optind > MAX_SIZES || runs < 1 ||
	    !lookups)
		print_usage();
	jit_gen_seed(seed);
	for (i = optind; i < argc; i++, n++) {
		unsigned long v = strtoul(argv[i], &end, 0);

		if (*end || !v || v > SFRAME_JIT_MAX_FDES)
			print_usage();
		jit_gen_funcs(&tabs[n].g, v);
		jit_gen_registry(&tabs[n].g);
		build_elf(&tabs[n]);
		gen_pcs(&tabs[n], lookups);
		bad += check_table(&tabs[n], lookups);
	}
	if (bad) {
		fprintf(stderr, "lookup_bench: %d wrong lookups\n", bad);
		return 1;
	}
	print_header(argc, argv, runs, lookups, cg);
	if (cg)
		return counted(tabs, n, lookups) ? 1 : 0;
	return timed(tabs, n, runs, lookups) ? 1 : 0;
}
