// SPDX-License-Identifier: GPL-2.0
/*
 * Writers add, remove, compact and insert out of order, all at once,
 * while a reader thread reads the registry as the kernel does and checks
 * every stable read: live and dead descriptors sorted, apart and inside
 * the range, rows inside the area and well formed, seq even.  At the end
 * the table must hold exactly what the writers think they published.
 *
 * The reader makes lookups as the unwinder does (a binary search and one
 * function's rows), which are short enough to be stable most of the time
 * even under this load, and reads the whole table between them.  A whole
 * read takes long enough that four writers rewriting flat out seldom
 * leave it stable, so when many fail in a row the reader asks the
 * writers to pause between operations and reads the table then.
 *
 * Writer w owns the slots s with s % WRITERS == w, so the writers'
 * functions interleave in the address space and most additions land
 * between published functions.  An appender adds functions in address
 * order above all of them, which publishes them by the count alone, and
 * retires them all when it reaches the top; the reader looks up the
 * newest function often, the one an append has just published.  The
 * registry starts small, so that it grows several times under the
 * reader.
 */
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "test.h"

#define WRITERS		4
#define SLOT		64
#define SLOTS		2048
#define OWN		(SLOTS / WRITERS)
#define THREADS		(WRITERS + 1)	/* and the appender */
#define TOP		(2ULL * SLOTS * SLOT)	/* the appender's above */
/* Per writer; SFRAME_JIT_STRESS_OPS.  Fewer in an emulated VM. */
#define OPS		100000
#define OPS_KERNEL	20000
#define MAX_ROWS	8

struct slot {
	uint32_t size;		/* 0: free */
	uint32_t nr_rows;
	uint32_t stub;
};

struct writer {
	struct sframe_jit *reg;
	struct pause *p;
	int ops;
	uint64_t code;
	int id;
	uint64_t rng;
	struct slot slots[OWN];
	unsigned long adds, inserts, removes, compacts, finds;
	uint32_t appended;	/* the appender's live functions */
	int errors;
};

/* Writers stop between operations while @pause is set. */
struct pause {
	atomic_bool pause;
	atomic_int paused;	/* writers stopped or done */
};

struct reader {
	struct test_backend *tb;
	struct pause *p;
	uint64_t code;
	atomic_bool stop;
	unsigned long stable, unstable, paused, lookups, lookups_unstable;
	unsigned long violations;
	char why[256];
};

static uint32_t rows_make(uint64_t *rng, uint32_t limit,
			  struct sframe_jit_row *rows)
{
	uint32_t n = 1 + rnd(rng) % (limit < MAX_ROWS ? limit : MAX_ROWS);
	uint32_t step = limit / n, i;

	for (i = 0; i < n; i++)
		rows[i] = (struct sframe_jit_row) {
			.start_off	= i * step,
			.cfa_base	= i & 1 ? SFRAME_JIT_ROW_CFA_FP :
						  SFRAME_JIT_ROW_CFA_SP,
			.cfa_off	= 8 + 8 * i,
			.ra_off		= -8,
			.fp_off		= -16,
			.flags		= i ? SFRAME_JIT_ROW_FP_SAVED : 0,
		};
	return n;
}

static int writer_add(struct writer *w, uint32_t k, uint64_t addr)
{
	static const struct sframe_jit_x86_64_frame fp_frame = {
		.push_rbp = 1, .mov_rbp = 4,
	};
	struct sframe_jit_row rows[MAX_ROWS];
	struct slot *s = &w->slots[k];
	uint32_t size = 1 + rnd(&w->rng) % SLOT, n, stub = 0;
	int err;

	switch (rnd(&w->rng) % 3) {
	case 0:
		n = rows_make(&w->rng, size, rows);
		err = sframe_jit_add(w->reg, addr, size, rows, n, NULL);
		break;
	case 1:
		if (size < 5)
			size = 5;
		n = 3;
		err = sframe_jit_add_x86_64(w->reg, addr, size, &fp_frame,
					    NULL);
		break;
	default:
		stub = 1 + rnd(&w->rng) % size;
		n = rows_make(&w->rng, stub, rows);
		err = sframe_jit_add_stubs(w->reg, addr, size, stub, rows, n,
					   NULL);
		break;
	}
	if (err)
		return err;
	*s = (struct slot) { .size = size, .nr_rows = n, .stub = stub };
	return 0;
}

