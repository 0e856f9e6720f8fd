/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_SFRAME_JIT_H
#define _UAPI_LINUX_SFRAME_JIT_H

/*
 * sframe_jit_open(2): a JIT registry, unwind tables that a JIT compiler
 * publishes for the code it generates, so that the kernel's user stack
 * unwinder (perf callchains, BPF stack helpers) walks through that code
 * without frame pointers.
 *
 *	int sframe_jit_open(const struct sframe_jit_args *args, size_t size);
 *
 * returns a file descriptor (close-on-exec) for a new registry over the
 * code range [text_start, text_end) of the calling process, registered
 * at once.  The process maps it, once, with mmap(NULL, size, PROT_READ |
 * PROT_WRITE, MAP_SHARED, fd, 0), where size is lseek(fd, 0, SEEK_END),
 * and publishes functions by writing records into it.  The registration
 * ends when the mapping is unmapped or the file released, whichever
 * comes first; exec and exit end it with the process's memory.  A child
 * does not inherit the mapping (it is VM_DONTCOPY) nor the registration:
 * it opens a registry of its own, copied from its parent's with
 * SFRAME_JIT_COPY.
 *
 * @size is the size of @args as userspace knows it.  The structure only
 * grows at its end: the kernel accepts a smaller structure down to its
 * first published version (fields it lacks read as zero) and a larger
 * one, up to a page, whose bytes unknown to the kernel are zero (else
 * E2BIG), as clone3() and openat2() do.
 *
 * Documentation/userspace-api/sframe.rst is the full description.
 */

#include <linux/types.h>

/**
 * struct sframe_jit_args - the registry sframe_jit_open() makes
 * @text_start: first byte of the JIT's code range.
 * @text_end: end (exclusive) of the code range; text_start < text_end,
 *	and text_end at most TASK_SIZE of the calling thread, which on
 *	x86-64 depends on the paging mode (sframe.rst gives the values).
 *	A range inside the process's own mappings always passes.
 * @fde_capacity: number of function descriptors the registry holds,
 *	1 to SFRAME_JIT_MAX_FDES.
 * @fre_capacity: number of frame rows the registry holds, 1 to
 *	SFRAME_JIT_MAX_FRES.
 * @flags: SFRAME_JIT_F_* and SFRAME_JIT_REPLACE or SFRAME_JIT_COPY;
 *	unknown bits are refused (EINVAL).
 * @rule_capacity: with SFRAME_JIT_F_COMPACT, number of frame rules the
 *	registry holds, 1 to SFRAME_JIT_MAX_RULES; without it, 0.
 * @src_fd: with SFRAME_JIT_REPLACE or SFRAME_JIT_COPY, a descriptor of
 *	the registry whose records the new one starts with; otherwise
 *	ignored.
 * @__reserved: must be 0.
 */
struct sframe_jit_args {
	__aligned_u64 text_start;
	__aligned_u64 text_end;
	__u32 fde_capacity;
	__u32 fre_capacity;
	__u32 flags;
	__u32 rule_capacity;
	__s32 src_fd;
	__u32 __reserved;
};

#define SFRAME_JIT_ARGS_SIZE_VER0	40

/*
 * struct sframe_jit_args.flags: the registry holds compact records
 * (struct sframe_jit_cfde, struct sframe_jit_cfre and struct
 * sframe_jit_rule) instead of struct sframe_jit_fde and struct
 * sframe_jit_fre.  The code range may then span at most 4 GiB
 * (text_end - text_start <= 2^32), or the call fails with EINVAL.
 */
#define SFRAME_JIT_F_COMPACT	0x1
/*
 * struct sframe_jit_args.flags: the unwinder counts its lookups in the
 * registry's stats (struct sframe_jit_stats).  Without it the counters
 * stay zero and the unwinder never writes to the registry.  A debugging
 * aid: the counts tell the process when and how often it is sampled,
 * and every CPU that samples it writes one cache line of its memory.
 */
#define SFRAME_JIT_F_STATS	0x2
/*
 * struct sframe_jit_args.flags: the new registry replaces the one of
 * @src_fd, which must be registered in the calling process for exactly
 * [text_start, text_end), be of the same kind (SFRAME_JIT_F_COMPACT or
 * not) and hold at most the new one's capacities.  Its descriptors,
 * rows, rules, count and sequence count are copied into the new one,
 * which becomes the registry the kernel reads, with no moment in
 * between in which the range is not covered.  The old one stays mapped
 * until the process unmaps it, and is no longer read by the kernel.
 */
#define SFRAME_JIT_REPLACE	0x4
/*
 * struct sframe_jit_args.flags: the new registry starts with a copy of
 * the records of @src_fd's registry, which may be another process's (a
 * parent's, whose descriptor a forked child inherited), of the same
 * range and kind and at most the new one's capacities.  The new one is
 * registered as a registry without the flag is; the old one is not
 * affected.
 */
