// SPDX-License-Identifier: GPL-2.0
/*
 * What a registration may make the kernel allocate, and whose budget its
 * tables use (sframe.rst, "Pinned memory"):
 *
 * - an ELF section whose table would pass the user's limit is refused
 *   before the kernel copies it or allocates anything for it;
 * - an accepted one costs, while it is converted, no more than the bound
 *   sframe.rst states: the section's bytes, 20 bytes per descriptor and
 *   8 per row, and the rules' scratch buffer;
 * - tables are charged to a count of their own, so that a user's
 *   RLIMIT_MEMLOCK stays whole for io_uring's registered buffers.
 *
 * The memory is read from the peak of a memory cgroup that the child
 * joins just before the call: what the kernel allocated for the call,
 * whatever it freed before returning.
 */
#include <sys/resource.h>
#include <sys/uio.h>

#include <linux/io_uring.h>

#include "sframe_test.h"

#define PINNED_SYSCTL	"/proc/sys/kernel/sframe_user_pinned_kb"
#define NOBODY		65534
#define MIB		(1UL << 20)

/* Rows per function: as many as a converted table allows one. */
#define ROWS_PER_FUNC	65535U
/* A row: a 2-byte start, its info byte and a 1-byte CFA offset. */
#define ROW_BYTES	4U
#define FDE_BYTES	20U
#define HDR_BYTES	28U
/* The scratch buffer of a conversion of this many rows (sframe_table.h). */
#define SCRATCH_BYTES	(65536L * 16 + 65536L * 4)
/* struct sframe_table, and what else a registration allocates. */
#define FIXED_BYTES	(64L << 10)

static void put(unsigned char **p, unsigned long long v, unsigned int n)
{
	while (n--) {
		*(*p)++ = v;
		v >>= 8;
	}
}

/*
 * A valid version 2 section of @funcs functions of ROWS_PER_FUNC rows,
 * each CFA = SP + 8, in @buf: the size it takes.
 */
static size_t section_fill(unsigned char *buf, unsigned int funcs)
{
	size_t fres = (size_t)funcs * ROWS_PER_FUNC * ROW_BYTES;
	unsigned char *p = buf;
	unsigned int f, r;

	put(&p, 0xdee2, 2);
	put(&p, 2, 1);					/* version */
	put(&p, 1, 1);					/* FDEs sorted */
	put(&p, 3, 1);					/* AMD64 LE */
	put(&p, 0, 1);
	put(&p, 0xf8, 1);				/* RA at CFA - 8 */
	put(&p, 0, 1);
	put(&p, funcs, 4);
	put(&p, (unsigned long long)funcs * ROWS_PER_FUNC, 4);
	put(&p, fres, 4);
	put(&p, 0, 4);
	put(&p, (unsigned long long)funcs * FDE_BYTES, 4);
	for (f = 0; f < funcs; f++) {
		put(&p, 0x100000 + (unsigned long long)f * ROWS_PER_FUNC, 4);
		put(&p, ROWS_PER_FUNC, 4);
		put(&p, (unsigned long long)f * ROWS_PER_FUNC * ROW_BYTES, 4);
		put(&p, ROWS_PER_FUNC, 4);
		put(&p, 1, 1);				/* 2-byte starts */
		put(&p, 0, 3);
	}
	for (f = 0; f < funcs; f++) {
		for (r = 0; r < ROWS_PER_FUNC; r++) {
			put(&p, r, 2);
			put(&p, 0x03, 1);		/* SP, one 1-byte word */
			put(&p, 8, 1);
		}
	}
	return p - buf;
}

static size_t section_size(unsigned int funcs)
{
	return HDR_BYTES + (size_t)funcs * (FDE_BYTES +
					    ROWS_PER_FUNC * ROW_BYTES);
}

/* A section of @funcs functions and an executable text range for it. */
struct section {
	unsigned char *buf;
	size_t size;
	void *text;
	size_t text_size;
	unsigned int funcs;
};

