// SPDX-License-Identifier: GPL-2.0
/*
 * The emitter, registry writer and sampler behind the sampling
 * selftests; see sample_lib.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* REG_RIP and friends */
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample_lib.h"

void emit_raw(struct emitter *e, const __u8 *op, size_t n, __u64 imm,
	      size_t imm_size)
{
	if (e->pos + n + imm_size > e->cap) {
		e->overflow = true;
		return;
	}
	if (e->pos - e->fn_pos >= MAX_FN_BYTES) {
		e->overflow = true;
		return;
	}
	if (e->record)
		e->fn->insn[e->pos - e->fn_pos] = 1;
	memcpy(e->buf + e->pos, op, n);
	e->pos += n;
	/* x86 immediates are little endian, like the host. */
	memcpy(e->buf + e->pos, &imm, imm_size);
	e->pos += imm_size;
}

unsigned long emit_addr(const struct emitter *e)
{
	return (unsigned long)e->buf + e->pos;
}

/* The CFA rule changed at the current position: one more row. */
static void cfa_changed(struct emitter *e)
{
	struct jit_fn *fn = e->fn;

	if (!e->record)
		return;
	if (fn->nr_rows == MAX_ROWS) {
		e->overflow = true;
		return;
	}
	fn->rows[fn->nr_rows++] = (struct sframe_jit_fre) {
		.start_off	= e->pos - e->fn_pos,
		.cfa_off	= e->cfa_off,
		.ra_off		= -8,
		.fp_off		= e->fp_off,
		.cfa_base	= e->cfa_base,
		.flags		= e->fp_off ? SFRAME_JIT_FRE_FP_SAVED : 0,
	};
}

void pad_to(struct emitter *e, size_t align)
{
	while (e->pos % align && e->pos < e->cap)
		e->buf[e->pos++] = 0xcc;	/* int3 */
}

/* Start a function, or one stub of a run: the call just pushed the RA. */
void frame_begin(struct emitter *e)
{
	e->fn_pos = e->pos;
	e->cfa_base = SFRAME_JIT_CFA_SP;
	e->cfa_off = 8;
	e->fp_off = 0;
	cfa_changed(e);
}

void fn_begin(struct emitter *e, struct jit_fn *fn, const char *name,
	      __u8 type, __u8 rep_size)
{
	pad_to(e, FN_ALIGN);
	memset(fn, 0, sizeof(*fn));
	fn->name = name;
	fn->start = emit_addr(e);
	fn->type = type;
	fn->rep_size = rep_size;
	e->fn = fn;
	e->record = true;
	frame_begin(e);
}

void fn_end(struct emitter *e)
{
	e->fn->size = emit_addr(e) - e->fn->start;
}

/* mov (%rsp),%rax; movabs %rax,slot: store the return address. */
void emit_store_ret(struct emitter *e, unsigned long *slot)
{
	EMIT(e, 0x48, 0x8b, 0x04, 0x24);
	EMIT_IMM(e, (unsigned long)slot, 8, 0x48, 0xa3);
}

void emit_push(struct emitter *e, int reg)
{
	if (reg >= R8)
		EMIT(e, 0x41, 0x50 + reg - R8);
	else
		EMIT(e, 0x50 + reg);
	if (e->cfa_base == SFRAME_JIT_CFA_SP) {
		e->cfa_off += 8;
		cfa_changed(e);
	}
}

void emit_pop(struct emitter *e, int reg)
{
	if (reg >= R8)
		EMIT(e, 0x41, 0x58 + reg - R8);
	else
		EMIT(e, 0x58 + reg);
	if (e->cfa_base == SFRAME_JIT_CFA_SP) {
		e->cfa_off -= 8;
		cfa_changed(e);
	}
}

void emit_sub_rsp(struct emitter *e, __u8 n)
{
	EMIT(e, 0x48, 0x83, 0xec, n);
	if (e->cfa_base == SFRAME_JIT_CFA_SP) {
		e->cfa_off += n;
		cfa_changed(e);
	}
}

void emit_add_rsp(struct emitter *e, __u8 n)
{
	EMIT(e, 0x48, 0x83, 0xc4, n);
	if (e->cfa_base == SFRAME_JIT_CFA_SP) {
		e->cfa_off -= n;
		cfa_changed(e);
	}
}

/* push %rbp; mov %rsp,%rbp */
void emit_frame_enter(struct emitter *e)
{
	EMIT(e, 0x55);
	e->cfa_off += 8;
	e->fp_off = -e->cfa_off;
	cfa_changed(e);
	EMIT(e, 0x48, 0x89, 0xe5);
	e->cfa_base = SFRAME_JIT_CFA_FP;
	cfa_changed(e);
}

