// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_jit_open(2) and sframe_register(2): the argument ABI, the JIT
 * registry mapping and its header, replacement and copy, the limits,
 * and each error every call returns.  After each failing call the test checks that the
 * call changed nothing: a range a failed registration named can still be
 * registered, and a registration a failed call named is still there
 * (registering its range again gives EEXIST).
 */
#include "sframe_test.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <linux/capability.h>

#define ARENA_PAGES	64

/* Enough for a registry of several pages: header, descriptors, rows. */
#define REG_FDES	256U
#define REG_FRES	512U

/*
 * struct sframe_jit_args, for each use of sframe_jit_open(2): the size
 * rules of copy_struct_from_user(), bad pointers and flags.  Every case
 * ends with a call that must succeed, which shows that the failed ones
 * left the state alone.  A new registry's descriptor is left open: its
 * registration lasts the test.
 */
FIXTURE(abi) {
	char *arena;
	__u64 free_start, free_end;	/* a range nobody registered */
	__u64 reg_start, reg_end;	/* a registered JIT range */
	int reg_fd;			/* its registry, never mapped */
	__u64 copy_start, copy_end;	/* a range no longer registered */
	int copy_fd;			/* its registry, unmapped */
	char *buf;			/* two pages for the arguments */
};

FIXTURE_VARIANT(abi) {
	__u32 flags;		/* 0, SFRAME_JIT_REPLACE or SFRAME_JIT_COPY */
};

FIXTURE_VARIANT_ADD(abi, open) {
	.flags		= 0,
};

FIXTURE_VARIANT_ADD(abi, replace) {
	.flags		= SFRAME_JIT_REPLACE,
};

FIXTURE_VARIANT_ADD(abi, copy) {
	.flags		= SFRAME_JIT_COPY,
};

FIXTURE_SETUP(abi)
{
	struct sframe_jit_header *h;
	size_t pg = page_size();

	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, self->arena);
	self->free_start = (unsigned long)self->arena;
	self->free_end = self->free_start + pg;
	self->reg_start = self->free_start + 2 * pg;
	self->reg_end = self->reg_start + pg;
	self->copy_start = self->free_start + 4 * pg;
	self->copy_end = self->copy_start + pg;
	ASSERT_EQ(0, jit_register_fd(self->reg_start, self->reg_end, 4, 8,
				     NULL, &self->reg_fd));
	ASSERT_EQ(0, jit_register_fd(self->copy_start, self->copy_end, 4, 8,
				     &h, &self->copy_fd));
	ASSERT_EQ(0, munmap(h, h->map_size));
	self->buf = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
}

FIXTURE_TEARDOWN(abi)
{
}

/* Zero the buffer and write the arguments of a call that succeeds. */
static char *abi_args(FIXTURE_DATA(abi) *self,
		      const FIXTURE_VARIANT(abi) *variant)
{
	struct sframe_jit_args *jit = (void *)self->buf;

	memset(self->buf, 0, 2 * page_size());
	jit->fde_capacity = 4;
	jit->fre_capacity = 8;
	jit->flags = variant->flags;
	switch (variant->flags) {
	case 0:
		jit->text_start = self->free_start;
		jit->text_end = self->free_end;
		break;
	case SFRAME_JIT_REPLACE:
		jit->text_start = self->reg_start;
		jit->text_end = self->reg_end;
		jit->src_fd = self->reg_fd;
		break;
	case SFRAME_JIT_COPY:
		jit->text_start = self->copy_start;
		jit->text_end = self->copy_end;
		jit->src_fd = self->copy_fd;
		break;
	}
	return self->buf;
}

static void abi_expect_success(struct __test_metadata *_metadata,
			       FIXTURE_DATA(abi) *self,
			       const FIXTURE_VARIANT(abi) *variant)
{
	EXPECT_LE(0, sframe_jit_open((void *)abi_args(self, variant),
				     SFRAME_JIT_ARGS_SIZE_VER0));
}

static int abi_call(void *args, size_t size)
{
	return sframe_jit_open(args, size);
}

TEST_F(abi, the_first_version_is_40_bytes)
{
	EXPECT_EQ(40, SFRAME_JIT_ARGS_SIZE_VER0);
	EXPECT_EQ(40U, sizeof(struct sframe_jit_args));
}

TEST_F(abi, size_below_the_first_version_is_einval)
{
	size_t ver0 = SFRAME_JIT_ARGS_SIZE_VER0;
	size_t sizes[] = { 0, 1, 32, ver0 - 8, ver0 - 1 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ(-EINVAL, abi_call(abi_args(self, variant), sizes[i]))
			TH_LOG("size %zu", sizes[i]);
	}
	abi_expect_success(_metadata, self, variant);
}

TEST_F(abi, size_above_a_page_is_e2big)
{
	size_t sizes[] = { page_size() + 1, 2 * page_size(), SIZE_MAX };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ(-E2BIG, abi_call(abi_args(self, variant), sizes[i]))
			TH_LOG("size %zu", sizes[i]);
	}
	abi_expect_success(_metadata, self, variant);
}

TEST_F(abi, larger_struct_with_zero_tail_is_accepted)
{
	EXPECT_LE(0, abi_call(abi_args(self, variant),
			      sizeof(struct sframe_jit_args) + 8));
}

TEST_F(abi, page_sized_struct_with_zero_tail_is_accepted)
{
	EXPECT_LE(0, abi_call(abi_args(self, variant), page_size()));
}

TEST_F(abi, nonzero_byte_past_the_struct_is_e2big)
{
	size_t size = sizeof(struct sframe_jit_args);
	char *args;

	args = abi_args(self, variant);
	args[size + 7] = 1;
	EXPECT_EQ(-E2BIG, abi_call(args, size + 8));
	args = abi_args(self, variant);
	args[page_size() - 1] = 1;
	EXPECT_EQ(-E2BIG, abi_call(args, page_size()));
	abi_expect_success(_metadata, self, variant);
}

TEST_F(abi, unreadable_arguments_are_efault)
{
	size_t pg = page_size(), size = sizeof(struct sframe_jit_args);
	size_t half = size / 2;
	char *args;

	EXPECT_EQ(-EFAULT, abi_call(NULL, size));

	/* The second page becomes unreadable; the first half fits before. */
	args = abi_args(self, variant);
	memmove(args + pg - half, args, half);
	ASSERT_EQ(0, mprotect(self->buf + pg, pg, PROT_NONE));
	EXPECT_EQ(-EFAULT, abi_call(self->buf + pg, size));
	EXPECT_EQ(-EFAULT, abi_call(args + pg - half, size));

	ASSERT_EQ(0, mprotect(self->buf + pg, pg, PROT_READ | PROT_WRITE));
	abi_expect_success(_metadata, self, variant);
}

TEST_F(abi, unknown_flags_are_einval)
{
	__u32 flags[] = {
		0x10, 1U << 31, UINT32_MAX,
		SFRAME_JIT_REPLACE | SFRAME_JIT_COPY,
	};
	struct sframe_jit_args *args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		args = (void *)abi_args(self, variant);
		args->flags |= flags[i];
		EXPECT_EQ(-EINVAL, abi_call(args, sizeof(*args)))
			TH_LOG("flags %#x", args->flags);
	}
	abi_expect_success(_metadata, self, variant);
}

TEST_F(abi, nonzero_reserved_field_is_einval)
{
	__u32 vals[] = { 1, 1U << 31, UINT32_MAX };
	struct sframe_jit_args *args;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		args = (void *)abi_args(self, variant);
		args->__reserved = vals[i];
		EXPECT_EQ(-EINVAL, abi_call(args, sizeof(*args)))
			TH_LOG("__reserved %#x", vals[i]);
	}
	abi_expect_success(_metadata, self, variant);
}

