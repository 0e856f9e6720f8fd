/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sframe-agent: unwind tables for other processes, registered from
 * outside with process_sframe_register(2).  What its files share.
 */
#ifndef SFRAME_AGENT_H
#define SFRAME_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include <poll.h>
#include <sys/types.h>

/* One executable mapping of a process, as /proc/PID/maps shows it. */
struct agent_map {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	char *path;		/* NULL for [vdso] */
};

/* A process's executable mappings. */
struct agent_maps {
	struct agent_map *map;
	size_t nr;
};

int agent_maps_read(pid_t pid, struct agent_maps *maps);
void agent_maps_free(struct agent_maps *maps);
int agent_open_mapping(pid_t pid, uint64_t addr);

/*
 * What makes two files the same file for a table: the tables of files
 * with one identity are converted once.
 */
struct agent_file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
};

/* Why a file has no table, or where its table came from. */
enum agent_table_kind {
	AGENT_TABLE_SFRAME,	/* the file's own .sframe */
	AGENT_TABLE_CONVERTED,	/* its .eh_frame, converted */
	AGENT_TABLE_NONE,	/* no unwind information it can use */
	AGENT_TABLE_FAILED,	/* it could not be read or converted */
};

/* An executable segment of a file, in the file's own layout. */
struct agent_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
};

#define AGENT_MAX_SEGMENTS	4
/* The longest GNU build ID kept; SHA-1 ones are 20 bytes. */
#define AGENT_BUILD_ID_MAX	32
/* The largest section the kernel takes (SFRAME_MAX_SIZE). */
#define AGENT_SFRAME_MAX	(64ULL << 20)

/*
 * A file's table, in the form process_sframe_register(2) takes: an
 * SFrame section whose function starts are relative to @sframe_vaddr
 * of the file's layout.
 */
struct agent_table {
	struct agent_file_id id;
	uint8_t build_id[AGENT_BUILD_ID_MAX];
	uint32_t build_id_len;
	enum agent_table_kind kind;
	int err;		/* for AGENT_TABLE_FAILED */
	void *sframe;
	size_t sframe_size;
	uint64_t sframe_vaddr;
	struct agent_segment seg[AGENT_MAX_SEGMENTS];
	unsigned int nr_seg;
	uint64_t nr_funcs;
	uint64_t nr_rows;
	uint64_t nr_left;	/* FDEs left to frame pointers */
	uint64_t jit_desc;	/* the GDB JIT interface's descriptor, or 0 */
	uint64_t jit_reg;	/* its __jit_debug_register_code() */
	uint64_t eh_reg;	/* libgcc's __register_frame_info_bases() */
	uint64_t eh_dereg;	/* its __deregister_frame_info_bases() */
	uint64_t eh_list[2];	/* its lists of registered objects, or 0 */
	struct agent_table *next;
};

struct agent_table *agent_table_get(int fd, const char *name);
struct agent_table *agent_table_of_image(const void *image, size_t size,
					 const char *name);
void agent_tables_free(void);
bool agent_table_offset(const struct agent_table *t, uint64_t vaddr,
			uint64_t *off);

/* The directory of converted tables (cache.c). */
struct agent_cache_stats {
	unsigned long hits;
	unsigned long misses;
	unsigned long stale;
	unsigned long stored;
	unsigned long evicted;
};

extern struct agent_cache_stats agent_cache_stats;

int agent_cache_init(const char *dir, uint64_t limit);
int agent_cache_load(struct agent_table *t);
void agent_cache_store(const struct agent_table *t);

/* The kernel's calls. */
int agent_pidfd_open(pid_t pid);
ssize_t agent_read(pid_t pid, uint64_t addr, void *buf, size_t size);
int agent_peek(pid_t pid, uint64_t addr, void *buf, size_t size);
int agent_register(int pidfd, const struct agent_table *t, uint64_t bias,
		   uint64_t start, uint64_t end);
