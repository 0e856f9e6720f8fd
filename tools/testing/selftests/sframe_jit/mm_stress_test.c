// SPDX-License-Identifier: GPL-2.0
/*
 * Random sequences of the operations of the mm that mm_ops_test.c tries
 * one at a time, and of sframe_jit_open(2)'s own (open, replace, close,
 * and appending to a registry), on JIT registries and their
 * code ranges: from several threads, from forked children (which may
 * exec from a thread, or dump core), from vfork()ed and CLONE_VM
 * children, while perf samples every worker with the SFrame unwinder and
 * a registry over the C library's text gives it something to read.
 *
 * Every operation must return what sframe.rst says ("The registry
 * mapping and the mm").  At the end each range is registered exactly when
 * its worker believes it is, and the process's [sframe_jit] mappings,
 * its VmPin and the registries of the whole system (the children's
 * included) are what they were.  The kernel's checkers (lockdep, KASAN,
 * UBSAN, kmemleak on the debug kernel) judge the rest from the console.
 *
 * The seed is printed; "--seed N" or SFRAME_MM_STRESS_SEED=N replays each
 * worker's sequence of operations (not how the workers interleave).
 * SFRAME_MM_STRESS_SECONDS sets the duration (default 20).
 */
#define _GNU_SOURCE		/* mremap(), dl_iterate_phdr(), RTLD_DEFAULT */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include <linux/io_uring.h>
#include <linux/userfaultfd.h>

#include "mm_ops.h"
#include "sample_harness.h"

/* The operations share a signature; not all use the worker. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define SECONDS_ENV	"SFRAME_MM_STRESS_SECONDS"
#define SEED_ENV	"SFRAME_MM_STRESS_SEED"
#define DEFAULT_SECONDS	20
#define MAX_SECONDS	3600

#define NR_WORKERS	3
#define SLOTS		8	/* code ranges of one worker */
#define TEXT_PAGES	4	/* a slot's code range and text mapping */
#define CHILD_OPS	16	/* operations a child makes before it ends */
#define MAX_LOGGED	20
#define SAMPLE_NS	100000	/* 10 kHz of task clock per worker */
#define CLONE_STACK	(256 * 1024)

static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static bool stopping;
static unsigned long nr_failures;
static bool in_child;		/* the calling process is a worker's child */
static char *arena;

static bool should_stop(void)
{
	return __atomic_load_n(&stopping, __ATOMIC_ACQUIRE);
}

/* @got must be @want; a failure, logged, otherwise. */
static bool check(const char *what, long want, long got)
{
	if (got == want)
		return true;
	if (__atomic_fetch_add(&nr_failures, 1, __ATOMIC_RELAXED) < MAX_LOGGED)
		fprintf(stderr, "# %d: %s: %ld, not %ld\n", getpid(), what,
			got, want);
	return false;
}

static int err_of(long ret)
{
	return ret == -1 ? -errno : 0;
}

enum slot_state {
	SLOT_FREE,	/* range not registered, no registry mapped */
	SLOT_LIVE,	/* registered, its registry mapped */
	SLOT_SHARED,	/* in a child: the parent's registry, MADV_DOFORK */
	SLOT_SEALED,	/* mseal()ed in a child: left alone until it exits */
};

struct slot {
	__u64 start, end;
	struct sframe_jit_header *h;
	size_t size;
	__u32 nfde, nfre;
	__u32 published;	/* descriptors appended */
	int fd;			/* a live registry's file, or -1 if closed */
	enum slot_state state;
	bool dontfork;		/* VM_DONTCOPY: till MADV_DOFORK */
	bool text;		/* a text mapping covers the range */
};

struct worker {
	pthread_t thread;
	__u64 seed;
	struct slot slot[SLOTS];
	unsigned long ops;
	unsigned long children;
	char *stack;		/* of its CLONE_VM children */
};

/* ---- the registry of a slot ---------------------------------------- */

