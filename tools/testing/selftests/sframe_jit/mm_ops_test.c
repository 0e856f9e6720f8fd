// SPDX-License-Identifier: GPL-2.0
/*
 * sframe_register(2) and the rest of the mm: each operation of the mm
 * tried on a JIT registry's mapping and on a registered code range (a
 * JIT's text, and text registered with an ELF .sframe section), with the
 * outcome that Documentation/userspace-api/sframe.rst gives in "The
 * registry mapping and the mm": the return value, whether the
 * registration is still there, whether the registry's contents survive,
 * what /proc/self/maps and smaps show, and VmPin.  No case may cause a
 * kernel report; the VM runner and the debug layer fail on one.
 */
#include "sframe_test.h"
#include "mm_ops.h"

#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>

/* The operations of the op fixture share a signature; few take @arg. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define ARENA_PAGES	64
#define TEXT_PAGES	8	/* the JIT's text mapping */
#define DATA_PAGES	2	/* what the I/O cases move, from page 1 on */
#define REG_FDES	256U	/* a registry of five pages */
#define REG_FRES	512U
#define PROBE_PAGE	40	/* arena page of a range registered meanwhile */

/* Seconds a case that dumps core may take on the debug kernel. */
#define CORE_TIMEOUT	120

/* argv[1] of this program re-executed by the exec cases. */
#define AFTER_EXEC	"--after-exec"

/* coredump_filter: the default, and the default with MAPPED_SHARED. */
#define FILTER_DEFAULT	"0x33"
#define FILTER_SHARED	"0x3b"

enum target_kind {
	REGISTRY,	/* a JIT registry's mapping */
	JIT_TEXT,	/* the text mapping of a range a JIT registered */
	ELF_TEXT,	/* text registered with sframe_register(2) */
};

/* What the operations act on, and what must hold after them. */
struct target {
	enum target_kind kind;
	char *arena;
	__u64 start, end;	/* the registered code range */
	char *addr;		/* the mapping the operation acts on */
	size_t size;
	int prot;		/* its protection */
	struct jit_reg reg;	/* the registry of REGISTRY and JIT_TEXT */
	__u32 fde_off, fre_off;	/* its layout, read before any operation */
	struct self_sframe me;	/* ELF_TEXT: the section and text copied */
	struct sframe_copy copy;
	long vm_pin;		/* VmPin once set up, kB */
	char core_pattern[256];	/* to restore, if a case changed it */
};

static unsigned char pat(size_t i)
{
	return (unsigned char)(i * 13 + 7);
}

/* The registry's header page is the kernel's; the rest is the JIT's. */
static size_t pattern_from(const struct target *t)
{
	return t->kind == REGISTRY ? page_size() : 0;
}

static void pattern_fill(struct target *t)
{
	size_t i;

	for (i = pattern_from(t); i < t->size; i++)
		t->addr[i] = pat(i);
}

/* Bytes of [from, to) of @p, a copy of the mapping's, that differ. */
static size_t pattern_wrong(const char *p, size_t from, size_t to)
{
	size_t i, wrong = 0;

	for (i = from; i < to; i++)
		if ((unsigned char)p[i - from] != pat(i))
			wrong++;
	return wrong;
}

static char *data_of(const struct target *t)
{
	return t->addr + page_size();
}

static size_t data_size(void)
{
	return DATA_PAGES * page_size();
}

/* The name /proc/self/maps gives the mapping at @addr; "" for none. */
static const char *maps_name(const void *addr)
{
	static struct maps_entry e;

	if (!maps_lookup((unsigned long)addr, &e))
		return "";
	return e.name;
}

static long vm_pin_kb(void)
{
	return proc_kb("/proc/self/status", "VmPin");
}

