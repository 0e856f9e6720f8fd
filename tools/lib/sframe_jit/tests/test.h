/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small test runner for libsframe_jit.  TEST() registers a case in a
 * linker section; the runner forks one child per case, so that a crash or
 * a hang fails that case alone, and prints TAP-like lines, then
 * "N passed, N failed" as its last line.
 *
 * One binary runs the cases against registries in private memory laid
 * out as the kernel lays them out, the other against sframe_jit_open(2)
 * itself (test_env.kernel); a case says which it runs under.
 */
#ifndef SFRAME_JIT_TEST_H
#define SFRAME_JIT_TEST_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sframe_jit_internal.h"

/* Where a case runs. */
#define T_MEM		0x1	/* against the in-memory backend */
#define T_KERNEL	0x2	/* against the system call */
#define T_BOTH		(T_MEM | T_KERNEL)

struct test_case {
	const char *name;
	void (*fn)(void);
	unsigned int where;
	unsigned int timeout;	/* seconds, 0 for the default */
};

#define TEST_TIMEOUT(func, where_, secs)				\
	static void func(void);						\
	static const struct test_case __test_##func			\
	__attribute__((used, section("sframe_jit_tests"), aligned(8))) = { \
		.name = #func, .fn = func, .where = (where_),		\
		.timeout = (secs),					\
	};								\
	static void func(void)

#define TEST(func, where_)	TEST_TIMEOUT(func, where_, 0)

struct test_env {
	bool kernel;		/* this binary tests the system call */
	const char *fixtures;	/* directory of the gcc-built fixtures */
};

extern struct test_env test_env;

