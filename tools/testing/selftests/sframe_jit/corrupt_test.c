// SPDX-License-Identifier: GPL-2.0
/*
 * A JIT registry is user memory, and the kernel must survive whatever
 * the process writes there while its unwinder reads it.
 *
 * A corrupter thread writes random bytes and random but plausible field
 * values over a registry (descriptors, rows, fde_count, seq, the
 * kernel-written layout fields of the header), shuffles descriptors,
 * changes the mapping's protection, drops its page-table entries and
 * replaces it with a larger registry, for a fixed time, while perf samples
 * the thread that runs the code the registry describes.  Chains may be
 * short or wrong; the test asserts only that records stay well formed
 * and bounded and that the process completes.  The VM runner fails the
 * run on any kernel report (oops, KASAN, UBSAN, lockdep, warning), which
 * is what this test is for.  SFRAME_CORRUPT_SEED=N repeats a run.
 *
 * Two more tests: garbage in the header's kernel-written fields changes
 * nothing (the kernel keeps its own layout), and a registry the JIT
 * republishes after a storm of corruption unwinds exactly again.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "sample_harness.h"

#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

#define SAMPLE_PERIOD_NS	100000
#define MIN_SAMPLES		1000UL
#define SESSION_SECONDS		20
#define CORRUPT_SECONDS		5
#define STORM_SECONDS		2
#define RING_PAGES		64
#define FDE_CAPACITY		16
#define FRE_CAPACITY		128
#define MAX_REPLACES		6

/* The chain: corrupt_run (C) -> outer -> middle -> leaf, all JIT. */
enum { FN_OUTER, FN_MIDDLE, FN_LEAF, NR_FNS };
#define NR_FRAMES	5	/* the IP, then return addresses to corrupt_run's */

struct chain_data {
	unsigned long spin;
	unsigned long ret[NR_FNS];
};

struct chain {
	unsigned char *map;		/* the code page, then the data page */
	struct chain_data *data;
	struct jit_fn fn[NR_FNS];
	struct jit_registry reg;
	/* The published descriptors and rows, to republish from. */
	struct sframe_jit_fde fdes[NR_FNS];
	struct sframe_jit_fre fres[NR_FNS * MAX_ROWS];
	__u32 nr_fres;
};

static unsigned long run_ret;

static bool emit_chain(struct chain *c)
{
	struct emitter e = { .buf = c->map, .cap = page_size() };
	struct chain_data *d = c->data;

	fn_begin(&e, &c->fn[FN_OUTER], "outer", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &d->ret[FN_OUTER]);
	emit_push(&e, RBX);
	emit_push(&e, R12);
	emit_sub_rsp(&e, 24);
	emit_mov_rax_imm(&e, 0);	/* patched below: the middle's address */
	emit_call_rax(&e);
	emit_add_rsp(&e, 24);
	emit_pop(&e, R12);
	emit_pop(&e, RBX);
	emit_ret(&e);
	fn_end(&e);

	fn_begin(&e, &c->fn[FN_MIDDLE], "middle", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &d->ret[FN_MIDDLE]);
	emit_frame_enter(&e);
	emit_sub_rsp(&e, 16);
	emit_mov_rax_imm(&e, 0);	/* patched below: the leaf's address */
	emit_call_rax(&e);
	emit_leave(&e);
	emit_ret(&e);
	fn_end(&e);

	fn_begin(&e, &c->fn[FN_LEAF], "leaf", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &d->ret[FN_LEAF]);
	emit_push(&e, RBX);
	emit_sub_rsp(&e, 8);
	emit_spin(&e, &d->spin);
	emit_add_rsp(&e, 8);
	emit_pop(&e, RBX);
	emit_ret(&e);
	fn_end(&e);
	pad_to(&e, e.cap);
	return !e.overflow;
}

/* The movabs before each call: its immediate is the callee's address. */
static void patch_call(struct chain *c, unsigned int caller,
		       unsigned int callee)
{
	const struct jit_fn *fn = &c->fn[caller];
	/* movabs $imm,%rax (10 bytes), then call *%rax (2). */
	unsigned char *imm = (unsigned char *)fn->start + fn->call_ret - 10;

	memcpy(imm, &c->fn[callee].start, 8);
}