static void setup_jit(struct __test_metadata *_metadata, struct target *t)
{
	char *text;

	t->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, t->arena);
	text = t->arena + page_size();
	t->prot = PROT_READ | PROT_WRITE | PROT_EXEC;
	ASSERT_EQ(text, mmap(text, TEXT_PAGES * page_size(), t->prot,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	t->start = (unsigned long)text;
	t->end = t->start + TEXT_PAGES * page_size();
	jit_reg_new(_metadata, &t->reg, t->start, t->end, REG_FDES, REG_FRES);
	t->addr = text;
	t->size = TEXT_PAGES * page_size();
	t->fde_off = t->reg.hdr->fde_off;
	t->fre_off = t->reg.hdr->fre_off;
	if (t->kind == REGISTRY) {
		t->addr = (char *)t->reg.hdr;
		t->size = t->reg.size;
		t->prot = PROT_READ | PROT_WRITE;
	}
}

static void setup_elf(struct __test_metadata *_metadata, struct target *t)
{
	struct sframe_copy *c = &t->copy;

	t->arena = arena_reserve(ARENA_PAGES);
	ASSERT_NE(MAP_FAILED, t->arena);
	if (!self_sframe_find(&t->me))
		SKIP(return, NO_SFRAME_SEGMENT);
	if (sframe_copy_make(&t->me, c, true))
		SKIP(return, NO_SFRAME_COPY);
	if (c->text_pages_size < (DATA_PAGES + 1) * page_size())
		SKIP(return, "the text is under %d pages", DATA_PAGES + 1);
	ASSERT_EQ(0, copy_elf_register(c));
	t->start = c->text_start;
	t->end = c->text_end;
	t->addr = (char *)c->text_pages;
	t->size = c->text_pages_size;
	/* The registration does not depend on the text's protection. */
	t->prot = PROT_READ | PROT_WRITE | PROT_EXEC;
	ASSERT_EQ(0, mprotect(t->addr, t->size, t->prot));
}

static bool skipped(const struct __test_metadata *_metadata)
{
	return _metadata->exit_code == KSFT_SKIP;
}

static void setup_target(struct __test_metadata *_metadata, struct target *t,
			 enum target_kind kind)
{
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	if (sframe_skip(_metadata))
		return;
	if (kind == ELF_TEXT)
		setup_elf(_metadata, t);
	else
		setup_jit(_metadata, t);
	if (skipped(_metadata))
		return;
	pattern_fill(t);
	t->vm_pin = vm_pin_kb();
}

static void teardown_target(struct target *t)
{
	FILE *f;

	if (!t->core_pattern[0])
		return;
	f = fopen(CORE_PATTERN, "w");
	if (f) {
		fputs(t->core_pattern, f);
		fclose(f);
	}
}

/*
 * The registry is what the kernel reads for the range: a replacement
 * copies its descriptor and row areas, which hold the pattern.  Only the
 * copy is read, so the mapping may be PROT_NONE.
 */
static void expect_kernel_reads_it(struct __test_metadata *_metadata,
				   struct target *t)
{
	struct sframe_jit_header *new = NULL;
	size_t fdes = (size_t)REG_FDES * sizeof(struct sframe_jit_fde);
	size_t fres = (size_t)REG_FRES * sizeof(struct sframe_jit_fre);

	ASSERT_EQ(0, jit_replace(t->reg.fd, t->start, t->end, REG_FDES,
				 REG_FRES, &new, NULL));
	ASSERT_EQ(t->fde_off, new->fde_off);
	ASSERT_EQ(t->fre_off, new->fre_off);
	EXPECT_EQ(0U, pattern_wrong((char *)new + t->fde_off, t->fde_off,
				    t->fde_off + fdes));
	EXPECT_EQ(0U, pattern_wrong((char *)new + t->fre_off, t->fre_off,
				    t->fre_off + fres));
}

static void expect_range_registered(struct __test_metadata *_metadata,
				    const struct target *t)
{
	EXPECT_TRUE(range_is_registered(t->start, t->end));
}

static void expect_range_unregistered(struct __test_metadata *_metadata,
				      const struct target *t)
{
	EXPECT_FALSE(range_is_registered(t->start, t->end));
}

/* The operation left the registration, the mapping and its contents. */
static void expect_kept(struct __test_metadata *_metadata, struct target *t)
{
	EXPECT_TRUE(range_is_registered(t->start, t->end));
	EXPECT_EQ(t->vm_pin, vm_pin_kb());
	if (t->kind == ELF_TEXT)
		return;
	expect_registry_intact(_metadata, &t->reg);
	if (t->kind != REGISTRY)
		return;
	EXPECT_EQ(0U, pattern_wrong(data_of(t), page_size(), t->size));
	EXPECT_EQ(0, strcmp("anon_inode:[sframe_jit]", maps_name(t->addr)));
	expect_kernel_reads_it(_metadata, t);
}

/* VmPin reaches @want kB once the registry's deferred free has run. */
static long vm_pin_settles_at(long want)
{
	long kb = vm_pin_kb();
	int i;

	for (i = 0; i < 3000 && kb != want; i++) {
		usleep(10 * 1000);
		kb = vm_pin_kb();
	}
	return kb;
}

/*
 * The registry's mapping went, and with it the registration; with its
 * descriptor closed too, the charge.
 */
static void expect_gone(struct __test_metadata *_metadata, struct target *t)
{
	EXPECT_FALSE(range_is_registered(t->start, t->end));
	EXPECT_NE(0, strcmp("anon_inode:[sframe_jit]", maps_name(t->addr)));
	EXPECT_EQ(0, fdinfo_field(t->reg.fd, "registered"));
	close(t->reg.fd);
	t->reg.fd = -1;
	EXPECT_EQ(t->vm_pin - (long)(t->size >> 10),
		  vm_pin_settles_at(t->vm_pin - (long)(t->size >> 10)));
}

/*
 * The operations of the op fixture: each returns 0 or -errno, the
 * result of the operation tried on the target's mapping.
 */
static int errno_of(long ret)
{
	return ret == -1 ? -errno : 0;
}

static int op_mmap_fixed_all(struct target *t, int arg)
{
	void *p = mmap(t->addr, t->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	return p == MAP_FAILED ? -errno : 0;
}

static int op_mmap_fixed_part(struct target *t, int arg)
{
	void *p = mmap(t->addr + page_size(), page_size(), PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	return p == MAP_FAILED ? -errno : 0;
}

static int op_munmap_part(struct target *t, int arg)
{
	return munmap_err(t->addr + page_size(), page_size());
}

static int op_munmap_all(struct target *t, int arg)
{
	return munmap_err(t->addr, t->size);
}

/* Room for mremap() to move a mapping of @size into, and more. */
static void *spare_room(size_t size)
{
	return mmap(NULL, size + 16 * page_size(), PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

static int mremap_err(struct target *t, size_t new_size, int flags,
		      void *dest)
{
	void *p = mremap(t->addr, t->size, new_size, flags, dest);

	return p == MAP_FAILED ? -errno : 0;
}

static int op_mremap_grow(struct target *t, int arg)
{
	return mremap_err(t, t->size + page_size(), MREMAP_MAYMOVE, NULL);
}

static int op_mremap_shrink(struct target *t, int arg)
{
	return mremap_err(t, t->size - page_size(), 0, NULL);
}

static int op_mremap_move(struct target *t, int arg)
{
	void *dest = spare_room(t->size);

	if (dest == MAP_FAILED)
		return -EPROTO;
	return mremap_err(t, t->size, MREMAP_MAYMOVE | MREMAP_FIXED, dest);
}

static int op_mremap_dontunmap(struct target *t, int arg)
{
	return mremap_err(t, t->size, MREMAP_MAYMOVE | MREMAP_DONTUNMAP,
			  NULL);
}

/* Change the protection to @arg, then back: the second must work. */
static int op_mprotect(struct target *t, int prot)
{
	int ret = mprotect_err(t->addr, t->size, prot);

	if (!ret && mprotect_err(t->addr, t->size, t->prot))
		return -EPROTO;
	return ret;
}

static int op_madvise(struct target *t, int advice)
{
	return errno_of(madvise(t->addr, t->size, advice));
}

static int op_mlock(struct target *t, int arg)
{
	return errno_of(mlock(t->addr, t->size));
}

static int op_munlock(struct target *t, int arg)
{
	if (mlock(t->addr, t->size))
		return -EPROTO;
	return errno_of(munlock(t->addr, t->size));
}

static int op_mlockall(struct target *t, int arg)
{
	int ret = errno_of(mlockall(MCL_CURRENT | MCL_FUTURE));

	if (munlockall())
		return -EPROTO;
	return ret;
}

static int op_msync(struct target *t, int flags)
{
	return errno_of(msync(t->addr, t->size, flags));
}

static int op_remap_file_pages(struct target *t, int arg)
{
	return errno_of(syscall(__NR_remap_file_pages, t->addr, t->size, 0,
				0, 0));
}

/* Seal the mapping; a sealed one cannot be unmapped. */
static int op_mseal(struct target *t, int arg)
{
	int ret = errno_of(syscall(__NR_mseal, t->addr, t->size, 0));

	if (!ret && munmap_err(t->addr, t->size) != -EPERM)
		return -EPROTO;
	return ret;
}

/*
 * One operation, tried on each kind of target.  @reg_ret is its result
 * on a registry, @text_ret on registered text; @reg_gone says that it
 * takes the registry's mapping and registration away (otherwise both
 * stay, with the contents), and on text the registration always stays.
 * Where the result depends on a kernel option, @feature names a file
 * that exists with it; without, the operation is -EINVAL everywhere.
 */
FIXTURE(op) {
	struct target t;
};

FIXTURE_VARIANT(op) {
	int (*op)(struct target *t, int arg);
	int arg;
	int reg_ret;
	bool reg_gone;
	int text_ret;
	const char *feature;
};

FIXTURE_SETUP(op)
{
	sframe_skip(_metadata);
}

FIXTURE_TEARDOWN(op)
{
}

static void run_op(struct __test_metadata *_metadata, struct target *t,
		   const FIXTURE_VARIANT(op) *variant, enum target_kind kind)
{
	bool reg = kind == REGISTRY;
	int want = reg ? variant->reg_ret : variant->text_ret;

	setup_target(_metadata, t, kind);
	if (skipped(_metadata))
		return;
	if (variant->feature && access(variant->feature, F_OK))
		want = -EINVAL;
	EXPECT_EQ(want, variant->op(t, variant->arg));
	if (reg && variant->reg_gone)
		expect_gone(_metadata, t);
	else
		expect_kept(_metadata, t);
}

TEST_F(op, on_a_registry_has_the_documented_outcome)
{
	run_op(_metadata, &self->t, variant, REGISTRY);
}

TEST_F(op, on_jit_text_leaves_the_range_registered)
{
	run_op(_metadata, &self->t, variant, JIT_TEXT);
}

TEST_F(op, on_elf_text_leaves_the_range_registered)
{
	run_op(_metadata, &self->t, variant, ELF_TEXT);
}

FIXTURE_VARIANT_ADD(op, mmap_fixed_over_all) {
	.op = op_mmap_fixed_all,
	.reg_ret = 0,
	.reg_gone = true,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mmap_fixed_over_part) {
	.op = op_mmap_fixed_part,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, munmap_of_part) {
	.op = op_munmap_part,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, munmap_of_all) {
	.op = op_munmap_all,
	.reg_ret = 0,
	.reg_gone = true,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mremap_to_grow) {
	.op = op_mremap_grow,
	.reg_ret = -EFAULT,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mremap_to_shrink) {
	.op = op_mremap_shrink,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mremap_to_move) {
	.op = op_mremap_move,
	.reg_ret = -EBUSY,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mremap_dontunmap) {
	.op = op_mremap_dontunmap,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mprotect_exec) {
	.op = op_mprotect,
	.arg = PROT_READ | PROT_EXEC,
	.reg_ret = -EACCES,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mprotect_none) {
	.op = op_mprotect,
	.arg = PROT_NONE,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mprotect_read_only) {
	.op = op_mprotect,
	.arg = PROT_READ,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_dontneed) {
	.op = op_madvise,
	.arg = MADV_DONTNEED,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_free) {
	.op = op_madvise,
	.arg = MADV_FREE,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_remove) {
	.op = op_madvise,
	.arg = MADV_REMOVE,
	.reg_ret = -ENODEV,
	.text_ret = -EINVAL,
};

FIXTURE_VARIANT_ADD(op, madv_dontfork) {
	.op = op_madvise,
	.arg = MADV_DONTFORK,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_dofork) {
	.op = op_madvise,
	.arg = MADV_DOFORK,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_wipeonfork) {
	.op = op_madvise,
	.arg = MADV_WIPEONFORK,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_keeponfork) {
	.op = op_madvise,
	.arg = MADV_KEEPONFORK,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_cold) {
	.op = op_madvise,
	.arg = MADV_COLD,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_pageout) {
	.op = op_madvise,
	.arg = MADV_PAGEOUT,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_populate_read) {
	.op = op_madvise,
	.arg = MADV_POPULATE_READ,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_populate_write) {
	.op = op_madvise,
	.arg = MADV_POPULATE_WRITE,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, madv_mergeable) {
	.op = op_madvise,
	.arg = MADV_MERGEABLE,
	.reg_ret = 0,
	.text_ret = 0,
	.feature = KSM_SYSFS,
};

FIXTURE_VARIANT_ADD(op, madv_hugepage) {
	.op = op_madvise,
	.arg = MADV_HUGEPAGE,
	.reg_ret = 0,
	.text_ret = 0,
	.feature = THP_SYSFS,
};

FIXTURE_VARIANT_ADD(op, madv_dontdump) {
	.op = op_madvise,
	.arg = MADV_DONTDUMP,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mlock) {
	.op = op_mlock,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, munlock) {
	.op = op_munlock,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, mlockall) {
	.op = op_mlockall,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, msync_async) {
	.op = op_msync,
	.arg = MS_ASYNC,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, msync_invalidate) {
	.op = op_msync,
	.arg = MS_INVALIDATE,
	.reg_ret = 0,
	.text_ret = 0,
};

FIXTURE_VARIANT_ADD(op, msync_sync) {
	.op = op_msync,
	.arg = MS_SYNC,
	.reg_ret = -EINVAL,
	.text_ret = 0,
};

/* The registry is mapped once: another mapping of its file is EBUSY. */
FIXTURE_VARIANT_ADD(op, remap_file_pages) {
	.op = op_remap_file_pages,
	.reg_ret = -EBUSY,
	.text_ret = -EINVAL,
};

FIXTURE_VARIANT_ADD(op, mseal) {
	.op = op_mseal,
	.reg_ret = 0,
	.text_ret = 0,
};

/*
 * Operations with more to them than a return value: other processes
 * and tasks, the registry's pages reached through the kernel, a core
 * dump.  Each case runs on the three kinds of target.
 */
FIXTURE(target) {
	struct target t;
};

FIXTURE_VARIANT(target) {
	enum target_kind kind;
};

FIXTURE_VARIANT_ADD(target, registry) {
	.kind = REGISTRY,
};

FIXTURE_VARIANT_ADD(target, jit_text) {
	.kind = JIT_TEXT,
};

FIXTURE_VARIANT_ADD(target, elf_text) {
	.kind = ELF_TEXT,
};

FIXTURE_SETUP(target)
{
	setup_target(_metadata, &self->t, variant->kind);
}

FIXTURE_TEARDOWN(target)
{
	teardown_target(&self->t);
}

static bool is_registry(const struct target *t)
{
	return t->kind == REGISTRY;
}

/*
 * In a child: an ELF registration is inherited, a JIT one is not, and
 * the registry's mapping (VM_DONTCOPY) is not there; the text keeps its
 * contents.  Nothing is charged to the child.
 */
static void child_expect_inherited(const struct target *t)
{
	CHILD_EXPECT(range_is_registered(t->start, t->end) ==
		     (t->kind == ELF_TEXT));
	CHILD_EXPECT(vm_pin_kb() == 0);
	if (is_registry(t)) {
		CHILD_EXPECT(!mapping_size(t->addr));
		return;
	}
	CHILD_EXPECT(!pattern_wrong(data_of(t), page_size(),
				    page_size() + data_size()));
}

TEST_F(target, fork_gives_the_child_elf_registrations_only)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		child_expect_inherited(&self->t);
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	expect_kept(_metadata, &self->t);
}

TEST_F(target, vfork_child_that_exits_changes_nothing)
{
	pid_t pid = vfork();

	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	EXPECT_EQ(0, child_status(pid));
	expect_kept(_metadata, &self->t);
}

TEST_F(target, vfork_child_that_execs_changes_nothing)
{
	pid_t pid = vfork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	EXPECT_EQ(0, child_status(pid));
	expect_kept(_metadata, &self->t);
}

/* A CLONE_VM child: a process of its own on the same mm. */
struct vm_child {
	struct target *t;
	__u64 probe_start;
	struct sframe_jit_header *hdr;
	int ret;
};

#define CHILD_WORD	0x5a5a5a5a5a5a5a5aULL

static int vm_child_fn(void *arg)
{
	struct vm_child *c = arg;

	*(__u64 *)data_of(c->t) = CHILD_WORD;
	/* Mapped: the child's descriptors go with it, its mappings stay. */
	c->ret = jit_register(c->probe_start, c->probe_start + page_size(),
			      1, 1, &c->hdr);
	return 0;
}

TEST_F(target, clone_vm_child_shares_the_mm_and_its_exit_drops_nothing)
{
	struct target *t = &self->t;
	struct vm_child c = {
		.t = t,
		.probe_start = (unsigned long)t->arena +
			       PROBE_PAGE * page_size(),
		.ret = 1,
	};
	size_t stack_size = 64 * 1024;
	char *stack = malloc(stack_size);
	__u64 saved;
	pid_t pid;

	ASSERT_NE(NULL, stack);
	memcpy(&saved, data_of(t), sizeof(saved));
	pid = clone(vm_child_fn, stack + stack_size, CLONE_VM | SIGCHLD, &c);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, child_status(pid));
	/* What the child did is in the one mm, and stays after its exit. */
	EXPECT_EQ(0, c.ret);
	EXPECT_EQ(CHILD_WORD, *(__u64 *)data_of(t));
	EXPECT_TRUE(range_is_registered(c.probe_start,
					c.probe_start + page_size()));
	ASSERT_EQ(0, munmap(c.hdr, c.hdr->map_size));
	EXPECT_FALSE(range_is_registered(c.probe_start,
					 c.probe_start + page_size()));
	memcpy(data_of(t), &saved, sizeof(saved));
	expect_kept(_metadata, t);
	free(stack);
}

static void *exec_thread(void *arg)
{
	char **argv = arg;

	execv("/proc/self/exe", argv);
	return (void *)(long)errno;
}

/*
 * In a child, exec this program from a second thread; the new image
 * checks that it has no registration and no registry (after_exec()).
 */
static int exec_from_a_thread(const struct target *t)
{
	char s[32], e[32], a[32];
	char *argv[6] = { "mm_ops_test", AFTER_EXEC };
	pthread_t thread;
	void *ret;
	pid_t pid;

	snprintf(s, sizeof(s), "%#llx", (unsigned long long)t->start);
	snprintf(e, sizeof(e), "%#llx", (unsigned long long)t->end);
	snprintf(a, sizeof(a), "%p", (void *)t->addr);
	argv[2] = s;
	argv[3] = e;
	argv[4] = a;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (pthread_create(&thread, NULL, exec_thread, argv))
			_exit(10);
		pthread_join(thread, &ret);
		_exit(11);
	}
	return child_status(pid);
}

static int after_exec(const char *start, const char *end, const char *addr)
{
	__u64 s = strtoull(start, NULL, 0), e = strtoull(end, NULL, 0);
	void *a = (void *)strtoul(addr, NULL, 0);
	int ret;

	ret = jit_register(s, e, 1, 1, NULL);
	if (ret) {
		fprintf(stderr, "# after exec: [%s, %s): %s\n", start, end,
			strerror(-ret));
		return 1;
	}
	if (!strcmp(maps_name(a), "anon_inode:[sframe_jit]")) {
		fprintf(stderr, "# after exec: a registry at %s\n", addr);
		return 2;
	}
	return 0;
}

TEST_F(target, exec_from_a_thread_not_the_leader_drops_the_registration)
{
	EXPECT_EQ(0, exec_from_a_thread(&self->t));
	expect_kept(_metadata, &self->t);
}

/* Protection @prot for a moment, to see what reaches the pages. */
static void set_prot(struct __test_metadata *_metadata, struct target *t,
		     int prot)
{
	ASSERT_EQ(0, mprotect_err(t->addr, t->size, prot));
}

#define NEW_WORD	0x0123456789abcdefULL

static ssize_t vm_rw(pid_t pid, void *addr, void *buf, size_t len,
		     bool write)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = addr, .iov_len = len };
	ssize_t ret;

	if (write)
		ret = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	else
		ret = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return ret < 0 ? -errno : ret;
}

