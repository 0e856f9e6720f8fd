/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the sframe_jit_open(2) and sframe_register(2)
 * selftests: the system calls, a wrapper per use of them, a look at
 * /proc/self/maps, and a way to find and copy the test program's own
 * .sframe section (the tests are built with -Wa,--gsframe, so
 * binfmt_elf registered that section at exec).
 *
 * The wrappers return 0 or the system call's result on success and
 * -errno on failure, so that a test can say
 * ASSERT_EQ(-EEXIST, jit_register(...)) without errno being clobbered by
 * the harness between the call and the check.
 */
#ifndef SFRAME_TEST_H
#define SFRAME_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/sframe.h>
#include <linux/sframe_jit.h>

/* The 6.12 harness itself is not clean under -Wextra. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "../kselftest_harness.h"
#pragma GCC diagnostic pop
/*
 * The harness gives a test 30 s unless it says otherwise, to catch a
 * hang.  Under software emulation, on the debug kernel (KASAN, lockdep,
 * kmemleak) of a busy host, tests that take a second or two on the test
 * kernel took longer than that (200 forks, each registering and exiting).
 * Catch hangs at 300 s instead, inside the 900 s check-debug gives each
 * program.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
/*
 * A failed ASSERT_*() longjmp()s out of the test body and never back into
 * it, so no local is read after the jump: -Wclobbered (part of -Wextra)
 * only ever warns about the harness's own design here.
 */
#pragma GCC diagnostic ignored "-Wclobbered"

#ifndef __NR_sframe_jit_open
#define __NR_sframe_jit_open 472
#endif
#ifndef __NR_sframe_register
#define __NR_sframe_register 473
#endif
#ifndef __NR_sframe_unregister
#define __NR_sframe_unregister 474
#endif

#ifndef PT_GNU_SFRAME
#define PT_GNU_SFRAME 0x6474e554
#endif

/* A range no user address reaches, whatever the paging depth. */
#define KERNEL_HALF	(1ULL << 63)

static inline int sframe_jit_open(const struct sframe_jit_args *args,
				  size_t size)
{
	long ret = syscall(__NR_sframe_jit_open, args, size);

	return ret == -1 ? -errno : ret;
}

static inline int sframe_register(struct sframe_setup *setup, size_t size)
{
	long ret = syscall(__NR_sframe_register, setup, size);

	return ret == -1 ? -errno : ret;
}

static inline int sframe_unregister(struct sframe_setup *setup, size_t size)
{
	long ret = syscall(__NR_sframe_unregister, setup, size);

	return ret == -1 ? -errno : ret;
}

#define MAX_REGS_SYSCTL	"/proc/sys/kernel/sframe_max_registrations"

/*
 * Why the tests cannot run here, or NULL if they can.  The sysctl comes
 * with the system call; without it the number may belong to another call
 * on a newer kernel, which the tests must not make.
 */
static inline const char *sframe_unavailable(void)
{
	if (access(MAX_REGS_SYSCTL, F_OK) == 0)
		return NULL;
	return "no " MAX_REGS_SYSCTL ": this kernel lacks sframe_register(2)";
}

/*
 * For FIXTURE_SETUP, which must return when this returns true: skip the
 * test, giving the reason, if the system call is not there.
 */
static inline bool sframe_skip(struct __test_metadata *_metadata)
{
	const char *why = sframe_unavailable();

	if (why)
		SKIP(return true, "%s", why);
	return false;
}

static inline size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static inline unsigned long page_down(unsigned long addr)
{
	return addr & ~(page_size() - 1);
}

static inline unsigned long page_up(unsigned long addr)
{
	return page_down(addr + page_size() - 1);
}

/*
 * Map a registry's file as the ABI asks: all of it, its size being the
 * file's, shared, read-write, where the kernel chooses.  0 or -errno.
 */
static inline int jit_map(int fd, struct sframe_jit_header **hdr)
{
	off_t size = lseek(fd, 0, SEEK_END);
	void *p;

	if (size < 0)
		return -errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*hdr = p;
	return 0;
}