int agent_unregister(int pidfd, uint64_t start, uint64_t end);
bool agent_kernel_has_calls(void);

/* What an attach did, summed over processes. */
/* The waits agent_delay keeps, each 4 bytes; more are counted only. */
#define AGENT_DELAY_MAX		(1u << 20)

/**
 * struct agent_delay - how long new mappings waited for their tables
 * @us: the waits kept, in microseconds, in the order they ended.
 * @nr: how many @us holds.
 * @cap: its room.
 * @n: waits counted.
 * @max_ns: the longest.
 *
 * A wait runs from the mmap, as the kernel's record of it stamps it, to
 * the return of the registration (follow.c).
 */
struct agent_delay {
	uint32_t *us;
	size_t nr;
	size_t cap;
	unsigned long n;
	uint64_t max_ns;
};

void agent_delay_add(struct agent_delay *d, uint64_t since_ns);
double agent_delay_median_ms(struct agent_delay *d);

struct agent_stats {
	unsigned long procs;
	unsigned long execs;
	unsigned long procs_failed;
	unsigned long maps;
	unsigned long vanished;		/* unmapped before they were read */
	unsigned long registered;
	unsigned long own;		/* the range had a table already */
	unsigned long no_table;		/* files with no unwind information */
	unsigned long failed;		/* registrations the kernel refused */
	unsigned long files;		/* distinct files given a table */
	unsigned long rows;
	unsigned long left;		/* FDEs left to frame pointers */
	unsigned long bytes;		/* section bytes handed to the kernel */
	unsigned long jit_objs;		/* JIT objects given a table */
	unsigned long jit_none;		/* JIT objects without usable CFI */
	unsigned long frames;		/* libgcc registrations given a table */
	unsigned long frames_none;	/* ... without one */
	unsigned long frames_removed;	/* deregistrations that removed one */
	unsigned long frames_unread;	/* processes whose earlier ones */
	unsigned long lost;		/* side-band records the kernel lost */
	struct agent_delay delay;	/* of mappings the records announced */
};

/* A process the agent gave tables to, and the ranges it registered. */
struct agent_range {
	uint64_t start;
	uint64_t end;
};

/* An object of a process's GDB JIT interface list, and its range. */
struct agent_jit_obj {
	uint64_t addr;
	uint64_t size;
	uint64_t start;
	uint64_t end;		/* 0: nothing registered for it */
	bool seen;
};

/* An object registered with libgcc's __register_frame_info_bases(). */
struct agent_eh_obj {
	uint64_t begin;		/* its .eh_frame entries */
	uint64_t start;
	uint64_t end;		/* 0: nothing registered for it */
	bool waiting;		/* [start, end) not executable yet */
};

struct agent_proc {
	pid_t pid;
	int pidfd;
	struct agent_range *range;
	size_t nr;
	size_t cap;
	uint64_t jit_desc;	/* its __jit_debug_descriptor, or 0 */
	struct agent_jit_obj *jit;
	size_t nr_jit;
	size_t cap_jit;
	bool eh_attached;	/* its libgcc's registry is followed */
	struct agent_eh_obj *eh;
	size_t nr_eh;
	size_t cap_eh;
	struct agent_proc *next;
};

struct agent_proc *agent_proc_get(pid_t pid, int *err);
void agent_proc_exec(pid_t pid);
void agent_proc_fork(pid_t parent, pid_t child);
void agent_proc_exit(pid_t pid);
bool agent_proc_has(const struct agent_proc *p, uint64_t start, uint64_t end);
int agent_proc_add(struct agent_proc *p, uint64_t start, uint64_t end);
unsigned int agent_proc_clear(struct agent_proc *p, uint64_t start,
			      uint64_t end);
void agent_procs_free(void);

int agent_attach(pid_t pid, struct agent_stats *st);
int agent_map_add(struct agent_proc *p, const struct agent_map *m,
		  struct agent_stats *st);

