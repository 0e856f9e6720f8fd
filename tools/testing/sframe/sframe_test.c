// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace harness of the SFrame decoders of kernel/unwind, built
 * natively with ASan and UBSan, runs the cases of the KUnit suite
 * (kernel/unwind/sframe_test_cases.h), in sections, in their converted
 * tables (which must agree with them) and in registries, then lookups in
 * randomly mutated sections, their tables and registries, which must
 * stay in bounds, end, and only hit inside a function that contains the
 * PC, and lookups racing with a writer that follows the registry's seq
 * protocol.
 *
 *	sframe_test [-v] [-n ITERATIONS] [-s SEED]
 *
 * The last line printed is "N passed, N failed"; the exit status is 1 if
 * any case failed.  A sanitizer report aborts the run.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/sched.h>

#include "decoder.h"
#include "sframe_test_cases.h"
#include "table_alloc.h"

static unsigned int passed, failed;
static bool verbose;

static const char *const result_names[] = {
	[SFRAME_FIND_HIT] = "hit",
	[SFRAME_FIND_NONE] = "none",
	[SFRAME_FIND_TOMBSTONE] = "tombstone",
	[SFRAME_FIND_RETRY] = "retry",
	[SFRAME_FIND_MALFORMED] = "malformed",
};

static const char *result_name(enum sframe_find_result r)
{
	if ((unsigned int)r < ARRAY_SIZE(result_names))
		return result_names[r];
	return "(out of range)";
}

