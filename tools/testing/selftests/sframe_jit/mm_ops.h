/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What mm_ops_test and mm_stress_test share: the names of the newer mm
 * calls and advice, which Debian 12's C library headers lack, and where
 * the kernel options that change some outcomes show.
 */
#ifndef MM_OPS_H
#define MM_OPS_H

#ifndef __NR_mseal
#define __NR_mseal		462
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/* MADV_MERGEABLE and MADV_HUGEPAGE are EINVAL without these. */
#define KSM_SYSFS	"/sys/kernel/mm/ksm"
#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage"

#define CORE_PATTERN	"/proc/sys/kernel/core_pattern"

#endif /* MM_OPS_H */
