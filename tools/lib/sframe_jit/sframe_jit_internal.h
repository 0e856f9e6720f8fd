/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internals of libsframe_jit, shared by its source files and by its
 * tests.  Nothing here is part of the installed API: the shared library
 * exports only what sframe_jit.h declares (libsframe_jit.map), and the
 * tests reach the rest by linking the static library.
 */
#ifndef __SFRAME_JIT_INTERNAL_H
#define __SFRAME_JIT_INTERNAL_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <linux/sframe_jit.h>

#include "sframe_jit.h"

#define SFRAME_JIT_MAX_REGS_SYSCTL "/proc/sys/kernel/sframe_max_registrations"

/**
 * struct sframe_jit_backend - how a registry is mapped and replaced
 * @create: map a new registry for @args, as sframe_jit_open(2) does;
 *	return its address or a negative errno, and set *@fdp to the
 *	registry's descriptor, -1 for one without.
 * @replace: map a larger registry for the range of @args carrying the
 *	content of @old, whose descriptor is @old_fd, as SFRAME_JIT_REPLACE
 *	does; return its address or a negative errno, and set *@fdp.  The
 *	old mapping stays.
 * @copy: in a child made by fork(), map a registry for @args carrying
 *	the content of the parent's, whose descriptor the child inherited
 *	as @src_fd, as SFRAME_JIT_COPY does; return its address or a
 *	negative errno, and set *@fdp.  NULL for a backend whose registries
 *	have no descriptor, which fork() copies as any private memory.
 * @unmap: unmap a registry mapping of @size bytes and close its
 *	descriptor @fd, if not -1.
 * @kernel: the kernel reads the registries.
 *
 * The library talks to the kernel only through this table, so that its
 * tests can run it against memory laid out as the kernel lays it out.
 * @priv is the pointer given to sframe_jit__create().
 */
struct sframe_jit_backend {
	long (*create)(void *priv, const struct sframe_jit_args *args,
		       int *fdp);
	long (*replace)(void *priv, const struct sframe_jit_args *args,
			const struct sframe_jit_header *old, int old_fd,
			int *fdp);
	long (*copy)(void *priv, const struct sframe_jit_args *args,
		     int src_fd, int *fdp);
	void (*unmap)(void *priv, void *addr, size_t size, int fd);
	bool kernel;
};

/* sframe_jit_open(2); backend.c */
extern const struct sframe_jit_backend sframe_jit__kernel_backend;

/**
 * struct sframe_jit_mem_layout - how the memory backend lays a registry out
 * @fde_stride: bytes per descriptor; 0 for the kernel's.
 * @fre_stride: bytes per row; 0 for the kernel's.
 * @header_size: header_size to report; 0 for the kernel's.
 * @fde_pages: pages between the header and the descriptor area; 0 for
 *	the kernel's layout, where the descriptors follow the header page.
 *
 * Zero means the kernel's layout.  The tests use other values to check
 * that the library reads the layout from the header, as it must.
 */
struct sframe_jit_mem_layout {
	uint16_t fde_stride;
	uint16_t fre_stride;
	uint16_t header_size;
	uint16_t fde_pages;
};

/*
 * A registry in private memory, laid out as the kernel lays one out.
 * @priv is a struct sframe_jit_mem_layout, or NULL for the kernel's
 * layout.
 */
extern const struct sframe_jit_backend sframe_jit__mem_backend;

/* The largest code range of a compact registry: 32-bit offsets. */
#define SFRAME_JIT_COMPACT_SPAN	(1ULL << 32)

void sframe_jit__mem_offsets(uint64_t page, uint32_t fde_pages,
			     const struct sframe_jit_args *args,
			     uint32_t fde_stride, uint32_t fre_stride,
			     uint64_t off[4]);
long sframe_jit__mem_create(void *priv, const struct sframe_jit_args *args,
			    int *fdp);
long sframe_jit__mem_replace(void *priv, const struct sframe_jit_args *args,
			     const struct sframe_jit_header *old, int old_fd,
			     int *fdp);
void sframe_jit__unmap(void *priv, void *addr, size_t size, int fd);

