// SPDX-License-Identifier: GPL-2.0
/*
 * A JIT reuses a reclaimed function's address: perf samples in the new
 * code are unwound by the new descriptor, never by the stale one.
 *
 * The chain, with %rbp holding a number, not a frame, in all JIT code:
 *
 *   reuse_run (C) -> entry (JIT) -> slot function (JIT, at a fixed
 *   address, rewritten generation after generation) -> leaf (JIT)
 *
 * The slot function and the leaf both spin; samples in either loop are
 * compared.  Each generation of the slot function has another frame
 * layout (pushes, stack adjustment, frame pointer or not) from the
 * previous one, and its stack slots hold a poison word, so that its
 * stale rows would read something other than the return address.  The
 * return addresses the code stores itself make the expected chain.
 *
 * Each generation is installed as Documentation/userspace-api/sframe.rst
 * says: tombstone the descriptor once no thread runs the function, write
 * the new code, write its rows into slots no descriptor uses, rewrite the
 * descriptor between an odd and an even seq.  One test runs the new code
 * in between too, under the tombstone, where the frame pointer fallback
 * must get exactly as far as %rbp allows; another rewrites on a second
 * thread while the sampled one runs the other slot.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "sample_harness.h"

#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

/* %rbp while JIT code runs: below any stack, so no frame record. */
#define POISON_FP	0x5a5
/* What the slot functions fill their stack slots with. */
#define POISON_WORD	0x0badf00d

#define SAMPLE_PERIOD_NS	100000	/* task clock: 10000 samples a second */
#define MIN_SAMPLES		1000UL
#define SESSION_SECONDS		20
#define RING_PAGES		64

/* While it waits, the replacer holds seq odd this long, then pauses. */
#define CHURN_HOLD_US		20
#define CHURN_US		100

/* The code: entry and leaf on one page, each slot on its own. */
enum { FN_ENTRY, FN_LEAF, NR_FIXED };
#define NR_SLOTS	2
enum { PAGE_FIXED, PAGE_SLOT0, PAGE_SLOT1, PAGE_DATA, NR_PAGES };

/* The data page, which the JIT code reads and writes. */
struct reuse_data {
	unsigned long target;		/* the slot function entry calls */
	unsigned long spin;		/* loop count of the slot and the leaf */
	unsigned long ret_entry;	/* return addresses, stored at entry */
	unsigned long ret_slot;
	unsigned long ret_leaf;
};

/* A frame layout of the slot function. */
struct layout {
	unsigned int npush;		/* callee-saved registers pushed */
	__u8 sub;			/* then the stack adjustment */
	bool fp;			/* with a frame record in front */
};

/*
 * Consecutive layouts differ, and those without a frame pointer have a
 * CFA offset each of their own in the body, where the samples are.
 */
static const struct layout layouts[] = {
	{ .npush = 0, .sub = 8 },		/* CFA = SP + 16 */
	{ .npush = 2, .sub = 24 },		/* SP + 48 */
	{ .npush = 1, .sub = 40, .fp = true },	/* FP + 16 */
	{ .npush = 3, .sub = 8 },		/* SP + 40 */
	{ .npush = 0, .sub = 56 },		/* SP + 64 */
	{ .npush = 1, .sub = 16 },		/* SP + 32 */
};

#define NR_LAYOUTS	ARRAY_SIZE(layouts)

static const int push_regs[] = { RBX, R12, R13, R14 };

struct reuse {
	unsigned char *map;
	unsigned char *page[NR_PAGES];
	struct reuse_data *data;
	struct jit_fn fixed[NR_FIXED];
	/* What each slot holds; the replacer thread writes the idle one. */
	struct jit_fn slot[NR_SLOTS];
	unsigned int slot_layout[NR_SLOTS];
	unsigned int slot_bank[NR_SLOTS];	/* the row bank it uses */
	__u32 bank_base;
	struct jit_registry reg;		/* .hdr NULL: not registered */
};

/* reuse_run()'s return address, stored by each call. */
static unsigned long run_ret;

static size_t map_size(void)
{
	return NR_PAGES * page_size();
}

