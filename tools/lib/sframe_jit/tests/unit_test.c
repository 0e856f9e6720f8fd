// SPDX-License-Identifier: GPL-2.0
/*
 * Each library call on its own, checked through the API and through the
 * registry as the kernel reads it (reader.c).  T_BOTH cases also run
 * against sframe_register(2) in the test kernel.
 */
#include <string.h>
#include <unistd.h>

#include "test.h"

#define CODE_SIZE	(1U << 20)

struct ctx {
	struct test_backend tb;
	uint64_t code;
	struct sframe_jit *reg;
	struct table t;
};

static void setup(struct ctx *c, const struct sframe_jit_opts *opts)
{
	memset(c, 0, sizeof(*c));
	test_backend_init(&c->tb);
	c->code = arena(CODE_SIZE);
	c->reg = reg_new(&c->tb, c->code, c->code + CODE_SIZE, opts);
}

/* Read the registry as the kernel does and hold it to the invariants. */
static void read_checked(struct ctx *c)
{
	char why[256];

	table_read_stable(reg_hdr(&c->tb), &c->t);
	if (table_check(&c->t, why, sizeof(why)))
		test_fail(__FILE__, __LINE__, "invariant: %s", why);
}

static struct sframe_jit_info info_of(struct sframe_jit *reg)
{
	struct sframe_jit_info info = { .sz = sizeof(info) };

	ASSERT_EQ(0, sframe_jit_get_info(reg, &info));
	return info;
}

static const struct sframe_jit_row two_rows[] = {
	{ .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 8, .ra_off = -8 },
	{ .start_off = 1, .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_ROW_FP_SAVED },
};

static int add2(struct ctx *c, uint64_t off, uint32_t size)
{
	return sframe_jit_add(c->reg, c->code + off, size, two_rows, 2, NULL);
}

/* Creation */

TEST(create_with_defaults_holds_64_functions_and_256_rows, T_BOTH)
{
	struct sframe_jit_header *h;
	struct sframe_jit_info info;
	struct ctx c;

	setup(&c, NULL);
	info = info_of(c.reg);
	EXPECT_EQ(64, info.fde_capacity);
	EXPECT_EQ(256, info.fre_capacity);
	EXPECT_EQ(c.code, info.text_start);
	EXPECT_EQ(c.code + CODE_SIZE, info.text_end);
	EXPECT_EQ(0, info.nr_funcs);
	EXPECT_EQ(test_env.kernel, info.kernel);
	h = reg_hdr(&c.tb);
	EXPECT_EQ(SFRAME_JIT_MAGIC, h->magic);
	EXPECT_EQ(SFRAME_JIT_VERSION, h->version);
	EXPECT_EQ(0, h->fde_count);
	EXPECT_EQ(0, h->seq);
	EXPECT_EQ(0, h->fre_off % 64);
	sframe_jit_destroy(c.reg);
}

TEST(create_rejects_an_empty_or_inverted_range, T_BOTH)
{
	struct test_backend tb;
	struct sframe_jit *reg = NULL;
	uint64_t code = arena(4096);

	test_backend_init(&tb);
	EXPECT_EQ(-EINVAL, reg_try(&tb, code, code, NULL, &reg));
	EXPECT_EQ(-EINVAL, reg_try(&tb, code + 1, code, NULL, &reg));
	EXPECT_EQ(-EINVAL, sframe_jit_create(code, code + 1, NULL, NULL));
	EXPECT_EQ(0, tb.nr_creates);
	EXPECT(!reg);
}

TEST(create_rejects_unknown_flags_and_malformed_options, T_BOTH)
{
	struct {
		struct sframe_jit_opts o;
		uint64_t tail;
	} big = { .o.sz = sizeof(big) };
	struct sframe_jit_opts o = { .sz = sizeof(o) };
	struct test_backend tb;
	struct sframe_jit *reg = NULL;
	uint64_t code = arena(4096);

	test_backend_init(&tb);
	o.flags = 0x80;
	EXPECT_EQ(-EINVAL, reg_try(&tb, code, code + 4096, &o, &reg));
	o.flags = 0;
	o.sz = 8;
	EXPECT_EQ(-EINVAL, reg_try(&tb, code, code + 4096, &o, &reg));
	o.sz = sizeof(o);
	o.fde_capacity = 100;
	o.max_fde_capacity = 50;
	EXPECT_EQ(-EINVAL, reg_try(&tb, code, code + 4096, &o, &reg));
	o.max_fde_capacity = 0;
	o.fde_capacity = SFRAME_JIT_MAX_FDES + 1;
	EXPECT_EQ(-EINVAL, reg_try(&tb, code, code + 4096, &o, &reg));
	o.fde_capacity = 0;
	o.perf_map_path = "/dev/null";
	EXPECT_EQ(-EINVAL, reg_try(&tb, code, code + 4096, &o, &reg));
	big.tail = 1;
	EXPECT_EQ(-E2BIG, reg_try(&tb, code, code + 4096, &big.o, &reg));
	EXPECT_EQ(0, tb.nr_creates);
	/* A larger structure whose unknown bytes are zero is fine. */
	big.tail = 0;
	EXPECT_EQ(0, reg_try(&tb, code, code + 4096, &big.o, &reg));
	sframe_jit_destroy(reg);
}

TEST(create_passes_on_the_backend_error, T_BOTH)
{
	struct test_backend tb;
	struct sframe_jit *reg = NULL;
	uint64_t code = arena(4096);

	test_backend_init(&tb);
	tb.fail_create = ENOMEM;
	EXPECT_EQ(-ENOMEM, reg_try(&tb, code, code + 4096, NULL, &reg));
	EXPECT(!reg);
}

