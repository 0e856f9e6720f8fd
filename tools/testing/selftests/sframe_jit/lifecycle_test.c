// SPDX-License-Identifier: GPL-2.0
/*
 * How long registrations live.  For JIT registries (sframe_jit_open(2)),
 * the file and its one mapping: munmap, close, fork (which copies
 * neither), MADV_DOFORK, COPY and exec; for ELF sections, the
 * registration binfmt_elf makes at exec (this program is built with
 * -Wa,--gsframe) and the sections the kernel refuses.
 */
#include <elf.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sframe_test.h"

#define ARENA_PAGES	64
#define REG_FDES	8U
#define REG_FRES	16U

/* argv[1] of the program re-executed by the exec tests. */
#define AFTER_EXEC	"--sframe-after-exec"

FIXTURE(registry) {
	char *arena;
	struct jit_reg reg;
};

FIXTURE_SETUP(registry)
{
	if (sframe_skip(_metadata))
		return;
	self->arena = arena_jit_reg_new(_metadata, &self->reg, ARENA_PAGES,
					REG_FDES, REG_FRES);
}

FIXTURE_TEARDOWN(registry)
{
}

TEST_F(registry, munmap_of_the_registry_unregisters_its_range)
{
	ASSERT_EQ(0, munmap(self->reg.hdr, self->reg.size));
	EXPECT_EQ(0, fdinfo_field(self->reg.fd, "registered"));
	EXPECT_EQ(0, jit_register(self->reg.start, self->reg.end,
				  REG_FDES, REG_FRES, NULL));
}

/* The mapping holds the registry: its descriptor may go first. */
TEST_F(registry, close_of_a_mapped_registry_keeps_it_registered)
{
	ASSERT_EQ(0, close(self->reg.fd));
	expect_registry_intact(_metadata, &self->reg);
	ASSERT_EQ(0, munmap(self->reg.hdr, self->reg.size));
	EXPECT_FALSE(range_is_registered(self->reg.start, self->reg.end));
}

TEST_F(registry, close_of_a_never_mapped_registry_unregisters_it)
{
	__u64 start = self->reg.end, end = start + page_size();
	int fd;

	ASSERT_EQ(0, jit_register_fd(start, end, REG_FDES, REG_FRES, NULL,
				     &fd));
	EXPECT_EQ(1, fdinfo_field(fd, "registered"));
	EXPECT_EQ(-EEXIST, jit_register(start, end, 1, 1, NULL));
	ASSERT_EQ(0, close(fd));
	EXPECT_FALSE(range_is_registered(start, end));
	expect_registry_intact(_metadata, &self->reg);
}

TEST_F(registry, munmap_of_a_replaced_registry_keeps_the_range_registered)
{
	struct jit_reg new = self->reg;

	ASSERT_EQ(0, jit_replace(self->reg.fd, self->reg.start, self->reg.end,
				 REG_FDES, REG_FRES, &new.hdr, &new.fd));
	new.size = mapping_size(new.hdr);
	EXPECT_EQ(0, fdinfo_field(self->reg.fd, "registered"));
	EXPECT_EQ(1, fdinfo_field(new.fd, "registered"));
	/* The old one is no longer registered: REPLACE cannot name it. */
	EXPECT_EQ(-ENOENT, jit_replace(self->reg.fd, self->reg.start,
				       self->reg.end, REG_FDES, REG_FRES, NULL,
				       NULL));
	ASSERT_EQ(0, munmap(self->reg.hdr, self->reg.size));
	expect_registry_intact(_metadata, &new);
	/* Unmapping the registry in use still unregisters. */
	ASSERT_EQ(0, munmap(new.hdr, new.size));
	EXPECT_EQ(0, jit_register(self->reg.start, self->reg.end,
				  REG_FDES, REG_FRES, NULL));
}

/*
 * What the file says of itself: close-on-exec, its size the mapping's,
 * and in fdinfo its range, its size and whether it is registered.
 */
TEST_F(registry, the_file_describes_its_registry)
{
	struct jit_reg *reg = &self->reg;
	int flags = fcntl(reg->fd, F_GETFD);

	ASSERT_LE(0, flags);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	EXPECT_EQ((off_t)reg->hdr->map_size, lseek(reg->fd, 0, SEEK_END));
	EXPECT_EQ((off_t)reg->size, lseek(reg->fd, 0, SEEK_END));
	EXPECT_EQ((long long)reg->start, fdinfo_field(reg->fd, "text_start"));
	EXPECT_EQ((long long)reg->end, fdinfo_field(reg->fd, "text_end"));
	EXPECT_EQ((long long)reg->size, fdinfo_field(reg->fd, "map_size"));
	EXPECT_EQ(1, fdinfo_field(reg->fd, "registered"));
}