/*
 * sframe_jit_open(2) with every argument given, then the mapping.
 * @src_fd names the registry SFRAME_JIT_REPLACE or SFRAME_JIT_COPY in
 * @flags starts from.  @hdr receives the mapping; NULL maps nothing.
 * @fd receives the descriptor, which fork, COPY and REPLACE need; NULL
 * closes it, so that the mapping alone keeps the registry, and its
 * registration ends at munmap, or at once if nothing was mapped.  With
 * both NULL, a probe: the registry is mapped and unmapped at once.
 */
static inline int jit_op_flags(__u32 flags, int src_fd, __u64 start,
			       __u64 end, __u32 nfde, __u32 nfre, __u32 nrule,
			       struct sframe_jit_header **hdr, int *fd)
{
	struct sframe_jit_args args = {
		.text_start	= start,
		.text_end	= end,
		.fde_capacity	= nfde,
		.fre_capacity	= nfre,
		.flags		= flags,
		.rule_capacity	= nrule,
		.src_fd		= src_fd,
	};
	struct sframe_jit_header *probe;
	int ret, rfd;

	if (hdr)
		*hdr = NULL;
	rfd = sframe_jit_open(&args, sizeof(args));
	if (rfd < 0)
		return rfd;
	if (!hdr && !fd) {
		/*
		 * A probe: map and unmap, which unregisters whoever holds
		 * the descriptor.  Closing a registry never mapped would
		 * leave it registered while a child forked meanwhile by
		 * another thread holds the descriptor too.
		 */
		ret = jit_map(rfd, &probe);
		if (!ret)
			munmap(probe, probe->map_size);
		close(rfd);
		return ret;
	}
	ret = hdr ? jit_map(rfd, hdr) : 0;
	if (ret || !fd)
		close(rfd);
	else
		*fd = rfd;
	return ret;
}

static inline int jit_op(__u32 flags, int src_fd, __u64 start, __u64 end,
			 __u32 nfde, __u32 nfre,
			 struct sframe_jit_header **hdr, int *fd)
{
	return jit_op_flags(flags, src_fd, start, end, nfde, nfre, 0, hdr, fd);
}

/*
 * A registry whose lookups the unwinder counts in its header
 * (SFRAME_JIT_F_STATS), for the tests that read the counts.
 */
static inline int jit_register_counted(__u64 start, __u64 end, __u32 nfde,
				       __u32 nfre,
				       struct sframe_jit_header **hdr)
{
	return jit_op_flags(SFRAME_JIT_F_STATS, -1, start, end, nfde, nfre, 0,
			    hdr, NULL);
}

/* REPLACE needs the old registry's descriptor, @src_fd. */
static inline int jit_replace_counted(int src_fd, __u64 start, __u64 end,
				      __u32 nfde, __u32 nfre,
				      struct sframe_jit_header **hdr, int *fd)
{
	return jit_op_flags(SFRAME_JIT_F_STATS | SFRAME_JIT_REPLACE, src_fd,
			    start, end, nfde, nfre, 0, hdr, fd);
}

/* A compact registry (SFRAME_JIT_F_COMPACT) of @nrule rules. */
static inline int cjit_register(__u64 start, __u64 end, __u32 nfde,
				__u32 nfre, __u32 nrule,
				struct sframe_jit_header **hdr)
{
	return jit_op_flags(SFRAME_JIT_F_COMPACT, -1, start, end, nfde, nfre,
			    nrule, hdr, NULL);
}

static inline int cjit_register_fd(__u64 start, __u64 end, __u32 nfde,
				   __u32 nfre, __u32 nrule,
				   struct sframe_jit_header **hdr, int *fd)
{
	return jit_op_flags(SFRAME_JIT_F_COMPACT, -1, start, end, nfde, nfre,
			    nrule, hdr, fd);
}

static inline int cjit_replace(int src_fd, __u64 start, __u64 end,
			       __u32 nfde, __u32 nfre, __u32 nrule,
			       struct sframe_jit_header **hdr, int *fd)
{
	return jit_op_flags(SFRAME_JIT_F_COMPACT | SFRAME_JIT_REPLACE, src_fd,
			    start, end, nfde, nfre, nrule, hdr, fd);
}

