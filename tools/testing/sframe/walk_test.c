// SPDX-License-Identifier: GPL-2.0
/*
 * The bounds of the kernel's walker, kernel/unwind/sframe_user.c and
 * the decoders built unchanged (uwalk.h), over the hostile sections of
 * hostile.h registered as the kernel registers a section:
 *
 *  - the caps of a converted table: a function of more rows than
 *    SFRAME_MAX_FUNC_FRES, or a version 1 PCMASK function of more than
 *    SFRAME_MAX_MASK_FRES, is refused with E2BIG, one at the cap is not;
 *  - the budget of a sample: a stack of more frames than
 *    SFRAME_SAMPLE_MAX_FRAMES, under a larger depth limit, is walked for
 *    that many frames and the stop counted; a shorter one, or a smaller
 *    limit, is walked whole, uncounted; a stack of frames that each cost
 *    a search of 65,535 rows stops, counted, before its reads could pass
 *    SFRAME_SAMPLE_MAX_READS, and not much before;
 *  - over every hostile section, the walk through the converted tables
 *    is the walk through the sections themselves.
 *
 * The last line printed is "N passed, N failed"; the exit status is 1 if
 * any case failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostile.h"
#include "decoder.h"
#include "uwalk.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define NOINLINE	__attribute__((noinline))

#define TEXT(k)		(0x100000000000UL + (uint64_t)(k) * 0x100000000UL)
#define MAX_WORDS	1100

static unsigned int passed, failed;

static void check(bool ok, const char *name)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL walk: %s\n", name);
	}
}

struct func {
	const char *name;
	uint8_t version;
	uint32_t size;
	uint32_t rows;
	bool mask;
	int err;		/* what registration returns */
	uint64_t pc;		/* where a frame of it is looked up */
};

#define FUNC(n, v, sz, nr, m, e)					\
	{ .name = (n), .version = (v), .size = (sz), .rows = (nr),	\
	  .mask = (m), .err = (e) }

static struct func funcs[] = {
	FUNC("one row", 2, 0x10, 1, false, 0),
	FUNC("65535 rows", 2, 0xffff, 0xffff, false, 0),
	FUNC("65536 rows", 2, 0x10000, 0x10000, false, -E2BIG),
	FUNC("v1, 65535 rows", 1, 0xffff, 0xffff, false, 0),
	FUNC("v1 PCMASK, 16 rows", 1, 0x100, 16, true, 0),
	FUNC("v1 PCMASK, 17 rows", 1, 0x100, 17, true, -E2BIG),
};

/* Register each function in a section of its own at TEXT(k). */
static void register_all(void)
{
	char name[96];
	unsigned int k;
	int err;

	for (k = 0; k < ARRAY_SIZE(funcs); k++) {
		struct hs_sec s = { .version = funcs[k].version };
		struct func *f = &funcs[k];

		hs_add(&s, f->size, f->rows, f->mask);
		hs_finish(&s);
		err = uwalk_add_section(s.data, s.size, TEXT(k), TEXT(k),
					TEXT(k) + s.text_len);
		snprintf(name, sizeof(name), "%s: registration %d, expected %d",
			 f->name, err, f->err);
		check(err == f->err, name);
		/* The last byte: past the last row, or all of the masks. */
		f->pc = TEXT(k) + f->size - 1;
	}
}

/* Walk @n frames returning into @pc's function, up to @max entries. */
static NOINLINE int walk(uint64_t pc, size_t n, int max, uint64_t *pcs)
{
	uint64_t words[MAX_WORDS + 1];
	int ret;

	hs_stack(words, n, pc + 1);
	ret = uwalk_regs(pc, (uint64_t)words, 0, pcs, max);
	/* The walk reads this frame: no tail call. */
	asm volatile("" : "+r"(ret));
	return ret;
}

static void check_budget(const struct func *f)
{
	static uint64_t pcs[MAX_WORDS + 1];
	unsigned long stops = uwalk_budget_stops();
	char name[128];
	int n;

	n = walk(f->pc, MAX_WORDS, MAX_WORDS, pcs);
	snprintf(name, sizeof(name),
		 "%s: %d entries over %d frames, expected the budget, %d",
		 f->name, n, MAX_WORDS, SFRAME_SAMPLE_MAX_FRAMES + 1);
	check(n == SFRAME_SAMPLE_MAX_FRAMES + 1, name);
	check(uwalk_budget_stops() == stops + 1,
	      "a walk stopped by the budget is counted");

	n = walk(f->pc, MAX_WORDS, 100, pcs);
	check(n == 100, "the depth limit below the budget ends the walk");
	n = walk(f->pc, 300, MAX_WORDS, pcs);
	check(n == 301, "a stack shorter than the budget is walked whole");
	check(uwalk_budget_stops() == stops + 1,
	      "a walk within the budget is not counted");
}

/*
 * Frames of @f, each a search of its rows and one word of stack: the
 * walk stops for its reads, counted, having taken at least as many
 * frames as the worst case of each would allow.
 */
static void check_read_budget(const struct func *f)
{
	static uint64_t pcs[MAX_WORDS + 1];
	unsigned long stops = uwalk_budget_stops();
	int least = (SFRAME_SAMPLE_MAX_READS - SFRAME_FRAME_MAX_READS) /
		    (SFRAME_TABLE_MAX_READS + 1);
	char name[128];
	int n;

	n = walk(f->pc, MAX_WORDS, MAX_WORDS, pcs);
	snprintf(name, sizeof(name),
		 "%s: %d entries over %d frames, expected %d to %d",
		 f->name, n, MAX_WORDS, least, SFRAME_SAMPLE_MAX_FRAMES);
	check(n >= least && n <= SFRAME_SAMPLE_MAX_FRAMES, name);
	check(uwalk_budget_stops() == stops + 1,
	      "a walk stopped by its reads is counted");
}

/* The walk by the tables is the walk by the sections. */
static void check_same_walk(const struct func *f)
{
	static uint64_t a[128], b[128];
	char name[96];
	int na, nb;

	na = walk(f->pc, 127, 127, a);
	uwalk_set_linear(true);
	nb = walk(f->pc, 127, 127, b);
	uwalk_set_linear(false);
	snprintf(name, sizeof(name),
		 "%s: %d frames by the table, %d by the section", f->name, na,
		 nb);
	check(na == 127 && na == nb && !memcmp(a, b, na * sizeof(a[0])),
	      name);
}

int main(void)
{
	unsigned int k;

	if (uwalk_init() < 0) {
		printf("FAIL walk: uwalk_init()\n");
		return 1;
	}
	register_all();
	check_budget(&funcs[0]);
	check_read_budget(&funcs[1]);
	for (k = 0; k < ARRAY_SIZE(funcs); k++)
		if (!funcs[k].err)
			check_same_walk(&funcs[k]);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
