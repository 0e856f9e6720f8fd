// SPDX-License-Identifier: GPL-2.0
/*
 * A producer thread appends functions to a JIT registry in a tight loop
 * while the sampled thread keeps calling the newest one: every perf
 * sample in JIT code must carry the exact chain.
 *
 * The producer writes each new function's code into a code arena, past
 * the last one, then appends its rows and descriptor and advances the
 * count with a store-release (no seq: appends rewrite nothing), then
 * publishes it to the sampled thread.  When the registry is full it
 * replaces it with one twice as large (SFRAME_JIT_REPLACE), as a JIT
 * does; when the arena is full it registers a new arena and, once the
 * sampled thread runs code there, unmaps the old one and its registry,
 * which unregisters it.
 * So samples race with appends, replacements and registrations alike.
 *
 * Function n has a frame layout of its own (pushes, stack adjustment,
 * frame pointer or not), stores its return address at entry and spins;
 * the chain compared is the IP in its loop, its return address into
 * append_run (C) and append_run's own.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "sample_harness.h"

#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

#define POISON_WORD	0x0badf00d

#define SAMPLE_PERIOD_NS	100000
#define MIN_SAMPLES		1000UL
#define MIN_RETIRED		2	/* arenas unregistered while sampling */
#define SESSION_SECONDS		30
#define RING_PAGES		64

#define ARENA_BYTES	(1UL << 20)
#define FN_STRIDE	128		/* bytes a function takes in the arena */
#define ARENA_FNS	(ARENA_BYTES / FN_STRIDE)
#define MAX_ARENAS	3		/* registered at once */
#define FIRST_FDES	64		/* a new registry's capacity, doubled */
#define ROWS_PER_FN	MAX_ROWS
#define INFO_RING	1024		/* functions the sampled thread can look up */

static const int push_regs[] = { RBX, R12, R13, R14 };

/* The frame layout of function n. */
struct layout {
	unsigned int npush;
	__u8 sub;
	bool fp;
};

static struct layout layout_of(unsigned long n)
{
	struct layout l = {
		.npush = n % 4,
		.sub = 8 * ((n / 4) % 6),
		.fp = n % 7 == 3,
	};

	return l;
}

#define NR_LAYOUTS	(4 * 6 * 7)

/* Written by the functions, read by the sampled thread. */
struct fn_data {
	unsigned long spin;
	unsigned long ret;
};

/* One code arena and its registry. */
struct arena {
	unsigned long id;
	unsigned char *code;
	struct jit_registry reg;
	unsigned int nr_fns;
};

/* What the sampled thread needs to call function n and judge samples. */
struct fn_info {
	unsigned long n;
	unsigned long start;
	__u32 spin_start, spin_end;
	unsigned long arena;
};

struct producer {
	struct fn_data *data;
	/* Producer side. */
	struct arena arenas[MAX_ARENAS];	/* by id % MAX_ARENAS */
	unsigned long first_arena, next_arena;	/* live: [first, next) */
	struct fn_info info[INFO_RING];
	/* Shared. */
	unsigned long newest;		/* function n published, release */
	unsigned long using_arena;	/* the sampled thread's, seq_cst */
	bool stop;
	int error;
	const char *error_what;
	/* Counts, read at the end. */
	unsigned long appended, replaced, registered, retired, waits;
};

/* append_run()'s return address, stored by each call. */
static unsigned long run_ret;

/*
 * Function n at @at: store the return address, build its frame, fill
 * the frame with poison, spin, tear it down.
 */
static bool emit_fn(struct emitter *e, struct jit_fn *fn, unsigned long n,
		    struct fn_data *data)
{
	struct layout l = layout_of(n);
	unsigned int i, off;

