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
 * The uprobe PMU (type from /sys/bus/event_source/devices/uprobe/type,
 * config1 the path, config2 the file offset) needs no perf tool.  Every
 * call takes one sample, and every sample's chain must be exact down to
 * the return address of up_run into the test, each return address as
 * the function that returns to it stored it.
 */
#include <assert.h>
#include <stdint.h>

#include "sample_harness.h"

#define UPROBE_TYPE	"/sys/bus/event_source/devices/uprobe/type"
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

struct judge {
	struct tally *t;
	__u64 want[NR_FRAMES];
};

static void judge_chain(void *arg, __u64 ip, const __u64 *chain, __u64 nr)
{
	struct judge *jd = arg;

	if (ip != jd->want[0])
		return;
	jd->t->probed++;
	chain_tally_add(&jd->t->chains, NR_FRAMES, chain, nr, jd->want);
}

FIXTURE(uprobe) {
	char path[4096];
	int type;
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
}

FIXTURE_TEARDOWN(uprobe)
{
}

/* A sampling uprobe at @insn on this thread, with SFrame callchains. */
static int uprobe_open(struct __test_metadata *_metadata,
		       FIXTURE_DATA(uprobe) *self, const void *insn,
		       struct sampler *smp)
{
	struct perf_event_attr attr;
	unsigned long off = 0;

	if (file_offset(insn, self->path, sizeof(self->path), &off))
		return -ENOENT;
	TH_LOG("probe at %p: %s+%#lx", insn, self->path, off);
	sampler_attr(&attr, 1, true);
	attr.type = self->type;
	attr.config = 0;			/* not a return probe */
	attr.config1 = (uintptr_t)self->path;	/* uprobe_path */
	attr.config2 = off;			/* probe_offset */
	return sampler_open(smp, &attr, RING_PAGES);
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

	ret = uprobe_open(_metadata, self, insn, &smp);
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
	TH_LOG("%d calls, %lu samples, %lu at the probe, %lu of them exact",
	       CALLS, t.ring.samples, t.probed, t.chains.first_bad[NR_FRAMES]);
	chain_tally_log(_metadata, &t.chains, NR_FRAMES, "probe samples",
			frame_name, 20);
	EXPECT_EQ(0UL, t.ring.lost);
	EXPECT_EQ(0UL, t.ring.bad_records);
	EXPECT_EQ(0UL, t.not_user);
	ASSERT_EQ((unsigned long)CALLS, t.probed);
	EXPECT_EQ((unsigned long)CALLS, t.chains.first_bad[NR_FRAMES]);
}

TEST_F(uprobe, at_the_first_instruction_of_a_function_no_table_describes_the_caller_stays)
{
	probe_session(_metadata, self, (void (*)(void))up_bare, up_bare);
}

TEST_F(uprobe, on_a_push_past_the_entry_of_a_described_function_the_row_wins)
{
	probe_session(_metadata, self, (void (*)(void))up_mid, up_mid_push);
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

TEST_HARNESS_MAIN
