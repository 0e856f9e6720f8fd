// SPDX-License-Identifier: GPL-2.0
/*
 * bpf_get_stack() with BPF_F_USER_STACK | BPF_F_USER_SFRAME, from a BPF
 * program that a perf event runs, returns the exact user chain through
 * JIT code and -fomit-frame-pointer C code.
 *
 * The chain is sample_test's in small:
 *
 *   bpf_run (C) -> outer (JIT, no frame pointer) -> sample_bridge (C,
 *   described only by the executable's .sframe) -> leaf (JIT), which spins
 *
 * A BPF_PROG_TYPE_PERF_EVENT program, written here as raw instructions
 * and loaded with bpf(2), no libbpf or clang, is attached with
 * PERF_EVENT_IOC_SET_BPF to a task-clock event of this thread.  That
 * event samples PERF_SAMPLE_IP only, so the helper walks the stack
 * itself; or also PERF_SAMPLE_CALLCHAIN, with or without
 * callchain_sframe, and the helper (its _pe variant) hands back the
 * event's own chain when the event walked it as the program's flags ask,
 * and walks the stack itself otherwise.  For each sample
 * the program takes the next record of an array map, calls
 * bpf_get_stack() into it and stores the helper's return value beside.
 * After the runs the test reads the records and compares every one whose
 * first entry, the sampled IP, lies in the leaf's loop with the return
 * addresses the code stored itself.
 *
 * Needs CONFIG_BPF_EVENTS (with CONFIG_UPROBE_EVENTS, CONFIG_FTRACE) for
 * the program type; see config.
 */
#include <assert.h>
#include <sys/ioctl.h>

#include <linux/bpf.h>

#include "sample_harness.h"
#include "sample_bridge.h"

#ifndef noinline
#define noinline __attribute__((__noinline__))
#endif

/* An enumerator, which the Makefile finds in the kernel headers. */
#ifdef HAVE_BPF_F_USER_SFRAME
_Static_assert(BPF_F_USER_SFRAME == (1ULL << 12), "BPF_F_USER_SFRAME moved");
#define USER_SFRAME	BPF_F_USER_SFRAME
#else
#define USER_SFRAME	(1ULL << 12)
#endif

#define SAMPLE_PERIOD_NS	100000
#define MIN_SAMPLES		1000UL
#define SESSION_SECONDS		20
#define BRIDGE_ARG		1000	/* keeps %rbp a small number, not a frame */

#define NR_RECORDS	4096
#define STACK_DEPTH	16

/* One map value: what bpf_get_stack() returned, and what it wrote. */
struct record {
	__s64 ret;
	__u64 ips[STACK_DEPTH];
};

enum { FN_OUTER, FN_LEAF, NR_FNS };

struct chain_data {
	unsigned long spin;
	unsigned long ret[NR_FNS];
};

struct chain {
	unsigned char *map;
	struct chain_data *data;
	struct jit_fn fn[NR_FNS];
	struct jit_registry reg;
};

static unsigned long run_ret;

/* The chain compared: the IP in the leaf, then return addresses. */
#define NR_FRAMES	5
static_assert(NR_FRAMES <= CHAIN_MAX, "a chain_tally holds the chain");

static const char * const frame_name[NR_FRAMES] = {
	"IP in the leaf", "leaf -> sample_bridge", "sample_bridge -> outer",
	"outer -> bpf_run", "bpf_run -> its caller",
};

static bool emit_chain(struct chain *c)
{
	struct emitter e = { .buf = c->map, .cap = page_size() };
	struct chain_data *d = c->data;

	fn_begin(&e, &c->fn[FN_OUTER], "outer", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &d->ret[FN_OUTER]);
	emit_push(&e, RBX);
	emit_push(&e, R12);
	emit_sub_rsp(&e, 24);
	emit_mov_rax_imm(&e, (unsigned long)sample_bridge);
	emit_call_rax(&e);
	emit_add_rsp(&e, 24);
	emit_pop(&e, R12);
	emit_pop(&e, RBX);
	emit_ret(&e);
	fn_end(&e);

	fn_begin(&e, &c->fn[FN_LEAF], "leaf", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &d->ret[FN_LEAF]);
	emit_sub_rsp(&e, 40);
	emit_spin(&e, &d->spin);
	emit_add_rsp(&e, 40);
	emit_ret(&e);
	fn_end(&e);
	pad_to(&e, e.cap);
	return !e.overflow;
}

