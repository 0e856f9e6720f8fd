// SPDX-License-Identifier: GPL-2.0
/*
 * Bytes per function of the unwind tables of linked ELF objects built
 * with gcc -Wa,--gsframe: .eh_frame and .eh_frame_hdr, .sframe, and the
 * JIT registry that libsframe_jit would fill for the same functions.
 *
 *	bytes_bench [-l LABEL]... FILE...
 *
 * For each FILE (an executable or a shared object; -l names the next
 * one in the table), the section sizes come from its section headers,
 * the number of .eh_frame FDEs from a walk of the section's records and
 * the number of .sframe descriptors and rows from its header.  The
 * .sframe section of .text is then imported with sframe_jit_import_elf()
 * into a private registry (SFRAME_JIT_F_NO_KERNEL), and imported again
 * into one made with exactly the capacities the first import used and
 * not allowed to grow, which must take it: the registry cost is that of
 * the second, its records (descriptors and rows) and its whole mapping
 * (header page, 64-byte alignment and rounding to pages included).
 *
 * Each table describes each function in its own count: .eh_frame per
 * FDE, .sframe per descriptor, the registry per imported function.
 * Exit status 1 if an object cannot be read or imported.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/sframe_jit.h>
#include "sframe_jit.h"

#define TEXT_ADDR	0x7f0000000000ULL
#define FRE_ALIGN	64	/* Documentation/userspace-api/sframe.rst */

struct sizes {
	const char *label;
	size_t text;
	size_t eh_frame;
	size_t eh_frame_hdr;
	size_t sframe;
	unsigned int eh_fdes;
	unsigned int sframe_fdes;
	unsigned int sframe_fres;
	unsigned int jit_funcs;
	unsigned int jit_rows;
	size_t jit_records;
	size_t jit_mapped;
};

static const unsigned char *section(Elf *elf, const char *name,
				    const unsigned char *image, size_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	*size = 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return NULL;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			*size = sh.sh_size;
			return sh.sh_type == SHT_NOBITS ? NULL :
				image + sh.sh_offset;
		}
	}
	return NULL;
}

static unsigned int get_u32(const unsigned char *p)
{
	unsigned int v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Count the FDEs of .eh_frame: records of a length (0xffffffff for a
 * 64-bit one) and an id, 0 for a CIE, until a zero terminator.
 * -1 if a record runs past the section.
 */
static int count_eh_fdes(const unsigned char *p, size_t size)
{
	size_t off = 0, len, hdr;
	int fdes = 0;

	while (size - off >= 4) {
		len = get_u32(p + off);
		hdr = 4;
		if (!len)
			break;
		if (len == 0xffffffff) {
			if (size - off < 12)
				return -1;
			memcpy(&len, p + off + 4, 8);
			hdr = 12;
		}
		if (len < 4 || len > size - off - hdr)
			return -1;
		if (get_u32(p + off + hdr))
			fdes++;
		off += hdr + len;
	}
	return fdes;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* The mapping the kernel makes for these capacities (sframe.rst). */
static size_t jit_map_size(unsigned int fdes, unsigned int fres)
{
	size_t page = sysconf(_SC_PAGESIZE), fre_off;

	fre_off = align_up(page + (size_t)fdes * sizeof(struct sframe_jit_fde),
			   FRE_ALIGN);
	return align_up(fre_off + (size_t)fres * sizeof(struct sframe_jit_fre),
			page);
}

static int import(const void *image, size_t size, size_t text,
		  unsigned int fdes, unsigned int fres, struct sframe_jit **regp)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.fde_capacity = fdes, .fre_capacity = fres,
			.flags = SFRAME_JIT_F_NO_KERNEL |
				 (fdes ? SFRAME_JIT_F_NO_GROW : 0));
	SFRAME_JIT_OPTS(sframe_jit_import_opts, iopts,
			.text_addr = TEXT_ADDR,
			.flags = SFRAME_JIT_IMPORT_F_NO_NAMES);
	int err;

	err = sframe_jit_create(TEXT_ADDR, TEXT_ADDR + text, &opts, regp);
	if (err)
		return err;
	err = sframe_jit_import_elf(*regp, image, size, &iopts);
	if (err < 0) {
		sframe_jit_destroy(*regp);
		*regp = NULL;
	}
	return err;
}

/* Import twice, the second time into a registry of exact capacities. */
static int measure_jit(const void *image, size_t size, struct sizes *s)
{
	struct sframe_jit_info info = { .sz = sizeof(info) };
	struct sframe_jit *reg;
	int n;

	n = import(image, size, s->text, 0, 0, &reg);
	if (n < 0)
		return n;
	sframe_jit_get_info(reg, &info);
	sframe_jit_destroy(reg);
	if ((unsigned int)n != info.nr_funcs || !n)
		return -EPROTO;
	s->jit_funcs = info.nr_funcs;
	s->jit_rows = info.nr_rows_live;
	n = import(image, size, s->text, s->jit_funcs, s->jit_rows, &reg);
	if (n < 0)
		return n;
	sframe_jit_destroy(reg);
	if ((unsigned int)n != s->jit_funcs)
		return -EPROTO;
	s->jit_records = (size_t)s->jit_funcs * sizeof(struct sframe_jit_fde) +
			 (size_t)s->jit_rows * sizeof(struct sframe_jit_fre);
	s->jit_mapped = jit_map_size(s->jit_funcs, s->jit_rows);
	return 0;
}

