// SPDX-License-Identifier: GPL-2.0
/*
 * What a child created by fork() gets, as the kernel defines it: its own
 * copy of the registry at the same address, with the content it had at
 * the fork, registered in the child (the kernel copies the registration);
 * from then on parent and child change their copies independently.  The
 * library's handle is ordinary memory, so the child's handle points at
 * the child's copy.  In-memory registries are private mappings, which
 * fork copies the same way.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

TEST(fork_gives_the_child_its_own_copy_at_the_same_address, T_BOTH)
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
		/* The state at the fork. */
		EXPECT(reg_hdr(&tb) == h);
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
	EXPECT(!present(reg, code + 128));
	table_read_stable(h, &t);
	EXPECT_EQ(3, t.count);
	EXPECT(table_func(&t, code + 512));
	if (test_env.kernel)
		EXPECT(range_registered(code, code + (1 << 16)));
	table_free(&t);
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
