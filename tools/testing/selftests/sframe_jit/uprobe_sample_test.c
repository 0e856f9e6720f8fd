// SPDX-License-Identifier: GPL-2.0
/*
 * perf samples of a uprobe, whose chain starts at the probed
 * instruction, in a program binfmt_elf registered a PT_GNU_SFRAME for.
 *
 * Built with -O2 -fomit-frame-pointer -Wa,--gsframe.  The C frames
 * keep data in %rbp and are described by the executable's .sframe; the
 * two probed functions are written in assembly:
 *
 *   up_bare	no CFI, so no SFrame descriptor: at its first instruction,
 *		push %rbp, only the rule for a function entry finds its
 *		caller (the frame-pointer step would skip it);
 *   up_mid	with CFI: a push %rbp after a stack adjustment, which x86's
 *		uprobe heuristic takes for a function entry; the table's
 *		row must win there, and the slot at the stack pointer holds
 *		0, not the return address.
 *
 *   up_run -> up_caller -> up_bare or up_mid
 *
 * A third target, up_ret_leaf, is C like the callers, and is sampled
 * while uretprobes on it, and on up_caller, are pending: their return
 * addresses on the stack are the [uprobes] trampoline, which no table
 * describes, and the chain must still be exact, each trampoline read as
 * the return address it replaced.
 *
 * The uprobe PMU (type from /sys/bus/event_source/devices/uprobe/type,
 * config1 the path, config2 the file offset, the config bit named in
 * format/retprobe for a return probe) needs no perf tool.  Every call
 * takes one sample, and every sample's chain must be exact down to the
 * return address of up_run into the test, each return address as the
 * function that returns to it stored it, or, where a uretprobe replaced
 * it, as a call without probes stored it.
 */
#include <assert.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "sample_harness.h"

#define UPROBE_TYPE	"/sys/bus/event_source/devices/uprobe/type"
#define URETPROBE_BIT	"/sys/bus/event_source/devices/uprobe/format/retprobe"
#define CALLS		200
#define RING_PAGES	64

/* Return addresses, each stored by the function that returns to it. */
enum { RET_TARGET, RET_CALLER, RET_RUN, NR_RETS };

unsigned long up_ret[NR_RETS];

/* %rbp as up_bare found it, its caller's. */
unsigned long up_bare_rbp;

extern const char up_bare[], up_mid[], up_mid_push[];

__asm__(".text\n"
	".globl up_bare\n"
	".type up_bare, @function\n"
	".p2align 4\n"
	"up_bare:\n"
	"\tpush %rbp\n"
	"\tmov %rbp, up_bare_rbp(%rip)\n"
	"\tmov %rsp, %rbp\n"
	"\tmov 8(%rsp), %rax\n"
	"\tmov %rax, up_ret(%rip)\n"		/* RET_TARGET */
	"\tpop %rbp\n"
	"\tret\n"
	".size up_bare, .-up_bare\n"
	"\n"
	".globl up_mid\n"
	".type up_mid, @function\n"
	".p2align 4\n"
	"up_mid:\n"
	"\t.cfi_startproc\n"
	"\tsub $8, %rsp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\tmovq $0, (%rsp)\n"
	".globl up_mid_push\n"
	"up_mid_push:\n"
	"\tpush %rbp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset %rbp, 0\n"
	"\tmov 16(%rsp), %rax\n"
	"\tmov %rax, up_ret(%rip)\n"		/* RET_TARGET */
	"\tpop %rbp\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %rbp\n"
	"\tadd $8, %rsp\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size up_mid, .-up_mid\n");

static_assert(RET_TARGET == 0, "the probed functions store at up_ret");

/* Read once each: values a compiler cannot recompute after the call. */
static volatile long seed[6] = { 2, 3, 5, 7, 11, 13 };

/* %rbp as up_ret_leaf found it, its caller's. */
unsigned long up_ret_leaf_rbp;

extern const char up_ret_leaf_probe[];

/*
 * A C target with a global label inside, where a uprobe samples it
 * while its own return, and its caller's, are pending.  Noipa keeps the
 * label to one copy (CHAIN_FN).
 */
