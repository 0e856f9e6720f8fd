// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the whole user stack walk, sframe_callchain_user() of
 * kernel/unwind/sframe_user.c built unchanged, over synthetic tables, a
 * synthetic stack and synthetic registers.
 *
 * The input describes (see the seeds' generator, gen_corpus.c):
 *	u8 depth limit; u8 flags (bit 0: the task registered nothing;
 *	    bit 1: the depth limit is that many frames past the budget
 *	    SFRAME_SAMPLE_MAX_FRAMES, not below 64;
 *	    bit 2: the task is stopped at a function's first instruction);
 *	the registers pc, sp, fp, as words (below);
 *	u8 number of regions (up to 4), each: u8 kind, then an ELF section
 *	    (u16 text length, s32 section address from the text start,
 *	    u16 length, bytes) or a JIT registry (u16 text length, u8 seq,
 *	    u8 functions, each: u16 start, u16 size, u8 rows - 1 | flags,
 *	    u8 repeat size, and per row u8 start step, u8 flags and s8 CFA,
 *	    RA and FP offsets in units of 8);
 *	u16 stack words, then the words.
 * A word is a tag byte and a value: a small number, an address in the
 * stack or in a region's text, or a raw 64-bit value; the fuzzer then
 * finds return addresses and frame pointers without guessing them.
 * Region r's text starts at TEXT(r); the stack sits below STACK_TOP.
 * TEXT(MAX_REGIONS) is code no region describes, readable, that holds
 * two rt_sigreturn trampolines and one instruction short of a third.
 *
 * The shims give the walker an index of these regions (looked up as
 * sframe_register.c does, through the decoder: ELF sections in their
 * converted tables, which the reference does not use), a nofault
 * accessor over the stack image and the trampolines that fails outside
 * them and poisons its destination when it does, and RCU as a nesting
 * count.  The callchain must be exactly that of a reference walk written
 * here from the walker's documented rules (one SFrame step if a table
 * describes the frame and its row can be followed, else one
 * frame-pointer step, or for the first frame at a function's entry a
 * step to the return address at the stack pointer; out of a frame the
 * row marks as a signal frame, or that no row describes and whose PC is
 * a trampoline, a step to the registers of the sigcontext, whose PC is
 * looked up as it is; every other step moves up the stack), with the
 * decoder's lookups as oracles and 128-bit address arithmetic;
 * sframe_row_apply() must agree with that arithmetic.  Every read must
 * be an aligned word, at most five of them per frame, RCU balanced, and
 * nothing returned when nothing is registered.  The bound of one
 * sample's work holds: at most SFRAME_SAMPLE_MAX_FRAMES frames, the walk
 * stopped there being counted, at most SFRAME_TABLE_MAX_READS table
 * records per lookup, and at most SFRAME_SAMPLE_MAX_READS reads of
 * records and words in all, a walk stopped before the reference for
 * them being counted and a prefix of the reference's.
 */
#include <limits.h>

#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sframe_register.h>
#include <uapi/linux/sframe_jit.h>

#include "fuzz.h"
#include "table_alloc.h"

#define MAX_REGIONS	4
#define MAX_DEPTH	64
/* Flags bit 1 asks for a depth limit past the budget, up to this. */
#define MAX_DEEP	(SFRAME_SAMPLE_MAX_FRAMES + 256)
#define MAX_WORDS	1024
#define MAX_JIT_FUNCS	8
#define TEXT(r)		(0x400000UL + (unsigned long)(r) * 0x100000UL)
#define STACK_TOP	0x7ffd00000000UL
#define POISON		0x5a5a5a5a5a5a5a5aUL

/* The code no region describes: trampolines at +0x10 and +0x23. */
#define TRAMP		TEXT(MAX_REGIONS)
#define TRAMP_SIZE	64
static const u8 sigreturn_insn[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};

/*
 * The x86-64 signal frame: sizeof(struct rt_sigframe), and the offsets
 * from it of the interrupted %rip, %rsp and %rbp (the ucontext after
 * pretcode, its sigcontext 40 bytes in, REG_RIP, REG_RSP and REG_RBP).
 */
#define SIGFRAME_SIZE	440
#define SIGFRAME_RIP	(8 + 40 + 16 * 8)
#define SIGFRAME_RSP	(8 + 40 + 15 * 8)
#define SIGFRAME_RBP	(8 + 40 + 10 * 8)

struct sframe_region {
	unsigned long start, end;
	bool jit;
	struct sframe_sec sec;
	struct sframe_table *table;
	struct sframe_jit_view view;
	void *buf;
};

struct sframe_mm {
	int unused;
};

int sframe_fuzz_rcu_depth;
struct task_struct *sframe_fuzz_current;

static struct {
	struct task_struct task;
	struct mm_struct mm;
	struct sframe_mm smm;
	struct sframe_region regions[MAX_REGIONS];
	unsigned int nr_regions;
	u64 *stack;
	unsigned long stack_lo;
	size_t nr_words;
	u8 tramp[TRAMP_SIZE];
	unsigned long reads;
	unsigned long finds;		/* table lookups */
	unsigned long table_reads;	/* their records read */
	unsigned long lookups;		/* index lookups */
	unsigned long charged;		/* records the lookups counted */
} g;

void sframe_fuzz_rcu_misuse(const char *what)
{
	FUZZ_CHECK(0, "%s", what);
}

void sframe_fuzz_shared_read(void)
{
}

/* The synthetic user memory: the stack image and the trampolines. */
static bool mem_word(unsigned long a, unsigned long *v)
{
	if (a & 7)
		return false;
	if (a >= g.stack_lo && a - g.stack_lo < g.nr_words * 8) {
		*v = g.stack[(a - g.stack_lo) / 8];
		return true;
	}
	if (a >= TRAMP && a - TRAMP < TRAMP_SIZE) {
		memcpy(v, &g.tramp[a - TRAMP], 8);
		return true;
	}
	return false;
}

static void tramp_init(void)
{
	memset(g.tramp, 0xcc, sizeof(g.tramp));
	memcpy(&g.tramp[0x10], sigreturn_insn, sizeof(sigreturn_insn));
	memcpy(&g.tramp[0x23], sigreturn_insn, sizeof(sigreturn_insn));
	/* mov $15, %rax; then no syscall. */
	memcpy(&g.tramp[0x30], sigreturn_insn, sizeof(sigreturn_insn) - 1);
}

/* ---- The kernel side the walker calls ---- */

long copy_from_user_nofault(void *dst, const void __user *src, size_t size)
{
	unsigned long a = (unsigned long)src, v;

	FUZZ_CHECK(size == sizeof(u64) && !(a & 7),
		   "read of %zu bytes at %#lx", size, a);
	g.reads++;
	if (mem_word(a, &v)) {
		memcpy(dst, &v, size);
		return 0;
	}
	memset(dst, 0x5a, size);
	return -EFAULT;
}

static struct sframe_region *find_region(unsigned long addr)
{
	unsigned int i;

	for (i = 0; i < g.nr_regions; i++)
		if (addr >= g.regions[i].start && addr < g.regions[i].end)
			return &g.regions[i];
	return NULL;
}

struct sframe_region *sframe_region_lookup(struct mm_struct *mm,
					   unsigned long addr)
{
	struct sframe_mm *smm = rcu_dereference(mm->sframe);

	FUZZ_CHECK(mm == &g.mm && smm == &g.smm, "lookup in a foreign mm");
	g.lookups++;
	return find_region(addr);
}

bool sframe_region_covers(const struct sframe_region *r, unsigned long addr)
{
	FUZZ_CHECK(sframe_fuzz_rcu_depth > 0, "region used outside RCU");
	return addr >= r->start && addr < r->end;
}

/*
 * As sframe_register.c: an ELF section is looked up in its converted
 * table, whose work is counted against SFRAME_TABLE_MAX_READS.
 */
int sframe_region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row, u32 *reads)
{
	int ret;
	u32 n;

	FUZZ_CHECK(sframe_fuzz_rcu_depth > 0, "region used outside RCU");
	FUZZ_CHECK(pc >= r->start && pc < r->end,
		   "pc %#lx looked up in [%#lx, %#lx)", pc, r->start, r->end);
	if (r->jit) {
		n = sframe_jit_max_reads(&r->view);
		FUZZ_CHECK(n <= SFRAME_JIT_MAX_READS,
			   "a JIT lookup's bound of %u reads", n);
		*reads += n;
		g.charged += n;
		return sframe_jit_find(&r->view, pc, row);
	}
	ret = sframe_table_find_reads(r->table, pc, row, &n);
	FUZZ_CHECK(n <= SFRAME_TABLE_MAX_READS, "pc %#lx: %u records read",
		   pc, n);
	*reads += n;
	g.charged += n;
	g.finds++;
	g.table_reads += n;
	return ret;
}

