// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsframe_jvm's decoder against code whose frames are known
 * (jvm_frames.S): the row that covers each labelled point must be the
 * frame its comment there gives, and code whose frame cannot be known
 * must get no row.  Ends with "N passed, N failed".
 */
#include <stdio.h>
#include <stdint.h>

#include "sframe_jvm.h"

#define DECLARE(name) extern const uint8_t name[]
DECLARE(c2_method); DECLARE(c2_push); DECLARE(c2_sub); DECLARE(c2_body);
DECLARE(c2_epi_add); DECLARE(c2_epi_pop); DECLARE(c2_epi_poll);
DECLARE(c2_ret); DECLARE(c2_slow); DECLARE(c2_slow_pop);
DECLARE(c2_slow_jmp); DECLARE(c2_throw); DECLARE(c2_poll_stub); DECLARE(c2_exc);
DECLARE(c2_deopt); DECLARE(c2_deopt_next); DECLARE(c2_end);
DECLARE(osr_method); DECLARE(osr_loop); DECLARE(osr_entry);
DECLARE(osr_entry_push); DECLARE(osr_end);
DECLARE(wrap); DECLARE(wrap_mov); DECLARE(wrap_align); DECLARE(wrap_call);
DECLARE(wrap_back); DECLARE(wrap_leave); DECLARE(wrap_ret); DECLARE(wrap_end);
DECLARE(patched); DECLARE(patched_body); DECLARE(patched_pop);
DECLARE(patched_ret); DECLARE(patched_end);
DECLARE(lost); DECLARE(lost_and); DECLARE(lost_end);

static int passed, failed;

static void result(int ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* The row that covers @off, or NULL where no span does. */
static const struct sframe_jit_row *row_at(const struct sframe_jvm_frames *f,
					   uint32_t off)
{
	const struct sframe_jit_row *r = NULL;
	uint32_t i, k;

	for (i = 0; i < f->nr_spans; i++) {
		const struct sframe_jvm_span *s = &f->spans[i];

		if (off < s->start || off >= s->start + s->size)
			continue;
		for (k = 0; k < s->nr_rows; k++)
			if (f->rows[s->first_row + k].start_off <= off - s->start)
				r = &f->rows[s->first_row + k];
		return r;
	}
	return NULL;
}

/* Expect CFA = SP (or FP with @fp_base) + @cfa, %rbp saved at @fp_off. */
static void expect(const struct sframe_jvm_frames *f, const uint8_t *base,
		   const uint8_t *at, const char *name, int fp_base,
		   int32_t cfa, int16_t fp_off)
{
	const struct sframe_jit_row *r = row_at(f, (uint32_t)(at - base));
	char what[128];
	int ok;

	ok = r && r->cfa_base == (fp_base ? SFRAME_JIT_ROW_CFA_FP :
					     SFRAME_JIT_ROW_CFA_SP) &&
	     r->cfa_off == cfa && r->ra_off == -8 &&
	     !!(r->flags & SFRAME_JIT_ROW_FP_SAVED) == !!fp_off &&
	     (!fp_off || r->fp_off == fp_off);
	snprintf(what, sizeof(what), "%s: CFA = %s + %d, %%rbp %s %d", name,
		 fp_base ? "FP" : "SP", cfa, fp_off ? "at CFA" : "kept",
		 fp_off);
	result(ok, what);
	if (!ok && r)
		printf("#   got base %u cfa %d fp_off %d flags %#x\n",
		       r->cfa_base, r->cfa_off, r->fp_off, r->flags);
	else if (!ok)
		printf("#   got no row\n");
}

static void expect_none(const struct sframe_jvm_frames *f,
			const uint8_t *base, const uint8_t *at,
			const char *name)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: no row", name);
	result(!row_at(f, (uint32_t)(at - base)), what);
}

static int decode(const uint8_t *start, const uint8_t *end,
		  enum sframe_jvm_code_kind kind, const uint8_t *entry,
		  uint32_t frame_size, struct sframe_jvm_frames *f)
{
	uint32_t e = entry ? (uint32_t)(entry - start) : 0;

	return sframe_jvm_decode(start, (uint32_t)(end - start),
				 (uint64_t)(uintptr_t)start, kind, &e,
				 entry ? 1 : 0, frame_size, f);
}

#define EXPECT(f, base, label, ...) expect(f, base, label, #label, __VA_ARGS__)

