// SPDX-License-Identifier: GPL-2.0
/*
 * perf samples through ELF code that keeps no frame pointer: a program
 * with no JIT, and a library it dlopen()s.
 *
 * This program and elf_sample_lib.so are built with -O2
 * -fomit-frame-pointer -Wa,--gsframe.  Each C function of the chains
 * below keeps six values live across its call (every callee-saved
 * register on the stack, %rbp holding data) and an escaping array below
 * them, and the leaf spins in an asm loop between two global labels:
 *
 *   program: elf_run -> elf_f1 -> elf_f2 -> elf_f3 -> elf_leaf
 *   library: elf_run_lib -> elf_lib_outer (lib) -> elf_lib_inner (lib)
 *	      -> elf_cb (program) -> elf_leaf
 *
 * The program's frames are described by its PT_GNU_SFRAME, which
 * binfmt_elf registered at exec (the program runs itself again with
 * kernel.sframe_exec_eager at 1, so that the table is built there and
 * the first sample is exact; a test of its own checks the default, the
 * table built when a sample first needs it); the library's by its own,
 * which the test registers with SFRAME_REGISTER_ELF after finding it
 * and the executable PT_LOAD with dl_iterate_phdr().  Each function stores
 * __builtin_return_address(0): those stores, never an unwinder, give the
 * expected chain, down to the return address of elf_run (elf_run_lib)
 * into the test; frames below are not compared.
 */
#include <assert.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <sys/resource.h>

#include "sample_harness.h"
#include "elf_sample.h"

#define SAMPLE_PERIOD_NS	100000
#define MIN_SAMPLES		1000UL
#define SESSION_SECONDS		15
#define RING_PAGES		64
#define RUN_ARG			1000

/* The leaf's spin loop, between two labels of its asm. */
extern const char elf_leaf_spin_start[], elf_leaf_spin_end[];

/* Return addresses, each stored by the function named. */
enum {
	RET_LEAF, RET_F3, RET_F2, RET_F1, RET_RUN, RET_CB, RET_RUN_LIB,
	NR_RETS,
};

static unsigned long ret[NR_RETS];

/* The leaf's loop count, at least 1, and its %rbp, for the native test. */
static unsigned long leaf_spin = 1;
static unsigned long leaf_rbp;

/* Read once each: values a compiler cannot recompute after the call. */
static volatile long seed[6] = { 2, 3, 5, 7, 11, 13 };

/* Its array is larger than the red zone: a stack adjustment it needs. */
CHAIN_FN long elf_leaf(long x)
{
	long keep[20] = { x, x ^ seed[0], x * seed[1] };
	unsigned long n = leaf_spin;

	ret[RET_LEAF] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("mov %%rbp, %0" : "=r"(leaf_rbp));
	__asm__ volatile("" : : "r"(keep) : "memory");
	__asm__ volatile(".globl elf_leaf_spin_start\n"
			 "elf_leaf_spin_start:\n"
			 "1:\tdec %0\n"
			 "\tjnz 1b\n"
			 ".globl elf_leaf_spin_end\n"
			 "elf_leaf_spin_end:"
			 : "+r"(n));
	__asm__ volatile("" : : "r"(keep) : "memory");
	return keep[0] + keep[1] + keep[2] + n;
}

/*
 * The frames between: six values live across the call and an escaping
 * array of a size of each function's own.
 */
CHAIN_FN long elf_f3(long x)
{
	long a = x + seed[0], b = x ^ seed[1], c = x - seed[2];
	long d = x * seed[3], e = x + seed[4], f = x * seed[5];
	long keep[3] = { a, b, c };
	long r;

	ret[RET_F3] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = elf_leaf(a);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 2 * b + 3 * c + 5 * d + 7 * e + 11 * f + keep[2];
}

CHAIN_FN long elf_f2(long x)
{
	long a = x - seed[5], b = x * seed[4], c = x ^ seed[3];
	long d = x + seed[2], e = x - seed[1], f = x * seed[0];
	long keep[6] = { a, b, c, d };
	long r;

	ret[RET_F2] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = elf_f3(b);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + keep[3];
}