/*
 * src_fd is read with SFRAME_JIT_REPLACE or SFRAME_JIT_COPY only: a
 * descriptor that is not open is EBADF, one that is not a registry's
 * EINVAL.  A plain open ignores it (1 stands for its new descriptor).
 */
static int abi_with_src(FIXTURE_DATA(abi) *self,
			const FIXTURE_VARIANT(abi) *variant, int src_fd)
{
	struct sframe_jit_args *args = (void *)abi_args(self, variant);
	int ret;

	args->src_fd = src_fd;
	ret = abi_call(args, sizeof(*args));
	if (ret < 0)
		return ret;
	/* Never mapped: closing it frees the range for the next call. */
	close(ret);
	return 1;
}

TEST_F(abi, src_fd_that_is_not_a_registry_is_refused)
{
	int closed = 1000, null;

	/* A number no descriptor has. */
	ASSERT_EQ(-1, fcntl(closed, F_GETFD));
	null = open("/dev/null", O_RDWR);
	ASSERT_LE(0, null);
	EXPECT_EQ(variant->flags ? -EBADF : 1,
		  abi_with_src(self, variant, -1));
	EXPECT_EQ(variant->flags ? -EBADF : 1,
		  abi_with_src(self, variant, closed));
	EXPECT_EQ(variant->flags ? -EINVAL : 1,
		  abi_with_src(self, variant, null));
	close(null);
	if (variant->flags)
		abi_expect_success(_metadata, self, variant);
}

/* sframe_jit_open(2): the range and the capacities. */
FIXTURE(jit_args) {
	char *arena;
	__u64 start, end;
};

FIXTURE_SETUP(jit_args)
{
	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, self->arena);
	self->start = (unsigned long)self->arena + 8 * page_size();
	self->end = self->start + 8 * page_size();
}

FIXTURE_TEARDOWN(jit_args)
{
}

TEST_F(jit_args, empty_or_reversed_range_is_einval)
{
	EXPECT_EQ(-EINVAL, jit_register(self->start, self->start, 4, 8, NULL));
	EXPECT_EQ(-EINVAL, jit_register(self->end, self->start, 4, 8, NULL));
	EXPECT_EQ(0, jit_register(self->start, self->end, 4, 8, NULL));
}

TEST_F(jit_args, range_beyond_user_addresses_is_einval)
{
	EXPECT_EQ(-EINVAL, jit_register(self->start, KERNEL_HALF, 4, 8, NULL));
	EXPECT_EQ(-EINVAL, jit_register(self->start, UINT64_MAX, 4, 8, NULL));
	EXPECT_EQ(-EINVAL, jit_register(KERNEL_HALF, KERNEL_HALF + page_size(),
					4, 8, NULL));
	EXPECT_EQ(0, jit_register(self->start, self->end, 4, 8, NULL));
}

TEST_F(jit_args, capacity_out_of_bounds_is_einval)
{
	struct {
		__u32 fdes, fres;
	} caps[] = {
		{ 0, 8 },
		{ 4, 0 },
		{ SFRAME_JIT_MAX_FDES + 1, 8 },
		{ 4, SFRAME_JIT_MAX_FRES + 1 },
		{ UINT32_MAX, UINT32_MAX },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(caps); i++) {
		EXPECT_EQ(-EINVAL, jit_register(self->start, self->end,
						caps[i].fdes, caps[i].fres,
						NULL))
			TH_LOG("capacities %u, %u", caps[i].fdes, caps[i].fres);
	}
	EXPECT_EQ(0, jit_register(self->start, self->end, 4, 8, NULL));
}

TEST_F(jit_args, overlapping_range_is_eexist)
{
	__u64 s = self->start, e = self->end, pg = page_size();
	struct {
		__u64 start, end;
	} over[] = {
		{ s, e },		/* the same */
		{ s + pg, e - pg },	/* inside */
		{ s - pg, e + pg },	/* around */
		{ s - pg, s + 1 },	/* across the start */
		{ e - 1, e + pg },	/* across the end */
		{ s, s + 1 },		/* its first byte */
		{ e - 1, e },		/* its last byte */
	};
	unsigned int i;
	int fd;

	ASSERT_EQ(0, jit_register_fd(s, e, 4, 8, NULL, &fd));
	for (i = 0; i < ARRAY_SIZE(over); i++) {
		EXPECT_EQ(-EEXIST, jit_register(over[i].start, over[i].end,
						4, 8, NULL))
			TH_LOG("[%#llx, %#llx) over [%#llx, %#llx)",
			       (unsigned long long)over[i].start,
			       (unsigned long long)over[i].end,
			       (unsigned long long)s, (unsigned long long)e);
	}
	/* The registration is the one it was: closing it frees the range. */
	EXPECT_EQ(1, fdinfo_field(fd, "registered"));
	EXPECT_EQ(0, close(fd));
	EXPECT_FALSE(range_is_registered(s, e));
}

TEST_F(jit_args, adjacent_ranges_do_not_overlap)
{
	__u64 pg = page_size();
	int fd;

	ASSERT_EQ(0, jit_register_fd(self->start, self->end, 4, 8, NULL, &fd));
	EXPECT_EQ(0, jit_register(self->end, self->end + pg, 4, 8, NULL));
	EXPECT_EQ(0, jit_register(self->start - pg, self->start, 4, 8, NULL));
	EXPECT_TRUE(range_is_registered(self->start, self->end));
}

/* A registry, and what can and cannot be done to its mapping. */
FIXTURE(registry) {
	char *arena;
	struct jit_reg reg;
};

FIXTURE_SETUP(registry)
{
	if (sframe_skip(_metadata))
		return;
	self->arena = arena_jit_reg_new(_metadata, &self->reg, ARENA_PAGES,
					REG_FDES, REG_FRES);
}

FIXTURE_TEARDOWN(registry)
{
}

/*
 * Publish functions, then replace the registry: the kernel copies
 * through its own mapping of the pages, so the new registry holding what
 * was written shows that the kernel sees the process's writes.  On
 * return @reg describes the new registry.
 */
static void expect_kernel_sees_writes(struct __test_metadata *_metadata,
				      struct jit_reg *reg)
{
	struct sframe_jit_header *old = reg->hdr, *new = NULL;
	int fd = -1;

	jit_fill(old, reg->start, 3, 5);
	ASSERT_EQ(0, jit_replace(reg->fd, reg->start, reg->end,
				 old->fde_capacity, old->fre_capacity, &new,
				 &fd));
	EXPECT_EQ(3U, new->fde_count);
	EXPECT_EQ(0, memcmp(jit_fde(old, 2), jit_fde(new, 2),
			    sizeof(struct sframe_jit_fde)));
	EXPECT_EQ(0, memcmp(jit_fre(old, 5), jit_fre(new, 5),
			    sizeof(struct sframe_jit_fre)));
	reg->hdr = new;
	reg->size = mapping_size(new);
	close(reg->fd);
	reg->fd = fd;
}

TEST_F(registry, maps_show_it_readable_writable_not_executable)
{
	struct maps_entry e;

	ASSERT_TRUE(maps_lookup((unsigned long)self->reg.hdr, &e));
	EXPECT_EQ((unsigned long)self->reg.hdr, e.start);
	EXPECT_EQ('r', e.perms[0]);
	EXPECT_EQ('w', e.perms[1]);
	EXPECT_EQ('-', e.perms[2]);
	EXPECT_STREQ("anon_inode:[sframe_jit]", e.name);
}