static noinline long corrupt_run(const struct chain *c)
{
	long (*outer)(void) = (long (*)(void))c->fn[FN_OUTER].start;
	long r;

	run_ret = (unsigned long)__builtin_return_address(0);
	r = outer();
	__asm__ volatile("" : "+r"(r));
	return r;
}

static long run_chain(void *arg)
{
	long (*run)(const struct chain *c) = corrupt_run;

	__asm__ volatile("" : "+r"(run));
	return run(arg);
}

static bool stored_ok(const struct chain *c)
{
	const unsigned long *ret = c->data->ret;
	unsigned long run = (unsigned long)corrupt_run;

	return ret[FN_MIDDLE] == c->fn[FN_OUTER].start + c->fn[FN_OUTER].call_ret &&
	       ret[FN_LEAF] == c->fn[FN_MIDDLE].start + c->fn[FN_MIDDLE].call_ret &&
	       ret[FN_OUTER] > run && ret[FN_OUTER] < run + 4096;
}

static void chain_setup(struct __test_metadata *_metadata, struct chain *c,
			bool publish)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->map = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c->map);
	c->data = (struct chain_data *)(c->map + page_size());
	c->data->spin = 1;
	ASSERT_TRUE(emit_chain(c));
	patch_call(c, FN_OUTER, FN_MIDDLE);
	patch_call(c, FN_MIDDLE, FN_LEAF);
	ASSERT_EQ(0, mprotect(c->map, page_size(), PROT_READ | PROT_EXEC));
	if (!publish)
		return;
	registry_new(_metadata, &c->reg, (unsigned long)c->map,
		     (unsigned long)c->map + page_size(), FDE_CAPACITY,
		     FRE_CAPACITY);
	for (i = 0; i < NR_FNS; i++) {
		ASSERT_EQ(0, jit_registry_append(&c->reg, &c->fn[i]));
		memcpy(&c->fdes[i], jit_registry_fde(&c->reg, i),
		       sizeof(c->fdes[i]));
	}
	c->nr_fres = c->reg.nr_fres;
	for (i = 0; i < c->nr_fres; i++)
		memcpy(&c->fres[i], jit_registry_fre(&c->reg, i),
		       sizeof(c->fres[i]));
}

static void chain_teardown(struct chain *c)
{
	jit_registry_unmap(&c->reg);
	if (c->map && c->map != MAP_FAILED)
		munmap(c->map, 2 * page_size());
}

/*
 * Put back what the JIT published, as a JIT that compacts would: under
 * an odd seq, which it then makes even, with reserved0 zero again.  The
 * header's kernel-written fields stay as they are.
 */
static void republish(struct chain *c)
{
	struct jit_registry *r = &c->reg;
	__u32 seq = __atomic_load_n(&r->hdr->seq, __ATOMIC_RELAXED) | 1;
	unsigned int i;

	__atomic_store_n(&r->hdr->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < NR_FNS; i++) {
		memset(jit_registry_fde(r, i), 0, r->fde_stride);
		memcpy(jit_registry_fde(r, i), &c->fdes[i], sizeof(c->fdes[i]));
	}
	for (i = 0; i < c->nr_fres; i++) {
		memset(jit_registry_fre(r, i), 0, r->fre_stride);
		memcpy(jit_registry_fre(r, i), &c->fres[i], sizeof(c->fres[i]));
	}
	/* The JIT's side of the header, which must be zero. */
	__atomic_store_n(&r->hdr->reserved0, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr->fde_count, NR_FNS, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr->seq, seq + 1, __ATOMIC_RELEASE);
}