CHAIN_FN long elf_f1(long x)
{
	long a = x + seed[1], b = x ^ seed[2], c = x - seed[3];
	long d = x * seed[4], e = x + seed[5], f = x * seed[0];
	long keep[9] = { a, b, c, d, e };
	long r;

	ret[RET_F1] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = elf_f2(c);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 2 * b + 5 * c + 7 * d + 13 * e + 17 * f + keep[4];
}

/* The program's function that the library calls back. */
CHAIN_FN long elf_cb(long x)
{
	long a = x - seed[0], b = x * seed[1], c = x ^ seed[2];
	long d = x + seed[3], e = x - seed[4], f = x * seed[5];
	long keep[4] = { a, b, c, d };
	long r;

	ret[RET_CB] = (unsigned long)__builtin_return_address(0);
	__asm__ volatile("" : : "r"(keep) : "memory");
	r = elf_leaf(d);
	__asm__ volatile("" : : "r"(keep) : "memory");
	return r + a + 3 * b + 2 * c + 7 * d + 5 * e + 11 * f + keep[3];
}

CHAIN_FN long elf_run(long x)
{
	long r;

	ret[RET_RUN] = (unsigned long)__builtin_return_address(0);
	r = elf_f1(x);
	/* A use after the call: no tail call, this frame stays. */
	__asm__ volatile("" : "+r"(r));
	return r;
}

CHAIN_FN long elf_run_lib(elf_lib_entry entry, long x)
{
	long r;

	ret[RET_RUN_LIB] = (unsigned long)__builtin_return_address(0);
	r = entry(x, elf_cb);
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* The library, loaded from the directory of this program. */
struct lib {
	void *handle;
	elf_lib_entry entry;
	unsigned long *ret;		/* elf_lib_ret[] */
	struct self_sframe sf;		/* its .sframe and text */
	bool registered;
};

/* dl_iterate_phdr(): the object that holds lib->entry. */
static int lib_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lib *lib = data;
	unsigned long addr = (unsigned long)lib->entry;
	unsigned long lo = ~0UL, hi = 0;
	bool mine = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		unsigned long start = info->dlpi_addr + p->p_vaddr;

		if (p->p_type != PT_LOAD || !(p->p_flags & PF_X))
			continue;
		if (addr >= start && addr < start + p->p_memsz)
			mine = true;
		lo = start < lo ? start : lo;
		hi = start + p->p_memsz > hi ? start + p->p_memsz : hi;
	}
	if (!mine)
		return 0;
	/* As binfmt_elf does: the executable segments' whole span. */
	lib->sf.text_start = lo;
	lib->sf.text_end = hi;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_GNU_SFRAME) {
			lib->sf.sframe_start = info->dlpi_addr + p->p_vaddr;
			lib->sf.sframe_size = p->p_memsz;
		}
	}
	return 1;
}

static void lib_load(struct __test_metadata *_metadata, struct lib *lib)
{
	char exe[PATH_MAX], path[PATH_MAX + sizeof(ELF_SAMPLE_LIB) + 1];
	ssize_t n;

	memset(lib, 0, sizeof(*lib));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), ELF_SAMPLE_LIB);
	lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(NULL, lib->handle) TH_LOG("dlopen: %s", dlerror());
	lib->entry = (elf_lib_entry)dlsym(lib->handle, ELF_SAMPLE_LIB_ENTRY);
	lib->ret = dlsym(lib->handle, ELF_SAMPLE_LIB_RET);
	ASSERT_NE(NULL, lib->entry);
	ASSERT_NE(NULL, lib->ret);
	ASSERT_EQ(1, dl_iterate_phdr(lib_phdr, lib));
	ASSERT_NE(0UL, lib->sf.sframe_size)
		TH_LOG("%s has no PT_GNU_SFRAME: build it with -Wa,--gsframe",
		       path);
	ASSERT_LT(lib->sf.text_start, lib->sf.text_end);
}

static int lib_register(struct lib *lib)
{
	int ret = self_elf_register(&lib->sf);

	lib->registered = !ret;
	return ret;
}

static int lib_unregister(struct lib *lib)
{
	int ret = self_elf_unregister(&lib->sf);

	if (!ret)
		lib->registered = false;
	return ret;
}

