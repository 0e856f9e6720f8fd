// SPDX-License-Identifier: GPL-2.0
/*
 * Every allocation of every registration path fails in turn (fail-nth,
 * Documentation/fault-injection/fault-injection.rst): each call either
 * succeeds or returns its documented error, and leaves the process's
 * registrations as they were; the debug kernel's KASAN sees that no
 * freed entry stays reachable, kmemleak that nothing is left behind.
 * A failure fail-nth injects is one: an allocator that retries, as the
 * maple tree does, gets past it.  So removal is also tried with every
 * allocation of this thread failing (make-it-fail, with the
 * probability at 100 for the tasks that ask).
 *
 * It needs CONFIG_FAULT_INJECTION with FAILSLAB and FAIL_PAGE_ALLOC and
 * their debugfs knobs (mk/debug.config), and skips without them.
 */
#include <sys/mount.h>
#include <sys/rseq.h>

#include "sframe_test.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DEBUGFS		"/sys/kernel/debug"
/* More than any path here allocates, so that the loops end. */
#define MAX_NTH		400

/*
 * Have fail-nth reach the allocations that may sleep (every one here),
 * of any order, without a report per injected failure.
 */
static int fault_knobs_set(void)
{
	static const char *const knobs[][2] = {
		{ "failslab/ignore-gfp-wait", "N" },
		{ "failslab/verbose", "0" },
		{ "fail_page_alloc/ignore-gfp-wait", "N" },
		{ "fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "fail_page_alloc/min-order", "0" },
		{ "fail_page_alloc/verbose", "0" },
		/* Everything fails for a thread with make-it-fail, only. */
		{ "failslab/task-filter", "Y" },
		{ "failslab/probability", "100" },
		{ "failslab/interval", "1" },
		{ "failslab/times", "-1" },
		{ "fail_page_alloc/task-filter", "Y" },
		{ "fail_page_alloc/probability", "100" },
		{ "fail_page_alloc/interval", "1" },
		{ "fail_page_alloc/times", "-1" },
	};
	char path[128];
	unsigned int i;
	int err;

	if (access(FAIL_NTH, W_OK))
		return -ENOENT;
	if (access(DEBUGFS "/failslab", F_OK))
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		snprintf(path, sizeof(path), DEBUGFS "/%s", knobs[i][0]);
		err = sysctl_write(path, knobs[i][1]);
		if (err)
			return err;
	}
	return 0;
}

static void fail_nth_set(unsigned int nth)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", nth);
	sysctl_write(FAIL_NTH, buf);
}

/* Was the failure set up by fail_nth_set() injected?  Disarms it. */
static bool fail_nth_fired(void)
{
	char buf[16] = "";
	bool fired;

	sysctl_read(FAIL_NTH, buf, sizeof(buf));
	fired = atoi(buf) == 0;
	sysctl_write(FAIL_NTH, "0");
	return fired;
}

/* A small valid section: one function of two rows, in its own page. */
static const unsigned char small_section[] = {
	0xe2, 0xde, 2, 1, 3, 0, 0xf8, 0,	/* magic, v2, sorted, AMD64 */
	1, 0, 0, 0,				/* one descriptor */
	2, 0, 0, 0,				/* two rows */
	6, 0, 0, 0,				/* of 3 bytes each */
	0, 0, 0, 0,				/* descriptors at 0 */
	20, 0, 0, 0,				/* rows after them */
	0x00, 0x10, 0, 0,			/* start: section + 0x1000 */
	0x10, 0, 0, 0,				/* 16 bytes */
	0, 0, 0, 0,				/* rows at 0 */
	2, 0, 0, 0,				/* two of them */
	0, 0, 0, 0,				/* 1-byte starts */
	0, 0x03, 8,				/* at 0: CFA = SP + 8 */
	1, 0x03, 16,				/* at 1: CFA = SP + 16 */
};

FIXTURE(fault) {
	int make_it_fail;
	char *arena;
	unsigned long start;
	unsigned long end;
	unsigned char *sec;
	char *text;
};

