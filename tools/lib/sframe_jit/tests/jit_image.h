/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jit_frame.so's code and .eh_frame copied into anonymous memory, as a
 * JIT writes its code and the unwind information it registers with
 * __register_frame(): see jit_image.c.
 */
#ifndef SFRAME_JIT_TESTS_JIT_IMAGE_H
#define SFRAME_JIT_TESTS_JIT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The fixture's rows: CFA = SP + cfa at offsets from jit_call. */
#define JIT_CALL_NR_ROWS	5
#define JIT_CALL_SIZE		19

/**
 * struct jit_image - the copy
 * @map: the anonymous mapping.
 * @map_size: its size.
 * @text: where jit_call is.
 * @text_size: its size.
 * @eh_frame: the copy of .eh_frame, a CIE then the FDE, then zeros.
 * @eh_frame_size: its size, terminator not included.
 * @fde: the FDE alone, what libunwind's __register_frame() takes.
 */
struct jit_image {
	void *map;
	size_t map_size;
	uint64_t text;
	uint64_t text_size;
	void *eh_frame;
	size_t eh_frame_size;
	void *fde;
};

int jit_image_load(const char *path, struct jit_image *im);
void jit_image_free(struct jit_image *im);

/* libgcc's, which no installed header declares. */
struct dwarf_eh_bases {
	void *tbase;
	void *dbase;
	void *func;
};

void __register_frame(void *begin);
void __deregister_frame(void *begin);
void __register_frame_info(const void *begin, void *ob);
void *__deregister_frame_info(const void *begin);
const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

extern const uint32_t jit_call_row_offs[JIT_CALL_NR_ROWS];
extern const int32_t jit_call_row_cfas[JIT_CALL_NR_ROWS];

#endif /* SFRAME_JIT_TESTS_JIT_IMAGE_H */
