// SPDX-License-Identifier: GPL-2.0
/*
 * perf samples through JIT code, checked frame by frame.
 *
 * A small x86-64 JIT emits four kinds of function into one code page,
 * publishes their frame rows in a JIT registry and runs this chain:
 *
 *   sample_run (C) -> fp_func (JIT, frame pointer) -> stub k (JIT, one
 *   of a run of identical stubs under one PCMASK descriptor) -> nofp_func
 *   (JIT, pushes, a stack adjustment and a stack change in mid-function)
 *   -> sample_bridge (C, -fomit-frame-pointer, described only by the
 *   executable's .sframe) -> leaf (JIT, no frame pointer), which spins.
 *
 * Every JIT function stores its own return address at entry, and the C
 * functions store theirs with __builtin_return_address(0): those stores,
 * never the tables or an unwinder, give the expected callchain.  A task
 * clock samples the run; every sample whose IP is in the leaf's loop must
 * carry exactly that chain, down to sample_run's return address, when
 * the event has the callchain_sframe bit.  Without the bit the plain
 * frame-pointer walker runs and gets none of them right, which shows
 * that the comparison can fail.
 *
 * The first tests need neither the system call nor perf: they run the
 * JIT code natively, and single-step it to check each row against the
 * stack it describes.  Set SFRAME_SAMPLE_DUMP=FILE to get the emitted
 * bytes for objdump -D -b binary -m i386:x86-64.
 */
#include <assert.h>
#include <fcntl.h>
#include <stdint.h>
#include <time.h>

#include "sample_harness.h"
#include "sample_bridge.h"

#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

/* What the chain runs through, in address order in the code page. */
enum jit_fn_id {
	FN_FP,		/* frame-pointer function */
	FN_STUBS,	/* NR_STUBS identical stubs, one PCMASK descriptor */
	FN_NOFP,	/* no frame pointer; calls sample_bridge() */
	FN_LEAF,	/* no frame pointer; spins */
	NR_FNS,
};

#define NR_STUBS	8
#define STUB_SIZE	32

/* The stubs are one function of the emitter's. */
static_assert(NR_STUBS * STUB_SIZE <= MAX_FN_BYTES, "stubs fit a function");

/*
 * The expected user callchain: the sampled IP in the leaf, then the
 * return addresses into sample_bridge, nofp_func, the stub, fp_func,
 * sample_run and sample_run's caller.  Frames beyond it run through the
 * harness and libc, which carries no tables, and are not compared.
 */
#define NR_FRAMES	7
static_assert(NR_FRAMES <= CHAIN_MAX, "a chain_tally holds the chain");

static const char * const frame_name[NR_FRAMES] = {
	"IP in the leaf", "leaf -> sample_bridge", "sample_bridge -> nofp_func",
	"nofp_func -> stub", "stub -> fp_func", "fp_func -> sample_run",
	"sample_run -> its caller",
};

/* The chain entry that unwinding each JIT function's frame yields. */
static const unsigned int frame_of[NR_FNS] = {
	[FN_LEAF] = 1, [FN_NOFP] = 3, [FN_STUBS] = 4, [FN_FP] = 5,
};

#define SAMPLE_PERIOD_NS	100000	/* task clock: 10000 samples a second */
#define MIN_LEAF_SAMPLES	1000UL
#define SESSION_SECONDS		15
#define RING_PAGES		64	/* data pages, a power of two */
#define BRIDGE_ARG		1000	/* keeps %rbp a small number, not a frame */

/* The data page after the code page, which the JIT code reads and writes. */
struct jit_data {
	unsigned long stub_slot[NR_STUBS];	/* stub k calls *stub_slot[k] */
	unsigned long stub_target;		/* the stub fp_func calls */
	unsigned long spin;			/* the leaf's loop count, >= 1 */
	unsigned long ret[NR_FNS];		/* return addresses, stored at entry */
};

struct jit {
	unsigned char *map;		/* the code page, then the data page */
	unsigned char *code;
	struct jit_data *data;
	size_t code_size;
	struct jit_fn fn[NR_FNS];
	struct jit_registry reg;	/* .hdr NULL when not registered */
};

/* sample_run()'s return address, stored by each call. */
static unsigned long run_ret;

/* The leaf's loop count as sample_bridge_c_leaf() sees it. */
static unsigned long c_leaf_spin;

/*
 * The functions, emitted by sample_lib.c's emitter, which tracks the
 * CFA rule after each instruction and appends a frame row at every
 * instruction that changes it; those rows are the ones the registry gets.
 */

/*
 * fp_func(x): a classic frame; calls the stub in data->stub_target and
 * returns its result + x, x kept in the frame across the call.
 */