TEST_F(target, process_vm_readv_and_writev_reach_it_as_mapped)
{
	struct target *t = &self->t;
	char *buf = malloc(data_size());
	__u64 word = NEW_WORD, saved;
	ssize_t len = data_size();

	ASSERT_NE(NULL, buf);
	if (vm_rw(getpid(), data_of(t), buf, len, false) == -ENOSYS)
		SKIP(return, "no process_vm_readv (CONFIG_CROSS_MEMORY_ATTACH)");
	EXPECT_EQ(len, vm_rw(getpid(), data_of(t), buf, len, false));
	EXPECT_EQ(0U, pattern_wrong(buf, page_size(), page_size() + len));
	memcpy(&saved, data_of(t), sizeof(saved));
	EXPECT_EQ(8, vm_rw(getpid(), data_of(t), &word, 8, true));
	EXPECT_EQ(NEW_WORD, *(__u64 *)data_of(t));
	/* No FOLL_FORCE here: the protection rules. */
	set_prot(_metadata, t, PROT_READ);
	EXPECT_EQ(-EFAULT, vm_rw(getpid(), data_of(t), &saved, 8, true));
	set_prot(_metadata, t, PROT_NONE);
	EXPECT_EQ(-EFAULT, vm_rw(getpid(), data_of(t), buf, 8, false));
	set_prot(_metadata, t, t->prot);
	memcpy(data_of(t), &saved, sizeof(saved));
	expect_kept(_metadata, t);
	free(buf);
}