TEST(create_refuses_a_layout_it_does_not_know, T_BOTH)
{
	struct test_backend tb;
	struct sframe_jit *reg = NULL;
	uint64_t code = arena(4096);

	test_backend_init(&tb);
	tb.spoil_next = true;
	/* A spoilt magic: the header cannot be trusted, and is not unmapped. */
	EXPECT_EQ(-EPROTO, reg_try(&tb, code, code + 4096, NULL, &reg));
	EXPECT(!reg);
	EXPECT_EQ(0, tb.nr_unmaps);
}

TEST(create_without_the_system_call_is_enosys, T_MEM)
{
	struct sframe_jit *reg = NULL;
	uint64_t code = arena(4096);

	if (!access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK))
		test_skip("this kernel has sframe_register(2)");
	EXPECT_EQ(-ENOSYS, sframe_jit_create(code, code + 4096, NULL, &reg));
	EXPECT(!reg);
}

TEST(create_with_no_kernel_keeps_a_private_table, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_NO_KERNEL);
	struct sframe_jit *reg = NULL;
	struct sframe_jit_func fn;
	uint64_t code = arena(4096);

	ASSERT_EQ(0, sframe_jit_create(code, code + 4096, &opts, &reg));
	EXPECT_EQ(0, info_of(reg).kernel);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 16, NULL, 0, NULL));
	EXPECT_EQ(0, sframe_jit_find(reg, code + 3, &fn, NULL, 0));
	if (test_env.kernel)
		EXPECT(!range_registered(code, code + 4096));
	sframe_jit_destroy(reg);
}

TEST(destroy_unmaps_the_registry, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0, 16));
	sframe_jit_destroy(c.reg);
	EXPECT_EQ(1, c.tb.nr_unmaps);
	sframe_jit_destroy(NULL);
}

/* Adding */

TEST(add_appends_in_address_order_without_touching_seq, T_BOTH)
{
	const struct sframe_jit_fde *fde;
	struct ctx c;
	int i;

	setup(&c, NULL);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, add2(&c, 64 * i, 48));
	read_checked(&c);
	EXPECT_EQ(3, c.t.count);
	EXPECT_EQ(0, c.t.seq);
	for (i = 0; i < 3; i++) {
		fde = &c.t.fdes[i];
		EXPECT_EQ(c.code + 64 * i, fde->func_start);
		EXPECT_EQ(48, fde->func_size);
		EXPECT_EQ(2, fde->fre_count);
		EXPECT_EQ(2 * i, fde->fre_start);
		EXPECT_EQ(SFRAME_JIT_FDE_PCINC, fde->type);
		EXPECT_EQ(0, fde->flags);
		EXPECT_EQ(16, c.t.fres[fde->fre_start + 1].cfa_off);
		EXPECT_EQ(SFRAME_JIT_FRE_FP_SAVED,
			  c.t.fres[fde->fre_start + 1].flags);
	}
	sframe_jit_destroy(c.reg);
}

TEST(add_without_rows_publishes_one_frameless_row, T_BOTH)
{
	struct sframe_jit_row row;
	struct sframe_jit_func fn;
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, sframe_jit_add(c.reg, c.code, 7, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code + 8, 7, NULL, 1, NULL));
	ASSERT_EQ(0, sframe_jit_find(c.reg, c.code + 6, &fn, &row, 1));
	EXPECT_EQ(1, fn.nr_rows);
	EXPECT_EQ(SFRAME_JIT_ROW_CFA_SP, row.cfa_base);
	EXPECT_EQ(8, row.cfa_off);
	EXPECT_EQ(-8, row.ra_off);
	EXPECT_EQ(0, row.flags);
	sframe_jit_destroy(c.reg);
}

TEST(add_rejects_rows_the_kernel_would_not_use, T_BOTH)
{
	struct sframe_jit_row r[2];
	struct ctx c;

	setup(&c, NULL);
	memcpy(r, two_rows, sizeof(r));
	r[0].start_off = 1;
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 16, r, 2, NULL));
	memcpy(r, two_rows, sizeof(r));
	r[1].start_off = 0;
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 16, r, 2, NULL));
	memcpy(r, two_rows, sizeof(r));
	r[1].start_off = 16;
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 16, r, 2, NULL));
	memcpy(r, two_rows, sizeof(r));
	r[1].cfa_base = 2;
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 16, r, 2, NULL));
	memcpy(r, two_rows, sizeof(r));
	r[1].flags = 0x80;
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 16, r, 2, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 16, two_rows, 0,
					  NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code, 0, NULL, 0, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add(NULL, c.code, 16, NULL, 0, NULL));
	read_checked(&c);
	EXPECT_EQ(0, c.t.count);
	EXPECT_EQ(0, info_of(c.reg).nr_rows_used);
	sframe_jit_destroy(c.reg);
}

/*
 * An append into room checks each row while it copies it: whichever row
 * is bad, nothing is published and the next function gets the slots.
 */