/* leave: %rsp = %rbp + 8, %rbp restored. */
void emit_leave(struct emitter *e)
{
	EMIT(e, 0xc9);
	e->cfa_base = SFRAME_JIT_CFA_SP;
	e->cfa_off -= 8;
	e->fp_off = 0;
	cfa_changed(e);
}

void emit_ret(struct emitter *e)
{
	EMIT(e, 0xc3);
}

static void call_done(struct emitter *e)
{
	if (e->record)
		e->fn->call_ret = e->pos - e->fn_pos;
}

/* call *%rax */
void emit_call_rax(struct emitter *e)
{
	EMIT(e, 0xff, 0xd0);
	call_done(e);
}

/* call *slot(%rip) */
void emit_call_slot(struct emitter *e, unsigned long *slot)
{
	long disp = (long)slot - (long)(emit_addr(e) + 6);

	if (disp != (__s32)disp) {
		e->overflow = true;
		return;
	}
	EMIT_IMM(e, (__u32)disp, 4, 0xff, 0x15);
	call_done(e);
}

/* movabs $imm,%rax */
void emit_mov_rax_imm(struct emitter *e, unsigned long imm)
{
	EMIT_IMM(e, imm, 8, 0x48, 0xb8);
}

/* movabs addr,%rax: a load */
void emit_load_rax(struct emitter *e, unsigned long *addr)
{
	EMIT_IMM(e, (unsigned long)addr, 8, 0x48, 0xa1);
}

/* push %rbp, not to make it a frame pointer: the row says where it is. */
void emit_save_rbp(struct emitter *e)
{
	if (e->cfa_base == SFRAME_JIT_CFA_FP || e->fp_off)
		e->overflow = true;
	EMIT(e, 0x55);
	e->cfa_off += 8;
	e->fp_off = -e->cfa_off;
	cfa_changed(e);
}

/* pop %rbp after emit_save_rbp(). */
void emit_restore_rbp(struct emitter *e)
{
	EMIT(e, 0x5d);
	e->cfa_off -= 8;
	e->fp_off = 0;
	cfa_changed(e);
}

/*
 * mov $imm,%ebp: %rbp as data.  The CFA rule must not be FP-based here;
 * the rows do not change.
 */
void emit_mov_ebp_imm(struct emitter *e, __u32 imm)
{
	if (e->cfa_base == SFRAME_JIT_CFA_FP)
		e->overflow = true;
	EMIT_IMM(e, imm, 4, 0xbd);
}

/* movq $imm,off(%rsp): fill a stack slot. */
void emit_store_rsp_imm(struct emitter *e, __u8 off, __s32 imm)
{
	EMIT_IMM(e, (__u32)imm, 4, 0x48, 0xc7, 0x44, 0x24, off);
}

/*
 * movabs count,%rax; mov %rax,%rcx; 1: dec %rcx; jne 1b.  The loop is
 * where a test wants its samples; *count must not be 0.
 */
void emit_spin(struct emitter *e, unsigned long *count)
{
	emit_load_rax(e, count);
	EMIT(e, 0x48, 0x89, 0xc1);
	if (e->record)
		e->fn->spin_start = e->pos - e->fn_pos;
	EMIT(e, 0x48, 0xff, 0xc9);
	EMIT(e, 0x75, 0xfb);
	if (e->record)
		e->fn->spin_end = e->pos - e->fn_pos;
}

static int registry_read_layout(struct jit_registry *r,
				struct sframe_jit_header *hdr)
{
	bool compact = hdr->flags & SFRAME_JIT_F_COMPACT;

	if (hdr->magic != SFRAME_JIT_MAGIC || hdr->version != SFRAME_JIT_VERSION)
		return -EPROTO;
	if (compact && (hdr->fde_stride < sizeof(struct sframe_jit_cfde) ||
			hdr->fre_stride < sizeof(struct sframe_jit_cfre) ||
			hdr->rule_stride < sizeof(struct sframe_jit_rule)))
		return -EPROTO;
	if (!compact && (hdr->fde_stride < sizeof(struct sframe_jit_fde) ||
			 hdr->fre_stride < sizeof(struct sframe_jit_fre)))
		return -EPROTO;
	r->hdr = hdr;
	r->compact = compact;
	r->rules = compact ? (char *)hdr + hdr->rule_off : NULL;
	r->rule_stride = hdr->rule_stride;
	r->rule_capacity = hdr->rule_capacity;
	r->fdes = (char *)hdr + hdr->fde_off;
	r->fres = (char *)hdr + hdr->fre_off;
	r->text_start = hdr->text_start;
	r->text_end = hdr->text_end;
	r->fde_stride = hdr->fde_stride;
	r->fre_stride = hdr->fre_stride;
	r->fde_capacity = hdr->fde_capacity;
	r->fre_capacity = hdr->fre_capacity;
	r->map_size = hdr->map_size;
	return 0;
}