static void slot_forget(struct slot *s)
{
	s->h = NULL;
	s->size = 0;
	s->published = 0;
	s->state = SLOT_FREE;
	s->dontfork = false;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static bool mapped(const struct slot *s)
{
	return s->state == SLOT_LIVE || s->state == SLOT_SHARED;
}

/* The published descriptors are those appended, in place. */
static void slot_check_contents(struct slot *s)
{
	__u32 i, bad = 0;

	for (i = 0; i < s->published; i++)
		if (jit_fde(s->h, i)->func_start != s->start + 16 * i)
			bad++;
	check("published descriptors intact", 0, bad);
	check("fde_count", s->published,
	      __atomic_load_n(&s->h->fde_count, __ATOMIC_ACQUIRE));
}

static void op_register(struct worker *w, struct slot *s)
{
	int ret;

	if (s->state != SLOT_FREE)
		return;
	s->nfde = 1 + rnd(&w->seed) % 64;
	s->nfre = 2 * s->nfde + rnd(&w->seed) % 64;
	ret = jit_register_fd(s->start, s->end, s->nfde, s->nfre, &s->h,
			      &s->fd);
	if (!check("sframe_jit_open", 0, ret))
		return;
	s->size = s->h->map_size;
	s->state = SLOT_LIVE;
	s->dontfork = true;
}

/* Append one function the way a JIT does: rows, descriptor, count. */
static void op_append(struct worker *w, struct slot *s)
{
	struct sframe_jit_fde *fde;
	__u32 i = s->published;

	/* Not the parent's pages: its worker counts what it appended. */
	if (s->state != SLOT_LIVE || i >= s->nfde || 2 * i + 2 > s->nfre)
		return;
	*jit_fre(s->h, 2 * i) = (struct sframe_jit_fre) {
		.cfa_off = 8, .ra_off = -8, .cfa_base = SFRAME_JIT_CFA_SP,
	};
	*jit_fre(s->h, 2 * i + 1) = (struct sframe_jit_fre) {
		.start_off = 1, .cfa_off = 16, .ra_off = -8, .fp_off = -16,
		.flags = SFRAME_JIT_FRE_FP_SAVED,
	};
	fde = jit_fde(s->h, i);
	*fde = (struct sframe_jit_fde) {
		.func_start = s->start + 16 * i, .func_size = 16,
		.fre_start = 2 * i, .fre_count = 2,
	};
	__atomic_store_n(&s->h->fde_count, i + 1, __ATOMIC_RELEASE);
	s->published++;
}

static void op_replace(struct worker *w, struct slot *s)
{
	struct sframe_jit_header *h = NULL;
	__u32 nfde = s->nfde + rnd(&w->seed) % 8;
	__u32 nfre = s->nfre + rnd(&w->seed) % 16;
	int ret, fd = -1;

	/* REPLACE names the old registry by its descriptor. */
	if (s->state != SLOT_LIVE || s->fd < 0)
		return;
	ret = jit_replace(s->fd, s->start, s->end, nfde, nfre, &h, &fd);
	if (!check("SFRAME_JIT_REPLACE", 0, ret))
		return;
	check("fde_count carried over", s->published, h->fde_count);
	check("munmap of the replaced registry", 0, munmap_err(s->h, s->size));
	close(s->fd);
	s->fd = fd;
	s->h = h;
	s->size = h->map_size;
	s->nfde = nfde;
	s->nfre = nfre;
	s->dontfork = true;
}

/* The mapping holds a registry whose descriptor is closed. */
static void op_close(struct worker *w, struct slot *s)
{
	if (s->state != SLOT_LIVE || s->fd < 0)
		return;
	check("registered, in fdinfo", 1, fdinfo_field(s->fd, "registered"));
	check("close", 0, err_of(close(s->fd)));
	s->fd = -1;
	check("registered with its descriptor closed", true,
	      range_is_registered(s->start, s->end));
}

/*
 * The registry's mapping went: so did the registration, if it had one
 * (a child's mapping of its parent's registry had none).
 */
static void slot_unmapped(struct slot *s)
{
	check("range unregistered with its registry", false,
	      range_is_registered(s->start, s->end));
	slot_forget(s);
}

static void op_munmap(struct worker *w, struct slot *s)
{
	size_t pg = page_size();

	if (!mapped(s))
		return;
	if (rnd(&w->seed) & 1) {
		check("munmap of part", -EINVAL,
		      munmap_err((char *)s->h + pg, pg));
		return;
	}
	if (check("munmap", 0, munmap_err(s->h, s->size)))
		slot_unmapped(s);
}

static void op_mmap_fixed(struct worker *w, struct slot *s)
{
	bool all = rnd(&w->seed) & 1;
	size_t len = all ? s->size : page_size();
	void *p;

	if (!mapped(s))
		return;
	p = mmap(s->h, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0);
	if (!all) {
		check("mmap MAP_FIXED over part", -EINVAL,
		      p == MAP_FAILED ? -errno : 0);
		return;
	}
	if (!check("mmap MAP_FIXED over all", 0, p == MAP_FAILED ? -errno : 0))
		return;
	check("munmap of what replaced it", 0, munmap_err(p, len));
	slot_unmapped(s);
}

static void op_mremap(struct worker *w, struct slot *s)
{
	size_t pg = page_size();
	void *p = MAP_FAILED;
	int want = -EINVAL;

	if (!mapped(s))
		return;
	switch (rnd(&w->seed) % 4) {
	case 0:
		p = mremap(s->h, s->size, s->size + pg, MREMAP_MAYMOVE);
		want = -EFAULT;
		break;
	case 1:
		p = mremap(s->h, s->size, s->size - pg, 0);
		break;
	case 2:
		p = mremap(s->h, s->size, s->size,
			   MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
		break;
	default:
		/*
		 * A move onto itself.  A move elsewhere would unmap its
		 * destination first, which another worker may just have
		 * been given for a registry of its own.
		 */
		p = mremap(s->h, s->size, s->size,
			   MREMAP_MAYMOVE | MREMAP_FIXED, s->h);
		break;
	}
	check("mremap", want, p == MAP_FAILED ? -errno : 0);
}

static void op_mprotect(struct worker *w, struct slot *s)
{
	static const int prots[] = { PROT_NONE, PROT_READ, PROT_EXEC };
	int prot = prots[rnd(&w->seed) % 3];

	if (!mapped(s))
		return;
	check("mprotect", prot == PROT_EXEC ? -EACCES : 0,
	      mprotect_err(s->h, s->size, prot));
	check("mprotect back to read-write", 0,
	      mprotect_err(s->h, s->size, PROT_READ | PROT_WRITE));
}

struct advice {
	int advice;
	int ret;
	const char *feature;	/* EINVAL without it */
};

static const struct advice advices[] = {
	{ .advice = MADV_DONTNEED, .ret = 0 },
	{ .advice = MADV_FREE, .ret = -EINVAL },
	{ .advice = MADV_REMOVE, .ret = -ENODEV },
	{ .advice = MADV_DONTFORK, .ret = 0 },
	{ .advice = MADV_DOFORK, .ret = 0 },
	{ .advice = MADV_WIPEONFORK, .ret = -EINVAL },
	{ .advice = MADV_KEEPONFORK, .ret = 0 },
	{ .advice = MADV_COLD, .ret = 0 },
	{ .advice = MADV_PAGEOUT, .ret = 0 },
	{ .advice = MADV_POPULATE_READ, .ret = 0 },
	{ .advice = MADV_POPULATE_WRITE, .ret = 0 },
	{ .advice = MADV_MERGEABLE, .ret = 0, .feature = KSM_SYSFS },
	{ .advice = MADV_HUGEPAGE, .ret = 0, .feature = THP_SYSFS },
	{ .advice = MADV_DONTDUMP, .ret = 0 },
};

static void op_madvise(struct worker *w, struct slot *s)
{
	const struct advice *a;
	int want;

	if (!mapped(s))
		return;
	a = &advices[rnd(&w->seed) % ARRAY_SIZE(advices)];
	want = a->feature && access(a->feature, F_OK) ? -EINVAL : a->ret;
	if (!check("madvise", want, err_of(madvise(s->h, s->size, a->advice))))
		return;
	if (a->advice == MADV_DONTFORK)
		s->dontfork = true;
	if (a->advice == MADV_DOFORK)
		s->dontfork = false;
}

static void op_lock_sync(struct worker *w, struct slot *s)
{
	if (!mapped(s))
		return;
	switch (rnd(&w->seed) % 4) {
	case 0:
		check("mlock", 0, err_of(mlock(s->h, s->size)));
		check("munlock", 0, err_of(munlock(s->h, s->size)));
		break;
	case 1:
		check("msync MS_ASYNC", 0,
		      err_of(msync(s->h, s->size, MS_ASYNC)));
		break;
	case 2:
		check("msync MS_SYNC", -EINVAL,
		      err_of(msync(s->h, s->size, MS_SYNC)));
		break;
	default:
		/* Mapped already; in a child, not its registry at all. */
		if (check("remap_file_pages",
			  s->state == SLOT_SHARED ? -EACCES : -EBUSY,
			  err_of(syscall(__NR_remap_file_pages, s->h, s->size,
					 0, 0, 0))))
			break;
		/* A kernel that let it through may have unmapped it: resync. */
		if (mapping_size(s->h) != s->size)
			slot_forget(s);
		break;
	}
}

/* The registry's pages reached through the kernel. */
static void op_access(struct worker *w, struct slot *s)
{
	__u64 val = rnd(&w->seed), got = 0, *word;
	struct iovec local = { &val, sizeof(val) };
	struct iovec remote;
	int fd;

	if (!mapped(s))
		return;
	/* A word of the slack past the rows, which nothing else reads. */
	word = (__u64 *)((char *)s->h + s->h->fre_off) + 2 * s->nfre;
	if ((char *)(word + 1) > (char *)s->h + s->size)
		return;
	remote.iov_base = word;
	remote.iov_len = sizeof(val);
	if (rnd(&w->seed) & 1) {
		if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) < 0 &&
		    errno == ENOSYS)
			return;
		check("process_vm_writev", val, *word);
		local.iov_base = &got;
		check("process_vm_readv", sizeof(got),
		      process_vm_readv(getpid(), &local, 1, &remote, 1, 0));
		check("process_vm_readv's word", val, got);
		return;
	}
	fd = open("/proc/self/mem", O_RDWR);
	check("pwrite of /proc/self/mem", sizeof(val),
	      pwrite(fd, &val, sizeof(val), (off_t)(unsigned long)word));
	check("pread of /proc/self/mem", sizeof(got),
	      pread(fd, &got, sizeof(got), (off_t)(unsigned long)word));
	check("the word through /proc/self/mem", val, got);
	close(fd);
}