TEST(append_refuses_a_bad_row_anywhere_and_publishes_nothing, T_BOTH)
{
	struct sframe_jit_row r[4];
	struct sframe_jit_func fn;
	struct ctx c;
	int i;

	setup(&c, NULL);
	ASSERT_EQ(0, sframe_jit_add(c.reg, c.code, 32, rows_fp32, 4, NULL));
	for (i = 0; i < 7; i++) {
		memcpy(r, rows_fp32, sizeof(r));
		if (i == 0) {			/* not at the start */
			r[0].start_off = 1;
			r[1].start_off = 2;
		}
		if (i == 1)			/* not after row 1 */
			r[2].start_off = 1;
		if (i == 2)			/* past the end */
			r[3].start_off = 32;
		if (i == 3)
			r[3].cfa_base = 2;
		if (i == 4)
			r[2].flags = 0x04;
		if (i == 5)
			r[1].flags = 0x80;
		if (i == 6)
			r[0].cfa_base = 0xff;
		EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code + 64, 32, r, 4,
						  NULL));
	}
	read_checked(&c);
	EXPECT_EQ(1, c.t.count);
	EXPECT_EQ(4, info_of(c.reg).nr_rows_used);
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, c.code + 64, NULL, NULL, 0));

	ASSERT_EQ(0, sframe_jit_add(c.reg, c.code + 64, 32, rows_fp32, 4,
				    NULL));
	ASSERT_EQ(0, sframe_jit_find(c.reg, c.code + 64, &fn, r, 4));
	EXPECT(rows_equal(r, rows_fp32, 4));
	read_checked(&c);
	EXPECT_EQ(2, c.t.count);
	EXPECT_EQ(4, c.t.fdes[1].fre_start);
	sframe_jit_destroy(c.reg);
}

/* Rows the caller filled field by field: their padding is not ABI. */
TEST(append_writes_zero_reserved_bytes_whatever_the_padding, T_BOTH)
{
	struct sframe_jit_row r[4];
	struct ctx c;
	int i;

	setup(&c, NULL);
	memset(r, 0xff, sizeof(r));
	for (i = 0; i < 4; i++) {
		r[i].start_off = rows_fp32[i].start_off;
		r[i].cfa_off = rows_fp32[i].cfa_off;
		r[i].ra_off = rows_fp32[i].ra_off;
		r[i].fp_off = rows_fp32[i].fp_off;
		r[i].cfa_base = rows_fp32[i].cfa_base;
		r[i].flags = rows_fp32[i].flags;
	}
	ASSERT_EQ(0, sframe_jit_add(c.reg, c.code, 32, r, 4, NULL));
	read_checked(&c);
	ASSERT_EQ(1, c.t.count);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, c.t.fres[i].reserved);
		EXPECT_EQ(rows_fp32[i].flags, c.t.fres[i].flags);
		EXPECT_EQ(rows_fp32[i].cfa_base, c.t.fres[i].cfa_base);
		EXPECT_EQ(rows_fp32[i].fp_off, c.t.fres[i].fp_off);
	}
	sframe_jit_destroy(c.reg);
}

/*
 * A function put over the last tombstone, larger than it, becomes the
 * last function: a later one inside it overlaps it and is no append.
 */
TEST(a_function_over_the_last_tombstone_moves_where_appends_start, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	ASSERT_EQ(0, add2(&c, 0, 16));
	ASSERT_EQ(0, add2(&c, 0x100, 16));
	ASSERT_EQ(0, sframe_jit_remove(c.reg, c.code + 0x100));
	ASSERT_EQ(0, add2(&c, 0x100, 0x100));
	EXPECT_EQ(-EEXIST, add2(&c, 0x180, 16));
	EXPECT_EQ(0, add2(&c, 0x200, 16));
	read_checked(&c);
	EXPECT_EQ(3, c.t.count);
	EXPECT_EQ(3, table_live(&c.t));
	sframe_jit_destroy(c.reg);
}

TEST(add_rejects_functions_outside_the_range, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, c.code - 16, 16, NULL, 0,
					  NULL));
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, c.code - 8, 16, NULL, 0,
					  NULL));
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, c.code + CODE_SIZE - 8, 16,
					  NULL, 0, NULL));
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, c.code + CODE_SIZE, 1,
					  NULL, 0, NULL));
	EXPECT_EQ(0, sframe_jit_add(c.reg, c.code + CODE_SIZE - 16, 16,
				    NULL, 0, NULL));
	read_checked(&c);
	EXPECT_EQ(1, c.t.count);
	sframe_jit_destroy(c.reg);
}

/*
 * With rows, the fast append's case: an empty registry has no function
 * to start above but the range's start, and a start and size that wrap
 * around end nowhere inside it.
 */
TEST(append_with_rows_outside_the_range_is_erange, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, c.code - 64, 32, rows_fp32,
					  4, NULL));
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, c.code + CODE_SIZE - 16, 32,
					  rows_fp32, 4, NULL));
	EXPECT_EQ(-ERANGE, sframe_jit_add(c.reg, UINT64_MAX - 15, 32,
					  rows_fp32, 4, NULL));
	EXPECT_EQ(0, sframe_jit_add(c.reg, c.code + CODE_SIZE - 32, 32,
				    rows_fp32, 4, NULL));
	read_checked(&c);
	EXPECT_EQ(1, c.t.count);
	EXPECT_EQ(c.code + CODE_SIZE - 32, c.t.fdes[0].func_start);
	sframe_jit_destroy(c.reg);
}

/*
 * A refused append gives back the room it took: the next function gets
 * its slots, and appends start where the last published function ends.
 */
TEST(a_refused_append_gives_back_where_appends_start, T_BOTH)
{
	struct sframe_jit_row r[4];
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(c.code, c.reg->tail_end);
	memcpy(r, rows_fp32, sizeof(r));
	r[3].cfa_base = 2;
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code + 64, 32, r, 4, NULL));
	EXPECT_EQ(c.code, c.reg->tail_end);
	ASSERT_EQ(0, sframe_jit_add(c.reg, c.code, 32, rows_fp32, 4, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add(c.reg, c.code + 64, 32, r, 4, NULL));
	EXPECT_EQ(c.code + 32, c.reg->tail_end);
	EXPECT_EQ(1, c.reg->nr_fdes);
	EXPECT_EQ(4, info_of(c.reg).nr_rows_used);
	sframe_jit_destroy(c.reg);
}

