// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * LLVM's ORC C API, interposed at one call: LLVMOrcLLJITLookup(), by
 * which a JIT asks for the address of code it is about to run.  LLVM
 * hands an object to __register_frame() before it tells its event
 * listeners about it, and tells them it is freed before it calls
 * __deregister_frame(): so the GDB JIT interface's list holds the
 * object's entry at neither of the moments jit_hooks.c sees, and a JIT
 * that frees its code before exit, as PostgreSQL's llvmjit does after
 * every query, would have no name in the perf map.  The lookup returns
 * after the listeners ran (ORC emits on the caller's thread), which
 * makes it such a moment: the lists are read once more when it does.
 *
 * Only a program that calls libLLVM's C API reaches this, through its
 * PLT, with libLLVM loaded after the preload: the real function is the
 * next one in the global scope.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sframe_run.h"

/* LLVMErrorRef LLVMOrcLLJITLookup(LLVMOrcLLJITRef, LLVMOrcExecutorAddress *, const char *) */
typedef void *(*lookup_fn)(void *jit, uint64_t *result, const char *name);

static lookup_fn real_lookup;

/**
 * LLVMOrcLLJITLookup() - libLLVM's, then the GDB JIT lists read
 * @jit: the LLJIT instance.
 * @result: where libLLVM puts the address.
 * @name: the symbol looked up.
 *
 * Return: libLLVM's error, NULL on success.
 */
__attribute__((visibility("default")))
void *LLVMOrcLLJITLookup(void *jit, uint64_t *result, const char *name)
{
	lookup_fn fn = __atomic_load_n(&real_lookup, __ATOMIC_ACQUIRE);
	void *err;

	if (!fn) {
		fn = (lookup_fn)dlsym(RTLD_NEXT, "LLVMOrcLLJITLookup");
		if (!fn) {
			/* What the loader would say without the preload. */
			fprintf(stderr,
				"sframe-run: symbol lookup error: %s: %s\n", __func__,
				dlerror());
			abort();
		}
		__atomic_store_n(&real_lookup, fn, __ATOMIC_RELEASE);
	}
	err = fn(jit, result, name);
	sframe_run__hooks_poll_quick();
	return err;
}
