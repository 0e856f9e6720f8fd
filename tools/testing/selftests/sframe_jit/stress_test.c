// SPDX-License-Identifier: GPL-2.0
/*
 * Everything at once, for a fixed time, while perf and a BPF program
 * sample every CPU at a high rate:
 *
 *  - registrars register, replace and unregister JIT registries over
 *    ranges of their own, and unmap them;
 *  - an ELF thread registers and unregisters a copy of the executable's
 *    .sframe section;
 *  - a forker forks children that exit at once, or register and
 *    unregister in the copy of the address space they got, or exec this
 *    program as a helper that registers on its own;
 *  - JIT producers run JIT code and, around it, append functions to its
 *    registry, tombstone them, compact the registry under the seq count
 *    and replace it with a larger one;
 *  - a corrupter runs JIT code whose registry it scribbles random bytes
 *    over, header included.
 *
 * The run must lose and leak nothing: every operation returns what the
 * ABI says, each registrar's ranges are registered exactly when it
 * believes them to be, and the process's registrations (counted through
 * the sframe_max_registrations limit), its [sframe_jit] mappings and
 * VmPin are the same before and after, as is the number of registries
 * in the whole system (the kernel's vmalloc areas that sframe_register.c
 * allocated, in /proc/vmallocinfo), which counts the children's too.
 * The kernel's own checkers (lockdep, KASAN, UBSAN, kmemleak in the
 * debug kernel) judge the rest from the console.
 *
 * SFRAME_STRESS_SECONDS sets the duration (default 5, at most
 * MAX_SECONDS); make check-debug runs it for a minute.
 */
#define _GNU_SOURCE		/* dl_iterate_phdr(), in sframe_test.h */
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>

#include <linux/bpf.h>
#include <linux/const.h>

#include "sample_harness.h"

#ifdef HAVE_BPF_F_USER_SFRAME
#define USER_SFRAME	BPF_F_USER_SFRAME
#else
#define USER_SFRAME	_BITULL(12)
#endif

#define DEFAULT_SECONDS	5
#define MAX_SECONDS	1200
#define SECONDS_ENV	"SFRAME_STRESS_SECONDS"
#define CHILD_ARG	"--exec-child"

#define NR_REGISTRARS	2
#define NR_PRODUCERS	2
#define REG_SLOTS	24	/* ranges of one registrar */
#define CHILD_SLOTS	16	/* ranges only forked children register */
#define PROBE_SLOTS	64	/* ranges of the registration count probe */
#define JIT_PAGES	16	/* a producer's code range, in pages */
#define MAX_CPUS	64
#define PERF_PERIOD_NS	100000	/* 10 kHz per CPU */
#define BPF_PERIOD_NS	130000	/* some 7.7 kHz per CPU */
#define RING_PAGES	64
/* Leaf loop iterations of one run: some 0.1 ms natively. */
#define SPIN		100000
#define MAX_LOGGED	20	/* failures described, beyond the count */

