/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SFrame section decoding, shared by the kernel, KUnit and the userspace
 * harness in tools/testing/sframe.  Nothing here touches a task or an mm:
 * a section is a byte buffer and a base address, a JIT registry the
 * kernel's mapping of it and a private copy of its layout.
 */
#ifndef _KERNEL_UNWIND_SFRAME_H
#define _KERNEL_UNWIND_SFRAME_H

#include <linux/types.h>

#define SFRAME_MAGIC			0xdee2
#define SFRAME_VERSION_1		1
#define SFRAME_VERSION_2		2
#define SFRAME_VERSION_3		3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3

#define SFRAME_HDR_SIZE			28
#define SFRAME_V1_FDE_SIZE		17
#define SFRAME_V2_FDE_SIZE		20
#define SFRAME_V3_FDE_SIZE		16
#define SFRAME_V3_ATTR_SIZE		5

/* FDE info byte (version 3: the attribute record's first info byte) */
#define SFRAME_FDE_FRE_TYPE(info)	((info) & 0xf)
#define SFRAME_FDE_PCMASK(info)		(((info) >> 4) & 0x1)
#define SFRAME_FDE_SIGNAL(info)		(((info) >> 7) & 0x1)	/* v3 */

/* Version 3 attribute record's second info byte: the FDE type */
#define SFRAME_FDE_TYPE(info2)		((info2) & 0x1f)
#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/* FRE info byte */
#define SFRAME_FRE_CFA_BASE_SP(info)	((info) & 0x1)
#define SFRAME_FRE_N_OFFSETS(info)	(((info) >> 1) & 0xf)
#define SFRAME_FRE_OFFSET_SIZE(info)	(((info) >> 5) & 0x3)

/*
 * Control word of a version 3 flexible FDE's rule: bit 0 register-based,
 * bit 1 dereference, bit 2 unused, bits 3 and up a DWARF register number.
 */
#define SFRAME_FLEX_REG_P(ctl)		((ctl) & 0x1)
#define SFRAME_FLEX_DEREF_P(ctl)	(((ctl) >> 1) & 0x1)
#define SFRAME_FLEX_UNUSED(ctl)		(((ctl) >> 2) & 0x1)
#define SFRAME_FLEX_REGNUM(ctl)		((ctl) >> 3)

/* DWARF register numbers of the AMD64 psABI */
#define SFRAME_DWARF_AMD64_RBP		6
#define SFRAME_DWARF_AMD64_RSP		7

/*
 * Most rows one function may have, as version 3's 16-bit count allows.
 * sframe_sec_find() walks a function's rows in order, so this bounds its
 * work; sframe_table_size() refuses a function with more.
 */
#define SFRAME_MAX_FUNC_FRES		0xffff

/*
 * Most rows a version 1 PCMASK function may have in a converted table.
 * Its rows are masks, not sorted start offsets: a lookup must try every
 * one.  ld writes two for a .plt.
 */
#define SFRAME_MAX_MASK_FRES		16

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

/*
 * Most records sframe_jit_find() reads, at the largest capacities
 * (sframe_jit_max_reads()): 8 + fls(SFRAME_JIT_MAX_FDES) +
 * fls(SFRAME_JIT_MAX_FRES).
 */
#define SFRAME_JIT_MAX_READS		(8 + 23 + 25)

/*
 * Most nodes the walker reads to find the registration covering a PC: a
 * maple tree of at most 65,536 ranges (kernel.sframe_max_registrations)
 * is no more than 7 nodes high.
 */
#define SFRAME_INDEX_MAX_READS		8

/*
 * Most user words one frame's step reads: the signal trampoline's code
 * (2) and the signal frame's registers (3), or a frame's return address
 * and saved frame pointer (2).
 */
#define SFRAME_STEP_MAX_WORDS		5

/* Most reads, records and user words, one frame costs the walker. */
#define SFRAME_FRAME_MAX_READS						\
	(SFRAME_INDEX_MAX_READS + SFRAME_JIT_MAX_READS +		\
	 SFRAME_STEP_MAX_WORDS)

