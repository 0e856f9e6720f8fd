/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libsframe_jit: publish unwind tables for JIT code through
 * sframe_jit_open(2), so that perf and BPF unwind user stacks through it.
 *
 * A JIT creates one registry per code range, then adds each function it
 * emits with its frame rows (given explicitly, or built from an x86-64
 * frame shape), and removes functions it discards.  The library writes
 * the registry the kernel shares with the process, following the
 * publication protocol of Documentation/userspace-api/sframe.rst:
 * appends need no system call, rewrites go under the registry's sequence
 * count, and a full registry is replaced by a larger one without a gap.
 *
 * Every function returns 0 or a non-negative count on success and a
 * negative errno value on failure.  The library never aborts and never
 * prints; the one state its registries share is the process's list of
 * them, which its pthread_atfork() handlers walk to give a forked child
 * registries of its own.  See Documentation/sframe_jit.rst beside this
 * header for the locking scheme and the semantics across fork().
 */
#ifndef __SFRAME_JIT_H
#define __SFRAME_JIT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef SFRAME_JIT_API
#define SFRAME_JIT_API __attribute__((visibility("default")))
#endif

/* An opaque handle on one registry. */
struct sframe_jit;

/*
 * Declare and zero an options structure, set its size and the fields
 * given, as LIBBPF_OPTS() does:
 *
 *	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .fde_capacity = 256);
 */
#define SFRAME_JIT_OPTS(TYPE, NAME, ...)				\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE) {						\
			.sz = sizeof(struct TYPE),			\
			__VA_ARGS__					\
		};							\
	})

/*
 * Keep the table in private memory and never call the kernel.  For a
 * JIT that runs on kernels without sframe_jit_open(2) but wants one code
 * path (the perf map and the API work the same), for tools that build a
 * table to inspect it, and for tests.  The kernel does not see it.
 */
#define SFRAME_JIT_F_NO_KERNEL	0x1
/* Never replace the registry by a larger one: report -ENOSPC instead. */
#define SFRAME_JIT_F_NO_GROW	0x2
/* Append a line to /tmp/perf-PID.map for each named function added. */
#define SFRAME_JIT_F_PERF_MAP	0x4
/*
 * sframe_jit_import_cfi() stores each distinct row sequence once, and
 * functions of the same shape point at the same rows.  The price: the
 * registry never compacts, so the rows of removed functions are never
 * reclaimed.  For a table imported once and kept, as sframe-run's.
 */
#define SFRAME_JIT_F_SHARE_ROWS	0x8
/*
 * Compact records (SFRAME_JIT_F_COMPACT of <linux/sframe_jit.h>): 16 bytes
 * per function and 4 per row instead of 24 and 16, the rows naming their
 * rule in a table of distinct rules of @rule_capacity entries.  For a
 * table imported once and kept, as sframe-run's: needs
 * SFRAME_JIT_F_SHARE_ROWS (-EINVAL otherwise) and a range of at most
 * 4 GiB.  On such a registry sframe_jit_import_cfi(), sframe_jit_remove(),
 * sframe_jit_remove_range(), sframe_jit_find(), sframe_jit_get_info(),
 * sframe_jit_compact() (a no-op with shared rows) and
 * sframe_jit_destroy() work; the other calls that write return
 * -EOPNOTSUPP (sframe_jit_add() and its variants, the ELF and SFrame
 * imports, sframe_jit_grow()), and the registry never grows: an import
 * it cannot hold fails with -ENOSPC.  sframe_jit_cfi_compact_caps()
 * gives the capacities a converted table needs.
 */
#define SFRAME_JIT_F_COMPACT_RECORDS	0x10

/**
 * struct sframe_jit_opts - options of sframe_jit_create()
 * @sz: sizeof(struct sframe_jit_opts), set by SFRAME_JIT_OPTS().
 * @fde_capacity: functions the registry holds at first; 0 for 64.
 * @fre_capacity: frame rows it holds at first; 0 for four per function.
 * @max_fde_capacity: bound on growth of @fde_capacity; 0 for the kernel's
 *	limit, SFRAME_JIT_MAX_FDES of <linux/sframe_jit.h>.
 * @max_fre_capacity: bound on growth of @fre_capacity; 0 for the kernel's
 *	limit, SFRAME_JIT_MAX_FRES.
 * @compact_threshold: tombstones above which sframe_jit_remove()
 *	compacts the registry; 0 for a quarter of the published
 *	descriptors, but at least 16.
 * @flags: SFRAME_JIT_F_* bits.
 * @perf_map_path: with SFRAME_JIT_F_PERF_MAP, the file to append to;
 *	NULL for /tmp/perf-PID.map of the calling process, which a child
 *	created by fork() switches to its own PID.
 * @rule_capacity: with SFRAME_JIT_F_COMPACT_RECORDS, the distinct frame
 *	rules the registry holds, up to SFRAME_JIT_MAX_RULES of
 *	<linux/sframe_jit.h>; 0 for as many as the rows, within that bound,
 *	which any import that fits the rows needs at most.  Without the
 *	flag it must be 0 (-EINVAL otherwise).
 *
 * Fields after @perf_map_path came later, as for struct sframe_jit_info.
 */
