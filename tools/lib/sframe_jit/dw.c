// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libdw, loaded when a conversion first needs it.
 *
 * The library calls libdw for two things only: walking .eh_frame's
 * and .debug_frame's entries (eh_frame.c) and the FDEs the CFA
 * interpreter leaves to it (cfi_libdw.c).  A program that links the library, or that sframe-run
 * preloads it into, loads libdw and its own dependencies (libelf,
 * liblzma, libbz2) at start-up otherwise, and under software emulation
 * that alone slows python3 -c pass by a third; sframe-run's start-up
 * thread loads it when it begins to convert, after its wait, and a
 * program that ends first never does.
 *
 * The table of functions is the one piece of process-wide state the
 * library has, made once and never changed, as a link-time dependency
 * would be: every registry of a process shares the one libdw.
 */
#include <dlfcn.h>
#include <pthread.h>

#include "sframe_jit_internal.h"

#define LIBDW_SONAME	"libdw.so.1"

static struct sframe_jit__dw dw;
static bool dw_ok;
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;
/* Set once dw_load() is over: the calls after it read nothing else. */
static bool dw_done;
/* Set on the thread that runs dw_load(), while it runs. */
static __thread bool dw_loading;

static bool sym(void *h, const char *name, void *fp)
{
	void *p = dlsym(h, name);

	if (!p)
		return false;
	*(void **)fp = p;
	return true;
}

static void dw_load(void)
{
	void *h;

	dw_loading = true;
	h = dlopen(LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
	dw_loading = false;
	if (!h)
		return;
	dw_ok = sym(h, "dwarf_next_cfi", &dw.next_cfi) &&
		sym(h, "dwarf_getcfi_elf", &dw.getcfi_elf) &&
		sym(h, "dwarf_cfi_end", &dw.cfi_end) &&
		sym(h, "dwarf_begin_elf", &dw.begin_elf) &&
		sym(h, "dwarf_getcfi", &dw.getcfi) &&
		sym(h, "dwarf_end", &dw.end) &&
		sym(h, "dwarf_cfi_addrframe", &dw.cfi_addrframe) &&
		sym(h, "dwarf_frame_info", &dw.frame_info) &&
		sym(h, "dwarf_frame_cfa", &dw.frame_cfa) &&
		sym(h, "dwarf_frame_register", &dw.frame_register);
	/* Never unloaded: the pointers must stay valid. */
}

static void dw_load_once(void)
{
	dw_load();
	__atomic_store_n(&dw_done, true, __ATOMIC_RELEASE);
}

/**
 * sframe_jit__dw() - libdw's functions, loaded on first call
 *
 * dlopen() runs other code on the loading thread before it returns: the
 * constructors of libdw's dependencies, and a preloaded dlopen() of the
 * program's, as sframe-run's, which converts what was loaded.  A
 * conversion there calls this again, inside pthread_once(), which would
 * wait for itself for ever; it gets NULL instead, as if libdw were
 * missing.  Other threads wait for the load.
 *
 * Return: the table, or NULL when libdw.so.1 cannot be loaded or this
 * thread is loading it.
 */
const struct sframe_jit__dw *sframe_jit__dw(void)
{
	if (__atomic_load_n(&dw_done, __ATOMIC_ACQUIRE))
		return dw_ok ? &dw : NULL;
	if (dw_loading)
		return NULL;
	pthread_once(&dw_once, dw_load_once);
	return dw_ok ? &dw : NULL;
}