/* xorshift64*: reproducible from the logged seed. */
static __u64 rnd(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static __u64 rnd_below(__u64 *s, __u64 n)
{
	return n ? rnd(s) % n : 0;
}

/* Mostly near a bound, sometimes anything: where checks go wrong. */
static __u64 rnd_near(__u64 *s, __u64 bound)
{
	switch (rnd_below(s, 4)) {
	case 0:
		return rnd(s);
	case 1:
		return bound + rnd_below(s, 16) - 8;
	default:
		return rnd_below(s, bound + 16);
	}
}

struct corrupter {
	struct chain *c;
	__u64 seed;
	double seconds;
	bool stop;
	int error;
	const char *error_what;
	unsigned long ops, republished, replaced, protected, dropped;
};

static void corrupt_fde(struct corrupter *k, __u64 *s)
{
	struct jit_registry *r = &k->c->reg;
	struct sframe_jit_fde *fde;
	__u64 text = r->text_end - r->text_start;

	/* Mostly the published ones, where lookups go. */
	fde = jit_registry_fde(r, rnd_below(s, 4) ? rnd_below(s, NR_FNS) :
				  rnd_below(s, r->fde_capacity));
	switch (rnd_below(s, 7)) {
	case 0:
		fde->func_start = r->text_start + rnd_near(s, text) - 64;
		break;
	case 1:
		fde->func_size = rnd_near(s, text);
		break;
	case 2:
		fde->fre_start = rnd_near(s, r->fre_capacity);
		break;
	case 3:
		fde->fre_count = rnd_near(s, r->fre_capacity);
		break;
	case 4:
		fde->flags = rnd_below(s, 4) ? rnd_below(s, 2) : rnd(s);
		break;
	case 5:
		fde->type = rnd_below(s, 3);
		break;
	default:
		fde->rep_size = rnd_below(s, 3) ? rnd_below(s, 4) : rnd(s);
		break;
	}
}

static void corrupt_fre(struct corrupter *k, __u64 *s)
{
	struct jit_registry *r = &k->c->reg;
	struct sframe_jit_fre *fre;

	fre = jit_registry_fre(r, rnd_below(s, 4) ?
				  rnd_below(s, k->c->nr_fres) :
				  rnd_below(s, r->fre_capacity));
	switch (rnd_below(s, 6)) {
	case 0:
		fre->start_off = rnd_near(s, 128);
		break;
	case 1:
		/* Small offsets reach the stack; large ones, anything. */
		fre->cfa_off = rnd_below(s, 2) ? (__s32)rnd_below(s, 512) - 128 :
						 (__s32)rnd(s);
		break;
	case 2:
		fre->ra_off = rnd_below(s, 2) ? (__s16)rnd_below(s, 64) - 32 :
						(__s16)rnd(s);
		break;
	case 3:
		fre->fp_off = rnd_below(s, 2) ? (__s16)rnd_below(s, 64) - 32 :
						(__s16)rnd(s);
		break;
	case 4:
		fre->cfa_base = rnd_below(s, 3);
		break;
	default:
		fre->flags = rnd_below(s, 2) ? rnd_below(s, 4) : rnd(s);
		break;
	}
}

/* The JIT-written header fields, and the kernel-written ones. */
static void corrupt_header(struct corrupter *k, __u64 *s)
{
	struct jit_registry *r = &k->c->reg;
	struct sframe_jit_header *h = r->hdr;
	__u64 *word;

	switch (rnd_below(s, 4)) {
	case 0:
		__atomic_store_n(&h->fde_count,
				 (__u32)rnd_near(s, r->fde_capacity),
				 __ATOMIC_RELEASE);
		break;
	case 1:
		__atomic_store_n(&h->seq, (__u32)rnd(s), __ATOMIC_RELEASE);
		break;
	default:
		/* Anywhere in the header page: layout, stats, reserved. */
		word = (__u64 *)h + rnd_below(s, page_size() / 8);
		__atomic_store_n(word, rnd(s), __ATOMIC_RELAXED);
		break;
	}
}

/* Two descriptors swap places: the binary search meets disorder. */
static void shuffle_fdes(struct corrupter *k, __u64 *s)
{
	struct jit_registry *r = &k->c->reg;
	struct sframe_jit_fde tmp, *a, *b;

	a = jit_registry_fde(r, rnd_below(s, NR_FNS + 1));
	b = jit_registry_fde(r, rnd_below(s, NR_FNS + 1));
	memcpy(&tmp, a, sizeof(tmp));
	memcpy(a, b, sizeof(tmp));
	memcpy(b, &tmp, sizeof(tmp));
}

/* Random bytes over a random stretch of the mapping. */
static void scribble(struct corrupter *k, __u64 *s)
{
	struct jit_registry *r = &k->c->reg;
	unsigned char *base = (unsigned char *)r->hdr;
	size_t at = rnd_below(s, r->map_size);
	size_t n = rnd_below(s, 4) ? 1 + rnd_below(s, 8) : rnd_below(s, 512);
	size_t i;

	if (n > r->map_size - at)
		n = r->map_size - at;
	for (i = 0; i < n; i++)
		base[at + i] = rnd(s);
}

/* The registry is written through its own mapping, which may change. */
static int mapping_games(struct corrupter *k, __u64 *s)
{
	struct jit_registry *r = &k->c->reg;

	if (rnd_below(s, 2)) {
		int prot = rnd_below(s, 2) ? PROT_NONE : PROT_READ;

		if (mprotect(r->hdr, r->map_size, prot))
			return -errno;
		sched_yield();
		if (mprotect(r->hdr, r->map_size, PROT_READ | PROT_WRITE))
			return -errno;
		k->protected++;
		return 0;
	}
	if (madvise(r->hdr, r->map_size, MADV_DONTNEED))
		return -errno;
	k->dropped++;
	return 0;
}

/* SFRAME_JIT_REPLACE copies the garbage into a larger registry. */
static int replace_registry(struct corrupter *k)
{
	struct jit_registry *r = &k->c->reg;
	struct sframe_jit_header *old = r->hdr, *hdr = NULL;
	size_t old_size = r->map_size;
	int ret, fd = -1;

	ret = jit_replace_counted(r->fd, r->text_start, r->text_end,
				  2 * r->fde_capacity, 2 * r->fre_capacity,
				  &hdr, &fd);
	if (ret)
		return ret;
	ret = jit_registry_move(r, hdr, fd);
	if (ret) {
		munmap(hdr, hdr->map_size);
		close(fd);
		return ret;
	}
	k->replaced++;
	return munmap(old, old_size) ? -errno : 0;
}

static int corrupt_once(struct corrupter *k, __u64 *s)
{
	switch (rnd_below(s, 64)) {
	case 0:
		republish(k->c);
		k->republished++;
		return 0;
	case 1:
		return mapping_games(k, s);
	case 2:
		if (k->replaced < MAX_REPLACES && !rnd_below(s, 16))
			return replace_registry(k);
		return 0;
	case 3 ... 7:
		shuffle_fdes(k, s);
		return 0;
	case 8 ... 15:
		scribble(k, s);
		return 0;
	case 16 ... 27:
		corrupt_header(k, s);
		return 0;
	case 28 ... 45:
		corrupt_fde(k, s);
		return 0;
	default:
		corrupt_fre(k, s);
		return 0;
	}
}

static void *corrupter_main(void *arg)
{
	struct corrupter *k = arg;
	struct timespec start;
	__u64 s = k->seed;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE) &&
	       elapsed(CLOCK_MONOTONIC, &start) < k->seconds) {
		int ret = corrupt_once(k, &s);

		if (ret) {
			k->error_what = "mprotect, madvise or SFRAME_JIT_REPLACE";
			__atomic_store_n(&k->error, ret, __ATOMIC_RELEASE);
			break;
		}
		k->ops++;
		/* Give the republished registry a moment now and then. */
		if (!(k->ops & 1023))
			sched_yield();
	}
	__atomic_store_n(&k->stop, true, __ATOMIC_RELEASE);
	return NULL;
}