static void test_c2(uint32_t frame_size)
{
	struct sframe_jvm_frames f;

	printf("# C2 method, frame size %s\n", frame_size ? "given" : "found");
	result(!decode(c2_method, c2_end, SFRAME_JVM_NMETHOD, NULL,
		       frame_size, &f), "c2: decodes");
	EXPECT(&f, c2_method, c2_method, 0, 8, 0);
	EXPECT(&f, c2_method, c2_push, 0, 8, 0);
	EXPECT(&f, c2_method, c2_sub, 0, 16, -16);
	EXPECT(&f, c2_method, c2_body, 0, 64, -16);
	EXPECT(&f, c2_method, c2_epi_add, 0, 64, -16);
	EXPECT(&f, c2_method, c2_epi_pop, 0, 16, -16);
	EXPECT(&f, c2_method, c2_epi_poll, 0, 8, 0);
	EXPECT(&f, c2_method, c2_ret, 0, 8, 0);
	EXPECT(&f, c2_method, c2_slow, 0, 64, -16);
	EXPECT(&f, c2_method, c2_slow_pop, 0, 16, -16);
	EXPECT(&f, c2_method, c2_slow_jmp, 0, 8, 0);
	EXPECT(&f, c2_method, c2_throw, 0, 64, -16);
	EXPECT(&f, c2_method, c2_poll_stub, 0, 8, 0);
	EXPECT(&f, c2_method, c2_exc, 0, 64, -16);
	EXPECT(&f, c2_method, c2_deopt, 0, 64, -16);
	EXPECT(&f, c2_method, c2_deopt_next, 0, 72, -16);
	result(f.stats.body_cfa == 64 && !f.stats.conflicts,
	       "c2: body frame 64, no conflict");
	sframe_jvm_frames_free(&f);
}

static void test_osr(void)
{
	struct sframe_jvm_frames f;

	decode(osr_method, osr_end, SFRAME_JVM_NMETHOD, osr_entry, 48, &f);
	EXPECT(&f, osr_method, osr_loop, 0, 48, -16);
	EXPECT(&f, osr_method, osr_entry, 0, 8, 0);
	EXPECT(&f, osr_method, osr_entry_push, 0, 8, 0);
	sframe_jvm_frames_free(&f);
	/*
	 * Without its entry, the OSR code is guessed to run in the body's
	 * frame, and the guess meets the loop with another frame: it gets
	 * no row, the rest keeps its own.
	 */
	decode(osr_method, osr_end, SFRAME_JVM_NMETHOD, NULL, 48, &f);
	expect_none(&f, osr_method, osr_entry, "osr_entry, not named");
	expect_none(&f, osr_method, osr_entry_push, "osr_entry_push, not named");
	EXPECT(&f, osr_method, osr_loop, 0, 48, -16);
	sframe_jvm_frames_free(&f);
}

static void test_wrapper(void)
{
	struct sframe_jvm_frames f;

	decode(wrap, wrap_end, SFRAME_JVM_NMETHOD, NULL, 48, &f);
	EXPECT(&f, wrap, wrap, 0, 8, 0);
	EXPECT(&f, wrap, wrap_mov, 0, 16, -16);
	EXPECT(&f, wrap, wrap_align, 0, 48, -16);
	EXPECT(&f, wrap, wrap_call, 1, 16, -16);
	EXPECT(&f, wrap, wrap_back, 0, 48, -16);
	EXPECT(&f, wrap, wrap_leave, 0, 48, -16);
	EXPECT(&f, wrap, wrap_ret, 0, 8, 0);
	sframe_jvm_frames_free(&f);
}

static void test_not_entrant(void)
{
	struct sframe_jvm_frames f;

	decode(patched, patched_end, SFRAME_JVM_NMETHOD, NULL, 64, &f);
	EXPECT(&f, patched, patched, 0, 8, 0);
	EXPECT(&f, patched, patched_body, 0, 64, -16);
	EXPECT(&f, patched, patched_pop, 0, 16, -16);
	EXPECT(&f, patched, patched_ret, 0, 8, 0);
	result(f.stats.body_cfa == 0,
	       "not entrant: no path from the entry finds the body");
	sframe_jvm_frames_free(&f);
	/* Without HotSpot's frame size there is nothing to go by. */
	decode(patched, patched_end, SFRAME_JVM_NMETHOD, NULL, 0, &f);
	expect_none(&f, patched, patched_body, "not entrant, no frame size: body");
	sframe_jvm_frames_free(&f);
}

static void test_lost(void)
{
	struct sframe_jvm_frames f;

	decode(lost, lost_end, SFRAME_JVM_STUB, NULL, 0, &f);
	EXPECT(&f, lost, lost, 0, 8, 0);
	EXPECT(&f, lost, lost_and, 0, 16, 0);
	expect_none(&f, lost, lost_and + 4, "lost: after and $-16,%rsp");
	sframe_jvm_frames_free(&f);
}

int main(void)
{
	test_c2(64);
	test_c2(0);
	test_osr();
	test_wrapper();
	test_not_entrant();
	test_lost();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