static void lib_unload(struct lib *lib)
{
	if (lib->registered)
		lib_unregister(lib);
	if (lib->handle)
		dlclose(lib->handle);
}

/* Which chain a run goes through. */
enum chain { PROGRAM, LIBRARY };

static long run_once(enum chain which, const struct lib *lib)
{
	return which == PROGRAM ? elf_run(RUN_ARG) :
				  elf_run_lib(lib->entry, RUN_ARG);
}

/* The chain after the IP, from what the last run stored. */
#define NR_FRAMES	6
static_assert(NR_FRAMES <= CHAIN_MAX, "a chain_tally holds the chain");

static void expected_chain(enum chain which, const struct lib *lib,
			   __u64 *want)
{
	want[0] = 0;
	want[1] = ret[RET_LEAF];
	if (which == PROGRAM) {
		want[2] = ret[RET_F3];
		want[3] = ret[RET_F2];
		want[4] = ret[RET_F1];
		want[5] = ret[RET_RUN];
	} else {
		want[2] = ret[RET_CB];
		want[3] = lib->ret[ELF_LIB_INNER];
		want[4] = lib->ret[ELF_LIB_OUTER];
		want[5] = ret[RET_RUN_LIB];
	}
}

/* Every call returned where the source says it must. */
static void check_stored(struct __test_metadata *_metadata,
			 enum chain which, const struct lib *lib)
{
	if (which == PROGRAM) {
		ASSERT_TRUE(returns_into(ret[RET_LEAF], elf_f3));
		ASSERT_TRUE(returns_into(ret[RET_F3], elf_f2));
		ASSERT_TRUE(returns_into(ret[RET_F2], elf_f1));
		ASSERT_TRUE(returns_into(ret[RET_F1], elf_run));
		return;
	}
	ASSERT_TRUE(returns_into(ret[RET_LEAF], elf_cb));
	ASSERT_TRUE(ret[RET_CB] >= lib->sf.text_start &&
		    ret[RET_CB] < lib->sf.text_end);
	ASSERT_TRUE(returns_into(lib->ret[ELF_LIB_INNER], lib->entry));
	ASSERT_TRUE(returns_into(lib->ret[ELF_LIB_OUTER], elf_run_lib));
}

static const char * const frame_name[2][NR_FRAMES] = {
	[PROGRAM] = {
		"IP in elf_leaf", "elf_leaf -> elf_f3", "elf_f3 -> elf_f2",
		"elf_f2 -> elf_f1", "elf_f1 -> elf_run", "elf_run -> test",
	},
	[LIBRARY] = {
		"IP in elf_leaf", "elf_leaf -> elf_cb",
		"elf_cb -> elf_lib_inner", "elf_lib_inner -> elf_lib_outer",
		"elf_lib_outer -> elf_run_lib", "elf_run_lib -> test",
	},
};

/* One run of a chain, for leaf_sample(). */
struct run_arg {
	enum chain which;
	const struct lib *lib;
};

static void run_checked(struct __test_metadata *_metadata, void *arg,
			__u64 *want)
{
	const struct run_arg *ra = arg;

	run_once(ra->which, ra->lib);
	check_stored(_metadata, ra->which, ra->lib);
	expected_chain(ra->which, ra->lib, want);
}

/*
 * Sample runs of a chain until MIN_SAMPLES samples landed in the leaf's
 * loop, or SESSION_SECONDS passed.
 */
static void sample_session(struct __test_metadata *_metadata,
			   enum chain which, const struct lib *lib,
			   bool sframe, struct leaf_tally *t)
{
	struct run_arg ra = { .which = which, .lib = lib };
	const struct leaf_session ls = {
		.loop_start = elf_leaf_spin_start,
		.loop_end = elf_leaf_spin_end,
		.spin = &leaf_spin,
		.nr_frames = NR_FRAMES,
		.min_samples = MIN_SAMPLES,
		.seconds = SESSION_SECONDS,
		.ring_pages = RING_PAGES,
		.run = run_checked,
		.arg = &ra,
	};
	struct perf_event_attr attr;

	sampler_attr(&attr, SAMPLE_PERIOD_NS, sframe);
	leaf_sample(_metadata, &ls, &attr, t);
}