#define SFRAME_JIT_COPY		0x8

/* Limits on a JIT registry's capacities. */
#define SFRAME_JIT_MAX_FDES	(1U << 22)
#define SFRAME_JIT_MAX_FRES	(1U << 24)
/* A compact row names its rule in 16 bits. */
#define SFRAME_JIT_MAX_RULES	(1U << 16)
/*
 * The JIT registry.
 *
 * A mapping of (header page | descriptor area | frame-row area), and a
 * frame-rule area after them with SFRAME_JIT_F_COMPACT, shared by the
 * JIT and the kernel.  The kernel fills the header's layout fields
 * at registration and never reads them back: it keeps its own copy of
 * the layout, the capacities and the text range.  Everything the JIT
 * writes is checked each time the kernel reads it; a bad value costs the
 * process its own stack traces through the range, nothing else.
 *
 * Publication protocol (see Documentation/userspace-api/sframe.rst):
 *
 *  - Appending a function: write its frame rows into unused row slots,
 *    then its descriptor at index fde_count, then store fde_count + 1
 *    with release semantics.  The kernel reads fde_count with acquire
 *    semantics and uses only descriptors below it.
 *  - Descriptors below fde_count must be sorted by func_start and must
 *    not overlap, and the rows of each function must start at strictly
 *    increasing offsets.  The kernel binary-searches both, so a lookup
 *    reads O(log n) of them, never all: it checks those its searches
 *    probe, and the descriptor and the row just before the ones it
 *    picks.  Entries out of order or overlapping where a lookup meets
 *    them make it malformed: the frame falls back to the frame pointer,
 *    and stats.malformed counts it.  Entries out of order where no
 *    lookup meets them go undetected, and a PC whose neighbourhood is
 *    sorted is unwound by its row.
 *  - Removing a function: set SFRAME_JIT_FDE_TOMBSTONE in its flags.
 *  - Rewriting published entries in place (compaction, out-of-order
 *    insertion, code reuse): make seq odd, then write, then make it even
 *    again, with release ordering between the steps.  A kernel reader
 *    that sees seq odd, or changed across its read, treats the frame as
 *    unknown.  The kernel never waits for the JIT.
 */

#define SFRAME_JIT_MAGIC	0x54494a53	/* "SJIT" in little endian */
#define SFRAME_JIT_VERSION	1

/**
 * struct sframe_jit_stats - how the kernel used a registry
 * @lookups: PCs the unwinder looked up in this registry.
 * @hits: lookups that found a live descriptor and row.
 * @tombstone_hits: lookups that found a tombstoned descriptor.
 * @seq_retries: lookups abandoned because seq was odd or changed.
 * @malformed: lookups that met a malformed descriptor or row.
 *
 * Written by the kernel's unwinder, without synchronisation between
 * CPUs (counts are approximate), and only in a registry made with
 * SFRAME_JIT_F_STATS: zero in the others.  Never read by the kernel.
 */
struct sframe_jit_stats {
	__u64 lookups;
	__u64 hits;
	__u64 tombstone_hits;
	__u64 seq_retries;
	__u64 malformed;
};

/**
 * struct sframe_jit_header - the first bytes of a JIT registry mapping
 * @magic: SFRAME_JIT_MAGIC.  Kernel-written at registration.
 * @version: SFRAME_JIT_VERSION.  Kernel-written at registration.
 * @header_size: sizeof(struct sframe_jit_header) of this kernel.
 *	Kernel-written.
 * @fde_stride: bytes from one descriptor to the next; at least
 *	sizeof(struct sframe_jit_fde) of version 1.  Kernel-written; a JIT
 *	must step by it, not by its own sizeof.
 * @fre_stride: bytes from one frame row to the next; at least
 *	sizeof(struct sframe_jit_fre) of version 1.  Kernel-written.
 * @flags: the registration's flags.  Kernel-written.
 * @text_start: the registered code range's start.  Kernel-written.
 * @text_end: its end.  Kernel-written.
 * @fde_off: offset of the descriptor area from the mapping's start.
 *	Kernel-written.
 * @fde_capacity: descriptors the area holds: the fde_capacity of
 *	struct sframe_jit_args, not rounded up.  Kernel-written.
 * @fre_off: offset of the frame-row area.  Kernel-written.
 * @fre_capacity: frame rows the area holds: the fre_capacity asked
 *	for, not rounded up.  Kernel-written.
 * @map_size: bytes in the mapping, for munmap(); a multiple of the page
 *	size.  The bytes past the last area are padding the kernel never
 *	reads.  Kernel-written.
 * @fde_count: published descriptors.  JIT-written, with release
 *	semantics, after the descriptor and its rows; read by the kernel
 *	with acquire semantics.  A value above fde_capacity is clamped to
 *	it.
 * @seq: sequence count of in-place rewrites.  JIT-written: odd while a
 *	rewrite is in progress.  Read by the kernel before and after each
 *	lookup.
 * @reserved0: zero.  JIT-side: the kernel checks it at every lookup, and
 *	a value other than zero makes every lookup in the registry
 *	malformed, so that a later version can give it a meaning.
 * @stats: kernel-written counters with SFRAME_JIT_F_STATS, see struct
 *	sframe_jit_stats; zero without.
 * @rule_off: with SFRAME_JIT_F_COMPACT, offset of the frame-rule area
 *	from the mapping's start; 0 without.  Kernel-written.
 * @rule_capacity: rules the area holds: the rule_capacity asked for.
 *	Kernel-written.
 * @rule_stride: bytes from one rule to the next; at least
 *	sizeof(struct sframe_jit_rule).  Kernel-written.
 * @reserved1: zero.
 * @reserved2: zero.
 * @reserved: zero; room for later versions.
 *
 * With SFRAME_JIT_F_COMPACT in @flags, @fde_stride steps through struct
 * sframe_jit_cfde records and @fre_stride through struct sframe_jit_cfre
 * records.
 */