	fn_begin(e, fn, "fn", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(e, &data->ret);
	if (l.fp)
		emit_frame_enter(e);
	for (i = 0; i < l.npush; i++)
		emit_push(e, push_regs[i]);
	if (l.sub)
		emit_sub_rsp(e, l.sub);
	for (off = 0; off < l.sub; off += 8)
		emit_store_rsp_imm(e, off, POISON_WORD);
	emit_spin(e, &data->spin);
	if (l.sub)
		emit_add_rsp(e, l.sub);
	for (i = l.npush; i-- > 0;)
		emit_pop(e, push_regs[i]);
	if (l.fp)
		emit_leave(e);
	emit_ret(e);
	fn_end(e);
	return !e->overflow && fn->size <= FN_STRIDE;
}

static void fail(struct producer *p, int err, const char *what)
{
	p->error_what = what;
	__atomic_store_n(&p->error, err, __ATOMIC_RELEASE);
}

static struct arena *arena_of(struct producer *p, unsigned long id)
{
	return &p->arenas[id % MAX_ARENAS];
}

static int arena_open(struct producer *p)
{
	struct arena *a = arena_of(p, p->next_arena);
	struct sframe_jit_header *hdr = NULL;
	int ret, fd = -1;

	memset(a, 0, sizeof(*a));
	a->id = p->next_arena;
	a->code = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->code == MAP_FAILED)
		return -errno;
	/* The descriptor stays, for SFRAME_JIT_REPLACE to name it by. */
	ret = jit_register_fd((unsigned long)a->code,
			      (unsigned long)a->code + ARENA_BYTES, FIRST_FDES,
			      FIRST_FDES * ROWS_PER_FN, &hdr, &fd);
	if (!ret)
		ret = jit_registry_attach(&a->reg, hdr);
	a->reg.fd = fd;
	if (ret) {
		jit_registry_unmap(&a->reg);
		munmap(a->code, ARENA_BYTES);
		return ret;
	}
	p->next_arena++;
	p->registered++;
	return 0;
}

/*
 * Unmap the oldest arena's registry, which unregisters it, and its
 * code; the sampled thread left it.
 */
static int arena_retire(struct producer *p)
{
	struct arena *a = arena_of(p, p->first_arena);
	int ret;

	ret = jit_registry_unmap(&a->reg);
	if (ret)
		return ret;
	munmap(a->code, ARENA_BYTES);
	p->first_arena++;
	p->retired++;
	return 0;
}

/* The registry is full: a larger one, without a gap; drop the old one. */
static int registry_grow(struct arena *a)
{
	struct sframe_jit_header *old = a->reg.hdr, *hdr = NULL;
	size_t old_size = a->reg.map_size;
	int ret, fd = -1;

	ret = jit_replace(a->reg.fd, a->reg.text_start, a->reg.text_end,
			  2 * a->reg.fde_capacity, 2 * a->reg.fre_capacity,
			  &hdr, &fd);
	if (ret)
		return ret;
	ret = jit_registry_move(&a->reg, hdr, fd);
	if (ret) {
		munmap(hdr, hdr->map_size);
		close(fd);
		return ret;
	}
	/* The kernel no longer reads it. */
	return munmap(old, old_size) ? -errno : 0;
}

