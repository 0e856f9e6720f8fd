// SPDX-License-Identifier: GPL-2.0
/*
 * What sframe-run's tests load and unload: a self-contained shared
 * object, built twice, with .sframe (run_sframe.so, as gcc -Wa,--gsframe
 * writes it) and with .eh_frame only (run_cfi.so).
 */
#include <stdint.h>

uint64_t run_fixture_leaf(uint64_t x)
{
	return x * 2654435761u + 1;
}

uint64_t run_fixture_sum(const uint64_t *v, int n)
{
	volatile uint64_t buf[16];
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++) {
		buf[i & 15] = run_fixture_leaf(v[i]);
		s += buf[i & 15];
	}
	return s;
}