static bool emit_entry(struct reuse *rz)
{
	struct emitter e = {
		.buf = rz->page[PAGE_FIXED],
		.cap = page_size(),
	};

	fn_begin(&e, &rz->fixed[FN_ENTRY], "entry", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &rz->data->ret_entry);
	emit_save_rbp(&e);
	emit_mov_ebp_imm(&e, POISON_FP);
	emit_sub_rsp(&e, 8);
	emit_load_rax(&e, &rz->data->target);
	emit_call_rax(&e);
	emit_add_rsp(&e, 8);
	emit_restore_rbp(&e);
	emit_ret(&e);
	fn_end(&e);

	fn_begin(&e, &rz->fixed[FN_LEAF], "leaf", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &rz->data->ret_leaf);
	emit_push(&e, RBX);
	emit_sub_rsp(&e, 24);
	emit_store_rsp_imm(&e, 0, POISON_WORD);
	emit_store_rsp_imm(&e, 8, POISON_WORD);
	emit_store_rsp_imm(&e, 16, POISON_WORD);
	emit_spin(&e, &rz->data->spin);
	emit_add_rsp(&e, 24);
	emit_pop(&e, RBX);
	emit_ret(&e);
	fn_end(&e);
	pad_to(&e, e.cap);
	return !e.overflow;
}

/* The slot function with frame layout @layout, into slot @s's writable page. */
static bool emit_slot(struct reuse *rz, unsigned int s, unsigned int layout,
		      struct jit_fn *fn)
{
	const struct layout *l = &layouts[layout];
	struct emitter e = {
		.buf = rz->page[PAGE_SLOT0 + s],
		.cap = page_size(),
	};
	unsigned int i, off;

	fn_begin(&e, fn, "slot", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &rz->data->ret_slot);
	if (l->fp)
		emit_frame_enter(&e);
	for (i = 0; i < l->npush; i++)
		emit_push(&e, push_regs[i]);
	if (l->sub)
		emit_sub_rsp(&e, l->sub);
	for (off = 0; off < l->sub; off += 8)
		emit_store_rsp_imm(&e, off, POISON_WORD);
	emit_spin(&e, &rz->data->spin);
	emit_mov_rax_imm(&e, rz->fixed[FN_LEAF].start);
	emit_call_rax(&e);
	if (l->sub)
		emit_add_rsp(&e, l->sub);
	for (i = l->npush; i-- > 0;)
		emit_pop(&e, push_regs[i]);
	if (l->fp)
		emit_leave(&e);
	emit_ret(&e);
	fn_end(&e);
	pad_to(&e, e.cap);
	return !e.overflow;
}

/* Write generation @layout into idle slot @s: W^X around the write. */
static int slot_write(struct reuse *rz, unsigned int s, unsigned int layout,
		      struct jit_fn *fn)
{
	unsigned char *page = rz->page[PAGE_SLOT0 + s];

	if (mprotect(page, page_size(), PROT_READ | PROT_WRITE))
		return -errno;
	if (!emit_slot(rz, s, layout, fn))
		return -E2BIG;
	if (mprotect(page, page_size(), PROT_READ | PROT_EXEC))
		return -errno;
	return 0;
}

static __u32 bank_row(const struct reuse *rz, unsigned int s, unsigned int b)
{
	return rz->bank_base + (2 * s + b) * MAX_ROWS;
}

/*
 * Slot @s holds new code, @fn, and is tombstoned: its rows into the bank
 * the descriptor does not use, then the descriptor under seq.
 */
static void slot_republish(struct reuse *rz, unsigned int s,
			   const struct jit_fn *fn, unsigned int layout)
{
	unsigned int b = !rz->slot_bank[s];
	__u32 first = bank_row(rz, s, b);

	jit_registry_write_rows(&rz->reg, first, fn);
	jit_registry_rewrite(&rz->reg, rz->slot[s].fde, fn, first);
	/* The same address, so the same descriptor index. */
	memcpy(&rz->slot[s], fn, offsetof(struct jit_fn, fde));
	rz->slot_bank[s] = b;
	rz->slot_layout[s] = layout;
}

/* Replace the code of idle slot @s by generation @layout, as the ABI says. */
static int slot_replace(struct reuse *rz, unsigned int s, unsigned int layout)
{
	struct jit_fn fn;
	int ret;

	jit_registry_tombstone(&rz->reg, rz->slot[s].fde, true);
	ret = slot_write(rz, s, layout, &fn);
	if (ret)
		return ret;
	slot_republish(rz, s, &fn, layout);
	return 0;
}