struct sframe_jit_opts {
	size_t sz;
	uint32_t fde_capacity;
	uint32_t fre_capacity;
	uint32_t max_fde_capacity;
	uint32_t max_fre_capacity;
	uint32_t compact_threshold;
	uint32_t flags;
	const char *perf_map_path;
	uint32_t rule_capacity;
};

/* struct sframe_jit_row.cfa_base */
#define SFRAME_JIT_ROW_CFA_SP		0	/* CFA = SP + cfa_off */
#define SFRAME_JIT_ROW_CFA_FP		1	/* CFA = FP + cfa_off */

/* struct sframe_jit_row.flags */
#define SFRAME_JIT_ROW_FP_SAVED		0x01	/* caller's FP at CFA + fp_off */
#define SFRAME_JIT_ROW_RA_UNDEFINED	0x02	/* outermost frame */

/**
 * struct sframe_jit_row - how to find the caller's frame from one
 *	point of a function onwards
 * @start_off: offset from the function's start at which the row starts
 *	to apply; 0 for the first row, strictly increasing, and below the
 *	function's size (below the stub size for sframe_jit_add_stubs()).
 * @cfa_off: added to the base register to get the canonical frame
 *	address (CFA): the stack pointer before the call pushed the return
 *	address.
 * @ra_off: the return address is at CFA + @ra_off (-8 on x86-64).
 * @fp_off: with SFRAME_JIT_ROW_FP_SAVED, the caller's frame pointer is
 *	saved at CFA + @fp_off; otherwise it is still in its register.
 * @cfa_base: SFRAME_JIT_ROW_CFA_SP or SFRAME_JIT_ROW_CFA_FP.
 * @flags: SFRAME_JIT_ROW_* bits.
 *
 * The semantics are those of an SFrame frame row entry.  On x86-64, a
 * function without a frame needs the single row { .cfa_off = 8,
 * .ra_off = -8 }, which sframe_jit_add() uses when given no rows.
 */
struct sframe_jit_row {
	uint32_t start_off;
	int32_t cfa_off;
	int16_t ra_off;
	int16_t fp_off;
	uint8_t cfa_base;
	uint8_t flags;
};

/**
 * sframe_jit_create() - create a registry for a JIT code range
 * @text_start: first byte of the code range.
 * @text_end: end of the code range, exclusive.
 * @opts: options, or NULL for the defaults.
 * @regp: the new registry on success, untouched on failure.
 *
 * Registers [@text_start, @text_end) with the kernel
 * (sframe_jit_open(2), whose descriptor the registry keeps open until
 * sframe_jit_destroy()) unless @opts has SFRAME_JIT_F_NO_KERNEL.  The
 * range need not be mapped yet.  Without SFRAME_JIT_F_NO_KERNEL the call
 * is made only where /proc/sys/kernel/sframe_max_registrations exists:
 * elsewhere the system call number may belong to another call.
 *
 * Return: 0; -EINVAL for a bad range, capacity or option; -E2BIG for
 * options with non-zero bytes this library does not know; -ENOSYS when
 * the kernel lacks sframe_jit_open(2); -EPROTO when it writes a registry
 * layout this library does not know; -ENOMEM; the kernel's error
 * (-EEXIST for a range that overlaps a registration, -ENOSPC past
 * kernel.sframe_max_registrations, -ENOMEM past
 * kernel.sframe_user_pinned_kb); the
 * error of opening the perf map.
 */
SFRAME_JIT_API int sframe_jit_create(uint64_t text_start, uint64_t text_end,
				     const struct sframe_jit_opts *opts,
				     struct sframe_jit **regp);

/**
 * sframe_jit_destroy() - unregister a registry and free it
 * @reg: the registry, or NULL.
 *
 * Unmaps the registry, which ends its registration, and closes its perf
 * map (the file stays, for perf to read).  No other call on @reg may run
 * or follow.
 */
SFRAME_JIT_API void sframe_jit_destroy(struct sframe_jit *reg);