static ssize_t mem_rw(int fd, void *addr, void *buf, size_t len, bool write)
{
	ssize_t ret;

	if (write)
		ret = pwrite(fd, buf, len, (off_t)(unsigned long)addr);
	else
		ret = pread(fd, buf, len, (off_t)(unsigned long)addr);
	return ret < 0 ? -errno : ret;
}

TEST_F(target, proc_pid_mem_reads_and_writes_it_with_force)
{
	struct target *t = &self->t;
	char *buf = malloc(data_size());
	__u64 word = NEW_WORD, saved;
	ssize_t len = data_size();
	int fd = open("/proc/self/mem", O_RDWR);

	ASSERT_NE(NULL, buf);
	ASSERT_LE(0, fd);
	EXPECT_EQ(len, mem_rw(fd, data_of(t), buf, len, false));
	EXPECT_EQ(0U, pattern_wrong(buf, page_size(), page_size() + len));
	memcpy(&saved, data_of(t), sizeof(saved));
	EXPECT_EQ(8, mem_rw(fd, data_of(t), &word, 8, true));
	EXPECT_EQ(NEW_WORD, *(__u64 *)data_of(t));
	memcpy(data_of(t), &saved, sizeof(saved));
	/* FOLL_FORCE reads through PROT_NONE ... */
	set_prot(_metadata, t, PROT_NONE);
	memset(buf, 0, len);
	EXPECT_EQ(len, mem_rw(fd, data_of(t), buf, len, false));
	/* ... and writes a read-only private mapping's copy, not a shared one. */
	set_prot(_metadata, t, PROT_READ);
	EXPECT_EQ(is_registry(t) ? -EIO : 8,
		  mem_rw(fd, data_of(t), &saved, 8, true));
	set_prot(_metadata, t, t->prot);
	EXPECT_EQ(0U, pattern_wrong(buf, page_size(), page_size() + len));
	expect_kept(_metadata, t);
	close(fd);
	free(buf);
}