/* Does the registry hold what the writer published in slot @k? */
static bool writer_agrees(struct writer *w, uint32_t k, uint64_t addr)
{
	struct sframe_jit_func fn;
	struct slot *s = &w->slots[k];
	int err = sframe_jit_find(w->reg, addr, &fn, NULL, 0);

	if (!s->size)
		return err == -ENOENT;
	return !err && fn.start == addr && fn.size == s->size &&
	       fn.nr_rows == s->nr_rows && fn.stub_size == s->stub;
}

/* Stop while the reader asks; check again after: it may ask anew. */
static void writer_pause(struct writer *w)
{
	while (atomic_load(&w->p->pause)) {
		atomic_fetch_add(&w->p->paused, 1);
		while (atomic_load(&w->p->pause))
			sched_yield();
		atomic_fetch_sub(&w->p->paused, 1);
	}
}

static void *writer_run(void *arg)
{
	struct writer *w = arg;
	uint32_t k, r;
	uint64_t addr;
	int err, i;

	for (i = 0; i < w->ops; i++) {
		writer_pause(w);
		r = rnd(&w->rng) % 100;
		k = rnd(&w->rng) % OWN;
		addr = w->code + (uint64_t)(k * WRITERS + w->id) * SLOT;
		if (r < 50 && !w->slots[k].size) {
			err = writer_add(w, k, addr);
			w->adds++;
		} else if (r < 50 || r >= 95) {
			err = writer_agrees(w, k, addr) ? 0 : -EBADMSG;
			w->finds++;
		} else if (r < 90) {
			if (!w->slots[k].size)
				continue;
			if (r & 1)
				err = sframe_jit_remove(w->reg, addr);
			else
				err = sframe_jit_remove_range(w->reg, addr,
							      addr + SLOT) - 1;
			w->slots[k].size = 0;
			w->removes++;
		} else {
			err = sframe_jit_compact(w->reg);
			err = err < 0 ? err : 0;
			w->compacts++;
		}
		if (err && !w->errors++)
			test_log("writer %d op %d slot %u: %d", w->id, i, k, err);
	}
	atomic_fetch_add(&w->p->paused, 1);
	return NULL;
}

/* Appends in address order above the writers' slots, then retires all. */
static void *appender_run(void *arg)
{
	struct writer *w = arg;
	uint64_t base = w->code + SLOTS * SLOT;
	struct sframe_jit_row rows[MAX_ROWS];
	uint32_t n, size;
	int i, err;

	for (i = 0; i < w->ops; i++) {
		writer_pause(w);
		if (w->appended == SLOTS) {
			err = sframe_jit_remove_range(w->reg, base, w->code + TOP);
			err = err == SLOTS ? 0 : -EBADMSG;
			w->appended = 0;
			w->removes += SLOTS;
		} else {
			size = 1 + rnd(&w->rng) % SLOT;
			n = rows_make(&w->rng, size, rows);
			err = sframe_jit_add(w->reg, base +
					     (uint64_t)w->appended * SLOT, size,
					     rows, n, NULL);
			w->appended++;
			w->adds++;
		}
		if (err && !w->errors++)
			test_log("appender op %d: %d", i, err);
	}
	atomic_fetch_add(&w->p->paused, 1);
	return NULL;
}

/* Beyond the kernel's invariants: each function sits in one slot. */
static int slots_check(const struct table *t, uint64_t code, char *why,
		       size_t len)
{
	uint32_t i;

	for (i = 0; i < t->count; i++) {
		uint64_t off = t->fdes[i].func_start - code;

		if (off % SLOT || t->fdes[i].func_size > SLOT) {
			snprintf(why, len, "fde %u at +%#llx size %u", i,
				 (unsigned long long)off, t->fdes[i].func_size);
			return -1;
		}
	}
	return 0;
}

static void reader_violation(struct reader *rd, const char *why)
{
	if (!rd->violations++)
		snprintf(rd->why, sizeof(rd->why), "%s", why);
}

/* A whole read; paused: with every writer stopped between operations. */
static int reader_table(struct reader *rd, struct table *t, bool paused)
{
	char why[256];
	int err;

	if (paused) {
		atomic_store(&rd->p->pause, true);
		while (atomic_load(&rd->p->paused) < THREADS)
			sched_yield();
	}
	err = table_read(reg_hdr(rd->tb), t);
	if (paused)
		atomic_store(&rd->p->pause, false);
	if (err) {
		if (paused)
			reader_violation(rd, "unstable read with writers paused");
		rd->unstable++;
		return err;
	}
	if (paused)
		rd->paused++;
	else
		rd->stable++;
	if (table_check(t, why, sizeof(why)) ||
	    slots_check(t, rd->code, why, sizeof(why)))
		reader_violation(rd, why);
	return 0;
}

