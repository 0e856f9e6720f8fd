// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A file's table, made once per file identity: its own .sframe section
 * where it has one (PT_GNU_SFRAME), else its .eh_frame converted by
 * libsframe_jit and written as an SFrame section.  Every process that
 * maps the file is given the same bytes, so that the kernel shares one
 * copy between them.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sframe_jit.h>

#include "sframe_agent.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

static struct agent_table *tables;

static bool id_eq(const struct agent_file_id *a, const struct agent_file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

/* The GNU build ID of a PT_NOTE segment, if it has one. */
static void table_build_id(struct agent_table *t, const void *image,
			   size_t size, const GElf_Phdr *ph)
{
	const unsigned char *p = (const unsigned char *)image + ph->p_offset;
	const unsigned char *end = p + ph->p_filesz;
	uint32_t namesz, descsz, type;

	if (ph->p_offset > size || ph->p_filesz > size - ph->p_offset)
		return;
	while (end - p >= 12) {
		memcpy(&namesz, p, 4);
		memcpy(&descsz, p + 4, 4);
		memcpy(&type, p + 8, 4);
		p += 12;
		if (namesz > (size_t)(end - p) ||
		    ((namesz + 3) & ~3U) + (size_t)descsz > (size_t)(end - p))
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p, "GNU", 4) && descsz &&
		    descsz <= AGENT_BUILD_ID_MAX) {
			memcpy(t->build_id, p + 4, descsz);
			t->build_id_len = descsz;
			return;
		}
		p += ((namesz + 3) & ~3U) + ((descsz + 3) & ~3U);
	}
}

/* One symbol a debugger would look for, if it is one. */
static void table_sym(struct agent_table *t, const char *name,
		      const GElf_Sym *sym, uint64_t *dereg_size)
{
	if (!strcmp(name, "__jit_debug_descriptor")) {
		t->jit_desc = sym->st_value;
	} else if (!strcmp(name, "__jit_debug_register_code")) {
		t->jit_reg = sym->st_value;
	} else if (!strcmp(name, "__register_frame_info_bases")) {
		t->eh_reg = sym->st_value;
	} else if (!strcmp(name, "__deregister_frame_info_bases")) {
		t->eh_dereg = sym->st_value;
		*dereg_size = sym->st_size;
	}
}

/*
 * The GDB JIT interface's two symbols and libgcc's frame registration
 * functions, if the file defines them.
 */
static void table_syms(struct agent_table *t, Elf *e, const void *image,
		       size_t size)
{
	uint64_t dereg_size = 0;
	Elf_Scn *scn = NULL;
	const char *name;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf_Data *d;
	size_t i, n;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		d = elf_getdata(scn, NULL);
		n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n && gelf_getsym(d, i, &sym); i++) {
			if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && name[0] == '_' && name[1] == '_')
				table_sym(t, name, &sym, &dereg_size);
		}
	}
	if (t->eh_reg && t->eh_dereg) {
		agent_frames_lists(t, e, image, size, dereg_size);
	} else {
		t->eh_reg = 0;
		t->eh_dereg = 0;
	}
}

/*
 * The executable segments, the .sframe segment if any and the build ID,
 * from the program headers of the image.
 */
static int table_phdrs(struct agent_table *t, const void *image, size_t size,
		       uint64_t *sf_off, uint64_t *sf_size)
{
	GElf_Phdr ph;
	size_t i, n;
	Elf *e;
	int err = -ENOEXEC;

	e = elf_memory((char *)image, size);
	if (!e)
		return -ENOEXEC;
	if (elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n))
		goto out;
	*sf_size = 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(e, i, &ph))
			goto out;
		if (ph.p_type == PT_NOTE)
			table_build_id(t, image, size, &ph);
		if (ph.p_type == PT_GNU_SFRAME && ph.p_filesz &&
		    ph.p_offset + ph.p_filesz <= size) {
			*sf_off = ph.p_offset;
			*sf_size = ph.p_filesz;
			t->sframe_vaddr = ph.p_vaddr;
		}
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		if (t->nr_seg == AGENT_MAX_SEGMENTS)
			goto out;
		t->seg[t->nr_seg++] = (struct agent_segment){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset,
		};
	}
	err = t->nr_seg ? 0 : -ENOEXEC;
	if (!err)
		table_syms(t, e, image, size);
out:
	elf_end(e);
	return err;
}

/* The file's own section, copied: the image goes away. */
static int table_own(struct agent_table *t, const void *image,
		     uint64_t off, uint64_t size)
{
	t->sframe = malloc(size);
	if (!t->sframe)
		return -ENOMEM;
	memcpy(t->sframe, (const char *)image + off, size);
	t->sframe_size = size;
	t->kind = AGENT_TABLE_SFRAME;
	return 0;
}

/*
 * .eh_frame converted, written as if the section sat at the start of
 * the first executable segment: function starts stay small offsets.
 */