FIXTURE_SETUP(fault)
{
	int err;

	if (sframe_skip(_metadata))
		return;
	err = fault_knobs_set();
	if (err)
		SKIP(return, "no fail-nth fault injection: %s",
		     strerror(-err));
	/* Open now: opening it later, failing, would allocate. */
	self->make_it_fail = open("/proc/thread-self/make-it-fail", O_WRONLY);
	ASSERT_LE(0, self->make_it_fail);
	self->arena = arena_reserve(64);
	ASSERT_NE(MAP_FAILED, self->arena);
	self->start = (unsigned long)self->arena;
	self->end = self->start + 16 * page_size();
	self->sec = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sec);
	memcpy(self->sec, small_section, sizeof(small_section));
	self->text = mmap(NULL, page_size(), PROT_READ | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->text);
}

FIXTURE_TEARDOWN(fault)
{
	sysctl_write(FAIL_NTH, "0");
	if (self->make_it_fail > 0)
		close(self->make_it_fail);
}

/* Every allocation of this thread fails from now on, or none. */
static void all_fail(struct _test_data_fault *self, bool on)
{
	if (pwrite(self->make_it_fail, on ? "1" : "0", 1, 0) != 1)
		abort();
}

static int elf_add(struct _test_data_fault *self)
{
	return elf_register((unsigned long)self->sec, sizeof(small_section),
			    (unsigned long)self->text,
			    (unsigned long)self->text + page_size());
}

static int elf_remove(struct _test_data_fault *self)
{
	return elf_unregister((unsigned long)self->sec);
}

/*
 * Is the JIT range free?  Found by registering it, which is undone:
 * jit_register() without a mapping closes the registry's descriptor,
 * which unregisters it.
 */
static bool jit_range_free(struct _test_data_fault *self)
{
	return jit_register(self->start, self->end, 1, 1, NULL) == 0;
}

/*
 * sframe_register(2): registered, or ENOMEM and not registered; a
 * failed call's copy is gone (kmemleak), a registered one removable.
 */
TEST_F(fault, elf_registration_fails_whole_at_every_allocation)
{
	unsigned int nth, fired = 0;
	bool more = true;
	int ret;

	for (nth = 1; more && nth <= MAX_NTH; nth++) {
		fail_nth_set(nth);
		ret = elf_add(self);
		more = fail_nth_fired();
		fired += more;
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", nth);
			ASSERT_EQ(-ENOENT, elf_remove(self));
		} else {
			ASSERT_EQ(0, elf_remove(self)) TH_LOG("allocation %u", nth);
		}
	}
	ASSERT_FALSE(more);
	ASSERT_LT(0U, fired);
}

/*
 * sframe_jit_open(2) and the mmap() of its file: mapped and registered,
 * or ENOMEM with neither (the helper closes the descriptor of a
 * registry it could not map, which unregisters it).
 */
TEST_F(fault, jit_open_and_map_fail_whole)
{
	struct sframe_jit_header *h;
	unsigned int nth;
	bool more = true;
	int ret;

	for (nth = 1; more && nth <= MAX_NTH; nth++) {
		fail_nth_set(nth);
		ret = jit_register(self->start, self->end, 16, 16, &h);
		more = fail_nth_fired();
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", nth);
			ASSERT_TRUE(jit_range_free(self));
			continue;
		}
		ASSERT_TRUE(range_is_registered(self->start, self->end));
		ASSERT_EQ(0, munmap(h, h->map_size));
		ASSERT_TRUE(jit_range_free(self)) TH_LOG("allocation %u", nth);
	}
	ASSERT_FALSE(more);
}

/*
 * SFRAME_JIT_REPLACE: the new registry or the old one is registered,
 * never none.  Only the call is under fail-nth: a new registry left
 * unmapped and closed would be unregistered by design.
 */