/**
 * jit_registry_attach() - take a new, empty registry
 * @r: the JIT's view, filled here.
 * @hdr: the mapping of the file sframe_jit_open(2) returned.
 *
 * The caller hands the descriptor over in @r->fd afterwards, if it keeps
 * it; jit_registry_unmap() closes it.
 *
 * Return: 0, or -EPROTO for a layout this code does not know.
 */
int jit_registry_attach(struct jit_registry *r, struct sframe_jit_header *hdr)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (registry_read_layout(r, hdr))
		return -EPROTO;
	r->last_end = r->text_start;
	return 0;
}

/**
 * jit_registry_move() - switch to the registry SFRAME_JIT_REPLACE made
 * @r: the JIT's view; what it published stays.
 * @hdr: the new mapping.
 * @fd: the new registry's descriptor, or -1.
 *
 * The old registry is no longer registered: its descriptor is closed
 * here, its mapping is the caller's to unmap.
 *
 * Return: 0, or -EPROTO for a layout this code does not know.
 */
int jit_registry_move(struct jit_registry *r, struct sframe_jit_header *hdr,
		      int fd)
{
	struct jit_registry old = *r;

	if (registry_read_layout(r, hdr)) {
		*r = old;
		return -EPROTO;
	}
	if (old.fd >= 0)
		close(old.fd);
	r->fd = fd;
	return 0;
}

/*
 * Unmapping the registry unregisters it; its descriptor goes too.  A
 * view never attached (zeroed) has neither.
 */
int jit_registry_unmap(struct jit_registry *r)
{
	int ret = 0;

	if (!r->hdr)
		return 0;
	if (munmap(r->hdr, r->map_size))
		ret = -errno;
	r->hdr = NULL;
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	return ret;
}

struct sframe_jit_fde *jit_registry_fde(const struct jit_registry *r, __u32 i)
{
	return (struct sframe_jit_fde *)(r->fdes + (size_t)i * r->fde_stride);
}

struct sframe_jit_fre *jit_registry_fre(const struct jit_registry *r, __u32 i)
{
	return (struct sframe_jit_fre *)(r->fres + (size_t)i * r->fre_stride);
}

/* Descriptor @i's first row, in either kind of registry. */
__u32 jit_registry_fre_start(const struct jit_registry *r, __u32 i)
{
	const void *fde = jit_registry_fde(r, i);

	if (r->compact)
		return ((const struct sframe_jit_cfde *)fde)->fre_start;
	return ((const struct sframe_jit_fde *)fde)->fre_start;
}

/* Hand out @n row slots that no descriptor uses; the first, or -ENOSPC. */
long jit_registry_alloc_rows(struct jit_registry *r, __u32 n)
{
	long first = r->nr_fres;

	if (n > r->fre_capacity - r->nr_fres)
		return -ENOSPC;
	r->nr_fres += n;
	return first;
}

static struct sframe_jit_rule *rule_at(const struct jit_registry *r, __u32 i)
{
	return (struct sframe_jit_rule *)(r->rules + (size_t)i * r->rule_stride);
}

/*
 * The index of @row's rule in a compact registry: the rule written
 * already, as a JIT shares them, or a new one.  Past the capacity the
 * index is the capacity, which the kernel refuses: the test sees it.
 */
static __u32 rule_index(struct jit_registry *r, const struct sframe_jit_fre *row)
{
	struct sframe_jit_rule want = {
		.cfa_off = row->cfa_off, .ra_off = row->ra_off,
		.fp_off = row->fp_off, .cfa_base = row->cfa_base,
		.flags = row->flags,
	};
	__u32 i;

	for (i = 0; i < r->nr_rules; i++)
		if (!memcmp(rule_at(r, i), &want, sizeof(want)))
			return i;
	if (r->nr_rules == r->rule_capacity)
		return r->rule_capacity;
	memset(rule_at(r, i), 0, r->rule_stride);
	memcpy(rule_at(r, i), &want, sizeof(want));
	return r->nr_rules++;
}