/* A small, fast generator per thread; children use their copy. */
static __u64 rnd(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static bool stopping;
static unsigned long nr_failures;

static bool should_stop(void)
{
	return __atomic_load_n(&stopping, __ATOMIC_ACQUIRE);
}

/* A failure in a thread, where the harness cannot assert. */
static void fail(const char *who, const char *what, long err)
{
	if (__atomic_fetch_add(&nr_failures, 1, __ATOMIC_RELAXED) < MAX_LOGGED)
		fprintf(stderr, "# %s: %s: %ld (%s)\n", who, what, err,
			err < 0 ? strerror(-err) : "unexpected value");
}

/* @got must be @want; a failure otherwise.  Returns whether it was. */
static bool check(const char *who, const char *what, long want, long got)
{
	if (got == want)
		return true;
	fail(who, what, got);
	return false;
}

/* Lines of @file that contain @needle; -1 if it cannot be read. */
static long lines_with(const char *file, const char *needle)
{
	char line[512];
	long n = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

/* [sframe_jit] mappings of this process. */
static long registry_mappings(void)
{
	return lines_with("/proc/self/maps", "[sframe_jit]");
}

/*
 * The process's registrations: with the limit lowered to PROBE_SLOTS,
 * the number of new ones that fit is PROBE_SLOTS less those there are.
 * Needs root to write the sysctl; -1 without.  Nothing else may register
 * meanwhile.
 */
static long registrations(char *probe)
{
	struct sframe_jit_header *h[PROBE_SLOTS];
	char old[32] = "";
	long n = 0, ret = -1;
	FILE *f;

	f = fopen(MAX_REGS_SYSCTL, "r");
	if (!f)
		return -1;
	if (!fgets(old, sizeof(old), f))
		old[0] = '\0';
	fclose(f);
	f = fopen(MAX_REGS_SYSCTL, "w");
	if (!f)
		return -1;
	if (fprintf(f, "%d\n", PROBE_SLOTS) < 0 || fclose(f))
		return -1;
	for (n = 0; n < PROBE_SLOTS; n++) {
		__u64 start = (unsigned long)probe + n * page_size();

		ret = jit_register(start, start + page_size(), 1, 1, &h[n]);
		if (ret)
			break;
	}
	if (ret == -ENOSPC)
		ret = PROBE_SLOTS - n;
	else
		ret = -1;	/* another error, or not even the limit */
	while (n--)
		munmap(h[n], h[n]->map_size);
	f = fopen(MAX_REGS_SYSCTL, "w");
	if (!f || fputs(old, f) < 0 || fclose(f))
		ret = -1;
	return ret;
}

/*
 * Registries anywhere in the system: the kernel's vmalloc areas that a
 * function of sframe_register.c allocated, as /proc/vmallocinfo (root
 * only) names their callers; -1 if it cannot be read.
 */
static long system_registries(void)
{
	return lines_with("/proc/vmallocinfo", " sframe_");
}

static long vm_pin_kb(void)
{
	return proc_kb("/proc/self/status", "VmPin");
}

static long vmalloc_used_kb(void)
{
	return proc_kb("/proc/meminfo", "VmallocUsed");
}

/*
 * @read once the deferred frees (RCU, then a work item) are done: when
 * it gives @want, or, with @want -1, when it stops changing.
 */
static long settled(long (*read)(void), long want)
{
	long prev, cur = read();
	int i;

	for (i = 0; i < 100 && cur != want; i++) {
		usleep(100 * 1000);
		prev = cur;
		cur = read();
		if (want < 0 && cur == prev && i > 4)
			break;
	}
	return cur;
}

struct census {
	long registrations;	/* of this process */
	long mappings;		/* [sframe_jit] in its maps */
	long vm_pin_kb;		/* its VmPin */
	long registries;	/* registries in the whole system */
	long vmalloc_kb;	/* for the record: kworkers come and go */
	long slab_kb;		/* likewise */
};

static void take_census(struct census *c, char *probe,
			const struct census *before)
{
	c->registrations = registrations(probe);
	c->mappings = registry_mappings();
	c->vm_pin_kb = settled(vm_pin_kb, before ? before->vm_pin_kb : -1);
	c->registries = settled(system_registries,
				before ? before->registries : -1);
	c->vmalloc_kb = settled(vmalloc_used_kb,
				before ? before->vmalloc_kb : -1);
	c->slab_kb = proc_kb("/proc/meminfo", "Slab");
}

/* ---- registrars ---------------------------------------------------- */

/*
 * A live slot's registry is mapped and registered; an orphan's is
 * unmapped, so no longer registered, its descriptor kept for COPY.
 */
enum slot_state { SLOT_FREE, SLOT_LIVE, SLOT_ORPHAN };

struct slot {
	__u64 start, end;
	struct sframe_jit_header *h;
	size_t size;
	__u32 nfde, nfre;
	__u32 count;		/* an orphan's published descriptors */
	int fd;
	enum slot_state state;
};

struct registrar {
	pthread_t thread;
	char name[16];
	struct slot slot[REG_SLOTS];
	__u64 seed;
	unsigned long ops[4];	/* register, replace, orphan or copy, unmap */
};

static void slot_register(struct registrar *r, struct slot *s)
{
	long ret;

	s->nfde = 1 + rnd(&r->seed) % 32;
	s->nfre = 2 * s->nfde + rnd(&r->seed) % 16;
	ret = jit_register_fd(s->start, s->end, s->nfde, s->nfre, &s->h,
			      &s->fd);
	if (!check(r->name, "sframe_jit_open", 0, ret))
		return;
	s->size = s->h->map_size;
	jit_fill(s->h, s->start, s->nfde, rnd(&r->seed));
	s->state = SLOT_LIVE;
	r->ops[0]++;
}

/* A larger registry that must carry the published descriptors over. */
static void slot_replace(struct registrar *r, struct slot *s)
{
	struct sframe_jit_header *h = NULL;
	__u32 count = s->h->fde_count;
	int fd = -1;
	long ret;

	s->nfde += rnd(&r->seed) % 8;
	s->nfre += rnd(&r->seed) % 16;
	ret = jit_replace(s->fd, s->start, s->end, s->nfde, s->nfre, &h, &fd);
	if (!check(r->name, "SFRAME_JIT_REPLACE", 0, ret))
		return;
	check(r->name, "fde_count carried over", count, h->fde_count);
	check(r->name, "munmap of the replaced registry", 0,
	      munmap_err(s->h, s->size));
	close(s->fd);
	s->fd = fd;
	s->h = h;
	s->size = h->map_size;
	r->ops[1]++;
}

/* Unmapping unregisters; the descriptor stays, unregistered. */
static void slot_orphan(struct registrar *r, struct slot *s)
{
	s->count = s->h->fde_count;
	check(r->name, "munmap", 0, munmap_err(s->h, s->size));
	check(r->name, "registered after munmap", 0,
	      fdinfo_field(s->fd, "registered"));
	s->state = SLOT_ORPHAN;
	r->ops[2]++;
}

/* A new registry from the orphan's records, as a forked child makes. */
static void slot_copy(struct registrar *r, struct slot *s)
{
	int fd = -1;
	long ret;

	ret = jit_copy(s->fd, s->start, s->end, s->nfde, s->nfre, &s->h, &fd);
	if (!check(r->name, "SFRAME_JIT_COPY", 0, ret))
		return;
	check(r->name, "fde_count copied", s->count, s->h->fde_count);
	close(s->fd);
	s->fd = fd;
	s->size = s->h->map_size;
	s->state = SLOT_LIVE;
	r->ops[2]++;
}

static void slot_unmap(struct registrar *r, struct slot *s)
{
	if (s->state == SLOT_LIVE)
		check(r->name, "munmap", 0, munmap_err(s->h, s->size));
	close(s->fd);
	s->fd = -1;
	s->state = SLOT_FREE;
	r->ops[3]++;
}

static void registrar_step(struct registrar *r, struct slot *s)
{
	switch (s->state) {
	case SLOT_FREE:
		slot_register(r, s);
		break;
	case SLOT_LIVE:
		switch (rnd(&r->seed) % 3) {
		case 0:
			slot_replace(r, s);
			break;
		case 1:
			slot_orphan(r, s);
			break;
		default:
			/* The mapping's close unregisters the range. */
			slot_unmap(r, s);
			break;
		}
		break;
	case SLOT_ORPHAN:
		check(r->name, "registration of an orphan's range", 0,
		      jit_register(s->start, s->end, 1, 1, NULL));
		if (rnd(&r->seed) % 2)
			slot_copy(r, s);
		else
			slot_unmap(r, s);
		break;
	}
}

/*
 * Each range must be registered exactly when the registrar believes it
 * is: registering it again says so, and the end leaves nothing behind.
 */
static void registrar_finish(struct registrar *r)
{
	unsigned int i;

	for (i = 0; i < REG_SLOTS; i++) {
		struct slot *s = &r->slot[i];

		check(r->name, s->state == SLOT_LIVE ?
		      "registration over a live range at the end" :
		      "registration of a free range at the end",
		      s->state == SLOT_LIVE ? -EEXIST : 0,
		      jit_register(s->start, s->end, 1, 1, NULL));
		if (s->state != SLOT_FREE)
			slot_unmap(r, s);
	}
}

static void *registrar_main(void *arg)
{
	struct registrar *r = arg;

	while (!should_stop())
		registrar_step(r, &r->slot[rnd(&r->seed) % REG_SLOTS]);
	registrar_finish(r);
	return NULL;
}

/* ---- the ELF thread ------------------------------------------------ */

struct elf_thread {
	pthread_t thread;
	struct self_sframe self;
	struct sframe_copy copy;
	unsigned long cycles;
};

static void *elf_main(void *arg)
{
	struct elf_thread *e = arg;

	while (!should_stop()) {
		if (!check("elf", "sframe_register", 0,
			   copy_elf_register(&e->copy)))
			break;
		check("elf", "sframe_unregister of the section", 0,
		      copy_elf_unregister(&e->copy));
		e->cycles++;
	}
	return NULL;
}

/* ---- the forker ---------------------------------------------------- */

/* In turn, from the first child on, and each kind at least once. */
enum { CHILD_EXEC, CHILD_REGISTER, CHILD_EXIT, NR_CHILD_KINDS };

struct forker {
	pthread_t thread;
	char *child_area;
	struct registrar *registrars;
	__u64 seed;
	unsigned long children[NR_CHILD_KINDS];
};

/*
 * In the child of a threaded process: system calls only, no locks.
 * Registers a range of its own and replaces the registry, whose old
 * mapping's munmap must leave the new registration alone; then, for
 * some of the registrars' slots, finds their ranges free (no JIT
 * registration is inherited) and copies what the inherited descriptor
 * names, which the registrar may have been changing as the fork
 * happened: a copy, or EBADF, or EINVAL for another file or shape.
 * Exits with registrations live for exit to free.
 */
static void child_register(struct forker *f)
{
	__u64 start = (unsigned long)f->child_area +
		      rnd(&f->seed) % CHILD_SLOTS * page_size();
	__u64 end = start + page_size();
	struct sframe_jit_header *old, *h;
	unsigned int i;
	int ret, fd;

	if (jit_register_fd(start, end, 4, 8, &old, &fd))
		_exit(10);
	jit_fill(old, start, 4, 1);
	if (jit_replace(fd, start, end, 8, 16, &h, NULL))
		_exit(11);
	if (h->fde_count != 4)
		_exit(12);
	jit_fill(h, start, 8, 2);
	/* The old mapping's unmapping must leave the new registration. */
	if (munmap(old, old->map_size))
		_exit(13);
	if (jit_register(start, end, 1, 1, NULL) != -EEXIST)
		_exit(14);
	for (i = 0; i < 8; i++) {
		const struct registrar *r = &f->registrars[i % NR_REGISTRARS];
		const struct slot *s = &r->slot[rnd(&f->seed) % REG_SLOTS];

		if (jit_register(s->start, s->end, 1, 1, NULL))
			_exit(15);
		ret = jit_copy(s->fd, s->start, s->end, s->nfde, s->nfre,
			       NULL, NULL);
		if (ret && ret != -EBADF && ret != -EINVAL)
			_exit(16);
	}
	_exit(0);
}

static void *forker_main(void *arg)
{
	struct forker *f = arg;
	unsigned long n;

	for (n = 0; n < NR_CHILD_KINDS || !should_stop(); n++) {
		int kind = n % NR_CHILD_KINDS, status;
		pid_t pid;

		rnd(&f->seed);	/* each child draws from its own copy */
		pid = fork();

		if (pid < 0) {
			fail("forker", "fork", -errno);
			break;
		}
		if (pid == 0) {
			if (kind == CHILD_REGISTER)
				child_register(f);
			if (kind == CHILD_EXEC)
				execl("/proc/self/exe", "stress_test",
				      CHILD_ARG, (char *)NULL);
			_exit(kind == CHILD_EXEC ? 99 : 0);
		}
		status = child_status(pid);
		if (status)
			fail("forker", kind == CHILD_EXEC ? "exec'd helper" :
			     "forked child", status);
		f->children[kind]++;
	}
	return NULL;
}

/*
 * The helper the forker execs: a fresh process, which must start with no
 * registry, see each of its own, and exit with some still registered.
 */
static int exec_child_main(void)
{
	char *arena = arena_reserve(4);
	struct sframe_jit_header *h[3], *old;
	__u64 first = (unsigned long)arena;
	int i, fd;

	if (arena == MAP_FAILED)
		return 20;
	if (registry_mappings() != 0)
		return 21;
	for (i = 0; i < 3; i++) {
		__u64 start = (unsigned long)arena + i * page_size();

		if (jit_register_fd(start, start + page_size(), 8, 16, &h[i],
				    i ? NULL : &fd))
			return 22;
		jit_fill(h[i], start, 8, i);
	}
	if (registry_mappings() != 3)
		return 23;
	old = h[0];
	if (jit_replace(fd, first, first + page_size(), 8, 16, &h[0], NULL))
		return 24;
	close(fd);
	/* Replaced, the old registry stays mapped until unmapped. */
	if (registry_mappings() != 4)
		return 25;
	if (munmap(old, old->map_size) || registry_mappings() != 3)
		return 26;
	if (jit_register(first, first + page_size(), 1, 1, NULL) != -EEXIST)
		return 27;
	if (munmap(h[0], h[0]->map_size) || registry_mappings() != 2)
		return 28;
	if (jit_register(first, first + page_size(), 1, 1, NULL))
		return 29;
	/* Never mapped: its descriptor alone holds it, exit closes it. */
	if (jit_register_fd(first + 3 * page_size(), first + 4 * page_size(),
			    8, 16, NULL, &fd))
		return 30;
	return 0;
}

/* ---- JIT code: producers and the corrupter ------------------------- */

enum { FN_OUTER, FN_LEAF, NR_FNS };

struct chain_data {
	unsigned long spin;
	unsigned long ret[NR_FNS];
};

/*
 * JIT code and its registry: page 0 holds two real functions, outer
 * calling leaf, which spins; page 1 their data; the rest of the range
 * is where the made-up functions a producer appends say they are.
 */
struct jit {
	pthread_t thread;
	char name[16];
	unsigned char *map;
	struct chain_data *data;
	struct jit_fn fn[NR_FNS];
	struct jit_registry reg;
	__u64 want[3];		/* ret[LEAF], ret[OUTER] of every run */
	__u64 fake_next;	/* where the next made-up function goes */
	__u32 real_rows;	/* row slot of the first real row */
	__u64 seed;
	unsigned long runs, appends, tombstones, compactions, replaces;
	unsigned long scribbles, resets;
	struct sframe_jit_stats stats;	/* of registries replaced */
};

static bool emit_chain(struct jit *j)
{
	struct emitter e = { .buf = j->map, .cap = page_size() };

	fn_begin(&e, &j->fn[FN_OUTER], "outer", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &j->data->ret[FN_OUTER]);
	emit_push(&e, RBX);
	emit_sub_rsp(&e, 24);
	emit_mov_rax_imm(&e, 0);	/* patched below with the leaf */
	emit_call_rax(&e);
	emit_add_rsp(&e, 24);
	emit_pop(&e, RBX);
	emit_ret(&e);
	fn_end(&e);

	fn_begin(&e, &j->fn[FN_LEAF], "leaf", SFRAME_JIT_FDE_PCINC, 0);
	emit_store_ret(&e, &j->data->ret[FN_LEAF]);
	emit_sub_rsp(&e, 40);
	emit_spin(&e, &j->data->spin);
	emit_add_rsp(&e, 40);
	emit_ret(&e);
	fn_end(&e);
	pad_to(&e, e.cap);
	return !e.overflow;
}

/* Point outer's movabs at the leaf: the immediate follows 0x48 0xb8. */
static bool patch_leaf(struct jit *j)
{
	unsigned char *p = (unsigned char *)j->fn[FN_OUTER].start;
	__u64 leaf = j->fn[FN_LEAF].start;
	unsigned int i;

	for (i = 0; i + 10 <= j->fn[FN_OUTER].size; i++) {
		if (p[i] == 0x48 && p[i + 1] == 0xb8 &&
		    !memcmp(p + i + 2, &(__u64){ 0 }, 8)) {
			memcpy(p + i + 2, &leaf, 8);
			return true;
		}
	}
	return false;
}

static long jit_call(const struct jit *j)
{
	long (*outer)(void) = (long (*)(void))j->fn[FN_OUTER].start;
	long r = outer();

	__asm__ volatile("" : "+r"(r));
	return r;
}

/*
 * Every run through one call site: jit_call() is only ever called
 * through a pointer the compiler cannot see through, so it is not
 * inlined, and outer's return address is the same on every run.
 */
static long jit_run(const struct jit *j)
{
	long (*call)(const struct jit *j) = jit_call;

	__asm__ volatile("" : "+r"(call));
	return call(j);
}

static int jit_setup(struct jit *j, const char *name, __u64 seed)
{
	size_t ps = page_size();
	struct sframe_jit_header *h = NULL;
	unsigned int i;
	int ret, fd = -1;

	memset(j, 0, sizeof(*j));
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->seed = seed;
	j->map = mmap(NULL, JIT_PAGES * ps, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (j->map == MAP_FAILED)
		return -errno;
	if (mprotect(j->map, 2 * ps, PROT_READ | PROT_WRITE))
		return -errno;
	j->data = (struct chain_data *)(j->map + ps);
	j->data->spin = SPIN;
	if (!emit_chain(j) || !patch_leaf(j))
		return -EOVERFLOW;
	if (mprotect(j->map, ps, PROT_READ | PROT_EXEC))
		return -errno;
	jit_run(j);
	j->want[1] = j->data->ret[FN_LEAF];
	j->want[2] = j->data->ret[FN_OUTER];
	ret = jit_op_flags(SFRAME_JIT_F_STATS, -1, (unsigned long)j->map,
			   (unsigned long)j->map + JIT_PAGES * ps, 64, 256, 0,
			   &h, &fd);
	if (ret)
		return ret;
	ret = jit_registry_attach(&j->reg, h);
	/* Kept for SFRAME_JIT_REPLACE; jit_registry_unmap() closes it. */
	j->reg.fd = fd;
	if (ret)
		return -EPROTO;
	for (i = 0; i < NR_FNS; i++)
		if (jit_registry_append(&j->reg, &j->fn[i]))
			return -ENOSPC;
	j->fake_next = (unsigned long)j->map + 2 * ps;
	return 0;
}

static void jit_teardown(struct jit *j)
{
	jit_registry_unmap(&j->reg);
	if (j->map && j->map != MAP_FAILED)
		munmap(j->map, JIT_PAGES * page_size());
}

static bool in_leaf_loop(const struct jit *j, __u64 ip)
{
	const struct jit_fn *leaf = &j->fn[FN_LEAF];

	return ip >= leaf->start + leaf->spin_start &&
	       ip < leaf->start + leaf->spin_end;
}

static void stats_add(struct sframe_jit_stats *sum,
		      const struct sframe_jit_stats *s)
{
	sum->lookups += s->lookups;
	sum->hits += s->hits;
	sum->tombstone_hits += s->tombstone_hits;
	sum->seq_retries += s->seq_retries;
	sum->malformed += s->malformed;
}

/* A made-up function of one to three rows after the last one. */
static int append_fake(struct jit *j)
{
	__u64 end = j->reg.text_end;
	struct jit_fn fn = { .name = "fake", .type = SFRAME_JIT_FDE_PCINC };
	unsigned int i;

	fn.start = j->fake_next;
	fn.size = 16 + rnd(&j->seed) % 48;
	if (fn.start + fn.size > end)
		return -ENOSPC;
	fn.nr_rows = 1 + rnd(&j->seed) % 3;
	for (i = 0; i < fn.nr_rows; i++)
		fn.rows[i] = (struct sframe_jit_fre) {
			.start_off	= i * 4,
			.cfa_off	= 8 + 8 * i,
			.ra_off		= -8,
			.cfa_base	= SFRAME_JIT_CFA_SP,
		};
	if (jit_registry_append(&j->reg, &fn))
		return -ENOSPC;
	j->fake_next = fn.start + fn.size + rnd(&j->seed) % 32;
	j->appends++;
	return 0;
}

/*
 * Under seq, rewrite the registry as a JIT compacting its tables would:
 * the real functions with their rows moved to the other end of the row
 * area's start, the live made-up functions packed after them, or none
 * when the range is used up.
 */
static void compact(struct jit *j, bool drop_fakes)
{
	struct jit_registry *r = &j->reg;
	__u32 n = 0, rows, i, k, nfdes = r->nr_fdes;
	struct sframe_jit_fde *fdes = calloc(nfdes, sizeof(*fdes));
	struct sframe_jit_fre *fres = calloc(r->fre_capacity, sizeof(*fres));

	if (!fdes || !fres) {
		fail(j->name, "calloc", -ENOMEM);
		goto out;
	}
	j->real_rows = j->real_rows ? 0 : 2 * MAX_ROWS;
	rows = j->real_rows;
	for (i = 0; i < nfdes; i++) {
		const struct sframe_jit_fde *fde = jit_registry_fde(r, i);

		if (i >= NR_FNS && (drop_fakes ||
				    (fde->flags & SFRAME_JIT_FDE_TOMBSTONE)))
			continue;
		if (i == NR_FNS && rows < 2 * MAX_ROWS)
			rows = 2 * MAX_ROWS;	/* past the real rows' slots */
		if (rows + fde->fre_count > r->fre_capacity)
			break;
		fdes[n] = *fde;
		fdes[n].fre_start = rows;
		for (k = 0; k < fde->fre_count; k++)
			fres[rows + k] = *jit_registry_fre(r, fde->fre_start + k);
		rows += fde->fre_count;
		n++;
	}
	jit_registry_seq_begin(r);
	for (i = 0; i < n; i++) {
		for (k = 0; k < fdes[i].fre_count; k++)
			*jit_registry_fre(r, fdes[i].fre_start + k) =
				fres[fdes[i].fre_start + k];
		*jit_registry_fde(r, i) = fdes[i];
	}
	__atomic_store_n(&r->hdr->fde_count, n, __ATOMIC_RELEASE);
	/* Now and then a slow rewrite: samples meet seq odd. */
	if (rnd(&j->seed) % 4 == 0) {
		jit_run(j);
		j->runs++;
	}
	jit_registry_seq_end(r);
	r->nr_fdes = n;
	r->nr_fres = rows;
	r->last_end = n > NR_FNS ? fdes[n - 1].func_start + fdes[n - 1].func_size :
		      j->fn[FN_LEAF].start + j->fn[FN_LEAF].size;
	if (n <= NR_FNS)
		j->fake_next = (unsigned long)j->map + 2 * page_size();
	j->compactions++;
out:
	free(fdes);
	free(fres);
}

/* A larger registry, the old one's contents carried over by the kernel. */
static void producer_replace(struct jit *j)
{
	struct jit_registry *r = &j->reg;
	struct sframe_jit_header *old = r->hdr, *h = NULL;
	struct sframe_jit_stats s = jit_registry_stats(old);
	__u32 nfde = r->fde_capacity, nfre = r->fre_capacity;
	int fd = -1;

	if (nfde < 1024 && rnd(&j->seed) % 2) {
		nfde *= 2;
		nfre *= 2;
	}
	if (!check(j->name, "SFRAME_JIT_REPLACE", 0,
		   jit_replace_counted(r->fd, r->text_start, r->text_end, nfde,
				       nfre, &h, &fd)))
		return;
	check(j->name, "fde_count carried over", r->nr_fdes, h->fde_count);
	if (!check(j->name, "layout of the new registry", 0,
		   jit_registry_move(r, h, fd)))
		return;
	stats_add(&j->stats, &s);
	check(j->name, "munmap of the replaced registry", 0,
	      munmap_err(old, old->map_size));
	j->replaces++;
}

static void producer_step(struct jit *j)
{
	struct jit_registry *r = &j->reg;
	unsigned int i, n = rnd(&j->seed) % 8;

	jit_run(j);
	j->runs++;
	for (i = 0; i < n; i++) {
		if (append_fake(j)) {
			compact(j, j->fake_next + 64 > r->text_end);
			break;
		}
	}
	if (r->nr_fdes > NR_FNS && rnd(&j->seed) % 2) {
		jit_registry_tombstone(r, NR_FNS + rnd(&j->seed) %
				       (r->nr_fdes - NR_FNS), true);
		j->tombstones++;
	}
	switch (rnd(&j->seed) % 64) {
	case 0:
		/* Code reuse: the leaf retired, then back, under seq. */
		jit_registry_tombstone(r, j->fn[FN_LEAF].fde, true);
		jit_run(j);
		jit_registry_seq_begin(r);
		jit_registry_tombstone(r, j->fn[FN_LEAF].fde, false);
		jit_registry_seq_end(r);
		j->tombstones++;
		break;
	case 1:
	case 2:
		compact(j, false);
		break;
	case 3:
		producer_replace(j);
		break;
	}
}

static void *producer_main(void *arg)
{
	struct sframe_jit_stats last;
	struct jit *j = arg;

	while (!should_stop())
		producer_step(j);
	last = jit_registry_stats(j->reg.hdr);
	stats_add(&j->stats, &last);
	return NULL;
}

/* Published functions again, over whatever the scribbles left. */
static void corrupter_reset(struct jit *j)
{
	struct jit_registry *r = &j->reg;
	unsigned int i;

	memset(r->fdes, 0, (size_t)r->fde_capacity * r->fde_stride);
	memset(r->fres, 0, (size_t)r->fre_capacity * r->fre_stride);
	__atomic_store_n(&r->hdr->seq, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr->fde_count, 0, __ATOMIC_RELEASE);
	r->nr_fdes = 0;
	r->nr_fres = 0;
	r->last_end = r->text_start;
	for (i = 0; i < NR_FNS; i++)
		jit_registry_append(r, &j->fn[i]);
	j->resets++;
}

/* Random bytes anywhere in the mapping, header and stats included. */
static void scribble(struct jit *j)
{
	unsigned char *base = (unsigned char *)j->reg.hdr;
	unsigned int i, n = 1 + rnd(&j->seed) % 64;
	size_t near = 3 * page_size();

	if (near > j->reg.map_size)
		near = j->reg.map_size;
	for (i = 0; i < n; i++) {
		__u64 v = rnd(&j->seed);
		size_t off;

		/* Mostly where the kernel looks: the header and first rows. */
		if (v & 1)
			off = (v >> 8) % near;
		else
			off = (v >> 8) % j->reg.map_size;
		base[off] = v >> 56;
	}
	j->scribbles++;
}

static void *corrupter_main(void *arg)
{
	struct jit *j = arg;

	while (!should_stop()) {
		if (rnd(&j->seed) % 16 == 0)
			corrupter_reset(j);
		scribble(j);
		jit_run(j);
		j->runs++;
	}
	return NULL;
}

/* ---- samplers ------------------------------------------------------ */

struct perf_reader {
	pthread_t thread;
	struct sampler s[MAX_CPUS];
	int nr;
	const struct jit *jits;
	struct ring_counts counts;
	unsigned long user_chains;
	unsigned long jit_leaf, jit_exact;	/* in the producers' leaves */
	unsigned long corrupt_leaf, corrupt_exact;	/* the corrupter's */
};

static bool count_sample(void *arg, const __u64 *rec, size_t words)
{
	struct perf_reader *p = arg;
	const __u64 *chain;
	__u64 ip, nr;
	int i, ret;

	ret = sample_user_chain(rec, words, &ip, &chain, &nr);
	if (ret == -EBADMSG)
		return false;
	if (ret)
		return true;	/* a kernel thread, or no user chain */
	p->user_chains++;
	for (i = 0; p->jits && i < NR_PRODUCERS + 1; i++) {
		const struct jit *j = &p->jits[i];

		bool exact;

		if (!in_leaf_loop(j, chain[0]))
			continue;
		exact = nr >= 3 && chain[1] == j->want[1] &&
			chain[2] == j->want[2];
		if (i < NR_PRODUCERS) {
			p->jit_leaf++;
			p->jit_exact += exact;
		} else {
			p->corrupt_leaf++;
			p->corrupt_exact += exact;
		}
	}
	return true;
}

static int perf_cpu_open(struct sampler *s, struct perf_event_attr *attr,
			 int cpu)
{
	size_t ps = page_size();

	memset(s, 0, sizeof(*s));
	s->fd = syscall(__NR_perf_event_open, attr, -1, cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	s->map_size = (1 + RING_PAGES) * ps;
	s->page = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       s->fd, 0);
	if (s->page == MAP_FAILED) {
		int ret = -errno;

		close(s->fd);
		return ret;
	}
	s->data = (unsigned char *)s->page + s->page->data_offset;
	s->data_size = s->page->data_size;
	return 0;
}

/* Every CPU's clock, user callchains through the SFrame unwinder. */
static int perf_reader_open(struct perf_reader *p, int cpus)
{
	struct perf_event_attr attr;
	int ret;

	sampler_attr(&attr, PERF_PERIOD_NS, true);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	/* Samples in the kernel too: the user chain of a task in a call. */
	attr.exclude_kernel = 0;
	attr.disabled = 0;
	for (p->nr = 0; p->nr < cpus; p->nr++) {
		ret = perf_cpu_open(&p->s[p->nr], &attr, p->nr);
		if (ret)
			return ret;
	}
	return 0;
}

static void perf_reader_drain(struct perf_reader *p)
{
	int i;

	for (i = 0; i < p->nr; i++)
		sampler_drain(&p->s[i], count_sample, p, &p->counts);
}

static void *perf_reader_main(void *arg)
{
	struct perf_reader *p = arg;
	struct pollfd fds[MAX_CPUS];
	int i;

	for (i = 0; i < p->nr; i++)
		fds[i] = (struct pollfd){ .fd = p->s[i].fd, .events = POLLIN };
	while (!should_stop()) {
		poll(fds, p->nr, 20);
		perf_reader_drain(p);
	}
	return NULL;
}

static void perf_reader_close(struct perf_reader *p)
{
	int i;

	for (i = 0; i < p->nr; i++) {
		ioctl(p->s[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		sampler_drain(&p->s[i], count_sample, p, &p->counts);
		sampler_close(&p->s[i]);
	}
	p->nr = 0;
}

/*
 * The BPF program, raw: bpf_get_stack(ctx, buf, 256, flags) into its
 * stack, then counters[0] += 1 and, by the helper's result r,
 * counters[1] += 1 if r < 0, else counters[2] += r (bytes of stack).
 */
enum { BPF_RUNS, BPF_ERRORS, BPF_BYTES, NR_BPF_COUNTERS };

#define BPF_BUF		256
#define BPF_KEY_OFF	(-BPF_BUF - 8)

static struct bpf_insn bpf_insn(__u8 code, __u8 dst, __u8 src, __s16 off,
				__s32 imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst,
				  .src_reg = src, .off = off, .imm = imm };
}

struct bpf_prog_text {
	struct bpf_insn insn[48];
	unsigned int n;
};

static void emit_bpf(struct bpf_prog_text *p, struct bpf_insn insn)
{
	if (p->n < ARRAY_SIZE(p->insn))
		p->insn[p->n] = insn;
	p->n++;
}

/* r1 = &counters[key in r8]; call lookup; if !r0 goto out; r0 += r9 */
static void emit_bpf_count(struct bpf_prog_text *p, int map_fd,
			   unsigned int *to_out)
{
	emit_bpf(p, bpf_insn(BPF_STX | BPF_MEM | BPF_W, BPF_REG_10, BPF_REG_8,
			     BPF_KEY_OFF, 0));
	emit_bpf(p, bpf_insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1,
			     BPF_PSEUDO_MAP_FD, 0, map_fd));
	emit_bpf(p, bpf_insn(0, 0, 0, 0, 0));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2,
			     BPF_REG_10, 0, 0));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0,
			     BPF_KEY_OFF));
	emit_bpf(p, bpf_insn(BPF_JMP | BPF_CALL, 0, 0, 0,
			     BPF_FUNC_map_lookup_elem));
	*to_out = p->n;
	emit_bpf(p, bpf_insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 0, 0));
	emit_bpf(p, bpf_insn(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0,
			     BPF_REG_9, 0, BPF_ADD));
}

