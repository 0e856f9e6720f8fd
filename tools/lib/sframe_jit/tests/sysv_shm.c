// SPDX-License-Identifier: GPL-2.0
/*
 * System V shared memory for PostgreSQL in the test kernel, which has
 * none (tinyconfig, no CONFIG_SYSVIPC): preloaded by
 * tests/postgres_profile.sh only where /proc/sysvipc is missing.
 *
 * PostgreSQL keeps its shared memory in an anonymous mapping, but also
 * creates a System V segment of a few dozen bytes, whose attach count
 * tells a new postmaster whether an old one's children still run.  The
 * postmaster's children are forked, never exec'd, so a shared anonymous
 * mapping made at shmat() is theirs too: that is all this gives.  The
 * segments live in one process and its children, not system-wide, so
 * the interlock check finds nothing, which is what a fresh cluster in a
 * fresh VM would find anyway.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#define MAX_SEGMENTS 16

struct segment {
	key_t key;
	size_t size;
	void *addr;
	int used;
	int removed;
};

static struct segment segments[MAX_SEGMENTS];

static struct segment *segment_of(int id)
{
	if (id < 0 || id >= MAX_SEGMENTS || !segments[id].used)
		return NULL;
	return &segments[id];
}

int shmget(key_t key, size_t size, int flags)
{
	int i, free_id = -1;

	for (i = 0; i < MAX_SEGMENTS; i++) {
		if (!segments[i].used) {
			if (free_id < 0)
				free_id = i;
			continue;
		}
		if (key == IPC_PRIVATE || segments[i].removed ||
		    segments[i].key != key)
			continue;
		if ((flags & IPC_CREAT) && (flags & IPC_EXCL)) {
			errno = EEXIST;
			return -1;
		}
		if (size > segments[i].size) {
			errno = EINVAL;
			return -1;
		}
		return i;
	}
	if (!(flags & IPC_CREAT)) {
		errno = ENOENT;
		return -1;
	}
	if (free_id < 0 || size == 0) {
		errno = size ? ENOSPC : EINVAL;
		return -1;
	}
	segments[free_id] = (struct segment){ .key = key, .size = size, .used = 1 };
	return free_id;
}

void *shmat(int id, const void *addr, int flags)
{
	struct segment *s = segment_of(id);
	void *p;

	(void)flags;
	if (!s || addr) {
		/* PostgreSQL asks for a fixed address only under EXEC_BACKEND. */
		errno = EINVAL;
		return (void *)-1;
	}
	if (!s->addr) {
		p = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return (void *)-1;
		s->addr = p;
	}
	return s->addr;
}

int shmdt(const void *addr)
{
	int i;

	for (i = 0; i < MAX_SEGMENTS; i++) {
		if (segments[i].used && segments[i].addr == addr) {
			munmap(segments[i].addr, segments[i].size);
			segments[i].addr = NULL;
			if (segments[i].removed)
				segments[i].used = 0;
			return 0;
		}
	}
	errno = EINVAL;
	return -1;
}

int shmctl(int id, int cmd, struct shmid_ds *buf)
{
	struct segment *s = segment_of(id);

	if (!s) {
		errno = EINVAL;
		return -1;
	}
	switch (cmd) {
	case IPC_RMID:
		/* Like the kernel's: gone from the keys, kept while mapped. */
		s->removed = 1;
		if (!s->addr)
			s->used = 0;
		return 0;
	case IPC_STAT:
		memset(buf, 0, sizeof(*buf));
		buf->shm_segsz = s->size;
		buf->shm_nattch = s->addr ? 1 : 0;
		return 0;
	default:
		errno = EINVAL;
		return -1;
	}
}
