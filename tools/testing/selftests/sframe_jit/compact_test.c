// SPDX-License-Identifier: GPL-2.0
/*
 * Compact JIT registries (SFRAME_JIT_F_COMPACT): the arguments
 * sframe_register(2) refuses, the layout the header describes, what
 * SFRAME_REPLACE_JIT carries over and refuses, and the charge.  perf
 * samples through compact registries are sample_test's "compact"
 * variants.
 */
#include "sframe_test.h"

#include <stdint.h>

/* Room for a 4 GiB range and a page on each side, never touched. */
#define BIG_RANGE	(1ULL << 32)

#define NFDE		100U
#define NFRE		1000U
#define NRULE		50U

static size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

/* The mapping's size, in the header the kernel wrote. */
static size_t map_size(const struct sframe_jit_header *h)
{
	return h->map_size;
}

FIXTURE(compact) {
	char *arena;
	__u64 start, end;
};

FIXTURE_SETUP(compact)
{
	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(16);
	ASSERT_NE(MAP_FAILED, self->arena);
	self->start = (unsigned long)self->arena + 4 * page_size();
	self->end = self->start + 4 * page_size();
}

FIXTURE_TEARDOWN(compact)
{
}

static int reg_flags(FIXTURE_DATA(compact) *self, __u32 flags, __u32 nrule,
		     struct sframe_jit_header **hdr)
{
	return jit_op_flags(flags, -1, self->start, self->end, NFDE, NFRE,
			    nrule, hdr, NULL);
}

TEST_F(compact, unknown_flag_bits_are_einval)
{
	__u32 flags[] = {
		0x10, 0x20, 1U << 31, UINT32_MAX,
		SFRAME_JIT_F_COMPACT | 0x10,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++)
		EXPECT_EQ(-EINVAL, reg_flags(self, flags[i], NRULE, NULL))
			TH_LOG("flags %#x", flags[i]);
	EXPECT_EQ(0, reg_flags(self, SFRAME_JIT_F_COMPACT, NRULE, NULL));
}

TEST_F(compact, rule_capacity_out_of_bounds_is_einval)
{
	__u32 caps[] = { 0, SFRAME_JIT_MAX_RULES + 1, UINT32_MAX };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caps); i++)
		EXPECT_EQ(-EINVAL, reg_flags(self, SFRAME_JIT_F_COMPACT,
					     caps[i], NULL))
			TH_LOG("rule capacity %u", caps[i]);
	EXPECT_EQ(0, reg_flags(self, SFRAME_JIT_F_COMPACT,
			       SFRAME_JIT_MAX_RULES, NULL));
}

TEST_F(compact, one_rule_is_enough)
{
	struct sframe_jit_header *h = NULL;

	ASSERT_EQ(0, reg_flags(self, SFRAME_JIT_F_COMPACT, 1, &h));
	EXPECT_EQ(1U, h->rule_capacity);
}

TEST_F(compact, rule_capacity_without_compact_is_einval)
{
	__u32 caps[] = { 1, NRULE, SFRAME_JIT_MAX_RULES, UINT32_MAX };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caps); i++)
		EXPECT_EQ(-EINVAL, reg_flags(self, 0, caps[i], NULL))
			TH_LOG("rule capacity %u", caps[i]);
	EXPECT_EQ(0, reg_flags(self, 0, 0, NULL));
}

/*
 * A descriptor's start is a 32-bit offset: a compact range spans 4 GiB
 * at most.  A version 1 registry may span more.
 */
TEST_F(compact, range_over_4_gib_is_einval)
{
	size_t pages = (BIG_RANGE + 2 * page_size()) / page_size();
	char *big = arena_reserve(pages);
	__u64 s;

	ASSERT_NE(MAP_FAILED, big);
	s = (unsigned long)big + page_size();
	EXPECT_EQ(-EINVAL, cjit_register(s, s + BIG_RANGE + 1, NFDE, NFRE,
					 NRULE, NULL));
	EXPECT_EQ(-EINVAL, cjit_register(s, s + BIG_RANGE + page_size(),
					 NFDE, NFRE, NRULE, NULL));
	/* Each closed unmapped at once, which unregisters it. */
	EXPECT_EQ(0, cjit_register(s, s + BIG_RANGE, NFDE, NFRE, NRULE,
				   NULL));
	EXPECT_EQ(0, jit_register(s, s + BIG_RANGE + 1, NFDE, NFRE, NULL));
	munmap(big, pages * page_size());
}

