// SPDX-License-Identifier: GPL-2.0
/*
 * What a child created by fork() gets: its own registry with the content
 * the parent's had at the fork, registered in the child; from then on
 * parent and child change theirs independently.  The kernel gives a
 * child no JIT registration and not the mapping of a kernel registry
 * (it is VM_DONTCOPY), only the descriptor: the library's atfork child
 * handler copies the parent's registry into a new one from it
 * (SFRAME_JIT_COPY), maps it and points the handle at it.
 * In-memory registries are private mappings, which fork copies at the
 * same address.  When the kernel refuses the copy, the child's handle
 * works on an empty registry in private memory, registered nowhere.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "registry_fds.h"
#include "test.h"

static int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static bool present(struct sframe_jit *reg, uint64_t addr)
{
	return !sframe_jit_find(reg, addr, NULL, NULL, 0);
}

static struct sframe_jit_info info_of(struct sframe_jit *reg)
{
	struct sframe_jit_info info = { .sz = sizeof(info) };

	ASSERT_EQ(0, sframe_jit_get_info(reg, &info));
	return info;
}

/*
 * Registry mappings of the process, and whether one starts at @addr:
 * a child has its own only, the parent's being VM_DONTCOPY.
 */
static int registry_maps(const void *addr, bool *found)
{
	unsigned long start;
	char line[512];
	int n = 0;
	FILE *f;

	*found = false;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[sframe_jit]"))
			continue;
		n++;
		if (sscanf(line, "%lx-", &start) == 1 &&
		    start == (unsigned long)addr)
			*found = true;
	}
	fclose(f);
	return n;
}

/* The child's one registry mapping is the library's. */
static bool only_mapping(const void *addr)
{
	bool found;

	return registry_maps(addr, &found) == 1 && found;
}

TEST(fork_gives_the_child_its_own_copy, T_BOTH)
{
	struct sframe_jit_header *h;
	struct test_backend tb;
	struct sframe_jit *reg;
	struct table t = { 0 };
	uint64_t code = arena(1 << 16);
	int to_child[2], to_parent[2];
	char c = 0;
	pid_t pid;

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + (1 << 16), NULL);
	h = reg_hdr(&tb);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 64, NULL, 0, NULL));
	EXPECT_EQ(0, sframe_jit_add(reg, code + 256, 64, NULL, 0, NULL));
	EXPECT_EQ(0, sframe_jit_remove(reg, code + 256));
	ASSERT(!pipe(to_child) && !pipe(to_parent));

	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		/*
		 * The state at the fork: the same mapping in private memory,
		 * a copy from the kernel, wherever mmap() put it (often
		 * where the parent's was, which the child does not have).
		 */
		if (test_env.kernel) {
			EXPECT_EQ(1, tb.nr_copies);
			h = reg_hdr(&tb);
			EXPECT(only_mapping(h));
		} else {
			EXPECT_EQ(0, tb.nr_copies);
			EXPECT(reg_hdr(&tb) == h);
		}
		EXPECT(present(reg, code));
		EXPECT(!present(reg, code + 256));
		EXPECT_EQ(0, sframe_jit_add(reg, code + 128, 64, NULL, 0,
					    NULL));
		EXPECT_EQ(1, write(to_parent[1], &c, 1));
		/* The parent's change after the fork stays the parent's. */
		EXPECT_EQ(1, read(to_child[0], &c, 1));
		EXPECT(!present(reg, code + 512));
		EXPECT(present(reg, code + 128));
		table_read_stable(h, &t);
		EXPECT_EQ(3, t.count);
		EXPECT_EQ(2, table_live(&t));
		/* Growing replaces the child's registry, registered there. */
		EXPECT_EQ(0, sframe_jit_grow(reg, 256, 1024));
		if (test_env.kernel)
			EXPECT(range_registered(code, code + (1 << 16)));
		sframe_jit_destroy(reg);
		if (test_env.kernel)
			EXPECT(!range_registered(code, code + (1 << 16)));
		_exit(test_failed());
	}
	EXPECT_EQ(1, read(to_parent[0], &c, 1));
	EXPECT(!present(reg, code + 128));
	EXPECT_EQ(0, sframe_jit_add(reg, code + 512, 64, NULL, 0, NULL));
	EXPECT_EQ(1, write(to_child[1], &c, 1));
	EXPECT_EQ(0, wait_child(pid));
	/* The child's grow and exit left the parent's registry alone. */
	EXPECT(reg_hdr(&tb) == h);
	EXPECT_EQ(0, tb.nr_copies);
	EXPECT(!present(reg, code + 128));
	table_read_stable(h, &t);
	EXPECT_EQ(3, t.count);
	EXPECT(table_func(&t, code + 512));
	if (test_env.kernel)
		EXPECT(range_registered(code, code + (1 << 16)));
	table_free(&t);
	sframe_jit_destroy(reg);
}

