// SPDX-License-Identifier: GPL-2.0
/*
 * Compact registries (SFRAME_JIT_F_COMPACT_RECORDS): the layout the
 * backend makes, checked against the formula of the uapi header's
 * comment and sframe.rst rather than the library's code; an import of a
 * real object read back by the independent reader (reader.c), every
 * function's rows compared with the converted table; the split of
 * functions that compact rows or descriptors cannot hold; the rule
 * deduplication and its bound; and the calls such a registry refuses.
 */
#include <string.h>
#include <unistd.h>

#include "test.h"

/* fp_off is kept where FP_SAVED is not: a rule's field all the same. */
#define ROW(start, base, off, fl)					\
	((struct sframe_jit_row) { .start_off = (start),		\
	  .cfa_base = (base), .cfa_off = (off), .ra_off = -8,		\
	  .fp_off = -16, .flags = (fl) })

/* sframe_jit__compact_caps(), its rules dropped. */
static int caps_of(const struct sframe_jit__func *funcs, uint32_t nr_funcs,
		   const struct sframe_jit_row *rows, uint32_t nr_rows,
		   struct sframe_jit__compact_caps *caps)
{
	struct sframe_jit__row_rules rr;
	int err = sframe_jit__compact_caps(funcs, nr_funcs, rows, nr_rows,
					   caps, &rr);

	if (!err)
		sframe_jit__row_rules_free(&rr);
	return err;
}

static uint64_t up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static struct sframe_jit *compact_reg(struct test_backend *tb, uint64_t start,
				      uint64_t end, uint32_t fdes,
				      uint32_t fres, uint32_t rules)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = fdes,
			.fre_capacity = fres, .rule_capacity = rules,
			.flags = SFRAME_JIT_F_COMPACT_RECORDS |
				 SFRAME_JIT_F_SHARE_ROWS);

	test_backend_init(tb);
	return reg_new(tb, start, end, &opts);
}

TEST(compact_layout_is_the_kernels, T_BOTH)
{
	uint64_t page = sysconf(_SC_PAGESIZE), base = arena(0x10000);
	uint64_t fre_off, rule_off;
	struct sframe_jit_header *h;
	struct test_backend tb;
	struct sframe_jit *reg;

	reg = compact_reg(&tb, base, base + 0x10000, 1000, 3001, 77);
	h = reg_hdr(&tb);
	/* Header page | 1000 * 16 | 64-aligned 3001 * 4 | 64-aligned 77 * 12 */
	fre_off = up(page + 1000 * 16, 64);
	rule_off = up(fre_off + 3001 * 4, 64);
	EXPECT_EQ(h->flags, SFRAME_JIT_F_COMPACT);
	EXPECT_EQ(h->fde_off, page);
	EXPECT_EQ(h->fde_stride, 16);
	EXPECT_EQ(h->fde_capacity, 1000);
	EXPECT_EQ(h->fre_off, fre_off);
	EXPECT_EQ(h->fre_stride, 4);
	EXPECT_EQ(h->fre_capacity, 3001);
	EXPECT_EQ(h->rule_off, rule_off);
	EXPECT_EQ(h->rule_stride, 12);
	EXPECT_EQ(h->rule_capacity, 77);
	EXPECT_EQ(h->map_size, up(rule_off + 77 * 12, page));
	EXPECT_EQ(h->reserved1, 0);
	EXPECT_EQ(h->reserved2, 0);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);

	/* Version 1: no rule area. */
	test_backend_init(&tb);
	SFRAME_JIT_OPTS(sframe_jit_opts, v1, .fde_capacity = 1000,
			.fre_capacity = 3001);
	reg = reg_new(&tb, base, base + 0x10000, &v1);
	h = reg_hdr(&tb);
	EXPECT_EQ(h->flags, 0);
	EXPECT_EQ(h->rule_off, 0);
	EXPECT_EQ(h->rule_capacity, 0);
	EXPECT_EQ(h->rule_stride, 0);
	EXPECT_EQ(h->map_size, up(up(page + 1000 * 24, 64) + 3001 * 16, page));
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