static void *reader_run(void *arg)
{
	struct reader *rd = arg;
	struct table t = { 0 };
	uint64_t rng = 7;
	int i, failed = 0, err;
	char why[256];

	while (!atomic_load(&rd->stop)) {
		for (i = 0; i < 64; i++) {
			/* Every other one: the newest function. */
			err = table_lookup(reg_hdr(rd->tb), rd->code +
					   (i & 1 ? TOP - 1 : rnd(&rng) % TOP),
					   why, sizeof(why));
			if (err == -EAGAIN)
				rd->lookups_unstable++;
			else if (err)
				reader_violation(rd, why);
			else
				rd->lookups++;
		}
		if (!reader_table(rd, &t, false))
			failed = 0;
		else if (++failed >= 32)
			failed = reader_table(rd, &t, true) ? failed : 0;
	}
	table_free(&t);
	return NULL;
}

TEST_TIMEOUT(stress_writers_and_a_reader_keep_the_table_valid, T_BOTH, 300)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 8,
			.fre_capacity = 16);
	struct writer *w = calloc(THREADS, sizeof(*w));
	struct reader rd = { 0 };
	struct pause p = { 0 };
	struct sframe_jit_info info = { .sz = sizeof(info) };
	pthread_t wt[THREADS], rt;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct table t = { 0 };
	unsigned long live = 0, adds = 0, removes = 0;
	uint64_t code = arena(TOP);
	const char *env = getenv("SFRAME_JIT_STRESS_OPS");
	int i, ops = env ? atoi(env) : test_env.kernel ? OPS_KERNEL : OPS;
	char why[256];
	uint32_t k;

	ASSERT(w);
	test_backend_init(&tb);
	tb.defer_unmap = true;
	reg = reg_new(&tb, code, code + TOP, &opts);
	rd.tb = &tb;
	rd.p = &p;
	rd.code = code;
	ASSERT(!pthread_create(&rt, NULL, reader_run, &rd));
	for (i = 0; i < THREADS; i++) {
		w[i].reg = reg;
		w[i].p = &p;
		w[i].ops = ops;
		w[i].code = code;
		w[i].id = i;
		w[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1);
		ASSERT(!pthread_create(&wt[i], NULL, i < WRITERS ? writer_run :
				       appender_run, &w[i]));
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(wt[i], NULL);
	atomic_store(&rd.stop, true);
	pthread_join(rt, NULL);

	for (i = 0; i < THREADS; i++) {
		EXPECT_EQ(0, w[i].errors);
		adds += w[i].adds;
		removes += w[i].removes;
	}
	EXPECT_EQ(0, rd.violations);
	if (rd.violations)
		test_log("first violation: %s", rd.why);
	EXPECT(rd.paused + rd.stable > 0);
	EXPECT(rd.lookups > 0);

	/* The final table is what the writers published. */
	table_read_stable(reg_hdr(&tb), &t);
	if (table_check(&t, why, sizeof(why)))
		test_fail(__FILE__, __LINE__, "final table: %s", why);
	for (i = 0; i < WRITERS; i++) {
		for (k = 0; k < OWN; k++) {
			uint64_t addr = code + (uint64_t)(k * WRITERS + i) *
					SLOT;
			const struct sframe_jit_fde *fde = table_func(&t, addr);
			struct slot *s = &w[i].slots[k];

			if (!s->size) {
				EXPECT(!fde);
				continue;
			}
			live++;
			ASSERT(fde);
			EXPECT_EQ(s->size, fde->func_size);
			EXPECT_EQ(s->nr_rows, fde->fre_count);
		}
	}
	for (k = 0; k < SLOTS; k++) {
		const struct sframe_jit_fde *fde;

		fde = table_func(&t, code + (uint64_t)(SLOTS + k) * SLOT);
		EXPECT(!fde == (k >= w[WRITERS].appended));
	}
	live += w[WRITERS].appended;
	EXPECT_EQ(live, table_live(&t));
	EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
	EXPECT_EQ(live, info.nr_funcs);
	EXPECT(info.nr_grows > 0);
	EXPECT(info.nr_compactions > 0);
	test_log("%lu adds, %lu removes, %lu live; %llu grows, %llu compactions; seq %u",
		 adds, removes, live, (unsigned long long)info.nr_grows,
		 (unsigned long long)info.nr_compactions, t.seq);
	test_log("reader: table reads %lu stable, %lu paused, %lu unstable",
		 rd.stable, rd.paused, rd.unstable);
	test_log("reader: lookups %lu stable, %lu unstable", rd.lookups,
		 rd.lookups_unstable);
	table_free(&t);
	sframe_jit_destroy(reg);
	test_backend_release(&tb);
	free(w);
}
