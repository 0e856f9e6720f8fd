// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What it costs a JIT to publish one function's unwind or symbol
 * information, for 1e3 to 1e6 functions, by each way there is:
 *
 *   sframe_jit   sframe_jit_create() with default capacities and
 *                sframe_jit_add() of four frame rows per function, growth
 *                by replacement included (a registry in private memory,
 *                or with --kernel the kernel's);
 *   sj_append    sframe_jit_add() alone, into a registry created (untimed)
 *                with room for all N functions;
 *   sj_remove    sframe_jit_remove() of each of them afterwards;
 *   libgcc       __register_frame() of a CIE and FDE built for the
 *                function, with the same four rows as DWARF CFI;
 *   libgcc_dereg __deregister_frame() of each, last registered first
 *                (libgcc 12 keeps a list: the other order is quadratic);
 *   perf_map     a /tmp/perf-PID.map style line, to a buffered file;
 *   jitdump      a JIT_CODE_LOAD record with its 64 code bytes, to a
 *                buffered, mmap()ed file as perf's agents write it;
 *   syscall      one no-op system call (getppid), the floor of any
 *                design with a system call per function;
 *   elf_op       with --kernel: sframe_register(2) of a one-function
 *                .sframe section, the per-function system call design.
 *
 * Each way runs over the same N functions, the ways in turn, REPS
 * times; the table gives the median time per function and its ratio to
 * sframe_jit measured in the same run, and how many appends into room
 * take the time of one getppid().  --ratios-only leaves out the times,
 * for runs under emulation where only ratios mean anything.
 *
 * Then two producer threads append N functions between them, to one
 * registry through the library's lock, and to a registry each: the time
 * per function of each thread, its throughput, the share of the
 * threads' time spent waiting for the lock (sframe_jit_get_info()), and
 * how much of the time the two ran at once.
 *
 * --callgrind runs each library path once over N functions between
 * callgrind client requests, for mk/bench/40-register to count the
 * instructions of each under valgrind --tool=callgrind.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/sframe.h>

#include "sframe_jit.h"
#include "sframe_nr.h"

/* mk/bench/40-register defines HAVE_CALLGRIND where valgrind's header is. */
#ifdef HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define HAVE_CALLGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name)	((void)(name))
#endif

/* libgcc's registration entry points (unwind-dw2-fde.h). */
void __register_frame(void *begin);
void __deregister_frame(void *begin);

struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};

const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

#define FN_SIZE		64	/* bytes of code each function spans */
#define NR_ROWS		4
#define EH_BLOB		80	/* bytes of CIE + FDE + terminator, padded */
#define NAME_MAX_LEN	24
#define MAX_METHODS	12
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The frame every function has: push %rbp; mov %rsp,%rbp; ...; leave; ret */
static const struct sframe_jit_row rows[NR_ROWS] = {
	{ .start_off = 0, .cfa_off = 8, .ra_off = -8,
	  .cfa_base = SFRAME_JIT_ROW_CFA_SP },
	{ .start_off = 1, .cfa_off = 16, .ra_off = -8, .fp_off = -16,
	  .cfa_base = SFRAME_JIT_ROW_CFA_SP, .flags = SFRAME_JIT_ROW_FP_SAVED },
	{ .start_off = 4, .cfa_off = 16, .ra_off = -8, .fp_off = -16,
	  .cfa_base = SFRAME_JIT_ROW_CFA_FP, .flags = SFRAME_JIT_ROW_FP_SAVED },
	{ .start_off = FN_SIZE - 1, .cfa_off = 8, .ra_off = -8,
	  .cfa_base = SFRAME_JIT_ROW_CFA_SP },
};

struct bench {
	unsigned long n;
	bool kernel;
	const char *dir;
	uint64_t text;			/* where the N functions "are" */
	unsigned char *eh;		/* N CIE+FDE blobs */
	unsigned char *elf_area;	/* .sframe page, then exec text */
	size_t elf_area_size;
	unsigned char code[FN_SIZE];	/* what a jitdump record carries */
	struct sframe_jit *reg;		/* between sframe_jit and sj_remove */
	char err[200];
};