static int mmap_err(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

/* A registry is mapped once, also after its mapping is gone. */
TEST_F(registry, a_second_mmap_is_ebusy)
{
	struct jit_reg *reg = &self->reg;
	int rw = PROT_READ | PROT_WRITE;

	EXPECT_EQ(-EBUSY, mmap_err(reg->fd, reg->size, rw, MAP_SHARED, 0));
	expect_registry_intact(_metadata, reg);
	ASSERT_EQ(0, munmap(reg->hdr, reg->size));
	EXPECT_EQ(-EBUSY, mmap_err(reg->fd, reg->size, rw, MAP_SHARED, 0));
	EXPECT_FALSE(range_is_registered(reg->start, reg->end));
}

/*
 * Only all of the file, shared, read-write: each refusal leaves the
 * registry to be mapped the right way.
 */
TEST_F(registry, mmap_other_than_whole_shared_and_writable_is_refused)
{
	__u64 start = self->reg.end, end = start + page_size();
	int rw = PROT_READ | PROT_WRITE;
	struct sframe_jit_header *h;
	off_t size;
	int fd;

	ASSERT_EQ(0, jit_register_fd(start, end, REG_FDES, REG_FRES, NULL,
				     &fd));
	size = lseek(fd, 0, SEEK_END);
	ASSERT_LT(0, size);
	EXPECT_EQ(-EINVAL, mmap_err(fd, size, rw, MAP_PRIVATE, 0));
	EXPECT_EQ(-EINVAL, mmap_err(fd, size - page_size(), rw, MAP_SHARED,
				    page_size()));
	EXPECT_EQ(-EINVAL, mmap_err(fd, size - page_size(), rw, MAP_SHARED,
				    0));
	EXPECT_EQ(-EINVAL, mmap_err(fd, size + page_size(), rw, MAP_SHARED,
				    0));
	EXPECT_EQ(-EPERM, mmap_err(fd, size, rw | PROT_EXEC, MAP_SHARED, 0));
	EXPECT_TRUE(range_is_registered(start, end));
	ASSERT_EQ(0, jit_map(fd, &h));
	EXPECT_EQ((__u32)SFRAME_JIT_MAGIC, h->magic);
	EXPECT_EQ(start, h->text_start);
	EXPECT_EQ(-EACCES, mprotect_err(h, size, PROT_READ | PROT_EXEC));
	close(fd);
}

/*
 * After munmap the descriptor still names the registry, for COPY: the
 * copy has its records and is registered as a new one is.
 */
TEST_F(registry, an_unmapped_registry_can_still_be_copied)
{
	struct jit_reg *reg = &self->reg;
	struct sframe_jit_header *c;
	int cfd;

	jit_fill(reg->hdr, reg->start, 4, 3);
	reg->hdr->seq = 8;
	ASSERT_EQ(0, munmap(reg->hdr, reg->size));
	ASSERT_FALSE(range_is_registered(reg->start, reg->end));
	ASSERT_EQ(0, jit_copy(reg->fd, reg->start, reg->end, REG_FDES,
			      REG_FRES, &c, &cfd));
	EXPECT_EQ(4U, c->fde_count);
	EXPECT_EQ(8U, c->seq);
	EXPECT_EQ(reg->start + 16, jit_fde(c, 1)->func_start);
	EXPECT_EQ(4U, jit_fre(c, 7)->start_off);
	EXPECT_TRUE(range_is_registered(reg->start, reg->end));
	/* COPY registers as a plain open does: not over a registration. */
	EXPECT_EQ(-EEXIST, jit_copy(reg->fd, reg->start, reg->end, REG_FDES,
				    REG_FRES, NULL, NULL));
	close(cfd);
}

/* A child's mapping of the descriptor it inherited is refused. */
TEST_F(registry, mmap_in_a_forked_child_is_eacces)
{
	struct jit_reg *reg = &self->reg;
	struct sframe_jit_header *h;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(jit_map(reg->fd, &h) == -EACCES);
		CHILD_EXPECT(!range_is_registered(reg->start, reg->end));
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, reg);
}

static int send_fd(int sock, int fd)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "f", .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = buf,
		.msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char buf[CMSG_SPACE(sizeof(int))] = { 0 }, c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = buf,
		.msg_controllen = sizeof(buf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

/*
 * A process that got the descriptor over a socket, forked before the
 * registry existed, cannot map it either; it can copy it.
 */
TEST_F(registry, mmap_of_a_descriptor_passed_over_a_socket_is_eacces)
{
	__u64 start = self->reg.end, end = start + page_size();
	struct sframe_jit_header *h;
	int sv[2], fd;
	pid_t pid;

	/* The parent's range is free in the child, forked first. */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		fd = recv_fd(sv[1]);
		CHILD_EXPECT(fd >= 0);
		CHILD_EXPECT(jit_map(fd, &h) == -EACCES);
		CHILD_EXPECT(jit_copy(fd, start, end, REG_FDES, REG_FRES, &h,
				      NULL) == 0);
		CHILD_EXPECT(h->fde_count == 2);
		_exit(0);
	}
	close(sv[1]);
	ASSERT_EQ(0, jit_register_fd(start, end, REG_FDES, REG_FRES, &h,
				     &fd));
	jit_fill(h, start, 2, 1);
	ASSERT_EQ(0, send_fd(sv[0], fd));
	close(sv[0]);
	ASSERT_EQ(0, child_status(pid));
	EXPECT_TRUE(range_is_registered(start, end));
	EXPECT_EQ(2U, h->fde_count);
	close(fd);
}

