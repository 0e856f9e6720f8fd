// SPDX-License-Identifier: GPL-2.0
/*
 * perf samples inside a signal handler: the chain must cross the signal
 * frame into the function the signal interrupted and go on to the test,
 * with the handler on the thread's stack and on an alternate stack.
 *
 * Built with -O2 -fomit-frame-pointer -Wa,--gsframe: the C frames are
 * described by the PT_GNU_SFRAME binfmt_elf registered at exec, and
 * sig_victim, written in assembly with CFI, by the same table.  The
 * C library's sigreturn trampoline is described by nothing.
 *
 *   sig_run -> sig_outer -> sig_victim: ud2, SIGILL
 *	-> (the kernel's signal frame) -> sig_handler -> sig_leaf
 *
 * sig_victim keeps data in %rbp, so no frame-pointer step gets past it,
 * and its ud2 follows a push: the row at the interrupted PC is not the
 * row of the byte before it, which a walker that took the interrupted
 * PC for a return address would look up.  The handler steps over the
 * ud2.  The leaf spins between two global labels; its samples must show
 * the chain below exactly, where every return address was stored by the
 * function that returns to it and the interrupted PC is the ud2's:
 *
 *   sig_leaf -> sig_handler -> the trampoline (the handler's return
 *   address) -> the ud2 in sig_victim -> sig_outer -> sig_run -> test
 */
#include <assert.h>
#include <signal.h>
#include <ucontext.h>

#include "sample_harness.h"

#define SAMPLE_PERIOD_NS	100000
#define MIN_SAMPLES		1000UL
#define SESSION_SECONDS		15
#define RING_PAGES		64
#define ALT_STACK_SIZE		(256 * 1024)
#define VICTIM_RBP		0x5a5a5a5a5a5a5a5aUL

/*
 * x86-64's rt_sigreturn trampoline, mov $15, %rax; syscall: what the
 * handler must return into, for the walker to know the signal frame.
 */
