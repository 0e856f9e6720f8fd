// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The converted tables, kept in a directory across runs: a file's
 * .eh_frame is converted once per identity, and a later run, or a later
 * exec under -a, only loads and registers it.
 *
 * An entry is named by the file's GNU build ID, else by its device,
 * inode, size and modification time, and holds a header, which repeats
 * that identity, and the SFrame section.  An entry is used only if its
 * header is of this version, names the file being read, and its
 * section has the size and hash the header gives: anything else, a
 * truncated write, a file rebuilt with the same name or a stray byte,
 * makes it stale, and it is converted and written again.  Entries are
 * written to a temporary file and renamed, so a reader never sees half
 * of one.  The directory is held to a size: past it, the entries least
 * recently used go first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframe_agent.h"

#define CACHE_MAGIC	"SFAGENT\0"
/* Changes with the header, and with what a conversion gives. */
#define CACHE_VERSION	2	/* 2: .plt as stubs */

struct cache_hdr {
	char magic[8];
	uint32_t version;
	uint32_t kind;
	uint64_t dev;
	uint64_t ino;
	int64_t size;
	int64_t mtime_ns;
	uint32_t build_id_len;
	uint8_t build_id[AGENT_BUILD_ID_MAX];
	uint64_t sframe_vaddr;
	uint64_t nr_funcs;
	uint64_t nr_rows;
	uint64_t nr_left;
	uint64_t sframe_size;
	uint64_t hash;
};

static char *cache_dir;
static uint64_t cache_limit;
struct agent_cache_stats agent_cache_stats;

/**
 * agent_cache_init() - keep converted tables in a directory
 * @dir: the directory, made if missing (its parent must exist).
 * @limit: the most bytes its entries may take.
 *
 * Return: 0, or a negative errno; without a cache, tables are converted
 * at each run.
 */
int agent_cache_init(const char *dir, uint64_t limit)
{
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	cache_dir = strdup(dir);
	if (!cache_dir)
		return -ENOMEM;
	cache_limit = limit;
	return 0;
}

/* FNV-1a: catches what a torn or stray write does to an entry. */
static uint64_t cache_hash(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

/* The entry's path: by build ID, else by identity. */
static void cache_path(const struct agent_table *t, char *buf, size_t size)
{
	size_t n;
	uint32_t i;

	n = snprintf(buf, size, "%s/", cache_dir);
	if (t->build_id_len) {
		for (i = 0; i < t->build_id_len && n + 3 < size; i++)
			n += snprintf(buf + n, size - n, "%02x", t->build_id[i]);
		snprintf(buf + n, size - n, ".sframe");
		return;
	}
	snprintf(buf + n, size - n, "%llx-%llx-%llx-%llx.sframe",
		 (unsigned long long)t->id.dev, (unsigned long long)t->id.ino,
		 (unsigned long long)t->id.size,
		 (unsigned long long)t->id.mtime_ns);
}

static void cache_hdr_fill(struct cache_hdr *h, const struct agent_table *t)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, CACHE_MAGIC, sizeof(h->magic));
	h->version = CACHE_VERSION;
	h->kind = t->kind;
	h->size = t->id.size;
	if (t->build_id_len) {
		h->build_id_len = t->build_id_len;
		memcpy(h->build_id, t->build_id, t->build_id_len);
	} else {
		h->dev = t->id.dev;
		h->ino = t->id.ino;
		h->mtime_ns = t->id.mtime_ns;
	}
	h->sframe_vaddr = t->sframe_vaddr;
	h->nr_funcs = t->nr_funcs;
	h->nr_rows = t->nr_rows;
	h->nr_left = t->nr_left;
	h->sframe_size = t->sframe_size;
	h->hash = cache_hash(t->sframe, t->sframe_size);
}

/* Does header @h describe the table of the file @t is made for? */
static bool cache_hdr_ok(const struct cache_hdr *h, const struct agent_table *t,
			 off_t entry_size)
{
	struct cache_hdr want;

	cache_hdr_fill(&want, t);
	if (memcmp(h->magic, want.magic, sizeof(h->magic)) ||
	    h->version != CACHE_VERSION || h->size != want.size ||
	    h->dev != want.dev || h->ino != want.ino ||
	    h->mtime_ns != want.mtime_ns ||
	    h->build_id_len != want.build_id_len ||
	    memcmp(h->build_id, want.build_id, sizeof(h->build_id)))
		return false;
	if (h->kind != AGENT_TABLE_CONVERTED && h->kind != AGENT_TABLE_NONE)
		return false;
	return h->sframe_size <= AGENT_SFRAME_MAX &&
	       entry_size == (off_t)(sizeof(*h) + h->sframe_size);
}