/*
 * The mapping is VM_DONTCOPY and the child inherits no JIT
 * registration: the address is free in the child, so is the range.
 */
TEST_F(registry, the_registry_is_not_inherited_by_a_child)
{
	struct jit_reg *reg = &self->reg;
	struct maps_entry e;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(!maps_lookup((unsigned long)reg->hdr, &e));
		CHILD_EXPECT(jit_register(reg->start, reg->end, REG_FDES,
					  REG_FRES, NULL) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	EXPECT_TRUE(maps_lookup((unsigned long)reg->hdr, &e));
	expect_registry_intact(_metadata, reg);
}

/*
 * MADV_DOFORK gives the child the mapping: the same pages, writes
 * visible both ways, but no registration; its munmap there unregisters
 * nothing of the parent's.
 */
TEST_F(registry, dofork_gives_a_child_the_shared_pages_unregistered)
{
	struct jit_reg *reg = &self->reg;
	struct maps_entry e;
	pid_t pid;

	ASSERT_EQ(0, madvise(reg->hdr, reg->size, MADV_DOFORK));
	reg->hdr->seq = 2;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(maps_lookup((unsigned long)reg->hdr, &e));
		CHILD_EXPECT(reg->hdr->seq == 2);
		reg->hdr->seq = 4;
		CHILD_EXPECT(!range_is_registered(reg->start, reg->end));
		CHILD_EXPECT(munmap(reg->hdr, reg->size) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	EXPECT_EQ(4U, reg->hdr->seq);
	expect_registry_intact(_metadata, reg);
}

/* Bytes of a registry that a copy must have: all but the kernel's stats. */
static bool same_registry(const void *a, const void *b, size_t size)
{
	size_t stats = offsetof(struct sframe_jit_header, stats);
	size_t after = offsetof(struct sframe_jit_header, reserved);

	return !memcmp(a, b, stats) &&
	       !memcmp((const char *)a + after, (const char *)b + after,
		       size - after);
}

/*
 * SFRAME_JIT_COPY from the inherited descriptor: the child's registry
 * has the parent's exact records, count and seq, and is registered in
 * the child; the parent's is unaffected.
 */
TEST_F(registry, forked_child_copies_the_registry_from_its_descriptor)
{
	struct sframe_jit_header *h = self->reg.hdr, *c;
	size_t size = self->reg.size;
	void *snap;
	pid_t pid;
	int cfd;

	jit_fill(h, self->reg.start, 4, 1);
	h->seq = 10;
	snap = malloc(size);
	ASSERT_NE(NULL, snap);
	memcpy(snap, h, size);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(jit_copy(self->reg.fd, self->reg.start,
				      self->reg.end, REG_FDES, REG_FRES, &c,
				      &cfd) == 0);
		CHILD_EXPECT(mapping_size(c) == size);
		CHILD_EXPECT(same_registry(c, snap, size));
		CHILD_EXPECT(fdinfo_field(cfd, "registered") == 1);
		CHILD_EXPECT(range_is_registered(self->reg.start,
						 self->reg.end));
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	EXPECT_TRUE(same_registry(h, snap, size));
	expect_registry_intact(_metadata, &self->reg);
	free(snap);
}

TEST_F(registry, writes_after_the_copy_stay_in_their_own_process)
{
	struct sframe_jit_header *h = self->reg.hdr, *c;
	int to_child[2], to_parent[2], cfd;
	char ch;
	pid_t pid;

	jit_fill(h, self->reg.start, 2, 1);
	h->seq = 2;
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		CHILD_EXPECT(jit_copy(self->reg.fd, self->reg.start,
				      self->reg.end, REG_FDES, REG_FRES, &c,
				      &cfd) == 0);
		CHILD_EXPECT(c->seq == 2);
		c->seq = 4;
		jit_fde(c, 0)->func_size = 0x40;
		CHILD_EXPECT(write(to_parent[1], "c", 1) == 1);
		/* The parent writes its own values meanwhile. */
		CHILD_EXPECT(read(to_child[0], &ch, 1) == 1);
		CHILD_EXPECT(c->seq == 4);
		CHILD_EXPECT(jit_fde(c, 0)->func_size == 0x40);
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	ASSERT_EQ(1, read(to_parent[0], &ch, 1));
	EXPECT_EQ(2U, h->seq);
	EXPECT_EQ(16U, jit_fde(h, 0)->func_size);
	h->seq = 6;
	jit_fde(h, 0)->func_size = 0x80;
	ASSERT_EQ(1, write(to_child[1], "p", 1));
	EXPECT_EQ(0, child_status(pid));
	EXPECT_EQ(6U, h->seq);
	EXPECT_EQ(0x80U, jit_fde(h, 0)->func_size);
}

/* The child's own registration of the range is its own. */
TEST_F(registry, a_forked_childs_registration_of_the_range_spares_the_parent)
{
	struct jit_reg *reg = &self->reg;
	struct sframe_jit_header *h;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(jit_register(reg->start, reg->end, REG_FDES,
					  REG_FRES, &h) == 0);
		CHILD_EXPECT(range_is_registered(reg->start, reg->end));
		CHILD_EXPECT(munmap(h, h->map_size) == 0);
		CHILD_EXPECT(!range_is_registered(reg->start, reg->end));
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, reg);
}

static long vm_pin_kb(void)
{
	return proc_kb("/proc/self/status", "VmPin");
}

/* VmPin once deferred frees have brought it to @want, or after 10 s. */
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
 * A child that keeps the descriptor it inherited keeps the parent's
 * registry, and its charge (the parent's VmPin), after the parent
 * unmapped and closed it: until the child closes it too.
 */
TEST_F(registry, a_child_holding_the_descriptor_keeps_the_registry_charged)
{
	struct jit_reg *reg = &self->reg;
	long pinned = vm_pin_kb(), kb = reg->size / 1024;
	int go[2], done[2];
	char c;
	pid_t pid;

	ASSERT_LE(kb, pinned);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		CHILD_EXPECT(read(go[0], &c, 1) == 1);
		CHILD_EXPECT(close(reg->fd) == 0);
		CHILD_EXPECT(write(done[1], "c", 1) == 1);
		CHILD_EXPECT(read(go[0], &c, 1) == 0);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	ASSERT_EQ(0, munmap(reg->hdr, reg->size));
	ASSERT_EQ(0, close(reg->fd));
	EXPECT_FALSE(range_is_registered(reg->start, reg->end));
	usleep(200 * 1000);
	EXPECT_EQ(pinned, vm_pin_kb());
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(1, read(done[0], &c, 1));
	EXPECT_EQ(pinned - kb, settled_vm_pin_kb(pinned - kb));
	close(go[1]);
	EXPECT_EQ(0, child_status(pid));
}

TEST_F(registry, dontfork_registry_is_absent_in_the_child_with_its_range)
{
	struct jit_reg *reg = &self->reg;
	struct maps_entry e;
	pid_t pid;

	ASSERT_EQ(0, madvise(reg->hdr, reg->size, MADV_DONTFORK));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(!maps_lookup((unsigned long)reg->hdr, &e));
		CHILD_EXPECT(jit_register(reg->start, reg->end, REG_FDES,
					  REG_FRES, NULL) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, reg);
}

/*
 * remap_file_pages() of a whole registry mapping onto itself: the way
 * userspace can make the kernel map a registry's file again.  Returns 0
 * or the errno.
 */
static int remap_registry(const struct jit_reg *reg)
{
	if (syscall(__NR_remap_file_pages, reg->hdr, reg->size, 0, 0, 0))
		return errno;
	return 0;
}

/*
 * In a child whose parent cleared VM_DONTCOPY (MADV_DOFORK): remapping
 * the registry fails with EACCES, it is not the child's; the mapping and
 * its content are as they were, shared, and the range is not registered
 * in the child.
 */
static void child_remap_changes_nothing(const struct jit_reg *reg, __u32 seq)
{
	CHILD_EXPECT(remap_registry(reg) == EACCES);
	CHILD_EXPECT(mapping_size(reg->hdr) == reg->size);
	CHILD_EXPECT(reg->hdr->magic == SFRAME_JIT_MAGIC);
	CHILD_EXPECT(reg->hdr->seq == seq);
	reg->hdr->seq = seq + 2;
	CHILD_EXPECT(madvise(reg->hdr, reg->size, MADV_DONTNEED) == 0);
	CHILD_EXPECT(reg->hdr->seq == seq + 2);
	CHILD_EXPECT(!range_is_registered(reg->start, reg->end));
}

/* In the process that mapped it, the file is already mapped. */
TEST_F(registry, remap_file_pages_of_the_registry_fails_and_changes_nothing)
{
	struct jit_reg *reg = &self->reg;

	reg->hdr->seq = 4;
	EXPECT_EQ(EBUSY, remap_registry(reg));
	expect_registry_intact(_metadata, reg);
	EXPECT_EQ(4U, reg->hdr->seq);
}

TEST_F(registry, remap_file_pages_in_a_forked_child_fails_and_changes_nothing)
{
	struct jit_reg *reg = &self->reg;
	pid_t pid;

	ASSERT_EQ(0, madvise(reg->hdr, reg->size, MADV_DOFORK));
	reg->hdr->seq = 6;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		child_remap_changes_nothing(reg, 6);
		_exit(0);
	}
	EXPECT_EQ(0, child_status(pid));
	expect_registry_intact(_metadata, reg);
	/* The pages are shared: the child's write shows here. */
	EXPECT_EQ(8U, reg->hdr->seq);
}

/*
 * The child's mapping must not depend on the parent's: once the
 * parent's is unmapped, the child's still works and still refuses to
 * be mapped again.
 */
TEST_F(registry, remap_file_pages_in_a_child_after_the_parent_unmapped)
{
	struct jit_reg *reg = &self->reg;
	int go[2];
	char c;
	pid_t pid;

	ASSERT_EQ(0, madvise(reg->hdr, reg->size, MADV_DOFORK));
	reg->hdr->seq = 8;
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(go[1]);
		CHILD_EXPECT(read(go[0], &c, 1) == 1);
		child_remap_changes_nothing(reg, 8);
		_exit(0);
	}
	close(go[0]);
	ASSERT_EQ(0, munmap(reg->hdr, reg->size));
	ASSERT_EQ(0, close(reg->fd));
	ASSERT_FALSE(range_is_registered(reg->start, reg->end));
	ASSERT_EQ(1, write(go[1], "u", 1));
	close(go[1]);
	EXPECT_EQ(0, child_status(pid));
}

