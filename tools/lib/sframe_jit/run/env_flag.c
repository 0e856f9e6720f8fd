// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The yes/no knobs of sframe-run (Documentation/sframe_jit.rst,
 * "sframe-run").  Any value but "0" used to mean yes, so that
 * SFRAME_RUN_SYNC=no turned the knob on: the words are now read as
 * people write them, and the wrapper refuses any other.
 */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "env_flag.h"

const char *const sframe_run__env_flags[] = {
	"SFRAME_RUN_VERBOSE",
	"SFRAME_RUN_SYNC",
	"SFRAME_RUN_KEEP_DEREGISTERED",
	"SFRAME_RUN_NO_KERNEL",
	NULL
};

static const char *const yes[] = { "1", "yes", "on", "true", NULL };
static const char *const no[] = { "", "0", "no", "off", "false", NULL };

static bool word_in(const char *value, const char *const *words)
{
	for (; *words; words++)
		if (!strcasecmp(value, *words))
			return true;
	return false;
}

/**
 * sframe_run__env_flag_parse() - read a yes/no knob's value
 * @value: the value, NULL for an unset knob.
 * @on: set to the knob's meaning.
 *
 * Unset, empty, 0, no, off and false are no; 1, yes, on and true are
 * yes, in any case.
 *
 * Return: 0, or -EINVAL for any other value, with *@on false.
 */
int sframe_run__env_flag_parse(const char *value, bool *on)
{
	*on = value && word_in(value, yes);
	if (!value || *on || word_in(value, no))
		return 0;
	return -EINVAL;
}

/**
 * sframe_run__env_flag() - whether a yes/no knob is on
 * @name: the variable.
 *
 * Return: true for a yes; false for a no, an unset knob or a value
 * that is neither, which the wrapper refuses before the program runs.
 */
bool sframe_run__env_flag(const char *name)
{
	bool on;

	sframe_run__env_flag_parse(getenv(name), &on);
	return on;
}