static const unsigned char sigreturn_insn[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

/* Return addresses, each stored by the function that returns to it. */
enum { RET_LEAF, RET_HANDLER, RET_VICTIM, RET_OUTER, RET_RUN, NR_RETS };

unsigned long sig_ret[NR_RETS];

/* What the handler saw of the interrupted context, and where it ran. */
static unsigned long seen_rip, seen_rsp, seen_rbp, seen_sp;

static unsigned long leaf_spin = 1;

extern const unsigned char sig_victim_push[], sig_victim_fault[];
extern const char sig_leaf_spin_start[], sig_leaf_spin_end[];
void sig_victim(void);

/*
 * Saves %rbp and %rbx, stores its return address, loads data into %rbp
 * and faults on the ud2 right after the push of %rbx.
 */
__asm__(".text\n"
	".globl sig_victim\n"
	".type sig_victim, @function\n"
	".p2align 4\n"
	"sig_victim:\n"
	"\t.cfi_startproc\n"
	"\tpush %rbp\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset %rbp, 0\n"
	"\tmov 8(%rsp), %rax\n"
	"\tmov %rax, sig_ret+16(%rip)\n"		/* RET_VICTIM */
	"\tmovabs $0x5a5a5a5a5a5a5a5a, %rbp\n"
	".globl sig_victim_push\n"
	"sig_victim_push:\n"
	"\tpush %rbx\n"
	"\t.cfi_adjust_cfa_offset 8\n"
	"\t.cfi_rel_offset %rbx, 0\n"
	".globl sig_victim_fault\n"
	"sig_victim_fault:\n"
	"\tud2\n"
	"\tpop %rbx\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %rbx\n"
	"\tpop %rbp\n"
	"\t.cfi_adjust_cfa_offset -8\n"
	"\t.cfi_restore %rbp\n"
	"\tret\n"
	"\t.cfi_endproc\n"
	".size sig_victim, .-sig_victim\n");

static_assert(RET_VICTIM * sizeof(unsigned long) == 16,
	      "sig_victim stores at sig_ret+16");

/* Its array is larger than the red zone: a stack adjustment it needs. */
static CHAIN_FN long sig_leaf(long x)
{
	long keep[20] = { x, x + 1 };
	unsigned long n = leaf_spin;

	sig_ret[RET_LEAF] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	__asm__ volatile(".globl sig_leaf_spin_start\n"
			 "sig_leaf_spin_start:\n"
			 "1:\tdec %0\n"
			 "\tjnz 1b\n"
			 ".globl sig_leaf_spin_end\n"
			 "sig_leaf_spin_end:"
			 : "+r"(n));
	__asm__ volatile("" : : "r"(keep) : "memory");
	return keep[0] + keep[1] + n;
}

static CHAIN_FN void sig_handler(int sig, siginfo_t *info, void *ucontext)
{
	greg_t *gregs = ((ucontext_t *)ucontext)->uc_mcontext.gregs;
	char here[1];
	long r;

	(void)info;
	sig_ret[RET_HANDLER] = (unsigned long)__builtin_return_address(0);
	seen_rip = gregs[REG_RIP];
	seen_rsp = gregs[REG_RSP];
	seen_rbp = gregs[REG_RBP];
	__asm__ volatile("" : : "r"(here) : "memory");
	seen_sp = (unsigned long)here;
	r = sig_leaf(sig);
	__asm__ volatile("" : "+r"(r));
	/* Over the ud2, which would fault again. */
	gregs[REG_RIP] += 2;
}

static CHAIN_FN long sig_outer(long x)
{
	sig_ret[RET_OUTER] = (unsigned long)__builtin_return_address(0);
	sig_victim();
	/* A use after the call: no tail call, this frame stays. */
	__asm__ volatile("" : "+r"(x));
	return x;
}

static CHAIN_FN long sig_run(long x)
{
	long r;

	sig_ret[RET_RUN] = (unsigned long)__builtin_return_address(0);
	r = sig_outer(x);
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* Where the handler runs. */
enum handler_stack {
	THREAD_STACK,	/* below the interrupted frames */
	ALT_BELOW,	/* a mapping below the thread's stack */
	ALT_ABOVE,	/* a buffer in a frame above the interrupted ones */
};

/*
 * The handler, on the stack @where says; @alt is the alternate stack's
 * memory for ALT_BELOW and ALT_ABOVE.
 */
static int handler_install(enum handler_stack where, void *alt)
{
	struct sigaction sa = {
		.sa_sigaction = sig_handler,
		.sa_flags = SA_SIGINFO,
	};
	stack_t ss = { .ss_sp = alt, .ss_size = ALT_STACK_SIZE };

	if (where != THREAD_STACK) {
		if (sigaltstack(&ss, NULL))
			return -errno;
		sa.sa_flags |= SA_ONSTACK;
	}
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGILL, &sa, NULL) ? -errno : 0;
}

/* The chain after the IP, from what the last run stored. */
#define NR_FRAMES	7
static_assert(NR_FRAMES <= CHAIN_MAX, "a chain_tally holds the chain");

static void expected_chain(__u64 *want)
{
	want[0] = 0;
	want[1] = sig_ret[RET_LEAF];
	want[2] = sig_ret[RET_HANDLER];
	want[3] = (unsigned long)sig_victim_fault;
	want[4] = sig_ret[RET_VICTIM];
	want[5] = sig_ret[RET_OUTER];
	want[6] = sig_ret[RET_RUN];
}

static const char * const frame_name[NR_FRAMES] = {
	"IP in sig_leaf", "sig_leaf -> sig_handler",
	"sig_handler -> trampoline", "interrupted: the ud2",
	"sig_victim -> sig_outer", "sig_outer -> sig_run", "sig_run -> test",
};

/*
 * The run went as the source says: the signal interrupted the ud2 with
 * data in %rbp, the handler ran on the stack it was given (@alt), on
 * the side of the interrupted frames @where says, and returned into the
 * trampoline.
 */
static void check_run(struct __test_metadata *_metadata,
		      enum handler_stack where, const char *alt)
{
	ASSERT_EQ((unsigned long)sig_victim_fault, seen_rip);
	ASSERT_EQ(VICTIM_RBP, seen_rbp);
	ASSERT_TRUE(returns_into(sig_ret[RET_LEAF], sig_handler));
	ASSERT_TRUE(returns_into(sig_ret[RET_VICTIM], sig_outer));
	ASSERT_TRUE(returns_into(sig_ret[RET_OUTER], sig_run));
	ASSERT_EQ(0, memcmp((const void *)sig_ret[RET_HANDLER],
			    sigreturn_insn, sizeof(sigreturn_insn)));
	if (where == THREAD_STACK) {
		ASSERT_LT(seen_sp, seen_rsp);
		return;
	}
	ASSERT_TRUE(seen_sp >= (unsigned long)alt &&
		    seen_sp < (unsigned long)alt + ALT_STACK_SIZE);
	ASSERT_TRUE(where == ALT_BELOW ? seen_sp < seen_rsp :
					 seen_sp > seen_rsp);
}

FIXTURE(signal) {
	enum handler_stack where;
	char *alt;		/* the alternate stack, ALT_BELOW and ALT_ABOVE */
	void *map;		/* ALT_BELOW's mapping */
};

FIXTURE_VARIANT(signal) {
	enum handler_stack where;
};

FIXTURE_VARIANT_ADD(signal, on_the_thread_stack) {
	.where = THREAD_STACK,
};

FIXTURE_VARIANT_ADD(signal, on_an_alternate_stack_below) {
	.where = ALT_BELOW,
};

FIXTURE_VARIANT_ADD(signal, on_an_alternate_stack_above) {
	.where = ALT_ABOVE,
};

FIXTURE_SETUP(signal)
{
	self->where = variant->where;
	if (self->where != ALT_BELOW)
		return;
	self->map = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	self->alt = self->map;
	ASSERT_LT((unsigned long)self->alt, (unsigned long)&self->alt)
		TH_LOG("the mapping is not below the thread's stack");
}

FIXTURE_TEARDOWN(signal)
{
	if (self->map)
		munmap(self->map, ALT_STACK_SIZE);
}

/*
 * One run, asserted; the alternate stack above the interrupted frames
 * is this frame's buffer, which nothing else uses.
 */
static CHAIN_FN void run_checked(struct __test_metadata *_metadata,
				 FIXTURE_DATA(signal) *self)
{
	char above[ALT_STACK_SIZE];

	if (self->where == ALT_ABOVE)
		self->alt = above;
	ASSERT_EQ(0, handler_install(self->where, self->alt));
	sig_run(1);
	__asm__ volatile("" : : "r"(above) : "memory");
	check_run(_metadata, self->where, self->alt);
}

static void session_run(struct __test_metadata *_metadata, void *arg,
			__u64 *want)
{
	run_checked(_metadata, arg);
	expected_chain(want);
}

TEST_F_TIMEOUT(signal, samples_in_the_handler_go_through_the_interrupted_function,
	       60)
{
	const struct leaf_session ls = {
		.loop_start = sig_leaf_spin_start,
		.loop_end = sig_leaf_spin_end,
		.spin = &leaf_spin,
		.nr_frames = NR_FRAMES,
		.min_samples = MIN_SAMPLES,
		.seconds = SESSION_SECONDS,
		.ring_pages = RING_PAGES,
		.run = session_run,
		.arg = self,
	};
	struct perf_event_attr attr;
	struct leaf_tally t;

	if (sampling_skip(_metadata))
		return;
	/* Maps the trampoline's page, which a nofault read needs present. */
	run_checked(_metadata, self);
	sampler_attr(&attr, SAMPLE_PERIOD_NS, true);
	leaf_sample(_metadata, &ls, &attr, &t);
	leaf_tally_log(_metadata, &t, NR_FRAMES, frame_name, 28);
	EXPECT_EQ(0UL, t.not_user);
	EXPECT_EQ(0UL, t.ring.bad_records);
	ASSERT_LE(MIN_SAMPLES, t.leaf) TH_LOG("too few samples in the leaf loop");
	EXPECT_EQ(t.leaf, t.chains.first_bad[NR_FRAMES]);
}

/* Without the kernel: the run itself, as the source describes it. */
TEST_F(signal, the_handler_interrupts_the_ud2_and_returns_into_the_trampoline)
{
	leaf_spin = 1000;
	run_checked(_metadata, self);
	TH_LOG("ud2 at %p, its %%rsp %#lx, the handler's frame at %#lx, trampoline at %#lx",
	       sig_victim_fault, seen_rsp, seen_sp, sig_ret[RET_HANDLER]);
	/* The byte before the interrupted PC is the push of %rbx. */
	ASSERT_EQ((unsigned long)sig_victim_push + 1,
		  (unsigned long)sig_victim_fault);
	ASSERT_EQ(0x53, sig_victim_push[0]);
}

TEST_HARNESS_MAIN