/*
 * The work one sample's walk does in NMI context, whatever the depth
 * limit (sframe_callchain_user()): at most SFRAME_SAMPLE_MAX_FRAMES
 * frames, and at most SFRAME_SAMPLE_MAX_READS reads, records of the
 * index and the tables and words of the user stack, counted as each
 * frame costs them (a JIT lookup by its bound).  A frame is not begun
 * unless its worst case fits, so no sample reads more.  The reads are
 * the worst case of 128 frames, perf's default depth of 127 and the
 * sampled PC: only a deeper stack of costly frames is cut by them.
 */
#define SFRAME_SAMPLE_MAX_FRAMES	512
#define SFRAME_SAMPLE_MAX_READS		(128 * SFRAME_FRAME_MAX_READS)

/**
 * struct sframe_sec - a parsed SFrame section header
 * @data: the section's bytes.
 * @size: number of bytes at @data.
 * @base: the address the section is loaded at; function starts are
 *	relative to it (or to their own field with PC-relative starts).
 * @version: SFRAME_VERSION_*.
 * @flags: SFRAME_F_*.
 * @cfa_fixed_fp: the header's fixed FP offset from the CFA, 0 if none.
 * @cfa_fixed_ra: the header's fixed RA offset from the CFA, 0 if none.
 * @num_fdes: function descriptors.
 * @num_fres: frame rows, over all functions.
 * @fde_start: offset of the first descriptor in @data.
 * @fde_size: bytes per descriptor (or v3 index entry).
 * @fre_start: offset of the frame-row sub-section in @data.
 * @fre_len: bytes in the frame-row sub-section.
 */
struct sframe_sec {
	const u8 *data;
	size_t size;
	unsigned long base;
	u8 version;
	u8 flags;
	s8 cfa_fixed_fp;
	s8 cfa_fixed_ra;
	u32 num_fdes;
	u32 num_fres;
	u32 fde_start;
	u32 fde_size;
	u32 fre_start;
	u32 fre_len;
};

/**
 * struct sframe_func - one function descriptor, decoded
 * @start: address of the function's first byte.
 * @size: bytes in the function.
 * @fre_off: offset of its first row in the frame-row sub-section.
 * @num_fres: rows of the function.
 * @fre_type: width of a row's start offset: 0, 1 or 2 for 1, 2, 4 bytes.
 * @pcmask: rows repeat every @rep_size bytes (PCMASK).
 * @rep_size: the repeat size of a PCMASK function.
 * @fde_type: SFRAME_FDE_TYPE_*; always the default before version 3.
 * @signal: a signal frame (version 3).
 */
struct sframe_func {
	unsigned long start;
	u32 size;
	u32 fre_off;
	u32 num_fres;
	u8 fre_type;
	bool pcmask;
	u8 rep_size;
	u8 fde_type;
	bool signal;
};

/**
 * struct sframe_jit_view - the kernel's private view of a JIT registry
 * @base: the kernel's mapping of the registry: its header.
 * @fde_off: offset of the descriptor area from @base.
 * @fde_cap: descriptors the area holds.
 * @fre_off: offset of the frame-row area from @base.
 * @fre_cap: frame rows the area holds.
 * @text_start: the registered code range's start.
 * @text_end: its end (exclusive).
 * @compact: the registry holds compact records (SFRAME_JIT_F_COMPACT).
 * @rule_off: with @compact, offset of the frame-rule area from @base.
 * @rule_cap: with @compact, rules the area holds; 0 without.
 * @stats: the unwinder counts its lookups in the header's stats
 *	(SFRAME_JIT_F_STATS).
 *
 * Everything here is the kernel's own copy, never read back from the
 * shared header.  Descriptors and rows are the version 1 structures of
 * the uapi header, or with @compact struct sframe_jit_cfde and struct
 * sframe_jit_cfre, one after the other: the strides the kernel writes
 * into the shared header are their sizes.
 */