/* The reference's oracle: an ELF section looked up in the section. */
static int region_find(struct sframe_region *r, unsigned long pc,
		       struct sframe_row *row)
{
	if (r->jit)
		return sframe_jit_find(&r->view, pc, row);
	return sframe_sec_find(&r->sec, pc, row);
}

/* ---- The input ---- */

static unsigned long read_word(struct fuzz_in *in)
{
	u8 tag = fin_u8(in);
	u16 v;

	switch (tag & 3) {
	case 0:
		return tag >> 2;
	case 1:
		v = fin_u16(in);
		return STACK_TOP - MAX_WORDS * 8 - 64 + v % (MAX_WORDS * 8 + 128);
	case 2:
		v = fin_u16(in);
		return TEXT((tag >> 2) % (MAX_REGIONS + 1)) + v;
	default:
		return fin_u64(in);
	}
}

static void add_elf(struct fuzz_in *in, struct sframe_region *r)
{
	u32 text_len = 1 + fin_u16(in);
	s32 rel = fin_u32(in);
	size_t len = fin_u16(in);

	if (len > in->left)
		len = in->left;
	r->buf = malloc(len ? len : 1);
	if (!r->buf)
		return;
	memcpy(r->buf, in->p, len);
	in->p += len;
	in->left -= len;
	r->end = r->start + text_len;
	/* Registered only if the kernel would accept it, and converted. */
	if (sframe_sec_init(&r->sec, r->buf, len, r->start + rel) ||
	    sframe_sec_validate(&r->sec) ||
	    table_alloc_new(&r->sec, &r->table))
		return;
	g.nr_regions++;
}