TEST_F(target, ptrace_peekdata_and_pokedata_reach_a_tracee_copy)
{
	struct target *t = &self->t;
	__u64 want;
	long word;
	int status;
	pid_t pid;

	memcpy(&want, data_of(t), sizeof(want));
	/* A registry reaches a child only so, its pages shared. */
	if (is_registry(t))
		ASSERT_EQ(0, madvise(t->addr, t->size, MADV_DOFORK));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0);
		raise(SIGSTOP);
		CHILD_EXPECT(*(__u64 *)data_of(t) == NEW_WORD);
		/* Only ELF registrations are inherited. */
		CHILD_EXPECT(range_is_registered(t->start, t->end) ==
			     (t->kind == ELF_TEXT));
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSTOPPED(status));
	errno = 0;
	word = ptrace(PTRACE_PEEKDATA, pid, data_of(t), NULL);
	EXPECT_EQ(0, errno);
	EXPECT_EQ((long)want, word);
	EXPECT_EQ(0, ptrace(PTRACE_POKEDATA, pid, data_of(t),
			    (void *)(long)NEW_WORD));
	EXPECT_EQ(0, ptrace(PTRACE_CONT, pid, NULL, NULL));
	EXPECT_EQ(0, child_status(pid));
	/*
	 * Text was the tracee's own copy; a registry's pages are shared,
	 * the write shows here, and is undone for expect_kept().
	 */
	EXPECT_EQ(is_registry(t) ? (__u64)NEW_WORD : want,
		  *(__u64 *)data_of(t));
	memcpy(data_of(t), &want, sizeof(want));
	expect_kept(_metadata, t);
}