TEST_F(registry, header_describes_the_registration)
{
	struct sframe_jit_header *h = self->reg.hdr;
	unsigned int i;

	EXPECT_EQ((__u32)SFRAME_JIT_MAGIC, h->magic);
	EXPECT_EQ(SFRAME_JIT_VERSION, h->version);
	EXPECT_LE(sizeof(*h), (size_t)h->header_size);
	EXPECT_LE(sizeof(struct sframe_jit_fde), (size_t)h->fde_stride);
	EXPECT_LE(sizeof(struct sframe_jit_fre), (size_t)h->fre_stride);
	EXPECT_EQ(0U, h->flags);
	EXPECT_EQ(self->reg.start, h->text_start);
	EXPECT_EQ(self->reg.end, h->text_end);
	EXPECT_EQ(REG_FDES, h->fde_capacity);
	EXPECT_EQ(REG_FRES, h->fre_capacity);
	EXPECT_EQ(self->reg.size, (size_t)h->map_size);
	EXPECT_EQ(0U, h->fde_count);
	EXPECT_EQ(0U, h->seq);
	EXPECT_EQ(0U, h->reserved0);
	EXPECT_EQ(0ULL, h->stats.lookups);
	EXPECT_EQ(0ULL, h->stats.hits);
	EXPECT_EQ(0ULL, h->stats.tombstone_hits);
	EXPECT_EQ(0ULL, h->stats.seq_retries);
	EXPECT_EQ(0ULL, h->stats.malformed);
	for (i = 0; i < ARRAY_SIZE(h->reserved); i++)
		EXPECT_EQ(0ULL, h->reserved[i]);
}

TEST_F(registry, areas_lie_inside_the_mapping_apart)
{
	struct sframe_jit_header *h = self->reg.hdr;
	size_t pg = page_size();
	size_t fde_end = h->fde_off + (size_t)h->fde_capacity * h->fde_stride;
	size_t fre_end = h->fre_off + (size_t)h->fre_capacity * h->fre_stride;

	EXPECT_EQ(0U, self->reg.size % pg);
	/* The header has its own page. */
	EXPECT_LE((size_t)h->header_size, pg);
	EXPECT_EQ(0U, h->fde_off % pg);
	EXPECT_LE(pg, (size_t)h->fde_off);
	EXPECT_EQ(0U, h->fre_off % 64);
	EXPECT_LE(pg, (size_t)h->fre_off);
	EXPECT_LE(fde_end, self->reg.size);
	EXPECT_LE(fre_end, self->reg.size);
	EXPECT_TRUE(fde_end <= h->fre_off || fre_end <= h->fde_off)
		TH_LOG("descriptors [%#x, %#zx), rows [%#x, %#zx)",
		       h->fde_off, fde_end, h->fre_off, fre_end);
}

TEST_F(registry, is_zero_but_for_the_kernel_written_header)
{
	const unsigned char *p = (const void *)self->reg.hdr;
	size_t i, nonzero = 0;

	for (i = self->reg.hdr->header_size; i < self->reg.size; i++)
		if (p[i])
			nonzero++;
	EXPECT_EQ(0U, nonzero);
}

TEST_F(registry, mprotect_to_executable_is_eacces)
{
	int prots[] = {
		PROT_EXEC,
		PROT_READ | PROT_EXEC,
		PROT_READ | PROT_WRITE | PROT_EXEC,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(prots); i++) {
		EXPECT_EQ(-EACCES, mprotect_err(self->reg.hdr, self->reg.size,
						prots[i]))
			TH_LOG("prot %#x", prots[i]);
	}
	expect_registry_intact(_metadata, &self->reg);
	expect_kernel_sees_writes(_metadata, &self->reg);
}

TEST_F(registry, partial_munmap_is_einval)
{
	char *p = (char *)self->reg.hdr;
	size_t pg = page_size(), size = self->reg.size;

	ASSERT_LE(3 * pg, size);
	EXPECT_EQ(-EINVAL, munmap_err(p, pg));
	EXPECT_EQ(-EINVAL, munmap_err(p + size - pg, pg));
	EXPECT_EQ(-EINVAL, munmap_err(p + pg, pg));
	EXPECT_EQ(-EINVAL, munmap_err(p, size - pg));
	expect_registry_intact(_metadata, &self->reg);
	expect_kernel_sees_writes(_metadata, &self->reg);
}

TEST_F(registry, partial_mprotect_is_einval)
{
	char *p = (char *)self->reg.hdr;
	size_t pg = page_size(), size = self->reg.size;

	ASSERT_LE(3 * pg, size);
	EXPECT_EQ(-EINVAL, mprotect_err(p, pg, PROT_READ));
	EXPECT_EQ(-EINVAL, mprotect_err(p + size - pg, pg, PROT_READ));
	EXPECT_EQ(-EINVAL, mprotect_err(p + pg, pg, PROT_READ));
	EXPECT_EQ(-EINVAL, mprotect_err(p + pg, size - pg, PROT_NONE));
	expect_registry_intact(_metadata, &self->reg);
	expect_kernel_sees_writes(_metadata, &self->reg);
}

static void expect_mremap_fails(struct __test_metadata *_metadata,
				void *ret, int err)
{
	EXPECT_EQ(MAP_FAILED, ret);
	EXPECT_TRUE(err == EINVAL || err == EFAULT)
		TH_LOG("mremap: errno %d", err);
}

TEST_F(registry, mremap_cannot_move_it)
{
	size_t size = self->reg.size;
	void *dest, *ret;

	dest = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	ASSERT_NE(MAP_FAILED, dest);
	/* A move would map the registry a second time. */
	ret = mremap(self->reg.hdr, size, size,
		     MREMAP_MAYMOVE | MREMAP_FIXED, dest);
	EXPECT_EQ(MAP_FAILED, ret);
	EXPECT_EQ(EBUSY, errno);
	ret = mremap(self->reg.hdr, size, size,
		     MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	expect_mremap_fails(_metadata, ret, errno);
	expect_registry_intact(_metadata, &self->reg);
	expect_kernel_sees_writes(_metadata, &self->reg);
}

TEST_F(registry, mremap_cannot_grow_it)
{
	size_t size = self->reg.size, pg = page_size();
	void *ret;

	ret = mremap(self->reg.hdr, size, size + pg, 0);
	expect_mremap_fails(_metadata, ret, errno);
	ret = mremap(self->reg.hdr, size, size + 16 * pg, MREMAP_MAYMOVE);
	expect_mremap_fails(_metadata, ret, errno);
	expect_registry_intact(_metadata, &self->reg);
	expect_kernel_sees_writes(_metadata, &self->reg);
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 13 + 7);
}

TEST_F(registry, writes_to_the_mapping_persist)
{
	struct sframe_jit_header *h = self->reg.hdr;
	struct sframe_jit_header before;
	unsigned char *p = (void *)h;
	size_t i, wrong = 0;

	/* Everything past the header: descriptors, rows, slack. */
	for (i = page_size(); i < self->reg.size; i++)
		p[i] = pattern(i);
	h->fde_count = 7;
	h->seq = 42;
	before = *h;

	/* Calls that touch the registry or the range and must fail. */
	EXPECT_EQ(-EEXIST, jit_register(self->reg.start, self->reg.end, 1, 1,
					NULL));
	EXPECT_EQ(-EACCES, mprotect_err(h, self->reg.size,
					PROT_READ | PROT_EXEC));
	EXPECT_EQ(-EINVAL, munmap_err(h, page_size()));
	EXPECT_EQ(-EINVAL, jit_replace(self->reg.fd, self->reg.start,
				       self->reg.end, 1, 1, NULL, NULL));

	for (i = page_size(); i < self->reg.size; i++)
		if (p[i] != pattern(i))
			wrong++;
	EXPECT_EQ(0U, wrong);
	EXPECT_EQ(0, memcmp(&before, h,
			    offsetof(struct sframe_jit_header, stats)));
}

/*
 * The kernel keeps its own copy of the layout, the capacities and the
 * range; what the process writes over them changes nothing.
 */
