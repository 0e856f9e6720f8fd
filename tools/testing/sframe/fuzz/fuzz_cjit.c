// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: sframe_jit_find() on a compact JIT registry
 * (SFRAME_JIT_F_COMPACT), against the version 1 registry that means the
 * same thing.
 *
 * The input gives the capacities, the length of the text range, the
 * published count, seq and reserved0, then the compact descriptor, row
 * and rule areas byte for byte, garbage allowed.  The target writes the
 * version 1 registry with the same content: each descriptor's start is
 * text_start + func_off, its PCMASK flag is the PCMASK type and a bit
 * unknown to compact descriptors is one unknown to version 1 ones; each
 * row carries its rule's fields, or, where its rule index is at or past
 * the capacity, a reserved field that is not zero: both make the row
 * malformed.  fuzz_jit checks version 1 lookups against the rules of
 * <uapi/linux/sframe_jit.h>; here, lookups at PCs around every descriptor
 * and row must give the same result and row in both registries.
 *
 * The compact areas are apart, with poisoned gaps between them and the
 * rules last, so that a lookup that reads past an area's capacity is an
 * ASan report.
 */
#include <sanitizer/asan_interface.h>

#include <uapi/linux/sframe_jit.h>

#include "fuzz.h"

#define TEXT_START	0x7f0000000000UL
#define GAP		64	/* poisoned bytes between the areas */
#define MAX_PCS		512

static struct {
	struct sframe_jit_view cv, v1;
	u8 *cmem, *mem;
	size_t csize, size;
	unsigned long pcs[MAX_PCS];
	unsigned int nr_pcs;
} g;

/* Nothing writes the registries during a lookup here. */
void sframe_fuzz_shared_read(void)
{
}

static struct sframe_jit_cfde *cfde_at(u32 i)
{
	return (struct sframe_jit_cfde *)(g.cmem + g.cv.fde_off) + i;
}

static struct sframe_jit_cfre *cfre_at(u32 i)
{
	return (struct sframe_jit_cfre *)(g.cmem + g.cv.fre_off) + i;
}

static struct sframe_jit_rule *rule_at(u32 i)
{
	return (struct sframe_jit_rule *)(g.cmem + g.cv.rule_off) + i;
}

/* The compact registry: header | gap | descriptors | gap | rows | gap | rules. */
static void compact_layout(u32 fde_cap, u32 fre_cap, u32 rule_cap)
{
	size_t fde_off = sizeof(struct sframe_jit_header) + GAP;
	size_t fre_off = fde_off + fde_cap * sizeof(struct sframe_jit_cfde) + GAP;
	size_t rule_off = fre_off + fre_cap * sizeof(struct sframe_jit_cfre) + GAP;

	g.csize = rule_off + rule_cap * sizeof(struct sframe_jit_rule);
	g.cmem = calloc(1, g.csize);
	g.cv = (struct sframe_jit_view){
		.base = g.cmem, .compact = true,
		.fde_off = fde_off, .fde_cap = fde_cap,
		.fre_off = fre_off, .fre_cap = fre_cap,
		.rule_off = rule_off, .rule_cap = rule_cap,
	};
}

static void compact_poison(void)
{
	ASAN_POISON_MEMORY_REGION(g.cmem + g.cv.fde_off - GAP, GAP);
	ASAN_POISON_MEMORY_REGION(g.cmem + g.cv.fre_off - GAP, GAP);
	ASAN_POISON_MEMORY_REGION(g.cmem + g.cv.rule_off - GAP, GAP);
}

static void compact_free(void)
{
	ASAN_UNPOISON_MEMORY_REGION(g.cmem, g.csize);
	free(g.cmem);
}

static void fill_bytes(struct fuzz_in *in, void *dst, size_t n)
{
	u8 *p = dst;

	while (n--)
		*p++ = fin_u8(in);
}

/* Header fields and areas from the input. */
static void compact_read(struct fuzz_in *in)
{
	struct sframe_jit_header *h = (void *)g.cmem;

	h->fde_count = fin_u8(in);
	h->seq = fin_u8(in) & 3;
	h->reserved0 = fin_u8(in) == 0xff;
	fill_bytes(in, cfde_at(0), g.cv.fde_cap * sizeof(struct sframe_jit_cfde));
	fill_bytes(in, cfre_at(0), g.cv.fre_cap * sizeof(struct sframe_jit_cfre));
	fill_bytes(in, rule_at(0), g.cv.rule_cap * sizeof(struct sframe_jit_rule));
}

static struct sframe_jit_fde *fde_at(u32 i)
{
	return (struct sframe_jit_fde *)(g.mem + g.v1.fde_off) + i;
}

static struct sframe_jit_fre *fre_at(u32 i)
{
	return (struct sframe_jit_fre *)(g.mem + g.v1.fre_off) + i;
}