static void chain_teardown(struct reuse *rz)
{
	jit_registry_unmap(&rz->reg);
	if (rz->map && rz->map != MAP_FAILED)
		munmap(rz->map, map_size());
}

/*
 * Map the pages, emit entry and leaf and the first two generations, one
 * per slot; if @publish, register the code and publish it all.
 */
static void chain_setup(struct __test_metadata *_metadata, struct reuse *rz,
			bool publish)
{
	unsigned int i, s;
	long base;

	memset(rz, 0, sizeof(*rz));
	rz->map = mmap(NULL, map_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rz->map);
	for (i = 0; i < NR_PAGES; i++)
		rz->page[i] = rz->map + i * page_size();
	rz->data = (struct reuse_data *)rz->page[PAGE_DATA];
	rz->data->spin = 1;
	ASSERT_TRUE(emit_entry(rz));
	for (s = 0; s < NR_SLOTS; s++) {
		ASSERT_TRUE(emit_slot(rz, s, s, &rz->slot[s]));
		rz->slot_layout[s] = s;
	}
	ASSERT_EQ(0, mprotect(rz->map, PAGE_DATA * page_size(),
			      PROT_READ | PROT_EXEC));
	rz->data->target = rz->slot[0].start;
	if (!publish)
		return;

	registry_new(_metadata, &rz->reg, (unsigned long)rz->map,
		     (unsigned long)rz->page[PAGE_DATA], NR_FIXED + NR_SLOTS,
		     NR_FIXED * MAX_ROWS + 2 * NR_SLOTS * MAX_ROWS);
	for (i = 0; i < NR_FIXED; i++)
		ASSERT_EQ(0, jit_registry_append(&rz->reg, &rz->fixed[i]));
	base = jit_registry_alloc_rows(&rz->reg, 2 * NR_SLOTS * MAX_ROWS);
	ASSERT_LE(0, base);
	rz->bank_base = base;
	for (s = 0; s < NR_SLOTS; s++)
		ASSERT_EQ(0, jit_registry_publish(&rz->reg, &rz->slot[s],
						  bank_row(rz, s, 0)));
}