/**
 * sframe_jit_add() - publish a function and its frame rows
 * @reg: the registry.
 * @start: address of the function's first byte.
 * @size: size of the function in bytes, at least 1.
 * @rows: its frame rows, or NULL for one frameless x86-64 row.
 * @nr_rows: number of @rows; 0 with NULL @rows.
 * @name: symbol for the perf map, or NULL for no perf map line.
 *
 * Publish the function before any thread runs it.  It may go anywhere in
 * the range, in any order: above the functions already there it is
 * appended, elsewhere it is inserted under the sequence count.  Removed
 * functions that it overlaps (code reuse) make way for it; live ones do
 * not.  When the registry is full, reclaims removed functions or
 * replaces the registry by a larger one.
 *
 * Return: 0; -EINVAL for a bad size or row; -ERANGE when the function is
 * not inside the registry's range; -EEXIST when it overlaps a live
 * function; -ENOSPC when the registry is full and may not grow
 * (SFRAME_JIT_F_NO_GROW or the maximum capacities); the error of the
 * replacement otherwise (-ENOMEM for instance).  On error the registry
 * is unchanged.
 */
SFRAME_JIT_API int sframe_jit_add(struct sframe_jit *reg, uint64_t start,
				  uint32_t size,
				  const struct sframe_jit_row *rows,
				  uint32_t nr_rows, const char *name);

/**
 * sframe_jit_add_stubs() - publish a run of identical stubs
 * @reg: the registry.
 * @start: address of the first stub.
 * @size: size of the whole run in bytes.
 * @stub_size: size of one stub, 1 to 255.
 * @rows: the rows of one stub, start offsets below @stub_size.
 * @nr_rows: number of @rows, at least 1.
 * @name: symbol for the perf map, or NULL.
 *
 * As sframe_jit_add(), for a PCMASK descriptor: a PC selects its row by
 * its offset modulo @stub_size (PLT-like trampolines, for instance).
 *
 * Return: as sframe_jit_add().
 */
SFRAME_JIT_API int sframe_jit_add_stubs(struct sframe_jit *reg,
					uint64_t start, uint32_t size,
					uint32_t stub_size,
					const struct sframe_jit_row *rows,
					uint32_t nr_rows, const char *name);

/*
 * x86-64 frame shapes.  Offsets are from the function's start to the end
 * of an instruction, where the frame changes; 0 means the instruction is
 * absent (no instruction ends at offset 0).  A JIT's assembler knows them
 * as it emits the code.
 */
#define SFRAME_JIT_X86_64_MAX_SAVES	8

/**
 * struct sframe_jit_x86_64_epilogue - one epilogue of an x86-64 function
 * @add_rsp: end of "add $stack_size,%rsp" (or "lea"), 0 if none; needed
 *	in a function without frame pointer that allocated stack.
 * @pop: end of each "pop" of a callee-saved register, in execution order
 *	(reverse of the pushes); needed without frame pointer, may be 0 in
 *	a function with one, where they do not move the CFA.
 * @pop_rbp: end of "pop %rbp" or "leave", 0 if the function did not
 *	push %rbp.
 * @ret: end of "ret" (or of the tail jump); from there on the body's
 *	frame applies again.  0 or the function's size when the epilogue
 *	ends the function.
 */
struct sframe_jit_x86_64_epilogue {
	uint32_t add_rsp;
	uint32_t pop[SFRAME_JIT_X86_64_MAX_SAVES];
	uint32_t pop_rbp;
	uint32_t ret;
};

/**
 * struct sframe_jit_x86_64_frame - the frame of an x86-64 function
 * @push_rbp: end of "push %rbp", the first stack adjustment; 0 if none.
 * @mov_rbp: end of "mov %rsp,%rbp", which makes %rbp the frame pointer;
 *	0 if none.  Needs @push_rbp.
 * @nr_saves: pushes of callee-saved registers after those, up to
 *	SFRAME_JIT_X86_64_MAX_SAVES.
 * @save: end of each such push.
 * @sub_rsp: end of "sub $stack_size,%rsp", 0 if none.
 * @stack_size: the bytes it allocates.
 * @nr_epilogues: number of @epilogue.
 * @epilogue: the epilogues, in increasing address order, after the
 *	prologue.
 *
 * An all-zero frame describes a function that never moves the stack
 * pointer.  The prologue steps come in the order of the fields; their
 * offsets increase.  Other instructions may sit between them (endbr64,
 * register moves, stack probes that restore %rsp).
 */
struct sframe_jit_x86_64_frame {
	uint32_t push_rbp;
	uint32_t mov_rbp;
	uint32_t nr_saves;
	uint32_t save[SFRAME_JIT_X86_64_MAX_SAVES];
	uint32_t sub_rsp;
	uint32_t stack_size;
	uint32_t nr_epilogues;
	const struct sframe_jit_x86_64_epilogue *epilogue;
};

/**
 * sframe_jit_x86_64_rows() - frame rows of an x86-64 function
 * @frame: the function's frame shape.
 * @size: the function's size in bytes.
 * @rows: where to write the rows, or NULL to count them.
 * @max_rows: room at @rows.
 *
 * Rows that would start at or past @size are left out, and a row equal
 * to the one before it is merged into it.
 *
 * Return: the number of rows (written, or needed with NULL @rows);
 * -EINVAL for an inconsistent @frame; -ENOSPC when @max_rows is too
 * small.
 */