struct method {
	const char *name;
	/* Time @b->n registrations; seconds, or negative on error. */
	double (*run)(struct bench *b);
	bool kernel_only;		/* needs --kernel */
	bool skip;			/* not run here */
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t fn_addr(const struct bench *b, unsigned long i)
{
	return b->text + (uint64_t)i * FN_SIZE;
}

static double fail(struct bench *b, const char *what, int err)
{
	snprintf(b->err, sizeof(b->err), "%s: %s", what, strerror(-err));
	return -1;
}

/* sframe_jit: a registry as a JIT creates it, with default capacities. */
static double run_sframe_jit(struct bench *b)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.flags = b->kernel ? 0 : SFRAME_JIT_F_NO_KERNEL);
	unsigned long i;
	double t0;
	int err;

	sframe_jit_destroy(b->reg);
	b->reg = NULL;
	t0 = now();
	err = sframe_jit_create(b->text, fn_addr(b, b->n), &opts, &b->reg);
	if (err)
		return fail(b, "sframe_jit_create", err);
	for (i = 0; i < b->n; i++) {
		err = sframe_jit_add(b->reg, fn_addr(b, i), FN_SIZE, rows,
				     NR_ROWS, NULL);
		if (err)
			return fail(b, "sframe_jit_add", err);
	}
	return now() - t0;
}

/*
 * A registry for functions @first to @first + @n - 1, with room for them
 * all, which never compacts.  Registries of the kernel may not overlap.
 */
static int room_create_part(struct bench *b, unsigned long first,
			    unsigned long n, uint32_t compact_threshold,
			    struct sframe_jit **regp)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
			.fde_capacity = n,
			.fre_capacity = n * NR_ROWS,
			.compact_threshold = compact_threshold,
			.flags = b->kernel ? 0 : SFRAME_JIT_F_NO_KERNEL);

	return sframe_jit_create(fn_addr(b, first), fn_addr(b, first + n),
				 &opts, regp);
}

/* A registry with room for @b->n functions, which never compacts. */
static int room_create(struct bench *b, uint32_t compact_threshold,
		       struct sframe_jit **regp)
{
	return room_create_part(b, 0, b->n, compact_threshold, regp);
}

static int add_all(struct bench *b, struct sframe_jit *reg)
{
	unsigned long i;
	int err;

	for (i = 0; i < b->n; i++) {
		err = sframe_jit_add(reg, fn_addr(b, i), FN_SIZE, rows,
				     NR_ROWS, NULL);
		if (err)
			return err;
	}
	return 0;
}

/* sj_append: the appends alone, into a registry that has room. */
static double run_sj_append(struct bench *b)
{
	struct sframe_jit *reg;
	double t;
	int err;

	err = room_create(b, 0, &reg);
	if (err)
		return fail(b, "sframe_jit_create", err);
	t = now();
	err = add_all(b, reg);
	t = now() - t;
	sframe_jit_destroy(reg);
	return err ? fail(b, "sframe_jit_add", err) : t;
}

/* sj_remove: retire what run_sframe_jit() added, then destroy. */
static double run_sj_remove(struct bench *b)
{
	unsigned long i;
	double t0 = now();
	int err;

	if (!b->reg)
		return fail(b, "sj_remove", -ENOENT);
	for (i = 0; i < b->n; i++) {
		err = sframe_jit_remove(b->reg, fn_addr(b, i));
		if (err)
			return fail(b, "sframe_jit_remove", err);
	}
	sframe_jit_destroy(b->reg);
	b->reg = NULL;
	return now() - t0;
}

/* ULEB128/SLEB128 of small values, and little-endian stores. */
static unsigned char *put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static unsigned char *put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

/*
 * A CIE (no augmentation: absolute pointers; code alignment 1, data
 * alignment -8, return address in DWARF register 16; CFA = rsp + 8, RA
 * at CFA - 8), an FDE with the four rows, and the zero terminator that
 * __register_frame() needs to find the end.
 */
