// SPDX-License-Identifier: GPL-2.0
/*
 * Cross-check of the CFI conversion (cfi.c) against libdw, and of its
 * interpreter against its libdw path (cfi_paths.c).
 *
 * An object is converted with sframe_jit_cfi_convert(); then, through a
 * libdw handle of its own, for a sample of addresses in every converted
 * function (each row's first and last byte, its middle, and two
 * pseudo-random addresses per function), the state libdw computes at
 * the address is compared with the row that the table gives there: the
 * function found by a binary search over all functions, then its last
 * row that starts at or below the address.
 *
 * libdw's rules are not read by their form, as the converter reads
 * them, but evaluated: the CFA's expression and the locations of the
 * return address and of RBP are computed by a small DWARF stack machine
 * under two made-up register files, and each result must be what the row
 * says under both (the CFA its base register plus its offset, the two
 * slots the CFA plus theirs).  A rule that reads memory, or that is a
 * value rather than a location, cannot be what a row says, and fails
 * the comparison.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cfi_xcheck.h"

#define DWARF_RBP	6
#define DWARF_RSP	7
#define DWARF_RA	16
#define NR_REGS		17
#define STACK_MAX	16
/* Pseudo-random addresses checked per function, besides its rows'. */
#define RANDOM_PER_FUNC	2

/* A made-up register file: every register distinct, none near another. */
struct regs {
	uint64_t r[NR_REGS];
};

static void regs_init(struct regs *a, struct regs *b)
{
	unsigned int i;

	for (i = 0; i < NR_REGS; i++) {
		a->r[i] = 0x100000000ULL * (i + 1) + 0x1230;
		b->r[i] = 0x7f0000000000ULL - 0x10000000000ULL * i + 0x4560;
	}
}

struct machine {
	uint64_t st[STACK_MAX];
	unsigned int n;
	bool value;	/* DW_OP_stack_value: the result is not a location */
};

static bool push(struct machine *m, uint64_t v)
{
	if (m->n == STACK_MAX)
		return false;
	m->st[m->n++] = v;
	return true;
}

/* One operation that needs neither memory nor the object's data. */
static bool step(struct machine *m, const Dwarf_Op *op,
		 const struct regs *regs, uint64_t cfa, bool have_cfa)
{
	uint8_t a = op->atom;

	if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
		return push(m, a - DW_OP_lit0);
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31)
		return a - DW_OP_breg0 < NR_REGS &&
		       push(m, regs->r[a - DW_OP_breg0] + op->number);
	switch (a) {
	case DW_OP_bregx:
		return op->number < NR_REGS &&
		       push(m, regs->r[op->number] + op->number2);
	case DW_OP_call_frame_cfa:
		return have_cfa && push(m, cfa);
	case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
	case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s:
	case DW_OP_const8u: case DW_OP_const8s: case DW_OP_constu:
	case DW_OP_consts:
		return push(m, op->number);
	case DW_OP_plus_uconst:
		if (!m->n)
			return false;
		m->st[m->n - 1] += op->number;
		return true;
	case DW_OP_plus:
	case DW_OP_minus:
		if (m->n < 2)
			return false;
		m->n--;
		if (a == DW_OP_plus)
			m->st[m->n - 1] += m->st[m->n];
		else
			m->st[m->n - 1] -= m->st[m->n];
		return true;
	case DW_OP_stack_value:
		m->value = true;
		return true;
	default:
		return false;
	}
}

static bool eval(const Dwarf_Op *ops, size_t nops, const struct regs *regs,
		 uint64_t cfa, bool have_cfa, uint64_t *out, bool *value)
{
	struct machine m = { .n = 0 };
	size_t i;

	for (i = 0; i < nops; i++)
		if (m.value || !step(&m, &ops[i], regs, cfa, have_cfa))
			return false;
	if (!m.n)
		return false;
	*out = m.st[m.n - 1];
	*value = m.value;
	return true;
}

/* How libdw describes a register in one state. */
enum reg_kind { REG_UNDEFINED, REG_SAME, REG_LOCATION, REG_OTHER };

struct reg_rule {
	enum reg_kind kind;
	uint64_t addr[2];	/* REG_LOCATION, under each register file */
};

/* libdw's state at one address, evaluated under two register files. */
struct state {
	bool ok;		/* libdw gave a frame */
	bool signal;
	int ra_col;
	bool cfa_ok;
	uint64_t cfa[2];
	struct reg_rule ra;
	struct reg_rule rbp;
	Dwarf_Op cfa_ops[4];	/* the first few, for the report */
	size_t cfa_nops;
};

