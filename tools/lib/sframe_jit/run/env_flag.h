/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * sframe-run's yes/no environment knobs, read alike by the wrapper,
 * which refuses a value it does not know, and by the preload, which
 * takes such a value as unset.
 */
#ifndef __SFRAME_RUN_ENV_FLAG_H
#define __SFRAME_RUN_ENV_FLAG_H

#include <stdbool.h>

/* The knobs that take yes or no, NULL-terminated. */
extern const char *const sframe_run__env_flags[];

int sframe_run__env_flag_parse(const char *value, bool *on);
bool sframe_run__env_flag(const char *name);

#endif /* __SFRAME_RUN_ENV_FLAG_H */