static CHAIN_FN void up_ret_leaf(void)
{
	__asm__ volatile("mov %%rbp, %0" : "=m"(up_ret_leaf_rbp));
	up_ret[RET_TARGET] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile(".globl up_ret_leaf_probe\n"
			 "up_ret_leaf_probe:\n"
			 "\tnop\n");
}

static jmp_buf up_jmp;

extern const char up_jumper_probe[];

static CHAIN_FN void up_jmp_away(void)
{
	longjmp(up_jmp, 1);
}

/*
 * A target that leaves a callee by longjmp() and is sampled after it:
 * the callee's uretprobe, if any, is still pending then.
 */
static CHAIN_FN void up_jumper(void)
{
	up_ret[RET_TARGET] = (unsigned long)__builtin_return_address(0);
	if (!setjmp(up_jmp))
		up_jmp_away();
	__asm__ volatile(".globl up_jumper_probe\n"
			 "up_jumper_probe:\n"
			 "\tnop\n");
}

/* Six values live across the call: %rbp holds one of them. */
static CHAIN_FN long up_caller(void (*fn)(void), long x)
{
	long a = x + seed[0], b = x ^ seed[1], c = x - seed[2];
	long d = x * seed[3], e = x + seed[4], f = x * seed[5];

	up_ret[RET_CALLER] = (unsigned long)__builtin_return_address(0);
	fn();
	return a + 2 * b + 3 * c + 5 * d + 7 * e + 11 * f;
}

static CHAIN_FN long up_run(void (*fn)(void), long x)
{
	long r;

	up_ret[RET_RUN] = (unsigned long)__builtin_return_address(0);
	r = up_caller(fn, x);
	/* A use after the call: no tail call, this frame stays. */
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* The file and offset that map @addr, from /proc/self/maps. */
static int file_offset(const void *addr, char *path, size_t size,
		       unsigned long *off)
{
	unsigned long a = (unsigned long)addr, lo, hi, pgoff;
	char line[4096 + 128], file[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &lo, &hi,
			   &pgoff, file) != 4 || a < lo || a >= hi)
			continue;
		snprintf(path, size, "%s", file);
		*off = a - lo + pgoff;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* The start of the [uprobes] mapping, whose first bytes are the trampoline. */
static int xol_area(unsigned long *start)
{
	char line[4096 + 128];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, " [uprobes]"))
			continue;
		if (sscanf(line, "%lx-", start) == 1)
			ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* The config bit of a return probe, from "config:N" in format/retprobe. */
static int uretprobe_bit(void)
{
	FILE *f = fopen(URETPROBE_BIT, "r");
	int bit = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "config:%d", &bit) != 1 || bit < 0 || bit > 63)
		bit = -EINVAL;
	fclose(f);
	return bit;
}

static int uprobe_type(void)
{
	FILE *f = fopen(UPROBE_TYPE, "r");
	int type = -1;

	if (!f)
		return -errno;
	if (fscanf(f, "%d", &type) != 1)
		type = -EINVAL;
	fclose(f);
	return type;
}

/* The chain after the IP: the probed function's callers. */
#define NR_FRAMES	4
static_assert(NR_FRAMES <= CHAIN_MAX, "a chain_tally holds the chain");

static const char * const frame_name[NR_FRAMES] = {
	"IP: the probe", "target -> up_caller", "up_caller -> up_run",
	"up_run -> test",
};

struct tally {
	struct ring_counts ring;
	unsigned long probed, not_user;
	struct chain_tally chains;
};

/*
 * The chain expected, from want[first]: a uretprobe samples where the
 * target returns to, so its chain starts at frame 1.
 */
struct judge {
	struct tally *t;
	unsigned int first;
	__u64 want[NR_FRAMES];
};

static void judge_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct judge *jd = arg;

	if (ip != jd->want[jd->first])
		return;
	jd->t->probed++;
	chain_tally_add(&jd->t->chains, NR_FRAMES - jd->first, chain, nr,
			jd->want + jd->first);
}

