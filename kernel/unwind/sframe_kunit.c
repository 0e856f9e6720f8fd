// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the SFrame row lookup, in ELF sections, in the tables
 * converted from them and in JIT registries, of the caps on a converted
 * table, and of the evaluation of a row.  The cases are those of
 * sframe_test_cases.h, which tools/testing/sframe also runs in userspace.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "sframe_jit_read.h"
#include "sframe_row.h"
#include "sframe_sec.h"
#include "sframe_table.h"
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

/*
 * The converted table of @sec, freed with the test; NULL on -E2BIG.  As
 * the kernel keeps it: its buffer of exactly the size sframe_table_size()
 * gives and its rules in one of their own, so that KASAN sees any read
 * past either, the build's scratch buffer freed.
 */
static struct sframe_table *sframe_kunit_table(struct kunit *test,
					       const struct sframe_sec *sec,
					       int want)
{
	size_t size, scratch_size;
	struct sframe_row *rules;
	struct sframe_table *t;
	const char *msg;
	void *scratch;
	int err;

	err = sframe_table_size(sec, &size, &scratch_size);
	KUNIT_EXPECT_EQ(test, err, want);
	if (err)
		return NULL;
	t = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	scratch = kunit_kzalloc(test, scratch_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, scratch);
	KUNIT_ASSERT_EQ(test, sframe_table_build(sec, t, size, scratch,
						 scratch_size), 0);
	msg = sframe_test_table_rules(t);
	KUNIT_EXPECT_NULL_MSG(test, msg, "%s", msg);
	KUNIT_EXPECT_LE(test, size, sframe_table_bound(sec));
	rules = kunit_kmalloc(test, sframe_table_rules_bytes(t) + 1,
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rules);
	sframe_table_keep_rules(t, rules);
	kunit_kfree(test, scratch);
	return t;
}

KUNIT_ARRAY_PARAM_DESC(sframe_elf, sframe_test_elf_cases, name);

static void sframe_elf_lookup_test(struct kunit *test)
{
	const struct sframe_test_elf *c = test->param_value;
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_table *t;
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
	if (sframe_sec_validate(&sec))
		return;
	/* A section that registers is looked up in its table: the same. */
	t = sframe_kunit_table(test, &sec, 0);
	row = poison;
	ret = sframe_table_find(t, c->pc, &row);
	sframe_expect_result(test, ret, c->result, &row, &c->row, &poison);
}

KUNIT_ARRAY_PARAM_DESC(sframe_many, sframe_test_many_cases, name);

/*
 * The caps of a converted table: a table within them gives the
 * section's answers around its function, in at most
 * SFRAME_TABLE_MAX_READS records.
 */
static void sframe_table_caps_test(struct kunit *test)
{
	const struct sframe_test_many *c = test->param_value;
	unsigned long f = SFT_MANY_FUNC, n = sft_many_func_size(c);
	const unsigned long pcs[] = {
		f - 1, f, f + 1, f + n / 2, f + n - 2, f + n - 1, f + n,
		f + 0x4b,
	};
	size_t size = sframe_test_many_size(c);
	struct sframe_row want, got;
	enum sframe_find_result ret;
	struct sframe_table *t;
	struct sframe_sec sec;
	unsigned int i;
	u32 reads;
	u8 *buf;

	buf = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sframe_test_many_fill(c, buf);
	KUNIT_ASSERT_EQ(test, sframe_sec_init(&sec, buf, size, SFT_BASE), 0);
	KUNIT_ASSERT_EQ(test, sframe_sec_validate(&sec), 0);
	t = sframe_kunit_table(test, &sec, c->size);
	if (!t)
		return;
	KUNIT_EXPECT_EQ(test, t->nr_rules, sft_many_rules(c));
	for (i = 0; i < ARRAY_SIZE(pcs); i++) {
		memset(&want, 0x5a, sizeof(want));
		memset(&got, 0x5a, sizeof(got));
		ret = sframe_table_find_reads(t, pcs[i], &got, &reads);
		KUNIT_EXPECT_EQ(test, ret, sframe_sec_find(&sec, pcs[i], &want));
		KUNIT_EXPECT_MEMEQ(test, &got, &want, sizeof(got));
		KUNIT_EXPECT_LE(test, reads, SFRAME_TABLE_MAX_READS);
	}
	/* Rows that share rules: every PC, one rule read for each row. */
	for (i = 0; c->rules && i <= n + 1; i++) {
		memset(&want, 0x5a, sizeof(want));
		memset(&got, 0x5a, sizeof(got));
		ret = sframe_table_find(t, f - 1 + i, &got);
		KUNIT_EXPECT_EQ(test, ret, sframe_sec_find(&sec, f - 1 + i, &want));
		KUNIT_EXPECT_MEMEQ(test, &got, &want, sizeof(got));
	}
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

KUNIT_ARRAY_PARAM_DESC(sframe_cjit, sframe_test_cjit_cases, name);

static void sframe_cjit_lookup_test(struct kunit *test)
{
	const struct sframe_test_cjit *c = test->param_value;
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_jit_view v;
	void *buf;

	KUNIT_ASSERT_LE(test, c->nr_fdes, c->fde_cap);
	KUNIT_ASSERT_LE(test, c->nr_fres, c->fre_cap);
	KUNIT_ASSERT_LE(test, c->nr_rules, c->rule_cap);
	buf = kunit_kmalloc(test, sframe_test_cjit_size(c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	sframe_test_cjit_fill(buf, c, &v);
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
	KUNIT_CASE_PARAM(sframe_table_caps_test, sframe_many_gen_params),
	KUNIT_CASE_PARAM(sframe_jit_lookup_test, sframe_jit_gen_params),
	KUNIT_CASE_PARAM(sframe_cjit_lookup_test, sframe_cjit_gen_params),
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
