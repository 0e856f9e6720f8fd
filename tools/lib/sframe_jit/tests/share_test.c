// SPDX-License-Identifier: GPL-2.0
/*
 * Row sharing (share.c) and registries with SFRAME_JIT_F_SHARE_ROWS:
 * equal sequences land in the same slots, different ones in different
 * slots, a sequence that begins another shares its first rows, every
 * function reads back the rows it had, and removal in such a registry
 * never moves rows (it never compacts).
 */
#include <string.h>

#include "test.h"

#define SP(start, off)							\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_ROW_CFA_SP,	\
	  .cfa_off = (off), .ra_off = -8 }

/*
 * Six functions: 0 and 2 alike, 1 a prefix of 0 and of 3, 4 unlike any,
 * 5 like 0.
 */
static const struct sframe_jit_row in_rows[] = {
	SP(0, 8), SP(1, 16), SP(9, 8),			/* f0 */
	SP(0, 8), SP(1, 16),				/* f1 */
	SP(0, 8), SP(1, 16), SP(9, 8),			/* f2 */
	SP(0, 8), SP(1, 16), SP(5, 48), SP(20, 16),	/* f3 */
	SP(0, 8), SP(2, 16), SP(9, 8),			/* f4 */
	SP(0, 8), SP(1, 16), SP(9, 8),			/* f5 */
};

static const uint32_t in_first[] = { 0, 3, 5, 8, 12, 15 };
static const uint32_t in_nr[] = { 3, 2, 3, 4, 3, 3 };
#define NR_FUNCS	6
#define NR_IN_ROWS	ARRAY_SIZE(in_rows)

static struct sframe_jit_row *shared_input(struct sframe_jit__func *funcs,
					   uint64_t base)
{
	struct sframe_jit_row *rows = malloc(sizeof(in_rows));
	int i;

	ASSERT(rows);
	memcpy(rows, in_rows, sizeof(in_rows));
	for (i = 0; i < NR_FUNCS; i++)
		funcs[i] = (struct sframe_jit__func) {
			.start		= base + 32 * i,
			.size		= 32,
			.first_row	= in_first[i],
			.nr_rows	= in_nr[i],
		};
	return rows;
}

TEST(share_puts_equal_sequences_in_the_same_slots, T_MEM)
{
	struct sframe_jit__func funcs[NR_FUNCS];
	struct sframe_jit_row *rows = shared_input(funcs, 0x1000);
	uint32_t nr = NR_IN_ROWS;
	int i;

	ASSERT_EQ(sframe_jit__share_rows(funcs, NR_FUNCS, &rows, &nr), 0);
	/* f0 (f2, f5), f3, f4: 3 + 4 + 3 rows; f1 begins f0 and f3. */
	EXPECT_EQ(nr, 10);
	EXPECT_EQ(funcs[0].first_row, funcs[2].first_row);
	EXPECT_EQ(funcs[0].first_row, funcs[5].first_row);
	EXPECT(funcs[1].first_row == funcs[0].first_row ||
	       funcs[1].first_row == funcs[3].first_row);
	EXPECT(funcs[0].first_row != funcs[3].first_row);
	EXPECT(funcs[0].first_row != funcs[4].first_row);
	EXPECT(funcs[3].first_row != funcs[4].first_row);
	for (i = 0; i < NR_FUNCS; i++) {
		EXPECT_EQ(funcs[i].nr_rows, in_nr[i]);
		EXPECT(funcs[i].first_row + funcs[i].nr_rows <= nr);
		EXPECT(rows_equal(rows + funcs[i].first_row,
				  in_rows + in_first[i], in_nr[i]));
	}
	free(rows);
}