static void eh_blob(unsigned char *blob, uint64_t start)
{
	static const unsigned char cie_body[] = {
		0, 0, 0, 0,		/* CIE id */
		1,			/* version */
		0,			/* augmentation "" */
		1,			/* code alignment */
		0x78,			/* data alignment -8 */
		16,			/* return address register */
		0x0c, 7, 8,		/* DW_CFA_def_cfa rsp, 8 */
		0x90, 1,		/* DW_CFA_offset r16, 1 * -8 */
		0, 0,			/* padding: DW_CFA_nop */
	};
	static const unsigned char fde_insns[] = {
		0x41,			/* DW_CFA_advance_loc 1 */
		0x0e, 16,		/* DW_CFA_def_cfa_offset 16 */
		0x86, 2,		/* DW_CFA_offset rbp, 2 * -8 */
		0x43,			/* DW_CFA_advance_loc 3 */
		0x0d, 6,		/* DW_CFA_def_cfa_register rbp */
		0x40 | (FN_SIZE - 1 - 4),	/* DW_CFA_advance_loc to leave+1 */
		0x0c, 7, 8,		/* DW_CFA_def_cfa rsp, 8 */
		0xc6,			/* DW_CFA_restore rbp */
		0, 0, 0,		/* padding: DW_CFA_nop */
	};
	unsigned char *p = blob, *fde;

	p = put32(p, sizeof(cie_body));
	memcpy(p, cie_body, sizeof(cie_body));
	p += sizeof(cie_body);
	fde = p;
	p = put32(p, 4 + 16 + sizeof(fde_insns));
	p = put32(p, p - blob);		/* back to the CIE */
	p = put64(p, start);
	p = put64(p, FN_SIZE);
	memcpy(p, fde_insns, sizeof(fde_insns));
	p += sizeof(fde_insns);
	put32(p, 0);
	(void)fde;
}

static double run_libgcc(struct bench *b)
{
	unsigned long i;
	double t0 = now();

	for (i = 0; i < b->n; i++)
		__register_frame(b->eh + i * EH_BLOB);
	return now() - t0;
}

static double run_libgcc_dereg(struct bench *b)
{
	unsigned long i;
	double t0 = now();

	for (i = b->n; i-- > 0;)
		__deregister_frame(b->eh + i * EH_BLOB);
	return now() - t0;
}

static FILE *out_open(struct bench *b, const char *what, char *path,
		      size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/register-bench-%d.%s", b->dir, getpid(), what);
	f = fopen(path, "w");
	if (!f)
		fail(b, path, -errno);
	return f;
}

static double run_perf_map(struct bench *b)
{
	char path[256];
	unsigned long i;
	double t, t0;
	FILE *f = out_open(b, "map", path, sizeof(path));

	if (!f)
		return -1;
	t0 = now();
	for (i = 0; i < b->n; i++)
		fprintf(f, "%llx %x fn_%lu\n", (unsigned long long)fn_addr(b, i),
			FN_SIZE, i);
	fflush(f);
	t = now() - t0;
	fclose(f);
	unlink(path);
	return t;
}

/* The jitdump file header and JIT_CODE_LOAD record, as the spec has them. */
struct jitdump_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jitdump_load {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static double run_jitdump(struct bench *b)
{
	struct jitdump_header h = {
		.magic = 0x4A695444, .version = 1, .total_size = sizeof(h),
		.elf_mach = EM_X86_64, .pid = getpid(),
	};
	uint32_t tid = syscall(SYS_gettid);
	char path[256], name[NAME_MAX_LEN];
	unsigned long i;
	double t, t0;
	void *marker;
	FILE *f = out_open(b, "dump", path, sizeof(path));

	if (!f)
		return -1;
	h.timestamp = mono_ns();
	fwrite(&h, sizeof(h), 1, f);
	fflush(f);
	/* perf finds the file by this executable mapping of it. */
	marker = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC,
		      MAP_PRIVATE, fileno(f), 0);
	t0 = now();
	for (i = 0; i < b->n; i++) {
		int len = snprintf(name, sizeof(name), "fn_%lu", i) + 1;
		struct jitdump_load r = {
			.id = 0,
			.total_size = sizeof(r) + len + FN_SIZE,
			.timestamp = mono_ns(),
			.pid = h.pid, .tid = tid,
			.vma = fn_addr(b, i), .code_addr = fn_addr(b, i),
			.code_size = FN_SIZE, .code_index = i,
		};

		fwrite(&r, sizeof(r), 1, f);
		fwrite(name, len, 1, f);
		fwrite(b->code, FN_SIZE, 1, f);
	}
	fflush(f);
	t = now() - t0;
	if (marker != MAP_FAILED)
		munmap(marker, sysconf(_SC_PAGESIZE));
	fclose(f);
	unlink(path);
	return t;
}

static double run_syscall(struct bench *b)
{
	unsigned long i;
	double t0 = now();

	for (i = 0; i < b->n; i++)
		syscall(SYS_getppid);
	return now() - t0;
}

/*
 * A one-function version 2 .sframe section: header, one descriptor
 * (start relative to the section), and the four rows with one-byte
 * start offsets and one-byte offsets: CFA, then the saved FP if any.
 */
#define ELF_SEC_SIZE	(28 + 20 + 14)