/* The registration checks of sframe.rst, as the memory backend makes them. */
TEST(compact_registration_arguments_are_checked, T_MEM)
{
	struct sframe_jit_args a = {
		.text_start = 1ULL << 40, .text_end = (1ULL << 40) + 4096,
		.fde_capacity = 1, .fre_capacity = 1,
		.flags = SFRAME_JIT_F_COMPACT, .rule_capacity = 1,
	};
	struct sframe_jit_header *h, *n;
	struct sframe_jit_args b;
	long addr;
	int fd;

	b = a;
	b.rule_capacity = 0;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	b.rule_capacity = SFRAME_JIT_MAX_RULES + 1;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	b = a;
	b.flags = SFRAME_JIT_F_COMPACT | 0x10;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	/* A registry copies one source or replaces it, not both. */
	b.flags = SFRAME_JIT_F_COMPACT | SFRAME_JIT_REPLACE | SFRAME_JIT_COPY;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	b = a;
	b.__reserved = 1;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	b = a;
	b.flags = 0;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	b = a;
	b.text_end = b.text_start + (1ULL << 32) + 1;
	EXPECT_EQ(sframe_jit__mem_create(NULL, &b, &fd), -EINVAL);
	b.text_end--;
	addr = sframe_jit__mem_create(NULL, &b, &fd);
	ASSERT(addr > 0);
	EXPECT_EQ(-1, fd);
	sframe_jit__unmap(NULL, (void *)addr,
			  ((struct sframe_jit_header *)addr)->map_size, -1);
	b = a;
	b.rule_capacity = SFRAME_JIT_MAX_RULES;
	addr = sframe_jit__mem_create(NULL, &b, &fd);
	ASSERT(addr > 0);
	h = (struct sframe_jit_header *)addr;

	/* Replacement: the same kind, no area smaller; rules copied. */
	memset((char *)h + h->rule_off, 0x5a, 12);
	b.rule_capacity--;
	EXPECT_EQ(sframe_jit__mem_replace(NULL, &b, h, -1, &fd), -EINVAL);
	b.rule_capacity++;
	b.flags = 0;
	b.rule_capacity = 0;
	EXPECT_EQ(sframe_jit__mem_replace(NULL, &b, h, -1, &fd), -EINVAL);
	b.flags = SFRAME_JIT_F_COMPACT;
	b.rule_capacity = SFRAME_JIT_MAX_RULES;
	b.fre_capacity = 2;
	addr = sframe_jit__mem_replace(NULL, &b, h, -1, &fd);
	ASSERT(addr > 0);
	n = (struct sframe_jit_header *)addr;
	EXPECT(!memcmp((char *)n + n->rule_off, (char *)h + h->rule_off, 12));
	sframe_jit__unmap(NULL, n, n->map_size, -1);
	sframe_jit__unmap(NULL, h, h->map_size, -1);
}