/*
 * What a session of CALLS runs must have sampled: one sample each,
 * every chain exact from frame @first.
 */
static void tally_check(struct __test_metadata *_metadata,
			const struct tally *t, unsigned int first)
{
	unsigned int n = NR_FRAMES - first;

	TH_LOG("%d calls, %lu samples, %lu at the probe, %lu of them exact",
	       CALLS, t->ring.samples, t->probed, t->chains.first_bad[n]);
	chain_tally_log(_metadata, &t->chains, n, "probe samples",
			frame_name + first, 20);
	EXPECT_EQ(0UL, t->ring.lost);
	EXPECT_EQ(0UL, t->ring.bad_records);
	EXPECT_EQ(0UL, t->not_user);
	ASSERT_EQ((unsigned long)CALLS, t->probed);
	EXPECT_EQ((unsigned long)CALLS, t->chains.first_bad[n]);
}

FIXTURE(uprobe) {
	char path[4096];
	int type;
	int ret_bit;		/* or -errno */
};

FIXTURE_SETUP(uprobe)
{
	if (sampling_skip(_metadata))
		return;
	self->type = uprobe_type();
	if (self->type == -ENOENT)
		SKIP(return, "no %s: a kernel without CONFIG_UPROBE_EVENTS",
		     UPROBE_TYPE);
	ASSERT_LE(0, self->type)
		TH_LOG("%s: %s", UPROBE_TYPE, strerror(-self->type));
	self->ret_bit = uretprobe_bit();
}

FIXTURE_TEARDOWN(uprobe)
{
}

/*
 * A uprobe at @insn on this thread, or with @ret a uretprobe on the
 * function that starts there: sampling every hit with SFrame
 * callchains, or with !@sample counting them.
 */
static int uprobe_attr(struct __test_metadata *_metadata,
		       FIXTURE_DATA(uprobe) *self, const void *insn, bool ret,
		       bool sample, struct perf_event_attr *attr)
{
	unsigned long off = 0;

	if (ret && self->ret_bit < 0)
		return self->ret_bit;
	if (file_offset(insn, self->path, sizeof(self->path), &off))
		return -ENOENT;
	TH_LOG("%s at %p: %s+%#lx", ret ? "uretprobe" : "probe", insn,
	       self->path, off);
	sampler_attr(attr, sample, sample);
	if (!sample)
		attr->sample_type = 0;
	attr->type = self->type;
	attr->config = ret ? 1ULL << self->ret_bit : 0;
	attr->config1 = (uintptr_t)self->path;	/* uprobe_path, copied */
	attr->config2 = off;			/* probe_offset */
	return 0;
}

static int uprobe_open(struct __test_metadata *_metadata,
		       FIXTURE_DATA(uprobe) *self, const void *insn, bool ret,
		       struct sampler *smp)
{
	struct perf_event_attr attr;
	int err;

	err = uprobe_attr(_metadata, self, insn, ret, true, &attr);
	return err ?: sampler_open(smp, &attr, RING_PAGES);
}

/* A counting uretprobe on @fn, enabled: its fd or -errno. */
static int uretprobe_count(struct __test_metadata *_metadata,
			   FIXTURE_DATA(uprobe) *self, const void *fn)
{
	struct perf_event_attr attr;
	int err, fd;

	err = uprobe_attr(_metadata, self, fn, true, false, &attr);
	if (err)
		return err;
	fd = perf_open(&attr);
	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * CALLS runs through @fn, probed at @insn: every one must give a sample
 * at @insn whose chain is exact.
 */
static void probe_session(struct __test_metadata *_metadata,
			  FIXTURE_DATA(uprobe) *self, void (*fn)(void),
			  const void *insn)
{
	struct tally t = {};
	struct sampler smp;
	int i, ret;

	ret = uprobe_open(_metadata, self, insn, false, &smp);
	ASSERT_EQ(0, ret) TH_LOG("uprobe event: %s", strerror(-ret));
	ASSERT_EQ(0, sampler_enable(&smp, true));
	for (i = 0; i < CALLS; i++) {
		struct judge jd = { .t = &t };

		up_run(fn, i);
		ASSERT_TRUE(returns_into(up_ret[RET_TARGET], up_caller));
		ASSERT_TRUE(returns_into(up_ret[RET_CALLER], up_run));
		jd.want[0] = (unsigned long)insn;
		jd.want[1] = up_ret[RET_TARGET];
		jd.want[2] = up_ret[RET_CALLER];
		jd.want[3] = up_ret[RET_RUN];
		sampler_drain_chains(&smp, judge_chain, &jd, &t.not_user,
				     &t.ring);
	}
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);
	tally_check(_metadata, &t, 0);
}