static void reg_eval(Dwarf_Frame *frame, int regno, const struct regs rf[2],
		     const struct state *s, struct reg_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	bool value;
	int k;

	r->kind = REG_OTHER;
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops))
		return;
	if (!nops) {
		r->kind = ops ? REG_UNDEFINED : REG_SAME;
		return;
	}
	for (k = 0; k < 2; k++)
		if (!s->cfa_ok ||
		    !eval(ops, nops, &rf[k], s->cfa[k], true, &r->addr[k],
			  &value) || value)
			return;
	r->kind = REG_LOCATION;
}

static void state_get(Dwarf_CFI *dw, uint64_t addr, const struct regs rf[2],
		      struct state *s)
{
	Dwarf_Addr start, end;
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	bool value;
	int k;

	memset(s, 0, sizeof(*s));
	if (dwarf_cfi_addrframe(dw, addr, &frame))
		return;
	s->ok = true;
	s->ra_col = dwarf_frame_info(frame, &start, &end, &s->signal);
	if (!dwarf_frame_cfa(frame, &ops, &nops) && nops) {
		s->cfa_ok = true;
		for (k = 0; k < 2; k++)
			if (!eval(ops, nops, &rf[k], 0, false, &s->cfa[k],
				  &value))
				s->cfa_ok = false;
		s->cfa_nops = nops;
		memcpy(s->cfa_ops, ops,
		       (nops < 4 ? nops : 4) * sizeof(*ops));
	}
	reg_eval(frame, DWARF_RA, rf, s, &s->ra);
	reg_eval(frame, DWARF_RBP, rf, s, &s->rbp);
	free(frame);
}

static bool slot_is(const struct reg_rule *r, const struct state *s,
		    int64_t off)
{
	return r->kind == REG_LOCATION && r->addr[0] == s->cfa[0] + off &&
	       r->addr[1] == s->cfa[1] + off;
}

/* Does @row say what libdw says?  NULL, or what differs. */
static const char *compare(const struct sframe_jit_row *row,
			   const struct state *s, const struct regs rf[2])
{
	int base = row->cfa_base == SFRAME_JIT_ROW_CFA_SP ? DWARF_RSP :
							    DWARF_RBP;

	if (!s->ok)
		return "libdw has no frame there";
	if (s->signal)
		return "libdw says signal frame";
	if (s->ra_col != DWARF_RA)
		return "libdw's return address column is not 16";
	if (row->flags & SFRAME_JIT_ROW_RA_UNDEFINED)
		return s->ra.kind == REG_UNDEFINED ? NULL :
		       "row is outermost, libdw's RA is not undefined";
	if (s->ra.kind == REG_UNDEFINED)
		return "libdw's RA is undefined, the row's is not";
	if (!s->cfa_ok || s->cfa[0] != rf[0].r[base] + row->cfa_off ||
	    s->cfa[1] != rf[1].r[base] + row->cfa_off)
		return "CFA";
	if (!slot_is(&s->ra, s, row->ra_off))
		return "RA";
	if (row->flags & SFRAME_JIT_ROW_FP_SAVED)
		return slot_is(&s->rbp, s, row->fp_off) ? NULL : "RBP saved";
	if (s->rbp.kind != REG_SAME && s->rbp.kind != REG_UNDEFINED)
		return "RBP kept";
	return NULL;
}

/* A converted function, as the check looks it up. */
struct xc_func {
	struct sframe_jit_func f;
	const struct sframe_jit_row *rows;
};

/* The function holding @addr: the last that starts at or below it. */
static const struct xc_func *func_lookup(const struct xc_func *fn,
					 uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fn[mid].f.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - fn[lo - 1].f.start >= fn[lo - 1].f.size)
		return NULL;
	return &fn[lo - 1];
}