static void bpf_prog_build(struct bpf_prog_text *p, int map_fd, __u64 flags)
{
	unsigned int out[2], skip, i;

	memset(p, 0, sizeof(*p));
	/* r0 = bpf_get_stack(ctx, fp - 256, 256, flags); r7 = r0 */
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2,
			     BPF_REG_10, 0, 0));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0,
			     -BPF_BUF));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0,
			     BPF_BUF));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0,
			     (__s32)flags));
	emit_bpf(p, bpf_insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_stack));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7,
			     BPF_REG_0, 0, 0));
	/* counters[BPF_RUNS] += 1 */
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_8, 0, 0,
			     BPF_RUNS));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_9, 0, 0, 1));
	emit_bpf_count(p, map_fd, &out[0]);
	/* r8 = BPF_ERRORS (r9 is 1); if r7 < 0 skip; r8 = BPF_BYTES, r9 = r7 */
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_8, 0, 0,
			     BPF_ERRORS));
	skip = p->n;
	emit_bpf(p, bpf_insn(BPF_JMP | BPF_JSLT | BPF_K, BPF_REG_7, 0, 0, 0));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_8, 0, 0,
			     BPF_BYTES));
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_9,
			     BPF_REG_7, 0, 0));
	p->insn[skip].off = p->n - skip - 1;
	emit_bpf_count(p, map_fd, &out[1]);
	for (i = 0; i < 2; i++)
		p->insn[out[i]].off = p->n - out[i] - 1;
	emit_bpf(p, bpf_insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0));
	emit_bpf(p, bpf_insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	long ret = syscall(__NR_bpf, cmd, attr, sizeof(*attr));

	return ret < 0 ? -errno : ret;
}

