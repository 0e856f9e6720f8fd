// SPDX-License-Identifier: GPL-2.0
/*
 * Validated copies of ELF .sframe sections.  The unwinder may not fault
 * in NMI context and a process seldom touches its own .sframe pages, so
 * it reads the kernel's copy, never the process's section, converted
 * into a table of bounded lookups (sframe_table_build()).  The section's
 * bytes are copied, validated and converted once and then dropped: only
 * the table, and a SHA-256 digest of the bytes, are kept and charged.
 *
 * A copy is immutable once made.  Forked children share it, and so do
 * the processes of one user that map the same section of the same file:
 * every exec of a binary would otherwise copy, validate, convert and
 * charge its section again.  A process gets a shared copy only if the
 * digest of its own bytes is the copy's, so that what another process
 * registered (or a file rewritten since) can never describe its stack:
 * sharing changes the cost of a registration, not its outcome.  The
 * digest does as well as the bytes would: the key holds the user, so a
 * process can only be given a copy that a process of its own user made,
 * from bytes that user chose; two sections of one digest would take a
 * SHA-256 collision, and could only mislead that user's own traces.
 */
#include <crypto/sha2.h>
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
	u8 digest[SHA256_DIGEST_SIZE];
	struct sha256_state sha;
	unsigned long off, n;
	u8 *buf;

	buf = kmalloc(SFRAME_ELF_CHUNK, GFP_KERNEL);
	if (!buf)
		return false;
	sha256_init(&sha);
	for (off = 0; off < size; off += n) {
		n = min(size - off, SFRAME_ELF_CHUNK);
		if (copy_from_user(buf, (const void __user *)(addr + off), n))
			break;
		sha256_update(&sha, buf, n);
		cond_resched();
	}
	kfree(buf);
	if (off < size)
		return false;
	sha256_final(&sha, digest);
	return !memcmp(digest, elf->digest, sizeof(digest));
}

/*
 * Copy @size bytes from user address @addr, a chunk at a time, taking
 * their digest on the way.
 */
static int sframe_elf_copy_in(u8 *data, unsigned long addr,
			      unsigned long size, u8 *digest)
{
	struct sha256_state sha;
	unsigned long off, n;

	sha256_init(&sha);
	for (off = 0; off < size; off += n) {
		n = min(size - off, SFRAME_ELF_CHUNK);
		if (copy_from_user(data + off,
				   (const void __user *)(addr + off), n))
			return -EFAULT;
		sha256_update(&sha, data + off, n);
		cond_resched();
	}
	sha256_final(&sha, digest);
	return 0;
}

/*
 * Convert a validated section for lookups of bounded work (sframe.h):
 * built in a buffer with room for every row's own rule, then copied into
 * one of the size it takes, which is what the copy keeps.
 */
static int sframe_elf_convert(struct sframe_elf_copy *elf,
			      const struct sframe_sec *sec, size_t *size)
{
	struct sframe_table *build;
	size_t room;
	int err;

	err = sframe_table_size(sec, &room);
	if (err)
		return err;
	build = kvmalloc(room, GFP_KERNEL_ACCOUNT);
	if (!build)
		return -ENOMEM;
	err = sframe_table_build(sec, build, room);
	if (err)
		goto out;
	*size = sframe_table_bytes(build);
	elf->table = kvmalloc(*size, GFP_KERNEL_ACCOUNT);
	if (!elf->table) {
		err = -ENOMEM;
		goto out;
	}
	sframe_table_copy(elf->table, build);
out:
	kvfree(build);
	return err;
}

/*
 * Charge the copy and its table to the current user's locked memory,
 * together rounded up to pages: they are what the registration keeps.
 */
static int sframe_elf_charge(struct sframe_elf_copy *elf, size_t table_size)
{
	size_t bytes = size_add(sizeof(*elf), table_size);
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

/*
 * Validate and convert the @size bytes at @addr into @elf, which keeps
 * the header of the section, but not its bytes, and the table.
 */
static int sframe_elf_read(struct sframe_elf_copy *elf, unsigned long addr,
			   unsigned long size, size_t *table_size)
{
	u8 *data;
	int err;

	data = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!data)
		return -ENOMEM;
	err = sframe_elf_copy_in(data, addr, size, elf->digest);
	if (!err)
		err = sframe_sec_init(&elf->sec, data, size, addr);
	if (!err)
		err = sframe_sec_validate(&elf->sec);
	if (!err)
		err = sframe_elf_convert(elf, &elf->sec, table_size);
	kvfree(data);
	elf->sec.data = NULL;
	return err;
}

/* A new copy of the section at @addr, or an ERR_PTR. */
static struct sframe_elf_copy *sframe_elf_load(unsigned long addr,
					       unsigned long size)
{
	struct sframe_elf_copy *elf;
	size_t table_size;
	int err;

	elf = kzalloc(sizeof(*elf), GFP_KERNEL_ACCOUNT);
	if (!elf)
		return ERR_PTR(-ENOMEM);
	INIT_HLIST_NODE(&elf->node);
	err = sframe_elf_read(elf, addr, size, &table_size);
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
	kfree(elf);
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
 * and offset is taken, if its bytes' digest is that of those at @addr;
 * otherwise a new
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
	kfree(elf);
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
