// SPDX-License-Identifier: GPL-2.0
/*
 * The FDE ranges of .eh_frame sections (eh_frame.c), built here byte by
 * byte: each pointer encoding of an FDE's address and range, the
 * augmentations that lead to it, and entries that are cut short or
 * point at no CIE.
 */
#include <dwarf.h>
#include <string.h>

#include "test.h"

struct eh_buf {
	unsigned char b[512];
	size_t n;
	size_t entry;	/* start of the open entry */
};

static void eh_put(struct eh_buf *e, uint64_t v, unsigned int bytes)
{
	unsigned int i;

	ASSERT(e->n + bytes <= sizeof(e->b));
	for (i = 0; i < bytes; i++)
		e->b[e->n++] = v >> (8 * i);
}

static void eh_uleb(struct eh_buf *e, uint64_t v)
{
	do {
		eh_put(e, (v & 0x7f) | (v > 0x7f ? 0x80 : 0), 1);
		v >>= 7;
	} while (v);
}

static void eh_open(struct eh_buf *e, uint32_t id)
{
	e->entry = e->n;
	eh_put(e, 0, 4);	/* length, set by eh_close() */
	eh_put(e, id, 4);
}

/* Pad with DW_CFA_nop to 8 bytes and set the entry's length. */
static void eh_close(struct eh_buf *e)
{
	uint32_t len;

	while ((e->n - e->entry) % 8)
		eh_put(e, 0, 1);
	len = e->n - e->entry - 4;
	memcpy(e->b + e->entry, &len, 4);
}

/*
 * A CIE with augmentation @aug (NULL for none); @augdata its data,
 * @augsz bytes.  Code alignment 1, data alignment -8, RA column 16, and
 * the x86-64 initial rules: CFA = %rsp + 8, RA at CFA - 8.
 */
static size_t eh_cie(struct eh_buf *e, const char *aug,
		     const unsigned char *augdata, size_t augsz)
{
	size_t off = e->n, i;

	eh_open(e, 0);
	eh_put(e, 1, 1);
	for (i = 0; aug && aug[i]; i++)
		eh_put(e, aug[i], 1);
	eh_put(e, 0, 1);
	eh_uleb(e, 1);
	eh_put(e, 0x78, 1);	/* sleb128 -8 */
	eh_put(e, 16, 1);
	if (aug && aug[0] == 'z') {
		eh_uleb(e, augsz);
		for (i = 0; i < augsz; i++)
			eh_put(e, augdata[i], 1);
	}
	eh_put(e, DW_CFA_def_cfa, 1);
	eh_uleb(e, 7);
	eh_uleb(e, 8);
	eh_put(e, DW_CFA_offset + 16, 1);
	eh_uleb(e, 1);
	eh_close(e);
	return off;
}

/*
 * An FDE of the CIE at @cie: its address and range as @rawsz raw bytes,
 * then, when @z, an empty augmentation.
 */
static void eh_fde(struct eh_buf *e, size_t cie, const unsigned char *raw,
		   size_t rawsz, bool z)
{
	uint32_t back;
	size_t i;

	eh_open(e, 0);
	/* The CIE pointer: the distance back from the field to the CIE. */
	back = e->entry + 4 - cie;
	memcpy(e->b + e->entry + 4, &back, 4);
	for (i = 0; i < rawsz; i++)
		eh_put(e, raw[i], 1);
	if (z)
		eh_uleb(e, 0);
	eh_close(e);
}

struct eh_case {
	const char *what;
	const char *aug;
	unsigned char augdata[8];
	size_t augsz;
	unsigned char raw[16];	/* initial location, then range */
	size_t rawsz;
	bool malformed;
	bool pcrel;		/* @lo is relative to the field */
	int64_t lo;
	uint64_t len;
};

#define SECTION_ADDR	0x400000ULL
/* The initial location of an FDE is 8 bytes into it. */
#define FDE_LOC_OFF	8