SFRAME_JIT_API int sframe_jit_x86_64_rows(const struct sframe_jit_x86_64_frame *frame,
					  uint32_t size,
					  struct sframe_jit_row *rows,
					  uint32_t max_rows);

/**
 * sframe_jit_add_x86_64() - publish an x86-64 function by its frame shape
 * @reg: the registry.
 * @start: address of the function's first byte.
 * @size: size of the function in bytes.
 * @frame: its frame shape, or NULL for a function without frame.
 * @name: symbol for the perf map, or NULL.
 *
 * sframe_jit_x86_64_rows() and sframe_jit_add() in one call.
 *
 * Return: as those two.
 */
SFRAME_JIT_API int sframe_jit_add_x86_64(struct sframe_jit *reg,
					 uint64_t start, uint32_t size,
					 const struct sframe_jit_x86_64_frame *frame,
					 const char *name);

/**
 * sframe_jit_remove() - retire a function
 * @reg: the registry.
 * @start: the address it was added at.
 *
 * Marks the function's descriptor as a tombstone: from then on a PC in
 * it gets the kernel's frame pointer fallback.  Call it once no thread
 * runs the function any more.  When tombstones pass the registry's
 * compaction threshold, compacts the registry.
 *
 * Return: 0; -ENOENT when no live function starts at @start.
 */
SFRAME_JIT_API int sframe_jit_remove(struct sframe_jit *reg, uint64_t start);

/**
 * sframe_jit_remove_range() - retire every function in a range
 * @reg: the registry.
 * @start: start of the range.
 * @end: end of the range, exclusive.
 *
 * For a JIT that flushes part of its code cache: retires each live
 * function that lies inside [@start, @end).  A function that straddles
 * an end of the range stays.
 *
 * Return: the number of functions retired; -EINVAL if @start > @end.
 */
SFRAME_JIT_API int sframe_jit_remove_range(struct sframe_jit *reg,
					   uint64_t start, uint64_t end);

/**
 * sframe_jit_compact() - drop tombstones and reclaim their rows now
 * @reg: the registry.
 *
 * Rewrites the registry under its sequence count: a sample taken
 * meanwhile in the range gets the frame pointer fallback.  The library
 * compacts on its own (see @compact_threshold of struct
 * sframe_jit_opts); this is for a JIT that knows a quiet moment.
 *
 * Return: the number of descriptors dropped.
 */
SFRAME_JIT_API int sframe_jit_compact(struct sframe_jit *reg);

/**
 * sframe_jit_grow() - make room for at least the given capacities
 * @reg: the registry.
 * @fde_capacity: functions the registry must hold.
 * @fre_capacity: frame rows it must hold.
 *
 * Replaces the registry by one with at least these capacities
 * (SFRAME_JIT_REPLACE), with no moment at which the range is not
 * covered, and unmaps the old one and closes its descriptor.  Does
 * nothing when the registry is large enough.  Works with
 * SFRAME_JIT_F_NO_GROW, which only stops growth on demand.
 *
 * Return: 0; -ENOSPC above the maximum capacities; -EPROTO when the
 * kernel writes a layout this library does not know; the kernel's error
 * (-ENOMEM past kernel.sframe_user_pinned_kb, for instance).  On error
 * the registry is unchanged.
 */
SFRAME_JIT_API int sframe_jit_grow(struct sframe_jit *reg,
				   uint32_t fde_capacity,
				   uint32_t fre_capacity);

/**
 * struct sframe_jit_func - a function as the registry holds it
 * @start: address of its first byte.
 * @size: its size in bytes.
 * @nr_rows: its number of frame rows.
 * @stub_size: 0, or the stub size given to sframe_jit_add_stubs().
 */
struct sframe_jit_func {
	uint64_t start;
	uint32_t size;
	uint32_t nr_rows;
	uint32_t stub_size;
};

/**
 * sframe_jit_find() - read back the live function that holds an address
 * @reg: the registry.
 * @addr: an address.
 * @func: filled in on success; may be NULL.
 * @rows: where to copy the function's rows, or NULL.
 * @max_rows: room at @rows; the first @max_rows rows are copied.
 *
 * Return: 0; -ENOENT when no live function holds @addr.
 */
SFRAME_JIT_API int sframe_jit_find(struct sframe_jit *reg, uint64_t addr,
				   struct sframe_jit_func *func,
				   struct sframe_jit_row *rows,
				   uint32_t max_rows);