static void emit_fp_func(struct emitter *e, struct jit *j)
{
	fn_begin(e, &j->fn[FN_FP], "fp_func", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(e, &j->data->ret[FN_FP]);
	emit_frame_enter(e);
	emit_sub_rsp(e, 16);
	EMIT(e, 0x48, 0x89, 0x7d, 0xf8);	/* mov %rdi,-0x8(%rbp) */
	emit_load_rax(e, &j->data->stub_target);
	emit_call_rax(e);
	EMIT(e, 0x48, 0x03, 0x45, 0xf8);	/* add -0x8(%rbp),%rax */
	emit_leave(e);
	emit_ret(e);
	fn_end(e);
}

/*
 * NR_STUBS stubs of STUB_SIZE bytes, alike but for their slot: each
 * adjusts the stack, calls through its rip-relative slot and returns
 * the callee's result.  Only the first one's rows and instruction marks
 * are recorded; the PCMASK descriptor repeats them.
 */
static void emit_stubs(struct emitter *e, struct jit *j)
{
	struct jit_fn *fn = &j->fn[FN_STUBS];
	unsigned int k;

	fn_begin(e, fn, "stubs", SFRAME_JIT_FDE_PCMASK, STUB_SIZE);
	for (k = 0; k < NR_STUBS; k++) {
		if (k) {
			e->record = false;
			frame_begin(e);
		}
		emit_store_ret(e, &j->data->ret[FN_STUBS]);
		emit_sub_rsp(e, 8);
		emit_call_slot(e, &j->data->stub_slot[k]);
		emit_add_rsp(e, 8);
		emit_ret(e);
		if (e->pos - e->fn_pos > STUB_SIZE)
			e->overflow = true;
		pad_to(e, STUB_SIZE);
	}
	e->record = true;
	fn_end(e);
}

/*
 * nofp_func(x): no frame pointer; saves two callee-saved registers,
 * keeps values in them and in a stack slot across the call, and pushes
 * once more around the call.  Returns sample_bridge(x) + 5x.
 */
static void emit_nofp_func(struct emitter *e, struct jit *j)
{
	fn_begin(e, &j->fn[FN_NOFP], "nofp_func", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(e, &j->data->ret[FN_NOFP]);
	emit_push(e, RBX);
	emit_push(e, R12);
	emit_sub_rsp(e, 24);
	EMIT(e, 0x48, 0x89, 0xfb);		/* mov %rdi,%rbx */
	EMIT(e, 0x4c, 0x8d, 0x24, 0x7f);	/* lea (%rdi,%rdi,2),%r12 */
	EMIT(e, 0x48, 0x89, 0x7c, 0x24, 0x08);	/* mov %rdi,0x8(%rsp) */
	/* The stack changes again in mid-function, around the call only. */
	emit_push(e, R13);
	emit_sub_rsp(e, 8);
	emit_mov_rax_imm(e, (unsigned long)sample_bridge);
	emit_call_rax(e);
	emit_add_rsp(e, 8);
	emit_pop(e, R13);
	EMIT(e, 0x48, 0x01, 0xd8);		/* add %rbx,%rax */
	EMIT(e, 0x4c, 0x01, 0xe0);		/* add %r12,%rax */
	EMIT(e, 0x48, 0x03, 0x44, 0x24, 0x08);	/* add 0x8(%rsp),%rax */
	emit_add_rsp(e, 24);
	emit_pop(e, R12);
	emit_pop(e, RBX);
	emit_ret(e);
	fn_end(e);
}

/* leaf(y): no frame pointer; spins data->spin times, returns spin + y. */
static void emit_leaf(struct emitter *e, struct jit *j)
{
	struct jit_fn *fn = &j->fn[FN_LEAF];

	fn_begin(e, fn, "leaf", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(e, &j->data->ret[FN_LEAF]);
	emit_sub_rsp(e, 40);
	emit_load_rax(e, &j->data->spin);
	EMIT(e, 0x48, 0x89, 0x44, 0x24, 0x10);	/* mov %rax,0x10(%rsp) */
	EMIT(e, 0x48, 0x89, 0xc1);		/* mov %rax,%rcx */
	fn->spin_start = e->pos - e->fn_pos;
	EMIT(e, 0x48, 0xff, 0xc9);		/* 1: dec %rcx */
	EMIT(e, 0x75, 0xfb);			/* jne 1b */
	fn->spin_end = e->pos - e->fn_pos;
	EMIT(e, 0x48, 0x8b, 0x44, 0x24, 0x10);	/* mov 0x10(%rsp),%rax */
	EMIT(e, 0x48, 0x01, 0xf8);		/* add %rdi,%rax */
	emit_add_rsp(e, 40);
	emit_ret(e);
	fn_end(e);
}

static unsigned long stub_addr(const struct jit *j, unsigned int k)
{
	return j->fn[FN_STUBS].start + k * STUB_SIZE;
}

/* Append @fn to the registry as the uapi header says: rows, FDE, count. */
static void jit_publish(struct __test_metadata *_metadata, struct jit *j,
			struct jit_fn *fn)
{
	ASSERT_EQ(0, jit_registry_append(&j->reg, fn));
}

/*
 * Emit the functions into a code page followed by their data page, make
 * the code executable and, if @publish, register and publish it in a
 * registry made with @flags (SFRAME_JIT_F_*).
 */
static void jit_setup(struct __test_metadata *_metadata, struct jit *j,
		      bool publish, __u32 flags)
{
	size_t ps = page_size();
	struct emitter e = { 0 };
	unsigned int i;

	memset(j, 0, sizeof(*j));
	j->map = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, j->map);
	j->code = j->map;
	j->code_size = ps;
	j->data = (struct jit_data *)(j->map + ps);
	j->data->spin = 1;

	e.buf = j->code;
	e.cap = j->code_size;
	emit_fp_func(&e, j);
	emit_stubs(&e, j);
	emit_nofp_func(&e, j);
	emit_leaf(&e, j);
	ASSERT_FALSE(e.overflow);
	pad_to(&e, j->code_size);

	for (i = 0; i < NR_STUBS; i++)
		j->data->stub_slot[i] = j->fn[FN_NOFP].start;
	j->data->stub_target = stub_addr(j, 0);
	sample_bridge_callee = (long (*)(long))j->fn[FN_LEAF].start;
	ASSERT_EQ(0, mprotect(j->code, j->code_size, PROT_READ | PROT_EXEC));

	if (!publish)
		return;
	registry_new_flags(_metadata, &j->reg, (unsigned long)j->code,
			   (unsigned long)j->code + j->code_size, NR_FNS,
			   4 * MAX_ROWS, flags,
			   flags & SFRAME_JIT_F_COMPACT ? 4 * MAX_ROWS : 0);
	/* Before any of it runs; in address order, as the registry wants. */
	for (i = 0; i < NR_FNS; i++)
		jit_publish(_metadata, j, &j->fn[i]);
}

/* The flags of a registry whose lookups are counted, compact or not. */
static __u32 counted(bool compact)
{
	return SFRAME_JIT_F_STATS | (compact ? SFRAME_JIT_F_COMPACT : 0);
}

static void jit_teardown(struct jit *j)
{
	jit_registry_unmap(&j->reg);
	if (j->map)
		munmap(j->map, 2 * page_size());
}

/* A stand-in for the JIT leaf, to compute what sample_bridge() returns. */
static long sample_bridge_c_leaf(long y)
{
	return c_leaf_spin + y;
}

/* What a run of the chain returns, from a model of each JIT function. */
static long jit_expected_result(const struct jit *j, long x)
{
	long (*leaf)(long) = sample_bridge_callee;
	long bridge;

	c_leaf_spin = j->data->spin;
	sample_bridge_callee = sample_bridge_c_leaf;
	bridge = sample_bridge(x);
	sample_bridge_callee = leaf;
	/* nofp_func adds x + 3x + x, the stub nothing, fp_func x. */
	return bridge + 5 * x + x;
}

/* Run the chain once; stores run_ret and the return addresses. */
static noinline long sample_run(const struct jit *j, long x)
{
	long (*entry)(long) = (long (*)(long))j->fn[FN_FP].start;
	long r;

	run_ret = (unsigned long)__builtin_return_address(0);
	r = entry(x);
	/* A use after the call: no tail call, this frame stays on the stack. */
	__asm__ volatile("" : "+r"(r));
	return r;
}

/*
 * Call sample_run() through a pointer the compiler cannot follow, so that
 * it neither inlines nor clones it: the function at sample_run's address
 * is the one that runs.
 */
static long run_chain(const struct jit *j, long x)
{
	long (*run)(const struct jit *j, long x) = sample_run;

	__asm__ volatile("" : "+r"(run));
	return run(j, x);
}

/*
 * The return addresses stored by the last run are where the emitter put
 * the calls, and in the C functions that made the others.
 */
static void check_stored(struct __test_metadata *_metadata,
			 const struct jit *j, unsigned int k)
{
	const unsigned long *ret = j->data->ret;
	unsigned long bridge = (unsigned long)sample_bridge;
	unsigned long run = (unsigned long)sample_run;

	ASSERT_EQ(j->fn[FN_FP].start + j->fn[FN_FP].call_ret, ret[FN_STUBS]);
	ASSERT_EQ(stub_addr(j, k) + j->fn[FN_STUBS].call_ret, ret[FN_NOFP]);
	ASSERT_EQ(j->fn[FN_NOFP].start + j->fn[FN_NOFP].call_ret,
		  sample_bridge_ret);
	ASSERT_TRUE(ret[FN_LEAF] > bridge && ret[FN_LEAF] < bridge + 4096);
	ASSERT_TRUE(ret[FN_FP] > run && ret[FN_FP] < run + 4096);
}

/* The expected chain but for entry 0, the sampled IP. */
static void expected_chain(const struct jit *j, __u64 *want)
{
	want[0] = 0;
	want[1] = j->data->ret[FN_LEAF];
	want[2] = sample_bridge_ret;
	want[3] = j->data->ret[FN_NOFP];
	want[4] = j->data->ret[FN_STUBS];
	want[5] = j->data->ret[FN_FP];
	want[6] = run_ret;
}

static const char *row_str(const struct sframe_jit_fre *r, char *buf,
			   size_t size)
{
	snprintf(buf, size, "+%-3u CFA=%s%+d RA@CFA%+d%s", r->start_off,
		 r->cfa_base == SFRAME_JIT_CFA_FP ? "FP" : "SP", r->cfa_off,
		 r->ra_off, r->flags & SFRAME_JIT_FRE_FP_SAVED ? " FP@CFA" : "");
	if (r->flags & SFRAME_JIT_FRE_FP_SAVED)
		snprintf(buf + strlen(buf), size - strlen(buf), "%+d",
			 r->fp_off);
	return buf;
}

static void jit_log_layout(struct __test_metadata *_metadata,
			   const struct jit *j)
{
	unsigned int i, r;
	char buf[80];

	for (i = 0; i < NR_FNS; i++) {
		const struct jit_fn *fn = &j->fn[i];

		snprintf(buf, sizeof(buf), ", its call returns to +%u",
			 fn->call_ret);
		TH_LOG("%-9s at +%-3lu size %-3u %s%s", fn->name,
		       fn->start - (unsigned long)j->code, fn->size,
		       fn->type == SFRAME_JIT_FDE_PCMASK ? "PCMASK/32" : "PCINC",
		       fn->call_ret ? buf : "");
		for (r = 0; r < fn->nr_rows; r++)
			TH_LOG("    row %s",
			       row_str(&fn->rows[r], buf, sizeof(buf)));
	}
}

/* SFRAME_SAMPLE_DUMP=FILE: write the code page for objdump. */
static void jit_dump(struct __test_metadata *_metadata, const struct jit *j)
{
	const char *path = getenv("SFRAME_SAMPLE_DUMP");
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1UL, fwrite(j->code, j->code_size, 1, f));
	ASSERT_EQ(0, fclose(f));
	TH_LOG("%s: the code page, at %p; objdump -D -b binary -m i386:x86-64 --adjust-vma=%p",
	       path, j->code, j->code);
}

/* A task-clock sampler of this thread, user IPs and user callchains. */
static void sample_attr(struct perf_event_attr *attr, bool sframe)
{
	sampler_attr(attr, SAMPLE_PERIOD_NS, sframe);
}

/* What a session saw.  Chains are compared for leaf samples only. */
struct tally {
	unsigned long calls;
	struct ring_counts ring;	/* records, lost, throttles, bad ones */
	unsigned long leaf;		/* with the IP in the leaf's loop */
	unsigned long in_jit;		/* with the IP elsewhere in JIT code */
	unsigned long not_user;		/* chains without PERF_CONTEXT_USER */
	struct chain_tally chains;	/* of the leaf samples */
};

/* What tally_chain() compares against. */
struct tally_ctx {
	struct tally *t;
	const struct jit *j;
	const __u64 *want_rest;
};

static void sampler_setup(struct __test_metadata *_metadata,
			  struct sampler *s, bool sframe)
{
	struct perf_event_attr attr;

	sample_attr(&attr, sframe);
	sampler_start(_metadata, s, &attr, RING_PAGES);
}

static bool in_leaf_loop(const struct jit *j, __u64 ip)
{
	const struct jit_fn *leaf = &j->fn[FN_LEAF];

	return ip >= leaf->start + leaf->spin_start &&
	       ip < leaf->start + leaf->spin_end;
}

static void tally_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct tally_ctx *ctx = arg;
	struct tally *t = ctx->t;
	const struct jit *j = ctx->j;
	__u64 want[NR_FRAMES];

	if (!in_leaf_loop(j, ip)) {
		if (ip >= (unsigned long)j->code &&
		    ip < (unsigned long)j->code + j->code_size)
			t->in_jit++;
		return;
	}
	t->leaf++;
	memcpy(want, ctx->want_rest, sizeof(want));
	want[0] = ip;
	chain_tally_add(&t->chains, NR_FRAMES, chain, nr, want);
}