static __u64 corrupt_seed(void)
{
	const char *env = getenv("SFRAME_CORRUPT_SEED");
	struct timespec ts;

	if (env && *env)
		return strtoull(env, NULL, 0) ?: 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((__u64)ts.tv_sec << 32 ^ ts.tv_nsec ^ getpid()) | 1;
}

struct tally {
	unsigned long runs, bad_runs;
	struct ring_counts ring;
	unsigned long not_user, in_leaf, exact, longest;
};

struct judge {
	struct tally *t;
	const struct chain *c;
	__u64 want[NR_FRAMES];
};

static void judge_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct judge *jd = arg;
	const struct jit_fn *leaf = &jd->c->fn[FN_LEAF];
	struct tally *t = jd->t;

	if (nr > t->longest)
		t->longest = nr;
	if (ip < leaf->start + leaf->spin_start ||
	    ip >= leaf->start + leaf->spin_end)
		return;
	t->in_leaf++;
	jd->want[0] = ip;
	t->exact += chain_first_bad(chain, nr, jd->want, NR_FRAMES) == NR_FRAMES;
}

/*
 * Run the chain under the sampler until @until says stop; no assertion
 * inside, a corrupter thread may be running.
 */
static void sample_runs(struct chain *c, struct sampler *smp, struct tally *t,
			bool (*until)(void *arg, const struct tally *t),
			void *arg)
{
	while (!until(arg, t)) {
		struct timespec start;
		struct judge jd;
		double took;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
		run_chain(c);
		took = elapsed(CLOCK_THREAD_CPUTIME_ID, &start);
		t->runs++;
		if (!stored_ok(c)) {
			t->bad_runs++;
			break;
		}
		jd = (struct judge) {
			.t = t, .c = c,
			.want = { 0, c->data->ret[FN_LEAF],
				  c->data->ret[FN_MIDDLE],
				  c->data->ret[FN_OUTER], run_ret },
		};
		sampler_drain_chains(smp, judge_chain, &jd, &t->not_user,
				     &t->ring);
		spin_tune(&c->data->spin, took);
	}
}