/* The same when the process the child forked from has exited. */
TEST_F(registry, remap_file_pages_in_a_child_after_the_parent_exited)
{
	struct jit_reg *reg = &self->reg;
	int go[2], tell[2];
	char c;
	pid_t pid;

	ASSERT_EQ(0, madvise(reg->hdr, reg->size, MADV_DOFORK));
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(tell));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		reg->hdr->seq = 10;
		pid = fork();
		CHILD_EXPECT(pid >= 0);
		if (pid == 0) {
			CHILD_EXPECT(read(go[0], &c, 1) == 1);
			child_remap_changes_nothing(reg, 10);
			_exit(0);
		}
		/* The grandchild's pid, for the subreaper to wait for. */
		CHILD_EXPECT(write(tell[1], &pid, sizeof(pid)) == sizeof(pid));
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	ASSERT_EQ((ssize_t)sizeof(pid), read(tell[0], &pid, sizeof(pid)));
	ASSERT_EQ(1, write(go[1], "x", 1));
	EXPECT_EQ(0, child_status(pid));
	close(go[0]);
	close(go[1]);
	close(tell[0]);
	close(tell[1]);
	expect_registry_intact(_metadata, reg);
	EXPECT_EQ(12U, reg->hdr->seq);
}

/*
 * Fork a child that runs @before (if any), then re-executes this program
 * with @what to check in main(): AFTER_EXEC_JIT, that [start, end) is
 * free to register; AFTER_EXEC_ELF, that binfmt_elf registered the new
 * image's own section.  Returns the child's exit status.
 */