/* Read every record the kernel published; the ring protocol of perf. */
static void session_drain(struct sampler *s, const struct jit *j,
			  const __u64 *want_rest, struct tally *t)
{
	struct tally_ctx ctx = { .t = t, .j = j, .want_rest = want_rest };

	sampler_drain_chains(s, tally_chain, &ctx, &t->not_user,
			     &t->ring);
}

/*
 * Sample runs of the chain until MIN_LEAF_SAMPLES samples landed in the
 * leaf's loop, or SESSION_SECONDS passed.  Each run goes through the
 * next stub and is checked; its samples are read right after it, while
 * the stored return addresses are those of that run.
 */
static void sample_session(struct __test_metadata *_metadata,
			   struct jit *j, bool sframe, struct tally *t)
{
	struct timespec start, run_start;
	__u64 want[NR_FRAMES];
	struct sampler s;

	memset(t, 0, sizeof(*t));
	sampler_setup(_metadata, &s, sframe);
	clock_gettime(CLOCK_MONOTONIC, &start);
	ASSERT_EQ(0, sampler_enable(&s, true));
	while (t->leaf < MIN_LEAF_SAMPLES &&
	       elapsed(CLOCK_MONOTONIC, &start) < SESSION_SECONDS) {
		unsigned int k = t->calls++ % NR_STUBS;
		long expect;
		double took;

		j->data->stub_target = stub_addr(j, k);
		expect = jit_expected_result(j, BRIDGE_ARG);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &run_start);
		ASSERT_EQ(expect, run_chain(j, BRIDGE_ARG));
		took = elapsed(CLOCK_THREAD_CPUTIME_ID, &run_start);
		check_stored(_metadata, j, k);
		expected_chain(j, want);
		session_drain(&s, j, want, t);
		/* Some 20 to 80 samples a run: many runs, no ring overflow. */
		spin_tune(&j->data->spin, took);
	}
	ASSERT_EQ(0, sampler_enable(&s, false));
	session_drain(&s, j, want, t);
	sampler_close(&s);
}

