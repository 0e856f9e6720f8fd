/* SPDX-License-Identifier: GPL-2.0 */
/* What the decoder takes from the kernel's bit operations. */
#ifndef _SFRAME_SHIM_LINUX_BITOPS_H
#define _SFRAME_SHIM_LINUX_BITOPS_H

/* The position of the last set bit, from 1; 0 for 0. */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

#endif