static noinline long bpf_run(const struct chain *c)
{
	long (*outer)(long x) = (long (*)(long))c->fn[FN_OUTER].start;
	long r;

	run_ret = (unsigned long)__builtin_return_address(0);
	r = outer(BRIDGE_ARG);
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* One call site of bpf_run(): its return address is the same each run. */
static noinline long run_chain(void *arg)
{
	long (*run)(const struct chain *c) = bpf_run;

	__asm__ volatile("" : "+r"(run));
	return run(arg);
}

static void expected_chain(const struct chain *c, __u64 *want)
{
	want[0] = 0;
	want[1] = c->data->ret[FN_LEAF];
	want[2] = sample_bridge_ret;
	want[3] = c->data->ret[FN_OUTER];
	want[4] = run_ret;
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
	ASSERT_EQ(0, mprotect(c->map, page_size(), PROT_READ | PROT_EXEC));
	sample_bridge_callee = (long (*)(long))c->fn[FN_LEAF].start;
	if (!publish)
		return;
	registry_new(_metadata, &c->reg, (unsigned long)c->map,
		     (unsigned long)c->map + page_size(), NR_FNS,
		     NR_FNS * MAX_ROWS);
	for (i = 0; i < NR_FNS; i++)
		ASSERT_EQ(0, jit_registry_append(&c->reg, &c->fn[i]));
}

static void chain_teardown(struct chain *c)
{
	jit_registry_unmap(&c->reg);
	if (c->map && c->map != MAP_FAILED)
		munmap(c->map, 2 * page_size());
}

/* Raw BPF: struct bpf_insn by hand, as the uapi header defines it. */
#define INSN(_code, _dst, _src, _off, _imm)				\
	((struct bpf_insn) {						\
		.code = (_code), .dst_reg = (_dst), .src_reg = (_src),	\
		.off = (_off), .imm = (_imm),				\
	})
#define MOV64_REG(dst, src)	INSN(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0)
#define MOV64_IMM(dst, imm)	INSN(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define ADD64_IMM(dst, imm)	INSN(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm)
#define ST_MEM_W(dst, off, imm)	INSN(BPF_ST | BPF_MEM | BPF_W, dst, 0, off, imm)
#define STX_MEM_W(dst, src, off) INSN(BPF_STX | BPF_MEM | BPF_W, dst, src, off, 0)
#define STX_MEM_DW(dst, src, off) INSN(BPF_STX | BPF_MEM | BPF_DW, dst, src, off, 0)
/* src = atomic_fetch_add((u64 *)(dst + off), src) */
#define FETCH_ADD_DW(dst, src, off) \
	INSN(BPF_STX | BPF_ATOMIC | BPF_DW, dst, src, off, BPF_ADD | BPF_FETCH)
#define CALL(fn)		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, fn)
#define EXIT()			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

struct prog {
	struct bpf_insn insn[64];
	unsigned int n;
	unsigned int to_exit[8];	/* jumps to patch to the exit */
	unsigned int nr_to_exit;
};

static void put(struct prog *p, struct bpf_insn insn)
{
	if (p->n < ARRAY_SIZE(p->insn))
		p->insn[p->n] = insn;
	p->n++;
}

/* The two halves of a 64-bit load of a map's address, by its fd. */
static void put_map(struct prog *p, int reg, int fd)
{
	put(p, INSN(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd));
	put(p, INSN(0, 0, 0, 0, 0));
}

/* if (reg <op> imm) goto exit */
static void put_jmp_exit(struct prog *p, int op, int reg, __s32 imm)
{
	if (p->nr_to_exit < ARRAY_SIZE(p->to_exit))
		p->to_exit[p->nr_to_exit++] = p->n;
	put(p, INSN(BPF_JMP | op | BPF_K, reg, 0, 0, imm));
}

/*
 * The program, for counter map @count_fd (one u64) and record map
 * @rec_fd (NR_RECORDS struct record):
 *
 *	i = atomic_fetch_add(&count[0], 1);
 *	if (i < NR_RECORDS) {
 *		r = &rec[i];
 *		r->ret = bpf_get_stack(ctx, r->ips, sizeof(r->ips), flags);
 *	}
 *	return 0;	(the sample itself goes nowhere: no ring)
 */
static unsigned int build_prog(struct prog *p, int count_fd, int rec_fd,
			       __u64 flags)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	put(p, MOV64_REG(BPF_REG_6, BPF_REG_1));
	put(p, ST_MEM_W(BPF_REG_10, -4, 0));
	put_map(p, BPF_REG_1, count_fd);
	put(p, MOV64_REG(BPF_REG_2, BPF_REG_10));
	put(p, ADD64_IMM(BPF_REG_2, -4));
	put(p, CALL(BPF_FUNC_map_lookup_elem));
	put_jmp_exit(p, BPF_JEQ, BPF_REG_0, 0);
	put(p, MOV64_IMM(BPF_REG_1, 1));
	put(p, FETCH_ADD_DW(BPF_REG_0, BPF_REG_1, 0));
	put_jmp_exit(p, BPF_JGE, BPF_REG_1, NR_RECORDS);
	put(p, STX_MEM_W(BPF_REG_10, BPF_REG_1, -8));
	put_map(p, BPF_REG_1, rec_fd);
	put(p, MOV64_REG(BPF_REG_2, BPF_REG_10));
	put(p, ADD64_IMM(BPF_REG_2, -8));
	put(p, CALL(BPF_FUNC_map_lookup_elem));
	put_jmp_exit(p, BPF_JEQ, BPF_REG_0, 0);
	put(p, MOV64_REG(BPF_REG_7, BPF_REG_0));
	put(p, MOV64_REG(BPF_REG_1, BPF_REG_6));
	put(p, MOV64_REG(BPF_REG_2, BPF_REG_7));
	put(p, ADD64_IMM(BPF_REG_2, offsetof(struct record, ips)));
	put(p, MOV64_IMM(BPF_REG_3, sizeof(((struct record *)0)->ips)));
	put(p, MOV64_IMM(BPF_REG_4, (__s32)flags));
	put(p, CALL(BPF_FUNC_get_stack));
	put(p, STX_MEM_DW(BPF_REG_7, BPF_REG_0, offsetof(struct record, ret)));
	for (i = 0; i < p->nr_to_exit; i++)
		p->insn[p->to_exit[i]].off = p->n - p->to_exit[i] - 1;
	put(p, MOV64_IMM(BPF_REG_0, 0));
	put(p, EXIT());
	return p->n;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	long ret = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return ret < 0 ? -errno : ret;
}