static void elf_sec_build(unsigned char *s)
{
	static const unsigned char fres[14] = {
		0, 0x03, 8,			/* sp + 8 */
		1, 0x05, 16, (unsigned char)-16,	/* sp + 16, FP at -16 */
		4, 0x04, 16, (unsigned char)-16,	/* fp + 16, FP at -16 */
		FN_SIZE - 1, 0x03, 8,		/* sp + 8 */
	};
	unsigned char *p = s;

	memset(s, 0, ELF_SEC_SIZE);
	p[0] = 0xe2;
	p[1] = 0xde;
	p[2] = 2;		/* version */
	p[3] = 1;		/* FDE_SORTED */
	p[4] = 3;		/* AMD64, little endian */
	p[5] = 0;		/* FP offset not fixed */
	p[6] = (unsigned char)-8;	/* RA at CFA - 8 */
	put32(p + 8, 1);	/* num_fdes */
	put32(p + 12, NR_ROWS);
	put32(p + 16, sizeof(fres));
	put32(p + 20, 0);	/* fdeoff */
	put32(p + 24, 20);	/* freoff */
	p += 28;
	put32(p + 4, FN_SIZE);
	put32(p + 8, 0);
	put32(p + 12, NR_ROWS);
	p[16] = 0;		/* PCINC, one-byte row starts */
	memcpy(s + 48, fres, sizeof(fres));
}

static long elf_op(long nr, struct sframe_setup *setup)
{
	long ret = syscall(nr, setup, sizeof(*setup));

	return ret < 0 ? -errno : ret;
}

/* The text of function i of the ELF area: after its .sframe page. */
static uint64_t elf_fn(const struct bench *b, unsigned long i)
{
	return (uint64_t)b->elf_area + sysconf(_SC_PAGESIZE) + i * FN_SIZE;
}

/*
 * Every function was registered from the one section page, which the
 * kernel copies each time: a registration is named by its section's
 * address, so each call removes one of them, whichever it finds.
 */
static void elf_unregister(struct bench *b, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct sframe_setup u = {
			.sframe_start = (uint64_t)b->elf_area,
		};

		elf_op(__NR_sframe_unregister, &u);
	}
}

static double run_elf_op(struct bench *b)
{
	unsigned char *sec = b->elf_area;
	unsigned long i;
	double t, t0 = now();
	long err;

	for (i = 0; i < b->n; i++) {
		struct sframe_setup a = {
			.sframe_start = (uint64_t)sec,
			.sframe_size = ELF_SEC_SIZE,
			.text_start = elf_fn(b, i),
			.text_size = FN_SIZE,
		};

		put32(sec + 28, (uint32_t)(elf_fn(b, i) - (uint64_t)sec));
		err = elf_op(__NR_sframe_register, &a);
		if (err) {
			elf_unregister(b, i);
			return fail(b, "sframe_register", err);
		}
	}
	t = now() - t0;
	elf_unregister(b, b->n);
	return t;
}

static struct method methods[] = {
	{ .name = "sframe_jit", .run = run_sframe_jit },
	{ .name = "sj_remove", .run = run_sj_remove },
	{ .name = "sj_append", .run = run_sj_append },
	{ .name = "libgcc", .run = run_libgcc },
	{ .name = "libgcc_dereg", .run = run_libgcc_dereg },
	{ .name = "perf_map", .run = run_perf_map },
	{ .name = "jitdump", .run = run_jitdump },
	{ .name = "syscall", .run = run_syscall },
	{ .name = "elf_op", .run = run_elf_op, .kernel_only = true },
};