/**
 * struct sframe_jit_info - the state of a registry
 * @sz: sizeof(struct sframe_jit_info), set by the caller.
 * @text_start: start of the code range.
 * @text_end: end of the code range.
 * @fde_capacity: functions the registry holds now.
 * @fre_capacity: frame rows it holds now.
 * @nr_funcs: live functions.
 * @nr_tombstones: removed functions not yet compacted away.
 * @nr_rows_used: row slots in use, of live and removed functions and
 *	of rows that compaction has not reclaimed yet.
 * @nr_rows_live: rows of live functions.
 * @nr_grows: replacements by a larger registry so far.
 * @nr_compactions: compactions so far.
 * @nr_perf_map_errors: perf map lines that could not be written.
 * @kernel: 1 if the kernel reads the registry, 0 with
 *	SFRAME_JIT_F_NO_KERNEL.
 * @nr_lock_waits: calls that found the registry's writer lock held by
 *	another thread and waited for it.
 * @lock_wait_ns: nanoseconds those calls waited, together.  A JIT whose
 *	threads wait a noticeable share of their time would rather give
 *	each thread, or each code region, a registry of its own.
 *
 * Fields after @kernel came later: a caller that knows them sets @sz to
 * cover them; an older caller's smaller @sz gets the fields it knows.
 */
struct sframe_jit_info {
	size_t sz;
	uint64_t text_start;
	uint64_t text_end;
	uint32_t fde_capacity;
	uint32_t fre_capacity;
	uint32_t nr_funcs;
	uint32_t nr_tombstones;
	uint32_t nr_rows_used;
	uint32_t nr_rows_live;
	uint64_t nr_grows;
	uint64_t nr_compactions;
	uint64_t nr_perf_map_errors;
	uint32_t kernel;
	uint64_t nr_lock_waits;
	uint64_t lock_wait_ns;
};

/**
 * sframe_jit_get_info() - report a registry's state
 * @reg: the registry.
 * @info: filled in up to @info->sz bytes; set @info->sz first.
 *
 * Return: 0; -EINVAL when @info->sz is below the first version of the
 * structure.
 */
SFRAME_JIT_API int sframe_jit_get_info(struct sframe_jit *reg,
				       struct sframe_jit_info *info);

/* Write no perf map line for imported functions. */
#define SFRAME_JIT_IMPORT_F_NO_NAMES	0x1

/**
 * struct sframe_jit_import_opts - options of sframe_jit_import_elf()
 * @sz: sizeof(struct sframe_jit_import_opts), set by SFRAME_JIT_OPTS().
 * @text_section: name of the section whose bytes the JIT copied into
 *	its code area; NULL for ".text".
 * @text_addr: the address where the first byte of that section now
 *	lives; required.
 * @flags: SFRAME_JIT_IMPORT_F_* bits.
 */
struct sframe_jit_import_opts {
	size_t sz;
	const char *text_section;
	uint64_t text_addr;
	uint32_t flags;
};

/**
 * sframe_jit_import_elf() - add the functions of an object's .sframe
 * @reg: the registry.
 * @image: the bytes of an ELF object file in memory, as the compiler
 *	wrote it: a relocatable object (gcc -c -Wa,--gsframe, or libgccjit
 *	with GCC_JIT_OUTPUT_KIND_OBJECT_FILE) or a shared object or
 *	executable.  Not modified.
 * @size: bytes at @image.
 * @opts: which section was copied and where it lives now.
 *
 * Adds each function that the object's .sframe section (SFrame version 1
 * or 2, x86-64) describes in the copied section, at its new address,
 * with its rows converted; functions in other sections are left out.
 * In a relocatable object, function starts come from the relocations of
 * .sframe.  With SFRAME_JIT_F_PERF_MAP, each function that a symbol
 * names gets a perf map line under that name.  Either every function is
 * added or, on error, none is.
 *
 * Return: the number of functions added; -EINVAL for bad arguments;
 * -ENOENT when the object has no .sframe or no such text section;
 * -ENOEXEC for a malformed object or section; -EOPNOTSUPP for an SFrame
 * version, ABI or feature this library does not handle; -ERANGE when a
 * function lands outside the registry's range; -EOVERFLOW for an offset
 * too large for a row; the errors of sframe_jit_add().
 */
SFRAME_JIT_API int sframe_jit_import_elf(struct sframe_jit *reg,
					 const void *image, size_t size,
					 const struct sframe_jit_import_opts *opts);

/**
 * sframe_jit_import_sframe() - add the functions of a bare SFrame section
 * @reg: the registry.
 * @sframe: the section's bytes, as linked (function starts final).
 * @size: bytes at @sframe.
 * @sframe_addr: the address function starts are relative to: where the
 *	section would sit if the code it describes were where it lives now.
 *	For code moved by D bytes from the object's layout, the section's
 *	address in that layout plus D.
 *
 * As sframe_jit_import_elf() for every function of the section, without
 * names.
 *
 * Return: as sframe_jit_import_elf().
 */
