// SPDX-License-Identifier: GPL-2.0
/*
 * ELF section copies are charged to the user's tables, once per copy:
 * processes of one user that map the same section of the same file, and
 * forked children, share one copy; a copy of the file, or another user,
 * gets a copy of its own, charged again.  The charge is the table the
 * copy is converted into, not the section's bytes.
 *
 * Each test runs with kernel.sframe_user_pinned_kb at 0 and no
 * CAP_IPC_LOCK, in this process and in what it execs: any new charge
 * fails there, so a registration that succeeds charged nothing.  This
 * program carries a PT_GNU_SFRAME segment, registered at its exec while
 * the limit was not yet lowered; a process that execs it again finds
 * out with EXEC_CHECK whether binfmt_elf registered its section
 * (sframe_register(2) of it then fails with EEXIST) or could not for
 * want of room (it fails with ENOMEM).
 */
#include "sframe_test.h"

#define PINNED_SYSCTL		"/proc/sys/kernel/sframe_user_pinned_kb"
#define EXEC_CHECK		"--sframe-elf-charge-check"
#define FORKS			100
#define NOBODY			65534

#ifndef MFD_EXEC
#define MFD_EXEC		0x0010U
#endif

/* What the exec'd program reports through its exit status. */
enum exec_result {
	EXEC_REGISTERED,	/* binfmt_elf registered the section */
	EXEC_NO_MEMORY,		/* it did not, and registering it is ENOMEM */
	EXEC_OTHER,		/* anything else */
	EXEC_FAILED = 20,	/* the exec itself failed */
};

/*
 * In the exec'd image: was the section registered at exec?  With a
 * descriptor in @wait_fd, stay until it reads end of file, so that the
 * copy stays in use.
 */
static int exec_check(const char *wait_fd)
{
	struct self_sframe me;
	char c;
	int ret;

	if (!self_sframe_find(&me))
		return EXEC_OTHER;
	ret = self_elf_register(&me);
	if (wait_fd)
		while (read(atoi(wait_fd), &c, 1) > 0)
			;
	if (ret == -EEXIST)
		return EXEC_REGISTERED;
	return ret == -ENOMEM ? EXEC_NO_MEMORY : EXEC_OTHER;
}

/* The users' limit at @bytes, or at 4 GiB with PINNED_MAX. */
#define PINNED_MAX		(4UL << 30)

static int pinned_set(unsigned long bytes)
{
	char kb[32];

	snprintf(kb, sizeof(kb), "%lu", bytes >> 10);
	return sysctl_write(PINNED_SYSCTL, kb);
}

/* A copy of this program in a memfd: the same bytes, another inode. */
static int self_copy_fd(void)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open("/proc/self/exe", O_RDONLY);
	if (in < 0)
		return -1;
	out = memfd_create("elf_charge_copy", MFD_EXEC);
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	close(in);
	if (out >= 0 && n < 0) {
		close(out);
		out = -1;
	}
	return out;
}

/* Run @path with EXEC_CHECK in a child; its exit status, or -1. */
/*
 * In a child: as @uid (0: unchanged) and, with @nfre, with a JIT
 * registry of one descriptor and @nfre rows for a page at @arena, exec
 * @path with EXEC_CHECK.  Its exit status, or -1.
 */