TEST_F(registry, scribbled_layout_fields_do_not_change_the_registration)
{
	struct sframe_jit_header *h = self->reg.hdr, *new = NULL;
	struct sframe_jit_header saved = *h;

	h->magic = 0;
	h->version = 0xffff;
	h->header_size = 1;
	h->fde_stride = 1;
	h->fre_stride = 1;
	h->text_start = 0;
	h->text_end = 1;
	h->fde_off = 0xfffff000;
	h->fde_capacity = 1;
	h->fre_off = 0xfffff000;
	h->fre_capacity = 1;
	h->map_size = 1;

	EXPECT_EQ(-EINVAL, jit_replace(self->reg.fd, self->reg.start,
				       self->reg.end, REG_FDES - 1, REG_FRES,
				       NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(self->reg.fd, self->reg.start,
				       self->reg.end, REG_FDES, REG_FRES - 1,
				       NULL, NULL));
	ASSERT_EQ(0, jit_replace(self->reg.fd, self->reg.start, self->reg.end,
				 REG_FDES, REG_FRES, &new, NULL));
	EXPECT_EQ(saved.magic, new->magic);
	EXPECT_EQ(saved.version, new->version);
	EXPECT_EQ(saved.header_size, new->header_size);
	EXPECT_EQ(saved.fde_stride, new->fde_stride);
	EXPECT_EQ(saved.fre_stride, new->fre_stride);
	EXPECT_EQ(self->reg.start, new->text_start);
	EXPECT_EQ(self->reg.end, new->text_end);
	EXPECT_LE(REG_FDES, new->fde_capacity);
	EXPECT_LE(REG_FRES, new->fre_capacity);
	EXPECT_LE(page_size(), (size_t)new->fde_off);
	EXPECT_LE(page_size(), (size_t)new->fre_off);
	EXPECT_EQ(mapping_size(new), (size_t)new->map_size);
	ASSERT_EQ(0, munmap(new, new->map_size));
	EXPECT_FALSE(range_is_registered(self->reg.start, self->reg.end));
}

/* SFRAME_JIT_REPLACE */

TEST_F(registry, replace_copies_descriptors_rows_count_and_seq)
{
	struct sframe_jit_header *old = self->reg.hdr, *new = NULL;
	size_t fde_size = sizeof(struct sframe_jit_fde);
	size_t fre_size = sizeof(struct sframe_jit_fre);
	unsigned int i, wrong = 0, dirty = 0;

	/* Published functions, and words in slots beyond the count. */
	jit_fill(old, self->reg.start, 5, 3);
	jit_fde(old, REG_FDES - 1)->func_start = 0x1234;
	jit_fre(old, REG_FRES - 1)->cfa_off = 0x5678;
	old->seq = 6;

	ASSERT_EQ(0, jit_replace(self->reg.fd, self->reg.start, self->reg.end,
				 2 * REG_FDES, 2 * REG_FRES, &new, NULL));
	EXPECT_NE(old, new);
	EXPECT_EQ(5U, new->fde_count);
	EXPECT_EQ(6U, new->seq);
	for (i = 0; i < REG_FDES; i++)
		if (memcmp(jit_fde(old, i), jit_fde(new, i), fde_size))
			wrong++;
	for (i = 0; i < REG_FRES; i++)
		if (memcmp(jit_fre(old, i), jit_fre(new, i), fre_size))
			wrong++;
	EXPECT_EQ(0U, wrong);
	/* Slots the old registry did not have start zeroed. */
	for (i = REG_FDES; i < new->fde_capacity; i++)
		if (jit_fde(new, i)->func_start || jit_fde(new, i)->fre_count)
			dirty++;
	for (i = REG_FRES; i < new->fre_capacity; i++)
		if (jit_fre(new, i)->cfa_off || jit_fre(new, i)->flags)
			dirty++;
	EXPECT_EQ(0U, dirty);
}

TEST_F(registry, replace_maps_a_new_registry_of_the_asked_size)
{
	struct jit_reg new = self->reg;
	struct sframe_jit_header *h;
	struct maps_entry e;
	size_t fre_end;

	ASSERT_EQ(0, jit_replace(self->reg.fd, self->reg.start, self->reg.end,
				 2 * REG_FDES, 4 * REG_FRES, &new.hdr,
				 &new.fd));
	h = new.hdr;
	new.size = mapping_size(h);
	ASSERT_NE(0U, new.size);
	EXPECT_EQ(new.size, (size_t)h->map_size);
	EXPECT_EQ((__u32)SFRAME_JIT_MAGIC, h->magic);
	EXPECT_EQ(SFRAME_JIT_VERSION, h->version);
	EXPECT_EQ(0U, h->flags);
	EXPECT_EQ(self->reg.start, h->text_start);
	EXPECT_EQ(self->reg.end, h->text_end);
	EXPECT_LE(2 * REG_FDES, h->fde_capacity);
	EXPECT_LE(4 * REG_FRES, h->fre_capacity);
	fre_end = h->fre_off + (size_t)h->fre_capacity * h->fre_stride;
	EXPECT_LE(fre_end, new.size);
	EXPECT_LE(h->fde_off + (size_t)h->fde_capacity * h->fde_stride,
		  new.size);
	ASSERT_TRUE(maps_lookup((unsigned long)h, &e));
	EXPECT_STREQ("anon_inode:[sframe_jit]", e.name);
	expect_registry_intact(_metadata, &new);
}

struct racer {
	__u64 start, end;
	int stop;
	int bad;
	unsigned long tries;
};

static void *register_racer(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int ret = jit_register(r->start, r->end, 1, 1, NULL);

		if (ret != -EEXIST) {
			__atomic_store_n(&r->bad, ret ? ret : 1,
					 __ATOMIC_RELEASE);
			break;
		}
		__atomic_add_fetch(&r->tries, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * A thread keeps registering the range while the registry is replaced
 * again and again: it must meet EEXIST every time.
 */
TEST_F(registry, range_stays_registered_while_it_is_replaced)
{
	struct racer r = { .start = self->reg.start, .end = self->reg.end };
	struct sframe_jit_header *old = self->reg.hdr, *new = NULL;
	size_t old_size = self->reg.size;
	int i, ret = 0, fd = self->reg.fd, new_fd = -1;
	pthread_t thread;

	EXPECT_TRUE(range_is_registered(self->reg.start, self->reg.end));
	ASSERT_EQ(0, pthread_create(&thread, NULL, register_racer, &r));
	/* Let the racer get going, so that the two overlap. */
	while (!__atomic_load_n(&r.tries, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&r.bad, __ATOMIC_RELAXED))
		sched_yield();
	for (i = 0; i < 200; i++) {
		if (__atomic_load_n(&r.bad, __ATOMIC_ACQUIRE))
			break;
		ret = jit_replace(fd, self->reg.start, self->reg.end,
				  REG_FDES + i, REG_FRES + i, &new, &new_fd);
		if (ret)
			break;
		munmap(old, old_size);
		close(fd);
		old = new;
		old_size = mapping_size(new);
		fd = new_fd;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(thread, NULL);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, r.bad);
	EXPECT_TRUE(range_is_registered(self->reg.start, self->reg.end));
}

TEST_F(registry, replace_with_a_smaller_capacity_is_einval)
{
	struct sframe_jit_header *new = NULL;
	int fd = self->reg.fd;

	EXPECT_EQ(-EINVAL, jit_replace(fd, self->reg.start, self->reg.end,
				       REG_FDES - 1, REG_FRES, NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, self->reg.start, self->reg.end,
				       REG_FDES, REG_FRES - 1, NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, self->reg.start, self->reg.end,
				       1, 1, NULL, NULL));
	expect_registry_intact(_metadata, &self->reg);
	/* The same capacities are not smaller. */
	EXPECT_EQ(0, jit_replace(fd, self->reg.start, self->reg.end,
				 REG_FDES, REG_FRES, &new, NULL));
}

TEST_F(registry, replace_with_bad_range_or_capacity_is_einval)
{
	__u64 s = self->reg.start, e = self->reg.end;
	int fd = self->reg.fd;

	EXPECT_EQ(-EINVAL, jit_replace(fd, s, s, REG_FDES, REG_FRES, NULL,
				       NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, e, s, REG_FDES, REG_FRES, NULL,
				       NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, s, KERNEL_HALF, REG_FDES, REG_FRES,
				       NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, s, e, 0, REG_FRES, NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, s, e, REG_FDES, 0, NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, s, e, SFRAME_JIT_MAX_FDES + 1,
				       REG_FRES, NULL, NULL));
	EXPECT_EQ(-EINVAL, jit_replace(fd, s, e, REG_FDES,
				       SFRAME_JIT_MAX_FRES + 1, NULL, NULL));
	expect_registry_intact(_metadata, &self->reg);
}

struct span {
	__u64 start, end;
};

#define NR_INEXACT	5

/*
 * Ranges that overlap or touch @reg's but are not it: REPLACE and COPY
 * start from a registry of exactly the new one's range.
 */
static void inexact_spans(const struct jit_reg *reg,
			  struct span other[NR_INEXACT])
{
	__u64 s = reg->start, e = reg->end, pg = page_size();

	other[0] = (struct span){ s, e - 1 };
	other[1] = (struct span){ s + 1, e };
	other[2] = (struct span){ s - pg, e };
	other[3] = (struct span){ s, e + pg };
	other[4] = (struct span){ e, e + pg };
}

TEST_F(registry, replace_or_copy_of_another_range_is_einval)
{
	struct span other[NR_INEXACT];
	unsigned int i;

	inexact_spans(&self->reg, other);
	for (i = 0; i < NR_INEXACT; i++) {
		EXPECT_EQ(-EINVAL, jit_replace(self->reg.fd, other[i].start,
					       other[i].end, REG_FDES,
					       REG_FRES, NULL, NULL))
			TH_LOG("case %u", i);
		EXPECT_EQ(-EINVAL, jit_copy(self->reg.fd, other[i].start,
					    other[i].end, REG_FDES, REG_FRES,
					    NULL, NULL))
			TH_LOG("case %u", i);
	}
	expect_registry_intact(_metadata, &self->reg);
}

/*
 * REPLACE names the registry registered for the range in the caller:
 * not one whose mapping is gone, not one already replaced.
 */
TEST_F(registry, replace_of_a_registry_no_longer_registered_is_enoent)
{
	__u64 s = self->reg.start, e = self->reg.end;
	struct sframe_jit_header *h;
	int fd;

	ASSERT_EQ(0, jit_replace(self->reg.fd, s, e, REG_FDES, REG_FRES, &h,
				 &fd));
	EXPECT_EQ(-ENOENT, jit_replace(self->reg.fd, s, e, REG_FDES, REG_FRES,
				       NULL, NULL));
	ASSERT_EQ(0, munmap(h, h->map_size));
	EXPECT_EQ(-ENOENT, jit_replace(fd, s, e, REG_FDES, REG_FRES, NULL,
				       NULL));
	EXPECT_FALSE(range_is_registered(s, e));
	close(fd);
}

/* Nor the parent's, whose descriptor a child inherited. */
TEST_F(registry, replace_in_a_child_of_the_parents_registry_is_enoent)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(jit_replace(self->reg.fd, self->reg.start,
					 self->reg.end, REG_FDES, REG_FRES,
					 NULL, NULL) == -ENOENT);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, &self->reg);
}

/* COPY registers as a plain open does: not over a registration. */
TEST_F(registry, copy_over_a_registered_range_is_eexist)
{
	EXPECT_EQ(-EEXIST, jit_copy(self->reg.fd, self->reg.start,
				    self->reg.end, REG_FDES, REG_FRES, NULL,
				    NULL));
	EXPECT_EQ(-EINVAL, jit_copy(self->reg.fd, self->reg.start,
				    self->reg.end, REG_FDES - 1, REG_FRES,
				    NULL, NULL));
	expect_registry_intact(_metadata, &self->reg);
}

TEST_F(registry, replaced_registry_stays_mapped_and_stops_counting)
{
	struct jit_reg new = self->reg;
	struct sframe_jit_header *old = self->reg.hdr;

	ASSERT_EQ(0, jit_replace(self->reg.fd, self->reg.start, self->reg.end,
				 REG_FDES, REG_FRES, &new.hdr, &new.fd));
	new.size = mapping_size(new.hdr);
	/* The old mapping is the caller's to unmap. */
	EXPECT_EQ(self->reg.size, mapping_size(old));
	EXPECT_EQ((__u32)SFRAME_JIT_MAGIC, old->magic);
	ASSERT_EQ(0, munmap(old, self->reg.size));
	expect_registry_intact(_metadata, &new);
	ASSERT_EQ(0, munmap(new.hdr, new.size));
	EXPECT_FALSE(range_is_registered(self->reg.start, self->reg.end));
}

/* Unregistration */

TEST_F(registry, munmap_frees_the_range_for_a_new_zeroed_registry)
{
	struct sframe_jit_header *h = self->reg.hdr, *again = NULL;

	h->seq = 2;
	ASSERT_EQ(0, munmap(h, self->reg.size));
	EXPECT_FALSE(range_is_registered(self->reg.start, self->reg.end));
	ASSERT_EQ(0, jit_register(self->reg.start, self->reg.end,
				  REG_FDES, REG_FRES, &again));
	EXPECT_EQ(0U, again->seq);
	EXPECT_TRUE(range_is_registered(self->reg.start, self->reg.end));
}

/* sframe_unregister(2) removes ELF registrations only. */
TEST_F(registry, sframe_unregister_cannot_remove_a_jit_registry)
{
	EXPECT_EQ(-ENOENT, elf_unregister((unsigned long)self->reg.hdr));
	EXPECT_EQ(-ENOENT, elf_unregister(self->reg.start));
	expect_registry_intact(_metadata, &self->reg);
}

/* sframe_register(2), on a copy of the test's own .sframe section. */
FIXTURE(elf_args) {
	struct self_sframe me;
	struct sframe_copy copy;
	char *arena;
};

FIXTURE_SETUP(elf_args)
{
	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, self->arena);
	if (!self_sframe_find(&self->me))
		SKIP(return, NO_SFRAME_SEGMENT);
	if (sframe_copy_make(&self->me, &self->copy, true))
		SKIP(return, NO_SFRAME_COPY);
}