/* vmsplice the registry's pages into a pipe; maybe unmap it meanwhile. */
static void op_vmsplice(struct worker *w, struct slot *s)
{
	struct iovec iov;
	char buf[4096];
	int p[2];

	if (!mapped(s) || pipe(p))
		return;
	iov.iov_base = s->h;
	iov.iov_len = page_size();
	check("vmsplice", page_size(), vmsplice(p[1], &iov, 1, 0));
	if ((rnd(&w->seed) & 1) && check("munmap", 0,
					 munmap_err(s->h, s->size)))
		slot_unmapped(s);
	check("the page out of the pipe", sizeof(buf),
	      read(p[0], buf, sizeof(buf)));
	check("its magic", SFRAME_JIT_MAGIC, *(__u32 *)buf);
	close(p[0]);
	close(p[1]);
}

/* A fixed io_uring buffer over the registry; maybe unmapped meanwhile. */
static void op_io_uring(struct worker *w, struct slot *s)
{
	struct io_uring_params params = { 0 };
	struct iovec iov;
	int ring;

	if (!mapped(s))
		return;
	ring = syscall(__NR_io_uring_setup, 2, &params);
	if (ring < 0)
		return;
	iov.iov_base = s->h;
	iov.iov_len = s->size;
	check("IORING_REGISTER_BUFFERS", 0,
	      err_of(syscall(__NR_io_uring_register, ring,
			     IORING_REGISTER_BUFFERS, &iov, 1)));
	if ((rnd(&w->seed) & 1) && check("munmap", 0,
					 munmap_err(s->h, s->size)))
		slot_unmapped(s);
	check("IORING_UNREGISTER_BUFFERS", 0,
	      err_of(syscall(__NR_io_uring_register, ring,
			     IORING_UNREGISTER_BUFFERS, NULL, 0)));
	close(ring);
}