#define AFTER_EXEC_JIT	"jit"
#define AFTER_EXEC_ELF	"elf"

static int exec_and_check(const char *path, const char *what, __u64 start,
			  __u64 end, int (*before)(void *), void *arg)
{
	char s[32], e[32];
	pid_t pid;

	snprintf(s, sizeof(s), "%#llx", (unsigned long long)start);
	snprintf(e, sizeof(e), "%#llx", (unsigned long long)end);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (before && before(arg))
			_exit(10);
		execl(path, "lifecycle_test", AFTER_EXEC, what, s, e,
		      (char *)NULL);
		fprintf(stderr, "# exec: %s\n", strerror(errno));
		_exit(11);
	}
	return child_status(pid);
}

static int exec_self_and_check(const char *what, __u64 start, __u64 end,
			       int (*before)(void *), void *arg)
{
	return exec_and_check("/proc/self/exe", what, start, end, before, arg);
}

static int after_exec(const char *what, const char *start, const char *end)
{
	__u64 s = strtoull(start, NULL, 0), e = strtoull(end, NULL, 0);
	struct self_sframe me;
	int ret;

	if (!strcmp(what, AFTER_EXEC_JIT)) {
		ret = jit_register(s, e, REG_FDES, REG_FRES, NULL);
		if (ret)
			fprintf(stderr, "# after exec: [%s, %s): %s\n",
				start, end, strerror(-ret));
		return ret ? 1 : 0;
	}
	if (!self_sframe_find(&me)) {
		fprintf(stderr, "# after exec: %s\n", NO_SFRAME_SEGMENT);
		return 2;
	}
	ret = self_elf_register(&me);
	if (ret != -EEXIST)
		fprintf(stderr, "# after exec: own .sframe: %s, not EEXIST\n",
			ret ? strerror(-ret) : "registered");
	return ret == -EEXIST ? 0 : 3;
}