void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test_skip(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void test_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool test_failed(void);
int test_run_all(int argc, char **argv);

/* A failed EXPECT marks the case failed and goes on. */
#define EXPECT(cond)							\
	do {								\
		if (!(cond))						\
			test_fail(__FILE__, __LINE__, "%s", #cond);	\
	} while (0)

#define EXPECT_EQ(a, b)							\
	do {								\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b)						\
			test_fail(__FILE__, __LINE__,			\
				  "%s == %s: %lld != %lld", #a, #b,	\
				  _a, _b);				\
	} while (0)

/* A failed ASSERT ends the case. */
#define ASSERT(cond)							\
	do {								\
		if (!(cond)) {						\
			test_fail(__FILE__, __LINE__, "%s", #cond);	\
			exit(1);					\
		}							\
	} while (0)

#define ASSERT_EQ(a, b)							\
	do {								\
		long long _a = (long long)(a), _b = (long long)(b);	\
		if (_a != _b) {						\
			test_fail(__FILE__, __LINE__,			\
				  "%s == %s: %lld != %lld", #a, #b,	\
				  _a, _b);				\
			exit(1);					\
		}							\
	} while (0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The tests' backend: the in-memory or the kernel one underneath, plus
 * what the tests need to look at and break.  Its private pointer is a
 * struct test_backend.
 */
struct test_backend {
	const struct sframe_jit_backend *base;
	/* In-memory backend: the layout it makes (zero: the kernel's). */
	struct sframe_jit_mem_layout layout;
	/* Fail the next create, replace or fork copy with this errno. */
	int fail_create;
	int fail_replace;
	int fail_copy;
	/* Spoil the header of the next mapping (magic), for -EPROTO. */
	bool spoil_next;
	/* Keep replaced mappings mapped, for readers still on them. */
	bool defer_unmap;
	void *deferred[64];
	size_t deferred_size[64];
	int deferred_fd[64];
	int nr_deferred;
	/* The mapping in use, for readers: set on create, replace, copy. */
	struct sframe_jit_header *_Atomic current;
	int nr_creates;
	int nr_replaces;
	int nr_copies;
	int nr_unmaps;
};

extern const struct sframe_jit_backend test_ops_mem;
extern const struct sframe_jit_backend test_ops_kernel;

void test_backend_init(struct test_backend *tb);
void test_backend_release(struct test_backend *tb);

/* Helpers, helpers.c. */

/* Reserve address space for code ranges: never mapped accessible. */
uint64_t arena(size_t size);

/*
 * A registry for [start, end) with @opts (may be NULL), through @tb,
 * which the caller has initialised.  Fails the case on error.
 */
struct sframe_jit *reg_new(struct test_backend *tb, uint64_t start,
			   uint64_t end, const struct sframe_jit_opts *opts);
int reg_try(struct test_backend *tb, uint64_t start, uint64_t end,
	    const struct sframe_jit_opts *opts, struct sframe_jit **regp);

/* The mapping the registry uses now. */
struct sframe_jit_header *reg_hdr(struct test_backend *tb);

/*
 * The four rows of a frame-pointer function of 32 bytes: push %rbp,
 * mov %rsp,%rbp, the body, and the last byte after leave (outermost).
 */
extern const struct sframe_jit_row rows_fp32[4];

/* Rows of a two-row frame: push then body. */
void rows_simple(struct sframe_jit_row *rows, int32_t body_cfa);

/* Deterministic pseudo-random numbers for one thread. */
static inline uint32_t rnd(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (uint32_t)(*state >> 11);
}

/*
 * The raw sframe_jit_open(2), for the kernel-only cases: a descriptor,
 * or -errno.
 */
int raw_sframe_jit_open(struct sframe_jit_args *args, size_t size);
/* The registry of a descriptor mapped as the kernel allows; NULL, errno. */
struct sframe_jit_header *raw_map(int fd);
/* A registration of [start, end) is refused with EEXIST. */
bool range_registered(uint64_t start, uint64_t end);
/* Descriptors of the process that are JIT registries. */

/* Read a whole file; NULL if it cannot be read. */
void *file_read(const char *path, size_t *size);

struct jit_image;

/* jit_frame.so of the fixtures, copied as a JIT would; skips without. */
void jit_image_fixture(struct jit_image *im);

/* @n rows equal field by field, their padding left out. */
bool rows_equal(const struct sframe_jit_row *a,
		const struct sframe_jit_row *b, uint32_t n);

/*
 * The kernel's view of a registry, read by the protocol from its header
 * alone, as an unwinder reads it; reader.c.
 */
struct table {
	uint32_t seq;
	uint32_t count;
	uint64_t text_start;
	uint64_t text_end;
	uint32_t fde_cap;
	uint32_t fre_cap;
	bool compact;			/* SFRAME_JIT_F_COMPACT records */
	uint32_t rule_cap;		/* with @compact */
	struct sframe_jit_fde *fdes;	/* [count] */
	struct sframe_jit_fre *fres;	/* [fre_cap], referenced rows only */
	size_t fdes_room;
	size_t fres_room;
};

/* 0 for a stable read, -EAGAIN if seq was odd or changed, -ENOMEM. */
int table_read(const struct sframe_jit_header *h, struct table *t);
/* A stable read until one succeeds; fails the case after many tries. */
void table_read_stable(const struct sframe_jit_header *h, struct table *t);
/* 0, or -1 with the broken invariant described in @why. */
int table_check(const struct table *t, char *why, size_t len);
/*
 * One lookup of @pc as the unwinder makes it: a binary search, then the
 * function's rows.  0 if what it read was stable and consistent (sorted
 * probes, the function and its neighbour apart and in range, its rows in
 * the area and well formed); -EAGAIN if unstable; -1 with @why.
 */
int table_lookup(const struct sframe_jit_header *h, uint64_t pc, char *why,
		 size_t len);
void table_free(struct table *t);
/* The live descriptor that starts at @start, or NULL. */
const struct sframe_jit_fde *table_func(const struct table *t,
					uint64_t start);
uint32_t table_live(const struct table *t);

#endif /* SFRAME_JIT_TEST_H */
