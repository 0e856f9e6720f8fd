/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files behind sframe_jit_open(2) and sframe_register(2) share:
 * the per-mm index of registered code ranges (sframe_mm.c), the JIT
 * registry, its file and its mapping (sframe_jit.c), its system call
 * (sframe_jit_open.c), validated ELF section copies (sframe_elf.c), the
 * ELF system calls (sframe_register.c) and the lookup the unwinder
 * makes in NMI context (sframe_lookup.c).  Nothing outside kernel/unwind/ sees
 * these structures; <linux/sframe_register.h> has the hooks others call.
 */
#ifndef _KERNEL_UNWIND_SFRAME_INTERNAL_H
#define _KERNEL_UNWIND_SFRAME_INTERNAL_H

#include <crypto/sha2.h>
#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/maple_tree.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "sframe_jit_read.h"
#include "sframe_table.h"

struct cred;
struct file;
struct mm_struct;
struct user_struct;
struct vm_area_struct;

/* What a registered code range is described by. */
enum sframe_region_kind {
	SFRAME_REGION_ELF,
	SFRAME_REGION_JIT,
};

/**
 * struct sframe_region - one entry of a process's index of code ranges
 * @start: first byte of the range.
 * @end: end of the range (exclusive).
 * @kind: which member of the union is valid.
 * @elf: the ELF section that describes the range; NULL for a section
 *	registered at exec whose table is not built yet (sframe_exec.c).
 * @jit: the JIT registry that describes the range.
 * @bias: for @elf, where this process has the section less where the
 *	copy's table has it: processes sharing a copy map it at different
 *	addresses.
 * @cred: for an ELF entry without @elf, the credentials of the exec
 *	that registered it, which its table is built and charged with.
 * @sec_addr: for an ELF entry without @elf, where the section is mapped.
 * @sec_size: its size.
 * @flags: SFRAME_REGION_F_* bits, the only thing that changes in a
 *	published entry.
 * @rcu: frees the entry after NMI-context readers are done with it.
 *
 * Entries are immutable once published, but for @flags; changing one
 * means replacing it.
 */
struct sframe_region {
	unsigned long start;
	unsigned long end;
	enum sframe_region_kind kind;
	union {
		struct sframe_elf_copy *elf;
		struct sframe_jit_reg *jit;
	};
	unsigned long bias;
	const struct cred *cred;
	unsigned long sec_addr;
	unsigned long sec_size;
	unsigned long flags;
	struct rcu_head rcu;
};

/* struct sframe_region.flags of an ELF entry whose table is not built. */
#define SFRAME_REGION_F_WANTED	0	/* a sample asked for the table */
#define SFRAME_REGION_F_TRIED	1	/* a build was made, or failed */
/* struct sframe_region.flags, set before it is published. */
#define SFRAME_REGION_F_AGENT	2	/* registered by another process */

/**
 * struct sframe_mm - a process's registered code ranges
 * @index: sframe_region entries by code range; readers walk it under RCU
 *	with no lock, writers hold the mmap lock.
 * @nr: number of entries, capped by kernel.sframe_max_registrations.
 * @mm: the mm it belongs to, held with mmgrab() until it is freed.
 * @build_irq: raised from NMI context when a sample meets a section
 *	registered at exec whose table is not built yet.
 * @build_work: builds those tables (sframe_exec.c).
 * @rcu: waits for NMI-context readers before @free_work.
 * @free_work: frees the index once @build_irq and @build_work are idle.
 */
struct sframe_mm {
	struct maple_tree index;
	unsigned int nr;
	struct mm_struct *mm;
	struct irq_work build_irq;
	struct work_struct build_work;
	struct rcu_head rcu;
	struct work_struct free_work;
};

/**
 * struct sframe_jit_reg - a JIT registry
 * @ref: one for its file, one for its mapping, one for its index entry,
 *	and one for a system call working on it.
 * @view: the layout, the kernel's private copy of what it wrote into the
 *	header: the header is shared with the process and never read back.
 *	The unwinder reads the registry through it.
 * @size: bytes at @view.base, page aligned.
 * @user: the user charged for @size (sframe_charge()).
 * @mm: the process the registry was made for, held with mmgrab(): the
 *	one it is registered in, the only one that may map it, and the
 *	one whose pinned_vm (VmPin) shows the charge.
 * @uaddr: where it is mapped in @mm.
 * @region: its index entry while registered; protected by @mm's mmap
 *	lock.
 * @mapped: the one mapping the registry allows was made: its file may
 *	not be mapped again.  Protected by @mm's mmap lock.
 * @uncharged: its charge was given back, at its last reference.
 * @published: an index entry made it visible to NMI-context readers,
 *	so it is freed only after a grace period.
 * @rcu: waits for those readers before @free_work.
 * @free_work: frees the registry in process context.
 */
struct sframe_jit_reg {
	refcount_t ref;
	struct sframe_jit_view view;
	unsigned long size;
	struct user_struct *user;
	struct mm_struct *mm;
	unsigned long uaddr;
	struct sframe_region *region;
	bool mapped;
	atomic_t uncharged;
	bool published;
	struct rcu_head rcu;
	struct work_struct free_work;
};