TEST_F(target, userfaultfd_registration_takes_only_anonymous_memory)
{
	struct target *t = &self->t;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)t->addr, .len = t->size },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int uffd, ret;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 && errno == ENOSYS)
		SKIP(return, "no userfaultfd (CONFIG_USERFAULTFD)");
	ASSERT_LE(0, uffd);
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	ret = ioctl(uffd, UFFDIO_REGISTER, &reg) ? -errno : 0;
	EXPECT_EQ(is_registry(t) ? -EINVAL : 0, ret);
	if (!ret)
		EXPECT_EQ(0, ioctl(uffd, UFFDIO_UNREGISTER, &reg.range));
	close(uffd);
	expect_kept(_metadata, t);
}

/* A file of the writable scratch directory, which 9p opens O_DIRECT. */
static int scratch_file(char *path, size_t size, const char *name)
{
	const char *dir = getenv("SCRATCH");

	if (!dir)
		return -ENOENT;
	snprintf(path, size, "%s/mm_ops_test.%d.%s", dir, getpid(), name);
	return 0;
}

TEST_F(target, o_direct_reads_into_it_and_writes_from_it)
{
	struct target *t = &self->t;
	size_t len = data_size();
	char *buf = malloc(len), *saved = malloc(len);
	char path[512];
	size_t i;
	int fd, dfd;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, saved);
	if (scratch_file(path, sizeof(path), "direct"))
		SKIP(return, "no $SCRATCH: no file system here takes O_DIRECT");
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	dfd = open(path, O_RDWR | O_DIRECT);
	unlink(path);
	if (dfd < 0)
		SKIP(return, "%s: O_DIRECT: %s", path, strerror(errno));
	for (i = 0; i < len; i++)
		buf[i] = ~pat(page_size() + i);
	ASSERT_EQ((ssize_t)len, pwrite(fd, buf, len, 0));
	memcpy(saved, data_of(t), len);

	/* The file into the mapping: its pages pinned for writing. */
	EXPECT_EQ((ssize_t)len, pread(dfd, data_of(t), len, 0));
	EXPECT_EQ(0, memcmp(data_of(t), buf, len));
	/* Back out of the mapping into the file. */
	memcpy(data_of(t), saved, len);
	EXPECT_EQ((ssize_t)len, pwrite(dfd, data_of(t), len, 0));
	EXPECT_EQ((ssize_t)len, pread(fd, buf, len, 0));
	EXPECT_EQ(0U, pattern_wrong(buf, page_size(), page_size() + len));
	close(dfd);
	close(fd);
	expect_kept(_metadata, t);
	free(saved);
	free(buf);
}

/*
 * vmsplice() puts references to the pages in a pipe: they outlive the
 * mapping, registry or not, and carry its contents out through splice().
 */
TEST_F(target, vmspliced_pages_outlive_its_munmap_and_splice_out)
{
	struct target *t = &self->t;
	struct iovec iov = { .iov_base = data_of(t), .iov_len = data_size() };
	ssize_t len = data_size();
	char *buf = malloc(len);
	int pipefd[2], memfd;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, pipe(pipefd));
	memfd = memfd_create("mm_ops_test", 0);
	ASSERT_LE(0, memfd);
	EXPECT_EQ(len, vmsplice(pipefd[1], &iov, 1, 0));
	ASSERT_EQ(0, munmap(t->addr, t->size));
	if (is_registry(t))
		expect_gone(_metadata, t);
	else
		expect_range_registered(_metadata, t);
	EXPECT_EQ(len, splice(pipefd[0], NULL, memfd, NULL, len, 0));
	EXPECT_EQ(len, pread(memfd, buf, len, 0));
	EXPECT_EQ(0U, pattern_wrong(buf, page_size(), page_size() + len));
	close(memfd);
	close(pipefd[0]);
	close(pipefd[1]);
	free(buf);
}

static int uring_register(int ring, unsigned int op, void *arg,
			  unsigned int nr)
{
	return errno_of(syscall(__NR_io_uring_register, ring, op, arg, nr));
}

/*
 * io_uring pins a fixed buffer's pages for as long as it is registered:
 * beyond the registry's munmap, which still unregisters the range.
 */
TEST_F(target, io_uring_fixed_buffer_pins_its_pages_past_munmap)
{
	struct target *t = &self->t;
	struct io_uring_params params = { 0 };
	struct iovec iov = { .iov_base = t->addr, .iov_len = t->size };
	int ring, ret;

	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0 && errno == ENOSYS)
		SKIP(return, "no io_uring (CONFIG_IO_URING)");
	ASSERT_LE(0, ring);
	ret = uring_register(ring, IORING_REGISTER_BUFFERS, &iov, 1);
	EXPECT_EQ(0, ret);
	/* io_uring charges what it pins to VmPin on its own. */
	if (!ret)
		EXPECT_EQ(t->vm_pin + (long)(t->size >> 10), vm_pin_kb());
	ASSERT_EQ(0, munmap(t->addr, t->size));
	if (is_registry(t))
		expect_range_unregistered(_metadata, t);
	else
		expect_range_registered(_metadata, t);
	if (!ret)
		EXPECT_EQ(0, uring_register(ring, IORING_UNREGISTER_BUFFERS,
					    NULL, 0));
	close(ring);
	/* The descriptor holds the registry, and its charge, too. */
	close(t->reg.fd);
	if (is_registry(t))
		EXPECT_EQ(t->vm_pin - (long)(t->size >> 10),
			  vm_pin_settles_at(t->vm_pin - (long)(t->size >> 10)));
}

/* Point core dumps at @dir/mm_ops_test.core.PID, saving the old pattern. */
static int core_pattern_set(struct target *t, const char *dir)
{
	char pattern[512];
	FILE *f;

	f = fopen(CORE_PATTERN, "r");
	if (!f)
		return -errno;
	if (!fgets(t->core_pattern, sizeof(t->core_pattern), f))
		t->core_pattern[0] = '\0';
	fclose(f);
	snprintf(pattern, sizeof(pattern), "%s/mm_ops_test.core.%%p", dir);
	f = fopen(CORE_PATTERN, "w");
	if (!f)
		return -errno;
	if (fputs(pattern, f) < 0 || fclose(f))
		return -EIO;
	return 0;
}

