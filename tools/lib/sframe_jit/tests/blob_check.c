// SPDX-License-Identifier: GPL-2.0
/*
 * blob_check: sframe-run's reading of raw .eh_frame, as a JIT passes it
 * to __register_frame() (run/eh_blob.c), against the conversion of the
 * same bytes in their file, which the cross-check (cfi_check) finds
 * equal to libdw's, over the ELF objects of directories:
 *
 *	blob_check [-q] [PATH...]
 *
 * Each object's .eh_frame is copied into memory with a terminator after
 * it, at an address of its own, and read from there as a section
 * (every function) and as lone FDEs (the first 20 and every 997th after,
 * each with the entries from its CIE): each function must have the
 * file's start, moved by as much as the bytes moved, its size and its
 * rows.  A section whose entries stop at a terminator before its end is
 * counted apart: libgcc stops there too.  The default PATH is
 * /usr/lib/x86_64-linux-gnu.  Exit status 1 on a mismatch.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../run/sframe_run.h"

#define DEFAULT_DIR	"/usr/lib/x86_64-linux-gnu"
#define LONE_FIRST	20
#define LONE_EVERY	997

static struct {
	bool quiet;
	struct stat *seen;
	size_t nr_seen;
	size_t seen_cap;
	uint64_t objects;
	uint64_t skipped;
	uint64_t early_end;
	uint64_t funcs;
	uint64_t lone;
	uint64_t mismatches;
} w;

static bool seen_before(const struct stat *st)
{
	struct stat *s;
	size_t i;

	for (i = 0; i < w.nr_seen; i++)
		if (w.seen[i].st_dev == st->st_dev &&
		    w.seen[i].st_ino == st->st_ino)
			return true;
	if (w.nr_seen == w.seen_cap) {
		w.seen_cap = w.seen_cap ? 2 * w.seen_cap : 1024;
		s = realloc(w.seen, w.seen_cap * sizeof(*s));
		if (!s)
			return false;
		w.seen = s;
	}
	w.seen[w.nr_seen++] = *st;
	return false;
}

static bool rows_equal(const struct sframe_jit_row *a,
		       const struct sframe_jit_row *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].start_off != b[i].start_off ||
		    a[i].cfa_off != b[i].cfa_off || a[i].ra_off != b[i].ra_off ||
		    a[i].cfa_base != b[i].cfa_base || a[i].flags != b[i].flags ||
		    ((a[i].flags & SFRAME_JIT_ROW_FP_SAVED) &&
		     a[i].fp_off != b[i].fp_off))
			return false;
	return true;
}

/* Function @j of @blob against function @i of @file, @shift apart. */
static bool func_equal(const struct sframe_jit_cfi *file, uint32_t i,
		       const struct sframe_jit_cfi *blob, uint32_t j,
		       uint64_t shift)
{
	const struct sframe_jit_row *ra, *rb;
	struct sframe_jit_func a, b;

	sframe_jit_cfi_func(file, i, &a, &ra);
	sframe_jit_cfi_func(blob, j, &b, &rb);
	return b.start - shift == a.start && b.size == a.size &&
	       b.nr_rows == a.nr_rows && rows_equal(ra, rb, a.nr_rows);
}

static void report_mismatch(const char *path, const char *what,
			    uint64_t addr)
{
	if (w.mismatches++ < 10)
		printf("mismatch: %s: %s at %#llx\n", path, what,
		       (unsigned long long)addr);
}

/* The section read whole, against the file. */
static void check_section(const char *path, const struct sframe_jit_cfi *file,
			  const uint8_t *buf, uint64_t shift)
{
	struct sframe_jit_cfi *blob = NULL;
	uint32_t i, nr = sframe_jit_cfi_nr_funcs(file);
	uint64_t start, end;
	int err;

	err = sframe_run__blob_convert(buf, &blob, &start, &end);
	if (err) {
		if (nr)
			report_mismatch(path, "section conversion failed", 0);
		return;
	}
	if (sframe_jit_cfi_nr_funcs(blob) != nr) {
		/* Fewer when a terminator ends the entries early. */
		w.early_end++;
		sframe_jit_cfi_free(blob);
		return;
	}
	for (i = 0; i < nr; i++) {
		if (!func_equal(file, i, blob, i, shift)) {
			struct sframe_jit_func f;

			sframe_jit_cfi_func(file, i, &f, NULL);
			report_mismatch(path, "section function", f.start);
		}
		w.funcs++;
	}
	sframe_jit_cfi_free(blob);
}