/**
 * struct sframe_jit_perf_map - a registry's perf map writer
 * @lock: serialises the writes and the switch to a child's file.
 * @fd: the file, opened O_APPEND; -1 when not in use.
 * @pid: the process @fd was opened for.
 * @path: a file chosen by the caller, kept across fork(); NULL for
 *	/tmp/perf-PID.map of the current process.
 * @nr_errors: lines that could not be written.
 */
struct sframe_jit_perf_map {
	pthread_mutex_t lock;
	int fd;
	pid_t pid;
	char *path;
	uint64_t nr_errors;
};

int sframe_jit__perf_map_open(struct sframe_jit_perf_map *pm,
			      const char *path);
void sframe_jit__perf_map_close(struct sframe_jit_perf_map *pm);
int sframe_jit__perf_map_write(struct sframe_jit_perf_map *pm,
			       uint64_t start, uint64_t size,
			       const char *name);
uint64_t sframe_jit__perf_map_errors(struct sframe_jit_perf_map *pm);

/* struct sframe_jit_lock.state: bits */
#define SFRAME_JIT_LOCK_FREE	0
#define SFRAME_JIT_LOCK_HELD	1	/* a writer holds it */
#define SFRAME_JIT_LOCK_WAITERS	2	/* a thread may sleep on it */
#define SFRAME_JIT_LOCK_WAITED	(SFRAME_JIT_LOCK_HELD | SFRAME_JIT_LOCK_WAITERS)

/**
 * struct sframe_jit_lock - a registry's writer lock; lock.c
 * @state: SFRAME_JIT_LOCK_* bits; the futex word.  All zero is unlocked.
 * @nr_waits: times a thread found the lock held, under the lock.
 * @wait_ns: the time those threads waited, under the lock.
 */
struct sframe_jit_lock {
	atomic_uint state;
	uint64_t nr_waits;
	uint64_t wait_ns;
};

void sframe_jit__lock_slow(struct sframe_jit_lock *l);
void sframe_jit__lock_wake(struct sframe_jit_lock *l);

/*
 * Inline, because uncontended they are one atomic instruction each: a
 * bit test-and-set (lock bts on x86) and a decrement that tells whether
 * anyone waits (lock sub).
 */
static inline bool sframe_jit__trylock(struct sframe_jit_lock *l)
{
	return !(atomic_fetch_or_explicit(&l->state, SFRAME_JIT_LOCK_HELD,
					  memory_order_acquire) &
		 SFRAME_JIT_LOCK_HELD);
}

static inline void sframe_jit__lock(struct sframe_jit_lock *l)
{
	if (!sframe_jit__trylock(l))
		sframe_jit__lock_slow(l);
}

/* Drop the lock; true if a thread may sleep on it and must be woken. */
static inline bool sframe_jit__unlock_contended(struct sframe_jit_lock *l)
{
	return atomic_fetch_sub_explicit(&l->state, SFRAME_JIT_LOCK_HELD,
					 memory_order_release) !=
	       SFRAME_JIT_LOCK_HELD;
}

static inline void sframe_jit__unlock(struct sframe_jit_lock *l)
{
	if (sframe_jit__unlock_contended(l))
		sframe_jit__lock_wake(l);
}

/**
 * struct sframe_jit_layout - a registry mapping, as its header describes it
 * @hdr: the mapping.
 * @fd: the registry's descriptor, kept for SFRAME_JIT_REPLACE and for a
 *	forked child's SFRAME_JIT_COPY; -1 for private memory.
 * @fdes: its descriptor area.
 * @fres: its row area.
 * @map_size: its size in bytes.
 * @fde_stride: bytes per descriptor.
 * @fre_stride: bytes per row.
 * @fde_cap: descriptors the mapping holds.
 * @fre_cap: rows the mapping holds.
 * @fast_fde_cap: @fde_cap where the fast append may write (strides that
 *	are the sizes of the records of <linux/sframe_jit.h>, so that no padding
 *	follows a record, both areas 8-byte aligned, and no perf map, whose
 *	lines the general path writes); 0 elsewhere.
 * @compact: the records are those of SFRAME_JIT_F_COMPACT.
 * @rules: with @compact, the rule area; NULL without.
 * @rule_stride: bytes per rule.
 * @rule_cap: rules the mapping holds.
 *
 * Read from the header once, when the mapping arrives, and checked; the
 * writer never reads these header fields again.
 */