/*
 * A session with uretprobes pending: CALLS runs of up_run(@target),
 * with counting uretprobes on @counted.  Each run must be sampled once,
 * by a uprobe at @probe or, without one, by a uretprobe on @target
 * where @target returns, and every chain must be exact.  The return
 * addresses the uretprobes replace are those of a run without probes:
 * the calls are the same.
 */
#define URET_COUNTED	2

struct uret_case {
	void (*target)(void);		/* always uretprobed */
	const void *probe;
	const void *counted[URET_COUNTED];
	__u64 hits[URET_COUNTED];	/* of each counted uretprobe */
	bool caller_pending;		/* up_caller is among them */
};

static void uret_session(struct __test_metadata *_metadata,
			 FIXTURE_DATA(uprobe) *self,
			 const struct uret_case *c)
{
	struct judge jd = { .first = !c->probe };
	int fds[URET_COUNTED], i, ret;
	unsigned long tramp = 0;
	struct tally t = {};
	struct sampler smp;
	__u64 count;

	if (self->ret_bit < 0)
		SKIP(return, "%s: %s", URETPROBE_BIT, strerror(-self->ret_bit));
	up_run(c->target, -1);
	ASSERT_TRUE(returns_into(up_ret[RET_TARGET], up_caller));
	ASSERT_TRUE(returns_into(up_ret[RET_CALLER], up_run));
	jd.want[0] = (unsigned long)c->probe;
	jd.want[1] = up_ret[RET_TARGET];
	jd.want[2] = up_ret[RET_CALLER];

	ret = uprobe_open(_metadata, self, c->probe ?: (void *)c->target,
			  !c->probe, &smp);
	ASSERT_EQ(0, ret) TH_LOG("uprobe event: %s", strerror(-ret));
	for (i = 0; i < URET_COUNTED && c->counted[i]; i++) {
		fds[i] = uretprobe_count(_metadata, self, c->counted[i]);
		ASSERT_LE(0, fds[i]) TH_LOG("uretprobe event: %s",
					    strerror(-fds[i]));
	}
	ASSERT_EQ(0, sampler_enable(&smp, true));
	for (i = 0; i < CALLS; i++) {
		up_run(c->target, i);
		if (!tramp)
			ASSERT_EQ(0, xol_area(&tramp));
		/* The uretprobes were pending where the functions looked. */
		ASSERT_EQ(tramp, up_ret[RET_TARGET]);
		ASSERT_EQ(c->caller_pending ? tramp : jd.want[2],
			  up_ret[RET_CALLER]);
		jd.want[3] = up_ret[RET_RUN];
		jd.t = &t;
		sampler_drain_chains(&smp, judge_chain, &jd, &t.not_user,
				     &t.ring);
	}
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);
	for (i = 0; i < URET_COUNTED && c->counted[i]; i++) {
		ASSERT_EQ((ssize_t)sizeof(count),
			  read(fds[i], &count, sizeof(count)));
		EXPECT_EQ(c->hits[i], count) TH_LOG("uretprobe %d hits", i);
		close(fds[i]);
	}
	tally_check(_metadata, &t, jd.first);
}

TEST_F(uprobe, at_the_first_instruction_of_a_function_no_table_describes_the_caller_stays)
{
	probe_session(_metadata, self, (void (*)(void))up_bare, up_bare);
}

