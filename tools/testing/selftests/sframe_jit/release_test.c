// SPDX-License-Identifier: GPL-2.0
/*
 * The other tests in this directory only mean something on the kernel
 * they were built against; check that this is the kernel that runs.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#ifndef EXPECTED_RELEASE
#define EXPECTED_RELEASE NULL
#endif

TEST(running_kernel_is_the_build_under_test)
{
	struct utsname u;

	if (!EXPECTED_RELEASE)
		SKIP(return, "built without EXPECTED_RELEASE");
	ASSERT_EQ(0, uname(&u));
	ASSERT_STREQ(EXPECTED_RELEASE, u.release);
}

TEST(proc_version_names_the_same_release)
{
	char buf[512], want[300];
	struct utsname u;
	FILE *f;

	ASSERT_EQ(0, uname(&u));
	f = fopen("/proc/version", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	snprintf(want, sizeof(want), "Linux version %s ", u.release);
	ASSERT_EQ(0, strncmp(buf, want, strlen(want)));
}

/*
 * The other tests skip on a kernel without the system call; on the
 * kernel under test that would hide everything, so fail here instead.
 */
TEST(kernel_under_test_has_sframe_register)
{
	ASSERT_EQ(0, access("/proc/sys/kernel/sframe_max_registrations", F_OK));
}

TEST_HARNESS_MAIN
