/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sampling selftests share:
 *
 *  - a small x86-64 emitter that tracks the CFA rule after each
 *    instruction and records a frame row wherever it changes, so that the
 *    rows a test publishes are those of the code it runs;
 *  - a JIT's view of a registry, with the publication protocol of
 *    <linux/sframe_jit.h>: append, tombstone, rewrite under seq;
 *  - a perf sampler of the calling thread and its ring-buffer reader.
 *
 * sample_lib.c is a translation unit of its own, without the harness:
 * its functions return 0 or a negative errno and the tests assert.
 * sample_harness.h holds the helpers that need the harness.
 */
#ifndef SAMPLE_LIB_H
#define SAMPLE_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <linux/perf_event.h>
#include <linux/sframe_jit.h>
#include <linux/types.h>

/*
 * For the C functions of a sampled chain, whose return addresses the
 * tests compare.
 */
#ifdef __clang__
#define CHAIN_FN __attribute__((__noinline__))
#else
/* No inlining, cloning or merging: the function that runs is this one. */
#define CHAIN_FN __attribute__((__noipa__))
#endif

#define MAX_ROWS	16	/* frame rows of one emitted function */
#define MAX_FN_BYTES	256	/* bytes of one emitted function */
#define FN_ALIGN	64	/* where fn_begin() starts a function */

/* One emitted function, as the emitter knows it. */
struct jit_fn {
	const char *name;
	unsigned long start;
	__u32 size;
	__u8 type;			/* enum sframe_jit_fde_type */
	__u8 rep_size;			/* PCMASK: bytes per stub */
	struct sframe_jit_fre rows[MAX_ROWS];
	unsigned int nr_rows;
	__u32 call_ret;			/* offset of the return address of its call */
	__u32 spin_start, spin_end;	/* its spin loop, if it has one */
	unsigned char insn[MAX_FN_BYTES];	/* 1 where an instruction starts */
	unsigned int fde;		/* index of its descriptor */
};