FIXTURE_TEARDOWN(elf_args)
{
}

TEST_F(elf_args, bad_text_range_is_einval)
{
	struct sframe_copy *c = &self->copy;
	__u64 sec = (unsigned long)c->sframe;

	EXPECT_EQ(-EINVAL, elf_register(sec, c->sframe_size, c->text_start,
					c->text_start));
	EXPECT_EQ(-EINVAL, elf_register(sec, c->sframe_size, c->text_end,
					c->text_start));
	EXPECT_EQ(-EINVAL, elf_register(sec, c->sframe_size, c->text_start,
					KERNEL_HALF));
	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, section_smaller_than_its_header_is_einval)
{
	struct sframe_copy *c = &self->copy;
	__u64 sec = (unsigned long)c->sframe;

	EXPECT_EQ(-EINVAL, elf_register(sec, 0, c->text_start, c->text_end));
	EXPECT_EQ(-EINVAL, elf_register(sec, sizeof(struct sframe_sec_header)
					- 1, c->text_start, c->text_end));
	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, section_above_the_size_limit_is_einval)
{
	struct sframe_copy *c = &self->copy;
	__u64 sec = (unsigned long)c->sframe;

	EXPECT_EQ(-EINVAL, elf_register(sec, SFRAME_MAX_SIZE + 1ULL,
					c->text_start, c->text_end));
	EXPECT_EQ(-EINVAL, elf_register(sec, 1ULL << 40, c->text_start,
					c->text_end));
	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, unreadable_section_is_efault)
{
	struct sframe_copy *c = &self->copy;
	size_t half = c->sframe_size / 2, good = page_up(c->sframe_size);
	char *map;

	EXPECT_EQ(-EFAULT, elf_register(0, c->sframe_size, c->text_start,
					c->text_end));
	EXPECT_EQ(-EFAULT, elf_register((unsigned long)self->arena,
					c->sframe_size, c->text_start,
					c->text_end));

	/* A good first half that runs into an unreadable page. */
	map = mmap(NULL, good + page_size(), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	memcpy(map + good - half, c->sframe, half);
	ASSERT_EQ(0, mprotect(map + good, page_size(), PROT_NONE));
	EXPECT_EQ(-EFAULT, elf_register((unsigned long)(map + good - half),
					c->sframe_size, c->text_start,
					c->text_end));

	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, text_without_exec_permission_is_eacces)
{
	struct sframe_copy *c = &self->copy;
	__u64 sec = (unsigned long)c->sframe;
	__u64 none = (unsigned long)self->arena;

	ASSERT_EQ(0, sframe_copy_text_prot(c, PROT_READ | PROT_WRITE));
	EXPECT_EQ(-EACCES, copy_elf_register(c));
	ASSERT_EQ(0, sframe_copy_text_prot(c, PROT_READ));
	EXPECT_EQ(-EACCES, copy_elf_register(c));
	/* Reserved but inaccessible. */
	EXPECT_EQ(-EACCES, elf_register(sec, c->sframe_size, none,
					none + page_size()));
	ASSERT_EQ(0, sframe_copy_text_prot(c, PROT_READ | PROT_EXEC));
	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, text_partly_without_exec_permission_is_eacces)
{
	struct sframe_copy *c = &self->copy;
	unsigned long map_end = (unsigned long)c->map + c->map_size;
	unsigned long after = c->text_pages + c->text_pages_size;
	__u64 sec = (unsigned long)c->sframe;

	/* The copy's pages past the text are read-write. */
	if (after + page_size() > map_end)
		SKIP(return, "the section lies before the text");
	EXPECT_EQ(-EACCES, elf_register(sec, c->sframe_size, c->text_start,
					after + page_size()));
	EXPECT_EQ(-EACCES, elf_register(sec, c->sframe_size, c->text_start,
					after + 1));
	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, section_over_a_jit_range_is_eexist)
{
	struct sframe_copy *c = &self->copy;

	int fd;

	ASSERT_EQ(0, jit_register_fd(c->text_start, c->text_end, 4, 8, NULL,
				     &fd));
	EXPECT_EQ(-EEXIST, copy_elf_register(c));
	EXPECT_TRUE(range_is_registered(c->text_start, c->text_end));
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(0, copy_elf_register(c));
}

TEST_F(elf_args, jit_range_over_a_section_is_eexist)
{
	struct sframe_copy *c = &self->copy;

	ASSERT_EQ(0, copy_elf_register(c));
	EXPECT_EQ(-EEXIST, jit_register(c->text_start, c->text_end, 4, 8,
					NULL));
	EXPECT_EQ(-EEXIST, jit_register(c->text_start, c->text_start + 1,
					4, 8, NULL));
	EXPECT_EQ(-EEXIST, jit_register(c->text_end - 1, c->text_end + 1,
					4, 8, NULL));
	/* The executable's own section, registered at exec. */
	EXPECT_EQ(-EEXIST, jit_register(self->me.text_start,
					self->me.text_end, 4, 8, NULL));
	EXPECT_EQ(0, copy_elf_unregister(c));
}

TEST_F(elf_args, second_registration_of_a_section_is_eexist)
{
	struct sframe_copy *c = &self->copy;

	ASSERT_EQ(0, copy_elf_register(c));
	EXPECT_EQ(-EEXIST, copy_elf_register(c));
	EXPECT_EQ(0, copy_elf_unregister(c));
	EXPECT_EQ(-ENOENT, copy_elf_unregister(c));
	EXPECT_EQ(0, copy_elf_register(c));
}

/* A JIT registry cannot take a section's place, even by its range. */
TEST_F(elf_args, replace_or_copy_over_a_section_range_fails)
{
	struct sframe_copy *c = &self->copy;
	struct sframe_jit_header *h;
	int fd;

	ASSERT_EQ(0, jit_register_fd(c->text_start, c->text_end, 4, 8, &h,
				     &fd));
	ASSERT_EQ(0, munmap(h, h->map_size));
	ASSERT_EQ(0, copy_elf_register(c));
	EXPECT_EQ(-ENOENT, jit_replace(fd, c->text_start, c->text_end, 4, 8,
				       NULL, NULL));
	EXPECT_EQ(-EEXIST, jit_copy(fd, c->text_start, c->text_end, 4, 8,
				    NULL, NULL));
	EXPECT_EQ(-EEXIST, copy_elf_register(c));
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));
	close(fd);
}

