// SPDX-License-Identifier: GPL-2.0
/*
 * libdw_compare's second unwinder: libdw's, over a sample's copy of
 * the user stack.  The files the command mapped are reported at the
 * addresses it mapped them (its process has exited by now); memory is
 * only ever the stack copy, so an unwind that needs anything beyond it
 * stops there, as perf --call-graph=dwarf would.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>

#include "dwcmp.h"

struct dwcmp_unwinder {
	Dwfl *dwfl;
	pid_t pid;
	const struct dwcmp_sample *cur;
	uint64_t *pcs;
	unsigned int nr;
};

static char *debuginfo_path;

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/**
 * dwcmp_load_bias() - where a mapped file's addresses are
 * @path: the file.
 * @start: the address it is mapped at.
 * @pgoff: from this file offset.
 * @bias: set to the file's load bias.
 *
 * The PT_LOAD segment that @pgoff starts gives it, at its page: its
 * p_vaddr is not always its p_offset, so @start - @pgoff would not do.
 *
 * Return: whether the file could be read and has such a segment.
 */
bool dwcmp_load_bias(const char *path, uint64_t start, uint64_t pgoff,
		     uint64_t *bias)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE) - 1;
	bool found = false;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n && !found; i++) {
			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
			    (ph.p_offset & ~page) != pgoff)
				continue;
			*bias = start - (ph.p_vaddr & ~page);
			found = true;
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static bool reported(const struct dwcmp_run *run, size_t before)
{
	size_t i;

	for (i = 0; i < before; i++)
		if (!strcmp(run->maps[i].path, run->maps[before].path))
			return true;
	return false;
}

/* Each file once, at the bias of its first executable mapping. */
static void report_maps(Dwfl *dwfl, const struct dwcmp_run *run)
{
	const struct dwcmp_map *m;
	uint64_t bias;
	size_t i;

	dwfl_report_begin(dwfl);
	for (i = 0; i < run->nr_maps; i++) {
		m = &run->maps[i];
		/* [vdso] and the like: no file to read the CFI from. */
		if (m->path[0] != '/' || reported(run, i))
			continue;
		if (!dwcmp_load_bias(m->path, m->start, m->pgoff, &bias))
			continue;
		if (!dwfl_report_elf(dwfl, m->path, m->path, -1, bias, true))
			fprintf(stderr, "# libdw_compare: %s at %#llx: %s\n",
				m->path, (unsigned long long)bias,
				dwfl_errmsg(-1));
	}
	dwfl_report_end(dwfl, NULL, NULL);
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dwcmp_unwinder *uw = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = uw;
	return uw->cur ? uw->cur->tid : uw->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Words of the stack copy; nothing else of the process is left. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	const struct dwcmp_sample *s = ((struct dwcmp_unwinder *)arg)->cur;

	(void)dwfl;
	if (!s || addr < s->sp || s->stack_size < sizeof(*result) ||
	    addr - s->sp > s->stack_size - sizeof(*result))
		return false;
	memcpy(result, s->stack + (addr - s->sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct dwcmp_sample *s = ((struct dwcmp_unwinder *)thread_arg)->cur;
	Dwarf_Word regs[DWCMP_NREGS];

	memcpy(regs, s->regs, sizeof(regs));
	if (!dwfl_thread_state_registers(thread, 0, DWCMP_NREGS, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks stack_copy = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/**
 * dwcmp_unwinder_new() - libdw over what a recorded run mapped
 * @run: the run whose samples will be unwound; must outlive the unwinder.
 *
 * Return: the unwinder, or NULL (dwcmp_unwinder_error() says why).
 */
struct dwcmp_unwinder *dwcmp_unwinder_new(const struct dwcmp_run *run)
{
	struct dwcmp_unwinder *uw = calloc(1, sizeof(*uw));

	if (!uw)
		return NULL;
	elf_version(EV_CURRENT);
	uw->pid = run->pid;
	uw->dwfl = dwfl_begin(&offline);
	if (!uw->dwfl)
		goto free_uw;
	report_maps(uw->dwfl, run);
	if (!dwfl_attach_state(uw->dwfl, NULL, run->pid, &stack_copy, uw))
		goto end_dwfl;
	return uw;

end_dwfl:
	dwfl_end(uw->dwfl);
free_uw:
	free(uw);
	return NULL;
}

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct dwcmp_unwinder *uw = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	/*
	 * Kept as libdw gives it: the sample's IP first, then return
	 * addresses, which the kernel's chain holds unadjusted too.
	 */
	uw->pcs[uw->nr++] = pc;
	return uw->nr < DWCMP_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/**
 * dwcmp_unwind() - libdw's frames of one sample
 * @uw: the unwinder of the sample's run.
 * @s: the sample.
 * @pcs: DWCMP_MAX_FRAMES PCs, filled with the frames unwound.
 * @nr: set to how many.
 *
 * Return: 0 if libdw reached the outermost frame (no return address
 * beyond it), 1 if it stopped at DWCMP_MAX_FRAMES, -1 if it could not
 * go on (dwcmp_unwinder_error() says why).
 */
int dwcmp_unwind(struct dwcmp_unwinder *uw, const struct dwcmp_sample *s,
		 uint64_t *pcs, unsigned int *nr)
{
	int ret;

	uw->cur = s;
	uw->pcs = pcs;
	uw->nr = 0;
	ret = dwfl_getthread_frames(uw->dwfl, s->tid, frame_cb, uw);
	*nr = uw->nr;
	uw->cur = NULL;
	if (ret == DWARF_CB_ABORT && uw->nr == DWCMP_MAX_FRAMES)
		return 1;
	return ret ? -1 : 0;
}

/**
 * dwcmp_unwinder_error() - libdw's last error
 *
 * Return: its message.
 */
const char *dwcmp_unwinder_error(void)
{
	return dwfl_errmsg(-1);
}

/**
 * dwcmp_unwinder_free() - end an unwinder
 * @uw: the unwinder, or NULL.
 */
void dwcmp_unwinder_free(struct dwcmp_unwinder *uw)
{
	if (!uw)
		return;
	dwfl_end(uw->dwfl);
	free(uw);
}