/* Run the chain once; stores run_ret and the return addresses. */
static noinline long reuse_run(const struct reuse *rz)
{
	long (*entry)(void) = (long (*)(void))rz->fixed[FN_ENTRY].start;
	long r;

	run_ret = (unsigned long)__builtin_return_address(0);
	r = entry();
	/* A use after the call: no tail call, this frame stays. */
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* Through a pointer the compiler cannot follow: no inlining, no clone. */
static long run_chain(void *arg)
{
	long (*run)(const struct reuse *rz) = reuse_run;

	__asm__ volatile("" : "+r"(run));
	return run(arg);
}

/* The last run went through slot function @fn where the emitter says. */
static bool stored_ok(const struct reuse *rz, const struct jit_fn *fn)
{
	const struct jit_fn *entry = &rz->fixed[FN_ENTRY];
	unsigned long run = (unsigned long)reuse_run;

	return rz->data->ret_slot == entry->start + entry->call_ret &&
	       rz->data->ret_leaf == fn->start + fn->call_ret &&
	       rz->data->ret_entry > run && rz->data->ret_entry < run + 4096;
}

/* How the samples of a run are judged. */
enum phase {
	PUBLISHED,	/* the slot's descriptor is current: exact */
	TOMBSTONED,	/* new code under the old, tombstoned descriptor */
	CONCURRENT,	/* another thread rewrites the other slot meanwhile */
};

/* Chain entries compared: the IP, then return addresses down to run_ret. */
#define NR_FRAMES	5
enum { IN_SLOT, IN_LEAF, NR_KINDS };

struct tally {
	unsigned long runs;
	struct ring_counts ring;
	unsigned long not_user, in_jit;
	unsigned long checked[NR_KINDS];
	unsigned long exact;		/* the whole expected chain */
	unsigned long predicted;	/* TOMBSTONED: as the fallback goes */
	unsigned long truncated;	/* CONCURRENT: cut at a JIT frame */
	unsigned long wrong;
	/* The first wrong one, for the log. */
	__u64 example[NR_FRAMES], example_want[NR_FRAMES];
	unsigned int example_nr, example_want_nr;
	enum phase example_phase;
	unsigned int example_layout;
};

struct judge {
	struct tally *t;
	const struct reuse *rz;
	const struct jit_fn *fn;	/* the slot function that ran */
	unsigned int layout;
	enum phase phase;
	__u64 want[NR_KINDS][NR_FRAMES];
};

static bool in_loop(const struct jit_fn *fn, __u64 ip)
{
	return ip >= fn->start + fn->spin_start &&
	       ip < fn->start + fn->spin_end;
}

static bool in_jit(const struct reuse *rz, __u64 addr)
{
	return addr >= (unsigned long)rz->map &&
	       addr < (unsigned long)rz->page[PAGE_DATA];
}

/*
 * Under the tombstone the slot's frame gets one frame-pointer step: with
 * a frame record it is right and the chain exact, without one %rbp holds
 * POISON_FP and the chain ends with the PC in the slot function.
 */
static bool as_predicted(const struct judge *jd, unsigned int kind,
			 const __u64 *chain, __u64 nr, unsigned int n)
{
	unsigned int bad = chain_first_bad(chain, nr, jd->want[kind], n);
	unsigned int cut = kind == IN_SLOT ? 1 : 2;

	if (layouts[jd->layout].fp)
		return bad == n;
	return bad == cut && nr == cut;
}

/* A prefix of the chain that ends at a JIT frame: seq was odd or moved. */
static bool cut_at_jit(const struct judge *jd, unsigned int kind,
		       const __u64 *chain, __u64 nr, unsigned int n)
{
	unsigned int bad = chain_first_bad(chain, nr, jd->want[kind], n);

	return bad == nr && bad > 0 && in_jit(jd->rz, chain[bad - 1]);
}

static void judge_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct judge *jd = arg;
	struct tally *t = jd->t;
	unsigned int kind, n;
	bool ok = false, exact;

	if (in_loop(jd->fn, ip)) {
		kind = IN_SLOT;
	} else if (in_loop(&jd->rz->fixed[FN_LEAF], ip)) {
		kind = IN_LEAF;
	} else {
		t->in_jit += in_jit(jd->rz, ip);
		return;
	}
	t->checked[kind]++;
	jd->want[kind][0] = ip;
	n = kind == IN_SLOT ? NR_FRAMES - 1 : NR_FRAMES;
	exact = chain_first_bad(chain, nr, jd->want[kind], n) == n;
	switch (jd->phase) {
	case PUBLISHED:
		ok = exact;
		t->exact += ok;
		break;
	case TOMBSTONED:
		ok = as_predicted(jd, kind, chain, nr, n);
		t->predicted += ok;
		break;
	case CONCURRENT:
		t->exact += exact;
		ok = exact || cut_at_jit(jd, kind, chain, nr, n);
		t->truncated += ok && !exact;
		break;
	}
	if (ok || t->wrong++)
		return;
	t->example_nr = nr < NR_FRAMES ? nr : NR_FRAMES;
	memcpy(t->example, chain, t->example_nr * sizeof(__u64));
	memcpy(t->example_want, jd->want[kind], sizeof(t->example_want));
	t->example_want_nr = n;
	t->example_phase = jd->phase;
	t->example_layout = jd->layout;
}

/* What the chain must be after a run through slot function @fn. */
static void judge_init(struct judge *jd, struct tally *t,
		       const struct reuse *rz, const struct jit_fn *fn,
		       unsigned int layout, enum phase phase)
{
	const struct reuse_data *d = rz->data;

	memset(jd, 0, sizeof(*jd));
	jd->t = t;
	jd->rz = rz;
	jd->fn = fn;
	jd->layout = layout;
	jd->phase = phase;
	jd->want[IN_SLOT][1] = d->ret_slot;
	jd->want[IN_SLOT][2] = d->ret_entry;
	jd->want[IN_SLOT][3] = run_ret;
	jd->want[IN_LEAF][1] = d->ret_leaf;
	jd->want[IN_LEAF][2] = d->ret_slot;
	jd->want[IN_LEAF][3] = d->ret_entry;
	jd->want[IN_LEAF][4] = run_ret;
}

/*
 * One run through slot function @fn, its samples judged.  False if the
 * run did not go where the emitter says: no assertion here, another
 * thread may be running.
 */
static bool sampled_run(struct reuse *rz, struct sampler *smp,
			const struct jit_fn *fn, unsigned int layout,
			enum phase phase, struct tally *t)
{
	struct timespec start;
	struct judge jd;
	double took;