struct sframe_jit_layout {
	struct sframe_jit_header *hdr;
	int fd;
	unsigned char *fdes;
	unsigned char *fres;
	size_t map_size;
	uint32_t fde_stride;
	uint32_t fre_stride;
	uint32_t fde_cap;
	uint32_t fre_cap;
	uint32_t fast_fde_cap;
	bool compact;
	unsigned char *rules;
	uint32_t rule_stride;
	uint32_t rule_cap;
};

/**
 * struct sframe_jit_index - descriptors by start address (start_index.c)
 * @slot: 1 + a descriptor's index, 0 for an empty slot; NULL until the
 *	first removal that needs it.
 * @shift: 64 - log2 of the number of slots.
 * @mask: the number of slots - 1.
 * @used: slots that are not empty, those of moved descriptors included.
 * @entered: descriptors [0, @entered) have a slot that names them.
 */
struct sframe_jit_index {
	uint32_t *slot;
	uint32_t shift;
	uint32_t mask;
	uint32_t used;
	uint32_t entered;
};

/**
 * struct sframe_jit - a registry and the writer's private state
 * @lock: the writer lock; see Documentation/sframe_jit.rst.
 * @ops: the backend.
 * @ops_priv: its private pointer.
 * @l: the current mapping.
 * @text_start: the code range's start.
 * @text_end: its end.
 * @nr_fdes: descriptors published, the last fde_count stored.
 * @tail_end: the end of the last of them, @text_start with none: a
 *	function that starts there or above is an append, and one that
 *	passes that check is not below the range.
 * @nr_dead: tombstones among them.
 * @remove_hint: the last descriptor removed plus @remove_step, tried
 *	first by the next removal; any value is safe.
 * @remove_step: how far apart the last two removals' descriptors were,
 *	at least 1: a collector's sweep in address order that keeps every
 *	k-th method goes on at the same step.
 * @remove_misses: removals @remove_hint missed while there was no
 *	index; the index is made once they pass a few.
 * @index: where the next removal looks when @remove_hint is not it.
 * @fre_used: row slots handed out, [0, @fre_used).
 * @fre_dead: row slots below @fre_used that no live descriptor uses:
 *	those of tombstones and those compaction has not reclaimed.  With
 *	SFRAME_JIT_F_SHARE_ROWS it counts rows that may still be another
 *	function's, and is read through rows_dead() (registry.c).
 * @rule_used: rule slots handed out, [0, @rule_used), in a compact
 *	registry.
 * @seq: the last sequence count stored.
 * @scratch: room for @l.fde_cap sort keys, so that compaction never
 *	allocates.
 * @cont: in a compact registry, a bit per descriptor slot, set for the
 *	later pieces of a split function; NULL in others.
 * @flags: SFRAME_JIT_F_* of the options.
 * @max_fdes: growth bound of the descriptor capacity.
 * @max_fres: growth bound of the row capacity.
 * @compact_threshold: the option, 0 for automatic.
 * @compact_min: the least tombstones that may compact: the option, or
 *	the automatic minimum.
 * @perf_map: the perf map writer, if SFRAME_JIT_F_PERF_MAP.
 * @nr_grows: replacements so far.
 * @nr_compactions: compactions so far.
 * @next: the next registry of the process, for fork() (registry.c).
 * @prev: the previous one.
 *
 * Everything but the mapping is private to the process.  The writer
 * keeps its own copy of the count and sequence count it publishes and
 * never reads them back from the shared header.  All fields but
 * @perf_map, which has its own lock, and @next and @prev, which are under
 * the process's list lock (registry.c), are under @lock.
 */
struct sframe_jit {
	struct sframe_jit_lock lock;
	const struct sframe_jit_backend *ops;
	void *ops_priv;

	struct sframe_jit_layout l;
	uint64_t text_start;
	uint64_t text_end;