/* Emit, append and publish function n into the newest arena. */
static int produce_one(struct producer *p, unsigned long n)
{
	struct arena *a = arena_of(p, p->next_arena - 1);
	struct emitter e = {
		.buf = a->code + (size_t)a->nr_fns * FN_STRIDE,
		.cap = FN_STRIDE,
	};
	struct fn_info *info = &p->info[n % INFO_RING];
	struct jit_fn fn;
	int ret;

	if (!emit_fn(&e, &fn, n, p->data))
		return -E2BIG;
	ret = jit_registry_append(&a->reg, &fn);
	if (ret == -ENOSPC) {
		ret = registry_grow(a);
		if (ret)
			return ret;
		p->replaced++;
		ret = jit_registry_append(&a->reg, &fn);
	}
	if (ret)
		return ret;
	a->nr_fns++;
	info->n = n;
	info->start = fn.start;
	info->spin_start = fn.spin_start;
	info->spin_end = fn.spin_end;
	info->arena = a->id;
	__atomic_store_n(&p->newest, n, __ATOMIC_RELEASE);
	__atomic_store_n(&p->appended, p->appended + 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * Room for the next function: in the newest arena, or in a new one, for
 * which the oldest must be retired first if MAX_ARENAS are open.
 * Returns 1 if the producer must wait for the sampled thread.
 */
static int make_room(struct producer *p)
{
	unsigned long using;
	int ret;

	using = __atomic_load_n(&p->using_arena, __ATOMIC_SEQ_CST);
	/* The sampled thread never goes back to an older arena. */
	while (p->first_arena < using && p->next_arena - p->first_arena > 1) {
		ret = arena_retire(p);
		if (ret) {
			fail(p, ret, "munmap of an old arena's registry");
			return ret;
		}
	}
	if (arena_of(p, p->next_arena - 1)->nr_fns < ARENA_FNS)
		return 0;
	if (p->next_arena - p->first_arena == MAX_ARENAS)
		return 1;
	ret = arena_open(p);
	if (ret)
		fail(p, ret, "sframe_jit_open of a new arena");
	return ret;
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	unsigned long n = p->newest + 1;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		int ret = make_room(p);

		if (ret < 0)
			break;
		if (ret) {
			p->waits++;
			sched_yield();
			continue;
		}
		ret = produce_one(p, n);
		if (ret) {
			fail(p, ret, "appending a function");
			break;
		}
		n++;
	}
	return NULL;
}

/* Run function @start once; stores run_ret and its return address. */
static noinline long append_run(unsigned long start)
{
	long (*fn)(void) = (long (*)(void))start;
	long r;

	run_ret = (unsigned long)__builtin_return_address(0);
	r = fn();
	__asm__ volatile("" : "+r"(r));
	return r;
}

static long run_fn(unsigned long start)
{
	long (*run)(unsigned long start) = append_run;

	__asm__ volatile("" : "+r"(run));
	return run(start);
}

/* The newest function, read consistently with the producer's ring. */
static void newest_get(struct producer *p, struct fn_info *out)
{
	for (;;) {
		unsigned long n = __atomic_load_n(&p->newest, __ATOMIC_ACQUIRE);

		*out = p->info[n % INFO_RING];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		/* Entry n is rewritten only once n + INFO_RING - 1 is out. */
		if (__atomic_load_n(&p->newest, __ATOMIC_RELAXED) - n <
		    INFO_RING / 2 && out->n == n)
			return;
	}
}

#define NR_FRAMES	3

struct tally {
	unsigned long runs;
	unsigned long bad_ret;		/* runs that stored a wrong return address */
	struct ring_counts ring;
	unsigned long not_user, elsewhere;
	unsigned long checked, exact;
	unsigned long first_bad[NR_FRAMES];
	__u64 example[NR_FRAMES], example_want[NR_FRAMES];
	unsigned int example_nr;
	unsigned long example_n;
};

struct judge {
	struct tally *t;
	const struct fn_info *fn;
	__u64 want[NR_FRAMES];
};

static void judge_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct judge *jd = arg;
	struct tally *t = jd->t;
	unsigned int bad;

	if (ip < jd->fn->start + jd->fn->spin_start ||
	    ip >= jd->fn->start + jd->fn->spin_end) {
		t->elsewhere++;
		return;
	}
	t->checked++;
	jd->want[0] = ip;
	bad = chain_first_bad(chain, nr, jd->want, NR_FRAMES);
	if (bad == NR_FRAMES) {
		t->exact++;
		return;
	}
	if (!t->first_bad[bad]++ && t->checked - t->exact == 1) {
		t->example_nr = nr < NR_FRAMES ? nr : NR_FRAMES;
		memcpy(t->example, chain, t->example_nr * sizeof(__u64));
		memcpy(t->example_want, jd->want, sizeof(jd->want));
		t->example_n = jd->fn->n;
	}
}

static void tally_log(struct __test_metadata *_metadata, const struct tally *t)
{
	struct layout l = layout_of(t->example_n);
	unsigned int f;

	TH_LOG("%lu runs, %lu samples: %lu in a function's loop, %lu exact; %lu elsewhere",
	       t->runs, t->ring.samples, t->checked, t->exact, t->elsewhere);
	TH_LOG("%lu without a user context, %lu bad records, %lu lost",
	       t->not_user, t->ring.bad_records, t->ring.lost);
	if (t->checked == t->exact)
		return;
	for (f = 0; f < NR_FRAMES; f++)
		if (t->first_bad[f])
			TH_LOG("%lu samples first differ at frame %u",
			       t->first_bad[f], f);
	TH_LOG("first of them: function %lu (%u pushes, sub %u%s):",
	       t->example_n, l.npush, l.sub, l.fp ? ", frame pointer" : "");
	chain_log(_metadata, NULL, 0, t->example_want, NR_FRAMES, t->example,
		  t->example_nr);
}

/* Tests without the system call or perf: every layout, natively. */
FIXTURE(native) {
	unsigned char *code;
	struct fn_data *data;
};

FIXTURE_SETUP(native)
{
	self->code = mmap(NULL, 2 * page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->code);
	self->data = (struct fn_data *)(self->code + page_size());
}

FIXTURE_TEARDOWN(native)
{
	munmap(self->code, 2 * page_size());
}

static long run_native(void *arg)
{
	return run_fn((unsigned long)arg);
}