	rz->data->target = fn->start;
	sync_core();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
	run_chain(rz);
	took = elapsed(CLOCK_THREAD_CPUTIME_ID, &start);
	t->runs++;
	if (!stored_ok(rz, fn))
		return false;
	judge_init(&jd, t, rz, fn, layout, phase);
	sampler_drain_chains(smp, judge_chain, &jd, &t->not_user,
			     &t->ring);
	spin_tune(&rz->data->spin, took);
	return true;
}

static const char * const phase_name[] = {
	[PUBLISHED] = "published", [TOMBSTONED] = "tombstoned",
	[CONCURRENT] = "concurrent",
};

static void tally_log(struct __test_metadata *_metadata, const char *what,
		      const struct tally *t)
{
	TH_LOG("%s: %lu runs, %lu samples, %lu checked (%lu in the slot function, %lu in the leaf)",
	       what, t->runs, t->ring.samples,
	       t->checked[IN_SLOT] + t->checked[IN_LEAF], t->checked[IN_SLOT],
	       t->checked[IN_LEAF]);
	TH_LOG("%s: %lu exact, %lu as the tombstone predicts, %lu cut at a JIT frame, %lu wrong",
	       what, t->exact, t->predicted, t->truncated, t->wrong);
	TH_LOG("%s: %lu elsewhere in JIT code, %lu without a user context",
	       what, t->in_jit, t->not_user);
	TH_LOG("%s: %lu bad records, %lu lost",
	       what, t->ring.bad_records, t->ring.lost);
	if (!t->wrong)
		return;
	TH_LOG("first wrong sample: %s, layout %u:",
	       phase_name[t->example_phase], t->example_layout);
	chain_log(_metadata, NULL, 0, t->example_want, t->example_want_nr,
		  t->example, t->example_nr);
}

static void stats_log(struct __test_metadata *_metadata,
		      const struct sframe_jit_stats *s)
{
	TH_LOG("registry: lookups %llu hits %llu tombstone_hits %llu",
	       (unsigned long long)s->lookups, (unsigned long long)s->hits,
	       (unsigned long long)s->tombstone_hits);
	TH_LOG("registry: seq_retries %llu malformed %llu",
	       (unsigned long long)s->seq_retries,
	       (unsigned long long)s->malformed);
}

static void sampler_setup(struct __test_metadata *_metadata,
			  struct sampler *s)
{
	struct perf_event_attr attr;

	sampler_attr(&attr, SAMPLE_PERIOD_NS, true);
	sampler_start(_metadata, s, &attr, RING_PAGES);
	ASSERT_EQ(0, sampler_enable(s, true));
}

/* Tests without the system call or perf: the code and its rows, natively. */
FIXTURE(native) {
	struct reuse rz;
};

FIXTURE_SETUP(native)
{
	chain_setup(_metadata, &self->rz, false);
}

FIXTURE_TEARDOWN(native)
{
	chain_teardown(&self->rz);
}

TEST_F(native, every_generation_runs_and_each_row_finds_its_return_address)
{
	struct reuse *rz = &self->rz;
	unsigned int g;

	for (g = 0; g < 2 * NR_LAYOUTS; g++) {
		unsigned int layout = g % NR_LAYOUTS;
		char what[24];
		const struct trace_fn fns[] = {
			{ &rz->fixed[FN_ENTRY], &rz->data->ret_entry },
			{ &rz->slot[0], &rz->data->ret_slot },
			{ &rz->fixed[FN_LEAF], &rz->data->ret_leaf },
		};
		long r;

		ASSERT_EQ(0, slot_write(rz, 0, layout, &rz->slot[0]));
		rz->data->target = rz->slot[0].start;
		rz->data->spin = 3;
		run_chain(rz);
		ASSERT_TRUE(stored_ok(rz, &rz->slot[0]));
		snprintf(what, sizeof(what), "layout %u", layout);
		rows_trace(_metadata, what, fns, ARRAY_SIZE(fns), run_chain,
			   rz, &r);
		if (g == 0)
			TH_LOG("%lu single steps a run", row_trace_steps());
	}
}

/* Sampling tests: the patched kernel, under QEMU. */
FIXTURE(reuse) {
	struct reuse rz;
};