#define NR_METHODS	ARRAY_SIZE(methods)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The ELF op's limit: registrations per process (sysctl). */
static unsigned long elf_limit(void)
{
	FILE *f = fopen("/proc/sys/kernel/sframe_max_registrations", "r");
	unsigned long v = 0;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int setup(struct bench *b, unsigned long max_n)
{
	size_t ps = sysconf(_SC_PAGESIZE);
	unsigned long i;

	b->eh = malloc(max_n * EH_BLOB);
	if (!b->eh)
		return -ENOMEM;
	memset(b->eh, 0, max_n * EH_BLOB);
	for (i = 0; i < max_n; i++)
		eh_blob(b->eh + i * EH_BLOB, fn_addr(b, i));
	memset(b->code, 0x90, sizeof(b->code));
	if (!b->kernel)
		return 0;
	b->elf_area_size = ps + max_n * FN_SIZE;
	b->elf_area = mmap(NULL, b->elf_area_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->elf_area == MAP_FAILED)
		return -ENOMEM;
	elf_sec_build(b->elf_area);
	/* The ELF op wants executable text; the section page stays writable. */
	if (mprotect(b->elf_area + ps, b->elf_area_size - ps,
		     PROT_READ | PROT_EXEC))
		return -errno;
	return 0;
}

/*
 * Check once, untimed, that what each way builds is what its consumer
 * reads: libgcc finds the FDE, the library finds the rows.
 */
static int self_check(struct bench *b)
{
	struct dwarf_eh_bases bases;
	struct sframe_jit_func f;
	unsigned long n = b->n;
	int ok;

	b->n = 16;
	if (run_libgcc(b) < 0)
		return -1;
	ok = _Unwind_Find_FDE((void *)(uintptr_t)(fn_addr(b, 7) + 5), &bases) &&
	     bases.func == (void *)(uintptr_t)fn_addr(b, 7);
	run_libgcc_dereg(b);
	if (!ok) {
		fprintf(stderr, "register: libgcc does not find the FDE built\n");
		return -1;
	}
	if (run_sframe_jit(b) < 0 ||
	    sframe_jit_find(b->reg, fn_addr(b, 7) + 5, &f, NULL, 0) ||
	    f.start != fn_addr(b, 7) || f.nr_rows != NR_ROWS) {
		fprintf(stderr, "register: the registry lacks a function: %s\n",
			b->err);
		return -1;
	}
	run_sj_remove(b);
	b->n = n;
	return 0;
}

/*
 * The library's paths one by one, each over b->n functions between
 * client requests: callgrind's count between CALLGRIND_ZERO_STATS and
 * the dump named "register CASE N" is that path's, with this loop's own
 * few instructions per function.  Setup and teardown are left out but
 * for "sequence", which is the whole life of a registry.
 */
static int cg_append(struct bench *b)
{
	struct sframe_jit *reg;
	int err;

	err = room_create(b, 0, &reg);
	if (err)
		return err;
	CALLGRIND_ZERO_STATS;
	err = add_all(b, reg);
	CALLGRIND_DUMP_STATS_AT("register append");
	sframe_jit_destroy(reg);
	return err;
}

/*
 * Removal in @order, or in address order every @step-th function, with
 * compaction as @compact_threshold says.  The dump's name ends with the
 * number of functions removed, which the count is divided by.
 */
static int cg_remove(struct bench *b, const char *name,
		     const unsigned long *order, unsigned long step,
		     uint32_t compact_threshold)
{
	struct sframe_jit *reg;
	unsigned long i, n = 0;
	char dump[64];
	int err;

	err = room_create(b, compact_threshold, &reg);
	if (!err)
		err = add_all(b, reg);
	if (err)
		return err;
	CALLGRIND_ZERO_STATS;
	for (i = 0; i < b->n && !err; i += step, n++)
		err = sframe_jit_remove(reg, fn_addr(b, order ? order[i] : i));
	snprintf(dump, sizeof(dump), "%s %lu", name, n);
	CALLGRIND_DUMP_STATS_AT(dump);
	sframe_jit_destroy(reg);
	return err;
}

/* sframe_jit_remove_range() of the middle tenth of the functions. */
static int cg_remove_range(struct bench *b)
{
	unsigned long first = b->n / 20 * 9, n = b->n / 10;
	struct sframe_jit *reg;
	char dump[64];
	int err, got;

	err = room_create(b, UINT32_MAX, &reg);
	if (!err)
		err = add_all(b, reg);
	if (err)
		return err;
	CALLGRIND_ZERO_STATS;
	got = sframe_jit_remove_range(reg, fn_addr(b, first),
				      fn_addr(b, first + n));
	snprintf(dump, sizeof(dump), "register remove_range %lu", n);
	CALLGRIND_DUMP_STATS_AT(dump);
	sframe_jit_destroy(reg);
	if (got < 0)
		return got;
	return (unsigned long)got == n ? 0 : -EIO;
}

static int cg_sequence(struct bench *b)
{
	int err;

	CALLGRIND_ZERO_STATS;
	err = run_sframe_jit(b) < 0 ? -EIO : 0;
	sframe_jit_destroy(b->reg);
	b->reg = NULL;
	CALLGRIND_DUMP_STATS_AT("register sequence");
	return err;
}

/* A fixed shuffle of [0, n), the same in every run. */
static unsigned long *shuffled(unsigned long n)
{
	unsigned long *p = malloc(n * sizeof(*p)), i, j, t;
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	if (!p)
		return NULL;
	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

static int run_callgrind(struct bench *b)
{
	unsigned long *order = shuffled(b->n);
	int err;

	if (!order)
		return -ENOMEM;
	err = cg_append(b);
	/* Tombstones alone: a threshold that compaction never reaches. */
	if (!err)
		err = cg_remove(b, "register tombstone", NULL, 1, UINT32_MAX);
	if (!err)
		err = cg_remove(b, "register tombstone_every_other", NULL, 2,
				UINT32_MAX);
	if (!err)
		err = cg_remove(b, "register tombstone_random", order, 1,
				UINT32_MAX);
	if (!err)
		err = cg_remove_range(b);
	if (!err)
		err = cg_remove(b, "register remove", NULL, 1, 0);
	if (!err)
		err = cg_sequence(b);
	free(order);
	if (err)
		fprintf(stderr, "register: --callgrind: %s\n", strerror(-err));
	return err ? 1 : 0;
}

/* Two producers: one registry between them, or one each. */
#define NR_PRODUCERS	2

struct producer {
	struct bench *b;
	struct sframe_jit *reg;
	atomic_ulong *next;		/* shared slot counter, or NULL */
	unsigned long first, n;		/* own slots without a counter */
	pthread_barrier_t *go;
	unsigned long added;
	double t0, secs;
	int err;
};

/*
 * A JIT with one code cache for all its threads hands out code space in
 * address order under its own lock, then publishes: here a counter.  Two
 * threads that take neighbouring slots may publish them in either
 * order; the later, lower one is then an insertion, which the library
 * makes under the sequence count.
 */
static void *produce(void *arg)
{
	struct producer *p = arg;
	unsigned long i, k;
	double t0;

	pthread_barrier_wait(p->go);
	t0 = now();
	p->t0 = t0;
	for (k = 0;; k++) {
		if (p->next)
			i = atomic_fetch_add(p->next, 1);
		else
			i = k < p->n ? p->first + k : p->b->n;
		if (i >= p->b->n)
			break;
		p->err = sframe_jit_add(p->reg, fn_addr(p->b, i), FN_SIZE, rows,
					NR_ROWS, NULL);
		if (p->err)
			break;
		p->added++;
	}
	p->secs = now() - t0;
	return NULL;
}

struct threads_run {
	/*
	 * The threads' time over their functions: the time of a function on
	 * a thread, whichever thread published more (on a loaded machine one
	 * may publish most before the other runs).
	 */
	double ns_per_fn;
	double lock_share;	/* lock waits over the threads' time */
	double waits_per_fn;
	/*
	 * The time both threads ran over the time either did: on a machine
	 * shared with other work they may take turns rather than compete.
	 */
	double overlap;
};

static double overlap(const struct producer *a, const struct producer *b)
{
	double start = a->t0 > b->t0 ? a->t0 : b->t0;
	double end_a = a->t0 + a->secs, end_b = b->t0 + b->secs;
	double end = end_a < end_b ? end_a : end_b;
	double first = a->t0 < b->t0 ? a->t0 : b->t0;
	double last = end_a > end_b ? end_a : end_b;

	return end > start ? (end - start) / (last - first) : 0;
}

static int lock_info(struct sframe_jit *reg, struct sframe_jit_info *info)
{
	info->sz = sizeof(*info);
	return sframe_jit_get_info(reg, info);
}

/* One run of the two producers; @shared: one registry between them. */
static int run_threads(struct bench *b, bool shared, struct threads_run *out)
{
	struct producer p[NR_PRODUCERS] = { 0 };
	struct sframe_jit *regs[NR_PRODUCERS] = { 0 };
	struct sframe_jit_info info;
	atomic_ulong next = 0;
	pthread_t th[NR_PRODUCERS];
	pthread_barrier_t go;
	double secs = 0, wait_ns = 0, waits = 0, added = 0;
	unsigned long half = b->n / NR_PRODUCERS;
	int i, nr_regs = shared ? 1 : NR_PRODUCERS, err = 0;

	/* A registry each covers its producer's half of the functions. */
	for (i = 0; i < nr_regs && !err; i++)
		err = shared ? room_create(b, 0, &regs[i]) :
			       room_create_part(b, i * half, half, 0, &regs[i]);
	pthread_barrier_init(&go, NULL, NR_PRODUCERS);
	for (i = 0; i < NR_PRODUCERS && !err; i++) {
		p[i] = (struct producer) {
			.b = b, .reg = regs[shared ? 0 : i],
			.next = shared ? &next : NULL,
			.first = i * half, .n = half, .go = &go,
		};
		err = -pthread_create(&th[i], NULL, produce, &p[i]);
	}
	for (i--; i >= 0; i--)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	for (i = 0; i < NR_PRODUCERS && !err; i++) {
		err = p[i].err;
		secs += p[i].secs;
		added += p[i].added;
	}
	for (i = 0; i < nr_regs && !err; i++) {
		err = lock_info(regs[i], &info);
		wait_ns += info.lock_wait_ns;
		waits += info.nr_lock_waits;
	}
	for (i = 0; i < nr_regs; i++)
		sframe_jit_destroy(regs[i]);
	if (err)
		return fail(b, shared ? "one registry" : "a registry each", err);
	out->ns_per_fn = secs * 1e9 / added;
	out->overlap = overlap(&p[0], &p[1]);
	out->lock_share = wait_ns / (secs * 1e9);
	out->waits_per_fn = waits / b->n;
	return 0;
}

static int cmp_run(const void *a, const void *b)
{
	const struct threads_run *x = a, *y = b;

	return x->ns_per_fn < y->ns_per_fn ? -1 : x->ns_per_fn > y->ns_per_fn;
}

/* The producers' table: medians of @reps runs of each mode in turn. */
static int bench_threads(struct bench *b, unsigned int reps, bool ratios_only)
{
	static const char * const name[2] = { "a registry each", "one registry" };
	struct threads_run r[2][16];
	unsigned int k, m;

	for (k = 0; k < reps; k++)
		for (m = 0; m < 2; m++) {
			memset(&r[m][k], 0, sizeof(r[m][k]));
			if (run_threads(b, m, &r[m][k])) {
				fprintf(stderr, "register: producers: %s\n", b->err);
				return -1;
			}
		}
	printf("\n%d producer threads, %lu functions between them, median of %u runs\n",
	       NR_PRODUCERS, b->n, reps);
	printf("%-16s %14s %16s %13s %11s %8s %9s\n", "registries",
	       "ns/fn/thread", "Mfn/s/thread", "waits/fn", "lock share",
	       "overlap", "ratio");
	for (m = 0; m < 2; m++) {
		qsort(r[m], reps, sizeof(r[m][0]), cmp_run);
		r[m][0] = r[m][reps / 2];
	}
	for (m = 0; m < 2; m++) {
		const struct threads_run *x = &r[m][0];

		if (ratios_only)
			printf("%-16s %14s %16s %13.5f %10.2f%% %7.0f%% %8.2fx\n",
			       name[m], "-", "-", x->waits_per_fn,
			       100 * x->lock_share, 100 * x->overlap,
			       x->ns_per_fn / r[0][0].ns_per_fn);
		else
			printf("%-16s %14.1f %16.1f %13.5f %10.2f%% %7.0f%% %8.2fx\n",
			       name[m], x->ns_per_fn, 1e3 / x->ns_per_fn,
			       x->waits_per_fn, 100 * x->lock_share,
			       100 * x->overlap,
			       x->ns_per_fn / r[0][0].ns_per_fn);
	}
	return 0;
}

static void usage_exit(void)
{
	fprintf(stderr,
		"usage: register [--kernel] [--ratios-only] [--reps R] [--max N] [--dir D]\n"
		"       register --callgrind [--max N]\n"
		"  --kernel       registries in the kernel, and the ELF operation\n"
		"                 (only on a kernel with sframe_register(2))\n"
		"  --ratios-only  no times, only ratios to sframe_jit (emulation)\n"
		"  --reps R       runs of each way per size, median taken (5)\n"
		"  --max N        largest number of functions, 1e3..1e6 (1000000)\n"
		"  --dir D        where the perf map and jitdump go (/tmp)\n"
		"  --callgrind    each library path once over N functions,\n"
		"                 between callgrind client requests\n");
	exit(2);
}

struct options {
	bool ratios_only;
	bool callgrind;
	unsigned int reps;
	unsigned long max_n;
};

static void parse(int argc, char **argv, struct bench *b, struct options *o)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kernel"))
			b->kernel = true;
		else if (!strcmp(argv[i], "--ratios-only"))
			o->ratios_only = true;
		else if (!strcmp(argv[i], "--callgrind"))
			o->callgrind = true;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			o->reps = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--max") && i + 1 < argc)
			o->max_n = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			b->dir = argv[++i];
		else
			usage_exit();
	}
	if (!o->reps || o->max_n < 1000 || o->max_n > 1000000)
		usage_exit();
}

