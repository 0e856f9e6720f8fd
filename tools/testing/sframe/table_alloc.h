/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A converted table as the kernel keeps one (kernel/unwind/sframe_elf.c):
 * its own buffer of exactly the size sframe_table_size() gives and its
 * rules in one of theirs, the build's scratch buffer freed, so that ASan
 * sees any read past either.
 */
#ifndef _SFRAME_TEST_TABLE_ALLOC_H
#define _SFRAME_TEST_TABLE_ALLOC_H

#include <errno.h>
#include <stdlib.h>

#include "decoder.h"

/* Frees what table_alloc_new() made; NULL is allowed. */
static inline void table_alloc_free(struct sframe_table *t)
{
	if (!t)
		return;
	free(t->rules);
	free(t);
}

/*
 * The table of @sec in *@tp, or NULL there with an error: what
 * sframe_table_size() or sframe_table_build() gave, or -ENOMEM.
 */
static inline int table_alloc_new(const struct sframe_sec *sec,
				  struct sframe_table **tp)
{
	size_t size, scratch_size;
	struct sframe_table *t;
	struct sframe_row *rules;
	void *scratch;
	int err;

	*tp = NULL;
	err = sframe_table_size(sec, &size, &scratch_size);
	if (err)
		return err;
	t = malloc(size);
	scratch = malloc(scratch_size);
	err = -ENOMEM;
	if (!t || !scratch)
		goto out;
	err = sframe_table_build(sec, t, size, scratch, scratch_size);
	if (err)
		goto out;
	/* One byte at least, so that no rules is not taken for no memory. */
	rules = malloc(sframe_table_rules_bytes(t) + 1);
	err = -ENOMEM;
	if (!rules)
		goto out;
	sframe_table_keep_rules(t, rules);
	*tp = t;
	t = NULL;
	err = 0;
out:
	free(scratch);
	free(t);
	return err;
}

#endif /* _SFRAME_TEST_TABLE_ALLOC_H */