FIXTURE_SETUP(reuse)
{
	if (sampling_skip(_metadata))
		return;
	chain_setup(_metadata, &self->rz, true);
}

FIXTURE_TEARDOWN(reuse)
{
	chain_teardown(&self->rz);
}

/*
 * One thread: generation after generation in slot 0, each run once
 * under the tombstone and once after the rewrite.
 */
TEST_F_TIMEOUT(reuse, samples_in_reused_code_never_take_the_stale_descriptor,
	       90)
{
	struct reuse *rz = &self->rz;
	struct tally pub = { 0 }, tomb = { 0 };
	struct sframe_jit_stats stats;
	struct timespec start;
	unsigned int gen = 0;
	struct sampler smp;

	sampler_setup(_metadata, &smp);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((pub.exact < MIN_SAMPLES ||
		tomb.checked[IN_SLOT] + tomb.checked[IN_LEAF] < MIN_SAMPLES ||
		gen < 2 * NR_LAYOUTS) &&
	       elapsed(CLOCK_MONOTONIC, &start) < SESSION_SECONDS) {
		unsigned int layout = (rz->slot_layout[0] + 1) % NR_LAYOUTS;
		struct jit_fn fn;

		/* Nobody runs slot 0 now: reclaim it, put new code there. */
		jit_registry_tombstone(&rz->reg, rz->slot[0].fde, true);
		ASSERT_EQ(0, slot_write(rz, 0, layout, &fn));
		ASSERT_TRUE(sampled_run(rz, &smp, &fn, layout, TOMBSTONED,
					&tomb));
		slot_republish(rz, 0, &fn, layout);
		ASSERT_TRUE(sampled_run(rz, &smp, &rz->slot[0], layout,
					PUBLISHED, &pub));
		gen++;
	}
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);

	TH_LOG("%u generations at %#lx", gen, rz->slot[0].start);
	tally_log(_metadata, "after the rewrite", &pub);
	tally_log(_metadata, "under the tombstone", &tomb);
	stats = jit_registry_stats(rz->reg.hdr);
	stats_log(_metadata, &stats);
	EXPECT_EQ(0UL, pub.ring.bad_records + tomb.ring.bad_records);
	EXPECT_EQ(0UL, pub.not_user + tomb.not_user);
	ASSERT_LE(MIN_SAMPLES, pub.exact) TH_LOG("too few exact samples");
	ASSERT_LE(MIN_SAMPLES, tomb.checked[IN_SLOT] + tomb.checked[IN_LEAF])
		TH_LOG("too few samples under the tombstone");
	EXPECT_EQ(0UL, pub.wrong);
	EXPECT_EQ(0UL, tomb.wrong);
	EXPECT_EQ(0ULL, stats.malformed);
	EXPECT_LE(1ULL, stats.tombstone_hits);
}

/* The replacer thread of the concurrent test, and what it shares. */
struct replacer {
	struct reuse *rz;
	/* The slot the sampled thread is to call; written by the replacer. */
	unsigned int live;
	/* The slot the sampled thread calls now; written by it. */
	unsigned int using;
	bool stop;
	unsigned long replaced;
	unsigned long churned;		/* same-content rewrites while waiting */
	int error;
};

/*
 * Rewrite the entry's descriptor in place with what it holds already, as
 * a compacting JIT rewrites descriptors of running functions, and slowly:
 * seq stays odd for CHURN_HOLD_US, so that samples meet it.
 */
static void churn_seq(struct replacer *rp)
{
	struct jit_registry *r = &rp->rz->reg;
	struct sframe_jit_fde *fde;
	struct timespec start;

	fde = jit_registry_fde(r, rp->rz->fixed[FN_ENTRY].fde);
	jit_registry_seq_begin(r);
	__atomic_store_n(&fde->func_size, fde->func_size, __ATOMIC_RELAXED);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed(CLOCK_MONOTONIC, &start) < CHURN_HOLD_US / 1e6)
		;
	jit_registry_seq_end(r);
	__atomic_store_n(&rp->churned, rp->churned + 1, __ATOMIC_RELAXED);
}

/* The generations the replacer writes: no frame pointer, see below. */
static const unsigned int sp_layouts[] = { 0, 1, 3, 4, 5 };