static void tally_log(struct __test_metadata *_metadata,
		      const struct tally *t)
{
	TH_LOG("%lu runs, %lu samples: %lu in the leaf loop, %lu elsewhere in JIT code",
	       t->calls, t->ring.samples, t->leaf, t->in_jit);
	TH_LOG("%lu without a user context, %lu bad records, %lu lost, %lu throttles",
	       t->not_user, t->ring.bad_records, t->ring.lost,
	       t->ring.throttled);
	chain_tally_log(_metadata, &t->chains, NR_FRAMES, "leaf samples",
			frame_name, 27);
}

/*
 * Every leaf sample's chain is right up to frame @bad and wrong from
 * there; NR_FRAMES: exact.
 */
static void expect_chains(struct __test_metadata *_metadata,
			  const struct tally *t, unsigned int bad)
{
	tally_log(_metadata, t);
	EXPECT_EQ(0UL, t->not_user);
	EXPECT_EQ(0UL, t->ring.bad_records);
	ASSERT_LE(MIN_LEAF_SAMPLES, t->leaf)
		TH_LOG("too few samples in the leaf's loop");
	EXPECT_EQ(t->leaf, t->chains.first_bad[bad]);
}

static struct sframe_jit_stats stats_read(const struct sframe_jit_header *h)
{
	return jit_registry_stats(h);
}

