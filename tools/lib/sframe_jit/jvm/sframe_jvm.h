/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libsframe_jvm: a JVMTI agent that publishes the frames of HotSpot's
 * compiled code into one libsframe_jit registry over the code cache.
 * See Documentation/sframe_jit.rst, "HotSpot (JVMTI agent)".
 */
#ifndef __SFRAME_JVM_H
#define __SFRAME_JVM_H

#include <stdbool.h>
#include <stdint.h>

#include "sframe_jit.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* How the code being decoded is entered, which fixes unreached code. */
enum sframe_jvm_code_kind {
	/*
	 * A compiled method (nmethod): entered by a call at offset 0;
	 * code no path from there reaches (exception and deoptimization
	 * handlers) runs in the body's frame.
	 */
	SFRAME_JVM_NMETHOD,
	/*
	 * A stub called at offset 0; code no path from there reaches is
	 * left to the frame-pointer fallback.
	 */
	SFRAME_JVM_STUB,
};

/* One run of code with a known frame, published as one function. */
struct sframe_jvm_span {
	uint32_t start;		/* offset in the code */
	uint32_t size;
	uint32_t first_row;	/* index in struct sframe_jvm_frames.rows */
	uint32_t nr_rows;
};

/* Counts of one decoding, for the agent's statistics. */
struct sframe_jvm_decode_stats {
	uint32_t insns;
	uint32_t bad_bytes;	/* bytes the decoder could not read */
	uint32_t unknown_bytes;	/* bytes of code left to frame pointers */
	uint32_t conflicts;	/* instructions reached with two frames */
	uint32_t body_cfa;	/* the body's CFA - SP from the entries, or 0 */
};

/* The result of sframe_jvm_decode(): spans and their rows. */
struct sframe_jvm_frames {
	struct sframe_jvm_span *spans;
	uint32_t nr_spans;
	struct sframe_jit_row *rows;
	uint32_t nr_rows;
	struct sframe_jvm_decode_stats stats;
};

int sframe_jvm_decode(const void *code, uint32_t size, uint64_t addr,
		      enum sframe_jvm_code_kind kind, const uint32_t *entries,
		      uint32_t nr_entries, uint32_t frame_size,
		      struct sframe_jvm_frames *out);
void sframe_jvm_frames_free(struct sframe_jvm_frames *f);

/* HotSpot's own description of itself (gHotSpotVMStructs). */
struct sframe_jvm_vm {
	uint64_t code_low;	/* CodeCache::_low_bound */
	uint64_t code_high;	/* CodeCache::_high_bound */
	/* Offsets in a CodeBlob or nmethod; -1 when not exported. */
	long blob_size_off;
	long blob_header_size_off;
	long blob_frame_size_off;
	long blob_code_begin_off;
	long blob_code_end_off;
	long nm_osr_entry_off;
};

/* What a compiled method's header says of it. */
struct sframe_jvm_blob {
	uint32_t frame_size;	/* CFA - SP in the body, in bytes */
	int64_t osr_entry;	/* offset of the OSR entry in the code, or -1 */
};

int sframe_jvm_vm_read(struct sframe_jvm_vm *vm);
int sframe_jvm_vm_blob(const struct sframe_jvm_vm *vm, uint64_t code_addr,
		       uint32_t code_size, struct sframe_jvm_blob *blob);

#endif /* __SFRAME_JVM_H */