static void add_jit_func(struct fuzz_in *in, struct sframe_region *r, u8 *mem,
			 u32 i, u32 *rows_used)
{
	struct sframe_jit_fde *f = (struct sframe_jit_fde *)(mem + r->view.fde_off) + i;
	struct sframe_jit_fre *e;
	u32 k, nr, start = 0;
	u8 info;

	f->func_start = r->start + fin_u16(in);
	f->func_size = fin_u16(in);
	info = fin_u8(in);
	f->rep_size = fin_u8(in);
	nr = 1 + (info & 3);
	f->flags = (info >> 2) & 1 ? SFRAME_JIT_FDE_TOMBSTONE : 0;
	f->type = (info >> 3) & 1 ? SFRAME_JIT_FDE_PCMASK : SFRAME_JIT_FDE_PCINC;
	if (info & 0x80)
		f->flags |= 0x100;	/* unknown: malformed */
	f->fre_start = *rows_used;
	f->fre_count = nr;
	for (k = 0; k < nr; k++) {
		u8 fl = fin_u8(in);

		e = (struct sframe_jit_fre *)(mem + r->view.fre_off) + *rows_used + k;
		e->start_off = start;
		e->cfa_base = fl & 3;		/* 2 and 3 are malformed */
		e->flags = (fl >> 2) & 7;	/* 4 is malformed */
		e->cfa_off = (s8)fin_u8(in) * 8;
		e->ra_off = (s8)fin_u8(in) * 8;
		e->fp_off = (s8)fin_u8(in) * 8;
		start += 1 + fin_u8(in);
	}
	*rows_used += nr;
}

