// SPDX-License-Identifier: GPL-2.0
/*
 * Validated copies of ELF .sframe sections.  The unwinder may not fault
 * in NMI context and a process seldom touches its own .sframe pages, so
 * it reads the kernel's copy, never the process's section, converted
 * into a table of bounded lookups (sframe_table_build()).  The section's
 * bytes are copied, validated and converted once and then dropped: only
 * the table, and a SHA-256 digest of the bytes, are kept and charged.
 * The charge is taken first, for the most the header says the table can
 * keep, and settled to what it keeps once it is built: no section makes
 * the kernel allocate a table it then refuses to charge.
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
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/user.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "sframe_internal.h"

/*
 * The copies that can be shared, by key.  The last reference may be
 * dropped from an RCU callback, so the lock is taken with interrupts
 * off.  Keys are hashed with a key chosen at boot: a user picks the
 * offsets and sizes of its sections, and could otherwise fill one
 * bucket for every other user's lookups to walk under the lock.
 */
#define SFRAME_ELF_HASH_BITS	10
static DEFINE_HASHTABLE(sframe_elf_shared, SFRAME_ELF_HASH_BITS);
static DEFINE_SPINLOCK(sframe_elf_lock);
static siphash_key_t sframe_elf_hash_key __ro_after_init;

static int __init sframe_elf_init(void)
{
	get_random_bytes(&sframe_elf_hash_key, sizeof(sframe_elf_hash_key));
	return 0;
}
late_initcall(sframe_elf_init);

/* Bytes compared, or copied, between two chances to reschedule. */
#define SFRAME_ELF_CHUNK	(64 * 1024UL)

static u32 sframe_elf_hash(const struct sframe_elf_key *key,
			   unsigned long size)
{
	u64 h = siphash_4u64((unsigned long)key->inode,
			     (unsigned long)key->user, key->pos, size,
			     &sframe_elf_hash_key);

	return hash_64(h, SFRAME_ELF_HASH_BITS);
}

