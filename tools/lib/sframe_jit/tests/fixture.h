/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions of fixture.c, whose .sframe rows the import test reads
 * (see fixture.c for the shape each one has).
 */
#ifndef SFRAME_JIT_TESTS_FIXTURE_H
#define SFRAME_JIT_TESTS_FIXTURE_H

/*
 * Defined nowhere: the fixture's calls to it go through the PLT of
 * fixture.so, which is only read, never run.
 */
int ext(int x);

int leaf(int x);
long saves(long a, long b, long c, long d);
int with_fp(int n);
int big_stack(int n);
int medium_body(int n);
int long_body(int n);
int elsewhere(int n);

#endif /* SFRAME_JIT_TESTS_FIXTURE_H */