/* Two reads of registries hold the same records, row for row. */
static bool tables_equal(const struct table *a, const struct table *b)
{
	uint32_t i, r;

	if (a->count != b->count || a->seq != b->seq ||
	    a->text_start != b->text_start || a->text_end != b->text_end ||
	    a->fde_cap != b->fde_cap || a->fre_cap != b->fre_cap ||
	    memcmp(a->fdes, b->fdes, a->count * sizeof(*a->fdes)))
		return false;
	for (i = 0; i < a->count; i++)
		for (r = 0; r < a->fdes[i].fre_count; r++)
			if (memcmp(&a->fres[a->fdes[i].fre_start + r],
				   &b->fres[a->fdes[i].fre_start + r],
				   sizeof(*a->fres)))
				return false;
	return true;
}

/*
 * A parent that published functions, removed some and grew its registry
 * forks: the child's registry holds the same records, registered for
 * the same range in the child; the child's descriptor is its own, the
 * inherited one closed; what the child appends stays the child's.
 */
TEST(fork_child_registry_is_registered_with_the_parents_records, T_KERNEL)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 16,
			.fre_capacity = 32);
	struct table before = { 0 }, t = { 0 };
	uint64_t code = arena(1 << 16);
	struct sframe_jit_header *h;
	char why[256];
	struct test_backend tb;
	struct sframe_jit *reg;
	int i, fds;
	pid_t pid;

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + (1 << 16), &opts);
	for (i = 0; i < 40; i++)
		ASSERT_EQ(0, sframe_jit_add(reg, code + 64 * i, 32, rows_fp32,
					    4, NULL));
	for (i = 0; i < 40; i += 3)
		ASSERT_EQ(0, sframe_jit_remove(reg, code + 64 * i));
	EXPECT(info_of(reg).nr_grows > 0);
	h = reg_hdr(&tb);
	table_read_stable(h, &before);
	fds = registry_fds();
	EXPECT_EQ(1, fds);

	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		struct sframe_jit_func fn;

		ASSERT_EQ(1, tb.nr_copies);
		EXPECT(reg->l.hdr == reg_hdr(&tb));
		EXPECT(only_mapping(reg_hdr(&tb)));
		table_read_stable(reg_hdr(&tb), &t);
		EXPECT(tables_equal(&before, &t));
		EXPECT_EQ(0, table_check(&t, why, sizeof(why)));
		table_free(&t);
		/* The kernel has the range registered in the child. */
		EXPECT(range_registered(code, code + (1 << 16)));
		EXPECT(info_of(reg).kernel);
		/* Its own descriptor, the parent's closed. */
		EXPECT_EQ(1, registry_fds());
		/* What the library knew holds: finds, removals, appends. */
		EXPECT_EQ(0, sframe_jit_find(reg, code + 64 + 5, &fn, NULL, 0));
		EXPECT_EQ(code + 64, fn.start);
		EXPECT(!present(reg, code + 64 * 3));
		EXPECT_EQ(0, sframe_jit_remove(reg, code + 64));
		EXPECT_EQ(0, sframe_jit_add(reg, code + 64 * 50, 32, rows_fp32,
					    4, NULL));
		EXPECT(present(reg, code + 64 * 50));
		table_read_stable(reg_hdr(&tb), &t);
		EXPECT(table_func(&t, code + 64 * 50));
		EXPECT_EQ(0, table_check(&t, why, sizeof(why)));
		table_free(&t);
		sframe_jit_destroy(reg);
		EXPECT(!range_registered(code, code + (1 << 16)));
		EXPECT_EQ(0, registry_fds());
		_exit(test_failed());
	}
	EXPECT_EQ(0, wait_child(pid));
	/* The parent's registry, as it was: the child wrote to its own. */
	EXPECT(reg_hdr(&tb) == h);
	table_read_stable(h, &t);
	EXPECT(tables_equal(&before, &t));
	EXPECT(!table_func(&t, code + 64 * 50));
	EXPECT(present(reg, code + 64));
	EXPECT(range_registered(code, code + (1 << 16)));
	EXPECT_EQ(1, registry_fds());
	table_free(&t);
	table_free(&before);
	sframe_jit_destroy(reg);
	EXPECT_EQ(0, registry_fds());
}