static void add_jit(struct fuzz_in *in, struct sframe_region *r)
{
	u32 text_len = 1 + fin_u16(in), seq = fin_u8(in), n, i, rows = 0;
	struct sframe_jit_header *h;
	size_t size;

	n = fin_u8(in) % (MAX_JIT_FUNCS + 1);
	r->view.fde_off = sizeof(*h);
	r->view.fde_cap = MAX_JIT_FUNCS;
	r->view.fre_off = r->view.fde_off + MAX_JIT_FUNCS * sizeof(struct sframe_jit_fde);
	r->view.fre_cap = MAX_JIT_FUNCS * 4;
	size = r->view.fre_off + r->view.fre_cap * sizeof(struct sframe_jit_fre);
	r->buf = calloc(1, size);
	if (!r->buf)
		return;
	r->end = r->start + text_len;
	r->view.base = r->buf;
	r->view.text_start = r->start;
	r->view.text_end = r->end;
	for (i = 0; i < n; i++)
		add_jit_func(in, r, r->buf, i, &rows);
	h = r->buf;
	h->fde_count = n;
	h->seq = seq;
	r->jit = true;
	g.nr_regions++;
}

static void read_regions(struct fuzz_in *in)
{
	u8 n = fin_u8(in) % (MAX_REGIONS + 1), i;
	struct sframe_region *r;
	unsigned int before;

	for (i = 0; i < n; i++) {
		before = g.nr_regions;
		r = &g.regions[before];
		memset(r, 0, sizeof(*r));
		r->start = TEXT(i);
		if (fin_u8(in) & 1)
			add_jit(in, r);
		else
			add_elf(in, r);
		if (g.nr_regions == before) {
			free(r->buf);	/* not registered */
			r->buf = NULL;
		}
	}
}

static bool read_stack(struct fuzz_in *in)
{
	size_t i;

	g.nr_words = fin_u16(in) % (MAX_WORDS + 1);
	g.stack = malloc(g.nr_words ? g.nr_words * 8 : 1);
	if (!g.stack)
		return false;
	g.stack_lo = STACK_TOP - g.nr_words * 8;
	for (i = 0; i < g.nr_words; i++)
		g.stack[i] = read_word(in);
	return true;
}

/* ---- The reference walk ---- */

static bool ref_read(unsigned long a, unsigned long *v)
{
	return mem_word(a, v);
}

/* Byte by byte: the nine bytes at @pc are readable and the trampoline. */
static bool ref_at_sigreturn(unsigned long pc)
{
	unsigned long v;
	unsigned int i;

	for (i = 0; i < sizeof(sigreturn_insn); i++) {
		if (pc + i < pc || !ref_read((pc + i) & ~7UL, &v) ||
		    (u8)(v >> (8 * ((pc + i) & 7))) != sigreturn_insn[i])
			return false;
	}
	return true;
}

/* @base + @off if it stays an address. */
static bool ref_add(unsigned long base, s32 off, unsigned long *res)
{
	__int128 v = (__int128)base + off;

	if (v < 0 || v > (__int128)ULONG_MAX)
		return false;
	*res = (unsigned long)v;
	return true;
}

/*
 * Where the caller's state is, by 128-bit arithmetic; checks that
 * sframe_row_apply() says the same.
 */
static bool ref_apply(const struct sframe_row *row, unsigned long sp,
		      unsigned long fp, struct sframe_step *st)
{
	char rs[FZ_ROW_STR_LEN];
	struct sframe_step got = {};
	bool ok;
	int ret;

	memset(st, 0, sizeof(*st));
	ok = ref_add(row->cfa_base == SFRAME_CFA_BASE_SP ? sp : fp,
		     row->cfa_off, &st->cfa) &&
	     ref_add(st->cfa, row->ra_off, &st->ra_addr) &&
	     (!row->fp_saved || ref_add(st->cfa, row->fp_off, &st->fp_addr));
	st->fp_saved = row->fp_saved;
	ret = sframe_row_apply(row, sp, fp, &got);
	FUZZ_CHECK(ok ? ret == 0 : ret == -ERANGE,
		   "sframe_row_apply() %d for %s sp %#lx fp %#lx",
		   ret, fz_row_str(row, rs, sizeof(rs)), sp, fp);
	FUZZ_CHECK(!ok || (got.cfa == st->cfa && got.ra_addr == st->ra_addr &&
			   got.fp_saved == st->fp_saved &&
			   (!st->fp_saved || got.fp_addr == st->fp_addr)),
		   "sframe_row_apply(): cfa %#lx ra at %#lx, reference %#lx %#lx",
		   got.cfa, got.ra_addr, st->cfa, st->ra_addr);
	return ok;
}

struct ref_regs {
	unsigned long pc, sp, fp;
};