TEST(compact_needs_shared_rows_and_a_range_of_4_gib, T_BOTH)
{
	uint64_t base = arena(0x1000);
	struct test_backend tb;
	struct sframe_jit *reg = NULL;

	test_backend_init(&tb);
	SFRAME_JIT_OPTS(sframe_jit_opts, alone,
			.flags = SFRAME_JIT_F_COMPACT_RECORDS);
	EXPECT_EQ(reg_try(&tb, base, base + 0x1000, &alone, &reg), -EINVAL);
	SFRAME_JIT_OPTS(sframe_jit_opts, rules_alone, .rule_capacity = 4);
	EXPECT_EQ(reg_try(&tb, base, base + 0x1000, &rules_alone, &reg),
		  -EINVAL);
	SFRAME_JIT_OPTS(sframe_jit_opts, too_many,
			.rule_capacity = SFRAME_JIT_MAX_RULES + 1,
			.flags = SFRAME_JIT_F_COMPACT_RECORDS |
				 SFRAME_JIT_F_SHARE_ROWS);
	EXPECT_EQ(reg_try(&tb, base, base + 0x1000, &too_many, &reg),
		  -EINVAL);
	SFRAME_JIT_OPTS(sframe_jit_opts, ok,
			.flags = SFRAME_JIT_F_COMPACT_RECORDS |
				 SFRAME_JIT_F_SHARE_ROWS);
	EXPECT_EQ(reg_try(&tb, base, base + (1ULL << 32) + 1, &ok, &reg),
		  -EINVAL);
	EXPECT(!reg);
	EXPECT_EQ(tb.nr_creates, 0);
	/* The default rule capacity: one per row. */
	reg = reg_new(&tb, base, base + 0x1000, &ok);
	EXPECT_EQ(reg_hdr(&tb)->rule_capacity, 256);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

TEST(compact_registry_refuses_what_it_does_not_support, T_BOTH)
{
	static const struct sframe_jit_row row = ROW(0, SFRAME_JIT_ROW_CFA_SP, 8, 0);
	uint64_t base = arena(0x1000);
	struct sframe_jit__func fn = {
		.start = base, .size = 16, .first_row = 0, .nr_rows = 1,
	};
	struct test_backend tb;
	struct sframe_jit *reg;
	struct sframe_jit_func f;

	reg = compact_reg(&tb, base, base + 0x1000, 8, 8, 8);
	EXPECT_EQ(sframe_jit_add(reg, base, 16, &row, 1, NULL), -EOPNOTSUPP);
	EXPECT_EQ(sframe_jit_add(reg, base, 16, NULL, 0, NULL), -EOPNOTSUPP);
	EXPECT_EQ(sframe_jit_add_stubs(reg, base, 16, 8, &row, 1, NULL),
		  -EOPNOTSUPP);
	EXPECT_EQ(sframe_jit_add_x86_64(reg, base, 16, NULL, NULL),
		  -EOPNOTSUPP);
	EXPECT_EQ(sframe_jit__add_batch(reg, &fn, 1, &row), -EOPNOTSUPP);
	EXPECT_EQ(sframe_jit_grow(reg, 16, 16), -EOPNOTSUPP);
	fn.stub_size = 8;
	EXPECT_EQ(sframe_jit__add_shared(reg, &fn, 1, &row, 1), -EOPNOTSUPP);
	fn.stub_size = 0;
	EXPECT_EQ(reg_hdr(&tb)->fde_count, 0);

	/* The import works, and so does removal, by tombstone. */
	ASSERT_EQ(sframe_jit__add_shared(reg, &fn, 1, &row, 1), 1);
	EXPECT_EQ(reg_hdr(&tb)->fde_count, 1);
	ASSERT_EQ(sframe_jit_find(reg, base + 3, &f, NULL, 0), 0);
	EXPECT_EQ(f.start, base);
	EXPECT_EQ(f.size, 16);
	/* Only above the functions there. */
	EXPECT_EQ(sframe_jit__add_shared(reg, &fn, 1, &row, 1), -EEXIST);
	ASSERT_EQ(sframe_jit_remove(reg, base), 0);
	EXPECT_EQ(sframe_jit_find(reg, base + 3, &f, NULL, 0), -ENOENT);
	EXPECT_EQ(sframe_jit__add_shared(reg, &fn, 1, &row, 1), -EOPNOTSUPP);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

/* The rows of the function at @start of @t, its pieces joined. */
static uint32_t joined_rows(const struct table *t, uint32_t *j, uint64_t start,
			    uint32_t size, struct sframe_jit_row *out,
			    uint32_t max)
{
	uint32_t off = 0, n = 0, r;

	while (off < size && *j < t->count) {
		const struct sframe_jit_fde *d = &t->fdes[*j];

		if (d->func_start != start + off)
			return UINT32_MAX;
		for (r = 0; r < d->fre_count && n < max; r++, n++) {
			const struct sframe_jit_fre *fre =
				&t->fres[d->fre_start + r];

			out[n] = (struct sframe_jit_row) {
				.start_off	= fre->start_off + off,
				.cfa_off	= fre->cfa_off,
				.ra_off		= fre->ra_off,
				.fp_off		= fre->fp_off,
				.cfa_base	= fre->cfa_base,
				.flags		= fre->flags,
			};
		}
		off += d->func_size;
		(*j)++;
	}
	return off == size ? n : UINT32_MAX;
}

/*
 * What the reader finds in @h, pieces joined, is each function of
 * @funcs (at @bias) with its rows: the number of functions that differ.
 */
static uint32_t compare_functions(const struct sframe_jit_header *h,
				  const struct sframe_jit__func *funcs,
				  uint32_t nr_funcs,
				  const struct sframe_jit_row *rows,
				  uint64_t bias, uint32_t *nr_descs)
{
	static struct sframe_jit_row got[1 << 17];
	struct table t = { 0 };
	char why[160];
	uint32_t i, j = 0, n, bad = 0;

	table_read_stable(h, &t);
	if (table_check(&t, why, sizeof(why))) {
		test_fail(__FILE__, __LINE__, "%s", why);
		bad++;
	}
	for (i = 0; i < nr_funcs; i++) {
		n = joined_rows(&t, &j, funcs[i].start + bias, funcs[i].size,
				got, ARRAY_SIZE(got));
		if (n != funcs[i].nr_rows ||
		    !rows_equal(got, rows + funcs[i].first_row, n))
			bad++;
	}
	*nr_descs = t.count;
	table_free(&t);
	return bad;
}

/* The distinct rule indices of the rows that @h's descriptors name. */
static uint32_t rules_named(const struct sframe_jit_header *h)
{
	static uint8_t seen[SFRAME_JIT_MAX_RULES];
	const unsigned char *p = (const unsigned char *)h;
	uint32_t i, r, n = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < h->fde_count; i++) {
		const struct sframe_jit_cfde *d = (const void *)(p + h->fde_off +
						  (size_t)i * h->fde_stride);

		for (r = 0; r < d->fre_count; r++) {
			const struct sframe_jit_cfre *c =
				(const void *)(p + h->fre_off +
					       (size_t)(d->fre_start + r) *
					       h->fre_stride);

			n += !seen[c->rule];
			seen[c->rule] = 1;
		}
	}
	return n;
}

static void compact_round_trip(const char *path, uint32_t min_funcs);

TEST(compact_import_of_libc_reads_back_every_function, T_BOTH)
{
	compact_round_trip("/lib/x86_64-linux-gnu/libc.so.6", 1000);
}

/* The object of issue 14, with two functions split at 64 KiB. */
TEST(compact_import_of_libllvm_reads_back_every_function, T_MEM)
{
	compact_round_trip("/usr/lib/llvm-14/lib/libLLVM-14.so.1", 90000);
}

/*
 * @path's converted table imported into a compact registry sized by
 * sframe_jit_cfi_compact_caps(): every slot used, every rule named, and
 * each function's rows what the reader finds, its pieces joined.
 */
/* A file's converted table, imported into a compact registry. */
struct imported {
	void *img;
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_cfi_stats st;
	struct sframe_jit_opts opts;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t bias;		/* the registry's addresses less the table's */
	int n;			/* functions */
};

/*
 * @path's table, of more than @min_funcs functions, in a compact
 * registry sized by sframe_jit_cfi_compact_caps(); skips without @path.
 */
static void compact_import(struct imported *im, const char *path,
			   uint32_t min_funcs)
{
	struct sframe_jit_func f;
	uint64_t lo, hi, base;
	size_t size;

	memset(im, 0, sizeof(*im));
	im->img = file_read(path, &size);
	if (!im->img)
		test_skip("no %s to read", path);
	im->n = sframe_jit_cfi_convert(im->img, size, &im->cfi);
	ASSERT(im->n > (int)min_funcs);
	im->st.sz = sizeof(im->st);
	ASSERT_EQ(sframe_jit_cfi_get_stats(im->cfi, &im->st), 0);
	ASSERT_EQ(sframe_jit_cfi_func(im->cfi, 0, &f, NULL), 0);
	lo = f.start;
	ASSERT_EQ(sframe_jit_cfi_func(im->cfi, im->n - 1, &f, NULL), 0);
	hi = f.start + f.size;
	base = arena(hi - lo + 0x1000);
	im->bias = base - lo;
	im->opts = (struct sframe_jit_opts) {
		.sz = sizeof(im->opts),
		.flags = SFRAME_JIT_F_COMPACT_RECORDS | SFRAME_JIT_F_SHARE_ROWS,
	};
	ASSERT_EQ(sframe_jit_cfi_compact_caps(im->cfi, &im->opts), 0);
	test_backend_init(&im->tb);
	im->reg = reg_new(&im->tb, base, base + (hi - lo), &im->opts);
	ASSERT_EQ(sframe_jit_import_cfi(im->reg, im->cfi, im->bias), im->n);
}

static void compact_import_free(struct imported *im)
{
	sframe_jit_destroy(im->reg);
	test_backend_release(&im->tb);
	sframe_jit_cfi_free(im->cfi);
	free(im->img);
}

static void compact_round_trip(const char *path, uint32_t min_funcs)
{
	struct sframe_jit__func *funcs;
	struct sframe_jit_row *rows;
	struct sframe_jit_func f;
	struct imported im;
	uint32_t i, nr_descs, nr_rows = 0;

	compact_import(&im, path, min_funcs);
	EXPECT(im.opts.fde_capacity >= (uint32_t)im.n);
	EXPECT(im.opts.fre_capacity >= im.st.nr_shared_rows);
	EXPECT(im.opts.rule_capacity > 10 && im.opts.rule_capacity < 10000);
	test_log("%s: %d functions, %u descriptors, %u rows, %u rules", path,
		 im.n, im.opts.fde_capacity, im.opts.fre_capacity,
		 im.opts.rule_capacity);
	/* Sized exactly: every slot used, every rule named by a row. */
	EXPECT_EQ(reg_hdr(&im.tb)->fde_count, im.opts.fde_capacity);
	EXPECT_EQ(rules_named(reg_hdr(&im.tb)), im.opts.rule_capacity);

	/* The table's functions, each with its own rows, for the reader. */
	funcs = calloc(im.n, sizeof(*funcs));
	rows = calloc(im.st.nr_rows, sizeof(*rows));
	ASSERT(funcs && rows);
	for (i = 0; i < (uint32_t)im.n; i++) {
		const struct sframe_jit_row *want;

		ASSERT_EQ(sframe_jit_cfi_func(im.cfi, i, &f, &want), 0);
		funcs[i] = (struct sframe_jit__func) {
			.start = f.start, .size = f.size,
			.first_row = nr_rows, .nr_rows = f.nr_rows,
		};
		memcpy(rows + nr_rows, want, f.nr_rows * sizeof(*rows));
		nr_rows += f.nr_rows;
	}
	EXPECT_EQ(compare_functions(reg_hdr(&im.tb), funcs, im.n, rows,
				    im.bias, &nr_descs), 0);
	EXPECT_EQ(nr_descs, im.opts.fde_capacity);
	/* Under half the bytes of the version 1 registry of the same rows. */
	EXPECT(im.reg->l.map_size * 2 <
	       4096 + (uint64_t)im.n * 24 + im.st.nr_shared_rows * 16);
	free(funcs);
	free(rows);
	compact_import_free(&im);
}

/*
 * libc's functions in a compact registry, retired by address in a
 * shuffled order as a code cache's collector frees methods: each removal
 * takes the function asked for and no other, and again is -ENOENT.
 */
TEST(compact_remove_in_any_order_takes_the_function_asked_for, T_MEM)
{
	struct sframe_jit_info info = { .sz = sizeof(info) };
	uint64_t x = 0x9e3779b97f4a7c15ull, *at, t;
	struct sframe_jit_func f;
	struct imported im;
	uint32_t i, j;

	compact_import(&im, "/lib/x86_64-linux-gnu/libc.so.6", 1000);
	at = calloc(im.n, sizeof(*at));
	ASSERT(at);
	for (i = 0; i < (uint32_t)im.n; i++) {
		ASSERT_EQ(sframe_jit_cfi_func(im.cfi, i, &f, NULL), 0);
		at[i] = f.start + im.bias;
	}
	/* A fixed shuffle, the same in every run. */
	for (i = im.n - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = at[i];
		at[i] = at[j];
		at[j] = t;
	}
	for (i = 0; i < (uint32_t)im.n; i++) {
		EXPECT_EQ(sframe_jit_find(im.reg, at[i], NULL, NULL, 0), 0);
		EXPECT_EQ(sframe_jit_remove(im.reg, at[i]), 0);
		EXPECT_EQ(sframe_jit_remove(im.reg, at[i]), -ENOENT);
		EXPECT_EQ(sframe_jit_find(im.reg, at[i], NULL, NULL, 0),
			  -ENOENT);
		if (test_failed())
			break;
	}
	ASSERT_EQ(sframe_jit_get_info(im.reg, &info), 0);
	EXPECT_EQ(info.nr_funcs, 0);
	EXPECT_EQ(info.nr_tombstones, info.fde_capacity);
	free(at);
	compact_import_free(&im);
}

/*
 * A function of 256 KiB whose rows reach past 64 KiB, one of 70000 rows,
 * and one small: the first two become three and two pieces.
 */
#define BIG_ROWS	70000

static uint32_t split_input(struct sframe_jit__func *funcs,
			    struct sframe_jit_row *rows, uint64_t base)
{
	static const uint32_t starts[] = { 0, 1, 0x8000, 0x10000, 0x10005,
					   0x30000 };
	uint32_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(starts); i++)
		rows[n++] = ROW(starts[i], i % 2, 8 * (i + 1), 0);
	funcs[0] = (struct sframe_jit__func) {
		.start = base, .size = 0x40000, .first_row = 0, .nr_rows = n,
	};
	for (i = 0; i < BIG_ROWS; i++)
		rows[n + i] = ROW(i, SFRAME_JIT_ROW_CFA_SP, 8 + 8 * (i % 5),
				  i % 3 ? SFRAME_JIT_ROW_FP_SAVED : 0);
	funcs[1] = (struct sframe_jit__func) {
		.start = base + 0x40000, .size = BIG_ROWS + 10,
		.first_row = n, .nr_rows = BIG_ROWS,
	};
	n += BIG_ROWS;
	/* The first two rows of the first function again. */
	funcs[2] = (struct sframe_jit__func) {
		.start = base + 0x60000, .size = 8, .first_row = 0,
		.nr_rows = 2,
	};
	return n;
}