TEST(share_ignores_padding_and_keeps_distinct_fields_apart, T_MEM)
{
	struct sframe_jit__func funcs[2] = {
		{ .start = 0, .size = 8, .first_row = 0, .nr_rows = 1 },
		{ .start = 8, .size = 8, .first_row = 1, .nr_rows = 1 },
	};
	struct sframe_jit_row *rows = malloc(2 * sizeof(*rows));
	uint32_t nr = 2;

	ASSERT(rows);
	/* Same fields, different padding bytes: one sequence. */
	memset(&rows[0], 0x00, sizeof(rows[0]));
	memset(&rows[1], 0xff, sizeof(rows[1]));
	rows[0] = (struct sframe_jit_row)SP(0, 8);
	rows[1].start_off = 0;
	rows[1].cfa_off = 8;
	rows[1].ra_off = -8;
	rows[1].fp_off = 0;
	rows[1].cfa_base = SFRAME_JIT_ROW_CFA_SP;
	rows[1].flags = 0;
	ASSERT_EQ(sframe_jit__share_rows(funcs, 2, &rows, &nr), 0);
	EXPECT_EQ(nr, 1);
	EXPECT_EQ(funcs[0].first_row, funcs[1].first_row);
	free(rows);

	/* One field apart: two sequences. */
	rows = malloc(2 * sizeof(*rows));
	ASSERT(rows);
	rows[0] = (struct sframe_jit_row)SP(0, 8);
	rows[1] = (struct sframe_jit_row)SP(0, 8);
	rows[1].flags = SFRAME_JIT_ROW_RA_UNDEFINED;
	nr = 2;
	funcs[0].first_row = 0;
	funcs[1].first_row = 1;
	ASSERT_EQ(sframe_jit__share_rows(funcs, 2, &rows, &nr), 0);
	EXPECT_EQ(nr, 2);
	EXPECT(funcs[0].first_row != funcs[1].first_row);
	free(rows);
}

static struct sframe_jit *shared_reg(struct test_backend *tb, uint64_t base,
				     uint32_t fdes, uint32_t fres)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = fdes,
			.fre_capacity = fres,
			.flags = SFRAME_JIT_F_SHARE_ROWS | SFRAME_JIT_F_NO_GROW);

	test_backend_init(tb);
	return reg_new(tb, base, base + 0x1000, &opts);
}

TEST(shared_registry_holds_the_rows_once_and_reads_them_back, T_MEM)
{
	struct sframe_jit__func funcs[NR_FUNCS];
	uint64_t base = arena(0x1000);
	struct sframe_jit_row *rows = shared_input(funcs, base);
	struct sframe_jit_row got[8];
	struct sframe_jit_func fn;
	struct sframe_jit_info info = { .sz = sizeof(info) };
	struct test_backend tb;
	struct sframe_jit *reg;
	uint32_t nr = NR_IN_ROWS;
	struct table t = { 0 };
	int i;

	ASSERT_EQ(sframe_jit__share_rows(funcs, NR_FUNCS, &rows, &nr), 0);
	/* Sized exactly: it must not need more. */
	reg = shared_reg(&tb, base, NR_FUNCS, nr);
	ASSERT_EQ(sframe_jit__add_shared(reg, funcs, NR_FUNCS, rows, nr),
		  NR_FUNCS);
	ASSERT_EQ(sframe_jit_get_info(reg, &info), 0);
	EXPECT_EQ(info.nr_funcs, NR_FUNCS);
	EXPECT_EQ(info.nr_rows_used, nr);
	EXPECT_EQ(info.fre_capacity, nr);
	for (i = 0; i < NR_FUNCS; i++) {
		ASSERT_EQ(sframe_jit_find(reg, base + 32 * i + 1, &fn, got, 8),
			  0);
		EXPECT_EQ(fn.nr_rows, in_nr[i]);
		EXPECT(rows_equal(got, in_rows + in_first[i], in_nr[i]));
	}
	/* What the kernel reads: the same slots for f0 and f2. */
	table_read_stable(reg_hdr(&tb), &t);
	ASSERT_EQ(t.count, NR_FUNCS);
	EXPECT_EQ(t.fdes[0].fre_start, t.fdes[2].fre_start);
	EXPECT(t.fdes[1].fre_start == t.fdes[0].fre_start ||
	       t.fdes[1].fre_start == t.fdes[3].fre_start);
	EXPECT(t.fdes[0].fre_start != t.fdes[4].fre_start);

	/* Removal tombstones, and never compacts the shared rows apart. */
	for (i = 0; i < NR_FUNCS - 1; i++)
		ASSERT_EQ(sframe_jit_remove(reg, funcs[i].start), 0);
	EXPECT_EQ(sframe_jit_compact(reg), 0);
	ASSERT_EQ(sframe_jit_find(reg, base + 32 * 5, &fn, got, 8), 0);
	EXPECT(rows_equal(got, in_rows + in_first[5], in_nr[5]));
	ASSERT_EQ(sframe_jit_get_info(reg, &info), 0);
	EXPECT_EQ(info.nr_compactions, 0);
	EXPECT_EQ(info.nr_funcs, 1);
	free(rows);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

TEST(shared_add_refuses_a_registry_that_may_compact, T_MEM)
{
	struct sframe_jit__func funcs[NR_FUNCS];
	uint64_t base = arena(0x1000);
	struct sframe_jit_row *rows = shared_input(funcs, base);
	struct test_backend tb;
	struct sframe_jit *reg;

	test_backend_init(&tb);
	reg = reg_new(&tb, base, base + 0x1000, NULL);
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, NR_FUNCS, rows,
					 NR_IN_ROWS), -EINVAL);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);

	/* Too small, without growth: nothing added. */
	reg = shared_reg(&tb, base, NR_FUNCS - 1, NR_IN_ROWS);
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, NR_FUNCS, rows,
					 NR_IN_ROWS), -ENOSPC);
	EXPECT_EQ(sframe_jit_find(reg, base, NULL, NULL, 0), -ENOENT);
	/* A row index past the rows given. */
	funcs[2].first_row = NR_IN_ROWS - 1;
	EXPECT_EQ(sframe_jit__add_shared(reg, funcs, 3, rows, NR_IN_ROWS),
		  -EINVAL);
	free(rows);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
}