/* struct sframe_setup is taken at its one size, and read whole. */
TEST_F(elf_args, setup_size_other_than_32_is_einval)
{
	struct sframe_copy *c = &self->copy;
	struct sframe_setup setup = copy_setup(c);
	struct sframe_setup unreg = { .sframe_start = setup.sframe_start };
	size_t sizes[] = { 0, 24, 31, 33, 40, page_size() };
	unsigned int i;

	EXPECT_EQ(32, SFRAME_SETUP_SIZE_VER0);
	EXPECT_EQ(32U, sizeof(struct sframe_setup));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ(-EINVAL, sframe_register(&setup, sizes[i]))
			TH_LOG("size %zu", sizes[i]);
	}
	EXPECT_EQ(-EFAULT, sframe_register(NULL, sizeof(setup)));
	EXPECT_FALSE(range_is_registered(c->text_start, c->text_end));
	ASSERT_EQ(0, sframe_register(&setup, sizeof(setup)));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ(-EINVAL, sframe_unregister(&unreg, sizes[i]))
			TH_LOG("size %zu", sizes[i]);
	}
	EXPECT_EQ(-EFAULT, sframe_unregister(NULL, sizeof(unreg)));
	EXPECT_TRUE(range_is_registered(c->text_start, c->text_end));
	EXPECT_EQ(0, sframe_unregister(&unreg, sizeof(unreg)));
	EXPECT_FALSE(range_is_registered(c->text_start, c->text_end));
}

/*
 * sframe_unregister(2) names a registration by its section's address,
 * every other field 0.
 */
TEST_F(elf_args, unregister_takes_the_section_address_alone)
{
	struct sframe_copy *c = &self->copy;
	struct sframe_setup setup = copy_setup(c);
	struct sframe_setup bad;

	ASSERT_EQ(0, copy_elf_register(c));
	/* The arguments it was registered with are not its name. */
	EXPECT_EQ(-EINVAL, sframe_unregister(&setup, sizeof(setup)));
	bad = (struct sframe_setup){ .text_start = c->text_start };
	EXPECT_EQ(-EINVAL, sframe_unregister(&bad, sizeof(bad)));
	bad = (struct sframe_setup){ 0 };
	EXPECT_EQ(-EINVAL, sframe_unregister(&bad, sizeof(bad)));
	EXPECT_EQ(-ENOENT, elf_unregister(c->text_start));
	EXPECT_EQ(-ENOENT, elf_unregister((unsigned long)c->sframe + 1));
	EXPECT_TRUE(range_is_registered(c->text_start, c->text_end));
	EXPECT_EQ(0, copy_elf_unregister(c));
	EXPECT_EQ(-ENOENT, copy_elf_unregister(c));
	EXPECT_FALSE(range_is_registered(c->text_start, c->text_end));
}