SFRAME_JIT_API int sframe_jit_import_sframe(struct sframe_jit *reg,
					    const void *sframe, size_t size,
					    uint64_t sframe_addr);

/*
 * Conversion of DWARF call frame information.  Why an FDE was left out:
 * indices into @nr_unsupported of struct sframe_jit_cfi_stats, and
 * arguments of sframe_jit_cfi_reason_str().
 */
#define SFRAME_JIT_CFI_EMPTY		0	/* covers no byte */
#define SFRAME_JIT_CFI_MALFORMED	1	/* libdw cannot read or evaluate it */
#define SFRAME_JIT_CFI_OVERLAP		2	/* shares bytes with another FDE */
#define SFRAME_JIT_CFI_SIGNAL		3	/* a signal frame ("S") */
#define SFRAME_JIT_CFI_CFA_EXPR		4	/* CFA by a DWARF expression */
#define SFRAME_JIT_CFI_CFA_REG		5	/* CFA from a register not RSP or RBP */
#define SFRAME_JIT_CFI_RA_RULE		6	/* RA not saved at CFA - 8 */
#define SFRAME_JIT_CFI_RBP_RULE		7	/* RBP neither kept nor at CFA + off */
#define SFRAME_JIT_CFI_RANGE		8	/* an offset, size or count too large */
#define SFRAME_JIT_CFI_NR_REASONS	9
/* Room in struct sframe_jit_cfi_stats, for reasons added later. */
#define SFRAME_JIT_CFI_MAX_REASONS	16

/* An opaque handle on the functions and rows converted from one object. */
struct sframe_jit_cfi;

/**
 * sframe_jit_cfi_convert() - convert an object's .eh_frame to frame rows
 * @image: the bytes of an x86-64 ELF executable or shared object, as
 *	the file holds them (mmap() it).  Not modified.
 * @size: bytes at @image.
 * @cfip: the converted table on success, for sframe_jit_cfi_free();
 *	untouched on failure.
 *
 * Reads the call frame information of @image and makes one
 * function of each FDE that frame rows can express at every address it
 * covers: the CFA at RSP or RBP plus an offset, the return address at
 * CFA - 8 (or undefined: the outermost frame), the caller's RBP in RBP
 * or at CFA plus an offset.  Any other rule anywhere in an FDE leaves
 * the whole FDE out, counted by its SFRAME_JIT_CFI_* reason: an
 * unwinder falls back to frame pointers there.  Consecutive addresses
 * with the same rules share a row.  Functions are at the addresses of
 * the object's own layout, in increasing order, and do not overlap.
 * The CFA programs are interpreted once each, with libdw's rules and
 * giving libdw's rows (make cfi-check compares the two on every FDE).
 * Documentation/sframe_jit.rst says what is converted and why.
 *
 * Return: the number of functions; -EINVAL for bad arguments; -ENOEXEC
 * for what is not an ELF object; -EOPNOTSUPP for another class, byte
 * order or machine, or a relocatable object, whose addresses are not
 * final; -ENOENT when it has no .eh_frame; -ELIBACC when libdw.so.1,
 * which walks .eh_frame's entries, cannot be loaded; -ENOMEM.
 */
SFRAME_JIT_API int sframe_jit_cfi_convert(const void *image, size_t size,
					  struct sframe_jit_cfi **cfip);

/* Read .debug_frame where the object has no .eh_frame. */
#define SFRAME_JIT_CFI_F_DEBUG_FRAME	0x1
/*
 * Convert the FDE that ld writes for an x86-64 .plt, whose entries' CFA
 * is a DWARF expression, into PLT0's function and one of stubs: rows
 * that repeat every 16 bytes (stub_size 16), as an SFrame PCMASK
 * function says them.  Registries with SFRAME_JIT_F_COMPACT_RECORDS
 * take no stubs: sframe_jit_import_cfi() of such a table into one fails.
 */
#define SFRAME_JIT_CFI_F_PLT		0x2

/**
 * sframe_jit_cfi_convert_flags() - convert CFI, with options
 * @image: as for sframe_jit_cfi_convert().
 * @size: bytes at @image.
 * @flags: SFRAME_JIT_CFI_F_* bits: with SFRAME_JIT_CFI_F_DEBUG_FRAME, an
 *	object without .eh_frame is converted from its .debug_frame, as
 *	the in-memory objects of the GDB JIT interface (QEMU's TCG) have it;
 *	with SFRAME_JIT_CFI_F_PLT, the .plt's FDE becomes two functions,
 *	the second of stubs, and counts as converted.
 * @cfip: as for sframe_jit_cfi_convert().
 *
 * Return: as sframe_jit_cfi_convert(); -EINVAL for an unknown flag.
 */
SFRAME_JIT_API int sframe_jit_cfi_convert_flags(const void *image, size_t size,
						unsigned int flags,
						struct sframe_jit_cfi **cfip);

