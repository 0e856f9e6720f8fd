/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The numbers of the series' system calls on x86-64, for a build whose
 * <sys/syscall.h> predates them (the distribution's headers, not the
 * patched kernel's).
 */
#ifndef __SFRAME_NR_H
#define __SFRAME_NR_H

#include <sys/syscall.h>

#ifndef __NR_sframe_jit_open
#define __NR_sframe_jit_open 472
#endif
#ifndef __NR_sframe_register
#define __NR_sframe_register 473
#endif
#ifndef __NR_sframe_unregister
#define __NR_sframe_unregister 474
#endif

#endif /* __SFRAME_NR_H */
