// SPDX-License-Identifier: GPL-2.0
/*
 * Registry memory is charged where the process can see it (VmPin), a
 * failed registration charges nothing, and many register/unregister
 * cycles, or processes that exit with live registrations, leave no
 * kernel memory behind.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "sframe_test.h"

static long vm_pin_kb(void)
{
	return proc_kb("/proc/self/status", "VmPin");
}

/*
 * VmPin once the deferred frees have run: the last reference to a
 * registry may go after an RCU grace period and a work item.
 */
static long settled_vm_pin_kb(long want)
{
	long cur = vm_pin_kb();
	int i;

	for (i = 0; i < 100 && cur != want; i++) {
		usleep(100 * 1000);
		cur = vm_pin_kb();
	}
	return cur;
}

/*
 * Whether freed slab objects wait in KASAN's quarantine (up to 1/32 of
 * memory), where they still count as Slab: on such a kernel (the debug
 * kernel of make check-debug) the Slab figure cannot show a leak, and
 * the kmemleak scan that follows the tests looks for lost objects
 * instead.
 */
static bool slab_has_quarantine(void)
{
	static int known = -1;
	char line[256];
	FILE *f;

	if (known >= 0)
		return known;
	known = 0;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!known && fgets(line, sizeof(line), f))
		if (strstr(line, " kasan_quarantine_put"))
			known = 1;
	fclose(f);
	return known;
}

/*
 * Kernel memory that registrations use: slab for the index and
 * bookkeeping (unless freed objects are quarantined), vmalloc for
 * registries.  Frees go through RCU and a work item, so wait until the
 * figure stops falling.
 */
static long settled_kernel_kb(void)
{
	long prev = -1, cur = 0;
	int i;

	for (i = 0; i < 50; i++) {
		cur = proc_kb("/proc/meminfo", "VmallocUsed");
		if (!slab_has_quarantine())
			cur += proc_kb("/proc/meminfo", "Slab");
		if (cur == prev)
			break;
		prev = cur;
		usleep(200 * 1000);
	}
	return cur;
}

FIXTURE(accounting) {
	char *arena;
	__u64 start;
	__u64 end;
};

FIXTURE_SETUP(accounting)
{
	if (sframe_skip(_metadata))
		return;
	self->arena = arena_reserve(16);
	ASSERT_NE(NULL, self->arena);
	self->start = (unsigned long)self->arena;
	self->end = self->start + 16 * page_size();
}

FIXTURE_TEARDOWN(accounting)
{
	if (self->arena)
		munmap(self->arena, 16 * page_size());
}

TEST_F(accounting, registry_pages_show_in_vmpin_until_unmapped)
{
	struct sframe_jit_header *h;
	long before = vm_pin_kb();

	ASSERT_LE(0, before);
	ASSERT_EQ(0, jit_register(self->start, self->end, 1000, 8000, &h));
	EXPECT_EQ(before + (long)(h->map_size / 1024), vm_pin_kb());
	ASSERT_EQ(0, munmap(h, h->map_size));
	EXPECT_EQ(before, settled_vm_pin_kb(before));
}

TEST_F(accounting, failed_registration_charges_nothing)
{
	__u64 next = self->end + page_size();
	struct sframe_jit_header *h, *gone;
	int gone_fd;
	long before;

	ASSERT_EQ(0, jit_register(self->start, self->end, 16, 16, &h));
	/* Unmapped, so unregistered: a registry REPLACE cannot name. */
	ASSERT_EQ(0, jit_register_fd(self->end, next, 16, 16, &gone,
				     &gone_fd));
	ASSERT_EQ(0, munmap(gone, gone->map_size));
	before = vm_pin_kb();
	/* Overlap, zero capacity, bad flags: each refused, none charged. */
	EXPECT_EQ(-EEXIST, jit_register(self->start, self->end, 16, 16, NULL));
	EXPECT_EQ(-EINVAL, jit_register(self->end, next, 0, 16, NULL));
	EXPECT_EQ(-EINVAL, jit_op(SFRAME_JIT_REPLACE | SFRAME_JIT_COPY,
				  gone_fd, self->end, next, 16, 16, NULL,
				  NULL));
	EXPECT_EQ(-ENOENT, jit_replace(gone_fd, self->end, next, 16, 16, NULL,
				       NULL));
	EXPECT_EQ(before, vm_pin_kb());
	close(gone_fd);
	ASSERT_EQ(0, munmap(h, h->map_size));
}