TEST(add_refuses_to_overlap_a_live_function, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 100, 50));
	EXPECT_EQ(-EEXIST, add2(&c, 100, 50));
	EXPECT_EQ(-EEXIST, add2(&c, 90, 11));
	EXPECT_EQ(-EEXIST, add2(&c, 149, 10));
	EXPECT_EQ(-EEXIST, add2(&c, 120, 2));
	EXPECT_EQ(-EEXIST, add2(&c, 0, 1000));
	EXPECT_EQ(0, add2(&c, 90, 10));
	EXPECT_EQ(0, add2(&c, 150, 10));
	read_checked(&c);
	EXPECT_EQ(3, c.t.count);
	EXPECT_EQ(3, info_of(c.reg).nr_funcs);
	EXPECT_EQ(6, info_of(c.reg).nr_rows_used);
	sframe_jit_destroy(c.reg);
}

TEST(add_inserts_out_of_order_under_seq, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0x300, 16));
	EXPECT_EQ(0, add2(&c, 0x500, 16));
	read_checked(&c);
	EXPECT_EQ(0, c.t.seq);
	EXPECT_EQ(0, add2(&c, 0x400, 16));
	EXPECT_EQ(0, add2(&c, 0x100, 16));
	read_checked(&c);
	EXPECT_EQ(4, c.t.seq);
	ASSERT_EQ(4, c.t.count);
	EXPECT_EQ(c.code + 0x100, c.t.fdes[0].func_start);
	EXPECT_EQ(c.code + 0x300, c.t.fdes[1].func_start);
	EXPECT_EQ(c.code + 0x400, c.t.fdes[2].func_start);
	EXPECT_EQ(c.code + 0x500, c.t.fdes[3].func_start);
	/* Each kept the rows it was given. */
	EXPECT_EQ(6, c.t.fdes[0].fre_start);
	EXPECT_EQ(4, c.t.fdes[2].fre_start);
	sframe_jit_destroy(c.reg);
}

TEST(add_reuses_the_code_of_removed_functions, T_BOTH)
{
	struct sframe_jit_func fn;
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0, 64));
	EXPECT_EQ(0, add2(&c, 64, 64));
	EXPECT_EQ(0, add2(&c, 128, 64));
	EXPECT_EQ(0, add2(&c, 192, 64));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 64));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 128));
	/* New code over both: they make way, under seq. */
	EXPECT_EQ(0, sframe_jit_add(c.reg, c.code + 96, 64, NULL, 0, NULL));
	read_checked(&c);
	EXPECT_EQ(2, c.t.seq);
	ASSERT_EQ(3, c.t.count);
	EXPECT_EQ(c.code + 96, c.t.fdes[1].func_start);
	EXPECT_EQ(c.code + 192, c.t.fdes[2].func_start);
	EXPECT_EQ(0, info_of(c.reg).nr_tombstones);
	EXPECT_EQ(3, info_of(c.reg).nr_funcs);
	/* Over the tail tombstone, too. */
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 192));
	EXPECT_EQ(0, add2(&c, 192, 32));
	EXPECT_EQ(0, sframe_jit_find(c.reg, c.code + 200, &fn, NULL, 0));
	EXPECT_EQ(32, fn.size);
	read_checked(&c);
	EXPECT_EQ(3, c.t.count);
	sframe_jit_destroy(c.reg);
}

TEST(add_stubs_publishes_a_pcmask_descriptor, T_BOTH)
{
	static const struct sframe_jit_row stub[] = {
		{ .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 16,
		  .ra_off = -8 },
		{ .start_off = 11, .cfa_base = SFRAME_JIT_ROW_CFA_SP,
		  .cfa_off = 24, .ra_off = -8 },
	};
	struct sframe_jit_func fn;
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, sframe_jit_add_stubs(c.reg, c.code, 160, 16, stub, 2,
					  "stubs"));
	EXPECT_EQ(-EINVAL, sframe_jit_add_stubs(c.reg, c.code + 160, 160, 0,
						stub, 2, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add_stubs(c.reg, c.code + 160, 160, 256,
						stub, 2, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add_stubs(c.reg, c.code + 160, 160, 11,
						stub, 2, NULL));
	EXPECT_EQ(-EINVAL, sframe_jit_add_stubs(c.reg, c.code + 160, 160, 16,
						NULL, 0, NULL));
	ASSERT_EQ(0, sframe_jit_find(c.reg, c.code + 100, &fn, NULL, 0));
	EXPECT_EQ(16, fn.stub_size);
	read_checked(&c);
	ASSERT_EQ(1, c.t.count);
	EXPECT_EQ(SFRAME_JIT_FDE_PCMASK, c.t.fdes[0].type);
	EXPECT_EQ(16, c.t.fdes[0].rep_size);
	sframe_jit_destroy(c.reg);
}

/* Removing */

TEST(remove_marks_a_tombstone_without_touching_seq, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0, 16));
	EXPECT_EQ(0, add2(&c, 16, 16));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code));
	read_checked(&c);
	EXPECT_EQ(0, c.t.seq);
	ASSERT_EQ(2, c.t.count);
	EXPECT_EQ(SFRAME_JIT_FDE_TOMBSTONE, c.t.fdes[0].flags);
	EXPECT_EQ(0, c.t.fdes[1].flags);
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, c.code, NULL, NULL, 0));
	EXPECT_EQ(1, info_of(c.reg).nr_tombstones);
	EXPECT_EQ(2, info_of(c.reg).nr_rows_live);
	EXPECT_EQ(4, info_of(c.reg).nr_rows_used);
	sframe_jit_destroy(c.reg);
}

