// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GDB JIT interface, read rather than interposed: a JIT links an
 * in-memory ELF object per piece of code into the list of its
 * __jit_debug_descriptor and calls __jit_debug_register_code(), a
 * function that does nothing but carry a debugger's breakpoint.
 *
 * Defining the two symbols in the preload would not do: libLLVM-14
 * reaches its descriptor through the GOT, so ours would take its
 * objects, but calls its own __jit_debug_register_code() directly
 * (-Bsymbolic-functions), and a debugger stopping in libLLVM's would
 * find libLLVM's descriptor empty: sframe-run would break gdb.  So the
 * descriptor of each object that defines one is looked up and its list
 * walked at the moments sframe-run runs anyway (__register_frame() and
 * its kin, pthread_create(), dlopen(), dlclose(), exit).
 *
 * Of each object: the functions of its .symtab go to the perf map, so
 * that perf report names them; its .eh_frame, or without one its
 * .debug_frame, is converted only in an executable or shared object,
 * whose addresses are final.  QEMU's TCG writes such an object: one
 * for its whole code buffer, a function code_gen_buffer in .symtab and
 * a .debug_frame of one FDE, the frame of the prologue in which every
 * translated block runs.  LLVM hands debuggers a copy of the
 * relocatable object with the section addresses set but the
 * relocations not applied, whose .eh_frame says nothing true; LLVM
 * registers the relocated one through __register_frame() (frames.c),
 * which is where its rows come from.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "gdb_jit.h"
#include "sframe_run.h"

/* Entries of one list walked at most: a bound for a corrupt one. */
#define MAX_ENTRIES		(1024u * 1024)
/* An object's image at most: a bound for a corrupt entry. */
#define MAX_IMAGE		(1024ull * 1024 * 1024)
/* Objects whose names are looked up for a descriptor. */
#define MAX_OBJECTS		1024

/**
 * sframe_run__gdbjit_init() - set up the follower of the GDB JIT interface
 * @g: the follower.
 * @ops: how ranges reach the kernel.
 * @perf_map_path: where names go; NULL for /tmp/perf-PID.map.
 */
void sframe_run__gdbjit_init(struct sframe_run_gdbjit *g,
			     const struct sframe_run_ops *ops,
			     const char *perf_map_path)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	g->ops = ops;
	g->perf_map_path = perf_map_path;
}

/**
 * sframe_run__gdbjit_fini() - unpublish every object and free the follower
 * @g: the follower.
 */
void sframe_run__gdbjit_fini(struct sframe_run_gdbjit *g)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++)
		sframe_run__unpublish(g->ops, &g->objs[i].reg);
	free(g->objs);
	if (g->pm_open)
		sframe_jit__perf_map_close(&g->pm);
	pthread_mutex_destroy(&g->lock);
	memset(g, 0, sizeof(*g));
}

static int watch_locked(struct sframe_run_gdbjit *g, const void *desc)
{
	uint32_t i;

	for (i = 0; i < g->nr_descs; i++)
		if (g->descs[i] == desc)
			return 0;
	if (g->nr_descs == SFRAME_RUN_MAX_DESCS)
		return -ENOSPC;
	g->descs[g->nr_descs++] = desc;
	return 0;
}

/**
 * sframe_run__gdbjit_watch() - follow one more jit_descriptor
 * @g: the follower.
 * @desc: the descriptor, which must stay mapped as long as @g lives.
 *
 * For a descriptor that no loaded object exports by that name.  Call
 * before the first poll.
 *
 * Return: 0, or -ENOSPC past SFRAME_RUN_MAX_DESCS.
 */
int sframe_run__gdbjit_watch(struct sframe_run_gdbjit *g, const void *desc)
{
	int err;

	pthread_mutex_lock(&g->lock);
	err = watch_locked(g, desc);
	if (!err)
		g->nr_watched = g->nr_descs;
	pthread_mutex_unlock(&g->lock);
	return err;
}

struct names {
	char *v[MAX_OBJECTS];
	uint32_t nr;
};

/* No dlopen() here: the loader's lock is held. */
static int names_add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct names *n = arg;

	(void)size;
	if (n->nr == MAX_OBJECTS)
		return 1;
	/* The executable has no name; the vDSO defines nothing of this. */
	if (!n->nr)
		n->v[n->nr++] = NULL;
	else if (info->dlpi_name[0] == '/')
		n->v[n->nr++] = strdup(info->dlpi_name);
	return 0;
}

/*
 * Each loaded object's own __jit_debug_descriptor, through a handle of
 * it (dlsym() looks in the object before its dependencies), once per
 * change of the loaded objects: afresh, since an unloaded object's
 * descriptor is no longer mapped.
 */