/*
 * A few seconds on the test kernel; minutes on the debug kernel (KASAN,
 * lockdep, kmemleak) under emulation, past the harness's default 30 s.
 */
TEST_F_TIMEOUT(accounting, ten_thousand_register_unregister_cycles_leak_nothing,
	       600)
{
	long pin = vm_pin_kb(), kernel;
	struct sframe_jit_header *h;
	int i;

	if (slab_has_quarantine())
		TH_LOG("KASAN quarantines freed objects: VmallocUsed only");
	/*
	 * The first cycles after a boot fill slab caches and per-CPU
	 * vmalloc state for good: let them happen before the baseline.
	 */
	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, jit_register(self->start, self->end, 64, 256, &h));
		ASSERT_EQ(0, munmap(h, h->map_size));
	}
	kernel = settled_kernel_kb();
	for (i = 0; i < 10000; i++) {
		int fd = -1;

		/*
		 * Every way a registration ends: closing the descriptor
		 * of a registry never mapped; munmap with the descriptor
		 * already closed; munmap, then close.
		 */
		ASSERT_EQ(0, jit_register_fd(self->start, self->end, 64, 256,
					     i % 3 ? &h : NULL,
					     i % 3 == 2 ? &fd : NULL))
			TH_LOG("cycle %d", i);
		if (i % 3)
			ASSERT_EQ(0, munmap(h, h->map_size));
		if (fd >= 0)
			ASSERT_EQ(0, close(fd));
	}
	EXPECT_EQ(pin, settled_vm_pin_kb(pin));
	/*
	 * Allow 1 MB of slab noise from the rest of the system: a leak of
	 * a registry (12 kB of vmalloc) or of its bookkeeping (over 100
	 * bytes) in each of 10000 cycles is well above it.
	 */
	EXPECT_GT(kernel + 1024, settled_kernel_kb());
}

TEST_F(accounting, exit_with_live_registrations_leaks_nothing)
{
	long kernel = settled_kernel_kb();
	int i;

	for (i = 0; i < 200; i++) {
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			__u64 mid = self->start + 8 * page_size();
			struct sframe_jit_header *h;
			int fd;

			/* One left mapped, one left open and never mapped. */
			CHILD_EXPECT(jit_register(self->start, mid, 256, 1024,
						  &h) == 0);
			CHILD_EXPECT(jit_register_fd(mid, self->end, 256, 1024,
						     NULL, &fd) == 0);
			_exit(0);
		}
		ASSERT_EQ(0, child_status(pid));
	}
	EXPECT_GT(kernel + 1024, settled_kernel_kb());
}

/*
 * The memory cgroup v2 group this test runs in, made for it: mounts
 * cgroup2 where the VM has not, and enables the memory controller below
 * the root.  Returns 0, or a negative errno for the test to skip on.
 */
static int memcg_enter(char *dir, size_t size)
{
	int err = memcg_make(dir, size, "accounting");

	return err ?: memcg_join(dir);
}

static void memcg_leave(const char *dir)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	cg_write(CGROUP_ROOT, "cgroup.procs", pid);
	rmdir(dir);
}

/* memory.current once the deferred frees have brought it below @want. */
static long settled_memcg(const char *dir, long want)
{
	long cur = cg_read(dir, "memory.current");
	int i;

	for (i = 0; i < 100 && cur >= want; i++) {
		usleep(100 * 1000);
		cur = cg_read(dir, "memory.current");
	}
	return cur;
}

TEST_F(accounting, registry_pages_are_charged_to_the_memory_cgroup)
{
	struct sframe_jit_header *h;
	long before, charged, size;
	char dir[128];
	int err;

	err = memcg_enter(dir, sizeof(dir));
	if (err)
		SKIP(return, "no memory cgroup: %s", strerror(-err));
	before = cg_read(dir, "memory.current");
	ASSERT_LE(0, before);
	ASSERT_EQ(0, jit_register(self->start, self->end, 1U << 16, 1U << 16,
				  &h));
	size = h->map_size;
	charged = cg_read(dir, "memory.current") - before;
	EXPECT_LE(size - MEMCG_SLACK, charged)
		TH_LOG("%ld bytes of registry, %ld charged", size, charged);
	ASSERT_EQ(0, munmap(h, size));
	EXPECT_GT(before + size / 2, settled_memcg(dir, before + size / 2));
	memcg_leave(dir);
}

TEST_HARNESS_MAIN
