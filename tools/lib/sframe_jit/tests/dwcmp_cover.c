// SPDX-License-Identifier: GPL-2.0
/*
 * libdw_compare's view of the tables sframe-run registered: each file's
 * .eh_frame converted as sframe-run converts it (sframe_jit_cfi_convert()).
 * An FDE the conversion leaves out (Documentation/sframe_jit.rst,
 * "Converting DWARF CFI": ld's .plt, _dl_runtime_resolve realigned
 * through RBX) is left to the kernel's frame-pointer fallback by design;
 * where the kernel's chain parts from libdw's in such a frame, the SFrame
 * walk is not what went wrong.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sframe_jit.h"
#include "dwcmp.h"

struct cover {
	char *path;
	struct sframe_jit_cfi *cfi;	/* NULL: nothing converted */
};

static struct cover *covers;
static size_t nr_covers;

static struct sframe_jit_cfi *convert(const char *path)
{
	struct sframe_jit_cfi *cfi = NULL;
	struct stat st;
	void *image;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0) {
		image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (image != MAP_FAILED) {
			if (sframe_jit_cfi_convert(image, st.st_size, &cfi) < 0)
				cfi = NULL;
			munmap(image, st.st_size);
		}
	}
	close(fd);
	return cfi;
}

static struct sframe_jit_cfi *cfi_of(const char *path)
{
	struct cover *c;
	size_t i;

	for (i = 0; i < nr_covers; i++)
		if (!strcmp(covers[i].path, path))
			return covers[i].cfi;
	c = realloc(covers, (nr_covers + 1) * sizeof(*covers));
	if (!c)
		return NULL;
	covers = c;
	c = &covers[nr_covers];
	c->path = strdup(path);
	if (!c->path)
		return NULL;
	c->cfi = convert(path);
	nr_covers++;
	return c->cfi;
}

/* Functions come sorted by start and do not overlap. */
static bool holds(const struct sframe_jit_cfi *cfi, uint64_t addr)
{
	uint32_t lo = 0, hi = sframe_jit_cfi_nr_funcs(cfi);
	struct sframe_jit_func f;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		sframe_jit_cfi_func(cfi, mid, &f, NULL);
		if (addr < f.start)
			hi = mid;
		else if (addr - f.start >= f.size)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/**
 * dwcmp_covered() - whether sframe-run's table describes an address
 * @map: the file mapping that holds @addr.
 * @bias: the load bias of @map's file.
 * @addr: the address, within the code (a return address less one).
 *
 * Return: true if a function of the file's converted .eh_frame holds it.
 */
bool dwcmp_covered(const struct dwcmp_map *map, uint64_t bias, uint64_t addr)
{
	struct sframe_jit_cfi *cfi = cfi_of(map->path);

	return cfi && holds(cfi, addr - bias);
}

/**
 * dwcmp_cover_free() - forget the converted tables
 */
void dwcmp_cover_free(void)
{
	size_t i;

	for (i = 0; i < nr_covers; i++) {
		free(covers[i].path);
		sframe_jit_cfi_free(covers[i].cfi);
	}
	free(covers);
	covers = NULL;
	nr_covers = 0;
}
