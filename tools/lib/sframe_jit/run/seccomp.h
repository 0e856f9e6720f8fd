/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether seccomp lets sframe-run's calls reach the kernel: seccomp.c,
 * for the wrapper and the preload alike.
 */
#ifndef __SFRAME_RUN_SECCOMP_H
#define __SFRAME_RUN_SECCOMP_H

#include <stdbool.h>

bool sframe_run__calls_filtered(void);

#endif /* __SFRAME_RUN_SECCOMP_H */
