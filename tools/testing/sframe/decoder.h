/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The decoders of kernel/unwind and the walker's bounds, as the harness
 * uses them together: the row evaluation, the JIT registry reader, the
 * ELF section decoder and its converted table.
 */
#ifndef _SFRAME_HARNESS_DECODER_H
#define _SFRAME_HARNESS_DECODER_H

#include "sframe_row.h"
#include "sframe_jit_read.h"
#include "sframe_sec.h"
#include "sframe_table.h"
#include "sframe_lookup.h"

#endif /* _SFRAME_HARNESS_DECODER_H */