/**
 * struct sframe_elf_key - what processes sharing a section copy map
 * @inode: the file the section is mapped from; only compared, never
 *	dereferenced, as the copy does not pin it.
 * @pos: the section's offset in the file.
 * @user: the user charged for the copy; copies are shared only between
 *	the processes of one user.
 * @text: @pos is that of the code an agent's table describes, not that
 *	of a section: the two kinds of copy are never shared.
 *
 * A key only finds a candidate: sharing also needs the bytes' digests to
 * match.
 */
struct sframe_elf_key {
	const struct inode *inode;
	u64 pos;
	const struct user_struct *user;
	bool text;
};

/**
 * struct sframe_elf_copy - a validated private copy of an ELF .sframe
 * @ref: one per index entry; processes mapping the same file and forked
 *	children share the copy.
 * @sec: the parsed header; its base is where the section was in the
 *	process that made the copy.  The bytes it pointed to are gone: its
 *	data is NULL.
 * @table: the section converted for lookups: its buffer and its
 *	rules, each kvmalloc()ed.
 * @user: the user charged for @pages (sframe_charge()).
 * @pages: the table's size and this structure's, in pages, rounded up.
 * @key: where the section came from, if the copy can be shared.
 * @node: in the table of shareable copies while it can be found there.
 * @rcu: frees the copy after the NMI-context readers that may see it.
 * @digest: the SHA-256 digest of the section's bytes, which a process
 *	sharing the copy must have.
 */
struct sframe_elf_copy {
	refcount_t ref;
	struct sframe_sec sec;
	struct sframe_table *table;
	struct user_struct *user;
	unsigned long pages;
	struct sframe_elf_key key;
	struct hlist_node node;
	struct rcu_head rcu;
	u8 digest[SHA256_DIGEST_SIZE];
};

/* sframe_mm.c: the index; writers hold the mmap lock for writing. */
struct sframe_mm *sframe_mm_locked(struct mm_struct *mm);
struct sframe_mm *sframe_mm_get(struct mm_struct *mm);
struct sframe_region *sframe_region_new(unsigned long start,
					unsigned long end);
int sframe_index_check(struct sframe_mm *smm, unsigned long start,
		       unsigned long end, bool own);
int sframe_index_insert(struct sframe_mm *smm, struct sframe_region *r);
struct sframe_region *sframe_index_exact(struct sframe_mm *smm,
					 unsigned long start,
					 unsigned long end);
void sframe_index_remove(struct mm_struct *mm, struct sframe_region *r);
void sframe_region_detach(struct sframe_region *r);

/*
 * sframe_jit.c: the registry object and its file; sframe_jit_mmap.c:
 * its mapping.
 */
struct sframe_jit_reg *sframe_jit_alloc(struct mm_struct *mm,
					const struct sframe_jit_view *shape);
void sframe_jit_uncharge(struct sframe_jit_reg *reg);
void sframe_jit_put(struct sframe_jit_reg *reg);
void sframe_jit_put_sync(struct sframe_jit_reg *reg);
struct file *sframe_jit_file(struct sframe_jit_reg *reg);
struct sframe_jit_reg *sframe_jit_from_file(struct file *file);
void sframe_jit_copy(struct sframe_jit_reg *new,
		     const struct sframe_jit_reg *old);
unsigned long sframe_jit_get_unmapped_area(struct file *file,
					   unsigned long addr, unsigned long len,
					   unsigned long pgoff, unsigned long flags);
int sframe_jit_mmap(struct file *file, struct vm_area_struct *vma);

/* sframe_charge.c: what a user's tables may pin. */
int sframe_charge(struct user_struct *user, unsigned long pages);
void sframe_uncharge(struct user_struct *user, unsigned long pages);

/**
 * struct sframe_elf_args - an ELF section to register, and for what
 * @src: where the section's bytes are in the caller's memory.
 * @base: the address its function starts are relative to in @mm.
 * @size: its size in bytes.
 * @start: first byte of the code range in @mm.
 * @end: end of the range (exclusive).
 * @key: the file the copy may be shared by, or NULL.
 * @agent: the caller registers for another process (sframe_process.c).
 */
struct sframe_elf_args {
	unsigned long src;
	unsigned long base;
	unsigned long size;
	unsigned long start;
	unsigned long end;
	const struct sframe_elf_key *key;
	bool agent;
};

/* sframe_register.c: ELF registration. */
bool sframe_elf_key(struct mm_struct *mm, unsigned long addr,
		    unsigned long size, struct sframe_elf_key *key);
bool sframe_elf_args_ok(unsigned long size, unsigned long start,
			unsigned long end);
int sframe_add_elf_to(struct mm_struct *mm, const struct sframe_elf_args *a);

/* sframe_exec.c: the tables of sections registered at exec. */
bool sframe_exec_eager(void);
void sframe_exec_init(struct sframe_mm *smm);
void sframe_exec_stop(struct sframe_mm *smm);
void sframe_exec_want(struct sframe_region *r);

/* sframe_elf.c: validated section copies. */
struct sframe_elf_copy *sframe_elf_get(unsigned long addr,
				       unsigned long base,
				       unsigned long size,
				       const struct sframe_elf_key *key);
void sframe_elf_put(struct sframe_elf_copy *elf);

#endif /* _KERNEL_UNWIND_SFRAME_INTERNAL_H */