/*
 * In the child, which inherited no JIT registration: a registry for the
 * range, mapped, and one past it, its descriptor open (close-on-exec)
 * and never mapped.
 */
static int register_in_child(void *arg)
{
	struct jit_reg *reg = arg;
	struct sframe_jit_header *h;
	int fd;

	if (range_is_registered(reg->start, reg->end))
		return 1;
	if (jit_register(reg->start, reg->end, REG_FDES, REG_FRES, &h))
		return 2;
	if (jit_register_fd(reg->end, reg->end + page_size(), REG_FDES,
			    REG_FRES, NULL, &fd))
		return 3;
	return 0;
}

TEST_F(registry, exec_drops_registrations)
{
	struct jit_reg *reg = &self->reg;

	EXPECT_EQ(0, exec_self_and_check(AFTER_EXEC_JIT, reg->start,
					 reg->end + page_size(),
					 register_in_child, reg));
	expect_registry_intact(_metadata, reg);
}

/* The executable's own .sframe section, registered by binfmt_elf. */
FIXTURE(exe_sframe) {
	struct self_sframe me;
};

FIXTURE_SETUP(exe_sframe)
{
	if (sframe_skip(_metadata))
		return;
	if (!self_sframe_find(&self->me))
		SKIP(return, NO_SFRAME_SEGMENT);
}

FIXTURE_TEARDOWN(exe_sframe)
{
}

TEST_F(exe_sframe, is_registered_at_exec)
{
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));
	EXPECT_EQ(-EEXIST, jit_register(self->me.text_start,
					self->me.text_start + 1, 1, 1, NULL));
}

TEST_F(exe_sframe, can_be_unregistered_and_registered_again)
{
	ASSERT_EQ(0, self_elf_unregister(&self->me));
	EXPECT_EQ(-ENOENT, self_elf_unregister(&self->me));
	ASSERT_EQ(0, self_elf_register(&self->me));
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));
}

TEST_F(exe_sframe, stays_registered_in_a_forked_child)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		CHILD_EXPECT(self_elf_register(&self->me) == -EEXIST);
		CHILD_EXPECT(self_elf_unregister(&self->me) == 0);
		_exit(0);
	}
	ASSERT_EQ(0, child_status(pid));
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));
}

/*
 * sframe_unregister(2) names a registration by its section's address,
 * the PT_GNU_SFRAME segment's for the one binfmt_elf made, with every
 * other field 0 and the structure's size exactly.
 */
TEST_F(exe_sframe, is_unregistered_by_its_section_address_alone)
{
	struct sframe_setup s = { .sframe_start = self->me.sframe_start };
	struct sframe_setup bad;

	bad = s;
	bad.sframe_size = self->me.sframe_size;
	EXPECT_EQ(-EINVAL, sframe_unregister(&bad, sizeof(bad)));
	bad = s;
	bad.text_start = self->me.text_start;
	EXPECT_EQ(-EINVAL, sframe_unregister(&bad, sizeof(bad)));
	bad = s;
	bad.text_size = self->me.text_end - self->me.text_start;
	EXPECT_EQ(-EINVAL, sframe_unregister(&bad, sizeof(bad)));
	bad = s;
	bad.sframe_start = 0;
	EXPECT_EQ(-EINVAL, sframe_unregister(&bad, sizeof(bad)));
	EXPECT_EQ(-EINVAL, sframe_unregister(&s, sizeof(s) - 1));
	EXPECT_EQ(-EINVAL, sframe_unregister(&s, sizeof(s) + 8));
	/* Its text is not its section. */
	EXPECT_EQ(-ENOENT, elf_unregister(self->me.text_start));
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));
	EXPECT_EQ(0, sframe_unregister(&s, sizeof(s)));
	EXPECT_EQ(-ENOENT, sframe_unregister(&s, sizeof(s)));
	EXPECT_FALSE(range_is_registered(self->me.text_start,
					 self->me.text_end));
}

static int unregister_exe(void *arg)
{
	return self_elf_unregister(arg);
}

TEST_F(exe_sframe, is_registered_afresh_by_exec)
{
	EXPECT_EQ(0, exec_self_and_check(AFTER_EXEC_ELF, 0, 0,
					 unregister_exe, &self->me));
}