static void v1_fde(u32 i)
{
	const struct sframe_jit_cfde *c = cfde_at(i);
	struct sframe_jit_fde *f = fde_at(i);
	u8 known = SFRAME_JIT_FDE_TOMBSTONE | SFRAME_JIT_CFDE_PCMASK;

	f->func_start = TEXT_START + c->func_off;
	f->func_size = c->func_size;
	f->fre_start = c->fre_start;
	f->fre_count = c->fre_count;
	f->flags = c->flags & SFRAME_JIT_FDE_TOMBSTONE;
	if (c->flags & ~known)
		f->flags |= 0x8000;
	f->type = c->flags & SFRAME_JIT_CFDE_PCMASK ? SFRAME_JIT_FDE_PCMASK :
						      SFRAME_JIT_FDE_PCINC;
	f->rep_size = c->rep_size;
}

static void v1_fre(u32 i)
{
	const struct sframe_jit_cfre *c = cfre_at(i);
	struct sframe_jit_fre *f = fre_at(i);
	const struct sframe_jit_rule *r;

	f->start_off = c->start_off;
	if (c->rule >= g.cv.rule_cap) {
		f->reserved = 1;
		return;
	}
	r = rule_at(c->rule);
	f->cfa_off = r->cfa_off;
	f->ra_off = r->ra_off;
	f->fp_off = r->fp_off;
	f->cfa_base = r->cfa_base;
	f->flags = r->flags;
	f->reserved = r->reserved;
}

/* The version 1 registry: header | descriptors | rows. */
static void v1_build(void)
{
	const struct sframe_jit_header *ch = (const void *)g.cmem;
	struct sframe_jit_header *h;
	u32 i;

	g.v1 = g.cv;
	g.v1.compact = false;
	g.v1.rule_off = 0;
	g.v1.rule_cap = 0;
	g.v1.fde_off = sizeof(*h);
	g.v1.fre_off = g.v1.fde_off + g.v1.fde_cap * sizeof(struct sframe_jit_fde);
	g.size = g.v1.fre_off + g.v1.fre_cap * sizeof(struct sframe_jit_fre);
	g.mem = calloc(1, g.size);
	g.v1.base = g.mem;
	h = (void *)g.mem;
	h->fde_count = ch->fde_count;
	h->seq = ch->seq;
	h->reserved0 = ch->reserved0;
	for (i = 0; i < g.v1.fde_cap; i++)
		v1_fde(i);
	for (i = 0; i < g.v1.fre_cap; i++)
		v1_fre(i);
}

static void add_pc(u64 off)
{
	if (off < g.cv.text_end - g.cv.text_start && g.nr_pcs < MAX_PCS)
		g.pcs[g.nr_pcs++] = g.cv.text_start + off;
}

/* PCs at and around every function's edges and every row's start. */
static void pick_pcs(struct fuzz_in *in)
{
	u32 i, j;

	g.nr_pcs = 0;
	add_pc(0);
	add_pc(g.cv.text_end - g.cv.text_start - 1);
	for (i = 0; i < 8; i++)
		add_pc(fin_u32(in));
	for (i = 0; i < g.cv.fde_cap; i++) {
		const struct sframe_jit_cfde *c = cfde_at(i);
		u64 start = c->func_off, end = start + c->func_size;

		add_pc(start);
		add_pc(start + 1);
		add_pc(start - 1);
		add_pc(end - 1);
		add_pc(end);
		add_pc(start + c->func_size / 2);
		for (j = 0; j < c->fre_count && j < 4; j++) {
			if (c->fre_start + j >= g.cv.fre_cap)
				break;
			add_pc(start + cfre_at(c->fre_start + j)->start_off);
			add_pc(start + cfre_at(c->fre_start + j)->start_off - 1);
		}
	}
}

static void compare_at(unsigned long pc)
{
	struct sframe_row crow, row;
	enum sframe_find_result cret, ret;

	memset(&crow, 0x5a, sizeof(crow));
	memset(&row, 0x5a, sizeof(row));
	cret = sframe_jit_find(&g.cv, pc, &crow);
	ret = sframe_jit_find(&g.v1, pc, &row);
	FUZZ_CHECK(cret == ret, "pc text+%#lx: compact %d, version 1 %d",
		   pc - g.cv.text_start, cret, ret);
	FUZZ_CHECK(!memcmp(&crow, &row, sizeof(row)),
		   "pc text+%#lx: the rows differ", pc - g.cv.text_start);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	u32 fde_cap = 1 + fin_u8(&in) % 16;
	u32 fre_cap = 1 + fin_u8(&in) % 64;
	u32 rule_cap = 1 + fin_u8(&in) % 16;
	/* 1 to 2^32 bytes: every length a compact registry allows. */
	u64 len = (u64)fin_u32(&in) + 1;
	unsigned int i;

	compact_layout(fde_cap, fre_cap, rule_cap);
	g.cv.text_start = TEXT_START;
	g.cv.text_end = TEXT_START + len;
	compact_read(&in);
	v1_build();
	pick_pcs(&in);
	compact_poison();
	for (i = 0; i < g.nr_pcs; i++)
		compare_at(g.pcs[i]);
	compact_free();
	free(g.mem);
	return 0;
}
