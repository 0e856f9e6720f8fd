// SPDX-License-Identifier: GPL-2.0
/* What plt_loop calls through its PLT: next to nothing. */
#include "plt_callee.h"

int plt_callee(int x)
{
	return x + 1;
}