/**
 * sframe_jit_eh_frame_extent() - where raw .eh_frame entries end
 * @buf: the first of .eh_frame entries that end with a zero length
 *	word, as libgcc's __register_frame() takes them.
 * @size: bytes readable at @buf.
 * @extentp: set to the bytes of the entries, the terminator not counted.
 *
 * Reads only the length words the entries lead to, and none at or past
 * @size: a caller that holds part of the entries (a copy out of another
 * process) learns that it must read more.
 *
 * Return: 0; -EINVAL for bad arguments; -ENOENT when the first word is
 * the terminator; -EAGAIN when no terminator is within @size;
 * -EOPNOTSUPP for an entry of 64-bit DWARF.
 */
SFRAME_JIT_API int sframe_jit_eh_frame_extent(const void *buf, size_t size,
					      size_t *extentp);

/**
 * sframe_jit_cfi_convert_eh_frame() - convert raw .eh_frame entries
 * @buf: CIEs and FDEs with no ELF file around them, as a JIT hands them
 *	to __register_frame(); a copy of them will do.
 * @size: bytes at @buf.
 * @addr: where the entries sit in the process whose code they describe:
 *	their PC-relative pointers are decoded as if @buf were there.
 * @cfip: as for sframe_jit_cfi_convert().
 *
 * As sframe_jit_cfi_convert() of an object whose only section is this
 * .eh_frame at @addr: the functions are at the code's own addresses.
 *
 * Return: as sframe_jit_cfi_convert(); -EINVAL for bad arguments, an
 * empty @buf among them.
 */
SFRAME_JIT_API int sframe_jit_cfi_convert_eh_frame(const void *buf,
						   size_t size, uint64_t addr,
						   struct sframe_jit_cfi **cfip);

/**
 * sframe_jit_cfi_free() - free a converted table
 * @cfi: the table, or NULL.
 */
SFRAME_JIT_API void sframe_jit_cfi_free(struct sframe_jit_cfi *cfi);

/**
 * sframe_jit_cfi_nr_funcs() - the number of functions of a converted table
 * @cfi: the table.
 *
 * Return: the number of functions, which sframe_jit_cfi_func() indexes.
 */
SFRAME_JIT_API uint32_t sframe_jit_cfi_nr_funcs(const struct sframe_jit_cfi *cfi);

/**
 * sframe_jit_cfi_func() - one function of a converted table
 * @cfi: the table.
 * @idx: its index, below sframe_jit_cfi_nr_funcs(); in address order.
 * @func: filled in with the function's address in the object's layout,
 *	its size and its number of rows; stub_size 0, or 16 for a .plt's
 *	stubs under SFRAME_JIT_CFI_F_PLT, whose rows are one stub's.
 * @rowsp: set to its rows, which live as long as @cfi; may be NULL.
 *
 * Return: 0; -ENOENT when @idx is out of range.
 */
SFRAME_JIT_API int sframe_jit_cfi_func(const struct sframe_jit_cfi *cfi,
				       uint32_t idx,
				       struct sframe_jit_func *func,
				       const struct sframe_jit_row **rowsp);

/**
 * struct sframe_jit_cfi_stats - what a conversion found
 * @sz: sizeof(struct sframe_jit_cfi_stats), set by the caller.
 * @nr_fdes: FDEs in the object, including entries libdw could not read.
 * @nr_converted: FDEs that became functions.
 * @nr_unsupported: FDEs left out, by SFRAME_JIT_CFI_* reason; entries
 *	from SFRAME_JIT_CFI_NR_REASONS on are 0.
 * @nr_rows: rows of the functions, each function's counted.
 * @row_bytes: memory @nr_rows take as struct sframe_jit_row, what a
 *	registry without SFRAME_JIT_F_SHARE_ROWS takes for them.
 * @nr_shared_rows: rows left when each distinct sequence is stored once
 *	(and one that begins a longer one as its start): what the table
 *	holds, and the fre_capacity a registry with
 *	SFRAME_JIT_F_SHARE_ROWS needs for them (@nr_converted descriptors).
 *
 * Fields after @row_bytes came later, as for struct sframe_jit_info.
 */
struct sframe_jit_cfi_stats {
	size_t sz;
	uint64_t nr_fdes;
	uint64_t nr_converted;
	uint64_t nr_unsupported[SFRAME_JIT_CFI_MAX_REASONS];
	uint64_t nr_rows;
	uint64_t row_bytes;
	uint64_t nr_shared_rows;
};

/**
 * sframe_jit_cfi_get_stats() - report what a conversion found
 * @cfi: the table.
 * @stats: filled in up to @stats->sz bytes; set @stats->sz first.
 *
 * Return: 0; -EINVAL when @stats->sz is below the first version of the
 * structure.
 */