static int section_make(struct section *s, unsigned int funcs)
{
	s->funcs = funcs;
	s->buf = mmap(NULL, section_size(funcs), PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->buf == MAP_FAILED)
		return -errno;
	s->size = section_fill(s->buf, funcs);
	s->text_size = page_size();
	s->text = mmap(NULL, s->text_size, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return s->text == MAP_FAILED ? -errno : 0;
}

static int section_register(const struct section *s)
{
	return elf_register((unsigned long)s->buf, s->size,
			    (unsigned long)s->text,
			    (unsigned long)s->text + s->text_size);
}

/*
 * In a child: join a memory cgroup of its own, made empty, so that its
 * peak is what the kernel allocates from then on; with @nobody, become
 * uid 65534 with no capabilities.  The peak's value before the call,
 * or -1.
 */
static long child_enter(const char *dir, bool nobody)
{
	if (memcg_join(dir))
		return -1;
	if (nobody && (setgid(NOBODY) || setuid(NOBODY)))
		return -1;
	return cg_read(dir, "memory.peak");
}

FIXTURE(pinned) {
	char dir[128];
	char saved[32];
};

FIXTURE_SETUP(pinned)
{
	int err;

	if (sframe_skip(_metadata))
		return;
	err = memcg_make(self->dir, sizeof(self->dir), "pinned");
	if (err)
		SKIP(return, "no memory cgroup: %s", strerror(-err));
	/* A kernel that charges RLIMIT_MEMLOCK has no limit of its own. */
	err = sysctl_read(PINNED_SYSCTL, self->saved, sizeof(self->saved));
	if (err == -ENOENT) {
		self->saved[0] = '\0';
		TH_LOG("no %s", PINNED_SYSCTL);
		return;
	}
	ASSERT_EQ(0, err);
	/* What sframe.rst gives as the default. */
	ASSERT_EQ(0, sysctl_write(PINNED_SYSCTL, "16384"));
}

FIXTURE_TEARDOWN(pinned)
{
	if (self->saved[0])
		sysctl_write(PINNED_SYSCTL, self->saved);
	rmdir(self->dir);
}

/*
 * 64 functions of 65,535 rows: a 16 MiB section whose table would take
 * 32 MiB, twice the limit.  The kernel reads its header, charges, and
 * stops: its copy of the section, its table and the table's scratch are
 * never allocated.
 */
TEST_F(pinned, section_past_the_limit_is_refused_before_it_is_copied)
{
	struct section s;
	long before, peak;
	pid_t pid;

	ASSERT_EQ(0, section_make(&s, 64));
	ASSERT_LT(15 * MIB, s.size);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		before = child_enter(self->dir, true);
		CHILD_EXPECT(before >= 0);
		CHILD_EXPECT(section_register(&s) == -ENOMEM);
		peak = cg_read(self->dir, "memory.peak");
		fprintf(stderr, "# %ld bytes at the peak of a refused call\n",
			peak - before);
		CHILD_EXPECT(peak - before <= MEMCG_SLACK + FIXED_BYTES);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
}

/*
 * Four functions of 65,535 rows, 1 MiB: registered, its conversion may
 * hold the section's copy, the table (20 bytes a descriptor, 8 a row)
 * and the scratch for its rules at once, and nothing more.
 */
TEST_F(pinned, conversion_holds_no_more_than_the_stated_bound)
{
	struct section s;
	long before, peak, bound;
	pid_t pid;

	ASSERT_EQ(0, section_make(&s, 4));
	bound = s.size + FDE_BYTES * s.funcs +
		8L * s.funcs * ROWS_PER_FUNC + SCRATCH_BYTES + FIXED_BYTES +
		MEMCG_SLACK;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		before = child_enter(self->dir, true);
		CHILD_EXPECT(before >= 0);
		CHILD_EXPECT(section_register(&s) == 0);
		peak = cg_read(self->dir, "memory.peak");
		fprintf(stderr, "# %ld bytes at the peak, %ld allowed\n",
			peak - before, bound);
		CHILD_EXPECT(peak - before <= bound);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
}

static int io_uring_buffer(void *buf, size_t size)
{
	struct io_uring_params p = { 0 };
	struct iovec iov = { buf, size };
	int fd, ret;

	fd = syscall(__NR_io_uring_setup, 1, &p);
	if (fd < 0)
		return -errno;
	ret = syscall(__NR_io_uring_register, fd, IORING_REGISTER_BUFFERS,
		      &iov, 1);
	ret = ret < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * A user with Debian's 8 MiB RLIMIT_MEMLOCK registers a JIT registry of
 * 4 MiB and an ELF section whose table takes 2 MiB, then an io_uring
 * buffer of the whole 8 MiB: the tables have a budget of their own.
 */
TEST_F(pinned, tables_leave_the_memlock_limit_to_io_uring)
{
	struct rlimit rl = { 8 * MIB, 8 * MIB };
	struct sframe_jit_header *h;
	struct section s;
	char *arena, *buf;
	pid_t pid;
	int ret;

	ASSERT_EQ(0, section_make(&s, 4));
	arena = arena_reserve(16);
	ASSERT_NE(MAP_FAILED, arena);
	buf = mmap(NULL, 8 * MIB, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		CHILD_EXPECT(!setrlimit(RLIMIT_MEMLOCK, &rl));
		CHILD_EXPECT(!setgid(NOBODY) && !setuid(NOBODY));
		CHILD_EXPECT(jit_register((unsigned long)arena,
					  (unsigned long)arena + 16 * page_size(),
					  1U << 16, 1U << 17, &h) == 0);
		CHILD_EXPECT(h->map_size >= 3 * MIB);
		CHILD_EXPECT(section_register(&s) == 0);
		ret = io_uring_buffer(buf, 8 * MIB);
		if (ret)
			fprintf(stderr, "# io_uring buffer: %s\n",
				strerror(-ret));
		CHILD_EXPECT(ret == 0);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
}

TEST_HARNESS_MAIN
