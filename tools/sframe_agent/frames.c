// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libgcc's frame registry, read from outside the process.  LLVM's MCJIT
 * and ORC (lli, PostgreSQL's llvmjit) hand each object's .eh_frame to
 * __register_frame(), which reaches __register_frame_info_bases(), and
 * take it back through __deregister_frame_info_bases(), so that C++
 * exceptions unwind through JIT code.  Both get a uprobe (uprobe.c) that
 * records the first argument, the entries' address: a registration is
 * read with process_vm_readv(), converted and registered, a
 * deregistration unregisters.  The JIT does not wait: its code runs
 * without its table until the agent has read the hit.  Code that is not
 * executable yet when the hit is read (RuntimeDyld registers before it
 * makes its code executable, and the kernel takes tables only for
 * executable code) is registered at the mapping that makes it so.
 *
 * What was registered before the agent came is in libgcc's two lists,
 * static variables no symbol names.  The only code that reads them
 * both, __deregister_frame_info_bases(), gives them away: its first two
 * loads from .bss are the lists' heads (libgcc 12, Debian 12's).  Each
 * object is checked against the layout of that libgcc's struct object
 * before it is believed: an object not yet looked at holds the values
 * __register_frame_info_bases() gave it, a sorted one points back at its
 * entries.  A libgcc whose code or objects do not match (GCC 13 keeps
 * its registrations in a b-tree) gives no lists: objects it registered
 * before the attach are left to frame pointers, and counted, and those
 * after are followed all the same.
 *
 * Everything here is the process's memory, which it may have made to
 * make the agent work: one registration's entries are read up to 4 MiB,
 * and a walk of the lists stops at 4096 objects a list and 64 MiB read
 * in all.  Past the size bounds an object is counted without a table;
 * a list longer than 4096 objects counts its process among those whose
 * earlier registrations were not all read.
 *
 * Policies, as sframe-run's defaults: a deregistration unregisters, so
 * that code at reused addresses never meets old rows (only the agent's
 * delay in reading the hit); a registration at entries the agent holds
 * already replaces what it held.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include <sframe_jit.h>

#include "sframe_agent.h"

/* Bytes of __deregister_frame_info_bases() read for its loads at most. */
#define FN_SCAN			512
/* Objects of one list walked at most: a bound for a corrupt one. */
#define LIST_MAX		4096
/*
 * Bytes of one registration's entries read at most (a JIT object's are
 * kilobytes), and of all those a walk of the lists reads: what a process
 * can make the agent read, hit by hit or at its attach.
 */
#define ENTRIES_MAX		(4u << 20)
#define WALK_MAX		(64u << 20)
/* The first read of entries; each further one reads four times more. */
#define ENTRIES_FIRST		4096

/* libgcc 12's struct object (unwind-dw2-fde.h), on x86-64. */
struct gcc_object {
	uint64_t pc_begin;
	uint64_t tbase;
	uint64_t dbase;
	uint64_t u;		/* the entries, or a struct fde_vector */
	uint64_t s;		/* bit 0 sorted, bit 1 from_array */
	uint64_t next;
};

#define GCC_S_SORTED		0x1ULL
#define GCC_S_FROM_ARRAY	0x2ULL
/* What __register_frame_info_bases() stores: encoding DW_EH_PE_omit. */
#define GCC_S_UNSEEN		(0xffULL << 3)
#define GCC_PC_UNSEEN		(~0ULL)

/* The range of @e's .bss: what its writable segments hold past file. */
static bool bss_range(Elf *e, uint64_t *lo, uint64_t *hi)
{
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(e, &n))
		return false;
	for (i = 0; i < n && gelf_getphdr(e, i, &ph); i++) {
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W) ||
		    ph.p_memsz <= ph.p_filesz)
			continue;
		*lo = ph.p_vaddr + ph.p_filesz;
		*hi = ph.p_vaddr + ph.p_memsz;
		return true;
	}
	return false;
}

