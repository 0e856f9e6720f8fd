// SPDX-License-Identifier: GPL-2.0
/*
 * Frame rows of x86-64 shapes, against rows worked out by hand from the
 * instructions (the same rows GNU as derives from gcc's CFI for them).
 */
#include <string.h>

#include "test.h"

#define SP	SFRAME_JIT_ROW_CFA_SP
#define FP	SFRAME_JIT_ROW_CFA_FP
#define SAVED	SFRAME_JIT_ROW_FP_SAVED

#define ROW(off, base, cfa)						\
	{ .start_off = (off), .cfa_base = (base), .cfa_off = (cfa),	\
	  .ra_off = -8 }
#define ROW_FP(off, base, cfa)						\
	{ .start_off = (off), .cfa_base = (base), .cfa_off = (cfa),	\
	  .ra_off = -8, .fp_off = -16, .flags = SAVED }

/*
 * Field by field: a row has two bytes of padding, which neither
 * sframe_jit_x86_64_rows() nor sframe_jit_find() is bound to write.
 */
static bool row_eq(const struct sframe_jit_row *a,
		   const struct sframe_jit_row *b)
{
	return a->start_off == b->start_off && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->cfa_base == b->cfa_base && a->flags == b->flags;
}

static void expect_rows(const struct sframe_jit_x86_64_frame *f, uint32_t size,
			const struct sframe_jit_row *want, int n)
{
	struct sframe_jit_row got[32];
	int i, count;

	memset(got, 0xa5, sizeof(got));
	count = sframe_jit_x86_64_rows(f, size, NULL, 0);
	EXPECT_EQ(n, count);
	ASSERT_EQ(n, sframe_jit_x86_64_rows(f, size, got, ARRAY_SIZE(got)));
	for (i = 0; i < n; i++) {
		if (row_eq(&got[i], &want[i]))
			continue;
		test_fail(__FILE__, __LINE__,
			  "row %d: got {%u, base %u, cfa %d, ra %d, fp %d, %#x}, want {%u, base %u, cfa %d, ra %d, fp %d, %#x}",
			  i, got[i].start_off, got[i].cfa_base, got[i].cfa_off,
			  got[i].ra_off, got[i].fp_off, got[i].flags,
			  want[i].start_off, want[i].cfa_base, want[i].cfa_off,
			  want[i].ra_off, want[i].fp_off, want[i].flags);
	}
}

TEST(x86_64_a_function_without_frame_has_one_row, T_MEM)
{
	static const struct sframe_jit_x86_64_frame none;
	static const struct sframe_jit_row want[] = { ROW(0, SP, 8) };

	expect_rows(NULL, 10, want, 1);
	expect_rows(&none, 1, want, 1);
}

/* 0 push %rbp; 1 mov %rsp,%rbp; 4 mov $42,%eax; 9 pop %rbp; 10 ret */
TEST(x86_64_a_frame_pointer_frame_switches_to_fp, T_MEM)
{
	static const struct sframe_jit_x86_64_epilogue epi = {
		.pop_rbp = 10, .ret = 11,
	};
	static const struct sframe_jit_x86_64_frame f = {
		.push_rbp = 1, .mov_rbp = 4, .nr_epilogues = 1,
		.epilogue = &epi,
	};
	static const struct sframe_jit_row want[] = {
		ROW(0, SP, 8), ROW_FP(1, SP, 16), ROW_FP(4, FP, 16),
		ROW(10, SP, 8),
	};

	expect_rows(&f, 11, want, ARRAY_SIZE(want));
}

/*
 * Without frame pointer, two exits:
 *  0 push %rbx; 1 push %r12; 3 sub $0x20,%rsp; ...
 * 40 add $0x20,%rsp; 44 pop %r12; 46 pop %rbx; 47 ret; 48 ...
 * 60 add $0x20,%rsp; 64 pop %r12; 66 pop %rbx; 67 ret
 */
TEST(x86_64_pushes_and_stack_allocation_move_an_sp_based_cfa, T_MEM)
{
	static const struct sframe_jit_x86_64_epilogue epi[] = {
		{ .add_rsp = 44, .pop = { 46, 47 }, .ret = 48 },
		{ .add_rsp = 64, .pop = { 66, 67 }, .ret = 68 },
	};
	static const struct sframe_jit_x86_64_frame f = {
		.nr_saves = 2, .save = { 1, 3 }, .sub_rsp = 7,
		.stack_size = 0x20, .nr_epilogues = 2, .epilogue = epi,
	};
	static const struct sframe_jit_row want[] = {
		ROW(0, SP, 8), ROW(1, SP, 16), ROW(3, SP, 24), ROW(7, SP, 56),
		ROW(44, SP, 24), ROW(46, SP, 16), ROW(47, SP, 8),
		ROW(48, SP, 56),
		ROW(64, SP, 24), ROW(66, SP, 16), ROW(67, SP, 8),
	};

	expect_rows(&f, 68, want, ARRAY_SIZE(want));
}