/* 1: stepped by the row; 0: outermost frame; -1: not followable. */
static int ref_row_step(struct ref_regs *w, const struct sframe_row *row)
{
	struct sframe_step st;
	unsigned long ra, fp = w->fp;

	if (row->ra_undefined)
		return 0;
	if (!ref_apply(row, w->sp, w->fp, &st) || st.cfa <= w->sp ||
	    st.cfa > TASK_SIZE || !ref_read(st.ra_addr, &ra) ||
	    (st.fp_saved && !ref_read(st.fp_addr, &fp)))
		return -1;
	w->sp = st.cfa;
	w->fp = fp;
	w->pc = ra;
	return 1;
}

static bool ref_fp_step(struct ref_regs *w)
{
	unsigned long fp, ra, old_sp = w->sp;

	if (w->fp < w->sp || w->fp > TASK_SIZE - 16 ||
	    !ref_read(w->fp, &fp) || !ref_read(w->fp + 8, &ra))
		return false;
	w->sp = w->fp + 16;
	w->fp = fp;
	w->pc = ra;
	return w->sp > old_sp;
}

/* The interrupted registers, in the sigcontext above the stack pointer. */
static bool ref_signal_step(struct ref_regs *w)
{
	unsigned long ip, sp, fp;

	if (w->sp < 8 || w->sp > TASK_SIZE - SIGFRAME_SIZE ||
	    !ref_read(w->sp - 8 + SIGFRAME_RIP, &ip) ||
	    !ref_read(w->sp - 8 + SIGFRAME_RSP, &sp) ||
	    !ref_read(w->sp - 8 + SIGFRAME_RBP, &fp) || sp >= TASK_SIZE)
		return false;
	w->pc = ip;
	w->sp = sp;
	w->fp = fp;
	return true;
}

/* Nothing pushed yet: the return address is at the stack pointer. */
static bool ref_entry_step(struct ref_regs *w)
{
	unsigned long ra;

	if (!ref_read(w->sp, &ra))
		return false;
	w->sp += 8;
	w->pc = ra;
	return true;
}

/*
 * One frame: 1 stepped up the stack, 2 stepped out of a signal frame,
 * 0 the walk ends.
 */
static int ref_step(struct ref_regs *w, bool exact, bool entry)
{
	unsigned long pc = exact ? w->pc : w->pc - 1;
	struct sframe_region *r = find_region(pc);
	struct sframe_row row;
	bool hit;
	int ret;

	hit = r && region_find(r, pc, &row) == SFRAME_FIND_HIT;
	if (hit && row.signal)
		return ref_signal_step(w) ? 2 : 0;
	if (hit) {
		ret = ref_row_step(w, &row);
		if (ret >= 0)
			return ret;
	} else if (ref_at_sigreturn(w->pc)) {
		return ref_signal_step(w) ? 2 : 0;
	}
	return entry ? ref_entry_step(w) : ref_fp_step(w);
}

/* The walk; *@budget_hit if it ended at SFRAME_SAMPLE_MAX_FRAMES. */
static u32 ref_walk(struct ref_regs w, u32 max, bool at_entry, u64 *ips,
		    bool *budget_hit)
{
	bool exact = true;
	u32 n = 1;
	int ret;

	ips[0] = w.pc;
	*budget_hit = false;
	for (; n < max; n++) {
		unsigned long old_sp = w.sp;

		/* The frames taken so far are n - 1. */
		if (n - 1 == SFRAME_SAMPLE_MAX_FRAMES) {
			*budget_hit = true;
			break;
		}

		ret = ref_step(&w, exact, at_entry && n == 1);
		if (!ret)
			break;
		FUZZ_CHECK(ret == 2 || w.sp > old_sp,
			   "reference walk went down the stack");
		exact = ret == 2;
		if (!w.pc || w.pc >= TASK_SIZE)
			break;
		ips[n] = w.pc;
	}
	return n;
}

/* ---- The run ---- */