SFRAME_JIT_API int sframe_jit_cfi_get_stats(const struct sframe_jit_cfi *cfi,
					    struct sframe_jit_cfi_stats *stats);

/**
 * sframe_jit_cfi_reason_str() - the name of a reason an FDE was left out
 * @reason: a SFRAME_JIT_CFI_* reason.
 *
 * Return: a short name ("cfa_expr", ...), or NULL for an unknown reason.
 */
SFRAME_JIT_API const char *sframe_jit_cfi_reason_str(unsigned int reason);

/**
 * sframe_jit_import_cfi() - add the functions of a converted table
 * @reg: the registry.
 * @cfi: the table.
 * @load_bias: what to add to the object's addresses to get where its
 *	code lives now: the difference between where the loader mapped it
 *	and where its program headers place it.
 *
 * As sframe_jit_import_sframe(), for every function of @cfi: either
 * every function is added, or, on error, none is.  Into a registry with
 * SFRAME_JIT_F_SHARE_ROWS, the functions share rows as the table does
 * (see @nr_shared_rows of struct sframe_jit_cfi_stats); on error the
 * rows stay used.
 *
 * Into a registry with SFRAME_JIT_F_COMPACT_RECORDS, the rows become
 * compact rows naming deduplicated rules; a function whose rows start
 * 64 KiB or more into it, or that has more than 65535 rows, becomes
 * several descriptors, each later one starting at a row of the
 * function with the rule in force there.
 *
 * Return: the number of functions added; -EINVAL for bad arguments;
 * -ERANGE when a function lands outside the registry's range; the
 * errors of sframe_jit_add(); for a compact registry, -ENOSPC when the
 * descriptors, rows or rules do not fit, nothing added then.
 */
SFRAME_JIT_API int sframe_jit_import_cfi(struct sframe_jit *reg,
					 const struct sframe_jit_cfi *cfi,
					 uint64_t load_bias);

/**
 * sframe_jit_cfi_compact_caps() - the capacities of a compact registry
 * @cfi: the table.
 * @opts: its @fde_capacity, @fre_capacity and @rule_capacity are set to
 *	what sframe_jit_import_cfi() of @cfi into a registry with
 *	SFRAME_JIT_F_COMPACT_RECORDS and SFRAME_JIT_F_SHARE_ROWS needs:
 *	descriptors after splitting, the shared rows and those of later
 *	pieces, and the distinct rules.  @opts->sz must cover
 *	@rule_capacity; the other fields are left alone.
 *
 * Finding the distinct rules is most of the work: @cfi keeps what it
 * found, and sframe_jit_import_cfi() of @cfi into a compact registry
 * uses it instead of finding them again.  Hence @cfi is not const: do
 * not call this while another thread uses @cfi.
 *
 * Return: 0; -EINVAL for bad arguments; -ENOSPC when the table has more
 * than SFRAME_JIT_MAX_RULES distinct rules, or more descriptors or rows
 * than a registry holds; -ENOMEM.
 */
SFRAME_JIT_API int sframe_jit_cfi_compact_caps(struct sframe_jit_cfi *cfi,
					       struct sframe_jit_opts *opts);

/**
 * sframe_jit_cfi_encode() - write a converted table as an SFrame section
 * @cfi: the table.
 * @sframe_vaddr: the address, in the object's layout, at which the
 *	section is written as if it sat: each function's start is stored
 *	relative to it.  Code loaded with bias B is then described by the
 *	section at @sframe_vaddr + B, the address to register it at.
 * @bufp: set to the section on success, a malloc()ed buffer for the
 *	caller to free(); untouched on failure.
 * @sizep: set to its size in bytes on success; untouched on failure.
 *
 * Writes a bare SFrame version 2 section for AMD64, little endian: a
 * header flagged FDE_SORTED with the return address fixed at CFA - 8
 * and no auxiliary header, then one PCINC descriptor per function of
 * @cfi in address order, then the functions' rows, each function's
 * start offsets and each row's offsets in the smallest of 1, 2 or 4
 * bytes that holds them.  An outermost row has no offsets.  The bytes
 * depend on @cfi's functions and rows and on @sframe_vaddr alone, so
 * that equal tables give equal sections.
 * Documentation/sframe_jit.rst says how the rows map to frame row
 * entries.
 *
 * Return: 0; -EINVAL for bad arguments; -ERANGE when a function's
 * start is not within a signed 32-bit offset of @sframe_vaddr, or the
 * section would outgrow the header's 32-bit fields; -EOPNOTSUPP for a
 * row whose return address is not at CFA - 8; -ENOMEM.
 */
SFRAME_JIT_API int sframe_jit_cfi_encode(const struct sframe_jit_cfi *cfi,
					 uint64_t sframe_vaddr, void **bufp,
					 size_t *sizep);

#ifdef __cplusplus
}
#endif

#endif /* __SFRAME_JIT_H */
