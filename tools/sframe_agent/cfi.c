// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A JIT's code, given the rows its CFI says: what the GDB JIT interface
 * and libgcc's frame registry hand over is converted by the library at
 * the code's own addresses, written as an SFrame section placed at the
 * page of its first function, and registered for the range from that
 * function's start to the end of its last.
 */
#include <errno.h>
#include <stdlib.h>

#include <sframe_jit.h>

#include "sframe_agent.h"

/**
 * agent_cfi_register() - register a converted table for the code it covers
 * @p: the process whose code it is.
 * @cfi: the table, at the code's addresses.
 * @startp: set to the first byte registered, on success and on -EACCES.
 * @endp: set to the end of the range, on success and on -EACCES.
 * @st: its rows and bytes, added to on success.
 *
 * Return: 0; -ENOENT for a table of no function; the errors of
 * sframe_jit_cfi_encode() and process_sframe_register(2).
 */
int agent_cfi_register(struct agent_proc *p, const struct sframe_jit_cfi *cfi,
		       uint64_t *startp, uint64_t *endp, struct agent_stats *st)
{
	struct agent_table t = { .kind = AGENT_TABLE_CONVERTED };
	struct sframe_jit_cfi_stats cs = { .sz = sizeof(cs) };
	uint32_t nr = sframe_jit_cfi_nr_funcs(cfi);
	struct sframe_jit_func lo, hi;
	int err;

	if (!nr)
		return -ENOENT;
	sframe_jit_cfi_func(cfi, 0, &lo, NULL);
	sframe_jit_cfi_func(cfi, nr - 1, &hi, NULL);
	t.sframe_vaddr = lo.start & ~4095ULL;
	err = sframe_jit_cfi_encode(cfi, t.sframe_vaddr, &t.sframe,
				    &t.sframe_size);
	if (!err)
		err = agent_register(p->pidfd, &t, 0, lo.start,
				     hi.start + hi.size);
	if (!err || err == -EACCES) {
		*startp = lo.start;
		*endp = hi.start + hi.size;
	}
	if (!err) {
		sframe_jit_cfi_get_stats(cfi, &cs);
		st->rows += cs.nr_rows;
		st->bytes += t.sframe_size;
	}
	free(t.sframe);
	return err;
}
