/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GDB JIT interface's records, as GDB's manual ("JIT Interface")
 * fixes them: what a JIT fills and sframe-run reads.
 */
#ifndef SFRAME_RUN_GDB_JIT_H
#define SFRAME_RUN_GDB_JIT_H

#include <stdint.h>

struct jit_code_entry {
	struct jit_code_entry *next_entry;
	struct jit_code_entry *prev_entry;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version;
	uint32_t action_flag;
	struct jit_code_entry *relevant_entry;
	struct jit_code_entry *first_entry;
};

#endif /* SFRAME_RUN_GDB_JIT_H */
