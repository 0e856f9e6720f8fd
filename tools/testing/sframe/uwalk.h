/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uwalk: the kernel's SFrame user stack walker, run in userspace over
 * the process's own stack.  kernel/unwind/sframe_user.c (the walk loop
 * behind perf and BPF callchains) and kernel/unwind's decoders (the
 * sframe_row, sframe_jit_read, sframe_sec and sframe_table files) are
 * built unchanged against the shims in uwalk/ and beside this file;
 * uwalk.c stands in for the kernel's per-mm index with the
 * PT_GNU_SFRAME sections of the loaded objects, as binfmt_elf and
 * sframe_register(2) would have registered them (validated and converted
 * into tables), and sections the caller adds.
 *
 * For the cross-checks against libunwind and glibc (crosscheck_stacks.c)
 * and for benchmarks:
 *
 *	uwalk_init();			// once, outside any signal handler
 *	uwalk_thread_init();		// in each thread that is walked
 *	n = uwalk_here(pcs, 64);	// this stack, from uwalk_here() up
 *	n = uwalk_ucontext(uc, pcs, 64);	// an interrupted one
 *
 * The walks are async-signal-safe: they read only the tables set up by
 * uwalk_init() and the thread's stack, from the red zone below the
 * starting stack pointer up.
 */
#ifndef _SFRAME_UWALK_H
#define _SFRAME_UWALK_H

#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

/**
 * uwalk_init() - index the SFrame sections of the loaded objects
 *
 * Finds PT_GNU_SFRAME in every object dl_iterate_phdr() reports, and
 * registers each section, validated as the kernel validates it, for the
 * object's executable segments.  Objects loaded later are not seen.
 * Calls uwalk_thread_init() for the calling thread.
 *
 * Return: the number of objects with a usable section (0 is no error),
 * or a negative errno.
 */
int uwalk_init(void);

/**
 * uwalk_thread_init() - record the calling thread's stack top
 *
 * Return: 0, or a negative errno.
 */
int uwalk_thread_init(void);

/**
 * uwalk_ucontext() - walk an interrupted stack with the kernel's walker
 * @uc: the context a signal handler received.
 * @pcs: receives the interrupted PC, then one return address per caller.
 * @max: room at @pcs.
 *
 * Return: the number of entries stored.
 */
int uwalk_ucontext(const ucontext_t *uc, uint64_t *pcs, int max);

/**
 * uwalk_here() - walk the calling thread's stack with the kernel's walker
 * @pcs: receives a PC inside uwalk_here(), then the return address into
 *	its caller, and so on.
 * @max: room at @pcs.
 *
 * Return: the number of entries stored.
 */
int uwalk_here(uint64_t *pcs, int max);

/**
 * uwalk_regs() - walk from a given register state
 * @pc: the PC of the innermost frame.
 * @sp: its stack pointer.
 * @fp: its frame pointer register.
 * @pcs: receives @pc, then one return address per caller.
 * @max: room at @pcs.
 *
 * Return: the number of entries stored.
 */
int uwalk_regs(uint64_t pc, uint64_t sp, uint64_t fp, uint64_t *pcs,
	       int max);

/**
 * uwalk_covered() - does an indexed table describe a frame at @pc?
 * @pc: an address from a walk.
 * @first: @pc is the interrupted PC rather than a return address (for
 *	which the byte before it is looked up, as the walker does).
 *
 * Return: true if an indexed section has a row for it: the walker then
 * steps by the table, not by the frame-pointer fallback.
 */
bool uwalk_covered(uint64_t pc, bool first);

/**
 * uwalk_add_section() - register a section of the caller's, as the kernel
 *	registers one for sframe_register(2)
 * @data: the section's bytes, kept by the caller for as long as walks run.
 * @size: bytes at @data.
 * @base: the address function starts are relative to.
 * @start: the code range's start; nothing need be mapped there.
 * @end: its end.
 *
 * For synthetic tables: hostile ones for the benchmarks of the bound on
 * a sample's work (nmi_bench.c), and the walk's own tests.  A section
 * the kernel would refuse for the caps of its table (-E2BIG) but that
 * validates, which the kernel registered before it had them, stays
 * registered for uwalk_set_linear(true) walks only: walks by the tables
 * do not see it.
 *
 * Return: 0; -EEXIST if the range overlaps a registered one; -ENOSPC;
 * or the errno the kernel's validation and conversion return.
 */
int uwalk_add_section(const void *data, size_t size, uint64_t base,
		      uint64_t start, uint64_t end);

/**
 * uwalk_set_linear() - look PCs up in the sections, not their tables
 * @linear: true for sframe_sec_find(), which walks a function's rows as
 *	the kernel did before converting sections into tables; false (the
 *	default) for sframe_table_find().
 *
 * For the benchmarks that compare the two.  Not thread-safe.
 */
void uwalk_set_linear(bool linear);

/**
 * uwalk_budget_stops() - walks stopped by SFRAME_SAMPLE_MAX_FRAMES
 *
 * Return: the walker's count, since the process started.
 */
unsigned long uwalk_budget_stops(void);

/**
 * uwalk_objects() - what uwalk_init() indexed
 * @funcs: if not NULL, receives the number of function descriptors.
 *
 * Return: the number of indexed regions (executable segments).
 */
int uwalk_objects(unsigned long *funcs);

#endif /* _SFRAME_UWALK_H */