static void op_userfaultfd(struct worker *w, struct slot *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int uffd;

	if (!mapped(s))
		return;
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		return;
	reg.range.start = (unsigned long)s->h;
	reg.range.len = s->size;
	if (!ioctl(uffd, UFFDIO_API, &api))
		check("UFFDIO_REGISTER", -EINVAL,
		      err_of(ioctl(uffd, UFFDIO_REGISTER, &reg)));
	close(uffd);
}

/* The code range's own mapping comes and goes; the registration stays. */
static void op_text(struct worker *w, struct slot *s)
{
	size_t len = s->end - s->start;
	void *text = (void *)(unsigned long)s->start;

	if (!s->text) {
		s->text = mmap(text, len, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			       0) == text;
		return;
	}
	switch (rnd(&w->seed) % 3) {
	case 0:
		check("mprotect of the text", 0,
		      mprotect_err(text, len, PROT_READ | PROT_EXEC));
		break;
	case 1:
		check("MADV_DONTNEED of the text", 0,
		      err_of(madvise(text, len, MADV_DONTNEED)));
		break;
	default:
		/* Back to the reservation the arena made. */
		check("mmap over the text", 0,
		      mmap(text, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			   MAP_NORESERVE | MAP_FIXED, -1, 0) == text ? 0 : -1);
		s->text = false;
		break;
	}
	if (s->state == SLOT_LIVE)
		check("range registered whatever its text",
		      true, range_is_registered(s->start, s->end));
}