/* The layout sframe.rst gives, field by field. */
static void expect_compact_layout(struct __test_metadata *_metadata,
				  const struct sframe_jit_header *h,
				  __u32 nfde, __u32 nfre, __u32 nrule)
{
	size_t pg = page_size();
	size_t fre_off = align_up(pg + (size_t)nfde * 16, 64);
	size_t rule_off = align_up(fre_off + (size_t)nfre * 4, 64);

	EXPECT_EQ((__u32)SFRAME_JIT_F_COMPACT, h->flags);
	EXPECT_EQ(16, h->fde_stride);
	EXPECT_EQ(4, h->fre_stride);
	EXPECT_EQ(12, h->rule_stride);
	EXPECT_EQ(pg, (size_t)h->fde_off);
	EXPECT_EQ(nfde, h->fde_capacity);
	EXPECT_EQ(fre_off, (size_t)h->fre_off);
	EXPECT_EQ(nfre, h->fre_capacity);
	EXPECT_EQ(rule_off, (size_t)h->rule_off);
	EXPECT_EQ(nrule, h->rule_capacity);
	EXPECT_EQ(align_up(rule_off + (size_t)nrule * 12, pg), map_size(h));
}

TEST_F(compact, header_describes_the_compact_layout)
{
	struct sframe_jit_header *h = NULL;
	const unsigned char *p;
	size_t i, nonzero = 0;

	ASSERT_EQ(0, cjit_register(self->start, self->end, NFDE, NFRE, NRULE,
				   &h));
	EXPECT_EQ((__u32)SFRAME_JIT_MAGIC, h->magic);
	EXPECT_EQ(SFRAME_JIT_VERSION, h->version);
	EXPECT_EQ(sizeof(*h), (size_t)h->header_size);
	EXPECT_EQ(self->start, h->text_start);
	EXPECT_EQ(self->end, h->text_end);
	expect_compact_layout(_metadata, h, NFDE, NFRE, NRULE);
	EXPECT_EQ(0U, h->fde_count);
	EXPECT_EQ(0U, h->seq);
	EXPECT_EQ(0U, h->reserved0);
	EXPECT_EQ(0, h->reserved1);
	EXPECT_EQ(0U, h->reserved2);
	for (i = 0; i < ARRAY_SIZE(h->reserved); i++)
		EXPECT_EQ(0ULL, h->reserved[i]);
	p = (const void *)h;
	for (i = h->header_size; i < map_size(h); i++)
		if (p[i])
			nonzero++;
	EXPECT_EQ(0U, nonzero);
}

TEST_F(compact, records_have_the_sizes_of_the_strides)
{
	EXPECT_EQ(16U, sizeof(struct sframe_jit_cfde));
	EXPECT_EQ(4U, sizeof(struct sframe_jit_cfre));
	EXPECT_EQ(12U, sizeof(struct sframe_jit_rule));
}

TEST_F(compact, a_version_1_header_has_no_rule_area)
{
	struct sframe_jit_header *h = NULL;

	ASSERT_EQ(0, jit_register(self->start, self->end, NFDE, NFRE, &h));
	EXPECT_EQ(0U, h->flags);
	EXPECT_EQ(sizeof(struct sframe_jit_fde), (size_t)h->fde_stride);
	EXPECT_EQ(sizeof(struct sframe_jit_fre), (size_t)h->fre_stride);
	EXPECT_EQ(0U, h->rule_off);
	EXPECT_EQ(0U, h->rule_capacity);
	EXPECT_EQ(0, h->rule_stride);
}

