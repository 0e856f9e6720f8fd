// SPDX-License-Identifier: GPL-2.0
/*
 * What only sframe_register(2) can show: the registration behind a
 * registry, through the library's create, grow and destroy.
 */
#include <stdio.h>
#include <string.h>

#include "test.h"

/* The /proc/self/maps line of the mapping that starts at @addr. */
static bool maps_line(const void *addr, char *name, size_t len)
{
	unsigned long start, end;
	char line[512];
	bool found = false;
	int off;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		off = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end,
			   &off) < 2 || start != (unsigned long)addr)
			continue;
		snprintf(name, len, "%s", off ? line + off : "");
		name[strcspn(name, "\n")] = '\0';
		found = true;
	}
	fclose(f);
	return found;
}

/* Registry mappings in /proc/self/maps. */
static int maps_count(const char *what)
{
	char line[512];
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, what);
	fclose(f);
	return n;
}

TEST(kernel_registry_is_registered_and_mapped_as_sframe_jit, T_KERNEL)
{
	struct sframe_jit_header *h;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(1 << 16);
	char name[256];

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + (1 << 16), NULL);
	h = reg_hdr(&tb);
	EXPECT(range_registered(code, code + (1 << 16)));
	EXPECT(range_registered(code + 100, code + 200));
	EXPECT(!range_registered(code + (1 << 16), code + (1 << 17)));
	EXPECT_EQ(sizeof(struct sframe_jit_fde), h->fde_stride);
	EXPECT_EQ(sizeof(struct sframe_jit_fre), h->fre_stride);
	EXPECT_EQ(sizeof(struct sframe_jit_header), h->header_size);
	ASSERT(maps_line(h, name, sizeof(name)));
	EXPECT(strstr(name, "[sframe_jit]"));
	sframe_jit_destroy(reg);
}

TEST(kernel_destroy_unregisters_the_range, T_KERNEL)
{
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(1 << 16);

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + (1 << 16), NULL);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 16, NULL, 0, NULL));
	sframe_jit_destroy(reg);
	EXPECT(!range_registered(code, code + (1 << 16)));
}

TEST(kernel_overlapping_registries_are_eexist, T_KERNEL)
{
	struct sframe_jit *reg = NULL, *other = NULL;
	uint64_t code = arena(1 << 16);

	ASSERT_EQ(0, sframe_jit_create(code, code + 4096, NULL, &reg));
	EXPECT_EQ(-EEXIST, sframe_jit_create(code + 2048, code + 8192, NULL,
					     &other));
	EXPECT(!other);
	EXPECT_EQ(0, sframe_jit_create(code + 4096, code + 8192, NULL,
				       &other));
	sframe_jit_destroy(other);
	sframe_jit_destroy(reg);
}

TEST(kernel_growth_keeps_the_range_covered_and_unmaps_old_ones, T_KERNEL)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 2,
			.fre_capacity = 2);
	struct sframe_jit_header *old;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct table t = { 0 };
	uint64_t code = arena(1 << 16);
	char name[256];
	int i;

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + (1 << 16), &opts);
	old = reg_hdr(&tb);
	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, sframe_jit_add(reg, code + 64 * (99 - i), 32, NULL,
					    0, NULL));
	EXPECT(reg_hdr(&tb) != old);
	/* Old mappings are gone: one registry is left. */
	EXPECT_EQ(1, maps_count("[sframe_jit]"));
	ASSERT(maps_line(reg_hdr(&tb), name, sizeof(name)));
	EXPECT(range_registered(code, code + (1 << 16)));
	table_read_stable(reg_hdr(&tb), &t);
	EXPECT_EQ(100, t.count);
	for (i = 0; i < 100; i++)
		EXPECT_EQ(code + 64 * i, t.fdes[i].func_start);
	table_free(&t);
	sframe_jit_destroy(reg);
	EXPECT(!range_registered(code, code + (1 << 16)));
}

/* A range the kernel refuses: its error reaches the caller. */
TEST(kernel_errors_reach_the_caller, T_KERNEL)
{
	struct sframe_jit *reg = NULL;

	/* Not a user address range. */
	EXPECT_EQ(-EINVAL, sframe_jit_create(1ULL << 63, (1ULL << 63) + 4096,
					     NULL, &reg));
	EXPECT(!reg);
}