struct bpf_sampler {
	int map_fd, prog_fd;
	int event_fd[MAX_CPUS];
	int nr;
	__u64 counters[NR_BPF_COUNTERS];
	char log[16384];
};

static int bpf_sampler_open(struct bpf_sampler *b, int cpus)
{
	struct perf_event_attr attr;
	struct bpf_prog_text text;
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = sizeof(__u32);
	a.value_size = sizeof(__u64);
	a.max_entries = NR_BPF_COUNTERS;
	b->map_fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (b->map_fd < 0)
		return b->map_fd;
	bpf_prog_build(&text, b->map_fd, BPF_F_USER_STACK | USER_SFRAME);
	if (text.n > ARRAY_SIZE(text.insn))
		return -E2BIG;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (unsigned long)text.insn;
	a.insn_cnt = text.n;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)b->log;
	a.log_size = sizeof(b->log);
	a.log_level = 1;
	b->prog_fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (b->prog_fd < 0)
		return b->prog_fd;
	b->log[0] = '\0';

	/* IP only: the helper walks the user stack itself. */
	sampler_attr(&attr, BPF_PERIOD_NS, false);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_type = PERF_SAMPLE_IP;
	attr.exclude_kernel = 0;
	for (b->nr = 0; b->nr < cpus; b->nr++) {
		int fd = syscall(__NR_perf_event_open, &attr, -1, b->nr, -1,
				 PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			return -errno;
		b->event_fd[b->nr] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, b->prog_fd) ||
		    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
			return -errno;
	}
	return 0;
}