	uint32_t nr_fdes;
	uint64_t tail_end;
	uint32_t nr_dead;
	uint32_t remove_hint;
	uint32_t remove_step;
	uint32_t remove_misses;
	struct sframe_jit_index index;
	uint32_t fre_used;
	uint32_t fre_dead;
	uint32_t rule_used;
	uint32_t seq;
	uint64_t *scratch;
	uint64_t *cont;

	uint32_t flags;
	uint32_t max_fdes;
	uint32_t max_fres;
	uint32_t compact_threshold;
	uint32_t compact_min;
	struct sframe_jit_perf_map perf_map;

	uint64_t nr_grows;
	uint64_t nr_compactions;

	struct sframe_jit *next;
	struct sframe_jit *prev;
};

/*
 * The start of the descriptor at @p, compact or not as @compact says (a
 * constant where the caller has one); @base is the registry's range's
 * start, which compact descriptors are offsets from.
 */
static inline uint64_t sframe_jit__fde_start_at(const unsigned char *p,
						uint64_t base, bool compact)
{
	uint64_t start;
	uint32_t off;

	if (compact) {
		memcpy(&off, p + offsetof(struct sframe_jit_cfde, func_off),
		       sizeof(off));
		return base + off;
	}
	memcpy(&start, p + offsetof(struct sframe_jit_fde, func_start),
	       sizeof(start));
	return start;
}

/* The start of descriptor @i, of the layout @compact says. */
static inline uint64_t sframe_jit__fde_start_as(const struct sframe_jit *reg,
						uint32_t i, bool compact)
{
	return sframe_jit__fde_start_at(reg->l.fdes +
					(size_t)i * reg->l.fde_stride,
					reg->text_start, compact);
}

/* The start of descriptor @i, of either record layout. */
static inline uint64_t sframe_jit__fde_start(const struct sframe_jit *reg,
					     uint32_t i)
{
	return sframe_jit__fde_start_as(reg, i, reg->l.compact);
}

uint32_t sframe_jit__index_find_slow(struct sframe_jit *reg, uint64_t start);

/* The table names every published descriptor. */
static inline bool sframe_jit__index_ready(const struct sframe_jit *reg)
{
	return reg->index.entered == reg->nr_fdes && reg->index.slot;
}

/* Fibonacci hashing: the high bits of the start times 2^64 / phi. */
static inline uint32_t sframe_jit__index_slot(uint64_t start, uint32_t shift)
{
	return (start * 0x9e3779b97f4a7c15ull) >> shift;
}

/**
 * sframe_jit__index_probe() - the descriptor that starts at an address
 * @reg: the registry, its lock held, its index ready.
 * @start: the address.
 * @compact: @reg->l.compact, a constant where the caller has one.
 *
 * Inline, for sframe_jit_remove(); sframe_jit__index_find_slow() when
 * the index may not be ready.
 *
 * Return: the index of the published descriptor that starts at @start,
 * or nr_fdes when the table names none (there may still be one: search).
 */
static inline uint32_t sframe_jit__index_probe(struct sframe_jit *reg,
					       uint64_t start, bool compact)
{
	const struct sframe_jit_index *x = &reg->index;
	uint32_t n = reg->nr_fdes, h, e;

	for (h = sframe_jit__index_slot(start, x->shift); (e = x->slot[h]);
	     h = (h + 1) & x->mask)
		if (e - 1 < n &&
		    sframe_jit__fde_start_as(reg, e - 1, compact) == start)
			return e - 1;
	return n;
}

/* Descriptors from @i on moved: their slots no longer name them. */
static inline void sframe_jit__index_from(struct sframe_jit *reg, uint32_t i)
{
	if (i < reg->index.entered)
		reg->index.entered = i;
}

void sframe_jit__index_free(struct sframe_jit *reg);

/* sframe_jit_create() through a given backend: the tests' hook. */
int sframe_jit__create(uint64_t text_start, uint64_t text_end,
		       const struct sframe_jit_opts *opts,
		       const struct sframe_jit_backend *ops, void *ops_priv,
		       struct sframe_jit **regp);

/* One function to add, as the importer collects them. */
struct sframe_jit__func {
	uint64_t start;
	uint32_t size;
	uint32_t stub_size;
	uint32_t first_row;
	uint32_t nr_rows;
	const char *name;
};