TEST(compact_import_splits_functions_rows_cannot_hold, T_MEM)
{
	static struct sframe_jit_row rows[8 + BIG_ROWS];
	struct sframe_jit__compact_caps caps;
	struct sframe_jit__func funcs[3];
	uint64_t base = arena(0x70000);
	struct test_backend tb;
	struct sframe_jit *reg;
	struct sframe_jit_func f;
	struct sframe_jit_row got[4];
	uint32_t nr_rows, nr_descs;

	nr_rows = split_input(funcs, rows, base);
	ASSERT_EQ(caps_of(funcs, 3, rows, nr_rows, &caps), 0);
	/* 3 + 2 + 1 pieces; later pieces' rows: 2 + 1, and 70000 - 65535. */
	EXPECT_EQ(caps.nr_fdes, 6);
	EXPECT_EQ(caps.nr_rows, nr_rows + 3 + (BIG_ROWS - 65535));
	/*
	 * Six rules of the first function, ten of the second, of which
	 * the SP-based ones at 8, 24 and 40 without FP are the first's.
	 */
	EXPECT_EQ(caps.nr_rules, 6 + 10 - 3);

	reg = compact_reg(&tb, base, base + 0x70000, caps.nr_fdes,
			  caps.nr_rows, caps.nr_rules);
	ASSERT_EQ(sframe_jit__add_shared(reg, funcs, 3, rows, nr_rows), 3);
	EXPECT_EQ(compare_functions(reg_hdr(&tb), funcs, 3, rows, 0,
				    &nr_descs), 0);
	EXPECT_EQ(nr_descs, 6);

	/* A later piece reads back as a function at its start. */
	ASSERT_EQ(sframe_jit_find(reg, base + 0x10006, &f, got, 4), 0);
	EXPECT_EQ(f.start, base + 0x10000);
	EXPECT_EQ(f.size, 0x20000);
	EXPECT_EQ(f.nr_rows, 2);
	EXPECT_EQ(got[1].start_off, 5);
	EXPECT_EQ(got[1].cfa_off, 40);
	/* Not a function of its own: removal takes all pieces. */
	EXPECT_EQ(sframe_jit_remove(reg, base + 0x10000), -ENOENT);
	ASSERT_EQ(sframe_jit_remove(reg, base), 0);
	EXPECT_EQ(sframe_jit_find(reg, base + 0x30001, &f, NULL, 0), -ENOENT);
	EXPECT_EQ(sframe_jit_find(reg, base + 0x60000, &f, NULL, 0), 0);
	/* A range that cuts the second function keeps it whole. */
	EXPECT_EQ(sframe_jit_remove_range(reg, base + 0x40000,
					  base + 0x50000), 0);
	EXPECT_EQ(sframe_jit_remove_range(reg, base + 0x40000,
					  base + 0x60000), 1);
	EXPECT_EQ(sframe_jit_find(reg, base + 0x40000 + 65536, &f, NULL, 0),
		  -ENOENT);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);

	/* One slot short in each area: nothing published. */
	reg = compact_reg(&tb, base, base + 0x70000, caps.nr_fdes - 1,
			  caps.nr_rows, caps.nr_rules);
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, 3, rows, nr_rows),
		  -ENOSPC);
	EXPECT_EQ(reg_hdr(&tb)->fde_count, 0);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
	reg = compact_reg(&tb, base, base + 0x70000, caps.nr_fdes,
			  caps.nr_rows - 1, caps.nr_rules);
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, 3, rows, nr_rows),
		  -ENOSPC);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
	reg = compact_reg(&tb, base, base + 0x70000, caps.nr_fdes,
			  caps.nr_rows, caps.nr_rules - 1);
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, 3, rows, nr_rows),
		  -ENOSPC);
	EXPECT_EQ(reg_hdr(&tb)->fde_count, 0);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