static void *replacer_main(void *arg)
{
	struct replacer *rp = arg;
	struct reuse *rz = rp->rz;
	unsigned long gen = 0;

	while (!__atomic_load_n(&rp->stop, __ATOMIC_ACQUIRE)) {
		unsigned int live = __atomic_load_n(&rp->live, __ATOMIC_RELAXED);
		unsigned int idle = !live;
		unsigned int layout;
		int ret;

		/* The idle slot is idle once the sampled thread moved on. */
		if (__atomic_load_n(&rp->using, __ATOMIC_ACQUIRE) != live) {
			churn_seq(rp);
			usleep(CHURN_US);
			continue;
		}
		layout = sp_layouts[gen++ % ARRAY_SIZE(sp_layouts)];
		if (layout == rz->slot_layout[idle])
			layout = sp_layouts[gen++ % ARRAY_SIZE(sp_layouts)];
		ret = slot_replace(rz, idle, layout);
		if (ret) {
			__atomic_store_n(&rp->error, ret, __ATOMIC_RELAXED);
			break;
		}
		__atomic_store_n(&rp->replaced, rp->replaced + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&rp->live, idle, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Two threads: the sampled one runs the live slot while the replacer
 * rewrites the idle one, then they swap; while it waits for the swap,
 * the replacer rewrites the entry's descriptor with its own content
 * every CHURN_US microseconds.  The rewrites move seq, which
 * covers the whole registry: a sample meanwhile may lose the JIT frames
 * and what lies below them, to a frame-pointer step that %rbp stops.
 * So slot functions here keep no frame record (a frame-pointer step
 * through the leaf would skip a frame, not stop).  Exact chains or
 * chains cut at a JIT frame; never a wrong entry.
 */
TEST_F_TIMEOUT(reuse, rewrites_on_another_thread_never_yield_a_stale_frame,
	       90)
{
	struct reuse *rz = &self->rz;
	struct replacer rp = { .rz = rz };
	struct sframe_jit_stats stats;
	struct timespec start;
	unsigned long bad_runs = 0;
	struct tally t = { 0 };
	struct sampler smp;
	pthread_t thread;

	/* Both slots start with layouts 0 and 1: no frame record. */
	ASSERT_FALSE(layouts[rz->slot_layout[0]].fp || layouts[rz->slot_layout[1]].fp);
	sampler_setup(_metadata, &smp);
	/* No assertion from here until the replacer is joined. */
	ASSERT_EQ(0, pthread_create(&thread, NULL, replacer_main, &rp));
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((t.exact < MIN_SAMPLES ||
		__atomic_load_n(&rp.replaced, __ATOMIC_RELAXED) < 2 * NR_LAYOUTS) &&
	       elapsed(CLOCK_MONOTONIC, &start) < SESSION_SECONDS &&
	       !__atomic_load_n(&rp.error, __ATOMIC_RELAXED)) {
		unsigned int s = __atomic_load_n(&rp.live, __ATOMIC_ACQUIRE);
		struct jit_fn fn = rz->slot[s];

		__atomic_store_n(&rp.using, s, __ATOMIC_SEQ_CST);
		if (!sampled_run(rz, &smp, &fn, rz->slot_layout[s], CONCURRENT,
				 &t)) {
			bad_runs++;
			break;
		}
	}
	__atomic_store_n(&rp.stop, true, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);

	TH_LOG("%lu replacements and %lu same-content rewrites by the other thread",
	       rp.replaced, rp.churned);
	tally_log(_metadata, "concurrent", &t);
	stats = jit_registry_stats(rz->reg.hdr);
	stats_log(_metadata, &stats);
	ASSERT_EQ(0, rp.error) TH_LOG("replacer: %s", strerror(-rp.error));
	ASSERT_EQ(0UL, bad_runs) TH_LOG("a run did not go where it should");
	EXPECT_EQ(0UL, t.ring.bad_records);
	EXPECT_EQ(0UL, t.not_user);
	ASSERT_LE(MIN_SAMPLES, t.exact) TH_LOG("too few exact samples");
	EXPECT_LE(2 * NR_LAYOUTS, rp.replaced);
	EXPECT_EQ(0UL, t.wrong);
	/* Nobody ran a tombstoned function. */
	EXPECT_EQ(0ULL, stats.tombstone_hits);
	EXPECT_EQ(0ULL, stats.malformed);
}

TEST_HARNESS_MAIN