/*
 * A load "mov disp32(%rip), %reg64" at @c: REX.W (and R), 8B, ModRM
 * with mod 0 and r/m 5.  Its target in *@to.
 */
static bool rip_load(const uint8_t *c, uint64_t at, uint64_t *to)
{
	int32_t disp;

	if ((c[0] & 0xfb) != 0x48 || c[1] != 0x8b || (c[2] & 0xc7) != 0x05)
		return false;
	memcpy(&disp, c + 3, sizeof(disp));
	*to = at + 7 + (int64_t)disp;
	return true;
}

/**
 * agent_frames_lists() - find libgcc's lists of registered objects
 * @t: the table of a file that defines __deregister_frame_info_bases(),
 *	whose @eh_dereg is set; @eh_list set here, if they are found.
 * @e: the file.
 * @image: its bytes.
 * @size: how many.
 * @fn_size: the function's size, from its symbol.
 */
void agent_frames_lists(struct agent_table *t, Elf *e, const void *image,
			size_t size, uint64_t fn_size)
{
	uint64_t off, lo, hi, to;
	const uint8_t *c;
	unsigned int n = 0;
	size_t i;

	if (!agent_table_offset(t, t->eh_dereg, &off) || off >= size ||
	    !bss_range(e, &lo, &hi))
		return;
	if (fn_size > FN_SCAN)
		fn_size = FN_SCAN;
	if (fn_size > size - off)
		fn_size = size - off;
	c = (const uint8_t *)image + off;
	for (i = 0; i + 7 <= fn_size && n < 2; i++) {
		if (!rip_load(c + i, t->eh_dereg + i, &to) || to < lo ||
		    to + 8 > hi || (to & 7))
			continue;
		if (n && t->eh_list[0] == to)
			continue;
		t->eh_list[n++] = to;
	}
	if (n < 2)
		t->eh_list[0] = 0;
}

static struct agent_eh_obj *eh_find(struct agent_proc *p, uint64_t begin)
{
	size_t i;

	for (i = 0; i < p->nr_eh; i++)
		if (p->eh[i].begin == begin)
			return &p->eh[i];
	return NULL;
}

static struct agent_eh_obj *eh_new(struct agent_proc *p, uint64_t begin)
{
	struct agent_eh_obj *n;

	if (p->nr_eh == p->cap_eh) {
		n = realloc(p->eh, (p->cap_eh * 2 + 8) * sizeof(*n));
		if (!n)
			return NULL;
		p->eh = n;
		p->cap_eh = p->cap_eh * 2 + 8;
	}
	n = &p->eh[p->nr_eh++];
	*n = (struct agent_eh_obj){ .begin = begin };
	return n;
}

/*
 * The entries at @begin, copied out of the process up to their
 * terminator: read a page, then four times more as long as the entries
 * go on.
 */
static int entries_read(pid_t pid, uint64_t begin, void **bufp, size_t *lenp,
			size_t *budget)
{
	size_t want = ENTRIES_FIRST;
	void *buf = NULL, *n;
	ssize_t got;
	int err;

	for (;;) {
		if (budget && want > *budget) {
			err = -E2BIG;
			break;
		}
		n = realloc(buf, want);
		if (!n) {
			err = -ENOMEM;
			break;
		}
		buf = n;
		got = agent_read(pid, begin, buf, want);
		if (got < 0) {
			err = (int)got;
			break;
		}
		if (budget)
			*budget -= got;
		err = sframe_jit_eh_frame_extent(buf, got, lenp);
		if (err != -EAGAIN)
			break;
		/* Short of the terminator, and of mapped memory or the bound. */
		if ((size_t)got < want || want >= ENTRIES_MAX) {
			err = -EFAULT;
			break;
		}
		want *= 4;
	}
	if (err) {
		free(buf);
		return err;
	}
	*bufp = buf;
	return 0;
}

