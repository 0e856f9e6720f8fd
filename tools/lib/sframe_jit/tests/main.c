// SPDX-License-Identifier: GPL-2.0
/*
 * main() of both test binaries: TEST_KERNEL=0 runs the cases against
 * registries in private memory, TEST_KERNEL=1 against sframe_register(2)
 * and skips, saying why, where the running kernel lacks it.
 *
 *	sframe_jit_test [SUBSTRING...]
 *	sframe_jit_kernel_test [SUBSTRING...]
 *
 * Arguments select the cases whose names contain one of them.
 * SFRAME_JIT_FIXTURES overrides the directory of the import fixtures,
 * SFRAME_JIT_STRESS_OPS the operations of each stress writer (100000,
 * or 20000 against the kernel, which runs in an emulated VM).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

int main(int argc, char **argv)
{
	const char *dir = getenv("SFRAME_JIT_FIXTURES");

	setvbuf(stdout, NULL, _IOLBF, 0);
	test_env.kernel = TEST_KERNEL;
	test_env.fixtures = dir ?: FIXTURE_DIR;
	if (test_env.kernel && access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK)) {
		/*
		 * Without the sysctl, 472 may be another system call on a
		 * newer kernel: make no call at all.
		 */
		printf("1..0 # SKIP no %s: the kernel lacks sframe_register(2)\n",
		       SFRAME_JIT_MAX_REGS_SYSCTL);
		printf("0 passed, 0 failed\n");
		return 0;
	}
	return test_run_all(argc, argv);
}