static int map_create(__u32 value_size, __u32 max_entries)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = sizeof(__u32);
	attr.value_size = value_size;
	attr.max_entries = max_entries;
	return sys_bpf(BPF_MAP_CREATE, &attr);
}

static int map_lookup(int fd, __u32 key, void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = fd;
	attr.key = (unsigned long)&key;
	attr.value = (unsigned long)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &attr);
}

static int map_update(int fd, __u32 key, const void *value)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_fd = fd;
	attr.key = (unsigned long)&key;
	attr.value = (unsigned long)value;
	attr.flags = BPF_ANY;
	return sys_bpf(BPF_MAP_UPDATE_ELEM, &attr);
}

static char verifier_log[65536];

/* A fd, or -errno with the verifier's log in verifier_log. */
static int prog_load(const struct prog *p)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	attr.insns = (unsigned long)p->insn;
	attr.insn_cnt = p->n;
	attr.license = (unsigned long)"GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd >= 0 || fd == -EPERM)
		return fd;
	verifier_log[0] = '\0';
	attr.log_buf = (unsigned long)verifier_log;
	attr.log_size = sizeof(verifier_log);
	attr.log_level = 1;
	sys_bpf(BPF_PROG_LOAD, &attr);
	return fd;
}

/* The maps, the program, and the event it is attached to. */
struct bpf_sampler {
	int count_fd, rec_fd, prog_fd, event_fd;
	struct prog prog;
};