TEST(remove_of_an_unknown_or_removed_function_is_enoent, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code));
	EXPECT_EQ(0, add2(&c, 32, 16));
	EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code + 33));
	EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code));
	EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code + 48));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 32));
	EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code + 32));
	EXPECT_EQ(-EINVAL, sframe_jit_remove(NULL, c.code));
	sframe_jit_destroy(c.reg);
}

/*
 * Removal tries the function after the last one removed before it
 * searches: whatever moved in between, it must retire the function asked
 * for and no other.
 */
TEST(remove_retires_the_function_asked_for_in_any_order, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .compact_threshold = 1000);
	static const uint32_t order[] = { 1, 2, 3, 7, 4, 0, 6 };
	struct ctx c;
	uint32_t i, j;

	setup(&c, &opts);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, add2(&c, 0x100 + 0x100 * i, 16));
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		if (i == 4) {
			/* Below the rest: every index after it moves up. */
			ASSERT_EQ(0, add2(&c, 0, 16));
		}
		EXPECT_EQ(0, sframe_jit_remove(c.reg,
					       c.code + 0x100 + 0x100 * order[i]));
		/* Again: the hint now points past it, the search finds it dead. */
		EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code + 0x100 +
							    0x100 * order[i]));
		for (j = 0; j < 8; j++) {
			bool gone = false;
			uint32_t k;

			for (k = 0; k <= i; k++)
				gone |= order[k] == j;
			EXPECT_EQ(gone ? -ENOENT : 0,
				  sframe_jit_find(c.reg, c.code + 0x100 + 0x100 * j,
						  NULL, NULL, 0));
		}
	}
	EXPECT_EQ(0, sframe_jit_find(c.reg, c.code, NULL, NULL, 0));
	EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code + 8));
	read_checked(&c);
	EXPECT_EQ(2, table_live(&c.t));
	sframe_jit_destroy(c.reg);
}

/* The next of a fixed sequence, the same in every run. */
static uint32_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x >> 32;
}

#define MANY		2048
#define MANY_STEPS	8000

/* Each function of the model is found, or not, as the model says. */
static void many_check(struct ctx *c, const bool *live)
{
	uint32_t k, n = 0;

	for (k = 0; k < 2 * MANY; k++) {
		EXPECT_EQ(live[k] ? 0 : -ENOENT,
			  sframe_jit_find(c->reg, c->code + 32 * k + 64, NULL,
					  NULL, 0));
		n += live[k];
	}
	EXPECT_EQ(n, info_of(c->reg).nr_funcs);
	read_checked(c);
	EXPECT_EQ(n, table_live(&c->t));
}

/*
 * Remove every @step-th slot from @k on, eight of them, as a collector
 * sweeping upwards that keeps the methods between; the ones the model
 * has are removed, the others are -ENOENT.  Returns how many it removed.
 */
static uint32_t many_sweep(struct ctx *c, bool *live, uint32_t k,
			   uint32_t step)
{
	uint32_t n, removed = 0;
	int want;

	for (n = 0; n < 8 && k < 2 * MANY; n++, k += step) {
		want = live[k] ? 0 : -ENOENT;
		EXPECT_EQ(want, sframe_jit_remove(c->reg, c->code + 32 * k + 64));
		removed += !want;
		live[k] = false;
	}
	return removed;
}

/*
 * Removal by address in any order, as a code cache's collector frees
 * methods, among appends, insertions below the last function (which move
 * every descriptor above them) and compactions (which move them down):
 * each removal retires the function asked for and no other, and one of
 * a function removed, never added, or at an address inside a function
 * is -ENOENT; sweeps upwards at a step among them.  Against a model:
 * functions at even slots are added first,
 * in address order; odd slots are filled later, below the last one.
 */
TEST(remove_by_address_in_any_order_among_insertions_and_compactions, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 2 * MANY,
			.fre_capacity = 8 * MANY, .compact_threshold = 200);
	static bool live[2 * MANY];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint32_t step, k, removed = 0;
	struct ctx c;
	int want;

	setup(&c, &opts);
	memset(live, 0, sizeof(live));
	for (k = 0; k < 2 * MANY; k += 2) {
		ASSERT_EQ(0, add2(&c, 32 * k + 64, 16));
		live[k] = true;
	}
	for (step = 0; step < MANY_STEPS; step++) {
		k = next_rand(&x) % (2 * MANY);
		switch (next_rand(&x) % 8) {
		case 0:
			/* An odd slot filled: an insertion below the last. */
			if (k % 2 && !live[k]) {
				ASSERT_EQ(0, add2(&c, 32 * k + 64, 16));
				live[k] = true;
			}
			break;
		case 1:
			/* Inside a function, or between two: no such start. */
			EXPECT_EQ(-ENOENT, sframe_jit_remove(c.reg, c.code +
							      32 * k + 64 + 8));
			break;
		case 2:
			/* A sweep upwards at a step, which the hint learns. */
			removed += many_sweep(&c, live, k,
					      1 + next_rand(&x) % 4);
			break;
		default:
			want = live[k] ? 0 : -ENOENT;
			EXPECT_EQ(want, sframe_jit_remove(c.reg, c.code +
							  32 * k + 64));
			removed += !want;
			live[k] = false;
		}
		if (step % 1000 == 999)
			many_check(&c, live);
	}
	test_log("%u removed, %llu compactions", removed,
		 (unsigned long long)info_of(c.reg).nr_compactions);
	EXPECT(removed > MANY / 2);
	EXPECT(info_of(c.reg).nr_compactions > 2);
	many_check(&c, live);
	sframe_jit_destroy(c.reg);
}