/* Add functions, all or none. */
int sframe_jit__add_batch(struct sframe_jit *reg,
			  const struct sframe_jit__func *funcs,
			  uint32_t nr_funcs,
			  const struct sframe_jit_row *rows);

/* Add functions whose rows, @nr_rows at @rows, they may share. */
int sframe_jit__add_shared(struct sframe_jit *reg,
			   const struct sframe_jit__func *funcs,
			   uint32_t nr_funcs,
			   const struct sframe_jit_row *rows,
			   uint32_t nr_rows);

/*
 * Compact records; compact.c.  A function whose rows reach 64 KiB into
 * it, or that has more than 65535 rows, becomes pieces: the rows
 * [first, end) of it, at @off into it, @size bytes.
 */
#define SFRAME_JIT__CFRE_MAX_OFF	0xffffU
#define SFRAME_JIT__CFDE_MAX_ROWS	0xffffU

struct sframe_jit__piece {
	uint32_t off;
	uint32_t size;
	uint32_t first;
	uint32_t end;
};

/**
 * struct sframe_jit__compact_caps - what a compact import takes
 * @nr_fdes: descriptors, a piece each.
 * @nr_rows: the shared rows, and the rows of pieces after the first.
 * @nr_rules: distinct rules.
 */
struct sframe_jit__compact_caps {
	uint64_t nr_fdes;
	uint64_t nr_rows;
	uint32_t nr_rules;
};

uint32_t sframe_jit__piece_next(const struct sframe_jit__func *fn,
				const struct sframe_jit_row *rows,
				uint32_t first, struct sframe_jit__piece *p);
void sframe_jit__pieces_count(const struct sframe_jit__func *funcs,
			      uint32_t nr_funcs,
			      const struct sframe_jit_row *rows,
			      struct sframe_jit__compact_caps *caps);

/**
 * struct sframe_jit__row_rules - the rule of each of a set of rows
 * @idx: for each row, the index of its rule in @rules.
 * @rules: the distinct rules, in the order they first come.
 * @nr_rules: their number, at most SFRAME_JIT_MAX_RULES.
 */
struct sframe_jit__row_rules {
	uint16_t *idx;
	struct sframe_jit_rule *rules;
	uint32_t nr_rules;
};

int sframe_jit__row_rules_make(const struct sframe_jit_row *rows,
			       uint32_t nr_rows,
			       struct sframe_jit__row_rules *rr);
void sframe_jit__row_rules_free(struct sframe_jit__row_rules *rr);
int sframe_jit__compact_caps(const struct sframe_jit__func *funcs,
			     uint32_t nr_funcs,
			     const struct sframe_jit_row *rows,
			     uint32_t nr_rows,
			     struct sframe_jit__compact_caps *caps,
			     struct sframe_jit__row_rules *rr);

/* Add functions that share their rows to a compact registry; registry.c. */
int sframe_jit__add_compact(struct sframe_jit *reg,
			    const struct sframe_jit__func *funcs,
			    uint32_t nr_funcs,
			    const struct sframe_jit_row *rows,
			    uint32_t nr_rows,
			    const struct sframe_jit__row_rules *rr);

/* Store each distinct row sequence once; share.c. */
int sframe_jit__share_rows(struct sframe_jit__func *funcs, uint32_t nr_funcs,
			   struct sframe_jit_row **rowsp, uint32_t *nr_rowsp);

/* Check a function's rows as the kernel will. */
int sframe_jit__check_rows(const struct sframe_jit_row *rows,
			   uint32_t nr_rows, uint32_t limit);

/* An x86-64 ELF image in memory, and its sections; elf.c. */
int sframe_jit__elf_open(const void *image, size_t size, Elf **elfp,
			 GElf_Ehdr *ehdr);
Elf_Scn *sframe_jit__elf_section(Elf *elf, const char *name, size_t *ndx,
				 GElf_Shdr *shdr);

/*
 * Make room for element @nr of the array at *@arr, of *@cap elements of
 * @elem bytes, doubling it: 0, -ENOMEM, or -E2BIG past 2^31 elements.
 */