/* @fn's rows as compact rows, from slot @first on. */
static void write_crows(struct jit_registry *r, __u32 first,
			const struct jit_fn *fn)
{
	unsigned int i;

	for (i = 0; i < fn->nr_rows; i++) {
		struct sframe_jit_cfre *row = (struct sframe_jit_cfre *)
			(r->fres + (size_t)(first + i) * r->fre_stride);

		memset(row, 0, r->fre_stride);
		row->start_off = fn->rows[i].start_off;
		row->rule = rule_index(r, &fn->rows[i]);
	}
}

/* @fn's rows into slots from @first on, which no published descriptor uses. */
void jit_registry_write_rows(struct jit_registry *r, __u32 first,
			     const struct jit_fn *fn)
{
	unsigned int i;

	if (r->compact) {
		write_crows(r, first, fn);
		return;
	}
	for (i = 0; i < fn->nr_rows; i++) {
		struct sframe_jit_fre *row = jit_registry_fre(r, first + i);

		memset(row, 0, r->fre_stride);
		memcpy(row, &fn->rows[i], sizeof(*row));
	}
}

/* A compact descriptor: the start as an offset, PCMASK as a flag. */
static void cfde_fill(const struct jit_registry *r, void *p,
		      const struct jit_fn *fn, __u32 first_row)
{
	struct sframe_jit_cfde *fde = p;

	memset(fde, 0, r->fde_stride);
	fde->func_off = fn->start - r->text_start;
	fde->func_size = fn->size;
	fde->fre_start = first_row;
	fde->fre_count = fn->nr_rows;
	if (fn->type == SFRAME_JIT_FDE_PCMASK)
		fde->flags = SFRAME_JIT_CFDE_PCMASK;
	fde->rep_size = fn->rep_size;
}

static void fde_fill(const struct jit_registry *r, struct sframe_jit_fde *fde,
		     const struct jit_fn *fn, __u32 first_row)
{
	if (r->compact) {
		cfde_fill(r, fde, fn, first_row);
		return;
	}
	memset(fde, 0, r->fde_stride);
	fde->func_start = fn->start;
	fde->func_size = fn->size;
	fde->fre_start = first_row;
	fde->fre_count = fn->nr_rows;
	fde->type = fn->type;
	fde->rep_size = fn->rep_size;
}

/**
 * jit_registry_publish() - publish a function, as <linux/sframe_jit.h> says
 * @r: the registry.
 * @fn: the function; not below the end of the last one.  Its descriptor
 *	index goes to @fn->fde.
 * @first_row: the row slots to put its rows in, which no published
 *	descriptor uses.
 *
 * Rows, then the descriptor at index fde_count, then the count with
 * release semantics.  No rewrite, so no seq.
 *
 * Return: 0; -EINVAL for a function out of order or outside the text
 * range, or rows past the capacity; -ENOSPC when the descriptors are
 * all used.
 */
int jit_registry_publish(struct jit_registry *r, struct jit_fn *fn,
			 __u32 first_row)
{
	if (fn->start < r->last_end || fn->start + fn->size > r->text_end)
		return -EINVAL;
	if (first_row > r->fre_capacity ||
	    fn->nr_rows > r->fre_capacity - first_row)
		return -EINVAL;
	if (r->nr_fdes == r->fde_capacity)
		return -ENOSPC;
	jit_registry_write_rows(r, first_row, fn);
	fde_fill(r, jit_registry_fde(r, r->nr_fdes), fn, first_row);
	fn->fde = r->nr_fdes;
	__atomic_store_n(&r->hdr->fde_count, r->nr_fdes + 1, __ATOMIC_RELEASE);
	r->nr_fdes++;
	r->last_end = fn->start + fn->size;
	return 0;
}

/* jit_registry_publish() into row slots handed out for it; or -ENOSPC. */
int jit_registry_append(struct jit_registry *r, struct jit_fn *fn)
{
	long first;
	int ret;

	if (r->nr_fdes == r->fde_capacity)
		return -ENOSPC;
	first = jit_registry_alloc_rows(r, fn->nr_rows);
	if (first < 0)
		return first;
	ret = jit_registry_publish(r, fn, first);
	if (ret)
		r->nr_fres -= fn->nr_rows;
	return ret;
}