/* Every function of @cfi, read back from @reg at @bias, has its rows. */
static void expect_cfi_in_reg(struct sframe_jit *reg,
			      const struct sframe_jit_cfi *cfi, uint64_t bias)
{
	static struct sframe_jit_row got[65536];
	const struct sframe_jit_row *want;
	struct sframe_jit_func f, g;
	uint32_t i, n = sframe_jit_cfi_nr_funcs(cfi), bad = 0;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(sframe_jit_cfi_func(cfi, i, &f, &want), 0);
		if (sframe_jit_find(reg, f.start + bias, &g, got,
				    ARRAY_SIZE(got)) ||
		    g.start != f.start + bias || g.nr_rows != f.nr_rows ||
		    !rows_equal(got, want, f.nr_rows))
			bad++;
	}
	EXPECT_EQ(bad, 0);
}

TEST(shared_import_of_libc_reads_back_every_function, T_MEM)
{
	struct sframe_jit_cfi_stats st = { .sz = sizeof(st) };
	struct sframe_jit_cfi *cfi;
	struct sframe_jit_info info = { .sz = sizeof(info) };
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t lo, hi, base;
	struct sframe_jit_func f;
	size_t size;
	void *img = file_read("/lib/x86_64-linux-gnu/libc.so.6", &size);
	int n;

	if (!img)
		test_skip("no libc.so.6 to read");
	n = sframe_jit_cfi_convert(img, size, &cfi);
	ASSERT(n > 1000);
	ASSERT_EQ(sframe_jit_cfi_get_stats(cfi, &st), 0);
	/* Sharing must pay on a real object. */
	EXPECT(st.nr_shared_rows * 10 < st.nr_rows * 9);
	EXPECT_EQ(st.row_bytes, st.nr_rows * sizeof(struct sframe_jit_row));
	ASSERT_EQ(sframe_jit_cfi_func(cfi, 0, &f, NULL), 0);
	lo = f.start;
	ASSERT_EQ(sframe_jit_cfi_func(cfi, n - 1, &f, NULL), 0);
	hi = f.start + f.size;
	base = arena(hi - lo + 0x1000);

	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = n,
			.fre_capacity = st.nr_shared_rows,
			.flags = SFRAME_JIT_F_SHARE_ROWS | SFRAME_JIT_F_NO_GROW);
	test_backend_init(&tb);
	reg = reg_new(&tb, base, base + (hi - lo), &opts);
	ASSERT_EQ(sframe_jit_import_cfi(reg, cfi, base - lo), n);
	ASSERT_EQ(sframe_jit_get_info(reg, &info), 0);
	EXPECT_EQ(info.nr_rows_used, st.nr_shared_rows);
	expect_cfi_in_reg(reg, cfi, base - lo);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
	sframe_jit_cfi_free(cfi);
	free(img);
}

/*
 * A function of @size over rows [@first, @first + @nr) of @rows, added
 * to a registry of each kind that shares rows; both must answer alike,
 * and one that refuses must hold nothing.
 */