TEST(compact_rules_are_stored_once, T_MEM)
{
	/* Four functions, nine rows, three distinct rules. */
	static const struct sframe_jit_row rows[] = {
		ROW(0, 0, 8, 0), ROW(1, 0, 16, 1), ROW(4, 1, 16, 1),
		ROW(0, 0, 8, 0), ROW(1, 0, 16, 1),
		ROW(0, 0, 8, 0), ROW(3, 1, 16, 1),
		ROW(0, 1, 16, 1), ROW(2, 0, 8, 0),
	};
	static const uint32_t first[] = { 0, 3, 5, 7 }, nr[] = { 3, 2, 2, 2 };
	uint64_t base = arena(0x1000);
	struct sframe_jit__compact_caps caps;
	struct sframe_jit__func funcs[4];
	const struct sframe_jit_rule *r;
	struct sframe_jit_header *h;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint32_t i, nr_descs;

	for (i = 0; i < 4; i++)
		funcs[i] = (struct sframe_jit__func) {
			.start = base + 16 * i, .size = 16,
			.first_row = first[i], .nr_rows = nr[i],
		};
	ASSERT_EQ(caps_of(funcs, 4, rows, ARRAY_SIZE(rows), &caps), 0);
	EXPECT_EQ(caps.nr_rules, 3);
	EXPECT_EQ(caps.nr_fdes, 4);
	EXPECT_EQ(caps.nr_rows, ARRAY_SIZE(rows));
	reg = compact_reg(&tb, base, base + 0x1000, 4, ARRAY_SIZE(rows), 3);
	ASSERT_EQ(sframe_jit__add_shared(reg, funcs, 4, rows,
					 ARRAY_SIZE(rows)), 4);
	h = reg_hdr(&tb);
	EXPECT_EQ(rules_named(h), 3);
	/* Three different rules in the area. */
	r = (const void *)((const char *)h + h->rule_off);
	EXPECT(memcmp(&r[0], &r[1], sizeof(*r)) && memcmp(&r[0], &r[2], sizeof(*r)) &&
	       memcmp(&r[1], &r[2], sizeof(*r)));
	EXPECT_EQ(compare_functions(h, funcs, 4, rows, 0, &nr_descs), 0);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

TEST(compact_rules_stop_at_65536, T_MEM)
{
	uint32_t n = SFRAME_JIT_MAX_RULES + 1, i;
	struct sframe_jit_row *rows = calloc(n, sizeof(*rows));
	struct sframe_jit__func *funcs = calloc(n, sizeof(*funcs));
	uint64_t base = arena((size_t)n * 16);
	struct sframe_jit__compact_caps caps;
	struct test_backend tb;
	struct sframe_jit *reg;

	ASSERT(rows && funcs);
	/* A rule each: different CFA offsets. */
	for (i = 0; i < n; i++) {
		rows[i] = ROW(0, SFRAME_JIT_ROW_CFA_SP, 8 + 8 * (int32_t)i, 0);
		funcs[i] = (struct sframe_jit__func) {
			.start = base + 16ULL * i, .size = 16,
			.first_row = i, .nr_rows = 1,
		};
	}
	EXPECT_EQ(caps_of(funcs, n, rows, n, &caps), -ENOSPC);
	ASSERT_EQ(caps_of(funcs, n - 1, rows, n - 1, &caps), 0);
	EXPECT_EQ(caps.nr_rules, SFRAME_JIT_MAX_RULES);

	reg = compact_reg(&tb, base, base + (uint64_t)n * 16, n, n,
			  SFRAME_JIT_MAX_RULES);
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, n, rows, n), -ENOSPC);
	EXPECT_EQ(reg_hdr(&tb)->fde_count, 0);
	/* 65536 rules fit, the last index is 65535. */
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, n - 1, rows, n - 1),
		  (int)n - 1);
	EXPECT_EQ(rules_named(reg_hdr(&tb)), SFRAME_JIT_MAX_RULES);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
	free(rows);
	free(funcs);
}