static inline int cjit_copy(int src_fd, __u64 start, __u64 end, __u32 nfde,
			    __u32 nfre, __u32 nrule,
			    struct sframe_jit_header **hdr, int *fd)
{
	return jit_op_flags(SFRAME_JIT_F_COMPACT | SFRAME_JIT_COPY, src_fd,
			    start, end, nfde, nfre, nrule, hdr, fd);
}

/* A registry whose descriptor the caller closes: only its mapping keeps it. */
static inline int jit_register(__u64 start, __u64 end, __u32 nfde,
			       __u32 nfre, struct sframe_jit_header **hdr)
{
	return jit_op(0, -1, start, end, nfde, nfre, hdr, NULL);
}

/* A registry and its descriptor, for fork, COPY and REPLACE. */
static inline int jit_register_fd(__u64 start, __u64 end, __u32 nfde,
				  __u32 nfre, struct sframe_jit_header **hdr,
				  int *fd)
{
	return jit_op(0, -1, start, end, nfde, nfre, hdr, fd);
}

static inline int jit_replace(int src_fd, __u64 start, __u64 end,
			      __u32 nfde, __u32 nfre,
			      struct sframe_jit_header **hdr, int *fd)
{
	return jit_op(SFRAME_JIT_REPLACE, src_fd, start, end, nfde, nfre, hdr,
		      fd);
}

static inline int jit_copy(int src_fd, __u64 start, __u64 end, __u32 nfde,
			   __u32 nfre, struct sframe_jit_header **hdr,
			   int *fd)
{
	return jit_op(SFRAME_JIT_COPY, src_fd, start, end, nfde, nfre, hdr,
		      fd);
}

/* sframe_register(2) of a section and its text, the loader's way. */
static inline int elf_register(__u64 addr, __u64 size, __u64 start,
			       __u64 end)
{
	struct sframe_setup setup = {
		.sframe_start	= addr,
		.sframe_size	= size,
		.text_start	= start,
		.text_size	= end - start,
	};

	return sframe_register(&setup, sizeof(setup));
}

/* sframe_unregister(2) names a registration by its section alone. */
static inline int elf_unregister(__u64 addr)
{
	struct sframe_setup setup = { .sframe_start = addr };

	return sframe_unregister(&setup, sizeof(setup));
}

/*
 * A registration attempt that must fail on overlap.  Capacities of one
 * keep it clear of the users' limit, which is checked before overlap.
 * One that succeeds is never mapped, so closing its descriptor, as
 * jit_op() does, unregisters it again.
 */
static inline bool range_is_registered(__u64 start, __u64 end)
{
	return jit_register(start, end, 1, 1, NULL) == -EEXIST;
}

/* A line "@key:\t<number>" of /proc/self/fdinfo/@fd; -1 if none. */
static inline long long fdinfo_field(int fd, const char *key)
{
	size_t len = strlen(key);
	long long val = -1;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, len) && line[len] == ':') {
			val = strtoll(line + len + 1, NULL, 0);
			break;
		}
	}
	fclose(f);
	return val;
}

/*
 * Address space nobody else uses, to carve JIT code ranges from.  JIT
 * ranges need not be mapped; reserving them keeps them apart from the
 * executable's registered text.
 */
static inline char *arena_reserve(size_t pages)
{
	return mmap(NULL, pages * page_size(), PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

struct maps_entry {
	unsigned long start;
	unsigned long end;
	unsigned long offset;
	char perms[8];
	char name[256];
};

/* Find the /proc/self/maps line that holds @addr. */
static inline bool maps_lookup(unsigned long addr, struct maps_entry *e)
{
	char *line = NULL;
	size_t len = 0;
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	while (!found && getline(&line, &len, f) > 0) {
		unsigned long start, end, offset;
		char perms[8];
		int name = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n",
			   &start, &end, perms, &offset, &name) < 4)
			continue;
		if (addr < start || addr >= end)
			continue;
		e->start = start;
		e->end = end;
		e->offset = offset;
		memcpy(e->perms, perms, sizeof(e->perms));
		snprintf(e->name, sizeof(e->name), "%s",
			 name ? line + name : "");
		e->name[strcspn(e->name, "\n")] = '\0';
		found = true;
	}
	free(line);
	fclose(f);
	return found;
}