static void op_contents(struct worker *w, struct slot *s)
{
	if (mapped(s))
		slot_check_contents(s);
}

/* A walk of every mapping's smaps while others change. */
static void op_smaps(struct worker *w, struct slot *s)
{
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		;
	fclose(f);
}

static void op_mseal(struct worker *w, struct slot *s)
{
	/* Sealed for good: only a child, which exits soon, seals. */
	if (!in_child || !mapped(s))
		return;
	if (!check("mseal", 0, err_of(syscall(__NR_mseal, s->h, s->size, 0))))
		return;
	check("munmap of a sealed registry", -EPERM,
	      munmap_err(s->h, s->size));
	s->state = SLOT_SEALED;
}

typedef void (*slot_op)(struct worker *w, struct slot *s);

static const slot_op slot_ops[] = {
	op_register, op_register, op_append, op_append, op_replace,
	op_close, op_munmap, op_mmap_fixed, op_mremap, op_mprotect,
	op_madvise, op_madvise, op_lock_sync, op_access, op_vmsplice,
	op_io_uring, op_userfaultfd, op_text, op_contents, op_smaps,
	op_mseal,
};

static void slot_step(struct worker *w)
{
	struct slot *s = &w->slot[rnd(&w->seed) % SLOTS];

	slot_ops[rnd(&w->seed) % ARRAY_SIZE(slot_ops)](w, s);
	w->ops++;
}

/* ---- other processes and tasks ------------------------------------- */

#define CORE_DIR	"/tmp"

static bool core_dumps;		/* core_pattern points at CORE_DIR */

/*
 * A forked child's view of the slots: what fork gave it.  No JIT
 * registration comes along, and no registry mapping (VM_DONTCOPY)
 * unless MADV_DOFORK cleared that: then the child shares the parent's
 * pages, unregistered.  The inherited descriptors are closed here,
 * which leaves the parent's registries as they were.
 */
static void child_adopt(struct worker *w)
{
	unsigned int i;

	in_child = true;
	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &w->slot[i];

		if (s->state != SLOT_LIVE)
			continue;
		if (s->dontfork) {
			check("no mapping of the registry in the child", 0,
			      mapping_size(s->h));
			slot_forget(s);
			continue;
		}
		if (s->fd >= 0)
			close(s->fd);
		s->fd = -1;
		s->state = SLOT_SHARED;
		check("the parent's range unregistered in the child", false,
		      range_is_registered(s->start, s->end));
	}
}

static void *exec_thread(void *arg)
{
	execl("/bin/true", "true", (char *)NULL);
	return NULL;
}

static void child_end(struct worker *w, unsigned long failures)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	pthread_t thread;
	FILE *f;

	if (nr_failures != failures)
		_exit(1);
	switch (rnd(&w->seed) % 8) {
	case 0:
		execl("/bin/true", "true", (char *)NULL);
		_exit(2);
	case 1:
		/* exec from a thread that is not the leader */
		if (!pthread_create(&thread, NULL, exec_thread, NULL))
			pthread_join(thread, NULL);
		_exit(3);
	case 2:
		if (!core_dumps)
			break;
		/* A core with the registries in it: MAPPED_SHARED. */
		f = fopen("/proc/self/coredump_filter", "w");
		if (f) {
			fputs("0x3b", f);
			fclose(f);
		}
		setrlimit(RLIMIT_CORE, &rl);
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	_exit(0);
}