static int table_convert(struct agent_table *t, const void *image,
			 size_t size)
{
	struct sframe_jit_cfi_stats st = { .sz = sizeof(st) };
	struct sframe_jit_cfi *cfi;
	unsigned int i;
	int err;

	/* The .plt's stubs too: the kernel reads PCMASK functions. */
	err = sframe_jit_cfi_convert_flags(image, size, SFRAME_JIT_CFI_F_PLT,
					   &cfi);
	if (err == -ENOENT) {
		t->kind = AGENT_TABLE_NONE;
		return 0;
	}
	if (err < 0)
		return err;
	t->sframe_vaddr = t->seg[0].vaddr & ~4095ULL;
	err = sframe_jit_cfi_encode(cfi, t->sframe_vaddr, &t->sframe,
				    &t->sframe_size);
	if (!err && !sframe_jit_cfi_get_stats(cfi, &st)) {
		t->nr_funcs = st.nr_converted;
		t->nr_rows = st.nr_rows;
		for (i = 0; i < SFRAME_JIT_CFI_NR_REASONS; i++)
			t->nr_left += st.nr_unsupported[i];
	}
	sframe_jit_cfi_free(cfi);
	if (!err)
		t->kind = t->nr_funcs ? AGENT_TABLE_CONVERTED : AGENT_TABLE_NONE;
	return err;
}

static void table_make(struct agent_table *t, const void *image, size_t size,
		       const char *name)
{
	uint64_t sf_off = 0, sf_size = 0;
	int err;

	bool file = t->id.dev || t->id.ino;

	err = table_phdrs(t, image, size, &sf_off, &sf_size);
	if (!err && sf_size) {
		err = table_own(t, image, sf_off, sf_size);
	} else if (!err && !(file && !agent_cache_load(t))) {
		err = table_convert(t, image, size);
		if (!err && file)
			agent_cache_store(t);
	}
	if (err) {
		t->kind = AGENT_TABLE_FAILED;
		t->err = err;
		agent_log(1, "%s: no table: %s\n", name, strerror(-err));
		return;
	}
	agent_log(2, "%s: %s, %zu bytes, %llu functions\n", name,
		  t->kind == AGENT_TABLE_SFRAME ? ".sframe" :
		  t->kind == AGENT_TABLE_NONE ? "no unwind information" :
		  "converted", t->sframe_size,
		  (unsigned long long)t->nr_funcs);
}

/*
 * The table of identity @id, with *@made set if it is new and so still
 * to be made; NULL without memory.
 */
static struct agent_table *table_of(const struct agent_file_id *id,
				    bool *made)
{
	struct agent_table *t;

	*made = false;
	for (t = tables; t; t = t->next)
		if (id_eq(&t->id, id))
			return t;
	t = calloc(1, sizeof(*t));
	if (t) {
		t->id = *id;
		t->next = tables;
		tables = t;
		*made = true;
	}
	return t;
}

/**
 * agent_table_get() - the table of an open file, made on first use
 * @fd: the file, opened for reading.
 * @name: its name, for messages.
 *
 * Return: the table, which lives until agent_tables_free(), with its
 * kind saying whether it can be registered; NULL without memory.
 */
struct agent_table *agent_table_get(int fd, const char *name)
{
	struct agent_file_id id;
	struct agent_table *t;
	struct stat st;
	void *image;
	bool made;

	if (fstat(fd, &st))
		return NULL;
	id = (struct agent_file_id){
		.dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
		.mtime_ns = st.st_mtim.tv_sec * 1000000000LL +
			    st.st_mtim.tv_nsec,
	};
	t = table_of(&id, &made);
	if (!made)
		return t;
	image = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (image == MAP_FAILED) {
		t->kind = AGENT_TABLE_FAILED;
		t->err = -errno;
		return t;
	}
	table_make(t, image, st.st_size, name);
	munmap(image, st.st_size);
	return t;
}

/* FNV-1a: an image's identity is its bytes. */
static uint64_t image_hash(const unsigned char *p, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (size--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

/**
 * agent_table_of_image() - the table of an image with no file (the vDSO)
 * @image: the image's bytes.
 * @size: how many.
 * @name: its name, for messages.
 *
 * Images of the same size and hash share a table: a collision could
 * only give a process the vDSO table of another kernel's vDSO, which no
 * process of this one has.
 *
 * Return: as agent_table_get().
 */
struct agent_table *agent_table_of_image(const void *image, size_t size,
					 const char *name)
{
	struct agent_file_id id = {
		.size = size, .mtime_ns = (int64_t)image_hash(image, size),
	};
	struct agent_table *t;
	bool made;

	t = table_of(&id, &made);
	if (made)
		table_make(t, image, size, name);
	return t;
}

/**
 * agent_table_offset() - the file offset of an address of a file's code
 * @t: the file's table, with its executable segments.
 * @vaddr: the address, in the file's layout.
 * @off: set to its offset in the file.
 *
 * Return: true if @vaddr is in one of @t's executable segments.
 */
bool agent_table_offset(const struct agent_table *t, uint64_t vaddr,
			uint64_t *off)
{
	const struct agent_segment *s;
	unsigned int i;

	for (i = 0; i < t->nr_seg; i++) {
		s = &t->seg[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz) {
			*off = vaddr - s->vaddr + s->offset;
			return true;
		}
	}
	return false;
}

/**
 * agent_tables_free() - free every table
 */
void agent_tables_free(void)
{
	struct agent_table *t;

	while (tables) {
		t = tables;
		tables = t->next;
		free(t->sframe);
		free(t);
	}
}