/*
 * The sizes for libLLVM-14: 94,993 functions, 439,992 shared
 * rows; a few thousand rules.  Within 4 MiB, where version 1 records
 * take 9.3 MB.
 */
TEST_F(compact, libllvm_sized_registry_fits_4_mib)
{
	struct sframe_jit_header *h = NULL;
	int ret;

	ret = cjit_register(self->start, self->end, 94993, 439992, 4096, &h);
	if (ret == -ENOMEM)
		SKIP(return, "locked-memory limit below 4 MiB");
	ASSERT_EQ(0, ret);
	expect_compact_layout(_metadata, h, 94993, 439992, 4096);
	EXPECT_GE(4UL << 20, map_size(h));
}

/* The charge is the mapping's size, rule area included. */
TEST_F(compact, vm_pin_grows_by_the_compact_mapping_size)
{
	struct sframe_jit_header *h = NULL;
	long before = proc_kb("/proc/self/status", "VmPin");

	ASSERT_LE(0, before);
	ASSERT_EQ(0, cjit_register(self->start, self->end, NFDE, NFRE,
				   SFRAME_JIT_MAX_RULES, &h));
	/* The rules alone take 768 KiB: a size that misses them shows. */
	EXPECT_LT((size_t)SFRAME_JIT_MAX_RULES * 12, map_size(h));
	EXPECT_EQ(before + (long)(map_size(h) / 1024),
		  proc_kb("/proc/self/status", "VmPin"));
}

/*
 * Replacement and copy keep the kind.  The registry stays mapped, so
 * that closing the descriptor of a new one that the test does not map
 * unregisters only that one.
 */
