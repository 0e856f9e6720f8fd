/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C function that sample_test.c's JIT code calls between two JIT
 * frames.  It lives in a file of its own because it is built differently
 * from the test (see the Makefile).
 */
#ifndef SAMPLE_BRIDGE_H
#define SAMPLE_BRIDGE_H

/* What sample_bridge() calls: the JIT leaf, or a C stand-in for it. */
extern long (*sample_bridge_callee)(long x);

/* sample_bridge()'s return address, stored by each call. */
extern unsigned long sample_bridge_ret;

long sample_bridge(long x);

#endif /* SAMPLE_BRIDGE_H */