static void child_run(struct worker *w)
{
	unsigned long failures = nr_failures;
	int i;

	child_adopt(w);
	for (i = 0; i < CHILD_OPS; i++)
		slot_step(w);
	child_end(w, failures);
}

static void reap(pid_t pid, bool may_dump)
{
	char core[64];
	int status;

	if (waitpid(pid, &status, 0) != pid) {
		check("waitpid", 0, -errno);
		return;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && may_dump) {
		snprintf(core, sizeof(core), CORE_DIR "/mm_stress.core.%d", pid);
		check("core dumped", true, WCOREDUMP(status) && !unlink(core));
		return;
	}
	check("child's exit status", 0, WIFEXITED(status) ?
	      WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

static void proc_fork(struct worker *w)
{
	pid_t pid;

	fflush(stderr);
	pid = fork();
	if (pid == 0)
		child_run(w);
	if (check("fork", true, pid > 0))
		reap(pid, true);
}

static void proc_vfork(struct worker *w)
{
	bool exec = rnd(&w->seed) & 1;
	pid_t pid = vfork();

	if (pid == 0) {
		if (exec)
			execl("/bin/true", "true", (char *)NULL);
		_exit(0);
	}
	if (check("vfork", true, pid > 0))
		reap(pid, false);
}

/* A process of its own on this mm, working the slots while we wait. */
static int clone_vm_fn(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < CHILD_OPS; i++)
		slot_step(w);
	return 0;
}

/*
 * With CLONE_FILES too: the slots' descriptors must be the same files in
 * both.  mm_ops_test tries CLONE_VM alone.
 */
static void proc_clone_vm(struct worker *w)
{
	pid_t pid;

	pid = clone(clone_vm_fn, w->stack + CLONE_STACK,
		    CLONE_VM | CLONE_FILES | SIGCHLD, w);
	if (check("clone(CLONE_VM)", true, pid > 0))
		reap(pid, false);
}

/*
 * PEEKDATA and POKEDATA on a registry in a stopped child: one the parent
 * handed down with MADV_DOFORK, so the pages, and the write, are shared.
 */
static void proc_ptrace(struct worker *w)
{
	struct slot *s = &w->slot[rnd(&w->seed) % SLOTS];
	__u32 *magic;
	int status;
	long word;
	pid_t pid;

	if (s->state != SLOT_LIVE || s->dontfork)
		return;
	magic = &s->h->magic;
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(4);
		raise(SIGSTOP);
		_exit(__atomic_load_n(magic, __ATOMIC_RELAXED) ==
		      (__u32)~SFRAME_JIT_MAGIC ? 0 : 5);
	}
	if (!check("fork", true, pid > 0))
		return;
	if (waitpid(pid, &status, 0) == pid && WIFSTOPPED(status)) {
		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, pid, magic, NULL);
		check("PTRACE_PEEKDATA", SFRAME_JIT_MAGIC, (__u32)word);
		word = (word & ~0xffffffffL) | (__u32)~SFRAME_JIT_MAGIC;
		check("PTRACE_POKEDATA", 0,
		      err_of(ptrace(PTRACE_POKEDATA, pid, magic, word)));
		ptrace(PTRACE_CONT, pid, NULL, NULL);
	}
	reap(pid, false);
	check("POKEDATA in the shared page", (__u32)~SFRAME_JIT_MAGIC,
	      __atomic_load_n(magic, __ATOMIC_RELAXED));
	__atomic_store_n(magic, SFRAME_JIT_MAGIC, __ATOMIC_RELAXED);
}

static void proc_step(struct worker *w)
{
	switch (rnd(&w->seed) % 4) {
	case 0:
		proc_fork(w);
		break;
	case 1:
		proc_vfork(w);
		break;
	case 2:
		proc_clone_vm(w);
		break;
	default:
		proc_ptrace(w);
		break;
	}
	w->children++;
}

/* ---- the workers --------------------------------------------------- */