static void print_header(const struct options *o)
{
	unsigned int m;

	printf("%-8s", "N");
	for (m = 0; m < NR_METHODS; m++) {
		if (methods[m].skip)
			continue;
		if (o->ratios_only)
			printf(" %12s", methods[m].name);
		else
			printf(" %16s", methods[m].name);
	}
	printf(" %14s\n", "syscall/append");
}

static unsigned int method_index(double (*run)(struct bench *b))
{
	unsigned int m;

	for (m = 0; m < NR_METHODS && methods[m].run != run; m++)
		;
	return m;
}

/* One row: median ns per function and the ratio to sframe_jit. */
static void print_row(const struct options *o, unsigned long n,
		      double med[MAX_METHODS], bool na[MAX_METHODS])
{
	unsigned int m;
	char cell[32];

	printf("%-8lu", n);
	for (m = 0; m < NR_METHODS; m++) {
		double ns = med[m] * 1e9 / n, ratio = med[m] / med[0];

		if (methods[m].skip)
			continue;
		if (na[m])
			snprintf(cell, sizeof(cell), "n/a");
		else if (o->ratios_only)
			snprintf(cell, sizeof(cell), "%.2fx", ratio);
		else
			snprintf(cell, sizeof(cell), "%.0fns %.2fx", ns, ratio);
		printf(" %*s", o->ratios_only ? 12 : 16, cell);
	}
	/* How many appends into room one no-op system call costs. */
	printf(" %13.2fx\n", med[method_index(run_syscall)] /
			      med[method_index(run_sj_append)]);
	fflush(stdout);
}