static void descs_find(struct sframe_run_gdbjit *g)
{
	uint64_t gen = sframe_run__gen();
	struct names *n;
	void *h, *d;
	uint32_t i;

	if (gen == g->descs_gen)
		return;
	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	g->descs_gen = gen;
	g->nr_descs = g->nr_watched;
	dl_iterate_phdr(names_add, n);
	for (i = 0; i < n->nr; i++) {
		if (i && !n->v[i])
			continue;
		h = dlopen(n->v[i], RTLD_NOLOAD | RTLD_LAZY);
		free(n->v[i]);
		if (!h)
			continue;
		d = dlsym(h, "__jit_debug_descriptor");
		if (d)
			watch_locked(g, d);
		dlclose(h);
	}
	free(n);
}

static struct sframe_run_gdbobj *obj_find(struct sframe_run_gdbjit *g,
					  const void *image, uint64_t size)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++)
		if (g->objs[i].image == image && g->objs[i].size == size)
			return &g->objs[i];
	return NULL;
}

static void name_write(struct sframe_run_gdbjit *g, struct sframe_run_gdbobj *o,
		       uint64_t start, uint64_t size, const char *name)
{
	if (!g->pm_open) {
		if (sframe_jit__perf_map_open(&g->pm, g->perf_map_path))
			return;
		g->pm_open = true;
	}
	if (!sframe_jit__perf_map_write(&g->pm, start, size, name))
		o->nr_names++;
}

/* A symbol's address: in a relocatable object, from its section's. */
static bool sym_addr(Elf *elf, const GElf_Ehdr *ehdr, const GElf_Sym *sym,
		     uint64_t *addr)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_size ||
	    sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return false;
	*addr = sym->st_value;
	if (ehdr->e_type != ET_REL)
		return true;
	scn = elf_getscn(elf, sym->st_shndx);
	if (!scn || !gelf_getshdr(scn, &shdr))
		return false;
	*addr += shdr.sh_addr;
	return true;
}

static void symtab_names(struct sframe_run_gdbjit *g,
			 struct sframe_run_gdbobj *o, Elf *elf,
			 const GElf_Ehdr *ehdr, Elf_Scn *scn,
			 const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *name;
	uint64_t addr;
	GElf_Sym sym;
	size_t i, nr;

	if (!data || !shdr->sh_entsize)
		return;
	nr = shdr->sh_size / shdr->sh_entsize;
	for (i = 1; i < nr; i++) {
		if (!gelf_getsym(data, i, &sym) ||
		    !sym_addr(elf, ehdr, &sym, &addr))
			continue;
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (name && *name)
			name_write(g, o, addr, sym.st_size, name);
	}
}

static void obj_names(struct sframe_run_gdbjit *g, struct sframe_run_gdbobj *o)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Ehdr ehdr;
	Elf *elf;

	if (sframe_jit__elf_open(o->image, o->size, &elf, &ehdr))
		return;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			symtab_names(g, o, elf, &ehdr, scn, &shdr);
	elf_end(elf);
}

/*
 * An object with final addresses, whose CFI can be believed: a JIT's
 * .debug_frame describes the code it wrote, as its .eh_frame would.
 */
static void obj_rows(struct sframe_run_gdbjit *g, struct sframe_run_gdbobj *o)
{
	struct sframe_jit_cfi *cfi = NULL;
	struct sframe_jit_func lo, hi;
	uint32_t nr;
	int ret;

	o->reg.kind = SFRAME_RUN_NONE;
	o->reg.err = -ENOENT;
	ret = sframe_jit__cfi_convert(o->image, o->size,
				      SFRAME_JIT__CFI_DEBUG_FRAME, &cfi);
	if (ret < 0) {
		o->reg.err = ret;
		return;
	}
	nr = sframe_jit_cfi_nr_funcs(cfi);
	if (nr) {
		sframe_jit_cfi_func(cfi, 0, &lo, NULL);
		sframe_jit_cfi_func(cfi, nr - 1, &hi, NULL);
		sframe_run__publish_cfi(g->ops, lo.start, hi.start + hi.size,
					cfi, 0, false, &o->reg);
	}
	sframe_jit_cfi_free(cfi);
}

static void obj_add(struct sframe_run_gdbjit *g, const void *image,
		    uint64_t size)
{
	struct sframe_run_gdbobj *o;

	if (sframe_jit__grow((void **)&g->objs, &g->cap, g->nr, sizeof(*o)))
		return;
	o = &g->objs[g->nr++];
	memset(o, 0, sizeof(*o));
	o->image = image;
	o->size = size;
	o->seen = true;
	obj_names(g, o);
	obj_rows(g, o);
	if (g->report)
		g->report(o, false);
}

