// SPDX-License-Identifier: GPL-2.0
/*
 * Producer threads: the writer lock (lock.c) and what it reports, and
 * the pattern Documentation/sframe_jit.rst recommends to a JIT that
 * emits code on several threads at once, a registry per thread.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "test.h"

#define CODE_SIZE	(1024 * 1024)

static struct sframe_jit_info info_of(struct sframe_jit *reg)
{
	struct sframe_jit_info info = { .sz = sizeof(info) };

	ASSERT_EQ(0, sframe_jit_get_info(reg, &info));
	return info;
}

struct adder {
	struct sframe_jit *reg;
	uint64_t start;
	int err;
};

static void *add_one_fn(void *arg)
{
	struct adder *a = arg;

	a->err = sframe_jit_add(a->reg, a->start, 32, rows_fp32, 4, NULL);
	return NULL;
}

TEST(a_call_that_finds_the_lock_held_waits_and_is_counted, T_MEM)
{
	struct adder a = { .err = 1 };
	struct sframe_jit_info info;
	struct test_backend tb;
	pthread_t thread;
	uint64_t code = arena(CODE_SIZE);

	test_backend_init(&tb);
	a.reg = reg_new(&tb, code, code + CODE_SIZE, NULL);
	a.start = code;
	EXPECT_EQ(0, info_of(a.reg).nr_lock_waits);

	/* Hold the lock as another writer would, until the adder sleeps. */
	sframe_jit__lock(&a.reg->lock);
	ASSERT_EQ(0, pthread_create(&thread, NULL, add_one_fn, &a));
	while (atomic_load(&a.reg->lock.state) != SFRAME_JIT_LOCK_WAITED)
		sched_yield();
	EXPECT_EQ(1, a.err);
	sframe_jit__unlock(&a.reg->lock);
	ASSERT_EQ(0, pthread_join(thread, NULL));

	EXPECT_EQ(0, a.err);
	info = info_of(a.reg);
	EXPECT_EQ(1, info.nr_funcs);
	EXPECT_EQ(1, info.nr_lock_waits);
	EXPECT(info.lock_wait_ns > 0);
	EXPECT_EQ(SFRAME_JIT_LOCK_FREE, atomic_load(&a.reg->lock.state));
	sframe_jit_destroy(a.reg);
}

TEST(an_uncontended_call_leaves_the_lock_free_and_uncounted, T_MEM)
{
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(CODE_SIZE);

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + CODE_SIZE, NULL);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 32, rows_fp32, 4, NULL));
	EXPECT_EQ(0, sframe_jit_remove(reg, code));
	EXPECT_EQ(0, info_of(reg).nr_lock_waits);
	EXPECT_EQ(0, info_of(reg).lock_wait_ns);
	EXPECT_EQ(SFRAME_JIT_LOCK_FREE, atomic_load(&reg->lock.state));
	sframe_jit_destroy(reg);
}

#define PER_THREAD_FUNCS	2000

struct region {
	struct test_backend tb;
	uint64_t code;
	struct sframe_jit *reg;
	pthread_barrier_t *go;
	int err;
};

/* A thread that emits into its own code region, with its own registry. */
static void *emit_region(void *arg)
{
	struct region *r = arg;
	uint32_t i;

	pthread_barrier_wait(r->go);
	for (i = 0; i < PER_THREAD_FUNCS && !r->err; i++)
		r->err = sframe_jit_add(r->reg, r->code + 64 * i, 32, rows_fp32, 4,
					NULL);
	return NULL;
}

/*
 * The pattern of Documentation/sframe_jit.rst for a JIT that emits code
 * on several threads: each thread its own code region and registry.  The
 * registries never share a lock, so no call waits, and each holds what
 * its thread published, in order.
 */
TEST(threads_with_a_registry_each_publish_without_waiting, T_BOTH)
{
	struct region r[2];
	pthread_barrier_t go;
	pthread_t th[2];
	struct table t = { 0 };
	char why[256];
	int i;

	pthread_barrier_init(&go, NULL, 2);
	for (i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		test_backend_init(&r[i].tb);
		r[i].code = arena(64 * PER_THREAD_FUNCS);
		r[i].reg = reg_new(&r[i].tb, r[i].code,
				   r[i].code + 64 * PER_THREAD_FUNCS, NULL);
		r[i].go = &go;
	}
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, emit_region, &r[i]));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	pthread_barrier_destroy(&go);

	for (i = 0; i < 2; i++) {
		struct sframe_jit_info info = info_of(r[i].reg);

		EXPECT_EQ(0, r[i].err);
		EXPECT_EQ(PER_THREAD_FUNCS, info.nr_funcs);
		EXPECT_EQ(0, info.nr_lock_waits);
		table_read_stable(reg_hdr(&r[i].tb), &t);
		if (table_check(&t, why, sizeof(why)))
			test_fail(__FILE__, __LINE__, "invariant: %s", why);
		EXPECT_EQ(PER_THREAD_FUNCS, table_live(&t));
		EXPECT(table_func(&t, r[i].code + 64 * (PER_THREAD_FUNCS - 1)));
		sframe_jit_destroy(r[i].reg);
	}
	table_free(&t);
}