TEST(remove_compacts_once_tombstones_pass_the_threshold, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .compact_threshold = 2);
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 6; i++)
		EXPECT_EQ(0, add2(&c, 16 * i, 16));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 16));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 48));
	EXPECT_EQ(0, info_of(c.reg).nr_compactions);
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 80));
	EXPECT_EQ(1, info_of(c.reg).nr_compactions);
	EXPECT_EQ(0, info_of(c.reg).nr_tombstones);
	read_checked(&c);
	EXPECT_EQ(2, c.t.seq);
	ASSERT_EQ(3, c.t.count);
	EXPECT_EQ(c.code, c.t.fdes[0].func_start);
	EXPECT_EQ(c.code + 32, c.t.fdes[1].func_start);
	EXPECT_EQ(c.code + 64, c.t.fdes[2].func_start);
	EXPECT_EQ(6, info_of(c.reg).nr_rows_used);
	sframe_jit_destroy(c.reg);
}

TEST(remove_range_retires_the_functions_wholly_inside, T_BOTH)
{
	struct ctx c;
	int i;

	setup(&c, NULL);
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, add2(&c, 16 * i, 16));
	EXPECT_EQ(-EINVAL, sframe_jit_remove_range(c.reg, c.code + 1, c.code));
	/* [24, 72) holds functions 2, 3; 1 and 4 straddle its ends. */
	EXPECT_EQ(2, sframe_jit_remove_range(c.reg, c.code + 24, c.code + 72));
	EXPECT_EQ(2, info_of(c.reg).nr_tombstones);
	EXPECT_EQ(12, info_of(c.reg).nr_rows_live);
	EXPECT_EQ(0, sframe_jit_remove_range(c.reg, c.code + 24, c.code + 72));
	EXPECT_EQ(0, sframe_jit_find(c.reg, c.code + 16, NULL, NULL, 0));
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, c.code + 32, NULL, NULL, 0));
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, c.code + 48, NULL, NULL, 0));
	EXPECT_EQ(0, sframe_jit_find(c.reg, c.code + 64, NULL, NULL, 0));
	EXPECT_EQ(6, sframe_jit_remove_range(c.reg, c.code, c.code + CODE_SIZE));
	EXPECT_EQ(0, info_of(c.reg).nr_funcs);
	read_checked(&c);
	sframe_jit_destroy(c.reg);
}

/* Compaction */

TEST(compact_drops_tombstones_and_packs_rows, T_BOTH)
{
	struct sframe_jit_row rows[5], got[5];
	struct sframe_jit_func fn;
	struct ctx c;
	/* Out of address order, so that rows and descriptors differ. */
	static const int order[] = { 5, 1, 4, 0, 3, 2 };
	int i, k;

	setup(&c, NULL);
	for (k = 0; k < 6; k++) {
		i = order[k];
		for (int r = 0; r <= i % 5; r++)
			rows[r] = (struct sframe_jit_row) {
				.start_off = r, .cfa_off = 8 + 8 * r + i,
				.ra_off = -8,
			};
		EXPECT_EQ(0, sframe_jit_add(c.reg, c.code + 64 * i, 32, rows,
					    i % 5 + 1, NULL));
	}
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 64));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 128));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 256));
	read_checked(&c);
	EXPECT_EQ(6, c.t.count);
	EXPECT_EQ(3, sframe_jit_compact(c.reg));
	EXPECT_EQ(info_of(c.reg).nr_rows_live, info_of(c.reg).nr_rows_used);
	EXPECT_EQ(1 + 4 + 1, info_of(c.reg).nr_rows_used);
	read_checked(&c);
	EXPECT_EQ(3, c.t.count);
	for (k = 0; k < 6; k++) {
		i = order[k];
		if (i == 1 || i == 2 || i == 4)
			continue;
		ASSERT_EQ(0, sframe_jit_find(c.reg, c.code + 64 * i, &fn, got,
					     5));
		EXPECT_EQ(i % 5 + 1, fn.nr_rows);
		for (int r = 0; r <= i % 5; r++)
			EXPECT_EQ(8 + 8 * r + i, got[r].cfa_off);
		EXPECT(table_func(&c.t, c.code + 64 * i));
	}
	sframe_jit_destroy(c.reg);
}

TEST(compact_with_nothing_to_reclaim_leaves_seq_alone, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0, 16));
	EXPECT_EQ(0, sframe_jit_compact(c.reg));
	read_checked(&c);
	EXPECT_EQ(0, c.t.seq);
	EXPECT_EQ(0, info_of(c.reg).nr_compactions);
	EXPECT_EQ(-EINVAL, sframe_jit_compact(NULL));
	sframe_jit_destroy(c.reg);
}

/* Growth */

TEST(grow_replaces_the_registry_and_keeps_its_content, T_BOTH)
{
	struct sframe_jit_header *before;
	struct sframe_jit_info info;
	struct ctx c;
	int i;

	setup(&c, NULL);
	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, add2(&c, 0x1000 - 64 * i, 32));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 0x1000));
	before = reg_hdr(&c.tb);
	EXPECT_EQ(0, sframe_jit_grow(c.reg, 200, 1000));
	EXPECT(reg_hdr(&c.tb) != before);
	EXPECT_EQ(1, c.tb.nr_replaces);
	EXPECT_EQ(1, c.tb.nr_unmaps);
	info = info_of(c.reg);
	EXPECT(info.fde_capacity >= 200);
	EXPECT(info.fre_capacity >= 1000);
	EXPECT_EQ(1, info.nr_grows);
	EXPECT_EQ(9, info.nr_funcs);
	read_checked(&c);
	EXPECT_EQ(10, c.t.count);
	EXPECT_EQ(18, c.t.seq);
	EXPECT_EQ(9, table_live(&c.t));
	/* And it goes on working. */
	EXPECT_EQ(0, add2(&c, 0x2000, 32));
	EXPECT_EQ(0, add2(&c, 0x0800, 32));
	read_checked(&c);
	EXPECT_EQ(12, c.t.count);
	sframe_jit_destroy(c.reg);
}