/* Read, convert and register the entries at @begin; the range in @o. */
static int eh_register(struct agent_proc *p, struct agent_eh_obj *o,
		       struct agent_stats *st, size_t *budget)
{
	struct sframe_jit_cfi *cfi;
	size_t len;
	void *buf;
	int err;

	err = entries_read(p->pid, o->begin, &buf, &len, budget);
	if (err)
		return err;
	err = sframe_jit_cfi_convert_eh_frame(buf, len, o->begin, &cfi);
	free(buf);
	if (err < 0)
		return err;
	err = agent_cfi_register(p, cfi, &o->start, &o->end, st);
	sframe_jit_cfi_free(cfi);
	return err;
}

static void eh_drop(struct agent_proc *p, struct agent_eh_obj *o)
{
	if (o->end && !o->waiting)
		agent_unregister(p->pidfd, o->start, o->end);
	*o = p->eh[--p->nr_eh];
}

static void eh_registered(struct agent_proc *p, struct agent_eh_obj *o,
			  struct agent_stats *st)
{
	st->frames++;
	agent_log(2, "%d: frame %#llx: registered %#llx-%#llx\n",
		  (int)p->pid, (unsigned long long)o->begin,
		  (unsigned long long)o->start, (unsigned long long)o->end);
}

/* A registration, with what is left of a walk's @budget (or none). */
static void eh_add(struct agent_proc *p, uint64_t begin,
		   struct agent_stats *st, size_t *budget)
{
	struct agent_eh_obj *o = eh_find(p, begin);
	int err;

	if (o)
		eh_drop(p, o);
	o = eh_new(p, begin);
	if (!o)
		return;
	err = eh_register(p, o, st, budget);
	if (!err) {
		eh_registered(p, o, st);
		return;
	}
	st->frames_none++;
	agent_log(2, "%d: frame %#llx: %s\n", (int)p->pid,
		  (unsigned long long)begin, strerror(-err));
	/*
	 * Code not mapped executable yet: LLVM's RuntimeDyld hands its
	 * entries to libgcc before its memory manager makes the code
	 * executable.  Tried again at the mapping that makes it so.
	 */
	if (err == -EACCES) {
		o->waiting = true;
		return;
	}
	/* Kept, rangeless: its deregistration is then known. */
	o->start = 0;
	o->end = 0;
}

/**
 * agent_frames_add() - a registration: give its code its rows
 * @p: the process.
 * @begin: the entries, __register_frame_info_bases()'s first argument.
 * @st: what was done, added to.
 */
void agent_frames_add(struct agent_proc *p, uint64_t begin,
		      struct agent_stats *st)
{
	eh_add(p, begin, st, NULL);
}

/**
 * agent_frames_remove() - a deregistration: its code loses its rows
 * @p: the process.
 * @begin: the entries, __deregister_frame_info_bases()'s first argument.
 * @st: what was done, added to.
 */
void agent_frames_remove(struct agent_proc *p, uint64_t begin,
			 struct agent_stats *st)
{
	struct agent_eh_obj *o = eh_find(p, begin);

	if (!o)
		return;
	if (o->end && !o->waiting)
		st->frames_removed++;
	agent_log(2, "%d: frame %#llx: removed\n", (int)p->pid,
		  (unsigned long long)begin);
	eh_drop(p, o);
}

/*
 * The entries of one object of a list; 0 for one whose entries cannot
 * be had (a table of FDE pointers), -EPROTO for what is no object of
 * this libgcc.
 */
static int object_entries(pid_t pid, const struct gcc_object *ob,
			  uint64_t *begin)
{
	*begin = 0;
	if (ob->s & GCC_S_FROM_ARRAY)
		return 0;
	if (ob->s & GCC_S_SORTED)
		return agent_peek(pid, ob->u, begin, sizeof(*begin)) ? -EPROTO : 0;
	if (ob->pc_begin != GCC_PC_UNSEEN || ob->s != GCC_S_UNSEEN)
		return -EPROTO;
	*begin = ob->u;
	return 0;
}