/*
 * A copy of this program in /tmp whose PT_GNU_SFRAME segment claims
 * @extra more bytes in memory than in the file.  Returns 0 and the
 * copy's path in @path, or -1.
 */
static int write_padded_copy(char *path, size_t size, unsigned long extra)
{
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	ssize_t n = -1;
	char *image;
	int i, fd;
	long len;
	FILE *f;

	f = fopen("/proc/self/exe", "r");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	image = malloc(len);
	if (image && fread(image, 1, len, f) == (size_t)len) {
		eh = (Elf64_Ehdr *)image;
		ph = (Elf64_Phdr *)(image + eh->e_phoff);
		for (i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_GNU_SFRAME)
				ph[i].p_memsz = ph[i].p_filesz + extra;
		snprintf(path, size, "/tmp/sframe-padded-XXXXXX");
		fd = mkstemp(path);
		if (fd >= 0) {
			n = write(fd, image, len);
			if (fchmod(fd, 0755))
				n = -1;
			close(fd);
		}
	}
	free(image);
	fclose(f);
	return n == len ? 0 : -1;
}

/*
 * binfmt_elf takes the section's size from the file (p_filesz): a
 * segment that claims more in memory is still registered whole.
 */
TEST_F(exe_sframe, is_registered_at_exec_with_its_size_in_the_file)
{
	char path[64];

	ASSERT_EQ(0, write_padded_copy(path, sizeof(path), 64UL << 20));
	EXPECT_EQ(0, exec_and_check(path, AFTER_EXEC_ELF, 0, 0, NULL, NULL));
	unlink(path);
}

TEST_F(exe_sframe, copied_section_stays_registered_after_the_copy_goes)
{
	struct sframe_copy c;
	unsigned long sec;

	if (sframe_copy_make(&self->me, &c, true))
		SKIP(return, NO_SFRAME_COPY);
	ASSERT_EQ(0, copy_elf_register(&c));
	/* The kernel validated a copy of its own; ours can go. */
	sec = (unsigned long)c.sframe;
	memset(c.sframe, 0xff, c.sframe_size);
	ASSERT_EQ(0, munmap((void *)page_down(sec),
			    page_up(sec + c.sframe_size) - page_down(sec)));
	EXPECT_EQ(-EEXIST, jit_register(c.text_start, c.text_end, 1, 1, NULL));
	/* Named by where the section was, though it is there no more. */
	EXPECT_EQ(0, copy_elf_unregister(&c));
	EXPECT_FALSE(range_is_registered(c.text_start, c.text_end));
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));
}

/*
 * Broken copies of the section, each registered for the copy's own
 * unregistered text.  The call fails with the variant's error, the
 * executable's registration is untouched, and the intact copy then
 * registers over the same range, which the failure did not claim.
 */
static unsigned char *sec_fde(struct sframe_copy *c, unsigned int i)
{
	struct sframe_sec_header *h = copy_hdr(c);

	return c->sframe + sizeof(*h) + h->auxhdr_len + h->fdeoff +
	       (size_t)i * sframe_sec_fde_size(h);
}

/* Where a descriptor's function starts, per the section's flags. */
static long fde_func_start(struct sframe_copy *c, unsigned char *fde)
{
	__s32 off;

	memcpy(&off, fde, sizeof(off));
	if (copy_hdr(c)->flags & SFRAME_SEC_F_FUNC_START_PCREL)
		return (long)fde + off;
	return (long)c->sframe + off;
}

static void fde_set_func_start(struct sframe_copy *c, unsigned char *fde,
			       long start)
{
	__s32 off;

	if (copy_hdr(c)->flags & SFRAME_SEC_F_FUNC_START_PCREL)
		off = start - (long)fde;
	else
		off = start - (long)c->sframe;
	memcpy(fde, &off, sizeof(off));
}

static int corrupt_magic(struct sframe_copy *c)
{
	copy_hdr(c)->magic = 0xbad0;
	return 0;
}

static int corrupt_fde_offset(struct sframe_copy *c)
{
	copy_hdr(c)->fdeoff = c->sframe_size;
	return 0;
}

static int corrupt_fre_offset(struct sframe_copy *c)
{
	copy_hdr(c)->freoff = c->sframe_size;
	return 0;
}

static int corrupt_fde_count(struct sframe_copy *c)
{
	copy_hdr(c)->num_fdes = 0x10000000;
	return 0;
}

static int truncate_by_a_byte(struct sframe_copy *c)
{
	size_t span = sframe_sec_span(copy_hdr(c));

	if (!span || span > c->sframe_size)
		return -1;
	c->sframe_size = span - 1;
	return 0;
}

