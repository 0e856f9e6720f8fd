// SPDX-License-Identifier: GPL-2.0
/*
 * Code for the import test, built with gcc -O2 -fPIC -Wa,--gsframe into a
 * relocatable object and a shared object: functions whose .sframe rows
 * cover the shapes and encodings GNU as produces (no frame, pushes, a
 * frame pointer, offsets of 1, 2 and 4 bytes, rows past 64 KiB), one in
 * another section, and calls through the PLT.
 */
#include "fixture.h"

int leaf(int x)
{
	return x * 3 + 1;
}

long saves(long a, long b, long c, long d)
{
	long r = ext(a) + ext(b);

	r += (long)ext(c) * ext(d);
	return r + ext(r);
}

__attribute__((optimize("no-omit-frame-pointer")))
int with_fp(int n)
{
	volatile char buf[64];

	buf[n & 63] = n;
	return buf[(n + 1) & 63] + ext(n);
}

int big_stack(int n)
{
	volatile char buf[70000];

	buf[n % 70000] = 1;
	return buf[(n / 2) % 70000] + ext(n);
}

int medium_body(int n)
{
	int r = ext(n);

	asm volatile(".skip 300, 0x90");
	return r + ext(r);
}

int long_body(int n)
{
	int r = ext(n);

	asm volatile(".skip 70000, 0x90");
	return r + ext(r);
}

__attribute__((section("other_text")))
int elsewhere(int n)
{
	return ext(n) + 1;
}