static void tally_log(struct __test_metadata *_metadata, enum chain which,
		      const struct leaf_tally *t)
{
	leaf_tally_log(_metadata, t, NR_FRAMES, frame_name[which], 30);
}

/* Every leaf sample right up to frame @bad, wrong there; NR_FRAMES: exact. */
static void expect_chains(struct __test_metadata *_metadata, enum chain which,
			  const struct leaf_tally *t, unsigned int bad)
{
	tally_log(_metadata, which, t);
	EXPECT_EQ(0UL, t->not_user);
	EXPECT_EQ(0UL, t->ring.bad_records);
	ASSERT_LE(MIN_SAMPLES, t->leaf) TH_LOG("too few samples in the leaf loop");
	EXPECT_EQ(t->leaf, t->chains.first_bad[bad]);
}

/* Tests without the system call or perf: the call paths, natively. */
FIXTURE(native) {
	struct lib lib;
};

FIXTURE_SETUP(native)
{
	lib_load(_metadata, &self->lib);
}

FIXTURE_TEARDOWN(native)
{
	lib_unload(&self->lib);
}

TEST_F(native, both_chains_run_and_every_call_returns_where_the_source_says)
{
	const struct lib *lib = &self->lib;
	struct self_sframe exe;
	long program, library;

	leaf_spin = 1000;
	program = run_once(PROGRAM, lib);
	check_stored(_metadata, PROGRAM, lib);
	ASSERT_EQ(program, run_once(PROGRAM, lib));
	library = run_once(LIBRARY, lib);
	check_stored(_metadata, LIBRARY, lib);
	ASSERT_EQ(library, run_once(LIBRARY, lib));
	TH_LOG("leaf loop at %p..%p, library text %#lx..%#lx, .sframe %#lx+%lu",
	       elf_leaf_spin_start, elf_leaf_spin_end, lib->sf.text_start,
	       lib->sf.text_end, lib->sf.sframe_start, lib->sf.sframe_size);
	/* The chains must be in the text that the tables cover. */
	ASSERT_TRUE(self_sframe_find(&exe)) TH_LOG(NO_SFRAME_SEGMENT);
	ASSERT_TRUE((unsigned long)elf_leaf_spin_start >= exe.text_start &&
		    (unsigned long)elf_leaf_spin_end <= exe.text_end);
	ASSERT_TRUE(returns_into(ret[RET_LEAF], elf_cb));
}

/*
 * The frame-pointer walk must fail here, or exact chains would prove
 * nothing: %rbp holds data in the leaf, not a frame address.
 */
TEST_F(native, the_leaf_runs_with_data_in_rbp)
{
	unsigned long sp = (unsigned long)__builtin_frame_address(0);

	run_once(PROGRAM, &self->lib);
	TH_LOG("%%rbp in the leaf: %#lx", leaf_rbp);
	ASSERT_TRUE(leaf_rbp < sp - (1UL << 20) || leaf_rbp > sp + (1UL << 20));
	run_once(LIBRARY, &self->lib);
	TH_LOG("%%rbp in the leaf, through the library: %#lx", leaf_rbp);
	ASSERT_TRUE(leaf_rbp < sp - (1UL << 20) || leaf_rbp > sp + (1UL << 20));
}

/* Sampling tests: the patched kernel, under QEMU. */
FIXTURE(elf) {
	struct lib lib;
};

FIXTURE_SETUP(elf)
{
	if (sampling_skip(_metadata))
		return;
	lib_load(_metadata, &self->lib);
}

FIXTURE_TEARDOWN(elf)
{
	lib_unload(&self->lib);
}

TEST_F_TIMEOUT(elf, the_exec_time_sframe_gives_exact_chains_through_c_without_frame_pointers,
	       60)
{
	struct leaf_tally t;

	sample_session(_metadata, PROGRAM, &self->lib, true, &t);
	expect_chains(_metadata, PROGRAM, &t, NR_FRAMES);
}

TEST_F_TIMEOUT(elf, without_the_attr_bit_the_frame_pointer_walk_gets_no_chain_right,
	       60)
{
	struct leaf_tally t;

	sample_session(_metadata, PROGRAM, &self->lib, false, &t);
	tally_log(_metadata, PROGRAM, &t);
	ASSERT_LE(MIN_SAMPLES, t.leaf);
	EXPECT_EQ(0UL, t.chains.first_bad[NR_FRAMES]);
}