/* Length of the mapping that starts at @addr, 0 if none does. */
static inline size_t mapping_size(const void *addr)
{
	struct maps_entry e;

	if (!maps_lookup((unsigned long)addr, &e) ||
	    e.start != (unsigned long)addr)
		return 0;
	return e.end - e.start;
}

static inline struct sframe_jit_fde *jit_fde(struct sframe_jit_header *h,
					     unsigned int i)
{
	return (void *)((char *)h + h->fde_off + (size_t)i * h->fde_stride);
}

static inline struct sframe_jit_fre *jit_fre(struct sframe_jit_header *h,
					     unsigned int i)
{
	return (void *)((char *)h + h->fre_off + (size_t)i * h->fre_stride);
}

/*
 * Publish @nfde functions of 16 bytes each from @code, two rows each,
 * the way a JIT does: rows, then descriptor, then the count with
 * release.  @seed varies the contents so that two fills differ.
 */
static inline void jit_fill(struct sframe_jit_header *h, __u64 code,
			    unsigned int nfde, int seed)
{
	unsigned int i;

	for (i = 0; i < nfde; i++) {
		struct sframe_jit_fre *row = jit_fre(h, 2 * i);
		struct sframe_jit_fde *fde = jit_fde(h, i);

		row[0] = (struct sframe_jit_fre) {
			.start_off	= 0,
			.cfa_off	= 8,
			.ra_off		= -8,
			.cfa_base	= SFRAME_JIT_CFA_SP,
		};
		row = jit_fre(h, 2 * i + 1);
		*row = (struct sframe_jit_fre) {
			.start_off	= 1 + (seed & 7),
			.cfa_off	= 16,
			.ra_off		= -8,
			.fp_off		= -16,
			.cfa_base	= SFRAME_JIT_CFA_SP,
			.flags		= SFRAME_JIT_FRE_FP_SAVED,
		};
		*fde = (struct sframe_jit_fde) {
			.func_start	= code + 16 * i,
			.func_size	= 16,
			.fre_start	= 2 * i,
			.fre_count	= 2,
			.type		= SFRAME_JIT_FDE_PCINC,
		};
	}
	__atomic_store_n(&h->fde_count, nfde, __ATOMIC_RELEASE);
}

/* mprotect(2) and munmap(2) as -errno, for the same reason. */
static inline int mprotect_err(void *addr, size_t len, int prot)
{
	return mprotect(addr, len, prot) ? -errno : 0;
}

static inline int munmap_err(void *addr, size_t len)
{
	return munmap(addr, len) ? -errno : 0;
}

/* A code range and its registry, mapped, with its descriptor. */
struct jit_reg {
	__u64 start;
	__u64 end;
	struct sframe_jit_header *hdr;
	size_t size;
	int fd;
};

static inline void jit_reg_new(struct __test_metadata *_metadata,
			       struct jit_reg *reg, __u64 start, __u64 end,
			       __u32 nfde, __u32 nfre)
{
	reg->start = start;
	reg->end = end;
	reg->fd = -1;
	ASSERT_EQ(0, jit_register_fd(start, end, nfde, nfre, &reg->hdr,
				     &reg->fd));
	reg->size = mapping_size(reg->hdr);
	ASSERT_NE(0U, reg->size);
}

/*
 * A fresh arena of @pages pages and a registry for its 16 pages after
 * the first: free room on both sides of the range.  Returns the arena.
 */
static inline char *arena_jit_reg_new(struct __test_metadata *_metadata,
				      struct jit_reg *reg, size_t pages,
				      __u32 nfde, __u32 nfre)
{
	char *arena = arena_reserve(pages);
	__u64 code;

	ASSERT_NE(MAP_FAILED, arena);
	code = (unsigned long)arena + page_size();
	jit_reg_new(_metadata, reg, code, code + 16 * page_size(), nfde, nfre);
	return arena;
}

/*
 * The registry is still whole where it was, writable and not executable,
 * and still the registration of its range.
 */