static bool sframe_elf_key_eq(const struct sframe_elf_copy *elf,
			      const struct sframe_elf_key *key,
			      unsigned long size)
{
	return elf->key.inode == key->inode && elf->key.pos == key->pos &&
	       elf->key.user == key->user && elf->key.text == key->text &&
	       elf->sec.size == size;
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
 * The buffers of a copy and its conversion: pages from vmalloc() once
 * they are larger than one, not kvmalloc(), whose kmalloc() of a large
 * size takes the next power of two, up to twice what was charged.
 * Freed with kvfree().
 */
static void *sframe_elf_alloc(size_t size)
{
	if (size <= PAGE_SIZE)
		return kmalloc(size, GFP_KERNEL_ACCOUNT);
	return __vmalloc(size, GFP_KERNEL_ACCOUNT);
}

/*
 * Copy the section after its header, which the caller copied to @data
 * already, from user address @addr, a chunk at a time, taking the
 * digest of all @size bytes on the way.
 */
static int sframe_elf_copy_in(u8 *data, unsigned long addr,
			      unsigned long size, u8 *digest)
{
	struct sha256_state sha;
	unsigned long off, n;

	sha256_init(&sha);
	sha256_update(&sha, data, SFRAME_HDR_SIZE);
	for (off = SFRAME_HDR_SIZE; off < size; off += n) {
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

/* The table's two buffers, as sframe_elf_convert() leaves them. */
static void sframe_elf_free_table(struct sframe_table *t)
{
	if (!t)
		return;
	kvfree(t->rules);
	kvfree(t);
}

/* Pages a copy keeps: this structure and its table, rounded up. */
static unsigned long sframe_elf_pages(size_t table_size)
{
	return DIV_ROUND_UP(size_add(sizeof(struct sframe_elf_copy),
				     table_size), PAGE_SIZE);
}

/*
 * Bring the copy's charge from what it holds to what a table of
 * @table_size bytes keeps: more only for the rules, which the charge
 * taken from the header did not know of, and refused past the limit.
 */
static int sframe_elf_settle(struct sframe_elf_copy *elf, size_t table_size)
{
	unsigned long pages = sframe_elf_pages(table_size);
	int err;

	if (pages > elf->pages) {
		err = sframe_charge(elf->user, pages - elf->pages);
		if (err)
			return err;
	} else {
		sframe_uncharge(elf->user, elf->pages - pages);
	}
	elf->pages = pages;
	return 0;
}

/* The section's bytes, once the table no longer reads them. */
static void sframe_elf_free_data(struct sframe_elf_copy *elf, u8 **data)
{
	kvfree(*data);
	*data = NULL;
	elf->sec.data = NULL;
}

/*
 * Convert a validated section for lookups of bounded work (sframe_table.h),
 * and drop its bytes as soon as the table no longer needs them: the
 * table's own buffer, its rules and a bounded scratch buffer are all a
 * conversion allocates.  The buffer is no larger than the caller
 * charged for it; the rules are charged here, before they are allocated,
 * once the build has counted them.
 */
static int sframe_elf_convert(struct sframe_elf_copy *elf, u8 **data)
{
	size_t tsize, scratch_size;
	struct sframe_table *t;
	struct sframe_row *rules;
	void *scratch;
	int err;

	err = sframe_table_size(&elf->sec, &tsize, &scratch_size);
	if (err)
		return err;
	t = sframe_elf_alloc(tsize);
	scratch = sframe_elf_alloc(scratch_size);
	err = -ENOMEM;
	if (!t || !scratch)
		goto free;
	err = sframe_table_build(&elf->sec, t, tsize, scratch, scratch_size);
	sframe_elf_free_data(elf, data);
	if (!err)
		err = sframe_elf_settle(elf, tsize + sframe_table_rules_bytes(t));
	if (err)
		goto free;
	rules = sframe_elf_alloc(sframe_table_rules_bytes(t));
	err = -ENOMEM;
	if (!rules)
		goto free;
	sframe_table_keep_rules(t, rules);
	kvfree(scratch);
	elf->table = t;
	return 0;
free:
	kvfree(scratch);
	kvfree(t);
	return err;
}

/*
 * Copy the header of the section at @addr into @hdr, check it, and
 * charge the current user for the most its table's buffer can take,
 * before anything is allocated: a section refused for its size costs the
 * kernel the header's bytes on the stack.
 */
static int sframe_elf_precharge(struct sframe_elf_copy *elf, u8 *hdr,
				unsigned long addr, unsigned long base,
				unsigned long size)
{
	struct sframe_sec sec;
	int err;

	if (copy_from_user(hdr, (const void __user *)addr, SFRAME_HDR_SIZE))
		return -EFAULT;
	/* It reads nothing past the header. */
	err = sframe_sec_init(&sec, hdr, size, base);
	if (err)
		return err;
	elf->pages = sframe_elf_pages(sframe_table_bound(&sec));
	elf->user = get_uid(current_user());
	err = sframe_charge(elf->user, elf->pages);
	if (err) {
		free_uid(elf->user);
		elf->user = NULL;
	}
	return err;
}

/*
 * Copy, validate and convert the @size bytes at @addr into @elf, which
 * keeps the header of the section, but not its bytes, and the table.
 * The header is the one sframe_elf_precharge() read and charged for:
 * the process may rewrite its section meanwhile, but not make the
 * table's buffer larger than the charge.
 */
static int sframe_elf_read(struct sframe_elf_copy *elf, const u8 *hdr,
			   unsigned long addr, unsigned long base,
			   unsigned long size)
{
	u8 *data;
	int err;

	data = sframe_elf_alloc(size);
	if (!data)
		return -ENOMEM;
	memcpy(data, hdr, SFRAME_HDR_SIZE);
	err = sframe_elf_copy_in(data, addr, size, elf->digest);
	if (!err)
		err = sframe_sec_init(&elf->sec, data, size, base);
	if (!err)
		err = sframe_sec_validate(&elf->sec);
	if (!err)
		err = sframe_elf_convert(elf, &data);
	sframe_elf_free_data(elf, &data);
	return err;
}

/* A new copy of the section at @addr, based at @base, or an ERR_PTR. */
static struct sframe_elf_copy *sframe_elf_load(unsigned long addr,
					       unsigned long base,
					       unsigned long size)
{
	struct sframe_elf_copy *elf;
	u8 hdr[SFRAME_HDR_SIZE];
	int err;

	elf = kzalloc(sizeof(*elf), GFP_KERNEL_ACCOUNT);
	if (!elf)
		return ERR_PTR(-ENOMEM);
	INIT_HLIST_NODE(&elf->node);
	err = sframe_elf_precharge(elf, hdr, addr, base, size);
	if (err)
		goto free;
	err = sframe_elf_read(elf, hdr, addr, base, size);
	if (err)
		goto uncharge;
	refcount_set(&elf->ref, 1);
	return elf;
uncharge:
	sframe_uncharge(elf->user, elf->pages);
	free_uid(elf->user);
free:
	kfree(elf);
	return ERR_PTR(err);
}

/**
 * sframe_elf_get() - a validated copy of a section in the current process
 * @addr: where the section is in the current process's memory.
 * @base: the address its function starts are relative to: @addr for a
 *	process's own section; for an agent's (sframe_process.c), where
 *	the section would be in the process it describes.
 * @size: its size, which the caller has bounded.
 * @key: the file and offset the section is mapped from, or NULL if it is
 *	not in a file mapping.  @key->user must be current_user().
 *
 * With a key, a copy another process of the user made of the same file
 * and offset is taken, if its bytes' digest is that of those at @addr;
 * otherwise a new
 * copy is made and may be shared from then on.  The copy's sec.base is
 * its maker's @base: lookups for this process are biased by @base less
 * that.
 *
 * Return: the copy, holding one reference for the caller, or an ERR_PTR:
 * -EFAULT; the section's errors as sframe_sec_init() and
 * sframe_sec_validate() find them; -E2BIG from its conversion into a
 * table; -EDQUOT past kernel.sframe_user_pinned_kb; -ENOMEM.
 */
struct sframe_elf_copy *sframe_elf_get(unsigned long addr,
				       unsigned long base,
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
	elf = sframe_elf_load(addr, base, size);
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
	sframe_elf_free_table(elf->table);
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