static void desc_walk(struct sframe_run_gdbjit *g,
		      const struct jit_descriptor *d)
{
	const struct jit_code_entry *e;
	struct sframe_run_gdbobj *o;
	uint32_t n = 0;

	if (d->version != 1)
		return;
	for (e = d->first_entry; e && n < MAX_ENTRIES; e = e->next_entry, n++) {
		if (!e->symfile_addr || e->symfile_size < EI_NIDENT ||
		    e->symfile_size > MAX_IMAGE)
			continue;
		o = obj_find(g, e->symfile_addr, e->symfile_size);
		if (o)
			o->seen = true;
		else
			obj_add(g, e->symfile_addr, e->symfile_size);
	}
}

static void objs_sweep(struct sframe_run_gdbjit *g)
{
	struct sframe_run_gdbobj *o;
	uint32_t i;

	for (i = 0; i < g->nr;) {
		o = &g->objs[i];
		if (o->seen) {
			o->seen = false;
			i++;
			continue;
		}
		if (g->report)
			g->report(o, true);
		sframe_run__unpublish(g->ops, &o->reg);
		*o = g->objs[--g->nr];
	}
}

/*
 * A JIT changes its list and then these fields; if none changed since
 * the last walk, the list did not either, short of an entry unlinked
 * and another linked at the same place, which the next full poll finds.
 */
static bool descs_changed(struct sframe_run_gdbjit *g)
{
	const struct jit_descriptor *d;
	bool changed = false;
	uint32_t i;

	for (i = 0; i < g->nr_descs; i++) {
		d = g->descs[i];
		if (g->marks[i].first != d->first_entry ||
		    g->marks[i].relevant != d->relevant_entry ||
		    g->marks[i].action != d->action_flag)
			changed = true;
		g->marks[i].first = d->first_entry;
		g->marks[i].relevant = d->relevant_entry;
		g->marks[i].action = d->action_flag;
	}
	return changed;
}

/* With @find, look the descriptors up first; with @walk, walk anyway. */
static void poll_locked(struct sframe_run_gdbjit *g, bool find, bool walk)
{
	uint32_t i;

	if (find)
		descs_find(g);
	if (!descs_changed(g) && !walk)
		return;
	for (i = 0; i < g->nr; i++)
		g->objs[i].seen = false;
	for (i = 0; i < g->nr_descs; i++)
		desc_walk(g, g->descs[i]);
	objs_sweep(g);
}

/**
 * sframe_run__gdbjit_poll() - bring the objects in step with the JITs' lists
 * @g: the follower.
 *
 * Looks up the descriptors again if objects were loaded or unloaded,
 * then publishes the objects that are new and unpublishes those gone.
 * The lists are read without the JITs' locks, which are their own: a
 * poll runs where a JIT does not change its list, in its own calls to
 * __register_frame() and the loader, or at exit.
 */
void sframe_run__gdbjit_poll(struct sframe_run_gdbjit *g)
{
	pthread_mutex_lock(&g->lock);
	poll_locked(g, true, true);
	pthread_mutex_unlock(&g->lock);
}

/**
 * sframe_run__gdbjit_walk() - walk the lists of the descriptors known
 * @g: the follower.
 *
 * As sframe_run__gdbjit_poll() without looking the descriptors up,
 * which opens handles of objects: for exit, where the loader is
 * unloading them.
 */
void sframe_run__gdbjit_walk(struct sframe_run_gdbjit *g)
{
	pthread_mutex_lock(&g->lock);
	poll_locked(g, false, true);
	pthread_mutex_unlock(&g->lock);
}

/*
 * The check of descs_changed() without the lock or a write, for the
 * common case of nothing new: a race with a poll that moves the marks
 * only sends this one to the lock.
 */
static bool descs_unchanged(struct sframe_run_gdbjit *g)
{
	uint32_t i, nr = __atomic_load_n(&g->nr_descs, __ATOMIC_RELAXED);
	const struct jit_descriptor *d;

	for (i = 0; i < nr && i < SFRAME_RUN_MAX_DESCS; i++) {
		d = __atomic_load_n(&g->descs[i], __ATOMIC_RELAXED);
		if (__atomic_load_n(&g->marks[i].first, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&d->first_entry, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&g->marks[i].relevant, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&d->relevant_entry, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&g->marks[i].action, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&d->action_flag, __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

/**
 * sframe_run__gdbjit_poll_quick() - the same, if a descriptor changed
 * @g: the follower.
 *
 * For each registration a JIT makes and each thread a program starts:
 * the descriptors as last looked up, and the lists walked only when a
 * descriptor's fields moved.
 */
void sframe_run__gdbjit_poll_quick(struct sframe_run_gdbjit *g)
{
	if (descs_unchanged(g))
		return;
	pthread_mutex_lock(&g->lock);
	poll_locked(g, false, false);
	pthread_mutex_unlock(&g->lock);
}