/* Set or clear descriptor @i's tombstone; clearing belongs under seq. */
void jit_registry_tombstone(const struct jit_registry *r, __u32 i, bool on)
{
	struct sframe_jit_fde *fde = jit_registry_fde(r, i);
	struct sframe_jit_cfde *cfde = (void *)fde;
	__u16 flags = on ? SFRAME_JIT_FDE_TOMBSTONE : 0;

	if (r->compact) {
		/* The PCMASK flag shares the field, and stays. */
		__u8 f = __atomic_load_n(&cfde->flags, __ATOMIC_RELAXED);

		f = (f & ~SFRAME_JIT_FDE_TOMBSTONE) | flags;
		__atomic_store_n(&cfde->flags, f, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&fde->flags, flags, __ATOMIC_RELEASE);
}

/* A rewrite in place, as the uapi header says: seq odd, write, even. */
void jit_registry_seq_begin(const struct jit_registry *r)
{
	__u32 s = __atomic_load_n(&r->hdr->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&r->hdr->seq, s + 1, __ATOMIC_RELAXED);
	/* The odd value must be visible before any rewrite. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void jit_registry_seq_end(const struct jit_registry *r)
{
	__u32 s = __atomic_load_n(&r->hdr->seq, __ATOMIC_RELAXED);

	/* The rewrite must be visible before the even value. */
	__atomic_store_n(&r->hdr->seq, s + 1, __ATOMIC_RELEASE);
}

/**
 * jit_registry_rewrite() - make descriptor @i describe @fn, under seq
 * @r: the registry.
 * @i: a published descriptor, tombstoned or not.
 * @fn: the function now at its address; it must not reach the next one.
 * @first_row: where jit_registry_write_rows() put @fn's rows already.
 *
 * Code reuse as Documentation/userspace-api/sframe.rst describes it: the
 * descriptor, tombstone cleared, between an odd and an even seq.
 */
void jit_registry_rewrite(const struct jit_registry *r, __u32 i,
			  const struct jit_fn *fn, __u32 first_row)
{
	struct sframe_jit_fde *fde = jit_registry_fde(r, i);

	jit_registry_seq_begin(r);
	fde_fill(r, fde, fn, first_row);
	jit_registry_seq_end(r);
}

/* The unwinder's counters, which it writes without synchronisation. */
struct sframe_jit_stats jit_registry_stats(const struct sframe_jit_header *h)
{
	struct sframe_jit_stats s = {
		.lookups = __atomic_load_n(&h->stats.lookups, __ATOMIC_RELAXED),
		.hits = __atomic_load_n(&h->stats.hits, __ATOMIC_RELAXED),
		.tombstone_hits = __atomic_load_n(&h->stats.tombstone_hits,
						  __ATOMIC_RELAXED),
		.seq_retries = __atomic_load_n(&h->stats.seq_retries,
					       __ATOMIC_RELAXED),
		.malformed = __atomic_load_n(&h->stats.malformed,
					     __ATOMIC_RELAXED),
	};

	return s;
}

/*
 * The single stepper: one SIGTRAP handler, which hands the registers of
 * each step to the callback of the current single_step() call.
 */
static step_cb step_current;

static void step_signal(int sig, siginfo_t *info, void *ucontext)
{
	greg_t *regs = ((ucontext_t *)ucontext)->uc_mcontext.gregs;
	struct step_regs r = {
		.pc = regs[REG_RIP],
		.sp = regs[REG_RSP],
		.fp = regs[REG_RBP],
	};

	(void)sig;
	(void)info;
	step_current(&r);
}

/* Set EFLAGS.TF around the call: a SIGTRAP after each instruction. */
static __attribute__((__noinline__)) long run_traced(long (*run)(void *arg),
						     void *arg)
{
	long r;

	__asm__ volatile("pushfq; orq $0x100, (%%rsp); popfq" : : : "memory", "cc");
	r = run(arg);
	__asm__ volatile("pushfq; andq $~0x100, (%%rsp); popfq" : : : "memory", "cc");
	return r;
}

/**
 * single_step() - call @step after each instruction of a call of @run
 * @step: gets the registers; it runs in a signal handler.
 * @run: what to single-step.
 * @arg: its argument.
 * @result: what @run returned.
 *
 * Return: 0, or -errno if SIGTRAP could not be caught.
 */
int single_step(step_cb step, long (*run)(void *arg), void *arg,
		long *result)
{
	struct sigaction sa = {
		.sa_sigaction = step_signal,
		.sa_flags = SA_SIGINFO,
	};
	struct sigaction old;

	step_current = step;
	if (sigaction(SIGTRAP, &sa, &old))
		return -errno;
	*result = run_traced(run, arg);
	sigaction(SIGTRAP, &old, NULL);
	return 0;
}

/**
 * row_check() - evaluate a frame row against the registers of a step
 * @row: the row of the instruction about to run.
 * @regs: the registers there.
 * @entry_fp: %rbp at the function's entry, the caller's.
 * @ret: the return address the function stored at entry.
 *
 * Return: NULL if the CFA holds @ret at ra_off and the caller's frame
 * pointer is where the row says; otherwise what is wrong.
 */
const char *row_check(const struct row_rule *row,
		      const struct step_regs *regs, unsigned long entry_fp,
		      unsigned long ret)
{
	unsigned long cfa = (row->cfa_fp ? regs->fp : regs->sp) + row->cfa_off;

	/* A wrong row must fail the check, not fault in the handler. */
	if (cfa <= regs->sp || cfa > regs->sp + 4096)
		return "CFA outside the stack";
	if (*(unsigned long *)(cfa + row->ra_off) != ret)
		return "no return address at CFA + ra_off";
	if (row->fp_saved) {
		if (*(unsigned long *)(cfa + row->fp_off) != entry_fp)
			return "no caller's FP at CFA + fp_off";
	} else if (regs->fp != entry_fp) {
		return "FP not the caller's, and the row says unchanged";
	}
	return NULL;
}

static struct {
	const struct trace_fn *fns;
	unsigned int nr;
	unsigned long entry_fp[TRACE_MAX_FNS];
	unsigned char seen[TRACE_MAX_FNS][MAX_FN_BYTES];
	unsigned long steps;
	char error[200];
} trace;

static int trace_fn_at(unsigned long pc)
{
	unsigned int i;

	for (i = 0; i < trace.nr; i++) {
		const struct jit_fn *fn = trace.fns[i].fn;

		if (pc >= fn->start && pc < fn->start + fn->size)
			return i;
	}
	return -1;
}

static struct row_rule trace_row(const struct jit_fn *fn, __u32 off)
{
	unsigned int i = fn->nr_rows;
	const struct sframe_jit_fre *row;

	while (i > 1 && fn->rows[i - 1].start_off > off)
		i--;
	row = &fn->rows[i - 1];
	return (struct row_rule){
		.cfa_fp = row->cfa_base == SFRAME_JIT_CFA_FP,
		.fp_saved = row->flags & SFRAME_JIT_FRE_FP_SAVED,
		.cfa_off = row->cfa_off,
		.ra_off = row->ra_off,
		.fp_off = row->fp_off,
	};
}

static void trace_fail(unsigned long pc, const char *what)
{
	if (!trace.error[0])
		snprintf(trace.error, sizeof(trace.error), "at %#lx: %s", pc,
			 what);
}

static void trace_step(const struct step_regs *regs)
{
	const struct jit_fn *fn;
	struct row_rule row;
	const char *wrong;
	__u32 off;
	int id;

	trace.steps++;
	id = trace_fn_at(regs->pc);
	if (id < 0)
		return;
	fn = trace.fns[id].fn;
	off = regs->pc - fn->start;
	if (fn->type == SFRAME_JIT_FDE_PCMASK)
		off %= fn->rep_size;
	trace.seen[id][off] = 1;
	if (!fn->insn[off])
		trace_fail(regs->pc, "not an instruction the emitter emitted");
	if (off == 0)
		trace.entry_fp[id] = regs->fp;
	row = trace_row(fn, off);
	wrong = row_check(&row, regs, trace.entry_fp[id], *trace.fns[id].ret);
	if (wrong)
		trace_fail(regs->pc, wrong);
}

/**
 * row_trace() - check the rows of @fns at every instruction of a run
 * @fns: the functions, each with the slot it stores its return address in.
 * @nr: their number, at most TRACE_MAX_FNS.
 * @run: runs them; it must have run once before, untraced, so that the
 *	slots hold what the functions store.
 * @arg: its argument.
 * @result: what @run returned.
 *
 * What each instruction of each function was seen is kept until the next
 * call, for row_trace_unseen().
 *
 * Return: 0 if every row held; -EINVAL if one did not, with the first
 * failure in row_trace_error(); -errno if SIGTRAP could not be caught.
 */
int row_trace(const struct trace_fn *fns, unsigned int nr,
	      long (*run)(void *arg), void *arg, long *result)
{
	int ret;

	if (nr > TRACE_MAX_FNS)
		return -E2BIG;
	memset(&trace, 0, sizeof(trace));
	trace.fns = fns;
	trace.nr = nr;
	ret = single_step(trace_step, run, arg, result);
	if (ret)
		return ret;
	return trace.error[0] ? -EINVAL : 0;
}

const char *row_trace_error(void)
{
	return trace.error;
}

unsigned long row_trace_steps(void)
{
	return trace.steps;
}

/* The first instruction of function @i the last trace did not step, or -1. */
int row_trace_unseen(unsigned int i)
{
	const struct jit_fn *fn = trace.fns[i].fn;
	unsigned int off, limit = fn->rep_size ? fn->rep_size : fn->size;

	for (off = 0; off < limit; off++)
		if (fn->insn[off] && !trace.seen[i][off])
			return off;
	return -1;
}

/* The flags word of perf_event_attr, which follows read_format. */
__u64 *attr_flags(struct perf_event_attr *attr)
{
	return (__u64 *)((char *)attr +
			 offsetof(struct perf_event_attr, read_format) +
			 sizeof(attr->read_format));
}

_Static_assert(offsetof(struct perf_event_attr, read_format) + 16 ==
	       offsetof(struct perf_event_attr, wakeup_events),
	       "one 64-bit flags word between read_format and wakeup_events");

/*
 * Ask for the SFrame user unwinder.  The Makefile defines
 * HAVE_CALLCHAIN_SFRAME when the kernel headers name the bit; before
 * they do, set it by its position: bit 40, after sigtrap (bit 37) and
 * the two bits mainline gives defer_callchain and defer_output.
 */
void attr_set_sframe(struct perf_event_attr *attr)
{
#ifdef HAVE_CALLCHAIN_SFRAME
	attr->callchain_sframe = 1;
#else
	*attr_flags(attr) |= 1ULL << 40;
#endif
}

/* A task-clock sampler of this thread, user IPs and user callchains. */
void sampler_attr(struct perf_event_attr *attr, __u64 period_ns, bool sframe)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_SOFTWARE;
	attr->size = sizeof(*attr);
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->sample_period = period_ns;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = 1;
	attr->sample_max_stack = SAMPLER_MAX_STACK;
	if (sframe)
		attr_set_sframe(attr);
}