static void report(const char *suite, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!fmt) {
		passed++;
		if (verbose)
			printf("ok %s: %s\n", suite, name);
		return;
	}
	failed++;
	printf("FAIL %s: %s: ", suite, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void print_row(const char *what, const struct sframe_row *r)
{
	printf("  %s: base %s cfa %+d ra_undefined %d ra %+d fp_saved %d fp %+d signal %d\n",
	       what, r->cfa_base == SFRAME_CFA_BASE_SP ? "SP" : "FP",
	       r->cfa_off, r->ra_undefined, r->ra_off, r->fp_saved, r->fp_off,
	       r->signal);
}

/*
 * Check a lookup's result and row against a case: a row on a hit only,
 * otherwise the poison left as it was.
 */
static void check_lookup(const char *suite, const char *name,
			 enum sframe_find_result got,
			 enum sframe_find_result want,
			 const struct sframe_row *row,
			 const struct sframe_row *want_row,
			 const struct sframe_row *poison)
{
	if (got != want) {
		report(suite, name, "got %s, expected %s", result_name(got),
		       result_name(want));
		if (got == SFRAME_FIND_HIT)
			print_row("got", row);
		return;
	}
	if (got != SFRAME_FIND_HIT) {
		if (memcmp(row, poison, sizeof(*row)))
			report(suite, name, "row written without a hit");
		else
			report(suite, name, NULL);
		return;
	}
	if (!sframe_test_row_eq(row, want_row)) {
		report(suite, name, "wrong row");
		print_row("got", row);
		print_row("expected", want_row);
		return;
	}
	report(suite, name, NULL);
}

/*
 * The converted table of @sec, or NULL with *@err set: the caller frees
 * it with table_alloc_free().  A table whose rows name no rule, or that
 * keeps a rule twice, is -EUCLEAN.
 */
static struct sframe_table *table_of(const struct sframe_sec *sec, int *err)
{
	struct sframe_table *t;

	*err = table_alloc_new(sec, &t);
	if (!*err && sframe_test_table_rules(t)) {
		*err = -EUCLEAN;
		table_alloc_free(t);
		t = NULL;
	}
	return t;
}

/*
 * The lookup of @pc in @t must give what it gives in the section, within
 * SFRAME_TABLE_MAX_READS records.  Returns an error message or NULL.
 */
static const char *table_agrees(const struct sframe_table *t,
				const struct sframe_sec *sec, unsigned long pc)
{
	struct sframe_row want, got;
	enum sframe_find_result a, b;
	u32 reads;

	memset(&want, 0x5a, sizeof(want));
	memset(&got, 0x5a, sizeof(got));
	a = sframe_sec_find(sec, pc, &want);
	b = sframe_table_find_reads(t, pc, &got, &reads);
	if (a != b)
		return "the table's result differs from the section's";
	if (memcmp(&got, &want, sizeof(got)) &&
	    (b != SFRAME_FIND_HIT || !sframe_test_row_eq(&got, &want)))
		return "the table's row differs from the section's";
	if (reads > SFRAME_TABLE_MAX_READS)
		return "more reads than SFRAME_TABLE_MAX_READS";
	return NULL;
}

/* A validated case section, looked up in its converted table. */
static void run_table_case(const struct sframe_test_elf *c,
			   const struct sframe_sec *sec)
{
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_table *t;
	int err;

	t = table_of(sec, &err);
	if (!t) {
		report("table", c->name, "not converted: %d", err);
		return;
	}
	memset(&poison, 0x5a, sizeof(poison));
	row = poison;
	ret = sframe_table_find(t, c->pc, &row);
	check_lookup("table", c->name, ret, c->result, &row, &c->row, &poison);
	table_alloc_free(t);
}

static void run_elf_case(const struct sframe_test_elf *c)
{
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_sec sec;
	u8 *buf;
	int err;

	/* Exactly the section's size, so that ASan sees any overread. */
	buf = malloc(c->size);
	if (!buf || !sframe_test_elf_bytes(c, buf)) {
		report("elf", c->name, "bad case");
		free(buf);
		return;
	}
	err = sframe_sec_init(&sec, buf, c->size, SFT_BASE);
	if (err != c->init) {
		report("elf", c->name, "sframe_sec_init() %d, expected %d", err,
		       c->init);
	} else if (!err) {
		memset(&poison, 0x5a, sizeof(poison));
		row = poison;
		ret = sframe_sec_find(&sec, c->pc, &row);
		check_lookup("elf", c->name, ret, c->result, &row, &c->row,
			     &poison);
		if (!sframe_sec_validate(&sec))
			run_table_case(c, &sec);
	} else {
		report("elf", c->name, NULL);
	}
	free(buf);
}

/*
 * A section over or at the caps of a converted table: sframe_table_size()
 * must say what the case says, and a table it allows must agree with the
 * section around the function's edges and rows.
 */
static void run_many_case(const struct sframe_test_many *c)
{
	size_t size = sframe_test_many_size(c);
	unsigned long f = SFT_MANY_FUNC, pcs[8];
	u32 fsize = sft_many_func_size(c);
	const char *msg = NULL;
	struct sframe_table *t;
	struct sframe_sec sec;
	unsigned int i;
	int err;
	u8 *buf;

	buf = malloc(size);
	if (!buf) {
		report("caps", c->name, "out of memory");
		return;
	}
	sframe_test_many_fill(c, buf);
	if (sframe_sec_init(&sec, buf, size, SFT_BASE) ||
	    sframe_sec_validate(&sec)) {
		report("caps", c->name, "the section does not validate");
		free(buf);
		return;
	}
	t = table_of(&sec, &err);
	if (err != c->size) {
		report("caps", c->name, "conversion %d, expected %d", err,
		       c->size);
	} else if (t) {
		pcs[0] = f - 1;
		pcs[1] = f;
		pcs[2] = f + 1;
		pcs[3] = f + fsize / 2;
		pcs[4] = f + fsize - 2;
		pcs[5] = f + fsize - 1;
		pcs[6] = f + fsize;
		pcs[7] = f + 0x4b;
		for (i = 0; i < ARRAY_SIZE(pcs) && !msg; i++)
			msg = table_agrees(t, &sec, pcs[i]);
		/* Rows that share rules: every PC. */
		for (i = 0; c->rules && i <= fsize + 1 && !msg; i++)
			msg = table_agrees(t, &sec, f - 1 + i);
		if (!msg && t->nr_rules != sft_many_rules(c))
			msg = "the table keeps another number of rules";
		report("caps", c->name, msg);
	} else {
		report("caps", c->name, NULL);
	}
	table_alloc_free(t);
	free(buf);
}

/*
 * Validation walks every row of every version.  Each case below names a
 * case of sframe_test_elf_cases; its section, patched as the case says,
 * must validate as the entry says.
 */
static const struct {
	const char *name;
	int validate;
} validate_cases[] = {
	{ "v3: regular descriptor", 0 },
	{ "v1: f0 up to f1's start, back to back", 0 },
	{ "v1: f0 overlapping f1, which validation refuses", -ENOEXEC },
	{ "v3 flexible: four-word base section", 0 },
	{ "v3: a row out of order leaves the rows before it", -ENOEXEC },
	{ "v3: a bad first row makes the whole function malformed",
	  -ENOEXEC },
};

static void run_validate_case(const char *name, int want)
{
	const struct sframe_test_elf *c = NULL;
	struct sframe_sec sec;
	size_t i;
	int err;
	u8 *buf;

	for (i = 0; i < ARRAY_SIZE(sframe_test_elf_cases) && !c; i++)
		if (!strcmp(sframe_test_elf_cases[i].name, name))
			c = &sframe_test_elf_cases[i];
	buf = c ? malloc(c->size) : NULL;
	if (!buf || !sframe_test_elf_bytes(c, buf)) {
		report("validate", name, "no such case");
		free(buf);
		return;
	}
	err = sframe_sec_init(&sec, buf, c->size, SFT_BASE);
	if (!err)
		err = sframe_sec_validate(&sec);
	report("validate", name, err == want ? NULL :
	       "sframe_sec_validate() %d, expected %d", err, want);
	free(buf);
}

/*
 * A section of 2^16 rows or more lets the scheduler in while it is
 * validated and again while it is converted (the shim counts the calls
 * to cond_resched()).
 */
static void run_resched_case(void)
{
	const struct sframe_test_many *c = &sframe_test_many_cases[0];
	size_t size = sframe_test_many_size(c);
	unsigned long before, validated;
	struct sframe_table *t;
	struct sframe_sec sec;
	u8 *buf = malloc(size);
	int err = -ENOMEM;

	if (buf) {
		sframe_test_many_fill(c, buf);
		err = sframe_sec_init(&sec, buf, size, SFT_BASE);
	}
	before = sframe_shim_resched_calls;
	if (!err)
		err = sframe_sec_validate(&sec);
	validated = sframe_shim_resched_calls;
	t = err ? NULL : table_of(&sec, &err);
	if (err)
		report("resched", c->name, "the section failed: %d", err);
	else if (validated == before)
		report("resched", c->name, "validation never rescheduled");
	else if (sframe_shim_resched_calls == validated)
		report("resched", c->name, "conversion never rescheduled");
	else
		report("resched", c->name, NULL);
	table_alloc_free(t);
	free(buf);
}

/*
 * A section of two functions of @per rows each, every row with a rule of
 * its own (CFA = SP + 8 + 8 * i over both), 2-byte starts and 4-byte
 * words; the caller frees it.
 */
static u8 *rules_section(u32 per, size_t *size)
{
	u32 nr = 2 * per, i;
	u8 *buf, *p;

	*size = SFRAME_HDR_SIZE + 2 * SFRAME_V2_FDE_SIZE + (size_t)nr * 7;
	buf = malloc(*size);
	if (!buf)
		return NULL;
	p = sft_put(buf, SFRAME_MAGIC, 2);
	p = sft_put(p, 2, 1);
	p = sft_put(p, SFRAME_F_FDE_SORTED, 1);
	p = sft_put(p, SFRAME_ABI_AMD64_ENDIAN_LITTLE, 1);
	p = sft_put(p, 0, 1);
	p = sft_put(p, 0xf8, 1);			/* RA at CFA - 8 */
	p = sft_put(p, 0, 1);
	p = sft_put(p, 2, 4);				/* descriptors */
	p = sft_put(p, nr, 4);				/* rows */
	p = sft_put(p, (u64)nr * 7, 4);
	p = sft_put(p, 0, 4);
	p = sft_put(p, 2 * SFRAME_V2_FDE_SIZE, 4);
	for (i = 0; i < 2; i++) {
		p = sft_put(p, SFT_MANY_FUNC - SFT_BASE + i * per, 4);
		p = sft_put(p, per, 4);
		p = sft_put(p, (u64)i * per * 7, 4);
		p = sft_put(p, per, 4);
		p = sft_put(p, 1, 1);			/* 2-byte starts */
		p = sft_put(p, 0, 3);
	}
	for (i = 0; i < nr; i++) {
		p = sft_put(p, i % per, 2);
		p = sft_put(p, 0x43, 1);		/* SP, one 4-byte word */
		p = sft_put(p, 8 + 8 * (u64)i, 4);
	}
	return buf;
}

/*
 * A table keeps at most SFRAME_TABLE_MAX_RULES distinct rules, which
 * bounds the scratch buffer of its build: a section of that many
 * converts, keeping each, one of more is refused with -E2BIG.
 */
static void run_rules_cap_case(const char *name, u32 per, int want)
{
	struct sframe_table *t = NULL;
	struct sframe_sec sec;
	const char *msg = NULL;
	size_t size;
	int err;
	u8 *buf;

	buf = rules_section(per, &size);
	if (!buf) {
		report("caps", name, "out of memory");
		return;
	}
	err = sframe_sec_init(&sec, buf, size, SFT_BASE);
	if (!err)
		err = sframe_sec_validate(&sec);
	if (!err)
		t = table_of(&sec, &err);
	if (err != want)
		msg = "unexpected result";
	else if (t && t->nr_rules != 2 * per)
		msg = "the table keeps another number of rules";
	else if (t)
		msg = table_agrees(t, &sec, SFT_MANY_FUNC + 2 * per - 1);
	if (msg)
		report("caps", name, "%s (%d, expected %d)", msg, err, want);
	else
		report("caps", name, NULL);
	table_alloc_free(t);
	free(buf);
}

static void run_jit_case(const struct sframe_test_jit *c)
{
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_jit_view v;
	void *buf;

	if (c->nr_fdes > c->fde_cap || c->nr_fres > c->fre_cap) {
		report("jit", c->name, "bad case");
		return;
	}
	buf = malloc(sframe_test_jit_size(c));
	if (!buf) {
		report("jit", c->name, "out of memory");
		return;
	}
	sframe_test_jit_fill(buf, c, &v);
	memset(&poison, 0x5a, sizeof(poison));
	row = poison;
	ret = sframe_jit_find(&v, c->pc, &row);
	check_lookup("jit", c->name, ret, c->result, &row, &c->row, &poison);
	free(buf);
}

static void run_cjit_case(const struct sframe_test_cjit *c)
{
	struct sframe_row row, poison;
	enum sframe_find_result ret;
	struct sframe_jit_view v;
	void *buf;

	if (c->nr_fdes > c->fde_cap || c->nr_fres > c->fre_cap ||
	    c->nr_rules > c->rule_cap) {
		report("cjit", c->name, "bad case");
		return;
	}
	buf = malloc(sframe_test_cjit_size(c));
	if (!buf) {
		report("cjit", c->name, "out of memory");
		return;
	}
	sframe_test_cjit_fill(buf, c, &v);
	memset(&poison, 0x5a, sizeof(poison));
	row = poison;
	ret = sframe_jit_find(&v, c->pc, &row);
	check_lookup("cjit", c->name, ret, c->result, &row, &c->row, &poison);
	free(buf);
}

static void run_apply_case(const struct sframe_test_apply *c)
{
	struct sframe_step step = {};
	int ret;

	ret = sframe_row_apply(&c->row, c->sp, c->fp, &step);
	if (ret != c->ret)
		report("apply", c->name, "returned %d, expected %d", ret,
		       c->ret);
	else if (!ret && (step.cfa != c->step.cfa ||
			  step.ra_addr != c->step.ra_addr ||
			  step.fp_saved != c->step.fp_saved ||
			  step.fp_addr != c->step.fp_addr))
		report("apply", c->name,
		       "cfa %#lx ra at %#lx fp %s at %#lx, expected cfa %#lx ra at %#lx fp %s at %#lx",
		       step.cfa, step.ra_addr, step.fp_saved ? "saved" : "kept",
		       step.fp_addr, c->step.cfa, c->step.ra_addr,
		       c->step.fp_saved ? "saved" : "kept", c->step.fp_addr);
	else
		report("apply", c->name, NULL);
}

/* xorshift64: deterministic for a seed, good enough to mutate bytes. */
static u64 rng_state;

static u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static u64 rng_below(u64 n)
{
	return n ? rng() % n : 0;
}

/* A value worth trying in a field: boundaries more often than not. */
static u64 rng_value(void)
{
	static const u64 special[] = {
		0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL, ~0ULL,
	};

	if (rng() & 1)
		return special[rng_below(ARRAY_SIZE(special))];
	return rng();
}

/*
 * After a hit, some function of the section must contain @pc: the
 * lookup never answers from outside the function it found.
 */
static bool elf_pc_in_a_function(const struct sframe_sec *sec,
				 unsigned long pc)
{
	struct sframe_func fn;
	u32 i;

	for (i = 0; i < sec->num_fdes; i++) {
		if (sframe_sec_func(sec, i, &fn))
			continue;
		if (pc >= fn.start && pc - fn.start < fn.size)
			return true;
	}
	return false;
}

static bool row_sane(const struct sframe_row *row)
{
	if (row->ra_undefined)
		return !row->cfa_off && !row->ra_off && !row->fp_saved &&
		       !row->fp_off && row->cfa_base == SFRAME_CFA_BASE_SP;
	return row->cfa_base == SFRAME_CFA_BASE_SP ||
	       row->cfa_base == SFRAME_CFA_BASE_FP;
}

/*
 * Mutate the well-formed ELF test sections: change a few bytes, maybe
 * cut the section short, then validate it and look PCs up in it.
 */
static void fuzz_elf(unsigned long iterations)
{
	unsigned long it, pc, bad = 0, bad_table = 0, tables = 0;
	const struct sframe_test_elf *c;
	enum sframe_find_result ret;
	struct sframe_table *t;
	struct sframe_sec sec;
	struct sframe_row row;
	size_t size, i, n;
	int err;
	u8 *buf;

	for (it = 0; it < iterations; it++) {
		c = &sframe_test_elf_cases[rng_below(ARRAY_SIZE(sframe_test_elf_cases))];
		if (c->init)
			continue;
		size = c->size;
		if (!(rng() & 15))
			size = rng_below(size + 1);
		buf = malloc(size ? size : 1);
		if (!buf)
			break;
		memcpy(buf, c->data, size);
		for (n = 1 + rng_below(4); n && size; n--) {
			i = rng_below(size);
			buf[i] = rng() & 1 ? rng() : (u8)rng_value();
		}
		if (!sframe_sec_init(&sec, buf, size, SFT_BASE)) {
			t = sframe_sec_validate(&sec) ? NULL : table_of(&sec, &err);
			for (n = 0; n < 4; n++) {
				pc = n ? SFT_BASE + rng_below(0x30000) : c->pc;
				ret = sframe_sec_find(&sec, pc, &row);
				if (ret > SFRAME_FIND_MALFORMED ||
				    ret == SFRAME_FIND_TOMBSTONE ||
				    ret == SFRAME_FIND_RETRY ||
				    (ret == SFRAME_FIND_HIT &&
				     (!row_sane(&row) ||
				      !elf_pc_in_a_function(&sec, pc))))
					bad++;
				if (t && table_agrees(t, &sec, pc))
					bad_table++;
			}
			tables += !!t;
			table_alloc_free(t);
		}
		free(buf);
	}
	if (bad)
		report("mutation", "ELF sections", "%lu lookups went wrong", bad);
	else
		report("mutation", "ELF sections", NULL);
	if (bad_table)
		report("mutation", "ELF tables",
		       "%lu lookups differ from the section's", bad_table);
	else if (!tables)
		report("mutation", "ELF tables", "none converted");
	else
		report("mutation", "ELF tables", NULL);
}

/* Is @pc inside a live published descriptor of the registry @v? */
static bool jit_pc_in_a_function(const struct sframe_jit_view *v,
				 unsigned long pc)
{
	const struct sframe_jit_header *hdr = v->base;
	const struct sframe_jit_fde *fde;
	u32 i, count = min(hdr->fde_count, v->fde_cap);

	fde = (const void *)((const u8 *)v->base + v->fde_off);
	for (i = 0; i < count; i++, fde++)
		if (!fde->flags && pc >= fde->func_start &&
		    pc - fde->func_start < fde->func_size &&
		    fde->func_start >= v->text_start &&
		    fde->func_start + fde->func_size <= v->text_end)
			return true;
	return false;
}

/* Overwrite one field of a descriptor or a row with a value worth trying. */
static void mutate_jit(struct sframe_jit_view *v)
{
	struct sframe_jit_fde *fde;
	struct sframe_jit_fre *fre;
	u64 val = rng_value();

	fde = (void *)((u8 *)v->base + v->fde_off);
	fde += rng_below(v->fde_cap);
	fre = (void *)((u8 *)v->base + v->fre_off);
	fre += rng_below(v->fre_cap);
	switch (rng_below(13)) {
	case 0:
		fde->func_start = rng() & 1 ? SFT_TEXT + rng_below(0x5000) : val;
		break;
	case 1:
		fde->func_size = val;
		break;
	case 2:
		fde->fre_start = rng() & 1 ? rng_below(20) : val;
		break;
	case 3:
		fde->fre_count = rng() & 1 ? rng_below(20) : val;
		break;
	case 4:
		fde->flags = rng_below(4);
		break;
	case 5:
		fde->type = rng_below(3);
		break;
	case 6:
		fde->rep_size = val;
		break;
	case 7:
		fre->start_off = rng() & 1 ? rng_below(0x20) : val;
		break;
	case 8:
		fre->cfa_off = val;
		break;
	case 9:
		fre->ra_off = val;
		break;
	case 10:
		fre->fp_off = val;
		break;
	case 11:
		fre->cfa_base = rng_below(3);
		break;
	default:
		fre->flags = rng_below(8);
		break;
	}
}

/*
 * Mutate the standard test registry field by field, with counts above
 * the capacity among the published counts tried.
 */
static void fuzz_jit(unsigned long iterations)
{
	const struct sframe_test_jit *c = &sframe_test_jit_cases[0];
	struct sframe_jit_header *hdr;
	enum sframe_find_result ret;
	struct sframe_jit_view v;
	unsigned long it, pc, bad = 0;
	struct sframe_row row;
	unsigned int n;
	void *buf;

	buf = malloc(sframe_test_jit_size(c));
	if (!buf)
		return;
	for (it = 0; it < iterations; it++) {
		sframe_test_jit_fill(buf, c, &v);
		hdr = buf;
		for (n = 1 + rng_below(3); n; n--)
			mutate_jit(&v);
		if (!(rng() & 7))
			hdr->fde_count = rng_value();
		hdr->seq = rng_below(4) * 2;
		for (n = 0; n < 4; n++) {
			pc = SFT_TEXT - 0x100 + rng_below(0x5200);
			ret = sframe_jit_find(&v, pc, &row);
			if (ret > SFRAME_FIND_MALFORMED ||
			    ret == SFRAME_FIND_RETRY ||
			    (ret == SFRAME_FIND_HIT &&
			     (!row_sane(&row) || !jit_pc_in_a_function(&v, pc))))
				bad++;
		}
	}
	free(buf);
	if (bad)
		report("mutation", "JIT registries", "%lu lookups went wrong",
		       bad);
	else
		report("mutation", "JIT registries", NULL);
}

/*
 * A writer rewrites F0's descriptor in place between two states, under
 * seq as Documentation/userspace-api/sframe.rst tells a JIT to, while
 * the reader looks F0 + 4 up.  Each lookup must see state A's row, state
 * B's row, or retry: never a mix of the two, which gives another row or
 * a malformed one.
 */
static const struct sframe_jit_fre race_fres[] = {
	/* 0-3: state A, F0's rows of sft_jit_fres */
	{ .start_off = 0, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	{ .start_off = 1, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_FRE_FP_SAVED },
	{ .start_off = 4, .cfa_base = SFRAME_JIT_CFA_FP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_FRE_FP_SAVED },
	{ .start_off = 10, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	/* 4-7: zero: read as rows, they are malformed */
	{}, {}, {}, {},
	/* 8-9: state B */
	{ .start_off = 0, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 40,
	  .ra_off = -8 },
	{ .start_off = 2, .cfa_base = SFRAME_JIT_CFA_FP, .cfa_off = 48,
	  .ra_off = -8 },
};

struct race {
	struct sframe_jit_header *hdr;
	struct sframe_jit_fde *fde;
	unsigned long hits;	/* whole states the reader has found */
	bool stop;
};

/*
 * Hold the state just written until the reader finds it whole.  On a
 * loaded machine the writer could otherwise rewrite so steadily that
 * one state is never seen at all, which proves nothing about torn reads.
 */
static void race_park(struct race *r)
{
	unsigned long hits = __atomic_load_n(&r->hits, __ATOMIC_RELAXED);

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED) &&
	       __atomic_load_n(&r->hits, __ATOMIC_RELAXED) == hits)
		sched_yield();
}

static void *race_writer(void *arg)
{
	struct race *r = arg;
	unsigned int n = 0;
	bool b = false;
	u32 seq = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		b = !b;
		__atomic_store_n(&r->hdr->seq, ++seq, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&r->fde->fre_start, b ? 8 : 0,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&r->fde->fre_count, b ? 2 : 4,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&r->hdr->seq, ++seq, __ATOMIC_RELEASE);
		/* Every 1001st state, odd so that it is A and B in turn. */
		if (++n % 1001 == 0)
			race_park(r);
	}
	return NULL;
}