enum {
	RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

struct emitter {
	unsigned char *buf;
	size_t pos, cap;
	struct jit_fn *fn;
	size_t fn_pos;		/* where the function, or this stub, starts */
	bool record;		/* rows and insn marks: off for stubs 1.. */
	/* The CFA rule after the last instruction. */
	__u8 cfa_base;
	__s32 cfa_off;
	__s16 fp_off;		/* 0: the caller's %rbp is still in %rbp */
	bool overflow;
};

void emit_raw(struct emitter *e, const __u8 *op, size_t n, __u64 imm,
	      size_t imm_size);

#define OP(...)		((const __u8[]){ __VA_ARGS__ })
#define EMIT(e, ...)	emit_raw(e, OP(__VA_ARGS__), sizeof(OP(__VA_ARGS__)), 0, 0)
#define EMIT_IMM(e, imm, size, ...) \
	emit_raw(e, OP(__VA_ARGS__), sizeof(OP(__VA_ARGS__)), imm, size)

unsigned long emit_addr(const struct emitter *e);
void pad_to(struct emitter *e, size_t align);
void frame_begin(struct emitter *e);
void fn_begin(struct emitter *e, struct jit_fn *fn, const char *name,
	      __u8 type, __u8 rep_size);
void fn_end(struct emitter *e);
void emit_store_ret(struct emitter *e, unsigned long *slot);
void emit_push(struct emitter *e, int reg);
void emit_pop(struct emitter *e, int reg);
void emit_sub_rsp(struct emitter *e, __u8 n);
void emit_add_rsp(struct emitter *e, __u8 n);
void emit_frame_enter(struct emitter *e);
void emit_leave(struct emitter *e);
void emit_ret(struct emitter *e);
void emit_call_rax(struct emitter *e);
void emit_call_slot(struct emitter *e, unsigned long *slot);
void emit_mov_rax_imm(struct emitter *e, unsigned long imm);
void emit_load_rax(struct emitter *e, unsigned long *addr);
void emit_save_rbp(struct emitter *e);
void emit_restore_rbp(struct emitter *e);
void emit_mov_ebp_imm(struct emitter *e, __u32 imm);
void emit_store_rsp_imm(struct emitter *e, __u8 off, __s32 imm);
void emit_spin(struct emitter *e, unsigned long *count);

/*
 * A registry as its JIT knows it: the layout read once when it was
 * mapped (the JIT may scribble over the header's copy, the kernel never
 * reads it back), and what the JIT handed out since.
 */
struct jit_registry {
	struct sframe_jit_header *hdr;
	int fd;			/* the registry's file, -1 if closed */
	char *fdes;
	char *fres;
	__u64 text_start, text_end;
	__u32 fde_stride, fre_stride;
	__u32 fde_capacity, fre_capacity;
	size_t map_size;
	__u32 nr_fdes;		/* descriptors published */
	__u32 nr_fres;		/* row slots handed out */
	__u64 last_end;		/* end of the last function appended */
	/* SFRAME_JIT_F_COMPACT: compact records and a rule area. */
	bool compact;
	char *rules;
	__u32 rule_stride, rule_capacity;
	__u32 nr_rules;		/* distinct rules written */
};

int jit_registry_attach(struct jit_registry *r, struct sframe_jit_header *hdr);
int jit_registry_move(struct jit_registry *r, struct sframe_jit_header *hdr,
		      int fd);
int jit_registry_unmap(struct jit_registry *r);
struct sframe_jit_fde *jit_registry_fde(const struct jit_registry *r,
					__u32 i);
struct sframe_jit_fre *jit_registry_fre(const struct jit_registry *r,
					__u32 i);
__u32 jit_registry_fre_start(const struct jit_registry *r, __u32 i);
long jit_registry_alloc_rows(struct jit_registry *r, __u32 n);
void jit_registry_write_rows(struct jit_registry *r, __u32 first,
			     const struct jit_fn *fn);
int jit_registry_publish(struct jit_registry *r, struct jit_fn *fn,
			 __u32 first_row);
int jit_registry_append(struct jit_registry *r, struct jit_fn *fn);
void jit_registry_tombstone(const struct jit_registry *r, __u32 i, bool on);
void jit_registry_seq_begin(const struct jit_registry *r);
void jit_registry_seq_end(const struct jit_registry *r);
void jit_registry_rewrite(const struct jit_registry *r, __u32 i,
			  const struct jit_fn *fn, __u32 first_row);
struct sframe_jit_stats jit_registry_stats(const struct sframe_jit_header *h);

/* The registers of one single step: where it is, and its frame. */
struct step_regs {
	unsigned long pc, sp, fp;
};

typedef void (*step_cb)(const struct step_regs *regs);

int single_step(step_cb step, long (*run)(void *arg), void *arg,
		long *result);

/*
 * What a frame row says, whichever format a test holds it in: the
 * registry's struct sframe_jit_fre or libsframe_jit's rows.
 */
struct row_rule {
	bool cfa_fp;		/* CFA from %rbp, else from %rsp */
	bool fp_saved;		/* the caller's %rbp is at CFA + fp_off */
	__s32 cfa_off;
	__s32 ra_off;
	__s32 fp_off;
};

const char *row_check(const struct row_rule *row,
		      const struct step_regs *regs, unsigned long entry_fp,
		      unsigned long ret);

/*
 * Single-step a run of JIT functions and, at each of their instructions,
 * evaluate the row the emitter gave it against the real registers: the
 * CFA must hold, at ra_off, the return address the function stored at
 * entry (in *ret, by an earlier run), and the caller's frame pointer
 * must be where the row says.  Runs natively, without the kernel's help.
 */
#define TRACE_MAX_FNS	8

struct trace_fn {
	const struct jit_fn *fn;
	const unsigned long *ret;	/* where it stores its return address */
};

int row_trace(const struct trace_fn *fns, unsigned int nr,
	      long (*run)(void *arg), void *arg, long *result);
const char *row_trace_error(void);
unsigned long row_trace_steps(void);
int row_trace_unseen(unsigned int i);

/* A task-clock sampler of the calling thread. */
#define SAMPLER_MAX_STACK	32

struct sampler {
	int fd;
	struct perf_event_mmap_page *page;
	size_t map_size;
	unsigned char *data;
	__u64 data_size;
};

/* Records a drain saw, by kind. */
struct ring_counts {
	unsigned long samples;		/* PERF_RECORD_SAMPLE */
	unsigned long lost;		/* samples the kernel dropped */
	unsigned long throttled;	/* PERF_RECORD_THROTTLE */
	unsigned long bad_records;	/* malformed, or refused by the callback */
};

/*
 * Called for each PERF_RECORD_SAMPLE with its body (after the header) as
 * 64-bit words; returns false for a record it finds malformed.
 */
typedef bool (*sample_cb)(void *arg, const __u64 *rec, size_t words);

__u64 *attr_flags(struct perf_event_attr *attr);
void attr_set_sframe(struct perf_event_attr *attr);
void sampler_attr(struct perf_event_attr *attr, __u64 period_ns,
		  bool sframe);
int perf_open(struct perf_event_attr *attr);
int sampler_probe(void);
int sampler_open(struct sampler *s, struct perf_event_attr *attr,
		 unsigned int data_pages);
void sampler_close(struct sampler *s);
int sampler_enable(struct sampler *s, bool on);
void sampler_drain(struct sampler *s, sample_cb cb, void *arg,
		   struct ring_counts *c);
int sample_user_chain(const __u64 *rec, size_t words, __u64 *ip,
		      const __u64 **chain, __u64 *nr);

/* Called for each sample with a user chain: its IP and that chain. */
typedef void (*chain_cb)(void *arg, __u64 ip, const __u64 *chain, __u64 nr);

void sampler_drain_chains(struct sampler *s, chain_cb cb, void *arg,
			  unsigned long *not_user, struct ring_counts *c);

unsigned int chain_first_bad(const __u64 *chain, __u64 nr,
			     const __u64 *want, unsigned int n);

/*
 * Chains counted by the first frame that differs from the one expected,
 * n (the frames compared) when none does; the first chain of each kind
 * is kept, with what was expected of it, for the log.
 */
#define CHAIN_MAX	8	/* frames compared, at most */

struct chain_tally {
	unsigned long first_bad[CHAIN_MAX + 1];
	__u64 got[CHAIN_MAX + 1][CHAIN_MAX];
	__u64 want[CHAIN_MAX + 1][CHAIN_MAX];
	unsigned int got_nr[CHAIN_MAX + 1];
};

unsigned int chain_tally_add(struct chain_tally *ct, unsigned int n,
			     const __u64 *chain, __u64 nr, const __u64 *want);

/*
 * Where a return address stored by a C callee must point: just past a
 * call in @fn, which is smaller than this.
 */
static inline bool returns_into(unsigned long ra, const void *fn)
{
	return ra > (unsigned long)fn && ra < (unsigned long)fn + 1024;
}

double elapsed(clockid_t clock, const struct timespec *since);
void spin_tune(unsigned long *spin, double took);

/*
 * Order instruction fetch after what the thread saw last: the code
 * another thread wrote and published is what this one runs next
 * (Intel SDM, cross-modifying code).
 */
static inline void sync_core(void)
{
	unsigned int a = 0, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d)
			 : : "memory");
}

#endif /* SAMPLE_LIB_H */
