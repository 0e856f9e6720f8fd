// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Raw .eh_frame, as JITs hand it to libgcc's __register_frame(): the
 * entries of a section up to a zero terminator, with no ELF file around
 * them, only the address they sit at in the process.  An in-process
 * hook reads them where they are; an agent copies them out of the
 * process first.  Both convert them here.
 *
 * The entries are put into the smallest ELF image that libdw reads, one
 * .eh_frame section at the address the bytes have in the process, so
 * that PC-relative pointers decode as they do in place, and converted
 * by sframe_jit_cfi_convert(): the conversion that make cfi-check finds
 * equal to libdw's on every object of the system, rather than a second
 * parser of CFA programs to trust.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sframe_jit_internal.h"

/* A length of all ones announces 64-bit DWARF, which libgcc lacks too. */
#define DWARF64_LEN		0xffffffffu

static const char raw_strtab[] = "\0.eh_frame\0.shstrtab";

/* The image: header, section headers, their names, then the bytes. */
struct raw_image {
	Elf64_Ehdr ehdr;
	Elf64_Shdr shdr[3];
	char strtab[24];
};

static uint32_t raw_word(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/**
 * sframe_jit_eh_frame_extent() - where raw .eh_frame entries end
 * @buf: the first entry.
 * @size: bytes readable at @buf.
 * @extentp: set to the bytes of the entries, the terminator not counted.
 *
 * Return: as sframe_jit.h says.
 */
int sframe_jit_eh_frame_extent(const void *buf, size_t size, size_t *extentp)
{
	const uint8_t *p = buf;
	size_t off = 0;
	uint32_t len;

	if (!buf || !extentp)
		return -EINVAL;
	for (;;) {
		if (size - off < 4)
			return -EAGAIN;
		len = raw_word(p + off);
		if (!len)
			break;
		if (len == DWARF64_LEN)
			return -EOPNOTSUPP;
		if (size - off - 4 < len)
			return -EAGAIN;
		off += 4 + (size_t)len;
	}
	if (!off)
		return -ENOENT;
	*extentp = off;
	return 0;
}

/* What libdw needs to find .eh_frame and decode it at @addr. */
static void *raw_image(const void *buf, size_t size, uint64_t addr,
		       size_t *sizep)
{
	size_t hdr = sizeof(struct raw_image);
	struct raw_image *im;

	im = calloc(1, hdr + size);
	if (!im)
		return NULL;
	memcpy(im->ehdr.e_ident, ELFMAG, SELFMAG);
	im->ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	im->ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	im->ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	im->ehdr.e_type = ET_DYN;
	im->ehdr.e_machine = EM_X86_64;
	im->ehdr.e_version = EV_CURRENT;
	im->ehdr.e_ehsize = sizeof(im->ehdr);
	im->ehdr.e_shoff = offsetof(struct raw_image, shdr);
	im->ehdr.e_shentsize = sizeof(im->shdr[0]);
	im->ehdr.e_shnum = 3;
	im->ehdr.e_shstrndx = 2;
	im->shdr[1] = (Elf64_Shdr) {
		.sh_name	= 1,
		.sh_type	= SHT_PROGBITS,
		.sh_flags	= SHF_ALLOC,
		.sh_addr	= addr,
		.sh_offset	= hdr,
		.sh_size	= size,
		.sh_addralign	= 8,
	};
	im->shdr[2] = (Elf64_Shdr) {
		.sh_name	= 11,
		.sh_type	= SHT_STRTAB,
		.sh_offset	= offsetof(struct raw_image, strtab),
		.sh_size	= sizeof(raw_strtab),
		.sh_addralign	= 1,
	};
	memcpy(im->strtab, raw_strtab, sizeof(raw_strtab));
	memcpy((char *)im + hdr, buf, size);
	*sizep = hdr + size;
	return im;
}

/**
 * sframe_jit_cfi_convert_eh_frame() - convert raw .eh_frame entries
 * @buf: the entries, or a copy of them.
 * @size: bytes at @buf.
 * @addr: where the entries sit in the process whose code they describe.
 * @cfip: as for sframe_jit_cfi_convert().
 *
 * Return: as sframe_jit.h says.
 */
int sframe_jit_cfi_convert_eh_frame(const void *buf, size_t size,
				    uint64_t addr,
				    struct sframe_jit_cfi **cfip)
{
	size_t image_size;
	void *image;
	int ret;

	if (!buf || !size || !cfip)
		return -EINVAL;
	image = raw_image(buf, size, addr, &image_size);
	if (!image)
		return -ENOMEM;
	ret = sframe_jit_cfi_convert(image, image_size, cfip);
	free(image);
	return ret;
}
