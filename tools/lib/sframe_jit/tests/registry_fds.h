/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How many descriptors of JIT registries the process holds: those whose
 * fdinfo has a registry's map_size.  For the tests that check that fork
 * and growth leave no registry descriptor behind; header-only, as
 * run_loop is built alone.
 */
#ifndef SFRAME_JIT_TESTS_REGISTRY_FDS_H
#define SFRAME_JIT_TESTS_REGISTRY_FDS_H

#include <stdio.h>
#include <string.h>

static inline int registry_fds(void)
{
	char path[64], line[256];
	int fd, n = 0;
	FILE *f;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "map_size:", 9)) {
				n++;
				break;
			}
		fclose(f);
	}
	return n;
}

#endif /* SFRAME_JIT_TESTS_REGISTRY_FDS_H */