/*
 * Every object of the list whose head is at @head, within @budget;
 * -E2BIG for a list longer than LIST_MAX, whose rest is not read.
 */
static int list_walk(struct agent_proc *p, uint64_t head,
		     struct agent_stats *st, size_t *budget)
{
	struct gcc_object ob;
	uint64_t at, begin;
	unsigned int n = 0;
	int err;

	if (agent_peek(p->pid, head, &at, sizeof(at)))
		return -EFAULT;
	for (; at && n < LIST_MAX; at = ob.next, n++) {
		if (agent_peek(p->pid, at, &ob, sizeof(ob)))
			return -EPROTO;
		err = object_entries(p->pid, &ob, &begin);
		if (err)
			return err;
		if (!begin)
			st->frames_none++;
		else if (!eh_find(p, begin))
			eh_add(p, begin, st, budget);
	}
	return at ? -E2BIG : 0;
}

/**
 * agent_frames_attach() - follow a process's libgcc frame registry
 * @p: the process.
 * @t: the table of its libgcc, whose @eh_reg is set.
 * @m: the mapping of that file's code.
 * @bias: where the process loaded the file, less its own layout.
 * @st: what was done, added to.
 *
 * Probes the two functions, then reads the objects registered so far:
 * one registered in between is read twice, the second time replacing
 * the first.
 */
void agent_frames_attach(struct agent_proc *p, const struct agent_table *t,
			 const struct agent_map *m, uint64_t bias,
			 struct agent_stats *st)
{
	size_t budget = WALK_MAX;
	int i, err = 0;

	if (p->eh_attached)
		return;
	p->eh_attached = true;
	agent_uprobe_add(p->pid, m, t, t->eh_reg, AGENT_PROBE_FRAME_REG);
	agent_uprobe_add(p->pid, m, t, t->eh_dereg, AGENT_PROBE_FRAME_DEREG);
	if (!t->eh_list[0]) {
		st->frames_unread++;
		agent_log(1, "%d: %s: its registered frames cannot be read\n",
			  (int)p->pid, m->path);
		return;
	}
	for (i = 0; i < 2 && !err; i++)
		err = list_walk(p, bias + t->eh_list[i], st, &budget);
	if (err) {
		st->frames_unread++;
		agent_log(1, "%d: %s: its registered frames: %s\n",
			  (int)p->pid, m->path, strerror(-err));
	}
}

/**
 * agent_frames_exec() - code became executable: what waited for it
 * @p: the process.
 * @start: the start of a mapping made or made executable.
 * @end: its end.
 * @st: what was done, added to.
 *
 * Registrations whose code was not executable when their hit was read
 * are read and registered again, each at the first mapping that meets
 * its range: a process can make the agent read an object again only by
 * mapping code over it.
 */
void agent_frames_exec(struct agent_proc *p, uint64_t start, uint64_t end,
		       struct agent_stats *st)
{
	struct agent_eh_obj *o;
	size_t i;
	int err;

	for (i = 0; i < p->nr_eh; i++) {
		o = &p->eh[i];
		if (!o->waiting || o->end <= start || o->start >= end)
			continue;
		err = eh_register(p, o, st, NULL);
		if (err == -EACCES)
			continue;
		o->waiting = false;
		if (err) {
			o->start = 0;
			o->end = 0;
			continue;
		}
		st->frames_none--;
		eh_registered(p, o, st);
	}
}

/**
 * agent_frames_forget() - drop what is known of a process's registrations
 * @p: the process, which exec'd or exited: the kernel dropped its tables.
 */
void agent_frames_forget(struct agent_proc *p)
{
	free(p->eh);
	p->eh = NULL;
	p->nr_eh = 0;
	p->cap_eh = 0;
	p->eh_attached = false;
}