/*
 * Whether BPF perf-event programs cannot be loaded here: -EPERM without
 * the privilege, -EINVAL on a kernel without the program type.  0 if
 * they can.  The program loaded asks for flags every kernel knows.
 */
static int bpf_probe(void)
{
	struct prog p;
	int count_fd, rec_fd, fd;

	count_fd = map_create(sizeof(__u64), 1);
	if (count_fd < 0)
		return count_fd;
	rec_fd = map_create(sizeof(struct record), NR_RECORDS);
	if (rec_fd < 0) {
		close(count_fd);
		return rec_fd;
	}
	build_prog(&p, count_fd, rec_fd, BPF_F_USER_STACK);
	fd = prog_load(&p);
	if (fd >= 0)
		close(fd);
	close(rec_fd);
	close(count_fd);
	return fd < 0 ? fd : 0;
}

/*
 * Skip where BPF cannot run; fail, naming the options, on the test kernel
 * when it lacks the program type.
 */
static bool bpf_skip(struct __test_metadata *_metadata)
{
	int ret = bpf_probe();

	if (ret == -EPERM || ret == -EACCES)
		SKIP(return true, "bpf(2): %s: not privileged", strerror(-ret));
	if (ret && access(MAX_REGS_SYSCTL, F_OK))
		SKIP(return true, "bpf(2): %s: no BPF_PROG_TYPE_PERF_EVENT here",
		     strerror(-ret));
	EXPECT_EQ(0, ret) TH_LOG("BPF_PROG_TYPE_PERF_EVENT: %s; %s?\n%s",
				 strerror(-ret),
				 "CONFIG_BPF_EVENTS (needs CONFIG_FTRACE, CONFIG_UPROBE_EVENTS)",
				 verifier_log);
	return ret != 0;
}

/* What the perf event the program runs from samples itself. */
enum event_kind {
	EVENT_IP,		/* PERF_SAMPLE_IP only: no chain to reuse */
	EVENT_CHAIN_FP,		/* and a callchain, frame pointers */
	EVENT_CHAIN_SFRAME,	/* and a callchain with callchain_sframe */
};

static void bpf_sampler_open(struct __test_metadata *_metadata,
			     struct bpf_sampler *b, __u64 flags,
			     enum event_kind kind)
{
	struct perf_event_attr attr;
	__u64 zero = 0;

	memset(b, 0, sizeof(*b));
	b->count_fd = map_create(sizeof(__u64), 1);
	ASSERT_LE(0, b->count_fd) TH_LOG("BPF_MAP_CREATE: %s",
					 strerror(-b->count_fd));
	b->rec_fd = map_create(sizeof(struct record), NR_RECORDS);
	ASSERT_LE(0, b->rec_fd) TH_LOG("BPF_MAP_CREATE: %s",
				       strerror(-b->rec_fd));
	ASSERT_EQ(0, map_update(b->count_fd, 0, &zero));
	build_prog(&b->prog, b->count_fd, b->rec_fd, flags);
	ASSERT_GE(ARRAY_SIZE(b->prog.insn), b->prog.n);
	b->prog_fd = prog_load(&b->prog);
	ASSERT_LE(0, b->prog_fd) TH_LOG("BPF_PROG_LOAD: %s\n%s",
					strerror(-b->prog_fd), verifier_log);