/* A perf event's ring buffer (ring.c). */
struct perf_event_attr;
struct perf_event_mmap_page;

struct agent_ring {
	int fd;
	struct perf_event_mmap_page *page;
	size_t size;		/* data bytes */
	char rec[65536 + 8];	/* a record that wraps, put together */
};

int agent_ring_open(struct agent_ring *r, struct perf_event_attr *attr,
		    pid_t pid, int cpu, unsigned int pages);
void agent_ring_read(struct agent_ring *r,
		     void (*fn)(const char *rec, void *arg), void *arg);
void agent_ring_close(struct agent_ring *r);

/*
 * Following processes: their mmap, exec and exit through perf's
 * side-band records; @pid -1 for every process.
 */
struct agent_follow;

int agent_follow_open(pid_t pid, struct agent_follow **fp);
int agent_follow_fds(const struct agent_follow *f, struct pollfd *pfd,
		     int max);
void agent_follow_read(struct agent_follow *f, struct agent_stats *st);
void agent_follow_close(struct agent_follow *f);

/*
 * A run: what the agent follows and the processes whose exit ends it
 * (run.c).
 */
struct agent_run {
	struct agent_follow **f;
	int nr_f;
	int *pidfd;
	int nr_pidfd;
	struct pollfd *pfd;
	int cap_pfd;
};

void agent_run_signals(void);
int agent_run_init(struct agent_run *r, size_t procs);
int agent_run_follow(struct agent_run *r, pid_t pid);
void agent_run_wait(struct agent_run *r, pid_t pid);
void agent_run_loop(struct agent_run *r, struct agent_stats *st);
void agent_run_close(struct agent_run *r);

int agent_exec(char **argv, pid_t *pidp);
int agent_start_run(pid_t pid, struct agent_stats *st);

/* The GDB JIT interface, read from outside (gdbjit.c). */
struct agent_proc *agent_proc_find(pid_t pid);
void agent_jit_walk(struct agent_proc *p, struct agent_stats *st);
void agent_jit_forget(struct agent_proc *p);

/* A JIT's converted table, registered (cfi.c). */
struct sframe_jit_cfi;

int agent_cfi_register(struct agent_proc *p, const struct sframe_jit_cfi *cfi,
		       uint64_t *startp, uint64_t *endp, struct agent_stats *st);

/* libgcc's frame registry, read from outside (frames.c). */

void agent_frames_lists(struct agent_table *t, Elf *e, const void *image,
			size_t size, uint64_t fn_size);
void agent_frames_attach(struct agent_proc *p, const struct agent_table *t,
			 const struct agent_map *m, uint64_t bias,
			 struct agent_stats *st);
void agent_frames_add(struct agent_proc *p, uint64_t begin,
		      struct agent_stats *st);
void agent_frames_remove(struct agent_proc *p, uint64_t begin,
			 struct agent_stats *st);
void agent_frames_exec(struct agent_proc *p, uint64_t start, uint64_t end,
		       struct agent_stats *st);
void agent_frames_forget(struct agent_proc *p);

/*
 * Uprobes on the functions a debugger breaks on (uprobe.c): what a hit
 * on each means.
 */
enum agent_probe_kind {
	AGENT_PROBE_GDB_JIT,		/* the GDB JIT list changed */
	AGENT_PROBE_FRAME_REG,		/* libgcc: entries registered */
	AGENT_PROBE_FRAME_DEREG,	/* libgcc: entries deregistered */
};

int agent_uprobe_add(pid_t pid, const struct agent_map *m,
		     const struct agent_table *t, uint64_t vaddr,
		     enum agent_probe_kind kind);
int agent_uprobe_fds(struct pollfd *pfd, int max);
void agent_uprobe_read(struct agent_stats *st);
void agent_uprobes_close(void);
extern bool agent_uprobes_on;
/* Every process is followed (-a): a hit from a new one adds it. */
extern bool agent_all;

extern int agent_verbose;

void agent_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* SFRAME_AGENT_H */
