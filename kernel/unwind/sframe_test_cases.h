/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test cases of the SFrame row lookup, shared by the KUnit suite
 * (sframe_kunit.c) and the userspace harness (tools/testing/sframe), so
 * that the two run the same table.
 *
 * The ELF sections are assembled by hand from the SFrame specification
 * (binutils' sframe-spec, versions 1 to 3), little-endian AMD64, loaded
 * at SFT_BASE; offsets in comments are from the start of the section
 * unless they say otherwise.  Malformed variants patch a few bytes of a
 * base section.  Every case gives the result it expects and, for a hit,
 * the row.
 */
#ifndef _KERNEL_UNWIND_SFRAME_TEST_CASES_H
#define _KERNEL_UNWIND_SFRAME_TEST_CASES_H

#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/types.h>
#include <uapi/linux/sframe_jit.h>

#include "sframe_jit_read.h"
#include "sframe_row.h"
#include "sframe_sec.h"
#include "sframe_table.h"

/* Where the test sections are loaded. */
#define SFT_BASE		0x400000UL

/**
 * struct sframe_test_patch - one byte changed in a test section
 * @off: its offset in the section.
 * @val: its new value.
 */
struct sframe_test_patch {
	u16 off;
	u8 val;
};

#define SFT_MAX_PATCH		4

/**
 * struct sframe_test_elf - one lookup in an ELF SFrame section
 * @name: what the case shows.
 * @data: the section's bytes.
 * @size: their number (less than the array's for a truncated section).
 * @patch: bytes changed in @data before the lookup.
 * @nr_patch: their number.
 * @init: what sframe_sec_init() returns; the lookup runs only after 0.
 * @pc: the address looked up; the section is loaded at SFT_BASE.
 * @result: what sframe_sec_find() returns.
 * @row: the row it gives, for SFRAME_FIND_HIT.
 */
struct sframe_test_elf {
	const char *name;
	const u8 *data;
	size_t size;
	struct sframe_test_patch patch[SFT_MAX_PATCH];
	unsigned int nr_patch;
	int init;
	unsigned long pc;
	enum sframe_find_result result;
	struct sframe_row row;
};

/*
 * The sections below are little endian.  Every header is 28 bytes:
 * u16 magic 0xdee2, u8 version, u8 flags (0x1 sorted, 0x4 PC-relative
 * starts), u8 ABI (3, AMD64), s8 fixed FP offset, s8 fixed RA offset (0:
 * not fixed; AMD64 has RA at CFA - 8), u8 auxiliary header length, u32
 * descriptors, u32 rows, u32 bytes of rows, u32 descriptor offset, u32
 * row offset (the offsets from the end of the header).
 *
 * Version 1 descriptor, 17 bytes: s32 start, u32 size, u32 offset of its
 * first row in the row sub-section, u32 rows, u8 info: row start width in
 * bits 0-3 (0: 1 byte, 1: 2, 2: 4), PCMASK in bit 4.  Version 2 adds u8
 * repeat size and 2 bytes of padding.  Version 3 index entry, 16 bytes:
 * s64 start, u32 size, u32 offset of its attribute record in the row
 * sub-section; the record, 5 bytes: u16 rows, u8 info (bit 7: signal
 * frame), u8 info2 (FDE type: 0 default, 1 flexible), u8 repeat size.
 *
 * A row: its start offset (1, 2 or 4 bytes), u8 info: CFA base in bit 0
 * (1 SP, 0 FP), number of data words in bits 1-4, their width in bits
 * 5-6 (0: 1 byte, 1: 2, 2: 4); then the data words.  A flexible row's
 * words are (control, offset) pairs; control: bit 0 register-based, bit
 * 1 dereference, bits 3 and up a DWARF register (6 RBP, 7 RSP).  So 0x39
 * is RSP, 0x31 RBP, 0x02 "saved at CFA + offset", 0x00 padding.
 */

/*
 * Version 1, as GNU as and ld 2.40 write it.  f0 at 0x401000, 0x20
 * bytes; f1 at 0x401030, 0x40 bytes, PCMASK (a .plt).
 */
static const u8 sft_v1[] = {
	0xe2, 0xde, 0x01, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x02, 0x00, 0x00, 0x00,	/* 2 descriptors */
	0x06, 0x00, 0x00, 0x00,	/* 6 rows */
	0x14, 0x00, 0x00, 0x00,	/* 20 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x22, 0x00, 0x00, 0x00,	/* rows at 28 + 34 */
	/* 28 f0: start 0x1000, size 0x20, rows at 0, 4 rows, 1-byte starts */
	0x00, 0x10, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00,
	/* 45 f1: start 0x1030, size 0x40, rows at 14, 2 rows, PCMASK */
	0x30, 0x10, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
	0x0e, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x10,
	/* 62 rows */
	0x00, 0x03, 0x08,	/* f0 +0: CFA = SP + 8 */
	0x01, 0x05, 0x10, 0xf0,	/* +1: CFA = SP + 16, FP at CFA - 16 */
	0x04, 0x04, 0x10, 0xf0,	/* +4: CFA = FP + 16, FP at CFA - 16 */
	0x1e, 0x03, 0x08,	/* +0x1e: CFA = SP + 8 */
	0x00, 0x03, 0x08,	/* f1 mask 0: CFA = SP + 8 */
	0x0b, 0x03, 0x10,	/* mask 0xb: CFA = SP + 16 */
};

/*
 * Version 2, starts relative to the section.  f0 at 0x402000, 0x300
 * bytes, 2-byte row starts and data words; f1 at 0x402400, 0x40 bytes,
 * PCMASK repeating every 16 bytes.
 */
static const u8 sft_v2[] = {
	0xe2, 0xde, 0x02, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x02, 0x00, 0x00, 0x00,	/* 2 descriptors */
	0x05, 0x00, 0x00, 0x00,	/* 5 rows */
	0x19, 0x00, 0x00, 0x00,	/* 25 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x28, 0x00, 0x00, 0x00,	/* rows at 28 + 40 */
	/* 28 f0: start 0x2000, size 0x300, rows at 0, 3 rows, 2-byte starts */
	0x00, 0x20, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00,
	/* 48 f1: start 0x2400, size 0x40, rows at 19, 2 rows, PCMASK, 16 */
	0x00, 0x24, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
	0x13, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x10, 0x10, 0x00, 0x00,
	/* 68 rows */
	0x00, 0x00, 0x23, 0x08, 0x00,		/* f0 +0: CFA = SP + 8 */
	0x01, 0x00, 0x25, 0x10, 0x00, 0xf0, 0xff,	/* +1: SP + 16, FP -16 */
	0x00, 0x02, 0x25, 0x10, 0x10, 0xf0, 0xff,	/* +0x200: SP + 0x1010 */
	0x00, 0x03, 0x08,	/* f1 +0 of each 16: CFA = SP + 8 */
	0x0b, 0x03, 0x10,	/* +11 of each 16: CFA = SP + 16 */
};

/*
 * Version 2 with PC-relative starts (SFRAME_F_FDE_FUNC_START_PCREL):
 * f0 at 0x403000 = SFT_BASE + 28 + 0x2fe4, 0x20000 bytes, 4-byte row
 * starts and data words; f1 at 0x423000 = SFT_BASE + 48 + 0x22fd0, 0x10
 * bytes, an outermost row.
 */
static const u8 sft_v2_pcrel[] = {
	0xe2, 0xde, 0x02, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x02, 0x00, 0x00, 0x00,	/* 2 descriptors */
	0x03, 0x00, 0x00, 0x00,	/* 3 rows */
	0x18, 0x00, 0x00, 0x00,	/* 24 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x28, 0x00, 0x00, 0x00,	/* rows at 28 + 40 */
	/* 28 f0: start +0x2fe4, size 0x20000, rows at 0, 2 rows, 4-byte */
	0xe4, 0x2f, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00,
	/* 48 f1: start +0x22fd0, size 0x10, rows at 22, 1 row */
	0xd0, 0x2f, 0x02, 0x00, 0x10, 0x00, 0x00, 0x00,
	0x16, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	/* 68 rows */
	0x00, 0x00, 0x00, 0x00, 0x43,		/* f0 +0: */
	0x08, 0x00, 0x00, 0x00,			/* CFA = SP + 8 */
	0x00, 0x00, 0x01, 0x00, 0x45,		/* +0x10000: */
	0x08, 0x00, 0x10, 0x00,			/* CFA = SP + 0x100008 */
	0xf0, 0xff, 0xff, 0xff,			/* FP at CFA - 16 */
	0x00, 0x00,		/* f1 +0: no data words, RA undefined */
};

/*
 * Version 3, PC-relative starts: f0 regular at 0x404000 (0x40 bytes),
 * f1 flexible at 0x404040 (0x20), f2 PCMASK at 0x404060 (0x20), f3 with
 * no rows at 0x404080 (0x10), f4 a signal frame at 0x404090 (0x10).
 */
static const u8 sft_v3[] = {
	0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x05, 0x00, 0x00, 0x00,	/* 5 descriptors */
	0x09, 0x00, 0x00, 0x00,	/* 9 rows */
	0x46, 0x00, 0x00, 0x00,	/* 70 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* index at 28 */
	0x50, 0x00, 0x00, 0x00,	/* rows at 28 + 80 */
	/* 28 f0: SFT_BASE + 28 + 0x3fe4, size 0x40, attributes at 0 */
	0xe4, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 44 f1: SFT_BASE + 44 + 0x4014, size 0x20, attributes at 16 */
	0x14, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x20, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
	/* 60 f2: SFT_BASE + 60 + 0x4024, size 0x20, attributes at 46 */
	0x24, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x20, 0x00, 0x00, 0x00, 0x2e, 0x00, 0x00, 0x00,
	/* 76 f3: SFT_BASE + 76 + 0x4034, size 0x10, attributes at 57 */
	0x34, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x00, 0x00, 0x39, 0x00, 0x00, 0x00,
	/* 92 f4: SFT_BASE + 92 + 0x4034, size 0x10, attributes at 62 */
	0x34, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x00, 0x00, 0x3e, 0x00, 0x00, 0x00,
	/* 108 rows, offsets below from here */
	/*  0 f0: 3 rows, 1-byte starts, default */
	0x03, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x03, 0x08,	/*  5 +0: CFA = SP + 8 */
	0x01, 0x05, 0x10, 0xf0,	/*  8 +1: CFA = SP + 16, FP at CFA - 16 */
	0x04, 0x04, 0x10, 0xf0,	/* 12 +4: CFA = FP + 16, FP at CFA - 16 */
	/* 16 f1: 3 rows, flexible */
	0x03, 0x00, 0x00, 0x01, 0x00,
	/* 21 +0, 2 words: CFA = RSP + 8 */
	0x00, 0x04, 0x39, 0x08,
	/* 25 +4, 5 words: CFA = RBP + 16, RA padding, FP at CFA - 16 */
	0x04, 0x0a, 0x31, 0x10, 0x00, 0x02, 0xf0,
	/* 32 +8, 6 words of 2 bytes: CFA = RSP + 32, RA at CFA - 16, */
	0x08, 0x2c, 0x39, 0x00, 0x20, 0x00,
	/* FP at CFA - 24 */
	0x02, 0x00, 0xf0, 0xff, 0x02, 0x00, 0xe8, 0xff,
	/* 46 f2: 2 rows, PCMASK, repeat 16 */
	0x02, 0x00, 0x10, 0x00, 0x10,
	0x00, 0x03, 0x08,	/* 51 +0: CFA = SP + 8 */
	0x0b, 0x03, 0x10,	/* 54 +11 of each 16: CFA = SP + 16 */
	/* 57 f3: no rows, outermost */
	0x00, 0x00, 0x00, 0x00, 0x00,
	/* 62 f4: 1 row, signal frame */
	0x01, 0x00, 0x80, 0x00, 0x00,
	0x00, 0x03, 0x08,	/* 67 +0: CFA = SP + 8 */
};

/*
 * Version 3 without PC-relative starts: relative to the section, as the
 * specification allows.  f0 at 0x405000, 0x10 bytes.
 */
static const u8 sft_v3_secrel[] = {
	0xe2, 0xde, 0x03, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x08, 0x00, 0x00, 0x00,	/* 8 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* index at 28 */
	0x10, 0x00, 0x00, 0x00,	/* rows at 28 + 16 */
	/* 28 f0: start 0x5000, size 0x10, attributes at 0 */
	0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 44 1 row */
	0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x03, 0x08,	/* +0: CFA = SP + 8 */
};

/* Version 2, RA not fixed by the header.  f0 at 0x406000, 0x10 bytes. */
static const u8 sft_v2_ra_rows[] = {
	0xe2, 0xde, 0x02, 0x01, 0x03, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x02, 0x00, 0x00, 0x00,	/* 2 rows */
	0x07, 0x00, 0x00, 0x00,	/* 7 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x14, 0x00, 0x00, 0x00,	/* rows at 28 + 20 */
	/* 28 f0: start 0x6000, size 0x10, rows at 0, 2 rows */
	0x00, 0x60, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	/* 48 rows */
	0x00, 0x05, 0x08, 0xf8,	/* +0: CFA = SP + 8, RA at CFA - 8 */
	0x04, 0x03, 0x10,	/* +4: CFA = SP + 16, RA unknown */
};

/* Version 2 with a 4-byte auxiliary header.  f0 at 0x407000, 0x10 bytes. */
static const u8 sft_v2_aux[] = {
	0xe2, 0xde, 0x02, 0x01, 0x03, 0x00, 0xf8, 0x04,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x03, 0x00, 0x00, 0x00,	/* 3 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 + 4 */
	0x14, 0x00, 0x00, 0x00,	/* rows at 28 + 4 + 20 */
	0xaa, 0xaa, 0xaa, 0xaa,	/* 28 auxiliary header */
	/* 32 f0: start 0x7000, size 0x10, rows at 0, 1 row */
	0x00, 0x70, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x03, 0x08,	/* 52 +0: CFA = SP + 8 */
};

/*
 * Version 2, one function, f0 at 0x408000, 0x10 bytes, three rows: the
 * base of the malformed variants, which change the bytes named here.
 */
static const u8 sft_v2_one[] = {
	/* 0 magic, 2 version, 3 flags, 4 ABI, 5 FP, 6 RA, 7 aux */
	0xe2, 0xde, 0x02, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/*  8 1 descriptor */
	0x03, 0x00, 0x00, 0x00,	/* 12 3 rows */
	0x09, 0x00, 0x00, 0x00,	/* 16 9 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* 20 descriptors at 28 */
	0x14, 0x00, 0x00, 0x00,	/* 24 rows at 28 + 20 */
	0x00, 0x80, 0x00, 0x00,	/* 28 start 0x8000 */
	0x10, 0x00, 0x00, 0x00,	/* 32 size 0x10 */
	0x00, 0x00, 0x00, 0x00,	/* 36 rows at 0 */
	0x03, 0x00, 0x00, 0x00,	/* 40 3 rows */
	0x00, 0x00, 0x00, 0x00,	/* 44 info, 45 repeat size, padding */
	0x00, 0x03, 0x08,	/* 48 +0: CFA = SP + 8 */
	0x04, 0x03, 0x10,	/* 51 +4: CFA = SP + 16 */
	0x08, 0x03, 0x18,	/* 54 +8: CFA = SP + 24 */
};

/* Version 2, descriptors at 0x401000, 0x403000, 0x402000: unsorted. */
static const u8 sft_v2_unsorted3[] = {
	0xe2, 0xde, 0x02, 0x00, 0x03, 0x00, 0xf8, 0x00,
	0x03, 0x00, 0x00, 0x00,	/* 3 descriptors */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x03, 0x00, 0x00, 0x00,	/* 3 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x3c, 0x00, 0x00, 0x00,	/* rows at 28 + 60 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x1000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x30, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x3000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x20, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x2000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x03, 0x08,	/* the one row: CFA = SP + 8 */
};

/* Descriptors at 0x401000, 0x407000, 0x405000, 0x409000: unsorted. */
static const u8 sft_v2_unsorted4[] = {
	0xe2, 0xde, 0x02, 0x00, 0x03, 0x00, 0xf8, 0x00,
	0x04, 0x00, 0x00, 0x00,	/* 4 descriptors */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x03, 0x00, 0x00, 0x00,	/* 3 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x50, 0x00, 0x00, 0x00,	/* rows at 28 + 80 */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x1000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x70, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x7000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x50, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x5000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x90, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* 0x9000 */
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x03, 0x08,	/* the one row: CFA = SP + 8 */
};

/* Version 2, a row with 3 data words where AMD64 defines at most 2. */
static const u8 sft_v2_three_words[] = {
	0xe2, 0xde, 0x02, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x05, 0x00, 0x00, 0x00,	/* 5 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x14, 0x00, 0x00, 0x00,	/* rows at 28 + 20 */
	/* 28 f0: start 0x8000, size 0x10, rows at 0, 1 row */
	0x00, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x07, 0x10, 0xf0, 0xe8,	/* 48 +0: SP, 3 words */
};

/* Version 1, a row with no data words, which only version 2 defines. */
static const u8 sft_v1_no_words[] = {
	0xe2, 0xde, 0x01, 0x01, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x02, 0x00, 0x00, 0x00,	/* 2 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* descriptors at 28 */
	0x11, 0x00, 0x00, 0x00,	/* rows at 28 + 17 */
	/* 28 f0: start 0x8000, size 0x10, rows at 0, 1 row */
	0x00, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01,		/* 45 +0: SP, no data words */
};

/*
 * Version 3, one function at 0x408000 = SFT_BASE + 28 + 0x7fe4, 0x10
 * bytes, one row: the base of the version 3 variants.
 */
static const u8 sft_v3_one[] = {
	0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x08, 0x00, 0x00, 0x00,	/* 8 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* index at 28 */
	0x10, 0x00, 0x00, 0x00,	/* rows at 28 + 16 */
	0xe4, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* 28 start */
	0x10, 0x00, 0x00, 0x00,	/* 36 size 0x10 */
	0x00, 0x00, 0x00, 0x00,	/* 40 attributes at 0 */
	0x01, 0x00,		/* 44 1 row */
	0x00, 0x00, 0x00,	/* 46 info, 47 info2, 48 repeat size */
	0x00, 0x03, 0x08,	/* 49 +0: CFA = SP + 8 */
};

/*
 * Version 3, a function at 0xfffffffffffffff0 = SFT_BASE + 28 +
 * 0xffffffffffbfffd4, of 0x100 bytes: past the end of the address space.
 */
static const u8 sft_v3_wrap[] = {
	0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x08, 0x00, 0x00, 0x00,	/* 8 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* index at 28 */
	0x10, 0x00, 0x00, 0x00,	/* rows at 28 + 16 */
	0xd4, 0xff, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff,	/* 28 start */
	0x00, 0x01, 0x00, 0x00,	/* 36 size 0x100 */
	0x00, 0x00, 0x00, 0x00,	/* 40 attributes at 0 */
	0x01, 0x00, 0x00, 0x00, 0x00,	/* 44 1 row */
	0x00, 0x03, 0x08,	/* 49 +0: CFA = SP + 8 */
};

/*
 * Version 3, a flexible function at 0x408000, 0x10 bytes, one row of 2
 * data words at 49: CFA = RSP + 8.  Base of variants changing the words
 * at 51 and 52.
 */
static const u8 sft_v3_flex2[] = {
	0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x09, 0x00, 0x00, 0x00,	/* 9 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* index at 28 */
	0x10, 0x00, 0x00, 0x00,	/* rows at 28 + 16 */
	0xe4, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* 28 start */
	0x10, 0x00, 0x00, 0x00,	/* 36 size 0x10 */
	0x00, 0x00, 0x00, 0x00,	/* 40 attributes at 0 */
	0x01, 0x00, 0x00, 0x01, 0x00,	/* 44 1 row, flexible */
	0x00, 0x04, 0x39, 0x08,	/* 49 +0: CFA = RSP + 8 */
};

/*
 * As sft_v3_flex2, with a row of 4 data words: CFA = RSP + 16, RA at
 * CFA - 8 (words at 51 to 54).
 */
static const u8 sft_v3_flex4[] = {
	0xe2, 0xde, 0x03, 0x05, 0x03, 0x00, 0xf8, 0x00,
	0x01, 0x00, 0x00, 0x00,	/* 1 descriptor */
	0x01, 0x00, 0x00, 0x00,	/* 1 row */
	0x0b, 0x00, 0x00, 0x00,	/* 11 bytes of rows */
	0x00, 0x00, 0x00, 0x00,	/* index at 28 */
	0x10, 0x00, 0x00, 0x00,	/* rows at 28 + 16 */
	0xe4, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* 28 start */
	0x10, 0x00, 0x00, 0x00,	/* 36 size 0x10 */
	0x00, 0x00, 0x00, 0x00,	/* 40 attributes at 0 */
	0x01, 0x00, 0x00, 0x01, 0x00,	/* 44 1 row, flexible */
	0x00, 0x08, 0x39, 0x10, 0x02, 0xf8,	/* 49 +0 */
};

#define SFT_SEC(bytes)		.data = (bytes), .size = sizeof(bytes)

/* The rows a hit gives, spelled out. */
#define SFT_SP(cfa)							\
	{ .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = (cfa), .ra_off = -8 }
#define SFT_SP_FP(cfa, fp)						\
	{ .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = (cfa), .ra_off = -8, \
	  .fp_saved = true, .fp_off = (fp) }
#define SFT_FP_FP(cfa, fp)						\
	{ .cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = (cfa), .ra_off = -8, \
	  .fp_saved = true, .fp_off = (fp) }
#define SFT_OUTERMOST		{ .ra_undefined = true }

#define SFT_HIT			.result = SFRAME_FIND_HIT
#define SFT_NONE		.result = SFRAME_FIND_NONE
#define SFT_MALFORMED		.result = SFRAME_FIND_MALFORMED

static const struct sframe_test_elf sframe_test_elf_cases[] = {
	/* Version 1 */
	{ "v1: entry row, CFA = SP + 8", SFT_SEC(sft_v1),
	  .pc = 0x401000, SFT_HIT, .row = SFT_SP(8) },
	{ "v1: after push, FP saved at CFA - 16", SFT_SEC(sft_v1),
	  .pc = 0x401001, SFT_HIT, .row = SFT_SP_FP(16, -16) },
	{ "v1: FP-based CFA", SFT_SEC(sft_v1),
	  .pc = 0x401010, SFT_HIT, .row = SFT_FP_FP(16, -16) },
	{ "v1: last row, to the function's last byte", SFT_SEC(sft_v1),
	  .pc = 0x40101f, SFT_HIT, .row = SFT_SP(8) },
	{ "v1: gap after a function", SFT_SEC(sft_v1),
	  .pc = 0x401020, SFT_NONE },
	{ "v1: below the first function", SFT_SEC(sft_v1),
	  .pc = 0x400fff, SFT_NONE },
	{ "v1: past the last function", SFT_SEC(sft_v1),
	  .pc = 0x401070, SFT_NONE },
	{ "v1: f0 up to f1's start, back to back", SFT_SEC(sft_v1),
	  .patch = { { 32, 0x30 } }, .nr_patch = 1,
	  .pc = 0x401010, SFT_HIT, .row = SFT_FP_FP(16, -16) },
	{ "v1: f0 overlapping f1, which validation refuses", SFT_SEC(sft_v1),
	  .patch = { { 32, 0x31 } }, .nr_patch = 1,
	  .pc = 0x401010, SFT_HIT, .row = SFT_FP_FP(16, -16) },
	{ "v1 PCMASK: 0x1b & 0xb matches the 0xb row", SFT_SEC(sft_v1),
	  .pc = 0x40104b, SFT_HIT, .row = SFT_SP(16) },
	{ "v1 PCMASK: 0x1c & 0xb does not (mask rule, not modulo)",
	  SFT_SEC(sft_v1), .pc = 0x40104c, SFT_HIT, .row = SFT_SP(8) },
	{ "v1 PCMASK: 0x3f & 0xb matches in the last block", SFT_SEC(sft_v1),
	  .pc = 0x40106f, SFT_HIT, .row = SFT_SP(16) },

	/* Version 2, starts relative to the section */
	{ "v2: 2-byte row starts and data words", SFT_SEC(sft_v2),
	  .pc = 0x402001, SFT_HIT, .row = SFT_SP_FP(16, -16) },
	{ "v2: row from 0x200, 2-byte CFA offset", SFT_SEC(sft_v2),
	  .pc = 0x4022ff, SFT_HIT, .row = SFT_SP_FP(0x1010, -16) },
	{ "v2 PCMASK: 12 % 16 is past the +11 row (modulo rule)",
	  SFT_SEC(sft_v2), .pc = 0x40240c, SFT_HIT, .row = SFT_SP(16) },
	{ "v2 PCMASK: 26 % 16 is before the +11 row", SFT_SEC(sft_v2),
	  .pc = 0x40241a, SFT_HIT, .row = SFT_SP(8) },
	{ "v2 PCMASK: last byte of the last block", SFT_SEC(sft_v2),
	  .pc = 0x40243f, SFT_HIT, .row = SFT_SP(16) },

	/* Version 2, PC-relative starts */
	{ "v2 PCREL: start relative to its own field", SFT_SEC(sft_v2_pcrel),
	  .pc = 0x40300f, SFT_HIT, .row = SFT_SP(8) },
	{ "v2 PCREL: 4-byte row starts and data words",
	  SFT_SEC(sft_v2_pcrel), .pc = 0x413000, SFT_HIT,
	  .row = SFT_SP_FP(0x100008, -16) },
	{ "v2 PCREL: second start relative to its own field, outermost",
	  SFT_SEC(sft_v2_pcrel), .pc = 0x423004, SFT_HIT,
	  .row = SFT_OUTERMOST },
	{ "v2 PCREL: just below the first function", SFT_SEC(sft_v2_pcrel),
	  .pc = 0x402fff, SFT_NONE },

	/* Version 3 */
	{ "v3: regular descriptor", SFT_SEC(sft_v3),
	  .pc = 0x404002, SFT_HIT, .row = SFT_SP_FP(16, -16) },
	{ "v3: FP-based CFA, to the function's last byte", SFT_SEC(sft_v3),
	  .pc = 0x40403f, SFT_HIT, .row = SFT_FP_FP(16, -16) },
	{ "v3 flexible: CFA = RSP + 8", SFT_SEC(sft_v3),
	  .pc = 0x404041, SFT_HIT, .row = SFT_SP(8) },
	{ "v3 flexible: CFA = RBP + 16, RA padding, FP at CFA - 16",
	  SFT_SEC(sft_v3), .pc = 0x404044, SFT_HIT,
	  .row = SFT_FP_FP(16, -16) },
	{ "v3 flexible: RA and FP rules, 2-byte words", SFT_SEC(sft_v3),
	  .pc = 0x40405f, SFT_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 32,
		   .ra_off = -16, .fp_saved = true, .fp_off = -24 } },
	{ "v3 PCMASK: 28 % 16 is past the +11 row", SFT_SEC(sft_v3),
	  .pc = 0x40407c, SFT_HIT, .row = SFT_SP(16) },
	{ "v3: a function with no rows is the outermost frame",
	  SFT_SEC(sft_v3), .pc = 0x404085, SFT_HIT, .row = SFT_OUTERMOST },
	{ "v3: signal frame", SFT_SEC(sft_v3), .pc = 0x404091, SFT_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8,
		   .ra_off = -8, .signal = true } },
	{ "v3: past the last function", SFT_SEC(sft_v3),
	  .pc = 0x4040a0, SFT_NONE },
	{ "v3 without PCREL: start relative to the section",
	  SFT_SEC(sft_v3_secrel), .pc = 0x405008, SFT_HIT,
	  .row = SFT_SP(8) },
	{ "v3: one-function base section", SFT_SEC(sft_v3_one),
	  .pc = 0x40800f, SFT_HIT, .row = SFT_SP(8) },
	{ "v3 flexible: two-word base section", SFT_SEC(sft_v3_flex2),
	  .pc = 0x408000, SFT_HIT, .row = SFT_SP(8) },
	{ "v3 flexible: four-word base section", SFT_SEC(sft_v3_flex4),
	  .pc = 0x408000, SFT_HIT, .row = SFT_SP(16) },
	{ "v3: a row out of order leaves the rows before it",
	  SFT_SEC(sft_v3), .patch = { { 120, 0x01 } }, .nr_patch = 1,
	  .pc = 0x404000, SFT_HIT, .row = SFT_SP(8) },
	{ "v3: a row out of order makes the one before it malformed",
	  SFT_SEC(sft_v3), .patch = { { 120, 0x01 } }, .nr_patch = 1,
	  .pc = 0x404003, SFT_MALFORMED },
	{ "v3: a bad first row makes the whole function malformed",
	  SFT_SEC(sft_v3), .patch = { { 114, 0x63 } }, .nr_patch = 1,
	  .pc = 0x404000, SFT_MALFORMED },
	{ "v3: a bad row in one function leaves the next alone",
	  SFT_SEC(sft_v3), .patch = { { 114, 0x63 } }, .nr_patch = 1,
	  .pc = 0x404041, SFT_HIT, .row = SFT_SP(8) },

	/* The header */
	{ "v2: one-function base section", SFT_SEC(sft_v2_one),
	  .pc = 0x408005, SFT_HIT, .row = SFT_SP(16) },
	{ "header: fixed FP offset applies to every row", SFT_SEC(sft_v2_one),
	  .patch = { { 5, 0xf0 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_HIT, .row = SFT_SP_FP(8, -16) },
	{ "header: RA not fixed, taken from the row", SFT_SEC(sft_v2_ra_rows),
	  .pc = 0x406003, SFT_HIT, .row = SFT_SP(8) },
	{ "header: RA neither fixed nor in the row", SFT_SEC(sft_v2_ra_rows),
	  .pc = 0x406004, SFT_MALFORMED },
	{ "header: auxiliary header moves both sub-sections",
	  SFT_SEC(sft_v2_aux), .pc = 0x407000, SFT_HIT, .row = SFT_SP(8) },

	/* Nothing describes the PC */
	{ "no row at or before the PC", SFT_SEC(sft_v2_one),
	  .patch = { { 48, 0x02 } }, .nr_patch = 1,
	  .pc = 0x408001, SFT_NONE },
	{ "v2 function with no rows", SFT_SEC(sft_v2_one),
	  .patch = { { 40, 0 } }, .nr_patch = 1, .pc = 0x408001, SFT_NONE },
	{ "no descriptors at all", SFT_SEC(sft_v2_one),
	  .patch = { { 8, 0 } }, .nr_patch = 1, .pc = 0x408001, SFT_NONE },

	/* Malformed headers: sframe_sec_init() refuses them */
	{ "truncated header", .data = sft_v2_one, .size = 20,
	  .init = -ENOEXEC },
	{ "bad magic", SFT_SEC(sft_v2_one), .patch = { { 0, 0xe3 } },
	  .nr_patch = 1, .init = -ENOEXEC },
	{ "big-endian magic", SFT_SEC(sft_v2_one),
	  .patch = { { 0, 0xde }, { 1, 0xe2 } }, .nr_patch = 2,
	  .init = -EOPNOTSUPP },
	{ "unknown version", SFT_SEC(sft_v2_one), .patch = { { 2, 4 } },
	  .nr_patch = 1, .init = -EOPNOTSUPP },
	{ "other ABI (AArch64)", SFT_SEC(sft_v2_one), .patch = { { 4, 2 } },
	  .nr_patch = 1, .init = -EOPNOTSUPP },
	{ "descriptor table past the end", SFT_SEC(sft_v2_one),
	  .patch = { { 8, 3 } }, .nr_patch = 1, .init = -ENOEXEC },
	{ "row sub-section past the end", SFT_SEC(sft_v2_one),
	  .patch = { { 16, 10 } }, .nr_patch = 1, .init = -ENOEXEC },

	/* Malformed descriptors */
	{ "descriptors out of order (below an earlier probe)",
	  SFT_SEC(sft_v2_unsorted3), .pc = 0x403050, SFT_MALFORMED },
	{ "descriptors out of order (above an earlier probe)",
	  SFT_SEC(sft_v2_unsorted4), .pc = 0x403000, SFT_MALFORMED },
	{ "v2 PCMASK with repeat size 0", SFT_SEC(sft_v2_one),
	  .patch = { { 44, 0x10 } }, .nr_patch = 1,
	  .pc = 0x408005, SFT_MALFORMED },
	{ "v3 PCMASK with repeat size 0", SFT_SEC(sft_v3_one),
	  .patch = { { 46, 0x10 } }, .nr_patch = 1,
	  .pc = 0x408005, SFT_MALFORMED },
	{ "row start width code 3", SFT_SEC(sft_v2_one),
	  .patch = { { 44, 0x03 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "first row past the row sub-section", SFT_SEC(sft_v2_one),
	  .patch = { { 36, 100 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "row count of 2^32 - 1", SFT_SEC(sft_v2_one),
	  .patch = { { 40, 0xff }, { 41, 0xff }, { 42, 0xff }, { 43, 0xff } },
	  .nr_patch = 4, .pc = 0x40800f, SFT_MALFORMED },
	{ "row count past the rows present", SFT_SEC(sft_v2_one),
	  .patch = { { 40, 4 } }, .nr_patch = 1,
	  .pc = 0x40800f, SFT_MALFORMED },
	{ "v3 row count of 2^16 - 1 past the rows present",
	  SFT_SEC(sft_v3_one), .patch = { { 44, 0xff }, { 45, 0xff } },
	  .nr_patch = 2, .pc = 0x40800f, SFT_MALFORMED },
	{ "v3 attribute record past the row sub-section", SFT_SEC(sft_v3_one),
	  .patch = { { 40, 4 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 unknown FDE type", SFT_SEC(sft_v3_one),
	  .patch = { { 47, 2 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 function past the end of the address space",
	  SFT_SEC(sft_v3_wrap), .pc = 0xfffffffffffffff8, SFT_MALFORMED },

	/* Malformed rows */
	{ "data words past the end of the section", SFT_SEC(sft_v2_one),
	  .patch = { { 55, 0x47 } }, .nr_patch = 1,
	  .pc = 0x40800f, SFT_MALFORMED },
	{ "row starts not increasing (equal)", SFT_SEC(sft_v2_one),
	  .patch = { { 54, 0x04 } }, .nr_patch = 1,
	  .pc = 0x40800f, SFT_MALFORMED },
	{ "row starts decreasing", SFT_SEC(sft_v2_one),
	  .patch = { { 51, 0x09 } }, .nr_patch = 1,
	  .pc = 0x40800f, SFT_MALFORMED },
	{ "row starting at the function's end", SFT_SEC(sft_v2_one),
	  .patch = { { 54, 0x10 } }, .nr_patch = 1,
	  .pc = 0x40800f, SFT_MALFORMED },
	{ "v2 PCMASK row starting at the repeat size", SFT_SEC(sft_v2_one),
	  .patch = { { 44, 0x10 }, { 45, 8 } }, .nr_patch = 2,
	  .pc = 0x40800f, SFT_MALFORMED },
	{ "data word width code 3", SFT_SEC(sft_v2_one),
	  .patch = { { 49, 0x63 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "more data words than AMD64 defines", SFT_SEC(sft_v2_three_words),
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v1 row with no data words", SFT_SEC(sft_v1_no_words),
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: a lone data word", SFT_SEC(sft_v3_one),
	  .patch = { { 47, 1 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: dereferenced CFA (DRAP) is refused",
	  SFT_SEC(sft_v3_flex2), .patch = { { 51, 0x33 }, { 52, 0xf8 } },
	  .nr_patch = 2, .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: CFA from another register is refused",
	  SFT_SEC(sft_v3_flex2), .patch = { { 51, 0x51 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: CFA relative to itself", SFT_SEC(sft_v3_flex2),
	  .patch = { { 51, 0x02 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: RA in a register is refused", SFT_SEC(sft_v3_flex4),
	  .patch = { { 53, 0x19 }, { 54, 0 } }, .nr_patch = 2,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: control word with stray register bits",
	  SFT_SEC(sft_v3_flex4), .patch = { { 53, 0x08 } }, .nr_patch = 1,
	  .pc = 0x408000, SFT_MALFORMED },
	{ "v3 flexible: FP rule cut short", SFT_SEC(sft_v3_flex4),
	  .patch = { { 53, 0 }, { 54, 0x02 } }, .nr_patch = 2,
	  .pc = 0x408000, SFT_MALFORMED },
};

/*
 * Copy a case's section into @buf, of @c->size bytes, with its patches.
 * False if a patch lies outside the section: the case itself is wrong.
 */
static inline bool sframe_test_elf_bytes(const struct sframe_test_elf *c,
					 u8 *buf)
{
	unsigned int i;

	memcpy(buf, c->data, c->size);
	for (i = 0; i < c->nr_patch; i++) {
		if (c->patch[i].off >= c->size)
			return false;
		buf[c->patch[i].off] = c->patch[i].val;
	}
	return true;
}

/**
 * struct sframe_test_many - a section of one function with many rows
 * @name: what the case shows.
 * @version: SFrame version, 1 or 2.
 * @pcmask: a version 1 PCMASK function, 0x100 bytes, whose row i has the
 *	mask i; otherwise row i starts at byte i of a function of @nr bytes.
 * @nr: rows.
 * @ra_off: 0: the header fixes the RA at CFA - 8; otherwise every row
 *	has this RA offset.
 * @size: what sframe_table_size() returns; 0 lets sframe_table_build()
 *	convert the section.
 * @rules: 0: every row has a rule of its own; otherwise the rows repeat
 *	this many rules, which the table must keep once each.
 *
 * Row i has CFA = SP + 8 + 8 * i (i modulo @rules, if set), 4-byte data
 * words and 2-byte starts.
 * sframe_sec_validate() accepts each of these sections: the caps on a
 * converted table are checked apart from it.
 */
struct sframe_test_many {
	const char *name;
	u8 version;
	bool pcmask;
	u32 nr;
	s32 ra_off;
	int size;
	u32 rules;
};

/* Where the function of a struct sframe_test_many section starts. */
#define SFT_MANY_FUNC		(SFT_BASE + 0x10000)

static const struct sframe_test_many sframe_test_many_cases[] = {
	{ "65535 rows: converted", 2, false, SFRAME_MAX_FUNC_FRES, 0, 0 },
	{ "65536 rows: refused", 2, false, SFRAME_MAX_FUNC_FRES + 1, 0,
	  -E2BIG },
	{ "v1 with 65535 rows: converted", 1, false, SFRAME_MAX_FUNC_FRES, 0,
	  0 },
	{ "v1 PCMASK of 16 rows: converted", 1, true, SFRAME_MAX_MASK_FRES, 0,
	  0 },
	{ "v1 PCMASK of 17 rows: refused", 1, true, SFRAME_MAX_MASK_FRES + 1,
	  0, -E2BIG },
	{ "4-byte RA offsets: converted", 2, false, 4, -0x123458, 0 },
	{ "1000 rows of 7 rules: 7 kept", 2, false, 1000, 0, 0, 7 },
	{ "v1 PCMASK of 16 rows, 3 rules: 3 kept", 1, true,
	  SFRAME_MAX_MASK_FRES, 0, 0, 3 },
	{ "4-byte RA offsets, 1 rule: 1 kept", 2, false, 300, -0x123458, 0,
	  1 },
};

static inline unsigned int sft_many_row_len(const struct sframe_test_many *c)
{
	return 3 + (c->ra_off ? 8 : 4);
}

static inline size_t sframe_test_many_size(const struct sframe_test_many *c)
{
	return SFRAME_HDR_SIZE +
	       (c->version == 1 ? SFRAME_V1_FDE_SIZE : SFRAME_V2_FDE_SIZE) +
	       (size_t)c->nr * sft_many_row_len(c);
}

/* The function's size: one byte per row, or the PCMASK block. */
static inline u32 sft_many_func_size(const struct sframe_test_many *c)
{
	return c->pcmask ? 0x100 : c->nr;
}

static inline u8 *sft_put(u8 *p, u64 v, unsigned int bytes)
{
	while (bytes--) {
		*p++ = v;
		v >>= 8;
	}
	return p;
}

/* Write a case's section into @buf, of sframe_test_many_size() bytes. */
static inline void sframe_test_many_fill(const struct sframe_test_many *c,
					 u8 *buf)
{
	unsigned int fde_size = c->version == 1 ? SFRAME_V1_FDE_SIZE :
						  SFRAME_V2_FDE_SIZE;
	unsigned int n = c->ra_off ? 2 : 1;
	u8 *p = buf;
	u32 i;

	p = sft_put(p, SFRAME_MAGIC, 2);
	p = sft_put(p, c->version, 1);
	p = sft_put(p, SFRAME_F_FDE_SORTED, 1);
	p = sft_put(p, SFRAME_ABI_AMD64_ENDIAN_LITTLE, 1);
	p = sft_put(p, 0, 1);				/* FP not fixed */
	p = sft_put(p, c->ra_off ? 0 : 0xf8, 1);	/* RA at CFA - 8 */
	p = sft_put(p, 0, 1);
	p = sft_put(p, 1, 4);				/* descriptors */
	p = sft_put(p, c->nr, 4);			/* rows */
	p = sft_put(p, (u64)c->nr * sft_many_row_len(c), 4);
	p = sft_put(p, 0, 4);
	p = sft_put(p, fde_size, 4);
	p = sft_put(p, SFT_MANY_FUNC - SFT_BASE, 4);
	p = sft_put(p, sft_many_func_size(c), 4);
	p = sft_put(p, 0, 4);
	p = sft_put(p, c->nr, 4);
	p = sft_put(p, 1 | (c->pcmask ? 0x10 : 0), 1);	/* 2-byte starts */
	if (c->version != 1)
		p = sft_put(p, 0, 3);
	for (i = 0; i < c->nr; i++) {
		p = sft_put(p, i, 2);
		p = sft_put(p, 0x41 | n << 1, 1);	/* SP, 4-byte words */
		p = sft_put(p, 8 + 8 * (u64)(c->rules ? i % c->rules : i), 4);
		if (c->ra_off)
			p = sft_put(p, (u32)c->ra_off, 4);
	}
}

/**
 * struct sframe_test_jit - one lookup in a JIT registry
 * @name: what the case shows.
 * @fdes: descriptors written into the registry, from index 0.
 * @nr_fdes: their number, at most @fde_cap.
 * @fres: frame rows written into the registry, from index 0.
 * @nr_fres: their number, at most @fre_cap.
 * @fde_cap: the registry's descriptor capacity.
 * @fre_cap: its frame-row capacity.
 * @fde_count: the published count in the header.
 * @seq: the sequence count in the header.
 * @reserved0: the header's reserved0, which must be zero.
 * @pc: the address looked up; the text range is [SFT_TEXT, SFT_TEXT_END).
 * @result: what sframe_jit_find() returns.
 * @row: the row it gives, for SFRAME_FIND_HIT.
 */
struct sframe_test_jit {
	const char *name;
	const struct sframe_jit_fde *fdes;
	u32 nr_fdes;
	const struct sframe_jit_fre *fres;
	u32 nr_fres;
	u32 fde_cap;
	u32 fre_cap;
	u32 fde_count;
	u32 seq;
	u32 reserved0;
	unsigned long pc;
	enum sframe_find_result result;
	struct sframe_row row;
};

#define SFT_TEXT		0x7f0000000000UL
#define SFT_TEXT_END		(SFT_TEXT + 0x10000)
#define SFT_F0			(SFT_TEXT + 0x1000)
#define SFT_F1			(SFT_TEXT + 0x2000)
#define SFT_F2			(SFT_TEXT + 0x3000)
#define SFT_F3			(SFT_TEXT + 0x4000)

/*
 * A registry as a JIT fills it:
 *   F0, 11 bytes: push %rbp; mov %rsp,%rbp; mov $42,%eax; pop %rbp; ret
 *   F1, 4 stubs of 16 bytes (PCMASK), the CFA moving at +11 of each
 *   F2, reclaimed (tombstone)
 *   F3, a thread's entry: the outermost frame
 */
static const struct sframe_jit_fde sft_jit_fdes[] = {
	{ .func_start = SFT_F0, .func_size = 11, .fre_start = 0,
	  .fre_count = 4, .type = SFRAME_JIT_FDE_PCINC },
	{ .func_start = SFT_F1, .func_size = 0x40, .fre_start = 4,
	  .fre_count = 2, .type = SFRAME_JIT_FDE_PCMASK, .rep_size = 16 },
	{ .func_start = SFT_F2, .func_size = 0x10, .fre_start = 6,
	  .fre_count = 1, .flags = SFRAME_JIT_FDE_TOMBSTONE },
	{ .func_start = SFT_F3, .func_size = 0x10, .fre_start = 7,
	  .fre_count = 1 },
};

static const struct sframe_jit_fre sft_jit_fres[] = {
	/* 0: F0 entry: CFA = SP + 8 */
	{ .start_off = 0, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	/* 1: after push %rbp */
	{ .start_off = 1, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_FRE_FP_SAVED },
	/* 2: after mov %rsp,%rbp */
	{ .start_off = 4, .cfa_base = SFRAME_JIT_CFA_FP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_FRE_FP_SAVED },
	/* 3: after pop %rbp */
	{ .start_off = 10, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	/* 4: F1, +0 of each stub */
	{ .start_off = 0, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	/* 5: +11 of each stub */
	{ .start_off = 11, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 16,
	  .ra_off = -8 },
	/* 6: F2 */
	{ .start_off = 0, .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,
	  .ra_off = -8 },
	/* 7: F3 */
	{ .start_off = 0, .flags = SFRAME_JIT_FRE_RA_UNDEFINED },
};

#define SFT_JIT_STD							\
	.fdes = sft_jit_fdes, .nr_fdes = ARRAY_SIZE(sft_jit_fdes),	\
	.fres = sft_jit_fres, .nr_fres = ARRAY_SIZE(sft_jit_fres),	\
	.fde_cap = 8, .fre_cap = 16

/* A descriptor, all fields given. */
#define SFT_JFDE(start, size, first, count, fl, ty, rep)		\
	{ .func_start = (start), .func_size = (size),			\
	  .fre_start = (first), .fre_count = (count), .flags = (fl),	\
	  .type = (ty), .rep_size = (rep) }

/* F0 as in sft_jit_fdes. */
#define SFT_F0_FDE	SFT_JFDE(SFT_F0, 11, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0)

/* One descriptor with the rows of sft_jit_fres. */
#define SFT_JIT_ONE(fde)						\
	.fdes = (const struct sframe_jit_fde[]){ fde },			\
	.nr_fdes = 1,							\
	.fres = sft_jit_fres, .nr_fres = ARRAY_SIZE(sft_jit_fres),	\
	.fde_cap = 8, .fre_cap = 16

/* Function F0 with its own rows. */
#define SFT_JIT_ROWS(...)						\
	.fdes = (const struct sframe_jit_fde[]){ SFT_F0_FDE },		\
	.nr_fdes = 1,							\
	.fres = (const struct sframe_jit_fre[]){ __VA_ARGS__ },	\
	.nr_fres = 4, .fde_cap = 8, .fre_cap = 16

/*
 * A 32-byte function at F0 with three rows starting at @a, @b and @c,
 * the rows' CFA offsets 8, 16 and 24 telling which one a lookup took.
 */
#define SFT_JIT_ROWS3(a, b, c)						\
	.fdes = (const struct sframe_jit_fde[]){			\
		SFT_JFDE(SFT_F0, 32, 0, 3, 0, SFRAME_JIT_FDE_PCINC, 0) },	\
	.nr_fdes = 1,							\
	.fres = (const struct sframe_jit_fre[]){			\
		{ .start_off = (a), .cfa_off = 8, .ra_off = -8 },	\
		{ .start_off = (b), .cfa_off = 16, .ra_off = -8 },	\
		{ .start_off = (c), .cfa_off = 24, .ra_off = -8 } },	\
	.nr_fres = 3, .fde_cap = 8, .fre_cap = 16, .fde_count = 1

/* Rows (a, b, c) of SFT_JIT_ROWS3() at offset @off: malformed. */
#define SFT_JIT_DISORDER(a, b, c, off)					\
	{ "malformed: rows (" #a ", " #b ", " #c "), offset " #off,	\
	  SFT_JIT_ROWS3(a, b, c), .seq = 0, .pc = SFT_F0 + (off),	\
	  .result = SFRAME_FIND_MALFORMED }

/* A row of F0 for SFT_JIT_ROWS(). */
#define SFT_JROW(start)							\
	{ .start_off = (start), .cfa_base = SFRAME_JIT_CFA_SP,		\
	  .cfa_off = 8, .ra_off = -8 }

/* A row with the CFA base and flags given. */
#define SFT_JROW_ODD(start, base, fl)					\
	{ .start_off = (start), .cfa_base = (base), .cfa_off = 8,	\
	  .ra_off = -8, .flags = (fl) }

static const struct sframe_test_jit sframe_test_jit_cases[] = {
	/* Hits */
	{ "hit: F0 entry", SFT_JIT_STD, .fde_count = 4, .seq = 0,
	  .pc = SFT_F0, .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8,
		   .ra_off = -8 } },
	{ "hit: after push, FP saved", SFT_JIT_STD, .fde_count = 4,
	  .seq = 0, .pc = SFT_F0 + 3, .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,
		   .ra_off = -8, .fp_saved = true, .fp_off = -16 } },
	{ "hit: FP-based CFA", SFT_JIT_STD, .fde_count = 4, .seq = 2,
	  .pc = SFT_F0 + 4, .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = 16,
		   .ra_off = -8, .fp_saved = true, .fp_off = -16 } },
	{ "hit: last byte of F0", SFT_JIT_STD, .fde_count = 4, .seq = 0,
	  .pc = SFT_F0 + 10, .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8,
		   .ra_off = -8 } },
	{ "hit: PCMASK, 0x1c % 16 is past the +11 row", SFT_JIT_STD,
	  .fde_count = 4, .seq = 0, .pc = SFT_F1 + 0x1c,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,
		   .ra_off = -8 } },
	{ "hit: PCMASK, 0x2a % 16 is before it", SFT_JIT_STD,
	  .fde_count = 4, .seq = 0, .pc = SFT_F1 + 0x2a,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8,
		   .ra_off = -8 } },
	{ "hit: outermost frame", SFT_JIT_STD, .fde_count = 4, .seq = 0,
	  .pc = SFT_F3 + 4, .result = SFRAME_FIND_HIT,
	  .row = { .ra_undefined = true } },

	/* Misses */
	{ "miss: below the first function", SFT_JIT_STD, .fde_count = 4,
	  .seq = 0, .pc = SFT_TEXT, .result = SFRAME_FIND_NONE },
	{ "miss: gap after F0", SFT_JIT_STD, .fde_count = 4, .seq = 0,
	  .pc = SFT_F0 + 11, .result = SFRAME_FIND_NONE },
	{ "miss: past the last function", SFT_JIT_STD, .fde_count = 4,
	  .seq = 0, .pc = SFT_F3 + 0x10, .result = SFRAME_FIND_NONE },
	{ "miss: nothing published", SFT_JIT_STD, .fde_count = 0, .seq = 0,
	  .pc = SFT_F0, .result = SFRAME_FIND_NONE },
	{ "miss: F1 written but not published", SFT_JIT_STD,
	  .fde_count = 1, .seq = 0, .pc = SFT_F1, .result = SFRAME_FIND_NONE },
	{ "miss: zero-sized function",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 0, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_NONE },

	/* Tombstones and the sequence count */
	{ "tombstone: F2 reclaimed", SFT_JIT_STD, .fde_count = 4, .seq = 0,
	  .pc = SFT_F2 + 4, .result = SFRAME_FIND_TOMBSTONE },
	{ "tombstone: past a reclaimed function is a miss", SFT_JIT_STD,
	  .fde_count = 4, .seq = 0, .pc = SFT_F2 + 0x10,
	  .result = SFRAME_FIND_NONE },
	{ "tombstone: with an unknown flag is malformed",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 0, 4,
			       SFRAME_JIT_FDE_TOMBSTONE | 0x8000,
			       SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "retry: seq odd, rewrite in progress", SFT_JIT_STD,
	  .fde_count = 4, .seq = 3, .pc = SFT_F0,
	  .result = SFRAME_FIND_RETRY },
	{ "retry: seq odd, whatever the PC", SFT_JIT_STD, .fde_count = 4,
	  .seq = 0xffffffff, .pc = SFT_TEXT, .result = SFRAME_FIND_RETRY },

	/* The published count is clamped to the capacity */
	{ "count above capacity: clamped, not read past the area",
	  .fdes = sft_jit_fdes, .nr_fdes = 2, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 2, .fre_cap = 16,
	  .fde_count = 0xffffffff, .seq = 0, .pc = SFT_F3 + 4,
	  .result = SFRAME_FIND_NONE },
	{ "count above capacity: published ones still found",
	  .fdes = sft_jit_fdes, .nr_fdes = 2, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 2, .fre_cap = 16,
	  .fde_count = 3, .seq = 0, .pc = SFT_F1 + 0x1c,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,
		   .ra_off = -8 } },

	/* Malformed descriptors */
	{ "malformed: unknown descriptor flag",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 0, 4, 0x2, SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: unknown descriptor type",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 0, 4, 0, 2, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: PCMASK with repeat size 0",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 0, 4, 0, SFRAME_JIT_FDE_PCMASK,
			       0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 5,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: no rows",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 0, 0, 0, SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: rows past the row capacity",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 14, 4, 0, SFRAME_JIT_FDE_PCINC,
			       0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: first row index past the capacity",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 11, 0xffffffff, 2, 0,
			       SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: function starts below the text range",
	  SFT_JIT_ONE(SFT_JFDE(SFT_TEXT - 4, 0x2000, 0, 4, 0,
			       SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_TEXT,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: function ends past the text range",
	  SFT_JIT_ONE(SFT_JFDE(SFT_F0, 0x10000, 0, 4, 0,
			       SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: function wraps around the address space",
	  SFT_JIT_ONE(SFT_JFDE(ULONG_MAX - 0xf, 0x100, 0, 4, 0,
			       SFRAME_JIT_FDE_PCINC, 0)),
	  .fde_count = 1, .seq = 0, .pc = ULONG_MAX - 1,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: descriptors out of order",
	  .fdes = (const struct sframe_jit_fde[]){
		SFT_F0_FDE,
		SFT_JFDE(SFT_F3, 11, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0),
		SFT_JFDE(SFT_F2, 11, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0),
	  },
	  .nr_fdes = 3, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 8, .fre_cap = 16,
	  .fde_count = 3, .seq = 0, .pc = SFT_F3 + 4,
	  .result = SFRAME_FIND_MALFORMED },

	/*
	 * Descriptors out of order or overlapping, where the search meets
	 * them: the one before the descriptor it finds must end at or
	 * before it.  The search over four probes the third and fourth
	 * only, for a PC in the third.
	 */
	{ "malformed: the unprobed descriptor before is out of order",
	  .fdes = (const struct sframe_jit_fde[]){
		SFT_F0_FDE,
		SFT_JFDE(SFT_F2, 0x10, 6, 1, 0, SFRAME_JIT_FDE_PCINC, 0),
		SFT_JFDE(SFT_F1, 0x40, 4, 2, 0, SFRAME_JIT_FDE_PCMASK, 16),
		SFT_JFDE(SFT_F3, 0x10, 7, 1, 0, SFRAME_JIT_FDE_PCINC, 0),
	  },
	  .nr_fdes = 4, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 8, .fre_cap = 16,
	  .fde_count = 4, .seq = 0, .pc = SFT_F1 + 0x1c,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: overlapping descriptors, in both",
	  .fdes = (const struct sframe_jit_fde[]){
		SFT_JFDE(SFT_F0, 0x1800, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0),
		SFT_JFDE(SFT_F1, 0x40, 4, 2, 0, SFRAME_JIT_FDE_PCMASK, 16),
	  },
	  .nr_fdes = 2, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 8, .fre_cap = 16,
	  .fde_count = 2, .seq = 0, .pc = SFT_F1 + 0x1c,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: overlapping descriptors, past the later one",
	  .fdes = (const struct sframe_jit_fde[]){
		SFT_JFDE(SFT_F0, 0x1800, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0),
		SFT_JFDE(SFT_F1, 0x40, 4, 2, 0, SFRAME_JIT_FDE_PCMASK, 16),
	  },
	  .nr_fdes = 2, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 8, .fre_cap = 16,
	  .fde_count = 2, .seq = 0, .pc = SFT_F1 + 0x100,
	  .result = SFRAME_FIND_MALFORMED },
	{ "hit: functions back to back",
	  .fdes = (const struct sframe_jit_fde[]){
		SFT_JFDE(SFT_F0, 0x1000, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0),
		SFT_JFDE(SFT_F1, 0x40, 4, 2, 0, SFRAME_JIT_FDE_PCMASK, 16),
	  },
	  .nr_fdes = 2, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 8, .fre_cap = 16,
	  .fde_count = 2, .seq = 0, .pc = SFT_F1 + 0x1c,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,
		   .ra_off = -8 } },
	{ "hit: a zero-sized function at the next one's start",
	  .fdes = (const struct sframe_jit_fde[]){
		SFT_JFDE(SFT_F0, 0, 0, 4, 0, SFRAME_JIT_FDE_PCINC, 0),
		SFT_F0_FDE,
	  },
	  .nr_fdes = 2, .fres = sft_jit_fres,
	  .nr_fres = ARRAY_SIZE(sft_jit_fres), .fde_cap = 8, .fre_cap = 16,
	  .fde_count = 2, .seq = 0, .pc = SFT_F0 + 3,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,
		   .ra_off = -8, .fp_saved = true, .fp_off = -16 } },

	/*
	 * Rows out of order where the search meets them: the one before
	 * the row it picks, which it may not have probed, is checked too.
	 */
	SFT_JIT_DISORDER(0, 20, 4, 1),
	SFT_JIT_DISORDER(0, 20, 4, 5),
	SFT_JIT_DISORDER(0, 20, 4, 10),
	SFT_JIT_DISORDER(0, 20, 4, 25),
	SFT_JIT_DISORDER(0, 4, 2, 1),
	SFT_JIT_DISORDER(0, 4, 2, 3),
	SFT_JIT_DISORDER(0, 4, 2, 5),
	SFT_JIT_DISORDER(0, 4, 2, 31),
	SFT_JIT_DISORDER(0, 4, 4, 1),
	SFT_JIT_DISORDER(0, 4, 4, 4),
	SFT_JIT_DISORDER(0, 4, 4, 5),
	SFT_JIT_DISORDER(0, 4, 4, 31),
	{ "hit: rows (0, 4, 20), offset 10, the middle row",
	  SFT_JIT_ROWS3(0, 4, 20), .seq = 0, .pc = SFT_F0 + 10,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,
		   .ra_off = -8 } },
	{ "hit: rows (0, 4, 20), offset 20, the last row",
	  SFT_JIT_ROWS3(0, 4, 20), .seq = 0, .pc = SFT_F0 + 20,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 24,
		   .ra_off = -8 } },

	/* Malformed rows */
	{ "malformed: first row does not start at 0",
	  SFT_JIT_ROWS(SFT_JROW(1), SFT_JROW(2), SFT_JROW(3), SFT_JROW(4)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 5,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: row starts equal",
	  SFT_JIT_ROWS(SFT_JROW(0), SFT_JROW(2), SFT_JROW(4), SFT_JROW(4)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 5,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: row starts decreasing",
	  SFT_JIT_ROWS(SFT_JROW(0), SFT_JROW(2), SFT_JROW(6), SFT_JROW(4)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 7,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: row starts past the function",
	  SFT_JIT_ROWS(SFT_JROW(0), SFT_JROW(2), SFT_JROW(11), SFT_JROW(12)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 1,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: PCMASK row starts past the repeat size",
	  .fdes = (const struct sframe_jit_fde[]){
		{ .func_start = SFT_F1, .func_size = 0x40, .fre_start = 0,
		  .fre_count = 2, .type = SFRAME_JIT_FDE_PCMASK,
		  .rep_size = 16 },
	  },
	  .nr_fdes = 1,
	  .fres = (const struct sframe_jit_fre[]){ SFT_JROW(0),
						   SFT_JROW(16) },
	  .nr_fres = 2, .fde_cap = 8, .fre_cap = 16, .fde_count = 1,
	  .seq = 0, .pc = SFT_F1 + 3, .result = SFRAME_FIND_MALFORMED },
	{ "malformed: unknown CFA base",
	  SFT_JIT_ROWS(SFT_JROW_ODD(0, 2, 0), SFT_JROW(1), SFT_JROW(2),
		       SFT_JROW(3)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: unknown row flag",
	  SFT_JIT_ROWS(SFT_JROW(0), SFT_JROW(1),
		       SFT_JROW_ODD(2, SFRAME_JIT_CFA_SP, 0x4), SFT_JROW(3)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 2,
	  .result = SFRAME_FIND_MALFORMED },
	{ "malformed: a row's reserved field is not zero",
	  SFT_JIT_ROWS(SFT_JROW(0), SFT_JROW(1),
		       { .start_off = 2, .cfa_base = SFRAME_JIT_CFA_SP,
			 .cfa_off = 8, .ra_off = -8, .reserved = 0x100 },
		       SFT_JROW(3)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 2,
	  .result = SFRAME_FIND_MALFORMED },
	{ "the row before one with a reserved field still hits",
	  SFT_JIT_ROWS(SFT_JROW(0), SFT_JROW(1),
		       { .start_off = 2, .cfa_base = SFRAME_JIT_CFA_SP,
			 .cfa_off = 8, .ra_off = -8, .reserved = 0x100 },
		       SFT_JROW(3)),
	  .fde_count = 1, .seq = 0, .pc = SFT_F0 + 1,
	  .result = SFRAME_FIND_HIT,
	  .row = { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8,
		   .ra_off = -8 } },
	{ "malformed: the header's reserved0 is not zero", SFT_JIT_STD,
	  .fde_count = 4, .seq = 0, .reserved0 = 1, .pc = SFT_F0,
	  .result = SFRAME_FIND_MALFORMED },
};

/**
 * struct sframe_test_cjit - one lookup in a compact JIT registry
 * @name: what the case shows.
 * @fdes: compact descriptors written into the registry, from index 0.
 * @nr_fdes: their number, at most @fde_cap.
 * @fres: compact rows written into the registry, from index 0.
 * @nr_fres: their number, at most @fre_cap.
 * @rules: frame rules written into the registry, from index 0.
 * @nr_rules: their number, at most @rule_cap.
 * @fde_cap: the registry's descriptor capacity.
 * @fre_cap: its row capacity.
 * @rule_cap: its rule capacity.
 * @fde_count: the published count in the header.
 * @seq: the sequence count in the header.
 * @reserved0: the header's reserved0, which must be zero.
 * @pc: the address looked up; the text range is [SFT_TEXT, SFT_TEXT_END).
 * @result: what sframe_jit_find() returns.
 * @row: the row it gives, for SFRAME_FIND_HIT.
 */
struct sframe_test_cjit {
	const char *name;
	const struct sframe_jit_cfde *fdes;
	u32 nr_fdes;
	const struct sframe_jit_cfre *fres;
	u32 nr_fres;
	const struct sframe_jit_rule *rules;
	u32 nr_rules;
	u32 fde_cap;
	u32 fre_cap;
	u32 rule_cap;
	u32 fde_count;
	u32 seq;
	u32 reserved0;
	unsigned long pc;
	enum sframe_find_result result;
	struct sframe_row row;
};

/* A compact descriptor, all fields given; @off is from SFT_TEXT. */
#define SFT_CFDE(off, size, first, count, fl, rep)			\
	{ .func_off = (off), .func_size = (size), .fre_start = (first),	\
	  .fre_count = (count), .flags = (fl), .rep_size = (rep) }

/* The registry of sft_jit_fdes in compact records, and one more. */
#define SFT_CF0		0x1000
#define SFT_CF1		0x2000
#define SFT_CF2		0x3000
#define SFT_CF3		0x4000
#define SFT_CF4		0x5000

/*
 * F0 to F3 as in sft_jit_fdes, and F4, a copy of F0 that shares its
 * rows, as a table whose functions have the same shape does.
 */
static const struct sframe_jit_cfde sft_cjit_fdes[] = {
	SFT_CFDE(SFT_CF0, 11, 0, 4, 0, 0),
	SFT_CFDE(SFT_CF1, 0x40, 4, 2, SFRAME_JIT_CFDE_PCMASK, 16),
	SFT_CFDE(SFT_CF2, 0x10, 6, 1, SFRAME_JIT_FDE_TOMBSTONE, 0),
	SFT_CFDE(SFT_CF3, 0x10, 7, 1, 0, 0),
	SFT_CFDE(SFT_CF4, 11, 0, 4, 0, 0),
};

static const struct sframe_jit_cfre sft_cjit_fres[] = {
	/* F0 and F4: entry, after push %rbp, mov %rsp,%rbp, pop %rbp */
	{ 0, 0 }, { 1, 1 }, { 4, 2 }, { 10, 0 },
	/* F1, +0 and +11 of each stub */
	{ 0, 0 }, { 11, 3 },
	/* F2 */
	{ 0, 0 },
	/* F3 */
	{ 0, 4 },
};

static const struct sframe_jit_rule sft_cjit_rules[] = {
	/* 0: CFA = SP + 8 */
	{ .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8, .ra_off = -8 },
	/* 1: after push %rbp */
	{ .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 16, .ra_off = -8,
	  .fp_off = -16, .flags = SFRAME_JIT_FRE_FP_SAVED },
	/* 2: after mov %rsp,%rbp */
	{ .cfa_base = SFRAME_JIT_CFA_FP, .cfa_off = 16, .ra_off = -8,
	  .fp_off = -16, .flags = SFRAME_JIT_FRE_FP_SAVED },
	/* 3: CFA = SP + 16, FP unchanged */
	{ .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 16, .ra_off = -8 },
	/* 4: outermost */
	{ .flags = SFRAME_JIT_FRE_RA_UNDEFINED },
};

#define SFT_CJIT_RULES							\
	.rules = sft_cjit_rules, .nr_rules = ARRAY_SIZE(sft_cjit_rules),	\
	.rule_cap = ARRAY_SIZE(sft_cjit_rules)

/* The first @n descriptors of sft_cjit_fdes, @count published. */
#define SFT_CJIT_REG(n, cap, count)					\
	.fdes = sft_cjit_fdes, .nr_fdes = (n),				\
	.fres = sft_cjit_fres, .nr_fres = ARRAY_SIZE(sft_cjit_fres),	\
	SFT_CJIT_RULES, .fde_cap = (cap), .fre_cap = 16,		\
	.fde_count = (count)

#define SFT_CJIT_STD							\
	SFT_CJIT_REG(ARRAY_SIZE(sft_cjit_fdes), 8,			\
		     ARRAY_SIZE(sft_cjit_fdes))

/* The descriptors given, published, with the rows and rules above. */
#define SFT_CJIT_FDES(...)						\
	.fdes = (const struct sframe_jit_cfde[]){ __VA_ARGS__ },		\
	.nr_fdes = ARRAY_SIZE(((const struct sframe_jit_cfde[]){		\
			      __VA_ARGS__ })),				\
	.fres = sft_cjit_fres, .nr_fres = ARRAY_SIZE(sft_cjit_fres),	\
	SFT_CJIT_RULES, .fde_cap = 8, .fre_cap = 16,			\
	.fde_count = ARRAY_SIZE(((const struct sframe_jit_cfde[]){	\
				__VA_ARGS__ }))

/* F0, published, with the four rows given. */
#define SFT_CJIT_F0(...)						\
	.fdes = (const struct sframe_jit_cfde[]){			\
		SFT_CFDE(SFT_CF0, 11, 0, 4, 0, 0) },			\
	.nr_fdes = 1,							\
	.fres = (const struct sframe_jit_cfre[]){ __VA_ARGS__ },	\
	.nr_fres = 4, .fde_cap = 8, .fre_cap = 16, .fde_count = 1

/* F0 with the four rows given, and the rules above. */
#define SFT_CJIT_ROWS(...)						\
	.fdes = (const struct sframe_jit_cfde[]){			\
		SFT_CFDE(SFT_CF0, 11, 0, 4, 0, 0) },			\
	.nr_fdes = 1,							\
	.fres = (const struct sframe_jit_cfre[]){ __VA_ARGS__ },	\
	.nr_fres = 4, .fde_cap = 8, .fre_cap = 16, .fde_count = 1,	\
	SFT_CJIT_RULES

/*
 * F0 with the rows of sft_cjit_fres, and two rules: rule 0 as there,
 * rule 1, which the row at 1 names, as given.  Rule 2, which the row at
 * 4 names, is never written: a zero rule, CFA = SP.
 */
#define SFT_CJIT_RULE1(...)						\
	SFT_CJIT_F0({ 0, 0 }, { 1, 1 }, { 4, 2 }, { 10, 0 }),		\
	.rules = (const struct sframe_jit_rule[]){			\
		{ .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 8,		\
		  .ra_off = -8 },					\
		__VA_ARGS__ },						\
	.nr_rules = 2, .rule_cap = 3

/* A rule CFA = SP + 16 with the flags and reserved field given. */
#define SFT_RULE_SP16(fl, res)						\
	{ .cfa_base = SFRAME_JIT_CFA_SP, .cfa_off = 16, .ra_off = -8,	\
	  .flags = (fl), .reserved = (res) }

#define SFT_ROW_SP8	{ .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8,	\
			  .ra_off = -8 }
#define SFT_ROW_SP16	{ .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,	\
			  .ra_off = -8 }
#define SFT_ROW_PUSHED	{ .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 16,	\
			  .ra_off = -8, .fp_saved = true, .fp_off = -16 }
#define SFT_ROW_FRAME	{ .cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = 16,	\
			  .ra_off = -8, .fp_saved = true, .fp_off = -16 }

static const struct sframe_test_cjit sframe_test_cjit_cases[] = {
	/* Hits */
	{ "compact hit: F0 entry", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP8 },
	{ "compact hit: after push, FP saved", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF0 + 3, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_PUSHED },
	{ "compact hit: FP-based CFA", SFT_CJIT_STD, .seq = 2,
	  .pc = SFT_TEXT + SFT_CF0 + 4, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_FRAME },
	{ "compact hit: last byte of F0", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF0 + 10, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP8 },
	{ "compact hit: F4 shares F0's rows", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF4 + 5, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_FRAME },
	{ "compact hit: shared rows, the last byte", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF4 + 10, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP8 },
	{ "compact hit: PCMASK, 0x1c % 16 is past the +11 row",
	  SFT_CJIT_STD, .pc = SFT_TEXT + SFT_CF1 + 0x1c,
	  .result = SFRAME_FIND_HIT, .row = SFT_ROW_SP16 },
	{ "compact hit: PCMASK, 0x2a % 16 is before it", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF1 + 0x2a, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP8 },
	{ "compact hit: outermost frame", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF3 + 4, .result = SFRAME_FIND_HIT,
	  .row = { .ra_undefined = true } },
	{ "compact hit: a function at the range's start",
	  SFT_CJIT_FDES(SFT_CFDE(0, 11, 0, 4, 0, 0)),
	  .pc = SFT_TEXT + 4, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_FRAME },
	{ "compact hit: a function ending at the range's end",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_TEXT_END - SFT_TEXT - 11, 11, 0, 4, 0,
				 0)),
	  .pc = SFT_TEXT_END - 1, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP8 },
	{ "compact hit: the last rule",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF3, 0x10, 7, 1, 0, 0)),
	  .pc = SFT_TEXT + SFT_CF3, .result = SFRAME_FIND_HIT,
	  .row = { .ra_undefined = true } },

	/* Misses, tombstones and the sequence count */
	{ "compact miss: below the range",
	  SFT_CJIT_FDES(SFT_CFDE(0, 11, 0, 4, 0, 0)),
	  .pc = SFT_TEXT - 1, .result = SFRAME_FIND_NONE },
	{ "compact miss: below the first function", SFT_CJIT_STD,
	  .pc = SFT_TEXT, .result = SFRAME_FIND_NONE },
	{ "compact miss: gap after F0", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF0 + 11, .result = SFRAME_FIND_NONE },
	{ "compact miss: past the last function", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF4 + 11, .result = SFRAME_FIND_NONE },
	{ "compact miss: nothing published", SFT_CJIT_REG(5, 8, 0),
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_NONE },
	{ "compact miss: F1 written but not published",
	  SFT_CJIT_REG(5, 8, 1), .pc = SFT_TEXT + SFT_CF1,
	  .result = SFRAME_FIND_NONE },
	{ "compact tombstone: F2 reclaimed", SFT_CJIT_STD,
	  .pc = SFT_TEXT + SFT_CF2 + 4, .result = SFRAME_FIND_TOMBSTONE },
	{ "compact tombstone: with an unknown flag is malformed",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF2, 0x10, 6, 1,
				 SFRAME_JIT_FDE_TOMBSTONE | 0x80, 0)),
	  .pc = SFT_TEXT + SFT_CF2, .result = SFRAME_FIND_MALFORMED },
	{ "compact retry: seq odd", SFT_CJIT_STD, .seq = 5,
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_RETRY },
	{ "compact: count above capacity is clamped",
	  SFT_CJIT_REG(2, 2, 0xffffffff), .pc = SFT_TEXT + SFT_CF1 + 0x1c,
	  .result = SFRAME_FIND_HIT, .row = SFT_ROW_SP16 },
	{ "compact: nothing past the clamped count",
	  SFT_CJIT_REG(2, 2, 0xffffffff), .pc = SFT_TEXT + SFT_CF3,
	  .result = SFRAME_FIND_NONE },
	{ "compact malformed: the header's reserved0 is not zero",
	  SFT_CJIT_STD, .reserved0 = 1, .pc = SFT_TEXT + SFT_CF0,
	  .result = SFRAME_FIND_MALFORMED },

	/* Malformed descriptors */
	{ "compact malformed: unknown descriptor flag",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 11, 0, 4, 0x4, 0)),
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: PCMASK with repeat size 0",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF1, 0x40, 4, 2,
				 SFRAME_JIT_CFDE_PCMASK, 0)),
	  .pc = SFT_TEXT + SFT_CF1 + 5, .result = SFRAME_FIND_MALFORMED },
	{ "compact: repeat size without PCMASK is ignored",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF1, 0x40, 4, 2, 0, 16)),
	  .pc = SFT_TEXT + SFT_CF1 + 0x1c, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP16 },
	{ "compact malformed: no rows",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 11, 0, 0, 0, 0)),
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: rows past the row capacity",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 11, 14, 4, 0, 0)),
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: first row index past the capacity",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 11, 0xffffffff, 2, 0, 0)),
	  .pc = SFT_TEXT + SFT_CF0, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: function ends past the range",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_TEXT_END - SFT_TEXT - 10, 11, 0, 4, 0,
				 0)),
	  .pc = SFT_TEXT_END - 10, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: offset and size add past 2^32",
	  SFT_CJIT_FDES(SFT_CFDE(0x1000, 0xfffff000, 0, 4, 0, 0)),
	  .pc = SFT_TEXT + 0x1004, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: descriptors out of order",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 11, 0, 4, 0, 0),
			SFT_CFDE(SFT_CF3, 0x10, 7, 1, 0, 0),
			SFT_CFDE(SFT_CF2, 0x10, 6, 1, 0, 0)),
	  .pc = SFT_TEXT + SFT_CF3 + 4, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: the unprobed descriptor before is unsorted",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 11, 0, 4, 0, 0),
			SFT_CFDE(SFT_CF2, 0x10, 6, 1, 0, 0),
			SFT_CFDE(SFT_CF1, 0x40, 4, 2,
				 SFRAME_JIT_CFDE_PCMASK, 16),
			SFT_CFDE(SFT_CF3, 0x10, 7, 1, 0, 0)),
	  .pc = SFT_TEXT + SFT_CF1 + 0x1c, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: overlapping descriptors",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 0x1800, 0, 4, 0, 0),
			SFT_CFDE(SFT_CF1, 0x40, 4, 2,
				 SFRAME_JIT_CFDE_PCMASK, 16)),
	  .pc = SFT_TEXT + SFT_CF1 + 0x1c, .result = SFRAME_FIND_MALFORMED },
	{ "compact hit: functions back to back",
	  SFT_CJIT_FDES(SFT_CFDE(SFT_CF0, 0x1000, 0, 4, 0, 0),
			SFT_CFDE(SFT_CF1, 0x40, 4, 2,
				 SFRAME_JIT_CFDE_PCMASK, 16)),
	  .pc = SFT_TEXT + SFT_CF1 + 0x1c, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP16 },

	/* Malformed rows */
	{ "compact malformed: first row does not start at 0",
	  SFT_CJIT_ROWS({ 1, 0 }, { 2, 0 }, { 3, 0 }, { 4, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 5, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: row starts decreasing",
	  SFT_CJIT_ROWS({ 0, 0 }, { 2, 0 }, { 6, 0 }, { 4, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 7, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: the unprobed row before is unsorted",
	  SFT_CJIT_ROWS({ 0, 0 }, { 6, 1 }, { 4, 2 }, { 10, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 5, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: row starts past the function",
	  SFT_CJIT_ROWS({ 0, 0 }, { 2, 0 }, { 11, 0 }, { 12, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 1, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: rule index at the capacity",
	  SFT_CJIT_ROWS({ 0, 0 }, { 1, 1 }, { 4, 5 }, { 10, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 4, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: rule index far past the capacity",
	  SFT_CJIT_ROWS({ 0, 0 }, { 1, 0xffff }, { 4, 2 }, { 10, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 1, .result = SFRAME_FIND_MALFORMED },
	{ "compact: a bad rule index costs only its row's PCs",
	  SFT_CJIT_ROWS({ 0, 0 }, { 1, 1 }, { 4, 5 }, { 10, 0 }),
	  .pc = SFT_TEXT + SFT_CF0 + 3, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_PUSHED },
	{ "compact malformed: unknown CFA base in the rule",
	  SFT_CJIT_RULE1({ .cfa_base = 2, .cfa_off = 16, .ra_off = -8 }),
	  .pc = SFT_TEXT + SFT_CF0 + 1, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: unknown flag in the rule",
	  SFT_CJIT_RULE1(SFT_RULE_SP16(0x4, 0)),
	  .pc = SFT_TEXT + SFT_CF0 + 2, .result = SFRAME_FIND_MALFORMED },
	{ "compact malformed: the rule's reserved field is not zero",
	  SFT_CJIT_RULE1(SFT_RULE_SP16(0, 1)),
	  .pc = SFT_TEXT + SFT_CF0 + 3, .result = SFRAME_FIND_MALFORMED },
	{ "compact: a bad rule costs only the rows naming it",
	  SFT_CJIT_RULE1({ .cfa_base = 2, .cfa_off = 16, .ra_off = -8 }),
	  .pc = SFT_TEXT + SFT_CF0 + 10, .result = SFRAME_FIND_HIT,
	  .row = SFT_ROW_SP8 },
};

/**
 * struct sframe_test_apply - one evaluation of a frame row
 * @name: what the case shows.
 * @row: the row.
 * @sp: the frame's stack pointer.
 * @fp: its frame pointer.
 * @ret: what sframe_row_apply() returns.
 * @step: what it computes, when it returns 0.
 */
struct sframe_test_apply {
	const char *name;
	struct sframe_row row;
	unsigned long sp;
	unsigned long fp;
	int ret;
	struct sframe_step step;
};

static const struct sframe_test_apply sframe_test_apply_cases[] = {
	{ "SP-based CFA, FP unchanged",
	  { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8, .ra_off = -8 },
	  0x7ffd0000, 0x1234, 0,
	  { .cfa = 0x7ffd0008, .ra_addr = 0x7ffd0000 } },
	{ "FP-based CFA, FP saved",
	  { .cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = 16, .ra_off = -8,
	    .fp_saved = true, .fp_off = -16 },
	  0x7ffd0000, 0x7ffe0000, 0,
	  { .cfa = 0x7ffe0010, .ra_addr = 0x7ffe0008,
	    .fp_addr = 0x7ffe0000, .fp_saved = true } },
	{ "outermost frame ends the unwind", { .ra_undefined = true },
	  0x7ffd0000, 0x7ffe0000, -ENOENT, {} },
	{ "CFA past the top of the address space",
	  { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8, .ra_off = -8 },
	  ULONG_MAX - 4, 0, -ERANGE, {} },
	{ "CFA below zero",
	  { .cfa_base = SFRAME_CFA_BASE_FP, .cfa_off = -8, .ra_off = -8 },
	  0x7ffd0000, 4, -ERANGE, {} },
	{ "RA address below zero",
	  { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 4, .ra_off = -8 },
	  0, 0, -ERANGE, {} },
	{ "FP address past the top",
	  { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = 8, .ra_off = -8,
	    .fp_saved = true, .fp_off = 16 },
	  ULONG_MAX - 16, 0, -ERANGE, {} },
	{ "largest offsets",
	  { .cfa_base = SFRAME_CFA_BASE_SP, .cfa_off = S32_MAX,
	    .ra_off = S32_MIN, .fp_saved = true, .fp_off = S32_MIN },
	  0x100000000UL, 0, 0,
	  { .cfa = 0x100000000UL + S32_MAX,
	    .ra_addr = 0x100000000UL + S32_MAX - 0x80000000UL,
	    .fp_addr = 0x100000000UL + S32_MAX - 0x80000000UL,
	    .fp_saved = true } },
	{ "unknown CFA base", { .cfa_base = 2, .cfa_off = 8, .ra_off = -8 },
	  0x7ffd0000, 0, -EINVAL, {} },
};

/* Bytes of a case's registry: header, rows, then descriptors, last. */
static inline size_t sframe_test_jit_size(const struct sframe_test_jit *c)
{
	return sizeof(struct sframe_jit_header) +
	       (size_t)c->fre_cap * sizeof(struct sframe_jit_fre) +
	       (size_t)c->fde_cap * sizeof(struct sframe_jit_fde);
}

/*
 * Lay a case's registry out in @buf, of sframe_test_jit_size() bytes,
 * and describe it in @v.  The descriptor area ends the buffer, so that a
 * read past the capacity is out of bounds for KASAN and ASan.  The
 * header's layout fields hold garbage: the lookup must not use them.
 */
static inline void sframe_test_jit_fill(void *buf,
					const struct sframe_test_jit *c,
					struct sframe_jit_view *v)
{
	struct sframe_jit_header *hdr = buf;

	memset(buf, 0, sframe_test_jit_size(c));
	*v = (struct sframe_jit_view){
		.base = buf,
		.fre_off = sizeof(*hdr),
		.fre_cap = c->fre_cap,
		.fde_off = sizeof(*hdr) + c->fre_cap *
			   sizeof(struct sframe_jit_fre),
		.fde_cap = c->fde_cap,
		.text_start = SFT_TEXT,
		.text_end = SFT_TEXT_END,
	};
	memcpy((u8 *)buf + v->fre_off, c->fres,
	       c->nr_fres * sizeof(*c->fres));
	memcpy((u8 *)buf + v->fde_off, c->fdes,
	       c->nr_fdes * sizeof(*c->fdes));
	hdr->magic = SFRAME_JIT_MAGIC;
	hdr->version = SFRAME_JIT_VERSION;
	hdr->fde_stride = 1;
	hdr->fre_stride = 1;
	hdr->fde_off = 0xdead;
	hdr->fde_capacity = U32_MAX;
	hdr->fre_off = 0xbeef;
	hdr->fre_capacity = U32_MAX;
	hdr->text_start = 0;
	hdr->text_end = ULONG_MAX;
	hdr->fde_count = c->fde_count;
	hdr->seq = c->seq;
	hdr->reserved0 = c->reserved0;
}

/*
 * Bytes of a compact case's registry: header, rows, descriptors, then
 * rules, last, so that a rule read past the capacity is out of bounds
 * for KASAN and ASan.
 */
static inline size_t sframe_test_cjit_size(const struct sframe_test_cjit *c)
{
	return sizeof(struct sframe_jit_header) +
	       (size_t)c->fre_cap * sizeof(struct sframe_jit_cfre) +
	       (size_t)c->fde_cap * sizeof(struct sframe_jit_cfde) +
	       (size_t)c->rule_cap * sizeof(struct sframe_jit_rule);
}

/*
 * Lay a compact case's registry out in @buf, of sframe_test_cjit_size()
 * bytes, and describe it in @v.  As for sframe_test_jit_fill(), the
 * header's layout fields hold garbage.
 */
static inline void sframe_test_cjit_fill(void *buf,
					 const struct sframe_test_cjit *c,
					 struct sframe_jit_view *v)
{
	struct sframe_jit_header *hdr = buf;
	u32 fde_off = sizeof(*hdr) + c->fre_cap * sizeof(*c->fres);

	memset(buf, 0, sframe_test_cjit_size(c));
	*v = (struct sframe_jit_view){
		.base = buf,
		.compact = true,
		.fre_off = sizeof(*hdr),
		.fre_cap = c->fre_cap,
		.fde_off = fde_off,
		.fde_cap = c->fde_cap,
		.rule_off = fde_off + c->fde_cap * sizeof(*c->fdes),
		.rule_cap = c->rule_cap,
		.text_start = SFT_TEXT,
		.text_end = SFT_TEXT_END,
	};
	memcpy((u8 *)buf + v->fre_off, c->fres,
	       c->nr_fres * sizeof(*c->fres));
	memcpy((u8 *)buf + v->fde_off, c->fdes,
	       c->nr_fdes * sizeof(*c->fdes));
	memcpy((u8 *)buf + v->rule_off, c->rules,
	       c->nr_rules * sizeof(*c->rules));
	hdr->magic = SFRAME_JIT_MAGIC;
	hdr->version = SFRAME_JIT_VERSION;
	hdr->flags = SFRAME_JIT_F_COMPACT;
	hdr->fde_off = 0xdead;
	hdr->fre_off = 0xbeef;
	hdr->rule_off = 0xf00d;
	hdr->fde_capacity = U32_MAX;
	hdr->fre_capacity = U32_MAX;
	hdr->rule_capacity = U32_MAX;
	hdr->fde_count = c->fde_count;
	hdr->seq = c->seq;
	hdr->reserved0 = c->reserved0;
}

/* Are two rows the same? */
static inline bool sframe_test_row_eq(const struct sframe_row *a,
				      const struct sframe_row *b)
{
	return a->cfa_base == b->cfa_base &&
	       a->ra_undefined == b->ra_undefined &&
	       a->fp_saved == b->fp_saved && a->signal == b->signal &&
	       a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_off == b->fp_off;
}

/* The rules a converted table of case @c keeps. */
static inline u32 sft_many_rules(const struct sframe_test_many *c)
{
	return c->rules ? c->rules : c->nr;
}

/*
 * Does each row of @t name one of its rules, and is each rule there once
 * (checked in tables of up to 1024 rules)?  Returns what is wrong, or NULL.
 */
static inline const char *sframe_test_table_rules(const struct sframe_table *t)
{
	u32 i, j;

	if (t->nr_rules > t->nr_rows)
		return "more rules than rows";
	for (i = 0; i < t->nr_rows; i++)
		if (t->rows[i].rule >= t->nr_rules)
			return "a row names no rule";
	for (i = 0; i < t->nr_rules && t->nr_rules <= 1024; i++)
		for (j = 0; j < i; j++)
			if (sframe_test_row_eq(&t->rules[i], &t->rules[j]))
				return "a rule is kept twice";
	return NULL;
}

#endif /* _KERNEL_UNWIND_SFRAME_TEST_CASES_H */