static void bpf_sampler_close(struct bpf_sampler *b)
{
	union bpf_attr a;
	__u32 key;
	int i;

	for (i = 0; i < b->nr; i++) {
		ioctl(b->event_fd[i], PERF_EVENT_IOC_DISABLE, 0);
		close(b->event_fd[i]);
	}
	b->nr = 0;
	for (key = 0; b->map_fd > 0 && key < NR_BPF_COUNTERS; key++) {
		memset(&a, 0, sizeof(a));
		a.map_fd = b->map_fd;
		a.key = (unsigned long)&key;
		a.value = (unsigned long)&b->counters[key];
		sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
	}
	if (b->prog_fd > 0)
		close(b->prog_fd);
	if (b->map_fd > 0)
		close(b->map_fd);
	b->prog_fd = -1;
	b->map_fd = -1;
}

/* ---- the tests ----------------------------------------------------- */

static void *idle_thread(void *arg)
{
	return arg;
}

/*
 * What the kernel keeps once it was first used, so that the census
 * before the run counts it as the one after does: cached kernel stacks
 * of exited tasks (vmalloc'ed), and what the first perf events and BPF
 * program leave allocated.
 */
static int warm_up(int cpus, struct perf_reader *p, struct bpf_sampler *b)
{
	pthread_t t[8];
	int i, ret;

	memset(p, 0, sizeof(*p));
	memset(b, 0, sizeof(*b));
	ret = perf_reader_open(p, cpus);
	perf_reader_close(p);
	if (ret)
		return ret;
	ret = bpf_sampler_open(b, cpus);
	bpf_sampler_close(b);
	if (ret)
		return ret;
	for (i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, idle_thread, NULL))
			return -EAGAIN;
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 4; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			execl("/proc/self/exe", "stress_test", CHILD_ARG,
			      (char *)NULL);
			_exit(99);
		}
		if (child_status(pid))
			return -ECHILD;
	}
	return 0;
}