struct sframe_jit_header {
	__u32 magic;
	__u16 version;
	__u16 header_size;
	__u16 fde_stride;
	__u16 fre_stride;
	__u32 flags;
	__aligned_u64 text_start;
	__aligned_u64 text_end;
	__u32 fde_off;
	__u32 fde_capacity;
	__u32 fre_off;
	__u32 fre_capacity;
	__u32 map_size;
	/* Written by the JIT. */
	__u32 fde_count;
	__u32 seq;
	__u32 reserved0;
	/* Written by the kernel. */
	struct sframe_jit_stats stats;
	__u32 rule_off;
	__u32 rule_capacity;
	__u16 rule_stride;
	__u16 reserved1;
	__u32 reserved2;
	__u64 reserved[14];
};

/* struct sframe_jit_fde.type: how a PC selects the function's row. */
enum sframe_jit_fde_type {
	/* The row whose start_off is the last one <= pc - func_start. */
	SFRAME_JIT_FDE_PCINC	= 0,
	/*
	 * As PCINC with (pc - func_start) % rep_size: for a run of
	 * identical stubs of rep_size bytes each.
	 */
	SFRAME_JIT_FDE_PCMASK	= 1,
};

/* struct sframe_jit_fde.flags */
#define SFRAME_JIT_FDE_TOMBSTONE	0x0001	/* function reclaimed */

/**
 * struct sframe_jit_fde - one function descriptor, JIT-written
 * @func_start: address of the function's first byte; inside the text
 *	range.  A descriptor that is not is malformed.
 * @func_size: size of the function in bytes; func_start + func_size must
 *	not pass text_end, or the descriptor is malformed.
 * @fre_start: index of the function's first frame row in the row area.
 * @fre_count: number of frame rows, at least 1; fre_start + fre_count
 *	must not pass fre_capacity.
 * @flags: SFRAME_JIT_FDE_* bits; unknown bits make the descriptor
 *	malformed.
 * @type: enum sframe_jit_fde_type; an unknown type is malformed.
 * @rep_size: PCMASK repeat size in bytes, the size of one stub; 0 with
 *	PCMASK is malformed.  A __u8: PCMASK describes stubs of at most
 *	255 bytes, and a run of longer ones takes a descriptor per stub.
 *	Ignored for PCINC.
 *
 * A lookup that picks a malformed descriptor is malformed: the unwinder
 * falls back to the frame pointer for that frame and counts it in
 * stats.malformed.  Unknown flag bits and a function outside the text
 * range count for every PC the search leads to the descriptor, the
 * other faults for PCs inside the function.
 */
struct sframe_jit_fde {
	__aligned_u64 func_start;
	__u32 func_size;
	__u32 fre_start;
	__u32 fre_count;
	__u16 flags;
	__u8 type;
	__u8 rep_size;
};

/* struct sframe_jit_fre.cfa_base */
enum sframe_jit_cfa_base {
	SFRAME_JIT_CFA_SP	= 0,	/* CFA = stack pointer + cfa_off */
	SFRAME_JIT_CFA_FP	= 1,	/* CFA = frame pointer + cfa_off */
};

/* struct sframe_jit_fre.flags */
/* The caller's frame pointer is saved at CFA + fp_off. */
#define SFRAME_JIT_FRE_FP_SAVED		0x01
/* Outermost frame: the return address is undefined; unwinding stops. */
#define SFRAME_JIT_FRE_RA_UNDEFINED	0x02