TEST_F(native, every_layout_runs_and_each_row_finds_its_return_address)
{
	unsigned long n;

	for (n = 0; n < NR_LAYOUTS; n++) {
		struct emitter e = { .buf = self->code, .cap = FN_STRIDE };
		struct jit_fn fn;
		struct trace_fn tf = { &fn, &self->data->ret };
		unsigned long run = (unsigned long)append_run;
		char what[32];
		long r;

		ASSERT_EQ(0, mprotect(self->code, page_size(),
				      PROT_READ | PROT_WRITE));
		ASSERT_TRUE(emit_fn(&e, &fn, n, self->data))
			TH_LOG("function %lu does not fit", n);
		ASSERT_EQ(0, mprotect(self->code, page_size(),
				      PROT_READ | PROT_EXEC));
		self->data->spin = 2;
		run_fn(fn.start);
		ASSERT_TRUE(self->data->ret > run && self->data->ret < run + 4096);
		snprintf(what, sizeof(what), "function %lu", n);
		rows_trace(_metadata, what, &tf, 1, run_native,
			   (void *)fn.start, &r);
	}
}

/* Sampling tests: the patched kernel, under QEMU. */
FIXTURE(append) {
	struct producer p;
	struct fn_data *data;
};

FIXTURE_SETUP(append)
{
	if (sampling_skip(_metadata))
		return;
	self->data = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->data);
	self->data->spin = 1;
	memset(&self->p, 0, sizeof(self->p));
	self->p.data = self->data;
	/* Function 0, before anything runs. */
	ASSERT_EQ(0, arena_open(&self->p));
	ASSERT_EQ(0, produce_one(&self->p, 0));
}

FIXTURE_TEARDOWN(append)
{
	struct producer *p = &self->p;

	while (p->first_arena < p->next_arena) {
		struct arena *a = arena_of(p, p->first_arena++);

		jit_registry_unmap(&a->reg);
		munmap(a->code, ARENA_BYTES);
	}
	if (self->data && self->data != MAP_FAILED)
		munmap(self->data, page_size());
}

TEST_F_TIMEOUT(append, the_newest_function_is_exact_in_every_sample_while_appends_race,
	       90)
{
	struct producer *p = &self->p;
	struct perf_event_attr attr;
	struct timespec start;
	struct tally t = { 0 };
	struct sampler smp;
	pthread_t thread;

	sampler_attr(&attr, SAMPLE_PERIOD_NS, true);
	sampler_start(_metadata, &smp, &attr, RING_PAGES);
	ASSERT_EQ(0, sampler_enable(&smp, true));
	/* No assertion from here until the producer is joined. */
	ASSERT_EQ(0, pthread_create(&thread, NULL, producer_main, p));
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((t.checked < MIN_SAMPLES ||
		__atomic_load_n(&p->retired, __ATOMIC_RELAXED) < MIN_RETIRED) &&
	       elapsed(CLOCK_MONOTONIC, &start) < SESSION_SECONDS &&
	       !__atomic_load_n(&p->error, __ATOMIC_ACQUIRE)) {
		struct timespec run_start;
		struct fn_info fn;
		struct judge jd;
		double took;

		newest_get(p, &fn);
		/* From now on the producer may retire older arenas. */
		__atomic_store_n(&p->using_arena, fn.arena, __ATOMIC_SEQ_CST);
		sync_core();
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &run_start);
		run_fn(fn.start);
		took = elapsed(CLOCK_THREAD_CPUTIME_ID, &run_start);
		t.runs++;
		/* No assertion while the producer runs: count and stop. */
		if (self->data->ret <= (unsigned long)append_run ||
		    self->data->ret >= (unsigned long)append_run + 4096) {
			t.bad_ret++;
			break;
		}
		jd = (struct judge) {
			.t = &t, .fn = &fn,
			.want = { 0, self->data->ret, run_ret },
		};
		sampler_drain_chains(&smp, judge_chain, &jd, &t.not_user,
				     &t.ring);
		spin_tune(&self->data->spin, took);
	}
	__atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);

	TH_LOG("producer: %lu functions appended, %lu registries replaced",
	       p->appended, p->replaced);
	TH_LOG("producer: %lu arenas registered, %lu retired, %lu waits",
	       p->registered, p->retired, p->waits);
	tally_log(_metadata, &t);
	ASSERT_EQ(0, p->error) TH_LOG("producer: %s: %s", p->error_what,
				      strerror(-p->error));
	ASSERT_EQ(0UL, t.bad_ret) TH_LOG("a function returned to %#lx",
					 self->data->ret);
	EXPECT_EQ(0UL, t.ring.bad_records);
	EXPECT_EQ(0UL, t.not_user);
	ASSERT_LE(MIN_SAMPLES, t.checked) TH_LOG("too few samples");
	EXPECT_LE((unsigned long)MIN_RETIRED, p->retired);
	EXPECT_LE(1UL, p->replaced);
	EXPECT_EQ(t.checked, t.exact);
}

TEST_HARNESS_MAIN
