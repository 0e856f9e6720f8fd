// SPDX-License-Identifier: GPL-2.0
/*
 * What sframe-run's JIT test runs under lli-14 (tests/sframe_run_jit_vm.sh):
 * compiled to LLVM IR without frame pointers, so that only the unwind
 * information the JIT registers can walk main -> func_a -> func_b ->
 * leaf, and leaf spins for as many rounds as the argument says.  None
 * of the calls may be inlined or become a tail call: each caller uses
 * the result.  main returns 0, which perf record passes on as its own
 * status.  No one-letter names: perf's reader of /tmp/perf-PID.map
 * skips them.
 */
#include <stdlib.h>

volatile unsigned long jit_path_sink;

__attribute__((noinline)) unsigned long leaf(unsigned long n)
{
	unsigned long s = 0, i;

	for (i = 0; i < n; i++) {
		s += i * i;
		jit_path_sink = s;
	}
	return s;
}

__attribute__((noinline)) unsigned long func_b(unsigned long n)
{
	return leaf(n) + 1;
}

__attribute__((noinline)) unsigned long func_a(unsigned long n)
{
	return func_b(n) * 3;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;

	jit_path_sink = func_a(n);
	return 0;
}