/* In a child: dump core with coredump_filter @filter. */
static void crash(const char *filter)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	FILE *f = fopen("/proc/self/coredump_filter", "w");

	CHILD_EXPECT(f && fputs(filter, f) >= 0 && !fclose(f));
	CHILD_EXPECT(!setrlimit(RLIMIT_CORE, &rl));
	signal(SIGABRT, SIG_DFL);
	abort();
}

/*
 * The core's PT_LOAD for [addr, addr + size): the bytes it holds, read
 * into @buf (size bytes); -1 if there is no such segment.
 */
static ssize_t core_segment(const char *core, const void *addr, size_t size,
			    char *buf)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	ssize_t ret = -1;
	int fd, i;

	fd = open(core, O_RDONLY);
	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_type != ET_CORE)
		goto out;
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + i * sizeof(ph)) !=
		    sizeof(ph))
			goto out;
		if (ph.p_type != PT_LOAD || ph.p_vaddr != (unsigned long)addr)
			continue;
		if (ph.p_memsz != size || ph.p_filesz > size)
			goto out;
		ret = pread(fd, buf, ph.p_filesz, ph.p_offset);
		if (ret != (ssize_t)ph.p_filesz)
			ret = -1;
		break;
	}
out:
	close(fd);
	return ret;
}

/*
 * Crash a child with @filter and look for the target in its core: the
 * bytes of its PT_LOAD, or -1 without one.  @buf takes t->size bytes.
 */
static ssize_t core_holds(struct __test_metadata *_metadata, struct target *t,
			  const char *filter, char *buf)
{
	/*
	 * tmpfs: the VM's scratch directory is 9p, where the debug kernel
	 * takes the better part of a minute to write a core.
	 */
	const char *dir = "/tmp";
	char core[512];
	int status, ret;
	ssize_t len;
	pid_t pid;

	ret = core_pattern_set(t, dir);
	if (ret == -ENOENT)
		SKIP(return -1, "no %s (CONFIG_COREDUMP)", CORE_PATTERN);
	ASSERT_EQ(0, ret);
	/* The crashing child has the registry's pages only with this. */
	if (is_registry(t))
		ASSERT_EQ(0, madvise(t->addr, t->size, MADV_DOFORK));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		crash(filter);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status) && WCOREDUMP(status))
		TH_LOG("wait status %#x", status);
	snprintf(core, sizeof(core), "%s/mm_ops_test.core.%d", dir, pid);
	len = core_segment(core, t->addr, t->size, buf);
	unlink(core);
	return len;
}

/* The core holds all of the target, its pattern where there is one. */
static void expect_core_has_it(struct __test_metadata *_metadata,
			       struct target *t, ssize_t len, const char *buf)
{
	EXPECT_EQ((ssize_t)t->size, len);
	if (len == (ssize_t)t->size)
		EXPECT_EQ(0U, pattern_wrong(buf + pattern_from(t),
					    pattern_from(t), t->size));
}

/*
 * A registry is a shared mapping of a file with a link, which the
 * default coredump_filter leaves out: its segment is there, empty.
 */
TEST_F_TIMEOUT(target, core_dump_with_the_default_filter_omits_only_a_registry, CORE_TIMEOUT)
{
	struct target *t = &self->t;
	char *buf = malloc(t->size);
	ssize_t len;

	ASSERT_NE(NULL, buf);
	len = core_holds(_metadata, t, FILTER_DEFAULT, buf);
	if (skipped(_metadata))
		return;
	if (is_registry(t))
		EXPECT_EQ(0, len);
	if (!is_registry(t))
		expect_core_has_it(_metadata, t, len, buf);
	expect_kept(_metadata, t);
	free(buf);
}

TEST_F_TIMEOUT(target, core_dump_with_shared_mappings_in_the_filter_has_it_all, CORE_TIMEOUT)
{
	struct target *t = &self->t;
	char *buf = malloc(t->size);
	ssize_t len;

	ASSERT_NE(NULL, buf);
	len = core_holds(_metadata, t, FILTER_SHARED, buf);
	if (skipped(_metadata))
		return;
	expect_core_has_it(_metadata, t, len, buf);
	expect_kept(_metadata, t);
	free(buf);
}

TEST_F_TIMEOUT(target, core_dump_leaves_out_what_madv_dontdump_marks, CORE_TIMEOUT)
{
	struct target *t = &self->t;
	char *buf = malloc(t->size);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, madvise(t->addr, t->size, MADV_DONTDUMP));
	EXPECT_EQ(0, core_holds(_metadata, t, FILTER_SHARED, buf));
	free(buf);
}

/* The smaps field @field of the mapping that starts at @addr, or NULL. */
static char *smaps_field(const void *addr, const char *field, char *buf,
			 size_t size)
{
	size_t len = strlen(field);
	bool in = false;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return NULL;
	buf[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start == (unsigned long)addr;
			continue;
		}
		if (in && !strncmp(line, field, len) && line[len] == ':') {
			snprintf(buf, size, "%s", line + len + 1);
			break;
		}
	}
	fclose(f);
	return buf[0] ? buf : NULL;
}