struct sframe_jit_view {
	const void *base;
	u32 fde_off;
	u32 fde_cap;
	u32 fre_off;
	u32 fre_cap;
	unsigned long text_start;
	unsigned long text_end;
	bool compact;
	u32 rule_off;
	u32 rule_cap;
	bool stats;
};

/* struct sframe_row.cfa_base */
enum sframe_cfa_base {
	SFRAME_CFA_BASE_SP,
	SFRAME_CFA_BASE_FP,
};

/**
 * struct sframe_row - the frame rule that applies at one PC
 * @cfa_base: enum sframe_cfa_base, the register the CFA is computed from.
 * @ra_undefined: outermost frame: there is no return address, and the
 *	unwind ends here.  The other fields are then zero.
 * @fp_saved: the caller's frame pointer is saved at CFA + @fp_off;
 *	otherwise the frame pointer is unchanged in the caller.
 * @signal: the function is a signal frame (SFrame version 3): the
 *	return address is not that of a call.
 * @cfa_off: CFA = @cfa_base + @cfa_off.
 * @ra_off: the return address is saved at CFA + @ra_off.
 * @fp_off: see @fp_saved.
 *
 * The same rule describes ELF SFrame rows and JIT registry rows; the
 * caller's stack pointer is the CFA.  sframe_row_apply() evaluates it.
 */
struct sframe_row {
	u8 cfa_base;
	bool ra_undefined;
	bool fp_saved;
	bool signal;
	s32 cfa_off;
	s32 ra_off;
	s32 fp_off;
};

/**
 * enum sframe_find_result - outcome of a PC lookup
 * @SFRAME_FIND_HIT: the row for the PC was found.
 * @SFRAME_FIND_NONE: nothing describes the PC: no function covers it, or
 *	(ELF) its function has no row at or before it.
 * @SFRAME_FIND_TOMBSTONE: (JIT) the function covering the PC was
 *	reclaimed.
 * @SFRAME_FIND_RETRY: (JIT) the registry was being rewritten (its
 *	sequence count was odd or changed); the PC is unknown this time.
 * @SFRAME_FIND_MALFORMED: the descriptor or rows met on the way are
 *	malformed, or use a rule this decoder does not handle.
 *
 * Only a hit gives a row.  For every other result the unwinder treats
 * the frame as undescribed and falls back to the frame pointer.
 */
enum sframe_find_result {
	SFRAME_FIND_HIT,
	SFRAME_FIND_NONE,
	SFRAME_FIND_TOMBSTONE,
	SFRAME_FIND_RETRY,
	SFRAME_FIND_MALFORMED,
};

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

/**
 * struct sframe_step - where one frame's caller state is, per its row
 * @cfa: the canonical frame address, which is the caller's stack pointer.
 * @ra_addr: user address the return address is to be read from.
 * @fp_addr: user address the caller's frame pointer is to be read from,
 *	if @fp_saved.
 * @fp_saved: the frame pointer was saved; otherwise it is unchanged.
 */
struct sframe_step {
	unsigned long cfa;
	unsigned long ra_addr;
	unsigned long fp_addr;
	bool fp_saved;
};

int sframe_sec_init(struct sframe_sec *sec, const void *data, size_t size,
		    unsigned long base);
int sframe_sec_func(const struct sframe_sec *sec, u32 i,
		    struct sframe_func *fn);
int sframe_sec_validate(const struct sframe_sec *sec);
enum sframe_find_result sframe_sec_find(const struct sframe_sec *sec,
					unsigned long pc,
					struct sframe_row *row);
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
u32 sframe_jit_max_reads(const struct sframe_jit_view *v);
enum sframe_find_result sframe_jit_find(const struct sframe_jit_view *v,
					unsigned long pc,
					struct sframe_row *row);
int sframe_row_apply(const struct sframe_row *row, unsigned long sp,
		     unsigned long fp, struct sframe_step *step);

/* The walker's (sframe_user.c), beside its budget SFRAME_SAMPLE_MAX_FRAMES. */
unsigned long sframe_budget_stops(void);

#endif /* _KERNEL_UNWIND_SFRAME_H */