static int measure_sections(Elf *elf, const unsigned char *image,
			    struct sizes *s)
{
	const unsigned char *eh, *sf;
	int fdes;

	section(elf, ".text", image, &s->text);
	section(elf, ".eh_frame_hdr", image, &s->eh_frame_hdr);
	eh = section(elf, ".eh_frame", image, &s->eh_frame);
	sf = section(elf, ".sframe", image, &s->sframe);
	if (!s->text || !eh || !sf || s->sframe < 28)
		return -ENOENT;
	fdes = count_eh_fdes(eh, s->eh_frame);
	if (fdes <= 0)
		return -ENOEXEC;
	s->eh_fdes = fdes;
	/* SFrame header: num_fdes at 8, num_fres at 12 (all versions). */
	s->sframe_fdes = get_u32(sf + 8);
	s->sframe_fres = get_u32(sf + 12);
	return s->sframe_fdes ? 0 : -ENOEXEC;
}

static int measure(const char *path, struct sizes *s)
{
	unsigned char *image;
	struct stat st;
	Elf *elf;
	int fd, err;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !st.st_size) {
		close(fd);
		return -ENOEXEC;
	}
	image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (image == MAP_FAILED)
		return -errno;
	elf = elf_memory((char *)image, st.st_size);
	err = elf ? measure_sections(elf, image, s) : -ENOEXEC;
	if (elf)
		elf_end(elf);
	if (!err)
		err = measure_jit(image, st.st_size, s);
	munmap(image, st.st_size);
	return err;
}

static double per(size_t bytes, unsigned int n)
{
	return (double)bytes / n;
}

static void print_table(const struct sizes *s, int n)
{
	int i;

	printf("# bytes per function, each over its own count of functions:\n");
	printf("# eh: .eh_frame per FDE, +hdr: with .eh_frame_hdr;\n");
	printf("# sframe: .sframe per descriptor; jit: registry records\n");
	printf("# (descriptors, rows) per imported function, +map: its mapping\n");
	printf("%-22s %6s %6s %6s %5s %5s  %6s %6s %6s %6s %6s  %5s %5s\n",
	       "object", "ehFDE", "sfFDE", "jitFn", "sfR/f", "jtR/f",
	       "eh", "+hdr", "sframe", "jit", "+map", "j/sf", "j/eh+");
	for (i = 0; i < n; i++, s++) {
		double eh = per(s->eh_frame, s->eh_fdes);
		double ehh = per(s->eh_frame + s->eh_frame_hdr, s->eh_fdes);
		double sf = per(s->sframe, s->sframe_fdes);
		double jit = per(s->jit_records, s->jit_funcs);

		printf("%-22s %6u %6u %6u %5.2f %5.2f  ", s->label,
		       s->eh_fdes, s->sframe_fdes, s->jit_funcs,
		       per(s->sframe_fres, s->sframe_fdes),
		       per(s->jit_rows, s->jit_funcs));
		printf("%6.1f %6.1f %6.1f %6.1f %6.1f  %5.2f %5.2f\n", eh, ehh,
		       sf, jit, per(s->jit_mapped, s->jit_funcs), jit / sf,
		       jit / ehh);
	}
}

static void print_sizes(const struct sizes *s, int n)
{
	int i;

	printf("# section sizes in bytes\n");
	printf("%-22s %9s %9s %9s %9s %9s %9s\n", "object", ".text",
	       ".eh_frame", "_hdr", ".sframe", "jit", "jit map");
	for (i = 0; i < n; i++, s++)
		printf("%-22s %9zu %9zu %9zu %9zu %9zu %9zu\n", s->label,
		       s->text, s->eh_frame, s->eh_frame_hdr, s->sframe,
		       s->jit_records, s->jit_mapped);
}

int main(int argc, char **argv)
{
	struct sizes *s = calloc(argc, sizeof(*s));
	const char *label = NULL;
	int i, n = 0, err, bad = 0;

	if (!s || elf_version(EV_CURRENT) == EV_NONE)
		return 2;
	printf("# command:");
	for (i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-l") && i + 1 < argc) {
			label = argv[++i];
			continue;
		}
		s[n].label = label ?: argv[i];
		label = NULL;
		err = measure(argv[i], &s[n]);
		if (err) {
			fprintf(stderr, "bytes_bench: %s: %s\n", argv[i],
				strerror(-err));
			bad++;
			continue;
		}
		n++;
	}
	if (!n) {
		fprintf(stderr, "usage: bytes_bench [-l LABEL]... FILE...\n");
		return 2;
	}
	print_table(s, n);
	print_sizes(s, n);
	return bad ? 1 : 0;
}