static struct sframe_jit_stats stats_since(const struct sframe_jit_header *h,
					   const struct sframe_jit_stats *then)
{
	struct sframe_jit_stats now = stats_read(h);

	now.lookups -= then->lookups;
	now.hits -= then->hits;
	now.tombstone_hits -= then->tombstone_hits;
	now.seq_retries -= then->seq_retries;
	now.malformed -= then->malformed;
	return now;
}

static void stats_log(struct __test_metadata *_metadata, const char *what,
		      const struct sframe_jit_stats *d)
{
	TH_LOG("%s: lookups %llu hits %llu tombstone_hits %llu seq_retries %llu malformed %llu",
	       what, (unsigned long long)d->lookups,
	       (unsigned long long)d->hits,
	       (unsigned long long)d->tombstone_hits,
	       (unsigned long long)d->seq_retries,
	       (unsigned long long)d->malformed);
}

static void set_tombstone(struct jit *j, enum jit_fn_id id, bool on)
{
	jit_registry_tombstone(&j->reg, j->fn[id].fde, on);
}

/* A rewrite in place, as the uapi header says: seq odd, write, even. */
static void seq_begin(struct jit *j)
{
	jit_registry_seq_begin(&j->reg);
}

static void seq_end(struct jit *j)
{
	jit_registry_seq_end(&j->reg);
}

/*
 * Tests without the system call or perf, which run anywhere: the
 * attr helper, and the emitter and its rows, natively.
 */
FIXTURE(native) {
};

FIXTURE_SETUP(native)
{
}

FIXTURE_TEARDOWN(native)
{
}

TEST_F(native, attr_helper_sets_bit_40_past_mainlines_defer_bits)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.sigtrap = 1;
	ASSERT_EQ(1ULL << 37, *attr_flags(&attr));
	memset(&attr, 0, sizeof(attr));
	attr_set_sframe(&attr);
	ASSERT_EQ(1ULL << 40, *attr_flags(&attr));
#ifdef HAVE_CALLCHAIN_SFRAME
	TH_LOG("through the callchain_sframe field");
#else
	TH_LOG("by position: the headers have no callchain_sframe yet");
#endif
}

TEST_F(native, jit_code_runs_natively_and_stores_every_return_address)
{
	struct jit j;
	unsigned int k;

	jit_setup(_metadata, &j, false, 0);
	jit_log_layout(_metadata, &j);
	jit_dump(_metadata, &j);
	for (k = 0; k < NR_STUBS; k++) {
		long expect;

		j.data->stub_target = stub_addr(&j, k);
		j.data->spin = 1 + k * 1000;
		expect = jit_expected_result(&j, BRIDGE_ARG + k);
		memset(j.data->ret, 0, sizeof(j.data->ret));
		ASSERT_EQ(expect, run_chain(&j, BRIDGE_ARG + k));
		check_stored(_metadata, &j, k);
	}
	jit_teardown(&j);
}

/* What row_trace() runs: the chain, through the stub data->stub_target. */
static long run_chain_arg(void *arg)
{
	return run_chain(arg, BRIDGE_ARG);
}

/*
 * Single-step the chain and, at every instruction of the JIT code,
 * evaluate the row the emitter gave it against the real registers: the
 * CFA it gives must hold the return address that the function stored at
 * entry just above it, and the frame pointer must be where the row says.
 */
