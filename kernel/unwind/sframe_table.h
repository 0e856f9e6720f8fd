/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ELF .sframe section converted for lookups of bounded work
 * (sframe_table.c).  The ELF registration keeps one per distinct
 * section; on top of the SFrame unwinder series it drops with the
 * section decoder.
 */
#ifndef _KERNEL_UNWIND_SFRAME_TABLE_H
#define _KERNEL_UNWIND_SFRAME_TABLE_H

#include <linux/types.h>

#include "sframe_row.h"
#include "sframe_sec.h"

/*
 * Most distinct rules a converted table keeps.  Real sections repeat a
 * few hundred (libLLVM's 440,000 rows: 583); the cap bounds the scratch
 * buffer of a build, 1.25 MiB, whatever the section's size.
 */
#define SFRAME_TABLE_MAX_RULES		0x10000U

/*
 * Most records sframe_table_find() reads: a binary search of at most
 * SFRAME_MAX_SIZE / SFRAME_V3_FDE_SIZE = 2^22 functions (23 probes),
 * the function found, a binary search of its at most
 * SFRAME_MAX_FUNC_FRES rows (16 probes; a PCMASK scan of version 1 tries
 * at most SFRAME_MAX_MASK_FRES), the row found and the rule it names.
 */
#define SFRAME_TABLE_MAX_READS		(23 + 1 + 16 + 1 + 1)

/* struct sframe_table_func.flags */
#define SFRAME_TF_MODULO	0x01	/* PCMASK: rows repeat every rep_size */
#define SFRAME_TF_MASK		0x02	/* version 1 PCMASK: rows are masks */
#define SFRAME_TF_OUTERMOST	0x04	/* version 3, no rows: outermost */
#define SFRAME_TF_MALFORMED	0x08	/* every lookup in it is malformed */
#define SFRAME_TF_TAIL_BAD	0x10	/* a malformed row follows the last */
#define SFRAME_TF_BAD_TYPE	0x20	/* malformed, up to the next function */

/**
 * struct sframe_table_func - a function of a converted ELF section
 * @size: bytes in the function; its start is in struct sframe_table.
 * @first: index of its first row in the table's rows.
 * @nr: its rows in the table: those before the first malformed one.
 * @flags: SFRAME_TF_*.
 * @rep_size: the repeat size, with SFRAME_TF_MODULO.
 */
struct sframe_table_func {
	u32 size;
	u32 first;
	u16 nr;
	u8 flags;
	u8 rep_size;
};

/* struct sframe_table.rules[].cfa_base of a row that does not decode */
#define SFRAME_CFA_BASE_MALFORMED	0xff

/**
 * struct sframe_table_row - a frame row of a converted ELF section
 * @start: start offset in the function (version 1 PCMASK: the mask).
 * @rule: index of the row's rule, decoded, in struct sframe_table.rules.
 *	A section may have as many distinct rules as rows, so 16 bits do
 *	not do.
 */
struct sframe_table_row {
	u32 start;
	u32 rule;
};

/**
 * struct sframe_table - an ELF section converted for lookups
 * @nr_funcs: functions.
 * @nr_rows: rows, over all functions.
 * @nr_rules: distinct rules the rows name.
 * @starts: the functions' start addresses, sorted, after this header.
 * @funcs: the functions, in the same order, after @starts.
 * @rows: the rows, after @funcs.
 * @rules: the rules, each once; the CFA base of one that does not
 *	decode is SFRAME_CFA_BASE_MALFORMED.
 *
 * sframe_table_build() converts a validated section once, at
 * registration, into records of a fixed size with every row decoded:
 * sframe_table_find() then binary-searches the functions and the rows of
 * one, and reads at most SFRAME_TABLE_MAX_READS records, where
 * sframe_sec_find() walks a function's rows one by one.  Lookups give
 * exactly what sframe_sec_find() gives on the section.  The rows of a
 * large section repeat a few hundred rules: each is kept once.
 */
struct sframe_table {
	u32 nr_funcs;
	u32 nr_rows;
	u32 nr_rules;
	unsigned long *starts;
	struct sframe_table_func *funcs;
	struct sframe_table_row *rows;
	struct sframe_row *rules;
};

int sframe_table_size(const struct sframe_sec *sec, size_t *size,
		      size_t *scratch);
size_t sframe_table_bound(const struct sframe_sec *sec);
int sframe_table_build(const struct sframe_sec *sec, struct sframe_table *t,
		       size_t size, void *scratch, size_t scratch_size);
size_t sframe_table_rules_bytes(const struct sframe_table *t);
void sframe_table_keep_rules(struct sframe_table *t, struct sframe_row *rules);
enum sframe_find_result sframe_table_find(const struct sframe_table *t,
					  unsigned long pc,
					  struct sframe_row *row);
enum sframe_find_result sframe_table_find_reads(const struct sframe_table *t,
						unsigned long pc,
						struct sframe_row *row,
						u32 *reads);

#endif /* _KERNEL_UNWIND_SFRAME_TABLE_H */
