/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libdw_compare: the kernel's user callchain and libdw's unwind of the
 * same sample's user stack copy, side by side (tests/libdw_compare.c).
 */
#ifndef DWCMP_H
#define DWCMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* As many frames as perf_event_max_stack gives by default. */
#define DWCMP_MAX_FRAMES	127
/* libdw's x86-64 registers: rax..rsp (DWARF 0-7), r8..r15, rip (16). */
#define DWCMP_NREGS		17

/* One sample: the kernel's user chain, the user registers and stack. */
struct dwcmp_sample {
	pid_t tid;
	unsigned int nr_chain;
	uint64_t chain[DWCMP_MAX_FRAMES];
	uint64_t regs[DWCMP_NREGS];	/* in DWARF order */
	uint64_t sp;
	size_t stack_size;		/* valid bytes from sp */
	unsigned char *stack;
};

/* An executable mapping of a file, from PERF_RECORD_MMAP2. */
struct dwcmp_map {
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	char *path;
};

/* What one run of the command left: its last image's maps and samples. */
struct dwcmp_run {
	struct dwcmp_sample *samples;
	size_t nr_samples;
	size_t cap_samples;
	struct dwcmp_map *maps;
	size_t nr_maps;
	size_t cap_maps;
	pid_t pid;
	uint64_t lost;
	unsigned int execs;
	int status;			/* the command's, from waitpid() */
};

int dwcmp_record(struct dwcmp_run *run, char *const argv[], bool sframe,
		 uint64_t period_ns);
void dwcmp_run_reset(struct dwcmp_run *run);

bool dwcmp_load_bias(const char *path, uint64_t start, uint64_t pgoff,
		     uint64_t *bias);
bool dwcmp_covered(const struct dwcmp_map *map, uint64_t bias, uint64_t addr);
void dwcmp_cover_free(void);

struct dwcmp_unwinder;

struct dwcmp_unwinder *dwcmp_unwinder_new(const struct dwcmp_run *run);
int dwcmp_unwind(struct dwcmp_unwinder *uw, const struct dwcmp_sample *s,
		 uint64_t *pcs, unsigned int *nr);
const char *dwcmp_unwinder_error(void);
void dwcmp_unwinder_free(struct dwcmp_unwinder *uw);

#endif /* DWCMP_H */