TEST_F_TIMEOUT(elf, a_dlopened_library_registered_with_sframe_register_elf_gives_exact_chains,
	       60)
{
	struct leaf_tally t;

	ASSERT_EQ(0, lib_register(&self->lib));
	sample_session(_metadata, LIBRARY, &self->lib, true, &t);
	expect_chains(_metadata, LIBRARY, &t, NR_FRAMES);
}

/*
 * Without its registration the library's first frame gets a
 * frame-pointer step, which %rbp, holding data, cannot take: the chain
 * is right down to the return address into the library and wrong from
 * the next entry on.  Before registration and after unregistration.
 */
TEST_F_TIMEOUT(elf, an_unregistered_library_breaks_the_chain_at_its_frame,
	       90)
{
	struct leaf_tally t;

	sample_session(_metadata, LIBRARY, &self->lib, true, &t);
	expect_chains(_metadata, LIBRARY, &t, 3);
	ASSERT_EQ(0, lib_register(&self->lib));
	ASSERT_EQ(0, lib_unregister(&self->lib));
	sample_session(_metadata, LIBRARY, &self->lib, true, &t);
	expect_chains(_metadata, LIBRARY, &t, 3);
}

/*
 * A second process of the program, exec'd while this one runs, shares
 * this one's copy of the section, which its binfmt_elf registration made
 * for another load address: the copy's lookups are biased by the
 * distance between the two.  The child execs with no room for tables
 * (kernel.sframe_user_pinned_kb 0, no CAP_IPC_LOCK), so its section is
 * registered only if it shares the copy; then it puts the limit back, as
 * PINNED_ENV passes it, and runs the exact-chain test above on itself.
 */
#define SECOND_EXEC		"--sframe-second-exec"
#define PINNED_SYSCTL		"/proc/sys/kernel/sframe_user_pinned_kb"
#define PINNED_ENV		"SFRAME_TEST_PINNED_KB"
#define EXACT_CHAIN_TEST \
	"elf.the_exec_time_sframe_gives_exact_chains_through_c_without_frame_pointers"

/* In the child: no CAP_IPC_LOCK, even after exec. */
static void drop_ipc_lock_for_good(void)
{
	if (drop_cap_ipc_lock(true))
		_exit(30);
}