/*
 * The child of a child: the copy is made from the descriptor the
 * grandchild inherits, that of the child's own copy.
 */
TEST(fork_grandchild_gets_a_copy_of_the_childs_registry, T_KERNEL)
{
	uint64_t code = arena(1 << 16);
	struct sframe_jit *reg = NULL;
	pid_t pid;

	ASSERT_EQ(0, sframe_jit_create(code, code + (1 << 16), NULL, &reg));
	ASSERT_EQ(0, sframe_jit_add(reg, code, 32, rows_fp32, 4, NULL));
	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		pid_t grandchild;

		EXPECT_EQ(0, sframe_jit_add(reg, code + 64, 32, rows_fp32, 4,
					    NULL));
		grandchild = fork();
		ASSERT(grandchild >= 0);
		if (!grandchild) {
			EXPECT(present(reg, code));
			EXPECT(present(reg, code + 64));
			EXPECT(info_of(reg).kernel);
			EXPECT(range_registered(code, code + (1 << 16)));
			EXPECT_EQ(1, registry_fds());
			_exit(test_failed());
		}
		EXPECT_EQ(0, wait_child(grandchild));
		_exit(test_failed());
	}
	EXPECT_EQ(0, wait_child(pid));
	EXPECT(!present(reg, code + 64));
	sframe_jit_destroy(reg);
}

/* The child's view when the copy was refused: empty, private, unread. */
static void check_fallback(struct sframe_jit *reg, uint64_t code,
			   uint64_t end)
{
	struct sframe_jit_info info = info_of(reg);
	bool found;

	EXPECT(!info.kernel);
	EXPECT_EQ(0, registry_maps(NULL, &found));
	EXPECT_EQ(0, info.nr_funcs);
	EXPECT_EQ(0, info.nr_rows_used);
	EXPECT(!present(reg, code));
	EXPECT(!range_registered(code, end));
	EXPECT_EQ(0, registry_fds());
	/* The JIT goes on publishing, into memory the kernel does not read. */
	EXPECT_EQ(0, sframe_jit_add(reg, code, 32, rows_fp32, 4, NULL));
	EXPECT_EQ(0, sframe_jit_add(reg, code + 64, 32, rows_fp32, 4, NULL));
	EXPECT(present(reg, code + 64));
	EXPECT_EQ(0, sframe_jit_grow(reg, 256, 1024));
	EXPECT(present(reg, code));
	EXPECT(!range_registered(code, end));
	sframe_jit_destroy(reg);
}

TEST(fork_child_whose_copy_fails_gets_a_private_empty_registry, T_KERNEL)
{
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(1 << 16);
	pid_t pid;

	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + (1 << 16), NULL);
	ASSERT_EQ(0, sframe_jit_add(reg, code, 32, rows_fp32, 4, NULL));
	tb.fail_copy = ENOMEM;
	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		EXPECT_EQ(1, tb.nr_copies);
		check_fallback(reg, code, code + (1 << 16));
		_exit(test_failed());
	}
	EXPECT_EQ(0, wait_child(pid));
	EXPECT(present(reg, code));
	EXPECT(!present(reg, code + 64));
	EXPECT(info_of(reg).kernel);
	EXPECT(range_registered(code, code + (1 << 16)));
	sframe_jit_destroy(reg);
}