/* The first two descriptors and their starts, sorted; -1 if there are not. */
static int first_two_descriptors(struct sframe_copy *c, unsigned char **a,
				 unsigned char **b, long *start_a, long *start_b)
{
	if (!sframe_sec_fde_size(copy_hdr(c)) || copy_hdr(c)->num_fdes < 2)
		return -1;
	*a = sec_fde(c, 0);
	*b = sec_fde(c, 1);
	*start_a = fde_func_start(c, *a);
	*start_b = fde_func_start(c, *b);
	return *start_a < *start_b ? 0 : -1;
}

static int swap_first_descriptors(struct sframe_copy *c)
{
	size_t size = sframe_sec_fde_size(copy_hdr(c));
	unsigned char tmp[32], *a, *b;
	long start_a, start_b;

	if (first_two_descriptors(c, &a, &b, &start_a, &start_b))
		return -1;
	memcpy(tmp, a, size);
	memcpy(a, b, size);
	memcpy(b, tmp, size);
	fde_set_func_start(c, a, start_b);
	fde_set_func_start(c, b, start_a);
	return 0;
}

/* The first function grown to reach a byte into the second. */
static int overlap_first_descriptors(struct sframe_copy *c)
{
	unsigned char *a, *b;
	long start_a, start_b;
	__u32 size;

	if (first_two_descriptors(c, &a, &b, &start_a, &start_b))
		return -1;
	size = start_b - start_a + 1;
	memcpy(a + 4, &size, sizeof(size));	/* func_size */
	return 0;
}

static int rows_past_their_subsection(struct sframe_copy *c)
{
	unsigned char *fde;
	__u32 off, n;

	if (!sframe_sec_fde_size(copy_hdr(c)) || !copy_hdr(c)->num_fdes)
		return -1;
	fde = sec_fde(c, 0);
	off = copy_hdr(c)->fre_len;
	memcpy(fde + 8, &off, sizeof(off));	/* start_fre_off */
	memcpy(&n, fde + 12, sizeof(n));	/* num_fres */
	if (!n) {
		n = 1;
		memcpy(fde + 12, &n, sizeof(n));
	}
	return 0;
}

static int next_version(struct sframe_copy *c)
{
	copy_hdr(c)->version = 4;
	return 0;
}

static int aarch64_abi(struct sframe_copy *c)
{
	copy_hdr(c)->abi_arch = SFRAME_SEC_ABI_AARCH64_LE;
	return 0;
}

FIXTURE(bad_section) {
	struct self_sframe me;
	struct sframe_copy copy;
};

FIXTURE_VARIANT(bad_section) {
	int (*corrupt)(struct sframe_copy *c);
	bool exec;
	int err;
};

FIXTURE_VARIANT_ADD(bad_section, bad_magic) {
	.corrupt = corrupt_magic, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, fde_offset_past_the_end) {
	.corrupt = corrupt_fde_offset, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, fre_offset_past_the_end) {
	.corrupt = corrupt_fre_offset, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, fde_count_past_the_end) {
	.corrupt = corrupt_fde_count, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, truncated) {
	.corrupt = truncate_by_a_byte, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, unsorted_descriptors) {
	.corrupt = swap_first_descriptors, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, overlapping_descriptors) {
	.corrupt = overlap_first_descriptors, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, rows_outside_the_fre_subsection) {
	.corrupt = rows_past_their_subsection, .exec = true, .err = ENOEXEC,
};

FIXTURE_VARIANT_ADD(bad_section, unknown_version) {
	.corrupt = next_version, .exec = true, .err = EOPNOTSUPP,
};

FIXTURE_VARIANT_ADD(bad_section, other_architecture) {
	.corrupt = aarch64_abi, .exec = true, .err = EOPNOTSUPP,
};

FIXTURE_VARIANT_ADD(bad_section, text_not_executable) {
	.corrupt = NULL, .exec = false, .err = EACCES,
};

FIXTURE_SETUP(bad_section)
{
	if (sframe_skip(_metadata))
		return;
	if (!self_sframe_find(&self->me))
		SKIP(return, NO_SFRAME_SEGMENT);
	if (sframe_copy_make(&self->me, &self->copy, variant->exec))
		SKIP(return, NO_SFRAME_COPY);
}

FIXTURE_TEARDOWN(bad_section)
{
}

TEST_F(bad_section, registration_fails_and_changes_nothing)
{
	struct sframe_copy *c = &self->copy;

	if (variant->corrupt && variant->corrupt(c))
		SKIP(return, "this section cannot be broken that way");
	EXPECT_EQ(-variant->err, copy_elf_register(c));
	EXPECT_EQ(-EEXIST, self_elf_register(&self->me));

	sframe_copy_reset(c);
	ASSERT_EQ(0, sframe_copy_text_prot(c, PROT_READ | PROT_EXEC));
	EXPECT_EQ(0, copy_elf_register(c));
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], AFTER_EXEC))
		return after_exec(argv[2], argv[3], argv[4]);
	return test_harness_run(argc, argv);
}