TEST_F(native, every_jit_instruction_has_a_row_that_finds_its_return_address)
{
	struct trace_fn fns[NR_FNS];
	unsigned long steps = 0;
	unsigned int i, k;
	struct jit j;

	jit_setup(_metadata, &j, false, 0);
	for (i = 0; i < NR_FNS; i++)
		fns[i] = (struct trace_fn){ &j.fn[i], &j.data->ret[i] };
	/* Each run goes through every instruction of its stub. */
	for (k = 0; k < NR_STUBS; k++) {
		char what[24];
		long expect, r;

		j.data->stub_target = stub_addr(&j, k);
		j.data->spin = 3;
		expect = jit_expected_result(&j, BRIDGE_ARG);
		/* A first run stores the return addresses the rows must find. */
		ASSERT_EQ(expect, run_chain(&j, BRIDGE_ARG));
		snprintf(what, sizeof(what), "through stub %u", k);
		rows_trace(_metadata, what, fns, NR_FNS, run_chain_arg, &j, &r);
		ASSERT_EQ(expect, r);
		steps += row_trace_steps();
	}
	TH_LOG("%lu single steps", steps);
	jit_teardown(&j);
}

/* Tests that sample: the patched kernel, under QEMU. */

FIXTURE(sample) {
	struct jit jit;
};

/* Every sampling case, in a version 1 and in a compact registry. */
FIXTURE_VARIANT(sample) {
	bool compact;
};

FIXTURE_VARIANT_ADD(sample, v1) {
	.compact = false,
};

FIXTURE_VARIANT_ADD(sample, compact) {
	.compact = true,
};

FIXTURE_SETUP(sample)
{
	if (sampling_skip(_metadata))
		return;
	jit_setup(_metadata, &self->jit, true, counted(variant->compact));
}

FIXTURE_TEARDOWN(sample)
{
	jit_teardown(&self->jit);
}

TEST_F_TIMEOUT(sample,
	       sframe_callchains_through_jit_pcmask_stubs_and_gsframe_c_are_exact_in_every_sample,
	       60)
{
	struct tally t;

	sample_session(_metadata, &self->jit, true, &t);
	expect_chains(_metadata, &t, NR_FRAMES);
}

TEST_F_TIMEOUT(sample, without_the_attr_bit_the_frame_pointer_walker_gets_no_chain_right,
	       60)
{
	struct sframe_jit_stats none = { 0 };
	struct tally t;

	sample_session(_metadata, &self->jit, false, &t);
	tally_log(_metadata, &t);
	EXPECT_EQ(0UL, t.not_user);
	ASSERT_LE(MIN_LEAF_SAMPLES, t.leaf);
	/*
	 * The leaf and sample_bridge keep no frame record, and %rbp holds
	 * a number there: frame 1 is already wrong.
	 */
	EXPECT_EQ(0UL, t.chains.first_bad[NR_FRAMES]);
	EXPECT_EQ(0, memcmp(&none, &self->jit.reg.hdr->stats, sizeof(none)))
		TH_LOG("the registry was read without the bit");
}

TEST_F_TIMEOUT(sample, an_odd_seq_sends_jit_frames_to_frame_pointers_until_it_is_even,
	       90)
{
	struct tally t;

	seq_begin(&self->jit);
	sample_session(_metadata, &self->jit, true, &t);
	expect_chains(_metadata, &t, frame_of[FN_LEAF]);
	seq_end(&self->jit);
	sample_session(_metadata, &self->jit, true, &t);
	expect_chains(_metadata, &t, NR_FRAMES);
}

/*
 * A tombstoned function's frame gets one frame-pointer step.  Frames
 * below it stay exact; from it on the chain is wrong, except for the
 * frame-pointer function, whose frame record gives the same answer as
 * its rows (the unwinder must have restored %rbp from sample_bridge's
 * .sframe row on the way).
 */
FIXTURE(tombstone) {
	struct jit jit;
};

FIXTURE_VARIANT(tombstone) {
	enum jit_fn_id fn;
	unsigned int first_bad;
	bool compact;
};

FIXTURE_VARIANT_ADD(tombstone, leaf) {
	.fn = FN_LEAF,
	.first_bad = 1,		/* frame_of[FN_LEAF] */
};

FIXTURE_VARIANT_ADD(tombstone, leaf_compact) {
	.fn = FN_LEAF,
	.first_bad = 1,		/* frame_of[FN_LEAF] */
	.compact = true,
};

FIXTURE_VARIANT_ADD(tombstone, nofp_func) {
	.fn = FN_NOFP,
	.first_bad = 3,		/* frame_of[FN_NOFP] */
};

FIXTURE_VARIANT_ADD(tombstone, nofp_func_compact) {
	.fn = FN_NOFP,
	.first_bad = 3,		/* frame_of[FN_NOFP] */
	.compact = true,
};

FIXTURE_VARIANT_ADD(tombstone, pcmask_stubs) {
	.fn = FN_STUBS,
	.first_bad = 4,		/* frame_of[FN_STUBS] */
};

FIXTURE_VARIANT_ADD(tombstone, pcmask_stubs_compact) {
	.fn = FN_STUBS,
	.first_bad = 4,		/* frame_of[FN_STUBS] */
	.compact = true,
};

FIXTURE_VARIANT_ADD(tombstone, fp_func) {
	.fn = FN_FP,
	.first_bad = NR_FRAMES,
};

FIXTURE_VARIANT_ADD(tombstone, fp_func_compact) {
	.fn = FN_FP,
	.first_bad = NR_FRAMES,
	.compact = true,
};

FIXTURE_SETUP(tombstone)
{
	if (sampling_skip(_metadata))
		return;
	jit_setup(_metadata, &self->jit, true, counted(variant->compact));
}

