/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace shim: READ_ONCE() as the relaxed atomic load it stands for. */
#ifndef _SFRAME_SHIM_LINUX_COMPILER_H
#define _SFRAME_SHIM_LINUX_COMPILER_H

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

#endif /* _SFRAME_SHIM_LINUX_COMPILER_H */