static inline int sframe_jit__grow(void **arr, uint32_t *cap, uint32_t nr,
				   size_t elem)
{
	uint32_t n = *cap ? *cap * 2 : 64;
	void *p;

	if (nr < *cap)
		return 0;
	if (*cap > UINT32_MAX / 2)
		return -E2BIG;
	p = realloc(*arr, (size_t)n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/**
 * struct sframe_jit__cie - a CIE, as the CFA interpreter (cfa.c) needs it
 * @insns: its initial instructions.
 * @insns_end: their end.
 * @code_align: the code alignment factor.
 * @data_align: the data alignment factor.
 * @ra_reg: the return address column.
 * @fde_enc: the encoding of its FDEs' addresses ('R'), which
 *	DW_CFA_set_loc's operand shares.
 * @sized: its FDEs' augmentation data comes with its length ('z').
 * @signal: its frames are signal frames ('S').
 * @usable: the interpreter runs FDEs of it; libdw reads the others.
 */
struct sframe_jit__cie {
	const uint8_t *insns;
	const uint8_t *insns_end;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool sized;
	bool signal;
	bool usable;
};

/* struct sframe_jit__fde.cie of an FDE the interpreter does not run */
#define SFRAME_JIT__NO_CIE	UINT32_MAX

/**
 * struct sframe_jit__fde - an FDE, as eh_frame.c reads it
 * @lo: its first address.
 * @hi: its end.
 * @insns: its instructions, for the interpreter.
 * @insns_end: their end.
 * @cie: its CIE's index, or SFRAME_JIT__NO_CIE.
 * @malformed: its CIE or address range cannot be read.
 * @overlap: it shares bytes with another FDE (cfi.c).
 */
struct sframe_jit__fde {
	uint64_t lo;
	uint64_t hi;
	const uint8_t *insns;
	const uint8_t *insns_end;
	uint32_t cie;
	bool malformed;
	bool overlap;
};

/**
 * struct sframe_jit__eh_frame - the entries of an .eh_frame section
 * @buf: the section's bytes.
 * @addr: its address.
 * @cies: its CIEs, in section order.
 * @nr_cies: their number.
 * @fdes: its FDEs, in section order until cfi.c sorts them.
 * @nr_fdes: their number.
 * @fdes_cap: the room at @fdes.
 * @fdes_big: @fdes is mapped (sframe_jit__buf_alloc()).
 */
struct sframe_jit__eh_frame {
	const uint8_t *buf;
	uint64_t addr;
	struct sframe_jit__cie *cies;
	uint32_t nr_cies;
	struct sframe_jit__fde *fdes;
	uint32_t nr_fdes;
	uint32_t fdes_cap;
	bool fdes_big;
};

int sframe_jit__eh_frame_read(const void *buf, size_t size, uint64_t addr,
			      struct sframe_jit__eh_frame *eh);
int sframe_jit__debug_frame_read(const void *buf, size_t size,
				 struct sframe_jit__eh_frame *eh);
void sframe_jit__eh_frame_free(struct sframe_jit__eh_frame *eh);
int sframe_jit__eh_frame_fdes(const void *buf, size_t size, uint64_t addr,
			      struct sframe_jit__fde **fdesp,
			      uint32_t *nr_fdesp);
int sframe_jit__fdes_sort(struct sframe_jit__eh_frame *eh);

/*
 * Large arrays of a conversion, in mappings of their own with huge pages
 * where the kernel gives them; bigbuf.c.  Below SFRAME_JIT__BIG_MIN
 * bytes, malloc().
 */
#define SFRAME_JIT__BIG_MIN	(2UL << 20)
void *sframe_jit__big_alloc(size_t bytes);
void *sframe_jit__big_resize(void *p, size_t old_bytes, size_t new_bytes);
void sframe_jit__big_free(void *p, size_t bytes);
void *sframe_jit__buf_alloc(size_t bytes, bool *big);
void sframe_jit__buf_free(void *p, size_t bytes, bool big);
int sframe_jit__buf_grow(void **arr, uint32_t *cap, uint32_t nr,
			 size_t elem, bool *big);

/**
 * struct sframe_jit__rows - a growing array of rows
 * @rows: the rows.
 * @nr: their number.
 * @cap: room at @rows.
 * @big: @rows is from sframe_jit__big_alloc(), of @cap rows; otherwise
 *	from malloc().
 */
struct sframe_jit__rows {
	struct sframe_jit_row *rows;
	uint32_t nr;
	uint32_t cap;
	bool big;
};

int sframe_jit__rows_grow(struct sframe_jit__rows *r);
int sframe_jit__rows_reserve(struct sframe_jit__rows *r, uint32_t cap);
void sframe_jit__rows_trim(struct sframe_jit__rows *r);
void sframe_jit__rows_free(struct sframe_jit__rows *r);

static inline bool sframe_jit__same_rules(const struct sframe_jit_row *a,
					  const struct sframe_jit_row *b)
{
	return a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off &&
	       a->flags == b->flags;
}

/*
 * Append a row to the function whose rows start at @first.  A row with
 * the same rules as the function's last one adds nothing: libdw starts
 * a state at every advance, even one after which nothing changed.
 * Inline: it runs once per state of every FDE.  0, -ENOMEM or -E2BIG.
 */
static inline int sframe_jit__rows_push(struct sframe_jit__rows *r,
					uint32_t first,
					const struct sframe_jit_row *row)
{
	int err;

	if (r->nr > first && sframe_jit__same_rules(&r->rows[r->nr - 1], row))
		return 0;
	if (r->nr == r->cap) {
		err = sframe_jit__rows_grow(r);
		if (err)
			return err;
	}
	r->rows[r->nr++] = *row;
	return 0;
}

/* Sequences of rows interned as they are made, then laid out; share.c */
struct sframe_jit__share;

int sframe_jit__share_new(uint32_t hint, struct sframe_jit__share **sp);
void sframe_jit__share_free(struct sframe_jit__share *s);
int64_t sframe_jit__share_seq(struct sframe_jit__share *s,
			      struct sframe_jit__rows *r, uint32_t first);
int sframe_jit__share_place(struct sframe_jit__share *s,
			    struct sframe_jit__rows *r,
			    struct sframe_jit__func *funcs, uint32_t nr_funcs);

/*
 * States of one FDE beyond which it is left out ("range"): the libdw
 * path replays the program once per state, so this bounds the work of
 * one FDE there to about 3 * 10^7 CFA instructions.  The most in Debian
 * 12's /usr/lib/x86_64-linux-gnu is 3320.  The interpreter keeps the
 * bound, so that both paths leave out the same FDEs.
 */
#define SFRAME_JIT__CFI_MAX_STATES	8192

/* What became of one FDE, besides -errno. */
#define SFRAME_JIT__FDE_ROWS		0	/* a function, its rows appended */
#define SFRAME_JIT__FDE_LEFT_OUT	1	/* left out, for a reason */
#define SFRAME_JIT__FDE_DEFER		2	/* for libdw to convert */

/*
 * The FDE of an x86-64 .plt, whose entries' CFA is an expression; plt.c.
 * @split: where the entries start, in the object's layout.
 * @head: PLT0's rows, over [the FDE's start, @split).
 * @entry: one entry's rows, which repeat every SFRAME_JIT__PLT_ENTRY
 *	bytes from @split to the FDE's end.
 */
#define SFRAME_JIT__PLT_HEAD_ROWS	8
#define SFRAME_JIT__PLT_ENTRY		16

struct sframe_jit__plt {
	uint64_t split;
	struct sframe_jit_row head[SFRAME_JIT__PLT_HEAD_ROWS];
	uint32_t nr_head;
	struct sframe_jit_row entry[2];
	uint32_t nr_entry;
};

bool sframe_jit__plt_fde(const struct sframe_jit__eh_frame *eh,
			 const struct sframe_jit__fde *fde,
			 struct sframe_jit__plt *plt);

/* The CFA interpreter; cfa.c */
struct sframe_jit__cfa;

int sframe_jit__cfa_new(const struct sframe_jit__eh_frame *eh,
			struct sframe_jit__cfa **cp);
void sframe_jit__cfa_free(struct sframe_jit__cfa *c);
int sframe_jit__cfa_fde(struct sframe_jit__cfa *c,
			const struct sframe_jit__fde *fde,
			struct sframe_jit__rows *rows, unsigned int *why);

/**
 * struct sframe_jit__dw - the libdw functions the library calls; dw.c
 * @next_cfi: dwarf_next_cfi().
 * @getcfi_elf: dwarf_getcfi_elf().
 * @cfi_end: dwarf_cfi_end().
 * @begin_elf: dwarf_begin_elf(), for a .debug_frame's CFI.
 * @getcfi: dwarf_getcfi().
 * @end: dwarf_end().
 * @cfi_addrframe: dwarf_cfi_addrframe().
 * @frame_info: dwarf_frame_info().
 * @frame_cfa: dwarf_frame_cfa().
 * @frame_register: dwarf_frame_register().
 */
struct sframe_jit__dw {
	int (*next_cfi)(const unsigned char e_ident[], Elf_Data *data,
			bool eh_frame_p, Dwarf_Off offset,
			Dwarf_Off *next_offset, Dwarf_CFI_Entry *entry);
	Dwarf_CFI *(*getcfi_elf)(Elf *elf);
	int (*cfi_end)(Dwarf_CFI *cache);
	struct Dwarf *(*begin_elf)(Elf *elf, Dwarf_Cmd cmd, Elf_Scn *scngrp);
	Dwarf_CFI *(*getcfi)(Dwarf *dwarf);
	int (*end)(Dwarf *dwarf);
	int (*cfi_addrframe)(Dwarf_CFI *cache, Dwarf_Addr address,
			     Dwarf_Frame **frame);
	int (*frame_info)(Dwarf_Frame *frame, Dwarf_Addr *start,
			  Dwarf_Addr *end, bool *signalp);
	int (*frame_cfa)(Dwarf_Frame *frame, Dwarf_Op **ops, size_t *nops);
	int (*frame_register)(Dwarf_Frame *frame, int regno,
			      Dwarf_Op ops_mem[3], Dwarf_Op **ops,
			      size_t *nops);
};

const struct sframe_jit__dw *sframe_jit__dw(void);

/* The same by libdw; cfi_libdw.c */
int sframe_jit__libdw_fde(const struct sframe_jit__dw *dw, Dwarf_CFI *cfi,
			  const struct sframe_jit__fde *fde,
			  struct sframe_jit__rows *rows, unsigned int *why);

/* sframe_jit__cfi_convert() @how */
#define SFRAME_JIT__CFI_LIBDW		0x1	/* every FDE by libdw */
#define SFRAME_JIT__CFI_OUTCOMES	0x2	/* keep each FDE's outcome */
#define SFRAME_JIT__CFI_DEBUG_FRAME	0x4	/* .debug_frame if no .eh_frame */
#define SFRAME_JIT__CFI_PLT		0x8	/* the .plt's FDE as stubs */

/* An FDE's outcome: a reason, or this for a function. */
#define SFRAME_JIT__CFI_CONVERTED	0xff

int sframe_jit__cfi_convert(const void *image, size_t size, unsigned int how,
			    struct sframe_jit_cfi **cfip);
const uint8_t *sframe_jit__cfi_outcomes(const struct sframe_jit_cfi *cfi,
					uint32_t *nrp);
uint64_t sframe_jit__cfi_nr_by_libdw(const struct sframe_jit_cfi *cfi);

/* Keep the function of the FDE at [lo, hi) alone; cfi.c. */
void sframe_jit__cfi_clip(struct sframe_jit_cfi *cfi, uint64_t lo,
			  uint64_t hi);

/* The functions and rows of a converted table; cfi.c. */
const struct sframe_jit__func *
sframe_jit__cfi_table(const struct sframe_jit_cfi *cfi, uint32_t *nr_funcs,
		      const struct sframe_jit_row **rows);

/* A bare SFrame version 2 section of @funcs; sframe_write.c. */
int sframe_jit__sframe_encode(const struct sframe_jit__func *funcs,
			      uint32_t nr_funcs,
			      const struct sframe_jit_row *rows,
			      uint64_t sframe_vaddr, void **bufp,
			      size_t *sizep);

/* The size rules of an options structure. */
int sframe_jit__check_opts(const void *opts, size_t sz, size_t first,
			   size_t known);

#endif /* __SFRAME_JIT_INTERNAL_H */