FIXTURE_TEARDOWN(tombstone)
{
	jit_teardown(&self->jit);
}

TEST_F_TIMEOUT(tombstone, a_tombstoned_function_falls_back_to_its_frame_pointer,
	       60)
{
	struct tally t;

	ASSERT_EQ(variant->first_bad, variant->fn == FN_FP ? NR_FRAMES :
		  frame_of[variant->fn]);
	set_tombstone(&self->jit, variant->fn, true);
	sample_session(_metadata, &self->jit, true, &t);
	expect_chains(_metadata, &t, variant->first_bad);
}

/*
 * Rows 1.. of the function in reverse, strictly decreasing: a JIT that
 * wrote them out of order.  Wherever a lookup in the function lands, it
 * meets two rows out of order among those it reads, with three rows or
 * more, so each of its frames is malformed and falls back to the frame
 * pointer, as a tombstoned one does.
 */
TEST_F_TIMEOUT(tombstone, rows_out_of_order_fall_back_and_count_as_malformed,
	       60)
{
	const struct jit_fn *fn = &self->jit.fn[variant->fn];
	struct sframe_jit_header *h = self->jit.reg.hdr;
	struct sframe_jit_stats then, d;
	struct jit_fn rev = *fn;
	unsigned int i;
	struct tally t;
	__u32 first;

	if (fn->nr_rows < 3)
		SKIP(return, "%s has %u rows, always in order", fn->name,
		     fn->nr_rows);
	for (i = 1; i < fn->nr_rows; i++)
		rev.rows[i] = fn->rows[fn->nr_rows - i];
	first = jit_registry_fre_start(&self->jit.reg, fn->fde);
	seq_begin(&self->jit);
	jit_registry_write_rows(&self->jit.reg, first, &rev);
	seq_end(&self->jit);

	then = stats_read(h);
	sample_session(_metadata, &self->jit, true, &t);
	d = stats_since(h, &then);
	stats_log(_metadata, fn->name, &d);
	expect_chains(_metadata, &t, variant->first_bad);
	/* Each leaf sample looks the function up once in its chain. */
	EXPECT_LE(t.leaf, d.malformed);
	EXPECT_EQ(0ULL, d.tombstone_hits);
}

/*
 * The unwinder's counters in the registry header.  If they do not move,
 * the unwinder does not keep them: a kernel bug, not a test to loosen.
 */
TEST_F_TIMEOUT(sample, registry_stats_count_lookups_hits_tombstones_and_seq_retries,
	       120)
{
	struct sframe_jit_header *h = self->jit.reg.hdr;
	struct sframe_jit_stats then, d;
	struct tally t;

	then = stats_read(h);
	sample_session(_metadata, &self->jit, false, &t);
	d = stats_since(h, &then);
	stats_log(_metadata, "without the bit", &d);
	EXPECT_EQ(0ULL, d.lookups);

	then = stats_read(h);
	sample_session(_metadata, &self->jit, true, &t);
	d = stats_since(h, &then);
	stats_log(_metadata, "with the bit", &d);
	ASSERT_LE(MIN_LEAF_SAMPLES, t.leaf);
	/* Four JIT frames in each leaf sample's chain. */
	EXPECT_LE(4 * t.leaf, d.hits);
	EXPECT_LE(d.hits, d.lookups);
	EXPECT_EQ(0ULL, d.tombstone_hits);
	EXPECT_EQ(0ULL, d.seq_retries);
	EXPECT_EQ(0ULL, d.malformed);

	set_tombstone(&self->jit, FN_NOFP, true);
	then = stats_read(h);
	sample_session(_metadata, &self->jit, true, &t);
	d = stats_since(h, &then);
	stats_log(_metadata, "nofp_func tombstoned", &d);
	ASSERT_LE(MIN_LEAF_SAMPLES, t.leaf);
	EXPECT_LE(t.leaf, d.tombstone_hits);
	EXPECT_LE(t.leaf, d.hits);
	EXPECT_LE(d.hits + d.tombstone_hits, d.lookups);
	EXPECT_EQ(0ULL, d.seq_retries);
	EXPECT_EQ(0ULL, d.malformed);

	/* Bringing a function back is a rewrite: under seq. */
	seq_begin(&self->jit);
	set_tombstone(&self->jit, FN_NOFP, false);
	then = stats_read(h);
	sample_session(_metadata, &self->jit, true, &t);
	d = stats_since(h, &then);
	stats_log(_metadata, "seq odd", &d);
	ASSERT_LE(MIN_LEAF_SAMPLES, t.leaf);
	EXPECT_LE(t.leaf, d.seq_retries);
	EXPECT_EQ(0ULL, d.hits);
	EXPECT_EQ(0ULL, d.tombstone_hits);
	EXPECT_LE(d.seq_retries, d.lookups);
	EXPECT_EQ(0ULL, d.malformed);
	seq_end(&self->jit);
}

/*
 * A registry made without SFRAME_JIT_F_STATS: its chains are as exact,
 * and the unwinder never writes to it, so that nothing in the process's
 * memory says when or how often it was sampled.
 */
FIXTURE(uncounted) {
	struct jit jit;
};

FIXTURE_VARIANT(uncounted) {
	bool compact;
};

