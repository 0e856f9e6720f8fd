// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GDB JIT interface, read from outside the process: a JIT links an
 * in-memory ELF object for each piece of code it writes into the list
 * of its __jit_debug_descriptor, then calls __jit_debug_register_code(),
 * a function that does nothing but carry a debugger's breakpoint.  The
 * agent finds the descriptor in the symbols of the files the process
 * maps, reads the list with process_vm_readv(), and reads it again each
 * time the function runs (a uprobe, uprobe.c): new objects get their
 * tables, objects gone from the list lose them.
 *
 * An object's .eh_frame, or without one its .debug_frame, is converted
 * when the object is an executable or a shared object, whose addresses
 * are final: QEMU's TCG hands such an object over for its code buffer.
 * LLVM's are relocatable objects whose CFI does not describe the code
 * at its address; they are counted, not registered.
 *
 * The list is the process's memory: every pointer is checked by the
 * read that follows it, the walk is bounded, and a list that changes
 * under the walk gives a partial view, corrected at the next call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sframe_jit.h>

#include "sframe_agent.h"

/* Entries of one list walked at most: a bound for a corrupt one. */
#define JIT_MAX_ENTRIES		1048576u
/* An object's image at most: the kernel takes no larger section. */
#define JIT_MAX_IMAGE		(64ull << 20)

/* The interface's records, as GDB's manual ("JIT Interface") has them. */
struct jit_descriptor {
	uint32_t version;
	uint32_t action_flag;
	uint64_t relevant_entry;
	uint64_t first_entry;
};

struct jit_code_entry {
	uint64_t next_entry;
	uint64_t prev_entry;
	uint64_t symfile_addr;
	uint64_t symfile_size;
};

static struct agent_jit_obj *jit_find(struct agent_proc *p, uint64_t addr,
				      uint64_t size)
{
	size_t i;

	for (i = 0; i < p->nr_jit; i++)
		if (p->jit[i].addr == addr && p->jit[i].size == size)
			return &p->jit[i];
	return NULL;
}

/* Register what @image's CFI says of its code; its range in @o. */
static int jit_image_register(struct agent_proc *p, struct agent_jit_obj *o,
			      const void *image, struct agent_stats *st)
{
	struct sframe_jit_cfi *cfi;
	int err;

	err = sframe_jit_cfi_convert_flags(image, o->size,
					   SFRAME_JIT_CFI_F_DEBUG_FRAME, &cfi);
	if (err < 0)
		return err;
	err = agent_cfi_register(p, cfi, &o->start, &o->end, st);
	sframe_jit_cfi_free(cfi);
	return err;
}

/* A new object of the list: read it, convert it, register it. */
static void jit_obj_add(struct agent_proc *p, const struct jit_code_entry *e,
			struct agent_stats *st)
{
	struct agent_jit_obj *o, *n;
	void *image;
	int err = -E2BIG;

	if (p->nr_jit == p->cap_jit) {
		n = realloc(p->jit, (p->cap_jit * 2 + 8) * sizeof(*n));
		if (!n)
			return;
		p->jit = n;
		p->cap_jit = p->cap_jit * 2 + 8;
	}
	o = &p->jit[p->nr_jit++];
	*o = (struct agent_jit_obj){
		.addr = e->symfile_addr, .size = e->symfile_size, .seen = true,
	};
	image = o->size && o->size <= JIT_MAX_IMAGE ? malloc(o->size) : NULL;
	if (image) {
		err = agent_peek(p->pid, o->addr, image, o->size);
		if (!err)
			err = jit_image_register(p, o, image, st);
		free(image);
	}
	if (!err) {
		st->jit_objs++;
		agent_log(2, "%d: JIT object at %#llx: registered\n",
			  (int)p->pid, (unsigned long long)o->start);
	} else {
		o->end = 0;
		st->jit_none++;
		agent_log(2, "%d: JIT object of %llu bytes: %s\n", (int)p->pid,
			  (unsigned long long)o->size, strerror(-err));
	}
}

/* Objects gone from the list lose their registrations. */
static void jit_sweep(struct agent_proc *p)
{
	size_t i = 0;

	while (i < p->nr_jit) {
		if (p->jit[i].seen) {
			p->jit[i++].seen = false;
			continue;
		}
		if (p->jit[i].end) {
			agent_unregister(p->pidfd, p->jit[i].start,
					 p->jit[i].end);
			agent_log(2, "%d: JIT object at %#llx: removed\n",
				  (int)p->pid,
				  (unsigned long long)p->jit[i].start);
		}
		p->jit[i] = p->jit[--p->nr_jit];
	}
}

/**
 * agent_jit_walk() - bring a process's JIT objects up to date with its list
 * @p: the process, whose descriptor is known.
 * @st: what was done, added to.
 */
void agent_jit_walk(struct agent_proc *p, struct agent_stats *st)
{
	struct agent_jit_obj *o;
	struct jit_descriptor d;
	struct jit_code_entry e;
	uint64_t at;
	unsigned int n;

	if (!p->jit_desc || agent_peek(p->pid, p->jit_desc, &d, sizeof(d)))
		return;
	for (at = d.first_entry, n = 0; at && n < JIT_MAX_ENTRIES;
	     at = e.next_entry, n++) {
		if (agent_peek(p->pid, at, &e, sizeof(e)))
			return;
		o = jit_find(p, e.symfile_addr, e.symfile_size);
		if (o)
			o->seen = true;
		else
			jit_obj_add(p, &e, st);
	}
	jit_sweep(p);
}

/**
 * agent_jit_forget() - drop what is known of a process's JIT objects
 * @p: the process, which exec'd: its registrations went with its mm.
 */
void agent_jit_forget(struct agent_proc *p)
{
	free(p->jit);
	p->jit = NULL;
	p->nr_jit = 0;
	p->cap_jit = 0;
	p->jit_desc = 0;
}