static int window_add(const struct sframe_jit_row *rows, uint32_t nr_rows,
		      uint32_t first, uint32_t nr, uint32_t size)
{
	uint64_t base = arena(0x1000);
	struct sframe_jit__func fn = {
		.start = base, .size = size, .first_row = first, .nr_rows = nr,
	};
	SFRAME_JIT_OPTS(sframe_jit_opts, compact, .fde_capacity = 4,
			.fre_capacity = nr_rows, .rule_capacity = nr_rows,
			.flags = SFRAME_JIT_F_COMPACT_RECORDS |
				 SFRAME_JIT_F_SHARE_ROWS);
	struct test_backend tb;
	struct sframe_jit *reg;
	int ret[2], k;

	for (k = 0; k < 2; k++) {
		if (k) {
			test_backend_init(&tb);
			reg = reg_new(&tb, base, base + 0x1000, &compact);
		} else {
			reg = shared_reg(&tb, base, 4, nr_rows);
		}
		ret[k] = sframe_jit__add_shared(reg, &fn, 1, rows, nr_rows);
		if (ret[k] < 0)
			EXPECT_EQ(sframe_jit_find(reg, base, NULL, NULL, 0),
				  -ENOENT);
		sframe_jit_destroy(reg);
		test_backend_release(&tb);
	}
	EXPECT_EQ(ret[0], ret[1]);
	return ret[0];
}

/*
 * The rows a registry shares are checked once for all the functions
 * that read them: each function's window must still be what the kernel
 * accepts, and only the window counts.
 */
TEST(shared_add_checks_each_functions_window, T_MEM)
{
	struct sframe_jit_row rows[130] = {
		SP(0, 8), SP(1, 16), SP(9, 8), SP(0, 8), SP(4, 16),
	};
	uint32_t i;

	EXPECT_EQ(window_add(rows, 5, 0, 3, 32), 1);
	EXPECT_EQ(window_add(rows, 5, 3, 2, 32), 1);
	EXPECT_EQ(window_add(rows, 5, 0, 3, 10), 1);
	/* The last row at the function's end; no row; not from 0. */
	EXPECT_EQ(window_add(rows, 5, 0, 3, 9), -EINVAL);
	EXPECT_EQ(window_add(rows, 5, 0, 0, 32), -EINVAL);
	EXPECT_EQ(window_add(rows, 5, 1, 2, 32), -EINVAL);
	/* Into the next sequence, whose first row starts at 0 again. */
	EXPECT_EQ(window_add(rows, 5, 0, 4, 32), -EINVAL);

	/* An unsound row fails the windows it is in, and no other. */
	rows[4].cfa_base = 7;
	EXPECT_EQ(window_add(rows, 5, 3, 2, 32), -EINVAL);
	EXPECT_EQ(window_add(rows, 5, 3, 1, 32), 1);
	rows[4].cfa_base = SFRAME_JIT_ROW_CFA_SP;
	rows[1].flags = 0x80;
	EXPECT_EQ(window_add(rows, 5, 0, 3, 32), -EINVAL);
	EXPECT_EQ(window_add(rows, 5, 0, 1, 32), 1);
	rows[1].flags = 0;
	rows[3].cfa_base = 9;
	EXPECT_EQ(window_add(rows, 5, 3, 1, 32), -EINVAL);

	/* Rows out of order, at the edges of 64-row words. */
	for (i = 0; i < 130; i++)
		rows[i] = (struct sframe_jit_row)SP(i, 8);
	EXPECT_EQ(window_add(rows, 130, 0, 130, 200), 1);
	rows[64].start_off = 63;
	EXPECT_EQ(window_add(rows, 130, 0, 64, 200), 1);
	EXPECT_EQ(window_add(rows, 130, 0, 65, 200), -EINVAL);
	rows[64].start_off = 64;
	rows[127].start_off = 126;
	EXPECT_EQ(window_add(rows, 130, 0, 127, 200), 1);
	EXPECT_EQ(window_add(rows, 130, 0, 128, 200), -EINVAL);
	rows[127].start_off = 127;
	rows[129].start_off = 129 + 100;
	EXPECT_EQ(window_add(rows, 130, 0, 130, 200), -EINVAL);
	EXPECT_EQ(window_add(rows, 130, 0, 130, 230), 1);
}
