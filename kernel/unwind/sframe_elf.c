// SPDX-License-Identifier: GPL-2.0
/*
 * Validated copies of ELF .sframe sections.  The unwinder may not fault
 * in NMI context and a process seldom touches its own .sframe pages, so
 * it reads the kernel's copy, never the process's section, converted
 * into a table of bounded lookups (sframe_table_build()).
 *
 * A copy is immutable once made.  Forked children share it, and so do
 * the processes of one user that map the same section of the same file:
 * every exec of a binary would otherwise copy, validate, convert and
 * charge its section again.  A process gets a shared copy only if its
 * own bytes are the copy's, compared in full, so that what another
 * process registered (or a file rewritten since) can never describe its
 * stack: sharing changes the cost of a registration, not its outcome.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#include "sframe_internal.h"

/*
 * The copies that can be shared, by key.  The last reference may be
 * dropped from an RCU callback, so the lock is taken with interrupts
 * off.
 */
#define SFRAME_ELF_HASH_BITS	8
static DEFINE_HASHTABLE(sframe_elf_shared, SFRAME_ELF_HASH_BITS);
static DEFINE_SPINLOCK(sframe_elf_lock);

/* Bytes compared, or copied, between two chances to reschedule. */
#define SFRAME_ELF_CHUNK	(64 * 1024UL)

static u32 sframe_elf_hash(const struct sframe_elf_key *key,
			   unsigned long size)
{
	u64 h = (unsigned long)key->inode ^ (unsigned long)key->user;

	h ^= (u64)key->pos * 31 + size;
	return hash_64(h, SFRAME_ELF_HASH_BITS);
}

static bool sframe_elf_key_eq(const struct sframe_elf_copy *elf,
			      const struct sframe_elf_key *key,
			      unsigned long size)
{
	return elf->key.inode == key->inode && elf->key.pos == key->pos &&
	       elf->key.user == key->user && elf->sec.size == size;
}

/* The shared copy for @key, with a reference taken, or NULL. */
static struct sframe_elf_copy *
sframe_elf_find(const struct sframe_elf_key *key, unsigned long size)
{
	struct sframe_elf_copy *elf, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&sframe_elf_lock, flags);
	hash_for_each_possible(sframe_elf_shared, elf, node,
			       sframe_elf_hash(key, size)) {
		/* A copy whose last reference is going is not found. */
		if (sframe_elf_key_eq(elf, key, size) &&
		    refcount_inc_not_zero(&elf->ref)) {
			found = elf;
			break;
		}
	}
	spin_unlock_irqrestore(&sframe_elf_lock, flags);
	return found;
}

/*
 * Make @elf the copy found by its key.  One found there already stays
 * with the processes that have it, out of the table: a newer copy for
 * the same key differs from it, for the file was rewritten, or is equal
 * and was made by a process that looked up the key at the same time.
 */
static void sframe_elf_publish(struct sframe_elf_copy *elf)
{
	u32 hash = sframe_elf_hash(&elf->key, elf->sec.size);
	struct sframe_elf_copy *old;
	struct hlist_node *tmp;
	unsigned long flags;

	spin_lock_irqsave(&sframe_elf_lock, flags);
	hash_for_each_possible_safe(sframe_elf_shared, old, tmp, node, hash) {
		if (sframe_elf_key_eq(old, &elf->key, elf->sec.size))
			hash_del(&old->node);
	}
	hash_add(sframe_elf_shared, &elf->node, hash);
	spin_unlock_irqrestore(&sframe_elf_lock, flags);
}

/* Are the @size bytes at user address @addr those of @elf's section? */
static bool sframe_elf_same(const struct sframe_elf_copy *elf,
			    unsigned long addr, unsigned long size)
{
	unsigned long off, n;
	bool same = true;
	u8 *buf;

	buf = kmalloc(SFRAME_ELF_CHUNK, GFP_KERNEL);
	if (!buf)
		return false;
	for (off = 0; same && off < size; off += n) {
		n = min(size - off, SFRAME_ELF_CHUNK);
		same = !copy_from_user(buf, (const void __user *)(addr + off),
				       n) &&
		       !memcmp(buf, elf->data + off, n);
		cond_resched();
	}
	kfree(buf);
	return same;
}

/* Copy @size bytes from user address @addr, a chunk at a time. */
static int sframe_elf_copy_in(u8 *data, unsigned long addr,
			      unsigned long size)
{
	unsigned long off, n;

	for (off = 0; off < size; off += n) {
		n = min(size - off, SFRAME_ELF_CHUNK);
		if (copy_from_user(data + off,
				   (const void __user *)(addr + off), n))
			return -EFAULT;
		cond_resched();
	}
	return 0;
}