FIXTURE_VARIANT_ADD(uncounted, v1) {
	.compact = false,
};

FIXTURE_VARIANT_ADD(uncounted, compact) {
	.compact = true,
};

FIXTURE_SETUP(uncounted)
{
	if (sampling_skip(_metadata))
		return;
	jit_setup(_metadata, &self->jit, true,
		  variant->compact ? SFRAME_JIT_F_COMPACT : 0);
}

FIXTURE_TEARDOWN(uncounted)
{
	jit_teardown(&self->jit);
}

TEST_F_TIMEOUT(uncounted,
	       a_registry_without_stats_gives_exact_chains_and_is_never_written,
	       60)
{
	const struct sframe_jit_header *h = self->jit.reg.hdr;
	size_t ps = page_size();
	unsigned char *before = malloc(ps);
	struct tally t;

	ASSERT_NE(NULL, before);
	memcpy(before, h, ps);
	sample_session(_metadata, &self->jit, true, &t);
	expect_chains(_metadata, &t, NR_FRAMES);
	stats_log(_metadata, "counters", &h->stats);
	EXPECT_EQ(0, memcmp(before, h, ps))
		TH_LOG("the unwinder wrote to the header page");
	free(before);
}

/*
 * kernel.sframe_user_callchains=1, for the profilers that do not know
 * the bit: their plain request, as perf --call-graph=fp makes it, is
 * walked with the task's tables.  Set and cleared by the fixture, so
 * that a failing test leaves it at its default.
 */
FIXTURE(everyone) {
	struct jit jit;
};

FIXTURE_SETUP(everyone)
{
	if (sampling_skip(_metadata))
		return;
	ASSERT_EQ(0, sysctl_write(USER_CALLCHAINS_SYSCTL, "1"));
	jit_setup(_metadata, &self->jit, true, counted(false));
}

FIXTURE_TEARDOWN(everyone)
{
	sysctl_write(USER_CALLCHAINS_SYSCTL, "0");
	jit_teardown(&self->jit);
}

TEST_F_TIMEOUT(everyone, a_request_without_the_bit_gets_the_exact_chain,
	       60)
{
	struct sframe_jit_stats then, d;
	struct tally t;

	then = stats_read(self->jit.reg.hdr);
	sample_session(_metadata, &self->jit, false, &t);
	d = stats_since(self->jit.reg.hdr, &then);
	stats_log(_metadata, "without the bit", &d);
	expect_chains(_metadata, &t, NR_FRAMES);
	EXPECT_LE(4 * t.leaf, d.hits);
}

TEST_F(everyone, the_sysctl_takes_0_and_1_only)
{
	char buf[16];

	/* The write fails (EINVAL from the handler) and changes nothing. */
	EXPECT_NE(0, sysctl_write(USER_CALLCHAINS_SYSCTL, "2"));
	ASSERT_EQ(0, sysctl_read(USER_CALLCHAINS_SYSCTL, buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	ASSERT_EQ(0, sysctl_write(USER_CALLCHAINS_SYSCTL, "0"));
	ASSERT_EQ(0, sysctl_read(USER_CALLCHAINS_SYSCTL, buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
}

TEST_F(sample, perf_event_open_takes_callchain_sframe_but_not_the_bits_around_it)
{
	struct perf_event_attr attr;
	unsigned int bit;
	int fd;

	sample_attr(&attr, true);
	fd = perf_open(&attr);
	ASSERT_LE(0, fd) TH_LOG("perf_event_open: %s", strerror(-fd));
	close(fd);
	/*
	 * Bits 38 and 39 are mainline's defer_callchain and defer_output,
	 * which this kernel does not have; bit 41 is still reserved.  All
	 * three are refused: the bit is where the test thinks.
	 */
	for (bit = 38; bit <= 41; bit++) {
		if (bit == 40)
			continue;
		sample_attr(&attr, true);
		*attr_flags(&attr) |= 1ULL << bit;
		EXPECT_EQ(-EINVAL, perf_open(&attr)) TH_LOG("bit %u", bit);
	}
}

/* Open and close an event: 0, or perf_event_open's -errno. */
static int perf_open_close(struct perf_event_attr *attr)
{
	int fd = perf_open(attr);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * callchain_sframe says how a user callchain is walked: an event that
 * samples no callchain, or one without its user part, is refused.
 */
TEST_F(sample, callchain_sframe_needs_a_user_callchain)
{
	struct perf_event_attr attr;

	sample_attr(&attr, true);
	attr.sample_type &= ~PERF_SAMPLE_CALLCHAIN;
	EXPECT_EQ(-EINVAL, perf_open(&attr));
	sample_attr(&attr, true);
	attr.exclude_callchain_user = 1;
	EXPECT_EQ(-EINVAL, perf_open(&attr));
	/* Without the bit, both are valid events. */
	sample_attr(&attr, false);
	attr.sample_type &= ~PERF_SAMPLE_CALLCHAIN;
	EXPECT_EQ(0, perf_open_close(&attr));
	sample_attr(&attr, false);
	attr.exclude_callchain_user = 1;
	EXPECT_EQ(0, perf_open_close(&attr));
}

TEST_HARNESS_MAIN