TEST_F(uprobe, on_a_push_past_the_entry_of_a_described_function_the_row_wins)
{
	probe_session(_metadata, self, (void (*)(void))up_mid, up_mid_push);
}

TEST_F(uprobe, a_pending_uretprobe_return_is_read_as_the_return_address_it_replaced)
{
	const struct uret_case c = {
		.target = up_ret_leaf, .probe = up_ret_leaf_probe,
		.counted = { up_ret_leaf }, .hits = { CALLS },
	};

	uret_session(_metadata, self, &c);
}

TEST_F(uprobe, two_pending_uretprobe_returns_are_read_in_their_order)
{
	const struct uret_case c = {
		.target = up_ret_leaf, .probe = up_ret_leaf_probe,
		.counted = { up_ret_leaf, up_caller }, .hits = { CALLS, CALLS },
		.caller_pending = true,
	};

	uret_session(_metadata, self, &c);
}

TEST_F(uprobe, at_a_uretprobe_the_returns_still_pending_are_read_as_theirs)
{
	const struct uret_case c = {
		.target = up_ret_leaf,
		.counted = { up_caller }, .hits = { CALLS },
		.caller_pending = true,
	};

	uret_session(_metadata, self, &c);
}

/*
 * up_jmp_away's return instance, which longjmp() left behind, is still
 * the newest when up_jumper is sampled: up_jumper's trampoline is not
 * its.  The kernel drops it when up_jumper returns, without a hit.
 */
TEST_F(uprobe, a_return_instance_longjmp_left_behind_is_passed_over)
{
	const struct uret_case c = {
		.target = up_jumper, .probe = up_jumper_probe,
		.counted = { up_jumper, up_jmp_away }, .hits = { CALLS, 0 },
	};

	uret_session(_metadata, self, &c);
}

/* Tests without the kernel's help. */
FIXTURE(native) {
};

FIXTURE_SETUP(native)
{
}

FIXTURE_TEARDOWN(native)
{
}

/*
 * The frame-pointer walk cannot pass up_caller, whose %rbp holds data,
 * and the probed instructions are push %rbp.
 */
TEST_F(native, the_callers_keep_data_in_rbp_and_the_probes_sit_on_push_rbp)
{
	unsigned long sp = (unsigned long)&sp;

	up_run((void (*)(void))up_bare, 1);
	TH_LOG("%%rbp in up_caller: %#lx", up_bare_rbp);
	ASSERT_TRUE(up_bare_rbp < sp - (1UL << 20) ||
		    up_bare_rbp > sp + (1UL << 20));
	ASSERT_TRUE(returns_into(up_ret[RET_TARGET], up_caller));
	ASSERT_EQ(0x55, (unsigned char)up_bare[0]);
	ASSERT_EQ(0x55, (unsigned char)up_mid_push[0]);
	up_run((void (*)(void))up_mid, 2);
	ASSERT_TRUE(returns_into(up_ret[RET_TARGET], up_caller));
}

/*
 * Nor from up_ret_leaf, which leaves %rbp to up_caller's data; its probe
 * sits on a nop past its first instruction, where no entry rule applies.
 */
TEST_F(native, the_c_target_keeps_no_frame_pointer_and_its_probe_is_inside)
{
	unsigned long sp = (unsigned long)&sp;

	up_run(up_ret_leaf, 1);
	TH_LOG("%%rbp in up_caller: %#lx", up_ret_leaf_rbp);
	ASSERT_TRUE(up_ret_leaf_rbp < sp - (1UL << 20) ||
		    up_ret_leaf_rbp > sp + (1UL << 20));
	ASSERT_TRUE(returns_into(up_ret[RET_TARGET], up_caller));
	ASSERT_EQ(0x90, (unsigned char)up_ret_leaf_probe[0]);
	ASSERT_LT((unsigned long)up_ret_leaf, (unsigned long)up_ret_leaf_probe);
	ASSERT_GT((unsigned long)up_ret_leaf + 64,
		  (unsigned long)up_ret_leaf_probe);
}

TEST_HARNESS_MAIN