static int stress_seconds(void)
{
	const char *v = getenv(SECONDS_ENV);
	char *end;
	long s;

	if (!v || !*v)
		return DEFAULT_SECONDS;
	s = strtol(v, &end, 10);
	if (*end || s < 1 || s > MAX_SECONDS)
		return -1;
	return s;
}

static void census_log(struct __test_metadata *_metadata, const char *when,
		       const struct census *c)
{
	TH_LOG("%s: %ld registrations, %ld [sframe_jit] mappings, VmPin %ld kB;",
	       when, c->registrations, c->mappings, c->vm_pin_kb);
	TH_LOG("  %ld registries in the system, VmallocUsed %ld kB, Slab %ld kB",
	       c->registries, c->vmalloc_kb, c->slab_kb);
}

/* The census a test starts from, which must count everything. */
static void census_before(struct __test_metadata *_metadata, char *probe,
			  struct census *c)
{
	take_census(c, probe, NULL);
	census_log(_metadata, "before", c);
	ASSERT_LE(0, c->registrations)
		TH_LOG("cannot count registrations: not root?");
	ASSERT_LE(0, c->registries)
		TH_LOG("cannot read /proc/vmallocinfo: not root?");
}

FIXTURE(stress) {
	char *probe;
	char *arena;
	int cpus;
};