static inline void expect_registry_intact(struct __test_metadata *_metadata,
					  const struct jit_reg *reg)
{
	struct maps_entry e;

	ASSERT_TRUE(maps_lookup((unsigned long)reg->hdr, &e));
	EXPECT_EQ((unsigned long)reg->hdr, e.start);
	EXPECT_EQ(reg->size, e.end - e.start);
	EXPECT_EQ(0, strncmp(e.perms, "rw-", 3))
		TH_LOG("registry mapped %s", e.perms);
	EXPECT_EQ((__u32)SFRAME_JIT_MAGIC, reg->hdr->magic);
	EXPECT_TRUE(range_is_registered(reg->start, reg->end));
}

/*
 * Checks in a forked child, which cannot use the harness: report and
 * exit non-zero, for the parent to see in the wait status.
 */
#define CHILD_EXPECT(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "# child %s:%d: %s (errno %d)\n", \
				__FILE__, __LINE__, #cond, errno);	\
			_exit(1);					\
		}							\
	} while (0)

static inline int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status))
		return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	return WEXITSTATUS(status);
}

/* SFrame section header, see sframe-format.md. */
struct sframe_sec_header {
	__u16 magic;
	__u8 version;
	__u8 flags;
	__u8 abi_arch;
	__s8 cfa_fixed_fp_offset;
	__s8 cfa_fixed_ra_offset;
	__u8 auxhdr_len;
	__u32 num_fdes;
	__u32 num_fres;
	__u32 fre_len;
	__u32 fdeoff;
	__u32 freoff;
} __attribute__((packed));

#define SFRAME_SEC_F_FUNC_START_PCREL	0x4
#define SFRAME_SEC_ABI_AARCH64_LE	2

/* Reasons to skip the tests that need the program's own section. */
#define NO_SFRAME_SEGMENT "no PT_GNU_SFRAME segment: build with -Wa,--gsframe"
#define NO_SFRAME_COPY	"cannot copy the .sframe section and its text"

/* Where the executable's .sframe section and its code are. */
struct self_sframe {
	unsigned long sframe_start;
	unsigned long sframe_size;
	unsigned long text_start;
	unsigned long text_end;
};

static inline int self_sframe_phdr(struct dl_phdr_info *info,
				   size_t size, void *data)
{
	struct self_sframe *s = data;
	unsigned int ntext = 0;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type == PT_GNU_SFRAME) {
			s->sframe_start = info->dlpi_addr + p->p_vaddr;
			s->sframe_size = p->p_filesz;
		} else if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
			s->text_start = info->dlpi_addr + p->p_vaddr;
			s->text_end = s->text_start + p->p_memsz;
			ntext++;
		}
	}
	/* binfmt_elf's text range is ambiguous with several segments. */
	if (ntext != 1) {
		s->text_start = 0;
		s->text_end = 0;
	}
	/* The executable comes first; stop there. */
	return 1;
}

/*
 * Find the executable's PT_GNU_SFRAME segment and its one executable
 * PT_LOAD, the section and text range that binfmt_elf registered.
 */
static inline bool self_sframe_find(struct self_sframe *s)
{
	memset(s, 0, sizeof(*s));
	dl_iterate_phdr(self_sframe_phdr, s);
	return s->sframe_size >= sizeof(struct sframe_sec_header) &&
	       s->text_start < s->text_end;
}

static inline int self_elf_register(const struct self_sframe *s)
{
	return elf_register(s->sframe_start, s->sframe_size, s->text_start,
			    s->text_end);
}

/* binfmt_elf registered the section where PT_GNU_SFRAME is mapped. */
static inline int self_elf_unregister(const struct self_sframe *s)
{
	return elf_unregister(s->sframe_start);
}

/*
 * A copy of the executable's section and text pages at a new place,
 * with the distance between them kept, so that section-relative and
 * PC-relative function starts still land in the copied text range: a
 * valid section for code nobody registered yet.  The text pages are
 * executable only if asked; their contents do not matter.
 */