/* The file's function that starts at @start, by a binary search. */
static int64_t file_func(const struct sframe_jit_cfi *file, uint64_t start)
{
	uint32_t lo = 0, hi = sframe_jit_cfi_nr_funcs(file), mid;
	struct sframe_jit_func f;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		sframe_jit_cfi_func(file, mid, &f, NULL);
		if (f.start == start)
			return mid;
		if (f.start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* One FDE read alone, at @fde, against the file's function. */
static void check_lone(const char *path, const struct sframe_jit_cfi *file,
		       const uint8_t *fde, uint64_t shift)
{
	struct sframe_jit_cfi *blob = NULL;
	uint64_t start, end;
	int64_t i;

	if (sframe_run__blob_convert(fde, &blob, &start, &end))
		return;
	i = file_func(file, start - shift);
	if (i < 0 || sframe_jit_cfi_nr_funcs(blob) != 1 ||
	    !func_equal(file, i, blob, 0, shift))
		report_mismatch(path, "lone FDE", start - shift);
	w.lone++;
	sframe_jit_cfi_free(blob);
}

static void check_lones(const char *path, const struct sframe_jit_cfi *file,
			const uint8_t *buf, size_t size, uint64_t shift)
{
	uint32_t len, id, k = 0;
	size_t off = 0;

	while (off + 8 <= size) {
		memcpy(&len, buf + off, 4);
		memcpy(&id, buf + off + 4, 4);
		if (!len || len == 0xffffffff || len > size - off - 4)
			break;
		if (id && (k < LONE_FIRST || !(k % LONE_EVERY)))
			check_lone(path, file, buf + off, shift);
		k += !!id;
		off += 4 + (size_t)len;
	}
}

static int find_eh_frame(Elf *elf, GElf_Shdr *shdr, Elf_Data **data)
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
		if (!n || strcmp(n, ".eh_frame") || shdr->sh_type == SHT_NOBITS)
			continue;
		*data = elf_getdata(scn, NULL);
		return *data ? 0 : -ENOEXEC;
	}
	return -ENOENT;
}

static void check_image(const char *path, const void *image, size_t size)
{
	struct sframe_jit_cfi *file = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	uint8_t *buf;
	Elf *elf;

	if (sframe_jit_cfi_convert(image, size, &file) < 0) {
		w.skipped++;
		return;
	}
	elf = elf_memory((char *)image, size);
	if (!elf || find_eh_frame(elf, &shdr, &data)) {
		w.skipped++;
		goto out;
	}
	buf = calloc(1, data->d_size + 16);
	if (!buf)
		goto out;
	memcpy(buf, data->d_buf, data->d_size);
	w.objects++;
	check_section(path, file, buf, (uintptr_t)buf - shdr.sh_addr);
	check_lones(path, file, buf, data->d_size,
		    (uintptr_t)buf - shdr.sh_addr);
	if (!w.quiet)
		printf("%s: %u functions\n", path,
		       sframe_jit_cfi_nr_funcs(file));
	free(buf);
out:
	if (elf)
		elf_end(elf);
	sframe_jit_cfi_free(file);
}

static int visit(const char *path, const struct stat *st, int type,
		 struct FTW *ftw)
{
	void *image;
	int fd;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < 64 ||
	    seen_before(st))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	image = mmap(NULL, st->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (image == MAP_FAILED)
		return 0;
	if (!memcmp(image, ELFMAG, SELFMAG))
		check_image(path, image, st->st_size);
	munmap(image, st->st_size);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (i < argc && !strcmp(argv[i], "-q")) {
		w.quiet = true;
		i++;
	}
	elf_version(EV_CURRENT);
	if (i == argc)
		nftw(DEFAULT_DIR, visit, 64, FTW_PHYS);
	for (; i < argc; i++)
		nftw(argv[i], visit, 64, FTW_PHYS);
	printf("total: objects %llu skipped %llu ended_early %llu ",
	       (unsigned long long)w.objects, (unsigned long long)w.skipped,
	       (unsigned long long)w.early_end);
	printf("functions %llu lone_fdes %llu mismatches %llu\n",
	       (unsigned long long)w.funcs, (unsigned long long)w.lone,
	       (unsigned long long)w.mismatches);
	free(w.seen);
	return w.mismatches != 0;
}