/* Convert a validated copy for lookups of bounded work (sframe.h). */
static int sframe_elf_convert(struct sframe_elf_copy *elf, size_t *size)
{
	int err;

	err = sframe_table_size(&elf->sec, size);
	if (err)
		return err;
	elf->table = kvmalloc(*size, GFP_KERNEL_ACCOUNT);
	if (!elf->table)
		return -ENOMEM;
	err = sframe_table_build(&elf->sec, elf->table, *size);
	if (err) {
		kvfree(elf->table);
		elf->table = NULL;
	}
	return err;
}

/*
 * Charge the copy and its table to the current user's locked memory,
 * both rounded up to pages: together they are what the registration
 * keeps.
 */
static int sframe_elf_charge(struct sframe_elf_copy *elf, size_t table_size)
{
	size_t bytes = size_add(struct_size(elf, data, elf->sec.size),
				table_size);
	int err;

	elf->pages = DIV_ROUND_UP(bytes, PAGE_SIZE);
	elf->user = get_uid(current_user());
	err = sframe_charge(elf->user, elf->pages);
	if (err) {
		free_uid(elf->user);
		elf->user = NULL;
	}
	return err;
}

/* A new copy of the section at @addr, or an ERR_PTR. */
static struct sframe_elf_copy *sframe_elf_load(unsigned long addr,
					       unsigned long size)
{
	struct sframe_elf_copy *elf;
	size_t table_size;
	int err;

	elf = kvzalloc(struct_size(elf, data, size), GFP_KERNEL_ACCOUNT);
	if (!elf)
		return ERR_PTR(-ENOMEM);
	INIT_HLIST_NODE(&elf->node);
	err = sframe_elf_copy_in(elf->data, addr, size);
	if (err)
		goto free;
	err = sframe_sec_init(&elf->sec, elf->data, size, addr);
	if (!err)
		err = sframe_sec_validate(&elf->sec);
	if (err)
		goto free;
	err = sframe_elf_convert(elf, &table_size);
	if (err)
		goto free;
	err = sframe_elf_charge(elf, table_size);
	if (err)
		goto free_table;
	refcount_set(&elf->ref, 1);
	return elf;
free_table:
	kvfree(elf->table);
free:
	kvfree(elf);
	return ERR_PTR(err);
}

/**
 * sframe_elf_get() - a validated copy of a section in the current process
 * @addr: where the section is in the current process's memory.
 * @size: its size, which the caller has bounded.
 * @key: the file and offset the section is mapped from, or NULL if it is
 *	not in a file mapping.  @key->user must be current_user().
 *
 * With a key, a copy another process of the user made of the same file
 * and offset is taken, if its bytes are those at @addr; otherwise a new
 * copy is made and may be shared from then on.  The copy's sec.base is
 * where its maker had the section: lookups for this process are biased
 * by @addr less that.
 *
 * Return: the copy, holding one reference for the caller, or an ERR_PTR:
 * -EFAULT; the section's errors as sframe_sec_init() and
 * sframe_sec_validate() find them; -E2BIG from its conversion into a
 * table; -EDQUOT past the locked-memory limit; -ENOMEM.
 */
struct sframe_elf_copy *sframe_elf_get(unsigned long addr,
				       unsigned long size,
				       const struct sframe_elf_key *key)
{
	struct sframe_elf_copy *elf;

	if (key) {
		elf = sframe_elf_find(key, size);
		if (elf) {
			if (sframe_elf_same(elf, addr, size))
				return elf;
			sframe_elf_put(elf);
		}
	}
	elf = sframe_elf_load(addr, size);
	if (!IS_ERR(elf) && key) {
		elf->key = *key;
		sframe_elf_publish(elf);
	}
	return elf;
}

static void sframe_elf_free_rcu(struct rcu_head *rcu)
{
	struct sframe_elf_copy *elf = container_of(rcu, struct sframe_elf_copy,
						   rcu);

	free_uid(elf->user);
	kvfree(elf->table);
	kvfree(elf);
}

/**
 * sframe_elf_put() - drop a reference to a section copy
 * @elf: the copy.
 *
 * The last reference takes the copy out of the table of shared copies
 * and gives its charge back at once; the memory is freed after an RCU
 * grace period, once no NMI-context reader that found an index entry
 * holding the copy can still read it.  Safe in any context but NMI.
 */
void sframe_elf_put(struct sframe_elf_copy *elf)
{
	unsigned long flags;

	/*
	 * sframe_elf_find() skips a copy at zero references, so the table
	 * may hold it until the lock is taken here.
	 */
	if (!refcount_dec_and_test(&elf->ref))
		return;
	spin_lock_irqsave(&sframe_elf_lock, flags);
	if (!hlist_unhashed(&elf->node))
		hash_del(&elf->node);
	spin_unlock_irqrestore(&sframe_elf_lock, flags);
	sframe_uncharge(elf->user, elf->pages);
	call_rcu(&elf->rcu, sframe_elf_free_rcu);
}