TEST_F(fault, jit_replacement_fails_whole)
{
	struct sframe_jit_header *h;
	int ret, fd, nfd;
	unsigned int nth;
	bool more = true;

	for (nth = 1; more && nth <= MAX_NTH; nth++) {
		ASSERT_EQ(0, jit_register_fd(self->start, self->end, 16, 16,
					     &h, &fd));
		nfd = -1;
		fail_nth_set(nth);
		ret = jit_replace(fd, self->start, self->end, 64, 64, NULL,
				  &nfd);
		more = fail_nth_fired();
		ASSERT_TRUE(range_is_registered(self->start, self->end));
		if (ret)
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", nth);
		/* The old mapping unregisters only what it still holds. */
		ASSERT_EQ(0, munmap(h, h->map_size));
		EXPECT_EQ(ret == 0, range_is_registered(self->start,
							self->end))
			TH_LOG("allocation %u", nth);
		if (nfd >= 0)
			close(nfd);
		close(fd);
		ASSERT_TRUE(jit_range_free(self)) TH_LOG("allocation %u", nth);
	}
	ASSERT_FALSE(more);
}

/*
 * SFRAME_JIT_COPY from a registry no longer registered (unmapped, its
 * descriptor kept, as a forked child's inherited one is): a registered
 * copy with the source's count, or ENOMEM and the range free.
 */
TEST_F(fault, jit_copy_fails_whole)
{
	struct sframe_jit_header *src, *h;
	unsigned int nth;
	bool more = true;
	int ret, fd, cfd;

	ASSERT_EQ(0, jit_register_fd(self->start, self->end, 16, 32, &src,
				     &fd));
	jit_fill(src, self->start, 16, 1);
	ASSERT_EQ(0, munmap(src, src->map_size));
	for (nth = 1; more && nth <= MAX_NTH; nth++) {
		cfd = -1;
		fail_nth_set(nth);
		ret = jit_copy(fd, self->start, self->end, 16, 32, NULL, &cfd);
		more = fail_nth_fired();
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", nth);
			ASSERT_TRUE(jit_range_free(self));
			continue;
		}
		ASSERT_TRUE(range_is_registered(self->start, self->end));
		ASSERT_EQ(0, jit_map(cfd, &h));
		EXPECT_EQ(16U, h->fde_count);
		ASSERT_EQ(0, munmap(h, h->map_size));
		close(cfd);
		ASSERT_TRUE(jit_range_free(self)) TH_LOG("allocation %u", nth);
	}
	ASSERT_FALSE(more);
	close(fd);
}

/*
 * Removal cannot fail: sframe_unregister(2), the munmap() of a registry
 * and the close() of a registry never mapped take the entry out of the
 * index whatever allocation fails, and the range is free again.  Were
 * an entry left in the index, freed, the next lookup of the range would
 * read it (KASAN).
 */
TEST_F(fault, removal_cannot_fail_at_any_allocation)
{
	struct sframe_jit_header *h;
	unsigned int nth;
	bool more = true;
	int fd;

	for (nth = 1; more && nth <= MAX_NTH; nth++) {
		ASSERT_EQ(0, elf_add(self));
		ASSERT_EQ(0, jit_register(self->start, self->end, 16, 16, &h));
		fail_nth_set(nth);
		ASSERT_EQ(0, elf_remove(self)) TH_LOG("allocation %u", nth);
		more = fail_nth_fired();
		fail_nth_set(nth);
		ASSERT_EQ(0, munmap(h, h->map_size));
		more |= fail_nth_fired();
		ASSERT_EQ(-ENOENT, elf_remove(self));
		ASSERT_TRUE(jit_range_free(self)) TH_LOG("allocation %u", nth);

		ASSERT_EQ(0, jit_register_fd(self->start, self->end, 16, 16,
					     NULL, &fd));
		fail_nth_set(nth);
		ASSERT_EQ(0, close(fd));
		more |= fail_nth_fired();
		ASSERT_TRUE(jit_range_free(self)) TH_LOG("allocation %u", nth);
	}
	ASSERT_FALSE(more);
}

/*
 * With every allocation failing, not once but each time it is tried:
 * sframe_unregister(2) still removes the entry, close() of a registry
 * never mapped unregisters it, and munmap() of a registry removes its
 * registration if it unmaps it at all (it may itself fail with ENOMEM,
 * leaving both as they were).
 */