static int exec_child(const char *path, uid_t uid, char *arena,
		      unsigned int nfre)
{
	struct sframe_jit_header *h;
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (uid && setuid(uid))
			_exit(EXEC_FAILED);
		/* Mapped: the mapping alone keeps it until the exec. */
		if (nfre && jit_register((unsigned long)arena,
					 (unsigned long)arena + page_size(),
					 1, nfre, &h))
			_exit(EXEC_OTHER);
		execl(path, "elf_charge_test", EXEC_CHECK, (char *)NULL);
		_exit(EXEC_FAILED);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int exec_result(const char *path, uid_t uid)
{
	return exec_child(path, uid, NULL, 0);
}

/*
 * The charges of exec are those of kernel.sframe_exec_eager at 1, which
 * each test sets: exec builds the tables of the sections it registers.
 */
FIXTURE(elf_charge) {
	char saved[32];
	char saved_eager[16];
	bool restore;
	bool restore_eager;
	struct self_sframe me;
};

FIXTURE_SETUP(elf_charge)
{
	int ret;

	if (sframe_skip(_metadata))
		return;
	if (!self_sframe_find(&self->me))
		SKIP(return, NO_SFRAME_SEGMENT);
	if (self_elf_register(&self->me) != -EEXIST)
		SKIP(return, "binfmt_elf did not register this program");
	if (sysctl_read(PINNED_SYSCTL, self->saved, sizeof(self->saved)))
		SKIP(return, "cannot read %s", PINNED_SYSCTL);
	if (sysctl_read(EXEC_EAGER_SYSCTL, self->saved_eager,
			sizeof(self->saved_eager)) ||
	    sysctl_write(EXEC_EAGER_SYSCTL, "1"))
		SKIP(return, "cannot set %s (not root?)", EXEC_EAGER_SYSCTL);
	self->restore_eager = true;
	if (pinned_set(0))
		SKIP(return, "cannot write %s (not root?)", PINNED_SYSCTL);
	self->restore = true;
	ret = drop_cap_ipc_lock(true);
	if (ret)
		SKIP(return, "cannot drop CAP_IPC_LOCK: %s", strerror(-ret));
}

FIXTURE_TEARDOWN_PARENT(elf_charge)
{
	if (self->restore)
		EXPECT_EQ(0, sysctl_write(PINNED_SYSCTL, self->saved));
	if (self->restore_eager)
		EXPECT_EQ(0, sysctl_write(EXEC_EAGER_SYSCTL, self->saved_eager));
}

/* A copy of a section in anonymous memory is charged, and refused. */
TEST_F(elf_charge, copy_is_charged_to_the_users_tables)
{
	struct sframe_copy c;

	if (sframe_copy_make(&self->me, &c, true))
		SKIP(return, NO_SFRAME_COPY);
	EXPECT_EQ(-ENOMEM, copy_elf_register(&c));
	EXPECT_FALSE(range_is_registered(c.text_start, c.text_end));
	ASSERT_EQ(0, pinned_set(PINNED_MAX));
	EXPECT_EQ(0, copy_elf_register(&c));
}

/* Exec'ing the same file again shares this process's copy. */
TEST_F(elf_charge, exec_of_the_same_file_shares_its_copy)
{
	EXPECT_EQ(EXEC_REGISTERED, exec_result("/proc/self/exe", 0));
}

/* The same bytes in another file make a copy of their own. */
TEST_F(elf_charge, exec_of_a_copy_of_the_file_is_charged)
{
	char path[64];
	int fd = self_copy_fd();

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	EXPECT_EQ(EXEC_NO_MEMORY, exec_result(path, 0));
	ASSERT_EQ(0, pinned_set(PINNED_MAX));
	EXPECT_EQ(EXEC_REGISTERED, exec_result(path, 0));
	close(fd);
}

/*
 * By default (kernel.sframe_exec_eager 0) exec takes the range and
 * charges nothing: at the limit, the copy that eager exec is refused
 * (the test above) is registered all the same, its table left for a
 * sample to build.
 */
TEST_F(elf_charge, exec_with_tables_built_on_demand_charges_nothing)
{
	char path[64];
	int fd = self_copy_fd();

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ASSERT_EQ(0, sysctl_write(EXEC_EAGER_SYSCTL, "0"));
	EXPECT_EQ(EXEC_REGISTERED, exec_result(path, 0));
	ASSERT_EQ(0, sysctl_write(EXEC_EAGER_SYSCTL, "1"));
	EXPECT_EQ(EXEC_NO_MEMORY, exec_result(path, 0));
	close(fd);
}

/* Another user's exec of the same file is charged to that user. */
TEST_F(elf_charge, copies_are_not_shared_between_users)
{
	int ret = exec_result("/proc/self/exe", NOBODY);

	if (ret == EXEC_FAILED)
		SKIP(return, "user %d cannot run this program", NOBODY);
	EXPECT_EQ(EXEC_NO_MEMORY, ret);
}

/* The offset in its file of the byte at @addr, from /proc/self/maps. */
static int file_pos(unsigned long addr, unsigned long *pos)
{
	unsigned long lo, hi, off;
	char line[512];
	FILE *f;
	int ret = -ENOENT;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    lo <= addr && addr < hi) {
			*pos = off + (addr - lo);
			ret = 0;
		}
	fclose(f);
	return ret;
}

/*
 * The executable's section, mapped from its file at the place of @c's
 * copy, privately and writable: a registration of it has the key of
 * binfmt_elf's.
 */
static int map_file_section(const struct self_sframe *me,
			    struct sframe_copy *c)
{
	unsigned long lo = page_down((unsigned long)c->sframe);
	unsigned long hi = page_up((unsigned long)c->sframe + c->sframe_size);
	unsigned long pos;
	void *p;
	int fd, ret;