static void walk(struct ref_regs regs, u32 max, bool registered,
		 bool at_entry)
{
	u64 buf[1 + MAX_DEEP] = {};
	struct perf_callchain_entry *chain = (void *)buf;
	struct perf_callchain_entry_ctx ctx = { .entry = chain,
						.max_stack = max };
	unsigned long stops = sframe_budget_stops(), total;
	u64 want[MAX_DEEP];
	bool done, budget_hit;
	u32 n, i;

	g.mm.sframe = registered ? &g.smm : NULL;
	g.task.mm = &g.mm;
	sframe_fuzz_current = &g.task;
	g.reads = 0;
	g.lookups = 0;
	g.charged = 0;
	perf_callchain_store(&ctx, regs.pc);
	done = sframe_callchain_user(&ctx, regs.pc, regs.sp, regs.fp,
				     at_entry);

	FUZZ_CHECK(!sframe_fuzz_rcu_depth, "RCU left at depth %d",
		   sframe_fuzz_rcu_depth);
	FUZZ_CHECK(done == registered, "walked %d with registrations %d", done,
		   registered);
	FUZZ_CHECK(chain->nr == ctx.nr && ctx.nr <= max, "%u of %u entries",
		   ctx.nr, max);
	/*
	 * A row step reads two words, a frame-pointer fallback two more; a
	 * frame no row describes two for the trampoline, then two, or three
	 * out of a signal frame.
	 */
	FUZZ_CHECK(g.reads <= 5UL * max, "%lu reads for %u frames", g.reads,
		   ctx.nr);
	/* The bound of sframe_lookup.h on a sample: frames, and records per frame. */
	FUZZ_CHECK(ctx.nr <= SFRAME_SAMPLE_MAX_FRAMES + 1,
		   "%u frames past the budget", ctx.nr);
	FUZZ_CHECK(g.finds <= ctx.nr &&
		   g.table_reads <= g.finds * SFRAME_TABLE_MAX_READS,
		   "%lu table lookups reading %lu records for %u frames",
		   g.finds, g.table_reads, ctx.nr);
	if (!registered) {
		FUZZ_CHECK(ctx.nr == 1 && !g.reads, "walked without tables");
		return;
	}
	total = g.reads + SFRAME_INDEX_MAX_READS * g.lookups + g.charged;
	FUZZ_CHECK(total <= SFRAME_SAMPLE_MAX_READS, "%lu reads in a sample",
		   total);
	n = ref_walk(regs, max, at_entry, want, &budget_hit);
	/* Stopped for its reads: what it took is the reference's start. */
	if (ctx.nr < n && sframe_budget_stops() == stops + 1 &&
	    total > SFRAME_SAMPLE_MAX_READS - SFRAME_FRAME_MAX_READS) {
		n = ctx.nr;
		budget_hit = true;
	}
	FUZZ_CHECK(sframe_budget_stops() == stops + budget_hit,
		   "budget stops %lu, then %lu; the reference hit it: %d",
		   stops, sframe_budget_stops(), budget_hit);
	if (getenv("SFRAME_FUZZ_VERBOSE")) {
		for (i = 0; i < ctx.nr; i++)
			fprintf(stderr, "frame %u: %#llx\n", i,
				(unsigned long long)chain->ip[i]);
		fprintf(stderr, "%lu reads\n", g.reads);
	}
	for (i = 0; i < n && i < ctx.nr && chain->ip[i] == want[i]; i++)
		;
	FUZZ_CHECK(n == ctx.nr && i == n,
		   "%u frames, reference %u; first difference at %u: %#llx, reference %#llx",
		   ctx.nr, n, i, (unsigned long long)(i < ctx.nr ? chain->ip[i] : 0),
		   (unsigned long long)(i < n ? want[i] : 0));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	u8 depth = fin_u8(&in), flags = fin_u8(&in);
	/* Past the budget, or within perf's usual limits. */
	u32 max = flags & 2 ? SFRAME_SAMPLE_MAX_FRAMES + 1 + depth :
			      1 + depth % MAX_DEPTH;
	bool registered = !(flags & 1), at_entry = flags & 4;
	struct ref_regs regs;
	unsigned int i;

	memset(&g, 0, sizeof(g));
	tramp_init();
	regs.pc = read_word(&in);
	regs.sp = read_word(&in);
	regs.fp = read_word(&in);
	read_regions(&in);
	if (read_stack(&in))
		walk(regs, max, registered, at_entry);
	for (i = 0; i < g.nr_regions; i++) {
		free(g.regions[i].buf);
		table_alloc_free(g.regions[i].table);
	}
	free(g.stack);
	return 0;
}