static bool sampling;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct perf_event_attr attr;
	struct sampler smp;
	bool on = false;

	/* Samples are taken, and the stack walked, whether read or not. */
	if (sampling) {
		sampler_attr(&attr, SAMPLE_NS, true);
		on = !sampler_open(&smp, &attr, 8) && !sampler_enable(&smp, true);
	}
	while (!should_stop()) {
		if (rnd(&w->seed) % 32 == 0)
			proc_step(w);
		else
			slot_step(w);
	}
	if (on)
		sampler_close(&smp);
	return NULL;
}

/* Each range is registered exactly when its worker believes it is. */
static void worker_finish(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < SLOTS; i++) {
		struct slot *s = &w->slot[i];

		check("registration at the end",
		      s->state == SLOT_LIVE ? -EEXIST : 0,
		      jit_register(s->start, s->end, 1, 1, NULL));
		if (mapped(s))
			check("munmap at the end", 0, munmap_err(s->h, s->size));
		slot_forget(s);
	}
}

/* ---- the run ------------------------------------------------------- */

static __u64 seed_arg;		/* from --seed, 0 if none */

static int stress_seconds(void)
{
	const char *env = getenv(SECONDS_ENV);
	int s = env ? atoi(env) : DEFAULT_SECONDS;

	return s > 0 && s <= MAX_SECONDS ? s : -1;
}

