// SPDX-License-Identifier: GPL-2.0
/*
 * A user process that faults, for mk/tests/runner-test.sh: "gp" loads
 * from a non-canonical address (a general protection fault), "segv" from
 * an unmapped page (a page fault).  Either way it dies of SIGSEGV, and
 * the kernel logs a line about it that is not a report of its own.
 *
 *	user_fault gp|segv
 */
#include <string.h>

int main(int argc, char **argv)
{
	volatile long *p = (long *)0x8000000000000000UL;

	if (argc > 1 && !strcmp(argv[1], "segv"))
		p = (long *)16;
	return *p;
}