static void tally_log(struct __test_metadata *_metadata, const char *what,
		      const struct tally *t)
{
	TH_LOG("%s: %lu runs, %lu samples, %lu in the leaf loop, %lu of them exact",
	       what, t->runs, t->ring.samples, t->in_leaf, t->exact);
	TH_LOG("%s: longest user chain %lu, %lu without a user context",
	       what, t->longest, t->not_user);
	TH_LOG("%s: %lu bad records, %lu lost, %lu throttles",
	       what, t->ring.bad_records, t->ring.lost, t->ring.throttled);
}

static void sampler_setup(struct __test_metadata *_metadata,
			  struct sampler *s)
{
	struct perf_event_attr attr;

	sampler_attr(&attr, SAMPLE_PERIOD_NS, true);
	sampler_start(_metadata, s, &attr, RING_PAGES);
	ASSERT_EQ(0, sampler_enable(s, true));
}

static bool until_corrupter_stops(void *arg, const struct tally *t)
{
	struct corrupter *k = arg;

	(void)t;
	return __atomic_load_n(&k->stop, __ATOMIC_ACQUIRE);
}

struct session {
	struct timespec start;
};

static bool until_enough(void *arg, const struct tally *t)
{
	struct session *ss = arg;

	return t->in_leaf >= MIN_SAMPLES ||
	       elapsed(CLOCK_MONOTONIC, &ss->start) >= SESSION_SECONDS;
}

/* Corrupt for @seconds while sampling; the tally of that time. */
static void storm(struct __test_metadata *_metadata, struct chain *c,
		  double seconds, struct corrupter *k, struct tally *t)
{
	struct sampler smp;
	pthread_t thread;

	*k = (struct corrupter) {
		.c = c, .seed = corrupt_seed(), .seconds = seconds,
	};
	TH_LOG("seed %#llx (SFRAME_CORRUPT_SEED to repeat)",
	       (unsigned long long)k->seed);
	sampler_setup(_metadata, &smp);
	ASSERT_EQ(0, pthread_create(&thread, NULL, corrupter_main, k));
	sample_runs(c, &smp, t, until_corrupter_stops, k);
	__atomic_store_n(&k->stop, true, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);
	TH_LOG("corrupter: %lu writes, %lu republished, %lu replaced",
	       k->ops, k->republished, k->replaced);
	TH_LOG("corrupter: %lu protection changes, %lu page drops",
	       k->protected, k->dropped);
	ASSERT_EQ(0, k->error) TH_LOG("corrupter: %s: %s", k->error_what,
				      strerror(-k->error));
	ASSERT_EQ(0UL, t->bad_runs);
}

/* Sample until MIN_SAMPLES leaf samples, without corruption. */
static void calm(struct __test_metadata *_metadata, struct chain *c,
		 struct tally *t)
{
	struct session ss;
	struct sampler smp;

	sampler_setup(_metadata, &smp);
	clock_gettime(CLOCK_MONOTONIC, &ss.start);
	sample_runs(c, &smp, t, until_enough, &ss);
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);
	ASSERT_EQ(0UL, t->bad_runs);
}

/* Tests without the system call or perf: the chain and its rows. */
FIXTURE(native) {
	struct chain c;
};