/* Print what the child wrote, as diagnostics of this test. */
static void dump_output(int fd)
{
	char line[512];
	FILE *f;

	lseek(fd, 0, SEEK_SET);
	f = fdopen(dup(fd), "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
}

/*
 * Run test @name of this program in a child exec'd with @flag first on
 * its command line, its output into @out: the child's wait status, or
 * -1.
 */
static int run_in_exec(int out, const char *flag, const char *name,
		       bool drop_ipc_lock)
{
	int status = -1;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (drop_ipc_lock)
			drop_ipc_lock_for_good();
		dup2(out, STDOUT_FILENO);
		dup2(out, STDERR_FILENO);
		execl("/proc/self/exe", "elf_sample_test", flag, "-r", name,
		      (char *)NULL);
		_exit(33);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* The child of run_in_exec() passed; what it wrote is shown if not. */
static void expect_child_passed(struct __test_metadata *_metadata,
				int status, int out)
{
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		dump_output(out);
	close(out);
	ASSERT_NE(-1, status);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F_TIMEOUT(elf, a_second_exec_of_the_program_shares_its_copy_and_gives_exact_chains,
	       120)
{
	char saved[32] = "", eager[16] = "";
	int out, status, swapped;

	out = memfd_create("second_exec_output", 0);
	ASSERT_LE(0, out);
	/* The copy is shared at exec when exec builds tables. */
	if (sysctl_read(EXEC_EAGER_SYSCTL, eager, sizeof(eager)) ||
	    sysctl_write(EXEC_EAGER_SYSCTL, "1"))
		SKIP(return, "cannot set %s (not root?)", EXEC_EAGER_SYSCTL);
	swapped = sysctl_read(PINNED_SYSCTL, saved, sizeof(saved)) ?:
		  setenv(PINNED_ENV, saved, 1) ?:
		  sysctl_write(PINNED_SYSCTL, "0\n");
	if (swapped) {
		sysctl_write(EXEC_EAGER_SYSCTL, eager);
		SKIP(return, "cannot set %s (not root?)", PINNED_SYSCTL);
	}
	status = run_in_exec(out, SECOND_EXEC, EXACT_CHAIN_TEST, true);
	/* Put the limit back before anything can end the test. */
	ASSERT_EQ(0, sysctl_write(EXEC_EAGER_SYSCTL, eager));
	ASSERT_EQ(0, sysctl_write(PINNED_SYSCTL, saved));
	expect_child_passed(_metadata, status, out);
}

/*
 * By default exec only takes the range of the program's PT_GNU_SFRAME
 * (elf_charge_test shows it charges nothing), and the first sample that
 * meets the range asks for the table: that sample, and those until the
 * table is built, take a frame-pointer step, and every sample after is
 * exact.  The test runs the program again with kernel.sframe_exec_eager
 * at 0, and the new process checks on itself: sessions in which the
 * table gets built, then a session of exact chains only.
 */
#define DEFERRED_EXEC		"--sframe-deferred-exec"
#define WARM_SESSIONS		4

TEST_F_TIMEOUT(elf, the_table_of_an_exec_is_built_when_a_sample_first_needs_it,
	       120)
{
	char eager[16] = "";
	int out, status;

	if (getenv(DEFERRED_EXEC)) {
		struct leaf_tally t;
		int warm;

		/*
		 * The worker that builds the table may be late on a loaded
		 * machine: sessions until one is exact, WARM_SESSIONS at
		 * most, then the one that must be.
		 */
		for (warm = 0; warm < WARM_SESSIONS; warm++) {
			sample_session(_metadata, PROGRAM, &self->lib, true, &t);
			tally_log(_metadata, PROGRAM, &t);
			ASSERT_LE(MIN_SAMPLES, t.leaf);
			if (t.chains.first_bad[NR_FRAMES] == t.leaf)
				break;
		}
		sample_session(_metadata, PROGRAM, &self->lib, true, &t);
		expect_chains(_metadata, PROGRAM, &t, NR_FRAMES);
		return;
	}
	out = memfd_create("deferred_exec_output", 0);
	ASSERT_LE(0, out);
	if (sysctl_read(EXEC_EAGER_SYSCTL, eager, sizeof(eager)) ||
	    sysctl_write(EXEC_EAGER_SYSCTL, "0"))
		SKIP(return, "cannot set %s (not root?)", EXEC_EAGER_SYSCTL);
	/* The child is not run again by sample_harness.h's constructor. */
	setenv(DEFERRED_EXEC, "1", 1);
	setenv(EXEC_EAGER_ENV, "done", 1);
	status = run_in_exec(out, DEFERRED_EXEC,
			     "elf.the_table_of_an_exec_is_built_when_a_sample_first_needs_it",
			     false);
	unsetenv(DEFERRED_EXEC);
	ASSERT_EQ(0, sysctl_write(EXEC_EAGER_SYSCTL, eager));
	expect_child_passed(_metadata, status, out);
}

/*
 * In the second process: its section must have been registered at exec
 * with no charge; then the test may charge as usual.
 */
static int second_exec(int argc, char **argv)
{
	const char *kb = getenv(PINNED_ENV);
	struct self_sframe me;
	int ret;

	if (!self_sframe_find(&me))
		return 40;
	ret = self_elf_register(&me);
	if (ret != -EEXIST) {
		printf("second exec: not registered at exec: SFRAME_REGISTER_ELF of its own section gave %d\n",
		       ret);
		return 41;
	}
	if (!kb || sysctl_write(PINNED_SYSCTL, kb))
		return 42;
	argv[1] = argv[0];
	return test_harness_run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], SECOND_EXEC))
		return second_exec(argc, argv);
	if (argc > 1 && !strcmp(argv[1], DEFERRED_EXEC)) {
		argv[1] = argv[0];
		return test_harness_run(argc - 1, argv + 1);
	}
	return test_harness_run(argc, argv);
}
