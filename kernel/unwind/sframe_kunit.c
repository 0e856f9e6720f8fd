// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the SFrame row lookup, in ELF sections and in JIT
 * registries, and of the evaluation of a row.  The cases are those of
 * sframe_test_cases.h, which tools/testing/sframe also runs in userspace.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "sframe.h"
#include "sframe_test_cases.h"

static void sframe_expect_row(struct kunit *test, const struct sframe_row *got,
			      const struct sframe_row *want)
{
	KUNIT_EXPECT_EQ(test, got->cfa_base, want->cfa_base);
	KUNIT_EXPECT_EQ(test, got->cfa_off, want->cfa_off);
	KUNIT_EXPECT_EQ(test, got->ra_undefined, want->ra_undefined);
	KUNIT_EXPECT_EQ(test, got->ra_off, want->ra_off);
	KUNIT_EXPECT_EQ(test, got->fp_saved, want->fp_saved);
	KUNIT_EXPECT_EQ(test, got->fp_off, want->fp_off);
	KUNIT_EXPECT_EQ(test, got->signal, want->signal);
}

/*
 * A lookup gives a row on a hit only: otherwise @row keeps the poison it
 * was filled with.
 */
static void sframe_expect_result(struct kunit *test,
				 enum sframe_find_result got,
				 enum sframe_find_result want,
				 const struct sframe_row *row,
				 const struct sframe_row *want_row,
				 const struct sframe_row *poison)
{
	KUNIT_EXPECT_EQ(test, got, want);
	if (got != SFRAME_FIND_HIT)
		KUNIT_EXPECT_MEMEQ(test, row, poison, sizeof(*row));
	else if (want == SFRAME_FIND_HIT)
		sframe_expect_row(test, row, want_row);
}

KUNIT_ARRAY_PARAM_DESC(sframe_elf, sframe_test_elf_cases, name);

static void sframe_elf_lookup_test(struct kunit *test)
{
	const struct sframe_test_elf *c = test->param_value;
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_sec sec;
	u8 *buf;

	/* Exactly the section's size, so that KASAN sees any overread. */
	buf = kunit_kmalloc(test, c->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_TRUE(test, sframe_test_elf_bytes(c, buf));
	KUNIT_ASSERT_EQ(test, sframe_sec_init(&sec, buf, c->size, SFT_BASE),
			c->init);
	if (c->init)
		return;
	memset(&poison, 0x5a, sizeof(poison));
	row = poison;
	ret = sframe_sec_find(&sec, c->pc, &row);
	sframe_expect_result(test, ret, c->result, &row, &c->row, &poison);
}

KUNIT_ARRAY_PARAM_DESC(sframe_jit, sframe_test_jit_cases, name);

static void sframe_jit_lookup_test(struct kunit *test)
{
	const struct sframe_test_jit *c = test->param_value;
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_jit_view v;
	void *buf;

	KUNIT_ASSERT_LE(test, c->nr_fdes, c->fde_cap);
	KUNIT_ASSERT_LE(test, c->nr_fres, c->fre_cap);
	buf = kunit_kmalloc(test, sframe_test_jit_size(c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sframe_test_jit_fill(buf, c, &v);
	memset(&poison, 0x5a, sizeof(poison));
	row = poison;
	ret = sframe_jit_find(&v, c->pc, &row);
	sframe_expect_result(test, ret, c->result, &row, &c->row, &poison);
}

KUNIT_ARRAY_PARAM_DESC(sframe_apply, sframe_test_apply_cases, name);

static void sframe_row_apply_test(struct kunit *test)
{
	const struct sframe_test_apply *c = test->param_value;
	struct sframe_step step = {};

	KUNIT_ASSERT_EQ(test, sframe_row_apply(&c->row, c->sp, c->fp, &step),
			c->ret);
	if (c->ret)
		return;
	KUNIT_EXPECT_EQ(test, step.cfa, c->step.cfa);
	KUNIT_EXPECT_EQ(test, step.ra_addr, c->step.ra_addr);
	KUNIT_EXPECT_EQ(test, step.fp_saved, c->step.fp_saved);
	KUNIT_EXPECT_EQ(test, step.fp_addr, c->step.fp_addr);
}

static struct kunit_case sframe_kunit_cases[] = {
	KUNIT_CASE_PARAM(sframe_elf_lookup_test, sframe_elf_gen_params),
	KUNIT_CASE_PARAM(sframe_jit_lookup_test, sframe_jit_gen_params),
	KUNIT_CASE_PARAM(sframe_row_apply_test, sframe_apply_gen_params),
	{}
};

static struct kunit_suite sframe_kunit_suite = {
	.name = "sframe",
	.test_cases = sframe_kunit_cases,
};

kunit_test_suite(sframe_kunit_suite);

MODULE_DESCRIPTION("KUnit tests of the SFrame row lookup");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