TEST_F(compact, replacing_compact_with_version_1_is_einval)
{
	struct sframe_jit_header *h = NULL;
	int fd;

	ASSERT_EQ(0, cjit_register_fd(self->start, self->end, NFDE, NFRE,
				      NRULE, &h, &fd));
	EXPECT_EQ(-EINVAL, jit_replace(fd, self->start, self->end, 2 * NFDE,
				       2 * NFRE, NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_copy(fd, self->start, self->end, 2 * NFDE,
				    2 * NFRE, NULL, NULL));
	EXPECT_TRUE(range_is_registered(self->start, self->end));
	EXPECT_EQ(0, cjit_replace(fd, self->start, self->end, NFDE, NFRE,
				  NRULE, NULL, NULL));
	close(fd);
}

TEST_F(compact, replacing_version_1_with_compact_is_einval)
{
	struct sframe_jit_header *h = NULL;
	int fd;

	ASSERT_EQ(0, jit_register_fd(self->start, self->end, NFDE, NFRE, &h,
				     &fd));
	EXPECT_EQ(-EINVAL, cjit_replace(fd, self->start, self->end, 2 * NFDE,
					2 * NFRE, NRULE, NULL, NULL));
	EXPECT_EQ(-EINVAL, cjit_copy(fd, self->start, self->end, 2 * NFDE,
				     2 * NFRE, NRULE, NULL, NULL));
	EXPECT_TRUE(range_is_registered(self->start, self->end));
	EXPECT_EQ(0, jit_replace(fd, self->start, self->end, NFDE, NFRE, NULL,
				 NULL));
	close(fd);
}

TEST_F(compact, replacing_with_fewer_of_anything_is_einval)
{
	struct sframe_jit_header *h = NULL;
	int fd;

	ASSERT_EQ(0, cjit_register_fd(self->start, self->end, NFDE, NFRE,
				      NRULE, &h, &fd));
	EXPECT_EQ(-EINVAL, cjit_replace(fd, self->start, self->end, NFDE,
					NFRE, NRULE - 1, NULL, NULL));
	EXPECT_EQ(-EINVAL, cjit_replace(fd, self->start, self->end, NFDE - 1,
					NFRE, NRULE, NULL, NULL));
	EXPECT_EQ(-EINVAL, cjit_replace(fd, self->start, self->end, NFDE,
					NFRE - 1, NRULE, NULL, NULL));
	EXPECT_EQ(0, cjit_replace(fd, self->start, self->end, NFDE, NFRE,
				  NRULE + 1, NULL, NULL));
	close(fd);
}

static void *area(struct sframe_jit_header *h, __u32 off)
{
	return (char *)h + off;
}

/*
 * Fill every slot of the three areas, published or not, with a pattern
 * of its own, and the count and seq: the replacement has all of it,
 * and zeros past the old capacities.
 */
TEST_F(compact, replace_copies_descriptors_rows_and_rules)
{
	struct sframe_jit_header *old = NULL, *new = NULL;
	size_t fdes = NFDE * 16, fres = NFRE * 4, rules = NRULE * 12, i;
	unsigned char *p;
	int fd;

	ASSERT_EQ(0, cjit_register_fd(self->start, self->end, NFDE, NFRE,
				      NRULE, &old, &fd));
	for (p = area(old, old->fde_off), i = 0; i < fdes; i++)
		p[i] = i * 7 + 1;
	for (p = area(old, old->fre_off), i = 0; i < fres; i++)
		p[i] = i * 11 + 2;
	for (p = area(old, old->rule_off), i = 0; i < rules; i++)
		p[i] = i * 13 + 3;
	old->fde_count = 42;
	old->seq = 6;
	ASSERT_EQ(0, cjit_replace(fd, self->start, self->end, 2 * NFDE,
				  2 * NFRE, 2 * NRULE, &new, NULL));
	expect_compact_layout(_metadata, new, 2 * NFDE, 2 * NFRE, 2 * NRULE);
	EXPECT_EQ(42U, new->fde_count);
	EXPECT_EQ(6U, new->seq);
	EXPECT_EQ(0, memcmp(area(old, old->fde_off), area(new, new->fde_off),
			    fdes));
	EXPECT_EQ(0, memcmp(area(old, old->fre_off), area(new, new->fre_off),
			    fres));
	EXPECT_EQ(0, memcmp(area(old, old->rule_off),
			    area(new, new->rule_off), rules));
	for (p = area(new, new->rule_off), i = rules; i < 2 * rules; i++)
		if (p[i])
			break;
	EXPECT_EQ(2 * rules, i) TH_LOG("rule byte %zu not zero", i);
}

/*
 * A forked child has neither the registry's mapping nor its
 * registration.  SFRAME_JIT_COPY from the inherited descriptor gives it
 * a registry of its own of the same kind, rule area included, with the
 * parent's count and seq, registered in the child: only a compact one.
 */
TEST_F(compact, a_forked_child_copies_a_compact_registry)
{
	struct sframe_jit_header *h = NULL;
	size_t rules = NRULE * 12, i;
	unsigned char *p;
	int status, fd;
	pid_t pid;

	ASSERT_EQ(0, cjit_register_fd(self->start, self->end, NFDE, NFRE,
				      NRULE, &h, &fd));
	for (p = area(h, h->rule_off), i = 0; i < rules; i++)
		p[i] = i * 13 + 3;
	h->fde_count = 7;
	h->seq = 4;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct sframe_jit_header *c = NULL;
		int cfd;

		if (mapping_size(h) || range_is_registered(self->start,
							   self->end))
			_exit(10);
		if (jit_copy(fd, self->start, self->end, NFDE, NFRE, NULL,
			     NULL) != -EINVAL)
			_exit(11);
		if (cjit_copy(fd, self->start, self->end, NFDE, NFRE, NRULE,
			      &c, &cfd))
			_exit(12);
		if (c->flags != SFRAME_JIT_F_COMPACT || c->fde_count != 7 ||
		    c->seq != 4 || c->rule_capacity != NRULE)
			_exit(13);
		for (p = area(c, c->rule_off), i = 0; i < rules; i++)
			if (p[i] != (unsigned char)(i * 13 + 3))
				_exit(14);
		if (!range_is_registered(self->start, self->end))
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(7U, h->fde_count);
	EXPECT_TRUE(range_is_registered(self->start, self->end));
	close(fd);
}

TEST_HARNESS_MAIN