FIXTURE_SETUP(stress)
{
	if (sampling_skip(_metadata))
		return;
	self->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	ASSERT_LT(0, self->cpus);
	if (self->cpus > MAX_CPUS)
		self->cpus = MAX_CPUS;
	self->probe = arena_reserve(PROBE_SLOTS);
	ASSERT_NE(MAP_FAILED, self->probe);
	self->arena = arena_reserve(NR_REGISTRARS * REG_SLOTS + CHILD_SLOTS);
	ASSERT_NE(MAP_FAILED, self->arena);
}

FIXTURE_TEARDOWN(stress)
{
	if (self->probe && self->probe != MAP_FAILED)
		munmap(self->probe, PROBE_SLOTS * page_size());
	if (self->arena && self->arena != MAP_FAILED)
		munmap(self->arena, (NR_REGISTRARS * REG_SLOTS + CHILD_SLOTS) *
		       page_size());
}

/*
 * The census must see a registration that stays: one registry more is
 * one registration, one mapping and its pages in VmPin more.
 */
TEST_F(stress, the_census_counts_a_registration_left_behind)
{
	struct census before, during, after;
	struct sframe_jit_header *h = NULL;
	__u64 start = (unsigned long)self->arena;

	census_before(_metadata, self->probe, &before);
	ASSERT_EQ(0, jit_register(start, start + page_size(), 100, 400, &h));
	take_census(&during, self->probe, NULL);
	census_log(_metadata, "with one more", &during);
	EXPECT_EQ(before.registrations + 1, during.registrations);
	EXPECT_EQ(before.mappings + 1, during.mappings);
	EXPECT_EQ(before.vm_pin_kb + (long)h->map_size / 1024,
		  during.vm_pin_kb);
	EXPECT_EQ(before.registries + 1, during.registries);
	ASSERT_EQ(0, munmap(h, h->map_size));
	take_census(&after, self->probe, &before);
	EXPECT_EQ(before.registrations, after.registrations);
	EXPECT_EQ(before.mappings, after.mappings);
	EXPECT_EQ(before.vm_pin_kb, after.vm_pin_kb);
	EXPECT_EQ(before.registries, after.registries);
}