struct sframe_copy {
	char *map;
	size_t map_size;
	unsigned char *sframe;
	size_t sframe_size;	/* the size to register; tests may shrink it */
	unsigned long text_start;
	unsigned long text_end;
	unsigned long text_pages;	/* page-aligned start of the text */
	size_t text_pages_size;
	const struct self_sframe *orig;
};

static inline struct sframe_sec_header *copy_hdr(struct sframe_copy *c)
{
	return (struct sframe_sec_header *)c->sframe;
}

/* Restore the section and the registered size after a test broke them. */
static inline void sframe_copy_reset(struct sframe_copy *c)
{
	memcpy(c->sframe, (void *)c->orig->sframe_start,
	       c->orig->sframe_size);
	c->sframe_size = c->orig->sframe_size;
}

static inline int sframe_copy_text_prot(struct sframe_copy *c, int prot)
{
	return mprotect((void *)c->text_pages, c->text_pages_size, prot);
}

static inline int sframe_copy_make(const struct self_sframe *s,
				   struct sframe_copy *c, bool exec)
{
	unsigned long sframe_end = s->sframe_start + s->sframe_size;
	unsigned long tlo = page_down(s->text_start);
	unsigned long thi = page_up(s->text_end);
	unsigned long slo = page_down(s->sframe_start);
	unsigned long shi = page_up(sframe_end);
	unsigned long lo = tlo < slo ? tlo : slo;
	unsigned long hi = thi > shi ? thi : shi;

	/* The text pages change protection; the section must not share one. */
	if (thi > slo && shi > tlo)
		return -1;
	c->map_size = hi - lo;
	c->map = mmap(NULL, c->map_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->map == MAP_FAILED)
		return -1;
	c->orig = s;
	c->sframe = (unsigned char *)c->map + (s->sframe_start - lo);
	sframe_copy_reset(c);
	c->text_start = (unsigned long)c->map + (s->text_start - lo);
	c->text_end = (unsigned long)c->map + (s->text_end - lo);
	c->text_pages = (unsigned long)c->map + (tlo - lo);
	c->text_pages_size = thi - tlo;
	if (exec && sframe_copy_text_prot(c, PROT_READ | PROT_EXEC))
		return -1;
	return 0;
}

/* The struct sframe_setup that registers @c's section for its text. */
static inline struct sframe_setup copy_setup(const struct sframe_copy *c)
{
	return (struct sframe_setup) {
		.sframe_start	= (unsigned long)c->sframe,
		.sframe_size	= c->sframe_size,
		.text_start	= c->text_start,
		.text_size	= c->text_end - c->text_start,
	};
}

static inline int copy_elf_register(struct sframe_copy *c)
{
	return elf_register((unsigned long)c->sframe, c->sframe_size,
			    c->text_start, c->text_end);
}

static inline int copy_elf_unregister(struct sframe_copy *c)
{
	return elf_unregister((unsigned long)c->sframe);
}

/* Bytes in one descriptor, 0 for a version these tests do not parse. */
static inline size_t sframe_sec_fde_size(const struct sframe_sec_header *h)
{
	switch (h->version) {
	case 1:
		return 17;
	case 2:
		return 20;
	default:
		return 0;
	}
}

/* Bytes the section's header says it spans, 0 if it cannot say. */
static inline size_t sframe_sec_span(const struct sframe_sec_header *h)
{
	size_t base = sizeof(*h) + h->auxhdr_len;
	size_t fdes = h->fdeoff + (size_t)h->num_fdes * sframe_sec_fde_size(h);
	size_t fres = (size_t)h->freoff + h->fre_len;

	if (!sframe_sec_fde_size(h))
		return 0;
	return base + (fdes > fres ? fdes : fres);
}