static void race_jit(unsigned long iterations)
{
	const struct sframe_row a = {
		.cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = 16, .ra_off = -8,
		.fp_saved = true, .fp_off = -16,
	};
	const struct sframe_row b = {
		.cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = 48, .ra_off = -8,
	};
	const struct sframe_test_jit c = {
		.fdes = sft_jit_fdes, .nr_fdes = 1, .fres = race_fres,
		.nr_fres = ARRAY_SIZE(race_fres), .fde_cap = 1, .fre_cap = 16,
		.fde_count = 1,
	};
	unsigned long it, seen_a = 0, seen_b = 0, retries = 0, bad = 0;
	enum sframe_find_result ret;
	struct sframe_jit_view v;
	struct sframe_row row;
	struct race r = {};
	pthread_t writer;
	void *buf;

	buf = malloc(sframe_test_jit_size(&c));
	if (!buf)
		return;
	sframe_test_jit_fill(buf, &c, &v);
	r.hdr = buf;
	r.fde = (void *)((u8 *)buf + v.fde_off);
	if (pthread_create(&writer, NULL, race_writer, &r)) {
		report("race", "seq protocol", "no thread");
		free(buf);
		return;
	}
	/* Wait for the writer's first rewrite. */
	while (__atomic_load_n(&r.hdr->seq, __ATOMIC_ACQUIRE) < 2)
		;
	for (it = 0; it < iterations; it++) {
		ret = sframe_jit_find(&v, SFT_F0 + 4, &row);
		if (ret == SFRAME_FIND_RETRY)
			retries++;
		else if (ret == SFRAME_FIND_HIT && sframe_test_row_eq(&row, &a))
			seen_a++;
		else if (ret == SFRAME_FIND_HIT && sframe_test_row_eq(&row, &b))
			seen_b++;
		else
			bad++;
		if (ret == SFRAME_FIND_HIT)
			__atomic_fetch_add(&r.hits, 1, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&r.stop, true, __ATOMIC_RELAXED);
	pthread_join(writer, NULL);
	free(buf);
	if (verbose)
		printf("race: %lu A, %lu B, %lu retries\n", seen_a, seen_b,
		       retries);
	if (bad)
		report("race", "seq protocol", "%lu torn lookups", bad);
	else if (!seen_a || !seen_b)
		report("race", "seq protocol", "a state never seen whole");
	else
		report("race", "seq protocol", NULL);
}

int main(int argc, char **argv)
{
	unsigned long iterations = 200000;
	size_t i;
	int opt;

	rng_state = 0x5f3759df2b992ddfULL;
	while ((opt = getopt(argc, argv, "vn:s:")) != -1) {
		switch (opt) {
		case 'v':
			verbose = true;
			break;
		case 'n':
			iterations = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0) ?: 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-v] [-n ITERATIONS] [-s SEED]\n",
				argv[0]);
			return 2;
		}
	}

	for (i = 0; i < ARRAY_SIZE(sframe_test_elf_cases); i++)
		run_elf_case(&sframe_test_elf_cases[i]);
	for (i = 0; i < ARRAY_SIZE(sframe_test_many_cases); i++)
		run_many_case(&sframe_test_many_cases[i]);
	for (i = 0; i < ARRAY_SIZE(validate_cases); i++)
		run_validate_case(validate_cases[i].name,
				  validate_cases[i].validate);
	run_resched_case();
	run_rules_cap_case("65536 distinct rules: converted",
			   SFRAME_TABLE_MAX_RULES / 2, 0);
	run_rules_cap_case("65538 distinct rules: refused",
			   SFRAME_TABLE_MAX_RULES / 2 + 1, -E2BIG);
	for (i = 0; i < ARRAY_SIZE(sframe_test_jit_cases); i++)
		run_jit_case(&sframe_test_jit_cases[i]);
	for (i = 0; i < ARRAY_SIZE(sframe_test_cjit_cases); i++)
		run_cjit_case(&sframe_test_cjit_cases[i]);
	for (i = 0; i < ARRAY_SIZE(sframe_test_apply_cases); i++)
		run_apply_case(&sframe_test_apply_cases[i]);
	fuzz_elf(iterations);
	fuzz_jit(iterations);
	race_jit(iterations);

	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