TEST_F_TIMEOUT(stress, everything_at_once_loses_and_leaks_nothing, 1800)
{
	static struct registrar reg[NR_REGISTRARS];
	static struct jit jits[NR_PRODUCERS + 1];	/* the last corrupts */
	static struct perf_reader perf;
	static struct bpf_sampler bpf;
	static struct elf_thread elf;
	static struct forker forker;
	struct jit *corrupter = &jits[NR_PRODUCERS];
	struct census before, after;
	int seconds = stress_seconds(), i, ret;
	struct sframe_jit_stats sum = { 0 };
	unsigned long appends = 0, compactions = 0, replaces = 0, runs = 0;
	char name[16];

	ASSERT_LT(0, seconds) TH_LOG("%s must be 1 to %d seconds", SECONDS_ENV,
				     MAX_SECONDS);
	ASSERT_TRUE(self_sframe_find(&elf.self)) TH_LOG(NO_SFRAME_SEGMENT);
	ASSERT_EQ(0, sframe_copy_make(&elf.self, &elf.copy, true))
		TH_LOG(NO_SFRAME_COPY);

	ret = warm_up(self->cpus, &perf, &bpf);
	ASSERT_EQ(0, ret) TH_LOG("warming up: %s; the BPF verifier said:\n%s",
				 strerror(-ret), bpf.log);
	census_before(_metadata, self->probe, &before);

	for (i = 0; i < NR_REGISTRARS; i++) {
		unsigned int k;

		memset(&reg[i], 0, sizeof(reg[i]));
		snprintf(reg[i].name, sizeof(reg[i].name), "registrar%d", i);
		reg[i].seed = 0x9e3779b97f4a7c15ULL * (i + 1);
		for (k = 0; k < REG_SLOTS; k++) {
			struct slot *s = &reg[i].slot[k];

			s->start = (unsigned long)self->arena +
				   (i * REG_SLOTS + k) * page_size();
			s->end = s->start + page_size();
			s->fd = -1;
		}
	}
	for (i = 0; i <= NR_PRODUCERS; i++) {
		snprintf(name, sizeof(name), i < NR_PRODUCERS ? "producer%d" :
			 "corrupter", i);
		ret = jit_setup(&jits[i], name, 0xd1b54a32d192ed03ULL * (i + 1));
		ASSERT_EQ(0, ret) TH_LOG("%s: %s", name, strerror(-ret));
	}
	memset(&forker, 0, sizeof(forker));
	forker.child_area = self->arena +
			    NR_REGISTRARS * REG_SLOTS * page_size();
	forker.registrars = reg;
	forker.seed = 0x2545f4914f6cdd1dULL;

	memset(&perf, 0, sizeof(perf));
	perf.jits = jits;
	ret = perf_reader_open(&perf, self->cpus);
	ASSERT_EQ(0, ret) TH_LOG("perf_event_open on each CPU: %s",
				 strerror(-ret));
	memset(&bpf, 0, sizeof(bpf));
	ret = bpf_sampler_open(&bpf, self->cpus);
	ASSERT_EQ(0, ret) TH_LOG("the BPF sampler: %s\n%s", strerror(-ret),
				 bpf.log);

	__atomic_store_n(&stopping, false, __ATOMIC_RELEASE);
	__atomic_store_n(&nr_failures, 0, __ATOMIC_RELAXED);
	ASSERT_EQ(0, pthread_create(&perf.thread, NULL, perf_reader_main,
				    &perf));
	for (i = 0; i < NR_REGISTRARS; i++)
		ASSERT_EQ(0, pthread_create(&reg[i].thread, NULL,
					    registrar_main, &reg[i]));
	for (i = 0; i < NR_PRODUCERS; i++)
		ASSERT_EQ(0, pthread_create(&jits[i].thread, NULL,
					    producer_main, &jits[i]));
	ASSERT_EQ(0, pthread_create(&corrupter->thread, NULL, corrupter_main,
				    corrupter));
	ASSERT_EQ(0, pthread_create(&elf.thread, NULL, elf_main, &elf));
	ASSERT_EQ(0, pthread_create(&forker.thread, NULL, forker_main,
				    &forker));

	TH_LOG("running for %d s on %d CPUs", seconds, self->cpus);
	sleep(seconds);
	__atomic_store_n(&stopping, true, __ATOMIC_RELEASE);

	pthread_join(forker.thread, NULL);
	pthread_join(elf.thread, NULL);
	pthread_join(corrupter->thread, NULL);
	for (i = 0; i < NR_PRODUCERS; i++)
		pthread_join(jits[i].thread, NULL);
	for (i = 0; i < NR_REGISTRARS; i++)
		pthread_join(reg[i].thread, NULL);
	pthread_join(perf.thread, NULL);
	perf_reader_close(&perf);
	bpf_sampler_close(&bpf);
	for (i = 0; i <= NR_PRODUCERS; i++)
		jit_teardown(&jits[i]);
	munmap(elf.copy.map, elf.copy.map_size);

	for (i = 0; i < NR_REGISTRARS; i++)
		TH_LOG("%s: %lu registered, %lu replaced, %lu orphaned or copied, %lu unmapped",
		       reg[i].name, reg[i].ops[0], reg[i].ops[1],
		       reg[i].ops[2], reg[i].ops[3]);
	TH_LOG("elf: %lu register/unregister cycles", elf.cycles);
	TH_LOG("forker: %lu children exited, %lu registered, %lu exec'd the helper",
	       forker.children[CHILD_EXIT], forker.children[CHILD_REGISTER],
	       forker.children[CHILD_EXEC]);
	for (i = 0; i < NR_PRODUCERS; i++) {
		const struct jit *j = &jits[i];

		TH_LOG("%s: %lu runs, %lu appended, %lu tombstoned, %lu compactions, %lu replaced",
		       j->name, j->runs, j->appends, j->tombstones,
		       j->compactions, j->replaces);
		TH_LOG("  unwinder: %llu lookups, %llu hits, %llu tombstone hits,",
		       (unsigned long long)j->stats.lookups,
		       (unsigned long long)j->stats.hits,
		       (unsigned long long)j->stats.tombstone_hits);
		TH_LOG("  %llu seq retries, %llu malformed",
		       (unsigned long long)j->stats.seq_retries,
		       (unsigned long long)j->stats.malformed);
		stats_add(&sum, &j->stats);
		appends += j->appends;
		compactions += j->compactions;
		replaces += j->replaces;
		runs += j->runs;
	}
	TH_LOG("corrupter: %lu runs, %lu scribbles, %lu resets",
	       corrupter->runs, corrupter->scribbles, corrupter->resets);
	TH_LOG("perf: %lu samples, %lu lost, %lu throttled, %lu bad",
	       perf.counts.samples, perf.counts.lost, perf.counts.throttled,
	       perf.counts.bad_records);
	TH_LOG("  %lu user chains; %lu in a producer's leaf, %lu of them exact",
	       perf.user_chains, perf.jit_leaf, perf.jit_exact);
	TH_LOG("  %lu in the corrupter's leaf, %lu of them exact",
	       perf.corrupt_leaf, perf.corrupt_exact);
	TH_LOG("bpf: %llu runs, %llu errors, %llu stack bytes",
	       (unsigned long long)bpf.counters[BPF_RUNS],
	       (unsigned long long)bpf.counters[BPF_ERRORS],
	       (unsigned long long)bpf.counters[BPF_BYTES]);

	take_census(&after, self->probe, &before);
	census_log(_metadata, "after", &after);

	/* Every operation did what the ABI says. */
	EXPECT_EQ(0UL, nr_failures);
	/* Everything ran, and the samplers saw JIT frames meanwhile. */
	EXPECT_LT(0UL, reg[0].ops[0] + reg[1].ops[0]);
	EXPECT_LT(0UL, elf.cycles);
	EXPECT_LT(0UL, forker.children[CHILD_EXEC]);
	EXPECT_LT(0UL, appends);
	EXPECT_LT(0UL, compactions);
	EXPECT_LT(0UL, corrupter->scribbles);
	EXPECT_EQ(0UL, perf.counts.bad_records);
	EXPECT_LT(0UL, perf.jit_exact);
	EXPECT_LT(0ULL, sum.hits);
	EXPECT_LT(0ULL, sum.seq_retries);
	EXPECT_LT(0ULL, bpf.counters[BPF_BYTES]);
	/* Nothing lost, nothing left behind. */
	EXPECT_EQ(before.registrations, after.registrations);
	EXPECT_EQ(before.mappings, after.mappings);
	EXPECT_EQ(before.vm_pin_kb, after.vm_pin_kb);
	/* Not in the exited children either. */
	EXPECT_EQ(before.registries, after.registries);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], CHILD_ARG))
		return exec_child_main();
	return test_harness_run(argc, argv);
}