TEST(grow_to_a_smaller_size_does_nothing, T_BOTH)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, sframe_jit_grow(c.reg, 1, 1));
	EXPECT_EQ(0, sframe_jit_grow(c.reg, 64, 256));
	EXPECT_EQ(0, c.tb.nr_replaces);
	EXPECT_EQ(-EINVAL, sframe_jit_grow(NULL, 1, 1));
	sframe_jit_destroy(c.reg);
}

TEST(grow_above_the_maximum_is_enospc, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 4,
			.max_fde_capacity = 16);
	struct ctx c;

	setup(&c, &opts);
	EXPECT_EQ(-ENOSPC, sframe_jit_grow(c.reg, 17, 0));
	EXPECT_EQ(-ENOSPC, sframe_jit_grow(c.reg, 4, SFRAME_JIT_MAX_FRES + 1));
	EXPECT_EQ(0, c.tb.nr_replaces);
	EXPECT_EQ(0, sframe_jit_grow(c.reg, 16, 0));
	EXPECT_EQ(16, info_of(c.reg).fde_capacity);
	sframe_jit_destroy(c.reg);
}

TEST(failed_growth_leaves_the_registry_usable, T_BOTH)
{
	struct sframe_jit_header *before;
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0, 32));
	before = reg_hdr(&c.tb);
	c.tb.fail_replace = ENOMEM;
	EXPECT_EQ(-ENOMEM, sframe_jit_grow(c.reg, 1000, 4000));
	EXPECT(reg_hdr(&c.tb) == before);
	EXPECT_EQ(0, c.tb.nr_unmaps);
	EXPECT_EQ(64, info_of(c.reg).fde_capacity);
	EXPECT_EQ(0, add2(&c, 32, 32));
	read_checked(&c);
	EXPECT_EQ(2, c.t.count);
	sframe_jit_destroy(c.reg);
}

TEST(a_full_registry_grows_on_demand, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 2,
			.fre_capacity = 3);
	struct sframe_jit_info info;
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, add2(&c, 0x10000 - 32 * i, 16));
	info = info_of(c.reg);
	EXPECT_EQ(40, info.nr_funcs);
	EXPECT(info.nr_grows >= 4);
	EXPECT(info.fde_capacity >= 40);
	EXPECT_EQ(info.nr_grows, c.tb.nr_replaces);
	EXPECT_EQ(info.nr_grows, c.tb.nr_unmaps);
	read_checked(&c);
	EXPECT_EQ(40, c.t.count);
	EXPECT_EQ(80, info.nr_rows_used);
	sframe_jit_destroy(c.reg);
}

TEST(a_full_registry_without_growth_reports_enospc_intact, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 4,
			.fre_capacity = 8, .flags = SFRAME_JIT_F_NO_GROW);
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, add2(&c, 64 * i, 32));
	read_checked(&c);
	EXPECT_EQ(-ENOSPC, add2(&c, 512, 32));
	EXPECT_EQ(-ENOSPC, add2(&c, 40, 8));
	EXPECT_EQ(0, c.tb.nr_replaces);
	read_checked(&c);
	EXPECT_EQ(4, c.t.count);
	EXPECT_EQ(0, c.t.seq);
	/* Removing makes room, by compaction. */
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 64));
	EXPECT_EQ(0, add2(&c, 512, 32));
	EXPECT_EQ(1, info_of(c.reg).nr_compactions);
	read_checked(&c);
	EXPECT_EQ(4, c.t.count);
	/* Explicit growth is still allowed. */
	EXPECT_EQ(0, sframe_jit_grow(c.reg, 8, 16));
	EXPECT_EQ(0, add2(&c, 1024, 32));
	sframe_jit_destroy(c.reg);
}

TEST(a_full_registry_reports_enospc_at_its_maximum, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 2,
			.max_fde_capacity = 8, .max_fre_capacity = 100);
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 8; i++)
		EXPECT_EQ(0, add2(&c, 64 * i, 32));
	EXPECT_EQ(-ENOSPC, add2(&c, 1024, 32));
	EXPECT_EQ(8, info_of(c.reg).fde_capacity);
	read_checked(&c);
	EXPECT_EQ(8, c.t.count);
	sframe_jit_destroy(c.reg);
}

TEST(when_rows_run_out_a_registry_grows_its_row_area, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 64,
			.fre_capacity = 4);
	struct sframe_jit_info info;
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, add2(&c, 64 * i, 32));
	info = info_of(c.reg);
	EXPECT_EQ(64, info.fde_capacity);
	EXPECT(info.fre_capacity >= 10);
	sframe_jit_destroy(c.reg);
}

TEST(failed_growth_falls_back_to_compaction, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 64,
			.fre_capacity = 128, .compact_threshold = 1000);
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 64; i++)
		EXPECT_EQ(0, add2(&c, 64 * i, 32));
	/* One tombstone is not worth a compaction while growth is possible. */
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code));
	c.tb.fail_replace = ENOMEM;
	EXPECT_EQ(0, add2(&c, 64 * 64, 32));
	EXPECT_EQ(1, c.tb.nr_replaces);
	EXPECT_EQ(1, info_of(c.reg).nr_compactions);
	read_checked(&c);
	EXPECT_EQ(64, c.t.count);
	/* Now full, with nothing to reclaim: the growth error comes back. */
	c.tb.fail_replace = ENOMEM;
	EXPECT_EQ(-ENOMEM, add2(&c, 64 * 65, 32));
	sframe_jit_destroy(c.reg);
}