/*
 * kernel.sframe_user_pinned_kb.  Registry pages are charged to the
 * user's tables unless the caller has CAP_IPC_LOCK, so the test drops
 * that capability; the harness runs each test in a child of its own, so
 * the drop ends with the test, and the parent puts the limit back.  The
 * charge is per user and other processes of the user may hold some, so
 * the test only relies on a registry far above the lowered limit
 * failing, and on one succeeding once the limit is lifted again.
 */
#define PINNED_TEST_KB		256UL
#define PINNED_SYSCTL		"/proc/sys/kernel/sframe_user_pinned_kb"
#define FRE_BYTES		sizeof(struct sframe_jit_fre)

FIXTURE(pinned) {
	char *arena;
	__u64 start, end;
	char saved[32];
	unsigned long budget;	/* bytes of registry the lowered limit allows */
	__u32 big_fres;		/* rows of a registry beyond the budget */
};

FIXTURE_SETUP(pinned)
{
	int ret;

	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, self->arena);
	self->start = (unsigned long)self->arena;
	self->end = self->start + 16 * page_size();
	if (sysctl_read(PINNED_SYSCTL, self->saved, sizeof(self->saved)))
		SKIP(return, "cannot read %s", PINNED_SYSCTL);
	ret = drop_cap_ipc_lock(false);
	if (ret)
		SKIP(return, "cannot drop CAP_IPC_LOCK: %s", strerror(-ret));
	self->budget = PINNED_TEST_KB << 10;
	self->big_fres = self->budget / FRE_BYTES + (1U << 16);
}

/*
 * The parent puts the limit back.  The test's registries and their
 * charges go as its child exits, before the parent sees it has.
 */
FIXTURE_TEARDOWN_PARENT(pinned)
{
	if (self->saved[0])
		EXPECT_EQ(0, sysctl_write(PINNED_SYSCTL, self->saved));
}

static int pinned_lower(void)
{
	char kb[32];

	snprintf(kb, sizeof(kb), "%lu", PINNED_TEST_KB);
	return sysctl_write(PINNED_SYSCTL, kb);
}

/* The limit the test started with. */
static int pinned_lift(FIXTURE_DATA(pinned) *self)
{
	return sysctl_write(PINNED_SYSCTL, self->saved);
}

TEST_F(pinned, registry_beyond_the_limit_is_enomem)
{
	ASSERT_EQ(0, pinned_lower());
	EXPECT_EQ(-ENOMEM, jit_register(self->start, self->end, 1,
					self->big_fres, NULL));
	/* The range was not claimed. */
	ASSERT_EQ(0, pinned_lift(self));
	EXPECT_EQ(0, jit_register(self->start, self->end, 1, 1, NULL));
}

TEST_F(pinned, replacement_beyond_the_limit_is_enomem)
{
	struct sframe_jit_header *new = NULL;
	struct jit_reg reg;

	jit_reg_new(_metadata, &reg, self->start, self->end, 1, 1);
	ASSERT_EQ(0, pinned_lower());
	EXPECT_EQ(-ENOMEM, jit_replace(reg.fd, self->start, self->end, 1,
				       self->big_fres, NULL, NULL));
	ASSERT_EQ(0, pinned_lift(self));
	expect_registry_intact(_metadata, &reg);
	EXPECT_EQ(0, jit_replace(reg.fd, self->start, self->end, 2, 2, &new,
				 NULL));
}

/*
 * fork copies no registry, so it charges nothing: at the limit the
 * child has no mapping where the registry is, nothing pinned, and the
 * range free; a copy of its own, which SFRAME_JIT_COPY would charge
 * like any registry, does not fit beside the parent's.  The registry
 * takes three quarters of the budget.
 */
static void child_at_the_limit_has_nothing(const struct jit_reg *reg,
					   __u32 nfre)
{
	CHILD_EXPECT(!mapping_size(reg->hdr));
	CHILD_EXPECT(proc_kb("/proc/self/status", "VmPin") == 0);
	CHILD_EXPECT(jit_copy(reg->fd, reg->start, reg->end, 1, nfre, NULL,
			      NULL) == -ENOMEM);
	CHILD_EXPECT(!range_is_registered(reg->start, reg->end));
}

/*
 * Under the lowered limit, a registry of @eighths eighths of the budget.
 * Returns 0, or -ENOMEM if other processes of this user already hold
 * too much for it to fit.
 */
static int pinned_registry(FIXTURE_DATA(pinned) *self,
			   struct jit_reg *reg, unsigned int eighths)
{
	int ret;

	ret = pinned_lower();
	if (ret)
		return ret;
	ret = jit_register_fd(self->start, self->end, 1,
			      self->budget / 8 * eighths / FRE_BYTES,
			      &reg->hdr, &reg->fd);
	if (ret)
		return ret;
	reg->start = self->start;
	reg->end = self->end;
	reg->size = mapping_size(reg->hdr);
	return 0;
}

/* Three quarters of the budget: a copy of it cannot fit beside it. */
static int pinned_big_registry(FIXTURE_DATA(pinned) *self,
			       struct jit_reg *reg)
{
	return pinned_registry(self, reg, 6);
}

TEST_F(pinned, fork_at_the_limit_costs_nothing)
{
	struct jit_reg reg;
	__u32 nfre;
	int ret;
	pid_t pid;

	ret = pinned_big_registry(self, &reg);
	if (ret == -ENOMEM)
		SKIP(return, "other processes of this user hold tables");
	ASSERT_EQ(0, ret);
	ASSERT_LT(self->budget / 2, reg.size);
	reg.hdr->seq = 2;
	/* The child has no mapping to read it from. */
	nfre = reg.hdr->fre_capacity;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		child_at_the_limit_has_nothing(&reg, nfre);
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, &reg);
	EXPECT_EQ(2U, reg.hdr->seq);
	EXPECT_EQ((long)(reg.size / 1024),
		  proc_kb("/proc/self/status", "VmPin"));
}

/*
 * A JIT of 100,000 functions of four rows each registers them all within
 * the default limit of 16 MiB, growing its registry by replacement from
 * half that size as libsframe_jit does.
 */
#define DEFAULT_PINNED_KB	"16384"
#define JIT_FUNCS		100000U
#define JIT_ROWS_PER_FUNC	4U

TEST_F(pinned, jit_of_100000_functions_fits_the_default_limit)
{
	struct sframe_jit_header *small, *big;
	int fd;

	ASSERT_EQ(0, sysctl_write(PINNED_SYSCTL, DEFAULT_PINNED_KB));
	ASSERT_EQ(0, jit_register_fd(self->start, self->end, JIT_FUNCS / 2,
				     JIT_FUNCS / 2 * JIT_ROWS_PER_FUNC, &small,
				     &fd));
	/* The small one is freed once unmapped and closed. */
	ASSERT_EQ(0, jit_replace(fd, self->start, self->end, JIT_FUNCS,
				 JIT_FUNCS * JIT_ROWS_PER_FUNC, &big, NULL));
	close(fd);
	EXPECT_EQ(JIT_FUNCS, big->fde_capacity);
	EXPECT_EQ(JIT_FUNCS * JIT_ROWS_PER_FUNC, big->fre_capacity);
	EXPECT_EQ(0, munmap(small, small->map_size));
	EXPECT_EQ(0, munmap(big, big->map_size));
}

/*
 * A process at its limit that forks and execs again and again pins no
 * more than it did: no child gets a registry, an exec'd image starts
 * with nothing pinned, and the parent's
 * registry stays as it was.  The exec'd program is this one, which
 * checks its own VmPin (AFTER_EXEC_PIN in main()).
 */
#define AFTER_EXEC_PIN	"--sframe-pinned-after-exec"
#define FORKS_AND_EXECS	100

