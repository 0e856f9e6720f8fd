// SPDX-License-Identifier: GPL-2.0
/*
 * Calls through the PLT, for as long as it is let run: main ->
 * plt_spin -> plt_callee@plt -> plt_callee, in libplt_callee.so, which
 * returns at once, so that a good share of the samples fall in the
 * PLT's entry itself.  Built without frame pointers: a sample in the
 * entry unwinds only with the .plt's rows.
 *
 *	plt_loop
 */
#include "plt_callee.h"

__attribute__((noinline)) static int plt_spin(void)
{
	int i, s = 0;

	for (i = 0; i < 1000000; i++)
		s = plt_callee(s);
	return s;
}

int main(void)
{
	int s = 0;

	for (;;) {
		s += plt_spin();
		/* The loop stays: its sum is "used" each turn. */
		__asm__ volatile("" : "+r"(s));
	}
}