/*
 * 0 push %rbp; 1 mov %rsp,%rbp; 4 push %rbx; 5 push %r12;
 * 7 sub $0x30,%rsp; ... 26 lea -0x10(%rbp),%rsp; 30 pop %r12;
 * 32 pop %rbx; 33 pop %rbp; 34 ret
 */
TEST(x86_64_an_fp_based_cfa_ignores_pushes_and_allocation, T_MEM)
{
	static const struct sframe_jit_x86_64_epilogue epi = {
		.add_rsp = 30, .pop = { 32, 33 }, .pop_rbp = 34, .ret = 35,
	};
	static const struct sframe_jit_x86_64_epilogue leave = {
		.pop_rbp = 31, .ret = 32,
	};
	struct sframe_jit_x86_64_frame f = {
		.push_rbp = 1, .mov_rbp = 4, .nr_saves = 2, .save = { 5, 7 },
		.sub_rsp = 11, .stack_size = 0x30, .nr_epilogues = 1,
		.epilogue = &epi,
	};
	static const struct sframe_jit_row want[] = {
		ROW(0, SP, 8), ROW_FP(1, SP, 16), ROW_FP(4, FP, 16),
		ROW(34, SP, 8),
	};
	static const struct sframe_jit_row want_leave[] = {
		ROW(0, SP, 8), ROW_FP(1, SP, 16), ROW_FP(4, FP, 16),
		ROW(31, SP, 8),
	};

	expect_rows(&f, 35, want, ARRAY_SIZE(want));
	/* "leave; ret", the pops left out: they do not move the CFA. */
	f.epilogue = &leave;
	expect_rows(&f, 32, want_leave, ARRAY_SIZE(want_leave));
}

/*
 * %rbp saved as a callee-saved register, no frame pointer:
 * 0 push %rbp; 1 push %rbx; 2 sub $8,%rsp; 6 ...; 10 add $8,%rsp;
 * 14 pop %rbx; 15 pop %rbp; 16 ret; 17 ... (code after the exit)
 */
TEST(x86_64_rbp_pushed_without_frame_pointer_is_saved_but_sp_based, T_MEM)
{
	static const struct sframe_jit_x86_64_epilogue epi = {
		.add_rsp = 14, .pop = { 15 }, .pop_rbp = 16, .ret = 17,
	};
	static const struct sframe_jit_x86_64_frame f = {
		.push_rbp = 1, .nr_saves = 1, .save = { 2 }, .sub_rsp = 6,
		.stack_size = 8, .nr_epilogues = 1, .epilogue = &epi,
	};
	static const struct sframe_jit_row want[] = {
		ROW(0, SP, 8), ROW_FP(1, SP, 16), ROW_FP(2, SP, 24),
		ROW_FP(6, SP, 32), ROW_FP(14, SP, 24), ROW_FP(15, SP, 16),
		ROW(16, SP, 8), ROW_FP(17, SP, 32),
	};

	expect_rows(&f, 30, want, ARRAY_SIZE(want));
}

TEST(x86_64_inconsistent_frames_are_einval, T_MEM)
{
	static const struct sframe_jit_x86_64_epilogue no_add = {
		.pop = { 20 }, .ret = 21,
	};
	static const struct sframe_jit_x86_64_epilogue no_pop = {
		.add_rsp = 20, .ret = 21,
	};
	static const struct sframe_jit_x86_64_epilogue stray_pop_rbp = {
		.add_rsp = 18, .pop = { 20 }, .pop_rbp = 21, .ret = 22,
	};
	static const struct sframe_jit_x86_64_epilogue extra_pop = {
		.add_rsp = 18, .pop = { 20, 21 }, .ret = 22,
	};
	static const struct sframe_jit_x86_64_epilogue early = {
		.add_rsp = 3, .pop = { 5 }, .ret = 6,
	};
	struct sframe_jit_x86_64_frame base = {
		.nr_saves = 1, .save = { 2 }, .sub_rsp = 6, .stack_size = 16,
		.nr_epilogues = 1,
	};
	struct sframe_jit_x86_64_frame f;

	f = base;
	f.epilogue = &no_add;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f.epilogue = &no_pop;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f.epilogue = &stray_pop_rbp;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f.epilogue = &extra_pop;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f.epilogue = &early;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f.epilogue = NULL;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f = base;
	f.nr_epilogues = 0;
	EXPECT_EQ(3, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 5, NULL, 0));
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 0, NULL, 0));
	f.sub_rsp = 0;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f = base;
	f.nr_epilogues = 0;
	f.nr_saves = SFRAME_JIT_X86_64_MAX_SAVES + 1;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f.nr_saves = 2;
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f = (struct sframe_jit_x86_64_frame) { .mov_rbp = 3 };
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
	f = (struct sframe_jit_x86_64_frame) { .push_rbp = 4, .mov_rbp = 2 };
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 30, NULL, 0));
}