	/* A task clock with a callchain, or without one. */
	sampler_attr(&attr, SAMPLE_PERIOD_NS, kind == EVENT_CHAIN_SFRAME);
	if (kind == EVENT_IP)
		attr.sample_type = PERF_SAMPLE_IP;
	b->event_fd = perf_open(&attr);
	ASSERT_LE(0, b->event_fd) TH_LOG("perf_event_open: %s",
					 strerror(-b->event_fd));
	ASSERT_EQ(0, ioctl(b->event_fd, PERF_EVENT_IOC_SET_BPF, b->prog_fd))
		TH_LOG("PERF_EVENT_IOC_SET_BPF: %s", strerror(errno));
}

static void bpf_sampler_close(struct bpf_sampler *b)
{
	if (b->event_fd > 0)
		close(b->event_fd);
	if (b->prog_fd > 0)
		close(b->prog_fd);
	if (b->rec_fd > 0)
		close(b->rec_fd);
	if (b->count_fd > 0)
		close(b->count_fd);
}

static __u64 bpf_count(struct __test_metadata *_metadata,
		       const struct bpf_sampler *b)
{
	__u64 n = 0;

	EXPECT_EQ(0, map_lookup(b->count_fd, 0, &n));
	return n;
}

struct tally {
	unsigned long runs;
	__u64 count;			/* program runs */
	unsigned long records;		/* records read */
	unsigned long errors;		/* the helper returned < 0 */
	unsigned long einval;		/* ... -EINVAL */
	long error;			/* the last such value */
	unsigned long odd_sizes;	/* > 0 but not whole entries */
	unsigned long leaf;		/* with the IP in the leaf's loop */
	struct chain_tally chains;	/* of the records in the leaf's loop */
	__u64 want[NR_FRAMES];
};

static bool in_leaf_loop(const struct chain *c, __u64 ip)
{
	const struct jit_fn *leaf = &c->fn[FN_LEAF];

	return ip >= leaf->start + leaf->spin_start &&
	       ip < leaf->start + leaf->spin_end;
}

static void tally_record(struct tally *t, const struct chain *c,
			 const struct record *r)
{
	const __u64 *ips;
	unsigned int nr;

	t->records++;
	if (r->ret < 0) {
		t->errors++;
		t->einval += r->ret == -EINVAL;
		t->error = r->ret;
		return;
	}
	if (r->ret % sizeof(__u64)) {
		t->odd_sizes++;
		return;
	}
	nr = r->ret / sizeof(__u64);
	ips = r->ips;
	/* The event's own chain comes with its context marker. */
	if (nr && ips[0] == (__u64)PERF_CONTEXT_USER) {
		ips++;
		nr--;
	}
	if (!nr || !in_leaf_loop(c, ips[0]))
		return;
	t->leaf++;
	t->want[0] = ips[0];
	chain_tally_add(&t->chains, NR_FRAMES, ips, nr, t->want);
}

/*
 * Run the chain under the program until the records are full or
 * SESSION_SECONDS passed, or, with @min_count, once the program ran that
 * often; then read and judge every record.  The return addresses of
 * every run must be those of the first: the records are judged after
 * the runs.
 */
static void bpf_session(struct __test_metadata *_metadata, struct chain *c,
			__u64 flags, enum event_kind kind, __u64 min_count,
			struct tally *t)
{
	struct timespec start;
	struct bpf_sampler b;
	__u64 want[NR_FRAMES];
	unsigned int i;

	memset(t, 0, sizeof(*t));
	bpf_sampler_open(_metadata, &b, flags, kind);
	ASSERT_EQ(0, ioctl(b.event_fd, PERF_EVENT_IOC_ENABLE, 0));
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (elapsed(CLOCK_MONOTONIC, &start) < SESSION_SECONDS) {
		struct timespec run_start;
		double took;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &run_start);
		run_chain(c);
		took = elapsed(CLOCK_THREAD_CPUTIME_ID, &run_start);
		expected_chain(c, want);
		if (!t->runs++)
			memcpy(t->want, want, sizeof(want));
		ASSERT_EQ(0, memcmp(want, t->want, sizeof(want)));
		spin_tune(&c->data->spin, took);
		t->count = bpf_count(_metadata, &b);
		if (t->count >= NR_RECORDS || (min_count && t->count >= min_count))
			break;
	}
	ASSERT_EQ(0, ioctl(b.event_fd, PERF_EVENT_IOC_DISABLE, 0));
	t->count = bpf_count(_metadata, &b);
	for (i = 0; i < t->count && i < NR_RECORDS; i++) {
		struct record r;

		ASSERT_EQ(0, map_lookup(b.rec_fd, i, &r));
		tally_record(t, c, &r);
	}
	bpf_sampler_close(&b);
}

