// SPDX-License-Identifier: GPL-2.0
/*
 * jit_frame.so's .text and .eh_frame copied into one anonymous mapping
 * at the distance they have in the file, so that the FDE's PC-relative
 * start still points at the code: what a JIT hands __register_frame(),
 * with no object around it that the loader or libgcc would find.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit_image.h"

const uint32_t jit_call_row_offs[JIT_CALL_NR_ROWS] = { 0, 1, 5, 17, 18 };
const int32_t jit_call_row_cfas[JIT_CALL_NR_ROWS] = { 8, 16, 48, 16, 8 };

/* Room after .eh_frame for its terminator, which ld does not write. */
#define TERMINATOR	16

static int section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t strndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &strndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			return -ENOEXEC;
		n = elf_strptr(elf, strndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return 0;
	}
	return -ENOENT;
}

static int copy(const char *file, size_t size, struct jit_image *im)
{
	GElf_Shdr text, eh;
	uint64_t lo, hi;
	int err = -ENOEXEC;
	Elf *elf;

	elf = elf_memory((char *)file, size);
	if (!elf)
		return -ENOEXEC;
	if (section(elf, ".text", &text) || section(elf, ".eh_frame", &eh))
		goto out;
	lo = (text.sh_addr < eh.sh_addr ? text.sh_addr : eh.sh_addr) & ~4095ull;
	hi = eh.sh_addr + eh.sh_size + TERMINATOR;
	if (text.sh_addr + text.sh_size > hi)
		hi = text.sh_addr + text.sh_size;
	im->map_size = hi - lo;
	im->map = mmap(NULL, im->map_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (im->map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	memcpy((char *)im->map + text.sh_addr - lo, file + text.sh_offset,
	       text.sh_size);
	memcpy((char *)im->map + eh.sh_addr - lo, file + eh.sh_offset,
	       eh.sh_size);
	im->text = (uintptr_t)im->map + text.sh_addr - lo;
	im->text_size = text.sh_size;
	im->eh_frame = (char *)im->map + eh.sh_addr - lo;
	im->eh_frame_size = eh.sh_size;
	/* The CIE's length word, plus itself: where the FDE starts. */
	im->fde = (char *)im->eh_frame + 4 + *(uint32_t *)im->eh_frame;
	err = mprotect(im->map, im->map_size, PROT_READ | PROT_EXEC) ? -errno : 0;
out:
	elf_end(elf);
	return err;
}

/**
 * jit_image_load() - copy the fixture's code and CFI into fresh memory
 * @path: jit_frame.so.
 * @im: filled in; free it with jit_image_free().
 *
 * Return: 0 or a negative errno.
 */
int jit_image_load(const char *path, struct jit_image *im)
{
	struct stat st;
	void *file;
	int fd, err;

	memset(im, 0, sizeof(*im));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < 64) {
		close(fd);
		return -ENOEXEC;
	}
	file = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (file == MAP_FAILED)
		return -errno;
	err = copy(file, st.st_size, im);
	munmap(file, st.st_size);
	return err;
}

/**
 * jit_image_free() - unmap the copy
 * @im: the copy.
 */
void jit_image_free(struct jit_image *im)
{
	if (im->map && im->map != MAP_FAILED)
		munmap(im->map, im->map_size);
	memset(im, 0, sizeof(*im));
}