static int cache_read(int fd, struct agent_table *t)
{
	struct cache_hdr h;
	struct stat st;
	void *buf;

	if (fstat(fd, &st) || read(fd, &h, sizeof(h)) != sizeof(h) ||
	    !cache_hdr_ok(&h, t, st.st_size))
		return -ESTALE;
	buf = malloc(h.sframe_size ? h.sframe_size : 1);
	if (!buf)
		return -ENOMEM;
	if (read(fd, buf, h.sframe_size) != (ssize_t)h.sframe_size ||
	    cache_hash(buf, h.sframe_size) != h.hash) {
		free(buf);
		return -ESTALE;
	}
	t->kind = h.kind;
	t->sframe = buf;
	t->sframe_size = h.sframe_size;
	t->sframe_vaddr = h.sframe_vaddr;
	t->nr_funcs = h.nr_funcs;
	t->nr_rows = h.nr_rows;
	t->nr_left = h.nr_left;
	return 0;
}

/**
 * agent_cache_load() - the converted table of a file, from the cache
 * @t: the table of the file, whose identity is set.
 *
 * Return: 0 with @t's section, kind and counts set; -ENOENT for no
 * entry; -ESTALE for an entry that does not hold this file's table.
 */
int agent_cache_load(struct agent_table *t)
{
	char path[PATH_MAX];
	int fd, err;

	if (!cache_dir)
		return -ENOENT;
	cache_path(t, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		agent_cache_stats.misses++;
		return -ENOENT;
	}
	err = cache_read(fd, t);
	close(fd);
	if (err == -ESTALE) {
		agent_cache_stats.stale++;
		agent_log(1, "%s: stale or corrupt, converted again\n", path);
	} else if (!err) {
		agent_cache_stats.hits++;
		/* Its time says when it was last used. */
		utimensat(AT_FDCWD, path, NULL, 0);
	}
	return err;
}

/* Remove the least recently used entries until the rest fit. */
static void cache_prune(void)
{
	char path[PATH_MAX], old[PATH_MAX];
	uint64_t total;
	struct timespec oldest = { 0 };
	struct dirent *d;
	struct stat st;
	DIR *dir;

	for (;;) {
		dir = opendir(cache_dir);
		if (!dir)
			return;
		total = 0;
		old[0] = '\0';
		while ((d = readdir(dir))) {
			snprintf(path, sizeof(path), "%s/%s", cache_dir,
				 d->d_name);
			if (!strstr(d->d_name, ".sframe") || stat(path, &st))
				continue;
			total += st.st_size;
			if (!old[0] || st.st_mtim.tv_sec < oldest.tv_sec ||
			    (st.st_mtim.tv_sec == oldest.tv_sec &&
			     st.st_mtim.tv_nsec < oldest.tv_nsec)) {
				oldest = st.st_mtim;
				memcpy(old, path, sizeof(old));
			}
		}
		closedir(dir);
		if (total <= cache_limit || !old[0] || unlink(old))
			return;
		agent_cache_stats.evicted++;
	}
}

static int cache_write(int fd, const struct agent_table *t)
{
	struct cache_hdr h;

	cache_hdr_fill(&h, t);
	if (write(fd, &h, sizeof(h)) != sizeof(h) ||
	    write(fd, t->sframe, t->sframe_size) != (ssize_t)t->sframe_size)
		return -EIO;
	return 0;
}

/**
 * agent_cache_store() - keep a file's converted table for later runs
 * @t: the table, converted, or found to have no unwind information.
 */
void agent_cache_store(const struct agent_table *t)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	int fd, err;

	if (!cache_dir ||
	    (t->kind != AGENT_TABLE_CONVERTED && t->kind != AGENT_TABLE_NONE))
		return;
	cache_path(t, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	err = cache_write(fd, t);
	if (close(fd))
		err = -EIO;
	if (err || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	agent_cache_stats.stored++;
	cache_prune();
}
