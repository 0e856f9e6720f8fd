// SPDX-License-Identifier: GPL-2.0
/*
 * Run under sframe-run, in the test kernel: dlopen() and dlclose() two
 * objects, one with .sframe and one with .eh_frame only, many times,
 * and check what the kernel holds: each object's range is registered
 * while it is loaded and not after, and neither the process's JIT
 * registries (anon_inode:[sframe_jit] in /proc/self/maps), their
 * descriptors, nor its pinned memory (VmPin) grow.
 *
 *	sframe-run run_loop DIR [CYCLES]
 *
 * DIR holds run_sframe.so and run_cfi.so.  Prints "ok - " and
 * "not ok - " lines, then "N passed, N failed".
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/sframe_jit.h>

#include "registry_fds.h"
#include "sframe_nr.h"

static int passed, failed;

static void result(bool ok, const char *what)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* The executable range of the object that holds @addr. */
static bool text_of(void *addr, uint64_t *start, uint64_t *end)
{
	Dl_info info;
	struct link_map *lm;
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	uint64_t lo = UINT64_MAX, hi = 0;
	int i;

	if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
		return false;
	eh = info.dli_fbase;
	ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	*start = lm->l_addr + lo;
	*end = lm->l_addr + hi;
	return hi != 0;
}

/*
 * A JIT registration of part of the range fails with EEXIST if taken;
 * one that is let in ends with its descriptor, never mapped.
 */
static int registered(uint64_t start, uint64_t end)
{
	struct sframe_jit_args args = {
		.text_start	= start,
		.text_end	= end,
		.fde_capacity	= 1,
		.fre_capacity	= 1,
	};
	long ret;

	ret = syscall(__NR_sframe_jit_open, &args, sizeof(args));
	if (ret == -1)
		return errno == EEXIST ? 1 : -errno;
	close(ret);
	return 0;
}

static long status_kb(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return kb;
}

static int nr_registries(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[sframe_jit]"))
			n++;
	fclose(f);
	return n;
}

struct state {
	int regs;
	int fds;
	long pin;
};

static struct state state_now(void)
{
	return (struct state) { nr_registries(), registry_fds(),
				status_kb("VmPin") };
}

/* One load and unload; false at the first registration that is off. */
static bool cycle(const char *path, const char *sym, bool check)
{
	uint64_t start, end;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *fn;
	bool ok;

	if (!h)
		return false;
	fn = dlsym(h, sym);
	ok = fn && text_of(fn, &start, &end);
	if (ok && check)
		ok = registered(start, end) == 1;
	dlclose(h);
	if (ok && check)
		ok = registered(start, end) == 0;
	return ok;
}

int main(int argc, char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	char sframe[4096], cfi[4096], what[256];
	int cycles = argc > 2 ? atoi(argv[2]) : 2000, i, bad = -1;
	struct state warm = { 0 }, end;

	if (argc < 2) {
		fprintf(stderr, "usage: sframe-run %s DIR [CYCLES]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(sframe, sizeof(sframe), "%s/run_sframe.so", argv[1]);
	snprintf(cfi, sizeof(cfi), "%s/run_cfi.so", argv[1]);
	result(preload && strstr(preload, "libsframe_run.so"),
	       "runs under sframe-run");

	for (i = 0; i < cycles && bad < 0; i++) {
		/* The kernel is asked at first and now and then. */
		bool check = i < 20 || !(i % 100);

		if (!cycle(i & 1 ? sframe : cfi,
			   i & 1 ? "run_fixture_leaf" : "run_fixture_sum",
			   check))
			bad = i;
		if (i == 9)
			warm = state_now();
	}
	snprintf(what, sizeof(what),
		 "each of %d cycles registers the object while loaded and not after (first bad: %d)",
		 cycles, bad);
	result(bad < 0, what);
	end = state_now();
	printf("# after 10 cycles: %d registries, %d descriptors, VmPin %ld kB;",
	       warm.regs, warm.fds, warm.pin);
	printf(" after %d: %d, %d, %ld kB\n", cycles, end.regs, end.fds,
	       end.pin);
	result(warm.regs > 0 && end.regs == warm.regs,
	       "the JIT registries of the process do not grow");
	result(end.fds == end.regs,
	       "a descriptor for each registry, none left behind");
	result(warm.pin > 0 && end.pin == warm.pin,
	       "VmPin does not grow");
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