static void tally_log(struct __test_metadata *_metadata, const struct tally *t)
{
	TH_LOG("%lu runs, %llu samples (program runs), %lu records read",
	       t->runs, (unsigned long long)t->count, t->records);
	TH_LOG("%lu records in the leaf loop, %lu of them exact",
	       t->leaf, t->chains.first_bad[NR_FRAMES]);
	TH_LOG("%lu helper errors (last %ld), %lu sizes not whole entries",
	       t->errors, t->error, t->odd_sizes);
	chain_tally_log(_metadata, &t->chains, NR_FRAMES, "leaf records",
			frame_name, 24);
}

/* Every record in the leaf's loop has the exact chain. */
static void expect_exact(struct __test_metadata *_metadata,
			 const struct tally *t)
{
	tally_log(_metadata, t);
	EXPECT_EQ(0UL, t->errors);
	EXPECT_EQ(0UL, t->odd_sizes);
	ASSERT_LE(MIN_SAMPLES, t->leaf) TH_LOG("too few samples in the leaf loop");
	EXPECT_EQ(t->leaf, t->chains.first_bad[NR_FRAMES]);
}

/* Tests without the system call: the program, the JIT code and its rows. */
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

TEST_F(native, the_program_assembles_with_its_jumps_on_the_exit)
{
	struct prog p;
	unsigned int i, n;

	n = build_prog(&p, 3, 4, BPF_F_USER_STACK | USER_SFRAME);
	ASSERT_GE(ARRAY_SIZE(p.insn), n);
	ASSERT_EQ(3U, p.nr_to_exit);
	for (i = 0; i < p.nr_to_exit; i++)
		ASSERT_EQ(n - 2, p.to_exit[i] + 1 + p.insn[p.to_exit[i]].off);
	ASSERT_EQ(BPF_JMP | BPF_EXIT, p.insn[n - 1].code);
	ASSERT_EQ((__s32)(BPF_F_USER_STACK | USER_SFRAME),
		  p.insn[n - 5].imm);
	TH_LOG("%u instructions", n);
}

TEST_F(native, the_chain_runs_and_each_jit_row_finds_its_return_address)
{
	struct chain *c = &self->c;
	const struct trace_fn fns[NR_FNS] = {
		{ &c->fn[FN_OUTER], &c->data->ret[FN_OUTER] },
		{ &c->fn[FN_LEAF], &c->data->ret[FN_LEAF] },
	};
	unsigned long bridge = (unsigned long)sample_bridge;
	long r;

	c->data->spin = 3;
	run_chain(c);
	ASSERT_EQ(c->fn[FN_OUTER].start + c->fn[FN_OUTER].call_ret,
		  sample_bridge_ret);
	ASSERT_TRUE(c->data->ret[FN_LEAF] > bridge &&
		    c->data->ret[FN_LEAF] < bridge + 4096);
	rows_trace(_metadata, "the chain", fns, NR_FNS, run_chain, c, &r);
}

/*
 * BPF without the new flag, on any kernel with perf-event programs: the
 * frame-pointer walk gets no chain right (the leaf keeps no frame
 * record, %rbp holds sample_bridge's data), which shows that the
 * comparison can fail.  The JIT code is not registered.
 */
FIXTURE(bpf_fp) {
	struct chain c;
};