static int bench_size(struct bench *b, const struct options *o,
		      unsigned long n, unsigned long limit)
{
	double t[MAX_METHODS][16], med[MAX_METHODS];
	bool na[MAX_METHODS] = { 0 };
	unsigned int m, r;

	b->n = n;
	for (r = 0; r < o->reps; r++) {
		for (m = 0; m < NR_METHODS; m++) {
			if (methods[m].skip)
				continue;
			if (methods[m].run == run_elf_op && n > limit) {
				na[m] = true;
				continue;
			}
			t[m][r] = methods[m].run(b);
			if (t[m][r] < 0) {
				fprintf(stderr, "register: %s at N=%lu: %s\n",
					methods[m].name, n, b->err);
				return -1;
			}
		}
	}
	for (m = 0; m < NR_METHODS; m++) {
		qsort(t[m], o->reps, sizeof(double), cmp_double);
		med[m] = t[m][o->reps / 2];
	}
	print_row(o, n, med, na);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .reps = 5, .max_n = 1000000 };
	/* Functions need not exist for any of the ways but elf_op. */
	struct bench b = { .dir = "/tmp", .text = 0x10000000000ULL };
	unsigned long n, limit = 0;
	unsigned int m;

	parse(argc, argv, &b, &o);
	if (o.reps > 16)
		usage_exit();
	if (b.kernel && access("/proc/sys/kernel/sframe_max_registrations",
			       F_OK)) {
		fprintf(stderr, "register: --kernel needs a kernel with sframe_register(2)\n");
		return 1;
	}
	if (o.callgrind) {
		if (!HAVE_CALLGRIND) {
			fprintf(stderr, "register: built without <valgrind/callgrind.h>\n");
			return 1;
		}
		b.n = o.max_n;
		return run_callgrind(&b);
	}
	for (m = 0; m < NR_METHODS; m++)
		methods[m].skip = methods[m].kernel_only && !b.kernel;
	if (b.kernel)
		limit = elf_limit();
	if (setup(&b, o.max_n) || self_check(&b))
		return 1;
	printf("per function, median of %u runs%s; ratio to sframe_jit (%s)\n",
	       o.reps, o.ratios_only ? " (ratios only)" : "",
	       b.kernel ? "kernel registry" : "in-memory registry");
	if (b.kernel)
		printf("elf_op: n/a above kernel.sframe_max_registrations = %lu\n",
		       limit);
	print_header(&o);
	for (n = 1000; n <= o.max_n; n *= 10)
		if (bench_size(&b, &o, n, limit))
			return 1;
	b.n = o.max_n;
	return bench_threads(&b, o.reps, o.ratios_only) ? 1 : 0;
}