/**
 * struct sframe_jit_fre - one frame row, JIT-written
 * @start_off: offset from func_start at which the row starts to apply.
 *	Rows of one function must have strictly increasing start_off, the
 *	first one 0, all below func_size (below rep_size for PCMASK).
 *	The first row is read at every lookup: if its start_off is not 0,
 *	every lookup in the function is malformed.  A row at or past
 *	func_size never applies; a lookup whose search probes it is
 *	malformed.
 * @cfa_off: offset added to the CFA base register.
 * @ra_off: the return address is saved at CFA + ra_off (-8 on x86-64).
 * @fp_off: with SFRAME_JIT_FRE_FP_SAVED, the caller's frame pointer is
 *	saved at CFA + fp_off; otherwise the frame pointer is unchanged.
 * @cfa_base: enum sframe_jit_cfa_base; an unknown value is malformed.
 * @flags: SFRAME_JIT_FRE_* bits; unknown bits make the row malformed.
 * @reserved: zero; a value other than zero makes the row malformed.
 *
 * The semantics are those of an SFrame frame row entry.  cfa_base, flags
 * and reserved are checked in the row a lookup picks, and only there: a
 * bad value costs the PCs that row covers.
 */
struct sframe_jit_fre {
	__u32 start_off;
	__s32 cfa_off;
	__s16 ra_off;
	__s16 fp_off;
	__u8 cfa_base;
	__u8 flags;
	__u16 reserved;
};

/*
 * Compact records, for registries made with SFRAME_JIT_F_COMPACT.
 *
 * A table of many functions repeats few distinct frame rules (CFA
 * base and offset, where the RA and FP are saved), so a compact row is
 * a start offset and the index of its rule in a third area, and a
 * compact descriptor holds its function's start as an offset into the
 * code range: 16 bytes per function and 4 per row, against 24 and 16.
 * Rows of one function may be shared with others of the same shape, as
 * in the version 1 layout.  The publication protocol is the same, and
 * rules are written, as rows are, before the descriptor that leads to
 * them is published.
 */

/* struct sframe_jit_cfde.flags */
/* SFRAME_JIT_FDE_TOMBSTONE (0x0001): function reclaimed. */
/* Rows repeat every rep_size bytes, as SFRAME_JIT_FDE_PCMASK. */
#define SFRAME_JIT_CFDE_PCMASK		0x02

/**
 * struct sframe_jit_cfde - one compact function descriptor, JIT-written
 * @func_off: the function's first byte less text_start.
 * @func_size: size of the function in bytes; func_off + func_size must
 *	not pass text_end - text_start, or the descriptor is malformed.
 * @fre_start: index of the function's first compact row in the row area.
 * @fre_count: number of rows, at least 1; fre_start + fre_count must not
 *	pass fre_capacity.
 * @flags: SFRAME_JIT_FDE_TOMBSTONE and SFRAME_JIT_CFDE_PCMASK; unknown
 *	bits make the descriptor malformed.
 * @rep_size: with SFRAME_JIT_CFDE_PCMASK, the repeat size in bytes; 0 is
 *	then malformed.  Ignored without.
 *
 * The rules of struct sframe_jit_fde apply otherwise, with func_off for
 * func_start: descriptors sorted by it and not overlapping.
 */
struct sframe_jit_cfde {
	__u32 func_off;
	__u32 func_size;
	__u32 fre_start;
	__u16 fre_count;
	__u8 flags;
	__u8 rep_size;
};

/**
 * struct sframe_jit_cfre - one compact frame row, JIT-written
 * @start_off: as in struct sframe_jit_fre; 16 bits, so a function whose
 *	rule changes past 64 KiB into it needs a second descriptor from
 *	there on.
 * @rule: index of the row's rule in the rule area; an index at or past
 *	rule_capacity makes the row malformed.
 */
struct sframe_jit_cfre {
	__u16 start_off;
	__u16 rule;
};

/**
 * struct sframe_jit_rule - the frame rule of compact rows, JIT-written
 * @cfa_off: as in struct sframe_jit_fre.
 * @ra_off: as in struct sframe_jit_fre.
 * @fp_off: as in struct sframe_jit_fre.
 * @cfa_base: as in struct sframe_jit_fre.
 * @flags: as in struct sframe_jit_fre.
 * @reserved: as in struct sframe_jit_fre.
 *
 * The fields of struct sframe_jit_fre but its start, with the same
 * meaning and the same checks, made in the rule a lookup picks.
 */
struct sframe_jit_rule {
	__s32 cfa_off;
	__s16 ra_off;
	__s16 fp_off;
	__u8 cfa_base;
	__u8 flags;
	__u16 reserved;
};

#endif /* _UAPI_LINUX_SFRAME_JIT_H */