/* A field of /proc/self/status or /proc/meminfo, in kB; -1 if absent. */
static inline long proc_kb(const char *file, const char *field)
{
	size_t len = strlen(field);
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen(file, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			kb = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

/*
 * kernel.sframe_user_callchains: 1 has every user callchain of a task
 * with tables walked with them, whether the request asks or not.
 */
#define USER_CALLCHAINS_SYSCTL	"/proc/sys/kernel/sframe_user_callchains"

/* A sysctl's value as text, NUL-terminated: 0 or -errno. */
static inline int sysctl_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

static inline int sysctl_write(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

/*
 * kernel.sframe_exec_eager: 1 has exec build the tables of the sections
 * it registers (PT_GNU_SFRAME); at 0, the default, they are built when
 * a sample first meets their range.
 */
#define EXEC_EAGER_SYSCTL	"/proc/sys/kernel/sframe_exec_eager"
#define EXEC_EAGER_ENV		"SFRAME_TEST_EXEC_EAGER_WAS"

/*
 * Tests that sample this program's own PT_GNU_SFRAME code from their
 * first sample want its table built at its exec: run the program again
 * with kernel.sframe_exec_eager at 1, and put the value back first
 * thing in the new image.  A kernel without the sysctl, a value already
 * 1 or no right to set it leaves the program as it is.  Called first in
 * main().
 */
static inline void reexec_with_eager_tables(char **argv)
{
	const char *was = getenv(EXEC_EAGER_ENV);
	char saved[16];

	/* Run again already, or a child a test ran: "done". */
	if (was) {
		if (strcmp(was, "done")) {
			sysctl_write(EXEC_EAGER_SYSCTL, was);
			setenv(EXEC_EAGER_ENV, "done", 1);
		}
		return;
	}
	if (sysctl_read(EXEC_EAGER_SYSCTL, saved, sizeof(saved)) ||
	    saved[0] == '1' || setenv(EXEC_EAGER_ENV, saved, 1))
		return;
	if (!sysctl_write(EXEC_EAGER_SYSCTL, "1")) {
		execv("/proc/self/exe", argv);
		sysctl_write(EXEC_EAGER_SYSCTL, saved);
	}
	unsetenv(EXEC_EAGER_ENV);
}

/*
 * Give up CAP_IPC_LOCK, so that the locked-memory limit applies to this
 * process; @for_good drops it from the bounding set too, or root would
 * have it again after exec.  0 or -errno.
 */
static inline int drop_cap_ipc_lock(bool for_good)
{
	struct __user_cap_header_struct head = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	unsigned int i = CAP_TO_INDEX(CAP_IPC_LOCK);
	__u32 bit = CAP_TO_MASK(CAP_IPC_LOCK);

	if (for_good && prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0))
		return -errno;
	if (syscall(SYS_capget, &head, data))
		return -errno;
	data[i].effective &= ~bit;
	data[i].permitted &= ~bit;
	data[i].inheritable &= ~bit;
	if (syscall(SYS_capset, &head, data))
		return -errno;
	if (syscall(SYS_capget, &head, data))
		return -errno;
	return data[i].effective & bit ? -EPERM : 0;
}

#define CGROUP_ROOT	"/sys/fs/cgroup"

/* Write @val to a cgroup file: 0 or -errno. */
static inline int cg_write(const char *dir, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return sysctl_write(path, val);
}

/* A cgroup file's number, or -1. */
static inline long cg_read(const char *dir, const char *file)
{
	char path[256];
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

/*
 * A memory cgroup v2 group of its own below the root, named after @name
 * and this process: mounts cgroup2 where the VM has not, and enables the
 * memory controller below the root.  Returns 0, or a negative errno for
 * the test to skip on.
 */
static inline int memcg_make(char *dir, size_t size, const char *name)
{
	int err;

	if (access(CGROUP_ROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CGROUP_ROOT, "cgroup2", 0, NULL))
		return -errno;
	err = cg_write(CGROUP_ROOT, "cgroup.subtree_control", "+memory");
	if (err)
		return err;
	snprintf(dir, size, CGROUP_ROOT "/sframe-%s-%d", name, getpid());
	return mkdir(dir, 0755) ? -errno : 0;
}

/* Move this process into the group at @dir: 0 or -errno. */
static inline int memcg_join(const char *dir)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return cg_write(dir, "cgroup.procs", pid);
}

/*
 * memory.current and memory.peak move in batches: each CPU pre-charges
 * up to 64 pages (MEMCG_CHARGE_BATCH) and gives back what it did not use
 * later.  The VM has two CPUs.
 */
#define MEMCG_SLACK	(2 * 64 * 4096L)

#endif /* SFRAME_TEST_H */