static __u64 stress_seed(void)
{
	const char *env = getenv(SEED_ENV);
	struct timespec ts;

	if (seed_arg)
		return seed_arg;
	if (env && strtoull(env, NULL, 0))
		return strtoull(env, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ((__u64)ts.tv_sec << 20 ^ ts.tv_nsec ^ getpid()) | 1;
}

/* Lines of @path holding @needle, -1 if it cannot be read. */
static long count_lines(const char *path, const char *needle)
{
	char *line = NULL;
	size_t len = 0;
	long n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (getline(&line, &len, f) > 0)
		if (strstr(line, needle))
			n++;
	free(line);
	fclose(f);
	return n;
}

static long nr_mappings(void)
{
	return count_lines("/proc/self/maps", "[sframe_jit]");
}

/* Registries in the system: vmalloc areas sframe_register.c made. */
static long nr_registries(void)
{
	return count_lines("/proc/vmallocinfo", " sframe_");
}

static long vm_pin(void)
{
	return proc_kb("/proc/self/status", "VmPin");
}

/* @read() once deferred frees (RCU, a work item) gave it @want. */
static long settles_at(long (*read)(void), long want)
{
	long got = read();
	int i;

	for (i = 0; i < 3000 && got != want; i++) {
		usleep(10 * 1000);
		got = read();
	}
	return got;
}

struct census {
	long mappings, vm_pin, registries;
};

static void census(struct census *c)
{
	c->mappings = nr_mappings();
	c->vm_pin = vm_pin();
	c->registries = nr_registries();
}

/*
 * A registry over the C library's text, one descriptor for all of it:
 * most samples of the workers land there, so the unwinder reads a
 * registry all along (its rows are wrong for most of that code, which
 * costs nothing but the stacks).
 */
static struct sframe_jit_header *libc_registry(__u64 *start, __u64 *end)
{
	struct sframe_jit_header *h = NULL;
	struct maps_entry e;
	unsigned long addr;

	addr = (unsigned long)dlsym(RTLD_DEFAULT, "getpid");
	if (!addr || !maps_lookup(addr, &e) || e.perms[2] != 'x')
		return NULL;
	*start = e.start;
	*end = e.end;
	if (jit_register_counted(*start, *end, 1, 1, &h))
		return NULL;
	*jit_fre(h, 0) = (struct sframe_jit_fre) {
		.cfa_off = 8, .ra_off = -8, .cfa_base = SFRAME_JIT_CFA_SP,
	};
	*jit_fde(h, 0) = (struct sframe_jit_fde) {
		.func_start = *start, .func_size = *end - *start,
		.fre_count = 1,
	};
	__atomic_store_n(&h->fde_count, 1, __ATOMIC_RELEASE);
	return h;
}

static bool core_pattern_swap(char *old, size_t size, const char *new)
{
	FILE *f = fopen(CORE_PATTERN, "r");

	if (!f)
		return false;
	if (old && !fgets(old, size, f))
		old[0] = '\0';
	fclose(f);
	f = fopen(CORE_PATTERN, "w");
	if (!f)
		return false;
	return fputs(new, f) >= 0 && !fclose(f);
}

FIXTURE(mm_stress) {
	struct worker w[NR_WORKERS];
	struct sframe_jit_header *libc;
	__u64 libc_start, libc_end;
	char core_pattern[256];
};

FIXTURE_SETUP(mm_stress)
{
	unsigned int i, k;

	if (sframe_skip(_metadata))
		return;
	arena = arena_reserve(NR_WORKERS * SLOTS * TEXT_PAGES);
	ASSERT_NE(MAP_FAILED, arena);
	for (i = 0; i < NR_WORKERS; i++) {
		struct worker *w = &self->w[i];

		memset(w, 0, sizeof(*w));
		w->stack = malloc(CLONE_STACK);
		ASSERT_NE(NULL, w->stack);
		for (k = 0; k < SLOTS; k++) {
			struct slot *s = &w->slot[k];

			s->start = (unsigned long)arena +
				   (i * SLOTS + k) * TEXT_PAGES * page_size();
			s->end = s->start + TEXT_PAGES * page_size();
			s->fd = -1;
		}
	}
	self->libc = libc_registry(&self->libc_start, &self->libc_end);
	sampling = !sampler_probe();
	core_dumps = core_pattern_swap(self->core_pattern,
				       sizeof(self->core_pattern),
				       CORE_DIR "/mm_stress.core.%p");
}

FIXTURE_TEARDOWN(mm_stress)
{
	if (core_dumps)
		core_pattern_swap(NULL, 0, self->core_pattern);
}

TEST_F_TIMEOUT(mm_stress, leaves_no_trace_and_no_report, MAX_SECONDS + 300)
{
	int seconds = stress_seconds();
	__u64 seed = stress_seed();
	unsigned long ops = 0, children = 0;
	struct census before, after;
	unsigned int i;

	ASSERT_LT(0, seconds) TH_LOG("%s must be 1 to %d", SECONDS_ENV,
				     MAX_SECONDS);
	/* The seed goes to stdout first, so that a crash still shows it. */
	printf("# seed %llu: replay with --seed %llu or %s=%llu\n",
	       (unsigned long long)seed, (unsigned long long)seed, SEED_ENV,
	       (unsigned long long)seed);
	fflush(stdout);
	TH_LOG("%d s, %d workers, perf sampling %s, core dumps %s, libc registry %s",
	       seconds, NR_WORKERS, sampling ? "on" : "off",
	       core_dumps ? "on" : "off", self->libc ? "on" : "off");
	census(&before);

	for (i = 0; i < NR_WORKERS; i++) {
		self->w[i].seed = (seed + i) * 0x9e3779b97f4a7c15ULL | 1;
		ASSERT_EQ(0, pthread_create(&self->w[i].thread, NULL,
					    worker_main, &self->w[i]));
	}
	sleep(seconds);
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);
	for (i = 0; i < NR_WORKERS; i++) {
		pthread_join(self->w[i].thread, NULL);
		worker_finish(&self->w[i]);
		ops += self->w[i].ops;
		children += self->w[i].children;
	}
	TH_LOG("%lu operations, %lu children, %lu failures", ops, children,
	       nr_failures);
	if (self->libc)
		TH_LOG("libc registry: %llu lookups, %llu hits",
		       (unsigned long long)self->libc->stats.lookups,
		       (unsigned long long)self->libc->stats.hits);

	after.mappings = nr_mappings();
	after.vm_pin = settles_at(vm_pin, before.vm_pin);
	after.registries = settles_at(nr_registries, before.registries);
	EXPECT_EQ(0UL, nr_failures);
	EXPECT_LT(0UL, ops);
	EXPECT_LT(0UL, children);
	EXPECT_EQ(before.mappings, after.mappings);
	EXPECT_EQ(before.vm_pin, after.vm_pin);
	EXPECT_EQ(before.registries, after.registries);
	if (sampling && self->libc)
		EXPECT_LT(0ULL, self->libc->stats.lookups);
}

/* "--seed N" before the harness's own options replays a run. */
int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--seed")) {
		seed_arg = strtoull(argv[2], NULL, 0);
		argv[2] = argv[0];
		return test_harness_run(argc - 2, argv + 2);
	}
	return test_harness_run(argc, argv);
}