static const struct eh_case eh_cases[] = {
	{ "no augmentation: absolute, 8 bytes", NULL, { 0 }, 0,
	  { 0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0 }, 16,
	  false, false, 0x1000, 0x20 },
	{ "zR udata4", "zR", { DW_EH_PE_udata4 }, 1,
	  { 0x00, 0x20, 0, 0, 0x10, 0, 0, 0 }, 8, false, false, 0x2000, 0x10 },
	{ "zR udata2", "zR", { DW_EH_PE_udata2 }, 1,
	  { 0x00, 0x30, 0x08, 0 }, 4, false, false, 0x3000, 8 },
	{ "zR uleb128", "zR", { DW_EH_PE_uleb128 }, 1,
	  { 0x80, 0x80, 0x01, 0x7f }, 4, false, false, 0x4000, 0x7f },
	{ "zPLR, personality stepped over, pcrel sdata4 backwards", "zPLR",
	  { 0x9b, 0xaa, 0xbb, 0xcc, 0xdd, 0x1b, 0x1b }, 7,
	  { 0xf8, 0xff, 0xff, 0xff, 0x04, 0, 0, 0 }, 8, false, true, -8, 4 },
	{ "zR pcrel sleb128", "zR", { DW_EH_PE_pcrel | DW_EH_PE_sleb128 }, 1,
	  { 0x40, 0x03 }, 2, false, true, -0x40, 3 },
	{ "zR datarel: no base for it", "zR", { 0x3b }, 1,
	  { 0, 0, 0, 0, 4, 0, 0, 0 }, 8, true },
	{ "zR indirect", "zR", { 0x9b }, 1,
	  { 0, 0, 0, 0, 4, 0, 0, 0 }, 8, true },
	{ "an augmentation without z", "xy", { 0 }, 0,
	  { 0, 0, 0, 0, 4, 0, 0, 0 }, 8, true },
	{ "range past 2^64", "zR", { DW_EH_PE_udata8 }, 1,
	  { 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x01 }, 16,
	  true },
	{ "address cut short", "zR", { DW_EH_PE_udata8 }, 1,
	  { 0, 0, 0, 0 }, 4, true },
};

TEST(eh_frame_fdes_decode_each_pointer_encoding, T_MEM)
{
	const struct eh_case *c;
	struct sframe_jit__fde *fdes;
	struct eh_buf e;
	size_t cie, fde_off;
	unsigned int i;
	uint64_t lo;
	uint32_t nr;

	for (i = 0; i < ARRAY_SIZE(eh_cases); i++) {
		c = &eh_cases[i];
		memset(&e, 0, sizeof(e));
		cie = eh_cie(&e, c->aug, c->augdata, c->augsz);
		fde_off = e.n;
		eh_fde(&e, cie, c->raw, c->rawsz, c->aug && c->aug[0] == 'z');
		eh_put(&e, 0, 4);	/* a terminator, */
		eh_fde(&e, cie, c->raw, c->rawsz, false);	/* not read */
		fdes = NULL;
		ASSERT_EQ(0, sframe_jit__eh_frame_fdes(e.b, e.n, SECTION_ADDR,
						       &fdes, &nr));
		if (nr != 1 || fdes[0].malformed != c->malformed) {
			test_fail(__FILE__, __LINE__,
				  "%s: %u FDEs, malformed %d", c->what, nr,
				  nr ? fdes[0].malformed : -1);
			free(fdes);
			continue;
		}
		lo = c->lo;
		if (c->pcrel)
			lo += SECTION_ADDR + fde_off + FDE_LOC_OFF;
		if (!c->malformed &&
		    (fdes[0].lo != lo || fdes[0].hi != lo + c->len))
			test_fail(__FILE__, __LINE__,
				  "%s: [%#llx, %#llx), want [%#llx, %#llx)",
				  c->what, (unsigned long long)fdes[0].lo,
				  (unsigned long long)fdes[0].hi,
				  (unsigned long long)lo,
				  (unsigned long long)(lo + c->len));
		free(fdes);
	}
}

TEST(eh_frame_fdes_survive_truncated_and_dangling_entries, T_MEM)
{
	static const unsigned char raw[8] = { 0, 0x10, 0, 0, 8, 0, 0, 0 };
	static const unsigned char enc = DW_EH_PE_udata4;
	struct sframe_jit__fde *fdes;
	struct eh_buf e = { .n = 0 };
	size_t cie, cut;
	uint32_t nr;

	cie = eh_cie(&e, "zR", &enc, 1);
	eh_fde(&e, cie, raw, sizeof(raw), true);
	/* An FDE whose CIE pointer lands on the FDE before: no CIE there. */
	eh_fde(&e, cie + 0x18, raw, sizeof(raw), true);
	cut = e.n;
	eh_fde(&e, cie, raw, sizeof(raw), true);
	ASSERT_EQ(0, sframe_jit__eh_frame_fdes(e.b, e.n, 0, &fdes, &nr));
	ASSERT_EQ(3, nr);
	EXPECT(!fdes[0].malformed && fdes[0].lo == 0x1000 &&
	       fdes[0].hi == 0x1008);
	EXPECT(fdes[1].malformed);
	EXPECT(!fdes[2].malformed);
	free(fdes);

	/* The last entry cut short: its length runs past the section. */
	ASSERT_EQ(0, sframe_jit__eh_frame_fdes(e.b, cut + 10, 0, &fdes, &nr));
	ASSERT_EQ(3, nr);
	EXPECT(fdes[2].malformed);
	free(fdes);
	ASSERT_EQ(0, sframe_jit__eh_frame_fdes(e.b, 0, 0, &fdes, &nr));
	EXPECT_EQ(0, nr);
	free(fdes);
}