static const struct sframe_jit_row *row_lookup(const struct xc_func *fn,
					       uint64_t addr)
{
	uint64_t off = addr - fn->f.start;
	uint32_t lo = 0, hi = fn->f.nr_rows, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (fn->rows[mid].start_off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &fn->rows[lo - 1] : NULL;
}

struct xc_ctx {
	const char *path;
	Dwarf_CFI *dw;
	struct regs rf[2];
	const struct xc_func *funcs;
	uint32_t nr_funcs;
	struct xc_result *res;
	FILE *log;
	unsigned int max_print;
	uint64_t rnd;
};

static void report(struct xc_ctx *c, uint64_t addr, const struct xc_func *fn,
		   const struct sframe_jit_row *row, const struct state *s,
		   const char *what)
{
	size_t i;

	if (++c->res->mismatches > c->max_print || !c->log)
		return;
	fprintf(c->log, "MISMATCH %s at %#llx: %s\n", c->path,
		(unsigned long long)addr, what);
	if (fn)
		fprintf(c->log, "  function %#llx size %u, %u rows\n",
			(unsigned long long)fn->f.start, fn->f.size,
			fn->f.nr_rows);
	if (row)
		fprintf(c->log,
			"  row +%u: CFA %s%+d RA %+d FP %s%+d flags %#x\n",
			row->start_off,
			row->cfa_base == SFRAME_JIT_ROW_CFA_SP ? "rsp" : "rbp",
			row->cfa_off, row->ra_off,
			row->flags & SFRAME_JIT_ROW_FP_SAVED ? "saved" : "kept",
			row->fp_off, row->flags);
	fprintf(c->log, "  libdw: frame %d signal %d RA column %d, CFA",
		s->ok, s->signal, s->ra_col);
	for (i = 0; i < s->cfa_nops && i < 4; i++)
		fprintf(c->log, " op %#x %#llx %#llx", s->cfa_ops[i].atom,
			(unsigned long long)s->cfa_ops[i].number,
			(unsigned long long)s->cfa_ops[i].number2);
	fprintf(c->log, ", RA kind %d at CFA%+lld, RBP kind %d at CFA%+lld\n",
		s->ra.kind, (long long)(s->ra.addr[0] - s->cfa[0]),
		s->rbp.kind, (long long)(s->rbp.addr[0] - s->cfa[0]));
}

static void check_addr(struct xc_ctx *c, uint64_t addr)
{
	const struct sframe_jit_row *row = NULL;
	const struct xc_func *fn;
	struct state s;
	const char *what;

	c->res->addrs++;
	state_get(c->dw, addr, c->rf, &s);
	fn = func_lookup(c->funcs, c->nr_funcs, addr);
	if (fn)
		row = row_lookup(fn, addr);
	what = !fn ? "no function holds the address" :
	       !row ? "no row applies" : compare(row, &s, c->rf);
	if (what)
		report(c, addr, fn, row, &s, what);
}

static uint64_t rnd_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The rows' shape: the first at 0, increasing, inside the function. */
static void check_shape(struct xc_ctx *c, const struct xc_func *fn,
			const struct xc_func *prev)
{
	struct state none = { .ok = false };
	uint32_t r;

	if (prev && fn->f.start - prev->f.start < prev->f.size)
		report(c, fn->f.start, fn, NULL, &none,
		       "overlaps the function before");
	if (!fn->f.nr_rows || fn->rows[0].start_off)
		report(c, fn->f.start, fn, NULL, &none,
		       "first row not at 0");
	for (r = 1; r < fn->f.nr_rows; r++)
		if (fn->rows[r].start_off <= fn->rows[r - 1].start_off ||
		    fn->rows[r].start_off >= fn->f.size)
			report(c, fn->f.start, fn, &fn->rows[r], &none,
			       "rows out of order or past the end");
}

static void check_func(struct xc_ctx *c, const struct xc_func *fn)
{
	uint64_t start, last;
	uint32_t r, k;

	for (r = 0; r < fn->f.nr_rows; r++) {
		start = fn->f.start + fn->rows[r].start_off;
		last = fn->f.start + (r + 1 < fn->f.nr_rows ?
				      fn->rows[r + 1].start_off :
				      fn->f.size) - 1;
		check_addr(c, start);
		if (last != start)
			check_addr(c, last);
		if (last - start > 1)
			check_addr(c, start + (last - start) / 2);
	}
	for (k = 0; k < RANDOM_PER_FUNC; k++)
		check_addr(c, fn->f.start + rnd_next(&c->rnd) % fn->f.size);
}

static int funcs_get(const struct sframe_jit_cfi *cfi, struct xc_func **out)
{
	uint32_t i, n = sframe_jit_cfi_nr_funcs(cfi);
	struct xc_func *fn = calloc(n ?: 1, sizeof(*fn));

	if (!fn)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (sframe_jit_cfi_func(cfi, i, &fn[i].f, &fn[i].rows)) {
			free(fn);
			return -EINVAL;
		}
	*out = fn;
	return 0;
}

/* Check the table of @cfi against libdw's own reading of @image. */
static int check_table(struct xc_ctx *c, const void *image, size_t size,
		       const struct sframe_jit_cfi *cfi)
{
	struct xc_func *fn;
	Elf *elf;
	uint32_t i;
	int err;

	err = funcs_get(cfi, &fn);
	if (err)
		return err;
	elf = elf_memory((char *)image, size);
	c->dw = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!c->dw) {
		err = -ENOEXEC;
		goto out;
	}
	c->funcs = fn;
	c->nr_funcs = sframe_jit_cfi_nr_funcs(cfi);
	for (i = 0; i < c->nr_funcs; i++) {
		check_shape(c, &fn[i], i ? &fn[i - 1] : NULL);
		check_func(c, &fn[i]);
	}
	dwarf_cfi_end(c->dw);
out:
	if (elf)
		elf_end(elf);
	free(fn);
	return err;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int map_file(const char *path, void **image, size_t *size)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !st.st_size) {
		close(fd);
		return -ENOEXEC;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	*image = p;
	*size = st.st_size;
	return 0;
}