static long smaps_kb(const void *addr, const char *field)
{
	char buf[128];

	if (!smaps_field(addr, field, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

/* Does the smaps VmFlags of the mapping at @addr hold @flag? */
static bool smaps_flag(const void *addr, const char *flag)
{
	char buf[256], *tok, *save;

	if (!smaps_field(addr, "VmFlags", buf, sizeof(buf)))
		return false;
	for (tok = strtok_r(buf, "\n ", &save); tok;
	     tok = strtok_r(NULL, "\n ", &save))
		if (!strcmp(tok, flag))
			return true;
	return false;
}

TEST_F(target, maps_and_smaps_describe_it)
{
	struct target *t = &self->t;
	bool reg = is_registry(t);
	struct maps_entry e;

	/* Every page is touched: the fill wrote all but the header. */
	(void)__atomic_load_n(t->addr, __ATOMIC_RELAXED);
	ASSERT_TRUE(maps_lookup((unsigned long)t->addr, &e));
	EXPECT_EQ((unsigned long)t->addr, e.start);
	EXPECT_STREQ(reg ? "rw-s" : "rwxp", e.perms);
	EXPECT_STREQ(reg ? "anon_inode:[sframe_jit]" : "", e.name);
	EXPECT_EQ((long)(t->size >> 10), smaps_kb(t->addr, "Size"));
	EXPECT_EQ((long)(t->size >> 10), smaps_kb(t->addr, "Rss"));
	EXPECT_EQ(reg, smaps_flag(t->addr, "sh"));
	EXPECT_EQ(reg, smaps_flag(t->addr, "de"));
	EXPECT_FALSE(reg && smaps_flag(t->addr, "me"));
	/* A registry is never inherited: VM_DONTCOPY. */
	EXPECT_EQ(reg, smaps_flag(t->addr, "dc"));
}

/* What only a registry's mapping has to show. */
FIXTURE(registry) {
	struct target t;
};

FIXTURE_SETUP(registry)
{
	setup_target(_metadata, &self->t, REGISTRY);
}

FIXTURE_TEARDOWN(registry)
{
}

static int map_files_open(const struct target *t)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)t->addr, (unsigned long)t->addr + t->size);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

TEST_F(registry, cannot_be_opened_through_map_files)
{
	EXPECT_EQ(-ENXIO, map_files_open(&self->t));
	expect_kept(_metadata, &self->t);
}

static long vm_lck_kb(void)
{
	return proc_kb("/proc/self/status", "VmLck");
}

TEST_F(registry, is_never_counted_as_mlocked)
{
	struct target *t = &self->t;
	struct jit_reg later = { 0 };
	long locked = vm_lck_kb();

	ASSERT_EQ(0, mlock(t->addr, t->size));
	EXPECT_EQ(locked, vm_lck_kb());
	EXPECT_FALSE(smaps_flag(t->addr, "lo"));
	ASSERT_EQ(0, munlock(t->addr, t->size));
	/* Nor is one mapped after mlockall(MCL_FUTURE). */
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE));
	locked = vm_lck_kb();
	jit_reg_new(_metadata, &later, (unsigned long)t->arena,
		    (unsigned long)t->arena + page_size(), 1, 1);
	EXPECT_EQ(locked, vm_lck_kb());
	EXPECT_FALSE(smaps_flag(later.hdr, "lo"));
	ASSERT_EQ(0, munlockall());
	t->vm_pin += later.size >> 10;
	expect_kept(_metadata, t);
}

TEST_F(registry, madv_dodump_cannot_undo_madv_dontdump)
{
	struct target *t = &self->t;

	ASSERT_EQ(0, madvise(t->addr, t->size, MADV_DONTDUMP));
	EXPECT_TRUE(smaps_flag(t->addr, "dd"));
	EXPECT_EQ(-EINVAL, op_madvise(t, MADV_DODUMP));
	EXPECT_TRUE(smaps_flag(t->addr, "dd"));
	expect_kept(_metadata, t);
}

/*
 * MADV_DOFORK clears VM_DONTCOPY: the child gets the mapping, the same
 * pages, but neither the registration nor a charge.
 */
TEST_F(registry, madv_dofork_after_madv_dontfork_hands_its_pages_to_a_child)
{
	struct target *t = &self->t;
	pid_t pid;

	ASSERT_EQ(0, madvise(t->addr, t->size, MADV_DONTFORK));
	ASSERT_EQ(0, madvise(t->addr, t->size, MADV_DOFORK));
	EXPECT_FALSE(smaps_flag(t->addr, "dc"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(!strcmp(maps_name(t->addr),
				     "anon_inode:[sframe_jit]"));
		CHILD_EXPECT(!pattern_wrong(data_of(t), page_size(),
					    page_size() + data_size()));
		CHILD_EXPECT(!range_is_registered(t->start, t->end));
		CHILD_EXPECT(vm_pin_kb() == 0);
		/* Shared: the parent sees this. */
		data_of(t)[0] = ~pat(page_size());
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ((char)~pat(page_size()), data_of(t)[0]);
	data_of(t)[0] = pat(page_size());
	expect_kept(_metadata, t);
}

TEST_F(registry, prot_none_is_still_read_by_the_kernel)
{
	struct target *t = &self->t;

	ASSERT_EQ(0, mprotect(t->addr, t->size, PROT_NONE));
	expect_kernel_reads_it(_metadata, t);
}

/*
 * A sealed registry cannot be unmapped, which would unregister it, but
 * it can be replaced: it stays mapped, no longer read, and the range
 * is the new registry's until that one is unmapped.
 */
TEST_F(registry, sealed_can_be_replaced_and_stays_mapped)
{
	struct target *t = &self->t;
	struct sframe_jit_header *new;

	ASSERT_EQ(0, op_mseal(t, 0));
	EXPECT_EQ(-EPERM, mprotect_err(t->addr, t->size, PROT_READ));
	EXPECT_EQ(-EPERM, munmap_err(t->addr, t->size));
	ASSERT_EQ(0, jit_replace(t->reg.fd, t->start, t->end, REG_FDES,
				 REG_FRES, &new, NULL));
	EXPECT_EQ(0, fdinfo_field(t->reg.fd, "registered"));
	EXPECT_EQ(t->size, mapping_size(t->addr));
	EXPECT_EQ(0U, pattern_wrong(data_of(t), page_size(), t->size));
	EXPECT_TRUE(range_is_registered(t->start, t->end));
	ASSERT_EQ(0, munmap(new, new->map_size));
	EXPECT_EQ(0, jit_register(t->start, t->end, 1, 1, NULL));
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], AFTER_EXEC))
		return after_exec(argv[2], argv[3], argv[4]);
	return test_harness_run(argc, argv);
}