	ret = file_pos(me->sframe_start, &pos);
	if (ret)
		return ret;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return -errno;
	p = mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED, fd,
		 pos - ((unsigned long)c->sframe - lo));
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * The same file's section with the same bytes shares the copy made at
 * exec, and is charged nothing; one byte changed, it gets a copy of its
 * own, charged, and refused.
 */
TEST_F(elf_charge, a_changed_byte_is_not_shared)
{
	struct sframe_copy c;
	int ret;

	if (sframe_copy_make(&self->me, &c, true))
		SKIP(return, NO_SFRAME_COPY);
	ret = map_file_section(&self->me, &c);
	ASSERT_EQ(0, ret) TH_LOG("%s", strerror(-ret));
	EXPECT_EQ(0, copy_elf_register(&c));
	EXPECT_EQ(0, copy_elf_unregister(&c));
	c.sframe[c.sframe_size - 1] ^= 1;
	EXPECT_EQ(-ENOMEM, copy_elf_register(&c));
	EXPECT_FALSE(range_is_registered(c.text_start, c.text_end));
}

/*
 * A version 2 section of @nr functions of one byte each, from the start
 * of @c's text, each with one row of the same rule (CFA = SP + 8, the RA
 * at CFA - 8), written at @sec, which has room for sec_bytes(@nr).
 */
#define SEC_FDE		20
#define SEC_FRE		3

static size_t sec_bytes(unsigned int nr)
{
	return 28 + (size_t)nr * (SEC_FDE + SEC_FRE);
}

static unsigned char *sec_put(unsigned char *p, unsigned long v, int bytes)
{
	while (bytes--) {
		*p++ = v;
		v >>= 8;
	}
	return p;
}

static void sec_fill(unsigned char *sec, const struct sframe_copy *c,
		     unsigned int nr)
{
	unsigned char *p = sec;
	unsigned int i;

	p = sec_put(p, 0xdee2, 2);		/* magic */
	p = sec_put(p, 2, 1);			/* version */
	p = sec_put(p, 1, 1);			/* descriptors sorted */
	p = sec_put(p, 3, 1);			/* AMD64, little-endian */
	p = sec_put(p, 0, 1);			/* FP not fixed */
	p = sec_put(p, 0xf8, 1);		/* RA at CFA - 8 */
	p = sec_put(p, 0, 1);
	p = sec_put(p, nr, 4);
	p = sec_put(p, nr, 4);
	p = sec_put(p, (unsigned long)nr * SEC_FRE, 4);
	p = sec_put(p, 0, 4);
	p = sec_put(p, (unsigned long)nr * SEC_FDE, 4);
	for (i = 0; i < nr; i++) {
		p = sec_put(p, c->text_start + i - (unsigned long)sec, 4);
		p = sec_put(p, 1, 4);		/* one byte */
		p = sec_put(p, i * SEC_FRE, 4);
		p = sec_put(p, 1, 4);		/* one row */
		p = sec_put(p, 0, 4);		/* 1-byte starts, padding */
	}
	for (i = 0; i < nr; i++) {
		p = sec_put(p, 0, 1);		/* at the function's start */
		p = sec_put(p, 0x03, 1);	/* SP-based, one 1-byte word */
		p = sec_put(p, 8, 1);
	}
}

/*
 * The fewest pages of the users' limit, up to 4 GiB, with which the
 * section at @sec registers, with what the user has charged already, or
 * a negative errno.
 */
static long sec_min_limit(unsigned char *sec, unsigned int nr,
			  const struct sframe_copy *c)
{
	unsigned long lo = 0, hi, top, mid;
	int ret;

	hi = (PINNED_MAX >> 12) + 1;
	top = hi;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		ret = pinned_set(mid * 4096);
		if (ret)
			return ret;
		ret = elf_register((unsigned long)sec, sec_bytes(nr),
				   c->text_start, c->text_start + nr);
		if (ret == -ENOMEM) {
			lo = mid + 1;
			continue;
		}
		if (!ret)
			ret = elf_unregister((unsigned long)sec);
		if (ret)
			return ret;
		hi = mid;
	}
	return lo < top ? (long)lo : -ENOMEM;
}

/*
 * The charge of a section copy is its table: a struct sframe_table_func
 * and a start address per function, 20 bytes, and a struct
 * sframe_table_row per row, 8, its rules kept once; not the section's
 * bytes, 23 per function here.  2048 more functions of one row each, all
 * of one rule, take 2048 * 28 bytes, 14 pages (one either way for the
 * rounding of each charge), where the bytes would add 11.5 pages more.
 */
#define SEC_FUNCS	2048