TEST(x86_64_rows_need_room, T_MEM)
{
	static const struct sframe_jit_x86_64_frame f = {
		.push_rbp = 1, .mov_rbp = 4,
	};
	struct sframe_jit_row rows[3];

	EXPECT_EQ(3, sframe_jit_x86_64_rows(&f, 20, NULL, 0));
	EXPECT_EQ(-ENOSPC, sframe_jit_x86_64_rows(&f, 20, rows, 2));
	EXPECT_EQ(3, sframe_jit_x86_64_rows(&f, 20, rows, 3));
	/* A row at the end is left out; an instruction past it is wrong. */
	EXPECT_EQ(2, sframe_jit_x86_64_rows(&f, 4, rows, 3));
	EXPECT_EQ(-EINVAL, sframe_jit_x86_64_rows(&f, 3, rows, 3));
}

TEST(add_x86_64_publishes_the_rows_of_the_shape, T_BOTH)
{
	static const struct sframe_jit_x86_64_epilogue epi[] = {
		{ .add_rsp = 44, .pop = { 46, 47 }, .ret = 48 },
		{ .add_rsp = 64, .pop = { 66, 67 }, .ret = 68 },
	};
	static const struct sframe_jit_x86_64_frame f = {
		.nr_saves = 2, .save = { 1, 3 }, .sub_rsp = 7,
		.stack_size = 0x20, .nr_epilogues = 2, .epilogue = epi,
	};
	struct sframe_jit_row want[16], got[16];
	struct sframe_jit_func fn;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(4096);
	int i, n;

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + 4096, NULL);
	n = sframe_jit_x86_64_rows(&f, 68, want, ARRAY_SIZE(want));
	ASSERT_EQ(11, n);
	EXPECT_EQ(0, sframe_jit_add_x86_64(reg, code, 68, &f, "f"));
	ASSERT_EQ(0, sframe_jit_find(reg, code, &fn, got, ARRAY_SIZE(got)));
	EXPECT_EQ(n, fn.nr_rows);
	for (i = 0; i < n; i++)
		EXPECT(row_eq(&got[i], &want[i]));
	EXPECT_EQ(0, sframe_jit_add_x86_64(reg, code + 100, 5, NULL, NULL));
	ASSERT_EQ(0, sframe_jit_find(reg, code + 100, &fn, got, 16));
	EXPECT_EQ(1, fn.nr_rows);
	EXPECT_EQ(8, got[0].cfa_off);
	EXPECT_EQ(-EINVAL, sframe_jit_add_x86_64(reg, code + 200, 5, &f, NULL));
	sframe_jit_destroy(reg);
}

TEST(add_x86_64_handles_many_epilogues, T_MEM)
{
	struct sframe_jit_x86_64_epilogue epi[40];
	struct sframe_jit_x86_64_frame f = {
		.push_rbp = 1, .mov_rbp = 4, .nr_epilogues = 40,
		.epilogue = epi,
	};
	struct sframe_jit_func fn;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(4096);
	int i;

	for (i = 0; i < 40; i++)
		epi[i] = (struct sframe_jit_x86_64_epilogue) {
			.pop_rbp = 10 + 10 * i, .ret = 11 + 10 * i,
		};
	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + 4096, NULL);
	EXPECT_EQ(0, sframe_jit_add_x86_64(reg, code, 420, &f, NULL));
	ASSERT_EQ(0, sframe_jit_find(reg, code, &fn, NULL, 0));
	EXPECT_EQ(3 + 2 * 40, fn.nr_rows);
	sframe_jit_destroy(reg);
}