int64_t xc_agent_ns(const char *path)
{
	struct sframe_jit_cfi *cfi;
	size_t size, out_size;
	int64_t ns;
	void *image, *out;
	uint64_t t0;
	int err;

	err = map_file(path, &image, &size);
	if (err)
		return err;
	t0 = now_ns();
	err = sframe_jit_cfi_convert_flags(image, size, SFRAME_JIT_CFI_F_PLT,
					   &cfi);
	if (err >= 0) {
		err = sframe_jit_cfi_encode(cfi, 0, &out, &out_size);
		ns = now_ns() - t0;
		if (!err)
			free(out);
		sframe_jit_cfi_free(cfi);
	}
	munmap(image, size);
	return err < 0 ? err : ns;
}

int xc_object(const char *path, struct xc_result *res, FILE *log,
	      unsigned int max_print)
{
	struct xc_ctx c = {
		.path = path, .res = res, .log = log, .max_print = max_print,
		.rnd = 0x9e3779b97f4a7c15ULL,
	};
	struct sframe_jit_cfi *cfi;
	uint64_t t0;
	size_t size;
	void *image;
	int err;

	memset(res, 0, sizeof(*res));
	res->stats.sz = sizeof(res->stats);
	regs_init(&c.rf[0], &c.rf[1]);
	err = map_file(path, &image, &size);
	if (err)
		return err;
	t0 = now_ns();
	err = sframe_jit_cfi_convert(image, size, &cfi);
	res->convert_ns = now_ns() - t0;
	if (err < 0)
		goto out;
	res->objects = 1;
	sframe_jit_cfi_get_stats(cfi, &res->stats);
	res->nr_funcs = sframe_jit_cfi_nr_funcs(cfi);
	err = check_table(&c, image, size, cfi);
	sframe_jit_cfi_free(cfi);
	if (!err)
		err = xc_paths(path, image, size, res, log, max_print);
out:
	munmap(image, size);
	return err < 0 ? err : 0;
}

void xc_add(struct xc_result *sum, const struct xc_result *one)
{
	unsigned int i;

	sum->objects += one->objects;
	sum->stats.nr_fdes += one->stats.nr_fdes;
	sum->stats.nr_converted += one->stats.nr_converted;
	for (i = 0; i < SFRAME_JIT_CFI_MAX_REASONS; i++)
		sum->stats.nr_unsupported[i] += one->stats.nr_unsupported[i];
	sum->stats.nr_rows += one->stats.nr_rows;
	sum->stats.row_bytes += one->stats.row_bytes;
	sum->nr_funcs += one->nr_funcs;
	sum->addrs += one->addrs;
	sum->mismatches += one->mismatches;
	sum->convert_ns += one->convert_ns;
	sum->fde_diffs += one->fde_diffs;
	sum->nr_by_libdw += one->nr_by_libdw;
	sum->libdw_ns += one->libdw_ns;
}

void xc_print(FILE *f, const char *what, const struct xc_result *res)
{
	const struct sframe_jit_cfi_stats *st = &res->stats;
	uint64_t left = 0;
	unsigned int i;

	for (i = 0; i < SFRAME_JIT_CFI_NR_REASONS; i++)
		left += st->nr_unsupported[i];
	fprintf(f, "%s: objects %llu fdes %llu converted %llu unsupported %llu (",
		what, (unsigned long long)res->objects,
		(unsigned long long)st->nr_fdes,
		(unsigned long long)st->nr_converted,
		(unsigned long long)left);
	for (i = 0; i < SFRAME_JIT_CFI_NR_REASONS; i++)
		fprintf(f, "%s%s %llu", i ? ", " : "",
			sframe_jit_cfi_reason_str(i),
			(unsigned long long)st->nr_unsupported[i]);
	fprintf(f, ") rows %llu row_bytes %llu addrs %llu mismatches %llu",
		(unsigned long long)st->nr_rows,
		(unsigned long long)st->row_bytes,
		(unsigned long long)res->addrs,
		(unsigned long long)res->mismatches);
	fprintf(f, " fde_diffs %llu by_libdw %llu convert_ms %.1f libdw_ms %.1f\n",
		(unsigned long long)res->fde_diffs,
		(unsigned long long)res->nr_by_libdw, res->convert_ns / 1e6,
		res->libdw_ns / 1e6);
}