TEST_F(fault, removal_succeeds_when_every_allocation_fails)
{
	struct sframe_jit_header *h;
	int ret, i, fd;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, elf_add(self));
		all_fail(self, true);
		ret = elf_remove(self);
		all_fail(self, false);
		ASSERT_EQ(0, ret);
		ASSERT_EQ(-ENOENT, elf_remove(self));

		ASSERT_EQ(0, jit_register_fd(self->start, self->end, 16, 16,
					     NULL, &fd));
		all_fail(self, true);
		ret = close(fd) ? -errno : 0;
		all_fail(self, false);
		ASSERT_EQ(0, ret);
		ASSERT_TRUE(jit_range_free(self));

		ASSERT_EQ(0, jit_register(self->start, self->end, 16, 16, &h));
		all_fail(self, true);
		ret = munmap(h, h->map_size) ? -errno : 0;
		all_fail(self, false);
		if (ret) {
			ASSERT_EQ(-ENOMEM, ret);
			ASSERT_TRUE(range_is_registered(self->start,
							self->end));
			ASSERT_EQ(0, munmap(h, h->map_size));
		}
		ASSERT_TRUE(jit_range_free(self));
	}
}

/* In a forked child: its ELF registration, no JIT one, no registry. */
static int child_inherited_elf_only(struct _test_data_fault *self,
				    const void *hdr)
{
	if (elf_add(self) != -EEXIST)
		return 1;
	if (mapping_size(hdr))
		return 2;
	return jit_range_free(self) ? 0 : 3;
}

/*
 * Leave rseq(2), which glibc registered for this thread with at least the
 * original 32 bytes.  After fork() the kernel writes the thread's rseq
 * area on the way back to user space, and the page that holds it is
 * copy-on-write then: when fork() took fewer allocations than fail-nth
 * counts, the failure lands on that copy, the write fails, and the
 * kernel ends the process with SIGSEGV, as rseq(2) must.  That is rseq's
 * contract, not registration's, and made the test die at random.
 */
static int rseq_leave(void)
{
	unsigned int len = __rseq_size > 32 ? __rseq_size : 32;

	if (!__rseq_size)
		return 0;
	return syscall(__NR_rseq,
		       (char *)__builtin_thread_pointer() + __rseq_offset,
		       len, RSEQ_FLAG_UNREGISTER, RSEQ_SIG) ? -errno : 0;
}

/*
 * fork() with registrations: the child gets the ELF ones and no JIT
 * registry (its mapping is VM_DONTCOPY), or fork fails with ENOMEM and
 * the parent's stay as they were.
 */
TEST_F(fault, fork_copies_elf_registrations_or_fails_whole)
{
	struct sframe_jit_header *h;
	unsigned int nth;
	bool more = true;
	pid_t pid;

	ASSERT_EQ(0, rseq_leave());
	ASSERT_EQ(0, elf_add(self));
	ASSERT_EQ(0, jit_register(self->start, self->end, 16, 16, &h));
	for (nth = 1; more && nth <= MAX_NTH * 4; nth++) {
		fail_nth_set(nth);
		pid = fork();
		if (!pid) {
			sysctl_write(FAIL_NTH, "0");
			_exit(child_inherited_elf_only(self, h));
		}
		more = fail_nth_fired();
		if (pid < 0) {
			ASSERT_TRUE(errno == ENOMEM || errno == EAGAIN)
				TH_LOG("allocation %u: %s", nth,
				       strerror(errno));
		} else {
			ASSERT_EQ(0, child_status(pid))
				TH_LOG("allocation %u", nth);
		}
		ASSERT_EQ(-EEXIST, elf_add(self));
		ASSERT_TRUE(range_is_registered(self->start, self->end));
	}
	ASSERT_FALSE(more);
	ASSERT_EQ(0, elf_remove(self));
	ASSERT_EQ(0, munmap(h, h->map_size));
}

TEST_HARNESS_MAIN