/* perf_event_open(2) on the calling thread, any CPU: a fd or -errno. */
int perf_open(struct perf_event_attr *attr)
{
	int fd = syscall(__NR_perf_event_open, attr, 0, -1, -1,
			 PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Whether this thread may be sampled at all: 0 or perf_event_open's
 * -errno.  Without the SFrame bit, which an older kernel must not see.
 */
int sampler_probe(void)
{
	struct perf_event_attr attr;
	int fd;

	sampler_attr(&attr, 100000, false);
	fd = perf_open(&attr);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/**
 * sampler_open() - open @attr on the calling thread and map its ring
 * @s: the sampler, filled here.
 * @attr: the event, disabled.
 * @data_pages: ring data pages, a power of two.
 *
 * Return: 0 or a negative errno; nothing stays open on failure.
 */
int sampler_open(struct sampler *s, struct perf_event_attr *attr,
		 unsigned int data_pages)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = perf_open(attr);
	if (s->fd < 0)
		return s->fd;
	s->map_size = (1 + data_pages) * ps;
	s->page = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       s->fd, 0);
	if (s->page == MAP_FAILED) {
		ret = -errno;
		close(s->fd);
		return ret;
	}
	s->data = (unsigned char *)s->page + s->page->data_offset;
	s->data_size = s->page->data_size;
	if (s->data_size != data_pages * ps) {
		sampler_close(s);
		return -EPROTO;
	}
	return 0;
}

void sampler_close(struct sampler *s)
{
	munmap(s->page, s->map_size);
	close(s->fd);
}

int sampler_enable(struct sampler *s, bool on)
{
	if (ioctl(s->fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0))
		return -errno;
	return 0;
}

static void ring_copy(const struct sampler *s, __u64 off, void *dst, size_t n)
{
	size_t at = off & (s->data_size - 1);
	size_t first = n < s->data_size - at ? n : s->data_size - at;

	memcpy(dst, s->data + at, first);
	memcpy((char *)dst + first, s->data, n - first);
}

/**
 * sampler_drain() - read every record the kernel published
 * @s: the sampler.
 * @cb: called for each sample.
 * @arg: its argument.
 * @c: counts, added to.
 *
 * The ring protocol of perf: data_head with acquire, the records, then
 * data_tail with release.
 */
void sampler_drain(struct sampler *s, sample_cb cb, void *arg,
		   struct ring_counts *c)
{
	__u64 head = __atomic_load_n(&s->page->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = s->page->data_tail;
	__u64 rec[128];

	while (tail < head) {
		struct perf_event_header h;

		ring_copy(s, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > sizeof(rec) ||
		    h.size > head - tail) {
			c->bad_records++;
			tail = head;
			break;
		}
		ring_copy(s, tail + sizeof(h), rec, h.size - sizeof(h));
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			c->samples++;
			if (!cb(arg, rec, (h.size - sizeof(h)) / 8))
				c->bad_records++;
			break;
		case PERF_RECORD_LOST:
			c->lost += rec[1];
			break;
		case PERF_RECORD_THROTTLE:
			c->throttled++;
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&s->page->data_tail, tail, __ATOMIC_RELEASE);
}

/**
 * sample_user_chain() - the user callchain of a sample
 * @rec: the body of a sample of PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN.
 * @words: its length in 64-bit words.
 * @ip: the sampled IP.
 * @chain: the user chain, after PERF_CONTEXT_USER: the IP, then return
 *	addresses.
 * @nr: its length.
 *
 * Return: 0; -EBADMSG for a malformed record; -ENOMSG for a chain that
 * does not start with PERF_CONTEXT_USER.
 */
int sample_user_chain(const __u64 *rec, size_t words, __u64 *ip,
		      const __u64 **chain, __u64 *nr)
{
	if (words < 2 || rec[1] > words - 2)
		return -EBADMSG;
	*ip = rec[0];
	*nr = rec[1];
	*chain = rec + 2;
	if (!*nr || (*chain)[0] != (__u64)PERF_CONTEXT_USER)
		return -ENOMSG;
	(*chain)++;
	(*nr)--;
	return 0;
}

struct chain_drain {
	chain_cb cb;
	void *arg;
	unsigned long *not_user;
};

static bool drain_chain(void *arg, const __u64 *rec, size_t words)
{
	struct chain_drain *d = arg;
	const __u64 *chain;
	__u64 ip, nr;
	int ret;

	ret = sample_user_chain(rec, words, &ip, &chain, &nr);
	if (ret == -EBADMSG)
		return false;
	if (ret)
		(*d->not_user)++;
	else
		d->cb(d->arg, ip, chain, nr);
	return true;
}

/**
 * sampler_drain_chains() - sampler_drain(), for the user chains
 * @s: the sampler.
 * @cb: called with each sample's IP and user chain.
 * @arg: its first argument.
 * @not_user: counts the samples without a user chain (a kernel thread's).
 * @c: counts the records, malformed ones among the bad.
 */
void sampler_drain_chains(struct sampler *s, chain_cb cb, void *arg,
			  unsigned long *not_user, struct ring_counts *c)
{
	struct chain_drain d = { .cb = cb, .arg = arg, .not_user = not_user };

	sampler_drain(s, drain_chain, &d, c);
}

/* The first of @n entries of @chain that is not @want's; @n if none. */
unsigned int chain_first_bad(const __u64 *chain, __u64 nr, const __u64 *want,
			     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (i >= nr || chain[i] >= (__u64)PERF_CONTEXT_MAX ||
		    chain[i] != want[i])
			return i;
	return n;
}

/**
 * chain_tally_add() - count a chain by the first of @n frames that differs
 * @ct: the tally.
 * @n: the frames compared, at most CHAIN_MAX.
 * @chain: the sampled chain.
 * @nr: its length.
 * @want: the @n frames expected.
 *
 * Return: the first frame that differs; @n if none.
 */
unsigned int chain_tally_add(struct chain_tally *ct, unsigned int n,
			     const __u64 *chain, __u64 nr, const __u64 *want)
{
	unsigned int bad = chain_first_bad(chain, nr, want, n);

	if (!ct->first_bad[bad]++) {
		ct->got_nr[bad] = nr < n ? nr : n;
		memcpy(ct->got[bad], chain, ct->got_nr[bad] * sizeof(*chain));
		memcpy(ct->want[bad], want, n * sizeof(*want));
	}
	return bad;
}

double elapsed(clockid_t clock, const struct timespec *since)
{
	struct timespec now;

	clock_gettime(clock, &now);
	return now.tv_sec - since->tv_sec +
	       (now.tv_nsec - since->tv_nsec) / 1e9;
}

/*
 * A spin count for runs of 2 to 8 ms of CPU time, from what the last one
 * took: some 20 to 80 samples a run at 10 kHz, many runs, and no ring
 * overflow between two drains.
 */
void spin_tune(unsigned long *spin, double took)
{
	if (took < 0.002 && *spin < (1UL << 40))
		*spin *= 2;
	else if (took > 0.008 && *spin > 1)
		*spin /= 2;
}