TEST_F(elf_charge, the_charge_is_the_table_not_the_bytes)
{
	long one, two, pages = SEC_FUNCS * (20 + 8) / 4096;
	unsigned char *sec;
	struct sframe_copy c;

	if (sframe_copy_make(&self->me, &c, true))
		SKIP(return, NO_SFRAME_COPY);
	if (c.text_end - c.text_start < 2 * SEC_FUNCS)
		SKIP(return, "text of %lu bytes", c.text_end - c.text_start);
	sec = mmap(NULL, sec_bytes(2 * SEC_FUNCS), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sec);
	sec_fill(sec, &c, SEC_FUNCS);
	one = sec_min_limit(sec, SEC_FUNCS, &c);
	ASSERT_LE(0, one) TH_LOG("%s", strerror(-one));
	sec_fill(sec, &c, 2 * SEC_FUNCS);
	two = sec_min_limit(sec, 2 * SEC_FUNCS, &c);
	ASSERT_LE(0, two) TH_LOG("%s", strerror(-two));
	EXPECT_LE(pages - 1, two - one) TH_LOG("%ld pages", two - one);
	EXPECT_GE(pages + 1, two - one) TH_LOG("%ld pages", two - one);
}

/*
 * At the limit, a hundred forks and a hundred execs of this program,
 * all alive at once, each registered: none of them was charged.
 */
TEST_F_TIMEOUT(elf_charge, forks_and_execs_at_the_limit_charge_nothing, 600)
{
	struct sframe_copy c;
	int i, status, pipefd[2];
	char fd[16];
	pid_t pids[FORKS];

	if (sframe_copy_make(&self->me, &c, true))
		SKIP(return, NO_SFRAME_COPY);
	ASSERT_EQ(0, pipe(pipefd));
	snprintf(fd, sizeof(fd), "%d", pipefd[0]);
	for (i = 0; i < FORKS; i++) {
		fflush(stdout);
		fflush(stderr);
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			close(pipefd[1]);
			if (self_elf_register(&self->me) != -EEXIST)
				_exit(EXEC_OTHER);
			execl("/proc/self/exe", "elf_charge_test", EXEC_CHECK,
			      fd, (char *)NULL);
			_exit(EXEC_FAILED);
		}
	}
	/* With all of them alive, a new copy still does not fit. */
	EXPECT_EQ(-ENOMEM, copy_elf_register(&c));
	close(pipefd[1]);
	for (i = 0; i < FORKS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(EXEC_REGISTERED, WEXITSTATUS(status))
			TH_LOG("child %d", i);
	}
}

/*
 * The fewest pages of the users' limit with which an exec of @path, a
 * copy of this program that no process runs, registers its section.
 */
static long exec_min_limit(const char *path)
{
	unsigned long lo = 0, hi = 1UL << 16;
	int ret;

	while (lo < hi) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (pinned_set(mid * 4096))
			return -EIO;
		ret = exec_result(path, 0);
		if (ret == EXEC_NO_MEMORY)
			lo = mid + 1;
		else if (ret == EXEC_REGISTERED)
			hi = mid;
		else
			return -EINVAL;
	}
	return lo;
}

/*
 * A process with a registry execs a program whose section needs a copy
 * of its own, at a limit one page short of both: the old image's
 * registry is gone, and uncharged, by the time binfmt_elf charges the
 * new image's section, not once the file of its mapping is put after the
 * exec.
 */
TEST_F(elf_charge, exec_no_longer_counts_the_old_images_registry)
{
	struct sframe_jit_header *h;
	long limit, pages;
	char path[64], *arena;
	int fd = self_copy_fd();

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	arena = arena_reserve(1);
	ASSERT_NE(MAP_FAILED, arena);
	ASSERT_EQ(0, pinned_set(PINNED_MAX));
	ASSERT_EQ(0, jit_register((unsigned long)arena,
				  (unsigned long)arena + page_size(), 1,
				  1U << 14, &h));
	pages = h->map_size / 4096;
	ASSERT_EQ(0, munmap(h, h->map_size));

	limit = exec_min_limit(path);
	ASSERT_LT(0, limit);
	ASSERT_EQ(0, pinned_set((limit + pages - 1) * 4096));
	EXPECT_EQ(EXEC_REGISTERED, exec_child(path, 0, arena, 1U << 14))
		TH_LOG("%ld pages of registry, %ld for the exec", pages,
		       limit);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], EXEC_CHECK))
		return exec_check(argc > 2 ? argv[2] : NULL);
	/* The tests share this program's copy, made at its exec. */
	reexec_with_eager_tables(argv);
	return test_harness_run(argc, argv);
}