TEST(a_registry_compacts_rather_than_grows_when_that_frees_enough, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 16,
			.compact_threshold = 1000);
	struct ctx c;
	int i;

	setup(&c, &opts);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, add2(&c, 64 * i, 32));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 64));
	EXPECT_EQ(0, sframe_jit_remove(c.reg, c.code + 128));
	EXPECT_EQ(0, add2(&c, 64 * 16, 32));
	EXPECT_EQ(0, c.tb.nr_replaces);
	EXPECT_EQ(1, info_of(c.reg).nr_compactions);
	sframe_jit_destroy(c.reg);
}

/* The layout comes from the header. */

static void exercise(struct ctx *c)
{
	struct sframe_jit_row got[2];
	struct sframe_jit_func fn;
	int i;

	for (i = 0; i < 20; i++)
		EXPECT_EQ(0, add2(c, 0x4000 - 64 * i, 32 + i));
	for (i = 0; i < 20; i += 3)
		EXPECT_EQ(0, sframe_jit_remove(c->reg, c->code + 0x4000 - 64 * i));
	EXPECT(sframe_jit_compact(c->reg) > 0);
	EXPECT_EQ(0, sframe_jit_grow(c->reg, 100, 300));
	for (i = 1; i < 20; i++) {
		if (i % 3 == 0)
			continue;
		ASSERT_EQ(0, sframe_jit_find(c->reg, c->code + 0x4000 - 64 * i,
					     &fn, got, 2));
		EXPECT_EQ(32 + i, fn.size);
		EXPECT(rows_equal(got, two_rows, 2));
	}
	read_checked(c);
	EXPECT_EQ(13, table_live(&c->t));
}

TEST(the_layout_is_read_from_the_header, T_MEM)
{
	struct ctx c;

	memset(&c, 0, sizeof(c));
	test_backend_init(&c.tb);
	c.tb.layout = (struct sframe_jit_mem_layout) {
		.fde_stride = 40, .fre_stride = 20, .header_size = 1024,
		.fde_pages = 3,
	};
	c.code = arena(CODE_SIZE);
	c.reg = reg_new(&c.tb, c.code, c.code + CODE_SIZE, NULL);
	EXPECT_EQ(4 * 4096, reg_hdr(&c.tb)->fde_off);
	exercise(&c);
	sframe_jit_destroy(c.reg);
}

TEST(records_are_copied_again_when_a_replacement_changes_strides, T_MEM)
{
	struct ctx c;

	setup(&c, NULL);
	c.tb.layout = (struct sframe_jit_mem_layout) {
		.fde_stride = 48, .fre_stride = 32,
	};
	exercise(&c);
	EXPECT_EQ(48, reg_hdr(&c.tb)->fde_stride);
	sframe_jit_destroy(c.reg);
}

TEST(a_replacement_with_an_unknown_layout_is_eproto, T_MEM)
{
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 0, 32));
	c.tb.spoil_next = true;
	EXPECT_EQ(-EPROTO, sframe_jit_grow(c.reg, 128, 512));
	EXPECT_EQ(64, info_of(c.reg).fde_capacity);
	EXPECT_EQ(0, sframe_jit_find(c.reg, c.code, NULL, NULL, 0));
	sframe_jit_destroy(c.reg);
}

/* Reading back */

TEST(find_returns_the_live_function_holding_an_address, T_BOTH)
{
	struct sframe_jit_row got[2];
	struct sframe_jit_func fn;
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(0, add2(&c, 100, 50));
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, c.code + 99, &fn, NULL, 0));
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, c.code + 150, &fn, NULL, 0));
	EXPECT_EQ(-ENOENT, sframe_jit_find(c.reg, UINT64_MAX, &fn, NULL, 0));
	ASSERT_EQ(0, sframe_jit_find(c.reg, c.code + 149, &fn, got, 1));
	EXPECT_EQ(c.code + 100, fn.start);
	EXPECT_EQ(50, fn.size);
	EXPECT_EQ(2, fn.nr_rows);
	EXPECT_EQ(0, fn.stub_size);
	EXPECT(rows_equal(got, two_rows, 1));
	EXPECT_EQ(0, sframe_jit_find(c.reg, c.code + 100, NULL, got, 2));
	EXPECT(rows_equal(got, two_rows, 2));
	EXPECT_EQ(-EINVAL, sframe_jit_find(c.reg, c.code + 100, NULL, NULL, 2));
	sframe_jit_destroy(c.reg);
}

TEST(get_info_fills_what_the_caller_knows, T_BOTH)
{
	struct {
		struct sframe_jit_info i;
		uint64_t later;
	} big = { .i.sz = sizeof(big), .later = 0x5a5a };
	struct sframe_jit_info info = { .sz = 8 };
	struct ctx c;

	setup(&c, NULL);
	EXPECT_EQ(-EINVAL, sframe_jit_get_info(c.reg, &info));
	EXPECT_EQ(-EINVAL, sframe_jit_get_info(NULL, &info));
	EXPECT_EQ(0, sframe_jit_get_info(c.reg, &big.i));
	EXPECT_EQ(sizeof(big), big.i.sz);
	EXPECT_EQ(0x5a5a, big.later);
	EXPECT_EQ(64, big.i.fde_capacity);
	sframe_jit_destroy(c.reg);
}
