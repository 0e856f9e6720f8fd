// SPDX-License-Identifier: GPL-2.0
/*
 * Copy an ELF64 file with its PT_GNU_SFRAME program header turned into
 * PT_NULL, and nothing else changed: binfmt_elf then registers no
 * .sframe at exec, while the copy maps, runs and reads as the original
 * does, its .sframe section included.
 *
 *	sframe_nophdr IN OUT
 *
 * Prints the segment's offset and size.  Exit status 1 if IN is not a
 * little-endian ELF64 file, as x86-64 ones are, or has no PT_GNU_SFRAME.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END))
		goto out;
	len = ftell(f);
	if (len < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(len ? len : 1);
	if (buf && fread(buf, 1, len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	*size = len;
out:
	fclose(f);
	return buf;
}

static int write_file(const char *path, const unsigned char *buf,
		      size_t size)
{
	FILE *f = fopen(path, "wb");
	int err;

	if (!f)
		return -1;
	err = fwrite(buf, 1, size, f) != size;
	err |= fclose(f);
	return err || chmod(path, 0755) ? -1 : 0;
}

/* The number of headers patched, or -1 if @buf is not ELF64 LSB. */
static int patch(unsigned char *buf, size_t size)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i, n = 0;

	if (size < sizeof(eh))
		return -1;
	memcpy(&eh, buf, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phoff > size ||
	    (size - eh.e_phoff) / sizeof(ph) < eh.e_phnum)
		return -1;
	for (i = 0; i < eh.e_phnum; i++) {
		unsigned char *p = buf + eh.e_phoff + i * sizeof(ph);

		memcpy(&ph, p, sizeof(ph));
		if (ph.p_type != PT_GNU_SFRAME)
			continue;
		printf("PT_GNU_SFRAME: offset %#llx, %llu bytes: now PT_NULL\n",
		       (unsigned long long)ph.p_offset,
		       (unsigned long long)ph.p_filesz);
		ph.p_type = PT_NULL;
		memcpy(p, &ph.p_type, sizeof(ph.p_type));
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned char *buf;
	size_t size;
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
		return 2;
	}
	buf = read_file(argv[1], &size);
	if (!buf) {
		perror(argv[1]);
		return 1;
	}
	n = patch(buf, size);
	if (n <= 0) {
		fprintf(stderr, "%s: %s\n", argv[1],
			n ? "not a little-endian ELF64 file" : "no PT_GNU_SFRAME");
		return 1;
	}
	if (write_file(argv[2], buf, size)) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
