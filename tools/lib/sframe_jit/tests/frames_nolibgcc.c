// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-run's __register_frame() in a process without libgcc_s in its
 * global scope, as in a JIT that dlopen() loaded with RTLD_LOCAL: the
 * preload's dlsym(RTLD_NEXT) finds nothing, and it must find libgcc's
 * function in libgcc_s.so.1 all the same, loading it, so that the
 * registration still reaches libgcc (make check runs it under the
 * preload, as frames_preload):
 *
 *   frames_nolibgcc JIT_FRAME_SO
 *
 * The program itself links nothing of libgcc_s, and calls the function
 * the global scope gives for __register_frame, which must be the
 * preload's.  Ends with "N passed, N failed".
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "jit_image.h"

static int passed, failed;

static void result(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* Whether libgcc knows the copied code, asked in its own object. */
static bool libgcc_finds(const struct jit_image *im)
{
	const void *(*find)(void *pc, struct dwarf_eh_bases *bases);
	struct dwarf_eh_bases bases;
	bool found;
	void *h;

	h = dlopen("libgcc_s.so.1", RTLD_NOLOAD | RTLD_LAZY);
	if (!h)
		return false;
	find = (const void *(*)(void *, struct dwarf_eh_bases *))
		dlsym(h, "_Unwind_Find_FDE");
	found = find && find((void *)(uintptr_t)(im->text + 1), &bases);
	dlclose(h);
	return found;
}

int main(int argc, char **argv)
{
	void (*reg)(void *begin), (*dereg)(void *begin);
	struct jit_image im;
	Dl_info info;

	if (argc != 2 || jit_image_load(argv[1], &im)) {
		printf("not ok - load the fixture\n0 passed, 1 failed\n");
		return 1;
	}
	if (dlopen("libgcc_s.so.1", RTLD_NOLOAD | RTLD_LAZY)) {
		printf("# libgcc_s is loaded already: nothing to test\n");
		printf("0 passed, 0 failed\n");
		return 0;
	}
	reg = (void (*)(void *))dlsym(RTLD_DEFAULT, "__register_frame");
	dereg = (void (*)(void *))dlsym(RTLD_DEFAULT, "__deregister_frame");
	result(reg && dereg && dladdr((void *)reg, &info) &&
	       strstr(info.dli_fname, "libsframe_run"),
	       "__register_frame() of the global scope is sframe-run's");
	if (!reg || !dereg)
		goto out;
	reg(im.eh_frame);
	result(libgcc_finds(&im),
	       "the registration reached libgcc_s, which sframe-run loaded");
	dereg(im.eh_frame);
	result(!libgcc_finds(&im), "so did the deregistration");
out:
	jit_image_free(&im);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
