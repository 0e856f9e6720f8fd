// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Opening an ELF image that the caller holds in memory, for the two
 * readers of unwind sections: the SFrame import (import.c) and the CFI
 * conversion (cfi.c).  Both take 64-bit little-endian x86-64 objects
 * only, and neither may write to the image.
 */
#include <errno.h>
#include <string.h>

#include "sframe_jit_internal.h"

/*
 * The ELF header must be checked before libelf sees the image: for a
 * foreign byte order libelf converts a private image in place, and the
 * image is the caller's.
 */
static int elf_ident_check(const void *image, size_t size)
{
	const unsigned char *id = image;

	if (size < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != ELFDATA2LSB)
		return -EOPNOTSUPP;
	return 0;
}

/**
 * sframe_jit__elf_open() - a libelf handle on an x86-64 image in memory
 * @image: the object's bytes; not modified.
 * @size: bytes at @image.
 * @elfp: the handle on success, for elf_end(); NULL on failure.
 * @ehdr: the ELF header on success.
 *
 * Return: 0; -ENOEXEC for what is not an ELF object; -EOPNOTSUPP for
 * another class, byte order or machine.
 */
int sframe_jit__elf_open(const void *image, size_t size, Elf **elfp,
			 GElf_Ehdr *ehdr)
{
	Elf *elf;
	int err;

	*elfp = NULL;
	err = elf_ident_check(image, size);
	if (err)
		return err;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	elf = elf_memory((char *)image, size);
	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, ehdr)) {
		elf_end(elf);
		return -ENOEXEC;
	}
	if (ehdr->e_machine != EM_X86_64) {
		elf_end(elf);
		return -EOPNOTSUPP;
	}
	*elfp = elf;
	return 0;
}

/**
 * sframe_jit__elf_section() - find a section by name
 * @elf: the object.
 * @name: the section's name.
 * @ndx: its index, on success.
 * @shdr: its header, on success.
 *
 * Return: the section, or NULL when there is none of that name.
 */
Elf_Scn *sframe_jit__elf_section(Elf *elf, const char *name, size_t *ndx,
				 GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			return NULL;
		n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name)) {
			*ndx = elf_ndxscn(scn);
			return scn;
		}
	}
	return NULL;
}