FIXTURE_SETUP(bpf_fp)
{
	if (bpf_skip(_metadata))
		return;
	chain_setup(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(bpf_fp)
{
	chain_teardown(&self->c);
}

TEST_F_TIMEOUT(bpf_fp, get_stack_with_the_user_stack_only_walks_frame_pointers,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK, EVENT_IP, 0, &t);
	tally_log(_metadata, &t);
	EXPECT_EQ(0UL, t.errors);
	ASSERT_LE(MIN_SAMPLES, t.leaf);
	EXPECT_EQ(0UL, t.chains.first_bad[NR_FRAMES]);
}

/* The new flag: the patched kernel, under QEMU. */
FIXTURE(bpf_sframe) {
	struct chain c;
};

FIXTURE_SETUP(bpf_sframe)
{
	if (sframe_skip(_metadata) || bpf_skip(_metadata))
		return;
	chain_setup(_metadata, &self->c, true);
}

FIXTURE_TEARDOWN(bpf_sframe)
{
	chain_teardown(&self->c);
}

TEST_F_TIMEOUT(bpf_sframe, get_stack_with_user_sframe_returns_the_exact_chain,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK | USER_SFRAME,
		    EVENT_IP, 0, &t);
	expect_exact(_metadata, &t);
}

/*
 * From an event that samples its own callchain: the program gets the
 * event's chain, as in mainline, unless its flags ask for the SFrame
 * walk of the user stack, which the helper then takes itself, whatever
 * walk the event took.
 */
TEST_F_TIMEOUT(bpf_sframe, user_sframe_from_an_sframe_event_gets_the_exact_chain,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK | USER_SFRAME,
		    EVENT_CHAIN_SFRAME, 0, &t);
	expect_exact(_metadata, &t);
}

TEST_F_TIMEOUT(bpf_sframe, user_sframe_from_a_frame_pointer_event_walks_the_exact_chain,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK | USER_SFRAME,
		    EVENT_CHAIN_FP, 0, &t);
	expect_exact(_metadata, &t);
}

/* Without the flag, the event's own chain: it took the SFrame walk. */
TEST_F_TIMEOUT(bpf_sframe, user_stack_from_an_sframe_event_gets_the_events_exact_chain,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK, EVENT_CHAIN_SFRAME,
		    0, &t);
	expect_exact(_metadata, &t);
}

/* Without the flag, from an event that walked frame pointers: theirs. */
TEST_F_TIMEOUT(bpf_sframe, user_stack_from_a_frame_pointer_event_gets_frame_pointers,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK, EVENT_CHAIN_FP,
		    0, &t);
	tally_log(_metadata, &t);
	EXPECT_EQ(0UL, t.errors);
	ASSERT_LE(MIN_SAMPLES, t.leaf);
	EXPECT_EQ(0UL, t.chains.first_bad[NR_FRAMES]);
}

/*
 * kernel.sframe_user_callchains=1: a program that asks for the user
 * stack alone, as bpftrace's ustack does, gets the SFrame walk.
 */
FIXTURE(bpf_everyone) {
	struct chain c;
};

FIXTURE_SETUP(bpf_everyone)
{
	if (sframe_skip(_metadata) || bpf_skip(_metadata))
		return;
	ASSERT_EQ(0, sysctl_write(USER_CALLCHAINS_SYSCTL, "1"));
	chain_setup(_metadata, &self->c, true);
}

FIXTURE_TEARDOWN(bpf_everyone)
{
	sysctl_write(USER_CALLCHAINS_SYSCTL, "0");
	chain_teardown(&self->c);
}

TEST_F_TIMEOUT(bpf_everyone, get_stack_with_the_user_stack_only_returns_the_exact_chain,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, BPF_F_USER_STACK, EVENT_IP, 0, &t);
	expect_exact(_metadata, &t);
}

TEST_F_TIMEOUT(bpf_sframe, user_sframe_without_user_stack_is_einval_from_the_helper,
	       60)
{
	struct tally t;

	bpf_session(_metadata, &self->c, USER_SFRAME, EVENT_IP, 100, &t);
	tally_log(_metadata, &t);
	ASSERT_LE(100ULL, t.count);
	EXPECT_EQ(t.records, t.einval);
}

TEST_HARNESS_MAIN
