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

/*
 * A file's table, in the form process_sframe_register(2) takes: an
 * SFrame section whose function starts are relative to @sframe_vaddr
 * of the file's layout.
 */
struct agent_table {
	struct agent_file_id id;
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
	struct agent_table *next;
};

struct agent_table *agent_table_get(int fd, const char *name);
struct agent_table *agent_table_of_image(const void *image, size_t size,
					 const char *name);
void agent_tables_free(void);

/* The kernel's calls. */
int agent_pidfd_open(pid_t pid);
int agent_register(int pidfd, const struct agent_table *t, uint64_t bias,
		   uint64_t start, uint64_t end);
int agent_unregister(int pidfd, uint64_t start, uint64_t end);
bool agent_kernel_has_calls(void);

/* What an attach did, summed over processes. */
struct agent_stats {
	unsigned long procs;
	unsigned long procs_failed;
	unsigned long maps;
	unsigned long registered;
	unsigned long own;		/* the process had its own table */
	unsigned long no_table;		/* files with no unwind information */
	unsigned long failed;		/* registrations the kernel refused */
	unsigned long files;		/* distinct files given a table */
	unsigned long rows;
	unsigned long left;		/* FDEs left to frame pointers */
	unsigned long bytes;		/* section bytes handed to the kernel */
};

int agent_attach(pid_t pid, struct agent_stats *st);

extern int agent_verbose;

void agent_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* SFRAME_AGENT_H */
