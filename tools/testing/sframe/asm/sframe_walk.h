/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace shim: the architecture's header itself, found by its path so
 * that its own includes resolve to the shims here (<asm/sigframe.h>).
 */
#include "../../../../arch/x86/include/asm/sframe_walk.h"
