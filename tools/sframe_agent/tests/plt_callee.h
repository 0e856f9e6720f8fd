/* SPDX-License-Identifier: GPL-2.0 */
/* libplt_callee.so's one function, which plt_loop calls through its PLT. */
#ifndef PLT_CALLEE_H
#define PLT_CALLEE_H

int plt_callee(int x);

#endif
