// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What is loaded: a snapshot of the loader's list of objects, each with
 * its executable range, its PT_GNU_SFRAME segment if any, and where its
 * bytes can be read from.
 *
 * The snapshot is taken without any lock of sframe-run's, because
 * dl_iterate_phdr() holds the loader's lock while it calls back, and a
 * constructor that dlopen()s holds that lock too when it reaches the
 * interposed dlopen(): taking sframe-run's lock inside the callback
 * would order the two locks both ways.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "sframe_run.h"

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME	0x6474e554
#endif

#define EXE_PATH	"/proc/self/exe"

struct collect {
	struct sframe_run_snapshot *snap;
	uint32_t cap;
	int err;
};

/*
 * The vDSO has no file: its whole image, section headers included, is
 * mapped, and the headers say how long it is.
 */
static void vdso_image(struct sframe_run_obj *o, const Elf64_Ehdr *eh)
{
	o->image = eh;
	o->image_size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (o->image_size < eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize)
		o->image_size = eh->e_phoff +
				(size_t)eh->e_phnum * eh->e_phentsize;
}

static void obj_segments(struct sframe_run_obj *o, const struct dl_phdr_info *info)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	const Elf64_Phdr *ph;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz) {
			if (ph->p_vaddr < lo)
				lo = ph->p_vaddr;
			if (ph->p_vaddr + ph->p_memsz > hi)
				hi = ph->p_vaddr + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_SFRAME && ph->p_memsz) {
			o->sframe_start = info->dlpi_addr + ph->p_vaddr;
			o->sframe_size = ph->p_memsz;
		}
	}
	if (hi) {
		o->text_start = info->dlpi_addr + lo;
		o->text_end = info->dlpi_addr + hi;
	}
}

static const char *obj_file(const struct dl_phdr_info *info, bool first)
{
	if (info->dlpi_name && info->dlpi_name[0])
		return info->dlpi_name;
	/* The executable comes first, with an empty name. */
	return first ? EXE_PATH : NULL;
}

static int one_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct collect *c = arg;
	struct sframe_run_snapshot *s = c->snap;
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	struct sframe_run_obj o = { .bias = info->dlpi_addr };
	const char *file;

	(void)size;
	s->gen = info->dlpi_adds + info->dlpi_subs;
	obj_segments(&o, info);
	if (!o.text_end)
		return 0;
	file = obj_file(info, !s->nr);
	if (vdso && (uintptr_t)info->dlpi_phdr ==
		    vdso + ((const Elf64_Ehdr *)vdso)->e_phoff)
		vdso_image(&o, (const Elf64_Ehdr *)vdso);
	else if (!file)
		return 0;
	o.name = strdup(file ?: "[vdso]");
	if (!o.name || sframe_jit__grow((void **)&s->objs, &c->cap, s->nr,
					sizeof(*s->objs))) {
		free(o.name);
		c->err = -ENOMEM;
		return 1;
	}
	s->objs[s->nr++] = o;
	return 0;
}

/**
 * sframe_run__snapshot() - the objects loaded now
 * @snap: filled in; free it with sframe_run__snapshot_free().
 *
 * Objects without executable segments are left out, as is any object
 * without a name but the executable and the vDSO.
 *
 * Return: 0 or -ENOMEM, with an empty @snap.
 */
int sframe_run__snapshot(struct sframe_run_snapshot *snap)
{
	struct collect c = { .snap = snap };

	memset(snap, 0, sizeof(*snap));
	dl_iterate_phdr(one_object, &c);
	if (c.err)
		sframe_run__snapshot_free(snap);
	return c.err;
}

static int gen_only(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_adds + info->dlpi_subs;
	return 1;
}

/**
 * sframe_run__gen() - the loader's count of loads and unloads
 *
 * Return: dlpi_adds + dlpi_subs, which changes whenever an object comes
 * or goes: a sync that finds it unchanged has nothing to do.
 */
uint64_t sframe_run__gen(void)
{
	uint64_t gen = 0;

	dl_iterate_phdr(gen_only, &gen);
	return gen;
}

/**
 * sframe_run__obj_free() - free what an object owns
 * @obj: the object.
 */
void sframe_run__obj_free(struct sframe_run_obj *obj)
{
	free(obj->name);
	obj->name = NULL;
}

/**
 * sframe_run__snapshot_free() - free a snapshot and its objects
 * @snap: the snapshot.
 */
void sframe_run__snapshot_free(struct sframe_run_snapshot *snap)
{
	uint32_t i;

	for (i = 0; i < snap->nr; i++)
		sframe_run__obj_free(&snap->objs[i]);
	free(snap->objs);
	snap->objs = NULL;
	snap->nr = 0;
}