static int after_exec_pin(void)
{
	long pin = proc_kb("/proc/self/status", "VmPin");

	if (pin)
		fprintf(stderr, "# after exec: VmPin %ld kB\n", pin);
	return pin ? 1 : 0;
}

/* Minutes on the debug kernel under emulation, past the default 30 s. */
TEST_F_TIMEOUT(pinned, forks_and_execs_at_the_limit_pin_nothing_more, 600)
{
	struct jit_reg reg;
	int i, ret;
	pid_t pid;

	ret = pinned_big_registry(self, &reg);
	if (ret == -ENOMEM)
		SKIP(return, "other processes of this user hold tables");
	ASSERT_EQ(0, ret);
	for (i = 0; i < FORKS_AND_EXECS; i++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			CHILD_EXPECT(proc_kb("/proc/self/status", "VmPin") == 0);
			if (i & 1) {
				execl("/proc/self/exe", "register_test",
				      AFTER_EXEC_PIN, (char *)NULL);
				_exit(11);
			}
			_exit(0);
		}
		ASSERT_EQ(0, child_status(pid)) TH_LOG("child %d", i);
	}
	expect_registry_intact(_metadata, &reg);
	EXPECT_EQ((long)(reg.size / 1024),
		  proc_kb("/proc/self/status", "VmPin"));
}

/*
 * A child's copy (SFRAME_JIT_COPY from the descriptor it inherited) is
 * uncharged as the child exits, not once the memory is freed after a
 * grace period: with room for one copy beside the registry, children
 * forked one after the other, each waited for before the next, all get
 * a charged, registered copy.
 */
#define FORKS_IN_A_ROW		20

TEST_F(pinned, forks_in_a_row_at_the_limit_each_get_a_charged_copy)
{
	struct jit_reg reg;
	__u32 nfre;
	int i, ret;
	pid_t pid;

	ret = pinned_registry(self, &reg, 3);
	if (ret == -ENOMEM)
		SKIP(return, "other processes of this user hold tables");
	ASSERT_EQ(0, ret);
	ASSERT_LT(self->budget / 4, reg.size);
	nfre = reg.hdr->fre_capacity;
	for (i = 0; i < FORKS_IN_A_ROW; i++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			CHILD_EXPECT(jit_copy(reg.fd, reg.start, reg.end, 1,
					      nfre, NULL, &reg.fd) == 0);
			CHILD_EXPECT(proc_kb("/proc/self/status", "VmPin") ==
				     (long)(reg.size / 1024));
			CHILD_EXPECT(range_is_registered(reg.start, reg.end));
			_exit(0);
		}
		ASSERT_EQ(0, child_status(pid)) TH_LOG("child %d", i);
	}
	expect_registry_intact(_metadata, &reg);
}

/* Under the limit, the child's copy is registered and charged. */
TEST_F(pinned, copy_in_a_child_within_the_limit_is_charged)
{
	struct sframe_jit_header *h;
	struct jit_reg reg;
	pid_t pid;

	ASSERT_EQ(0, pinned_lower());
	jit_reg_new(_metadata, &reg, self->start, self->end, 1, 1);
	reg.hdr->seq = 4;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(proc_kb("/proc/self/status", "VmPin") == 0);
		CHILD_EXPECT(jit_copy(reg.fd, reg.start, reg.end, 1, 1, &h,
				      NULL) == 0);
		CHILD_EXPECT(h->magic == SFRAME_JIT_MAGIC);
		CHILD_EXPECT(h->seq == 4);
		CHILD_EXPECT(proc_kb("/proc/self/status", "VmPin") ==
			     (long)(reg.size / 1024));
		CHILD_EXPECT(range_is_registered(reg.start, reg.end));
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, &reg);
}

/*
 * kernel.sframe_max_registrations caps the registrations of one mm, of
 * both kinds.  The executable's section (and maybe the interpreter's)
 * already counts, so a test knows only an upper bound on how many more
 * fit.  The old value is put back by the parent whatever the test does.
 */
#define TEST_MAX_REGS		8U

FIXTURE(reg_limit) {
	int fds[TEST_MAX_REGS + 1];	/* the registries, never mapped */
	char saved[32];
	bool restore;
	char *arena;
	struct self_sframe me;
	struct sframe_copy copy;
};

FIXTURE_SETUP(reg_limit)
{
	char val[16];

	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, self->arena);
	if (sysctl_read(MAX_REGS_SYSCTL, self->saved, sizeof(self->saved)))
		SKIP(return, "cannot read %s", MAX_REGS_SYSCTL);
	snprintf(val, sizeof(val), "%u\n", TEST_MAX_REGS);
	if (sysctl_write(MAX_REGS_SYSCTL, val))
		SKIP(return, "cannot write %s (not root?)", MAX_REGS_SYSCTL);
	self->restore = true;
}

FIXTURE_TEARDOWN_PARENT(reg_limit)
{
	if (self->restore)
		EXPECT_EQ(0, sysctl_write(MAX_REGS_SYSCTL, self->saved));
}

static __u64 slot(FIXTURE_DATA(reg_limit) *self, unsigned int i)
{
	return (unsigned long)self->arena + (size_t)i * page_size();
}

/* Register one-page ranges until refused; return how many fit. */
static unsigned int fill_to_the_limit(struct __test_metadata *_metadata,
				      FIXTURE_DATA(reg_limit) *self)
{
	unsigned int n;
	int ret = 0;

	for (n = 0; n <= TEST_MAX_REGS; n++) {
		ret = jit_register_fd(slot(self, n), slot(self, n + 1), 1, 1,
				      NULL, &self->fds[n]);
		if (ret)
			break;
	}
	EXPECT_EQ(-ENOSPC, ret);
	EXPECT_LE(n, TEST_MAX_REGS);
	return n;
}

TEST_F(reg_limit, registrations_beyond_the_limit_are_enospc)
{
	unsigned int n = fill_to_the_limit(_metadata, self);

	ASSERT_LT(0U, n);
	/* The refused range is free once there is room. */
	ASSERT_EQ(0, close(self->fds[0]));
	EXPECT_EQ(0, jit_register_fd(slot(self, n), slot(self, n + 1), 1, 1,
				     NULL, &self->fds[0]));
	EXPECT_EQ(-ENOSPC, jit_register(slot(self, n + 1), slot(self, n + 2),
					1, 1, NULL));
}

TEST_F(reg_limit, section_beyond_the_limit_is_enospc)
{
	unsigned int n;

	if (!self_sframe_find(&self->me))
		SKIP(return, NO_SFRAME_SEGMENT);
	if (sframe_copy_make(&self->me, &self->copy, true))
		SKIP(return, NO_SFRAME_COPY);
	n = fill_to_the_limit(_metadata, self);
	ASSERT_LT(0U, n);
	EXPECT_EQ(-ENOSPC, copy_elf_register(&self->copy));
	ASSERT_EQ(0, close(self->fds[0]));
	EXPECT_EQ(0, copy_elf_register(&self->copy));
}

/* Replacing swaps an index entry: it neither needs nor frees a slot. */
TEST_F(reg_limit, replace_at_the_limit_succeeds)
{
	struct sframe_jit_header *new = NULL;
	unsigned int n = fill_to_the_limit(_metadata, self);

	ASSERT_LT(0U, n);
	EXPECT_EQ(0, jit_replace(self->fds[0], slot(self, 0), slot(self, 1),
				 2, 2, &new, NULL));
	EXPECT_EQ(-ENOSPC, jit_register(slot(self, n), slot(self, n + 1),
					1, 1, NULL));
	/* The new registry's mapping alone holds the registration now. */
	EXPECT_EQ(0, munmap(new, new->map_size));
	EXPECT_EQ(0, jit_register(slot(self, n), slot(self, n + 1), 1, 1,
				  NULL));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], AFTER_EXEC_PIN))
		return after_exec_pin();
	return test_harness_run(argc, argv);
}