#define PINNED_SYSCTL	"/proc/sys/kernel/sframe_user_pinned_kb"

static bool sysctl_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

/* CAP_IPC_LOCK lets a registry past the limit: drop it. */
static bool drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	data[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	data[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	return !syscall(SYS_capset, &hdr, data);
}

/*
 * The refusal the kernel makes: at the pinned limit, the child's copy
 * is ENOMEM.  The limit is lowered from the fork until the child has
 * run the handlers, no longer.
 */
TEST(fork_child_at_the_pinned_limit_gets_a_private_empty_registry, T_KERNEL)
{
	uint64_t code = arena(1 << 16);
	struct sframe_jit *reg = NULL;
	char old[32] = { 0 }, c = 0;
	int fd, ready[2], restored[2];
	ssize_t n;
	pid_t pid;

	fd = open(PINNED_SYSCTL, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		test_skip("no %s", PINNED_SYSCTL);
	n = read(fd, old, sizeof(old) - 1);
	close(fd);
	ASSERT(n > 0);
	if (geteuid() || !drop_ipc_lock())
		test_skip("needs root, without CAP_IPC_LOCK");
	ASSERT_EQ(0, sframe_jit_create(code, code + (1 << 16), NULL, &reg));
	ASSERT_EQ(0, sframe_jit_add(reg, code, 32, rows_fp32, 4, NULL));
	ASSERT(!pipe(ready) && !pipe(restored));
	ASSERT(sysctl_write(PINNED_SYSCTL, "1"));

	pid = fork();
	if (!pid) {
		/* The handlers ran; the checks need the limit back. */
		EXPECT_EQ(1, write(ready[1], &c, 1));
		EXPECT_EQ(1, read(restored[0], &c, 1));
		check_fallback(reg, code, code + (1 << 16));
		_exit(test_failed());
	}
	if (pid > 0)
		EXPECT_EQ(1, read(ready[0], &c, 1));
	ASSERT(sysctl_write(PINNED_SYSCTL, old));
	ASSERT(pid > 0);
	EXPECT_EQ(1, write(restored[1], &c, 1));
	EXPECT_EQ(0, wait_child(pid));
	EXPECT(present(reg, code));
	EXPECT(info_of(reg).kernel);
	EXPECT(range_registered(code, code + (1 << 16)));
	sframe_jit_destroy(reg);
}

TEST(fork_child_writes_its_own_perf_map, T_BOTH)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_PERF_MAP);
	char parent_map[64], child_map[64], *buf;
	struct test_backend tb;
	struct sframe_jit *reg;
	uint64_t code = arena(4096);
	size_t size;
	pid_t pid;

	snprintf(parent_map, sizeof(parent_map), "/tmp/perf-%d.map",
		 (int)getpid());
	unlink(parent_map);
	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + 4096, &opts);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 16, NULL, 0, "in_parent"));
	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		/*
		 * A process that had this pid before may have left its map:
		 * the library appends, so the test starts from no file.
		 */
		snprintf(child_map, sizeof(child_map), "/tmp/perf-%d.map",
			 (int)getpid());
		unlink(child_map);
		EXPECT_EQ(0, sframe_jit_add(reg, code + 16, 16, NULL, 0,
					    "in_child"));
		sframe_jit_destroy(reg);
		_exit(test_failed());
	}
	EXPECT_EQ(0, wait_child(pid));
	snprintf(child_map, sizeof(child_map), "/tmp/perf-%d.map", (int)pid);
	buf = file_read(child_map, &size);
	ASSERT(buf);
	EXPECT(size < 64 && memmem(buf, size, " in_child\n", 10));
	free(buf);
	buf = file_read(parent_map, &size);
	ASSERT(buf);
	EXPECT(!memmem(buf, size, "in_child", 8));
	EXPECT(memmem(buf, size, " in_parent\n", 11));
	free(buf);
	unlink(child_map);
	unlink(parent_map);
	sframe_jit_destroy(reg);
}