FIXTURE_SETUP(native)
{
	chain_setup(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(native)
{
	chain_teardown(&self->c);
}

TEST_F(native, the_chain_runs_and_each_row_finds_its_return_address)
{
	struct chain *c = &self->c;
	const struct trace_fn fns[NR_FNS] = {
		{ &c->fn[FN_OUTER], &c->data->ret[FN_OUTER] },
		{ &c->fn[FN_MIDDLE], &c->data->ret[FN_MIDDLE] },
		{ &c->fn[FN_LEAF], &c->data->ret[FN_LEAF] },
	};
	long r;

	c->data->spin = 3;
	run_chain(c);
	ASSERT_TRUE(stored_ok(c));
	rows_trace(_metadata, "the chain", fns, NR_FNS, run_chain, c, &r);
}

/* Sampling tests: the patched kernel, under QEMU. */
FIXTURE(corrupt) {
	struct chain c;
};

FIXTURE_SETUP(corrupt)
{
	if (sampling_skip(_metadata))
		return;
	chain_setup(_metadata, &self->c, true);
}

FIXTURE_TEARDOWN(corrupt)
{
	chain_teardown(&self->c);
}

TEST_F_TIMEOUT(corrupt, random_writes_over_the_registry_while_sampling_leave_the_kernel_standing,
	       60)
{
	struct corrupter k;
	struct tally t = { 0 };

	storm(_metadata, &self->c, CORRUPT_SECONDS, &k, &t);
	tally_log(_metadata, "under corruption", &t);
	/* Chains may be anything; records and their bounds may not. */
	EXPECT_EQ(0UL, t.ring.bad_records);
	EXPECT_EQ(0UL, t.not_user);
	EXPECT_GE((unsigned long)SAMPLER_MAX_STACK, t.longest);
	EXPECT_LT(0UL, t.ring.samples);
	EXPECT_LT(1000UL, k.ops);
}

/*
 * The kernel keeps its own copy of the layout: garbage in every field of
 * the header the kernel wrote (not in fde_count, seq or reserved) changes
 * no chain.
 */
TEST_F_TIMEOUT(corrupt, garbage_in_the_kernel_written_header_fields_changes_no_chain,
	       60)
{
	struct sframe_jit_header *h = self->c.reg.hdr;
	struct tally t = { 0 };
	__u64 s = 0x5eed;

	h->magic = rnd(&s);
	h->version = rnd(&s);
	h->header_size = rnd(&s);
	h->fde_stride = rnd(&s);
	h->fre_stride = rnd(&s);
	h->flags = rnd(&s);
	h->text_start = rnd(&s);
	h->text_end = rnd(&s);
	h->fde_off = rnd(&s);
	h->fde_capacity = rnd(&s);
	h->fre_off = rnd(&s);
	h->fre_capacity = rnd(&s);
	h->map_size = rnd(&s);
	h->stats.lookups = rnd(&s);
	h->stats.hits = rnd(&s);
	h->stats.tombstone_hits = rnd(&s);
	h->stats.seq_retries = rnd(&s);
	h->stats.malformed = rnd(&s);
	calm(_metadata, &self->c, &t);
	tally_log(_metadata, "scribbled header", &t);
	EXPECT_EQ(0UL, t.ring.bad_records);
	ASSERT_LE(MIN_SAMPLES, t.in_leaf) TH_LOG("too few samples");
	EXPECT_EQ(t.in_leaf, t.exact);
}

/*
 * After a storm of corruption, the JIT puts its descriptors, rows,
 * count, reserved0 and seq back (the kernel-written fields stay
 * garbage): exact again, whatever the unwinder met before.
 */
TEST_F_TIMEOUT(corrupt, a_registry_republished_after_corruption_unwinds_exactly,
	       60)
{
	struct tally during = { 0 }, after = { 0 };
	struct corrupter k;

	storm(_metadata, &self->c, STORM_SECONDS, &k, &during);
	tally_log(_metadata, "under corruption", &during);
	republish(&self->c);
	calm(_metadata, &self->c, &after);
	tally_log(_metadata, "republished", &after);
	EXPECT_EQ(0UL, during.ring.bad_records + after.ring.bad_records);
	ASSERT_LE(MIN_SAMPLES, after.in_leaf) TH_LOG("too few samples");
	EXPECT_EQ(after.in_leaf, after.exact);
}

TEST_HARNESS_MAIN
