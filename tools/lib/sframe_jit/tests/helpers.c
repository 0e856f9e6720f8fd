// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jit_image.h"
#include "test.h"
#include "sframe_nr.h"

uint64_t arena(size_t size)
{
	void *p = mmap(NULL, size, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	ASSERT(p != MAP_FAILED);
	return (uint64_t)(uintptr_t)p;
}

int reg_try(struct test_backend *tb, uint64_t start, uint64_t end,
	    const struct sframe_jit_opts *opts, struct sframe_jit **regp)
{
	return sframe_jit__create(start, end, opts,
				  tb->base->kernel ? &test_ops_kernel :
						     &test_ops_mem, tb, regp);
}

struct sframe_jit *reg_new(struct test_backend *tb, uint64_t start,
			   uint64_t end, const struct sframe_jit_opts *opts)
{
	struct sframe_jit *reg = NULL;

	ASSERT_EQ(0, reg_try(tb, start, end, opts, &reg));
	return reg;
}

struct sframe_jit_header *reg_hdr(struct test_backend *tb)
{
	return atomic_load_explicit(&tb->current, memory_order_acquire);
}

const struct sframe_jit_row rows_fp32[4] = {
	{ .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 8, .ra_off = -8 },
	{ .start_off = 1, .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_ROW_FP_SAVED },
	{ .start_off = 4, .cfa_base = SFRAME_JIT_ROW_CFA_FP, .cfa_off = 16,
	  .ra_off = -8, .fp_off = -16, .flags = SFRAME_JIT_ROW_FP_SAVED },
	{ .start_off = 31, .cfa_base = SFRAME_JIT_ROW_CFA_SP, .cfa_off = 8,
	  .ra_off = -8, .flags = SFRAME_JIT_ROW_RA_UNDEFINED },
};

void rows_simple(struct sframe_jit_row *rows, int32_t body_cfa)
{
	rows[0] = (struct sframe_jit_row) {
		.cfa_base	= SFRAME_JIT_ROW_CFA_SP,
		.cfa_off	= 8,
		.ra_off		= -8,
	};
	rows[1] = (struct sframe_jit_row) {
		.start_off	= 1,
		.cfa_base	= SFRAME_JIT_ROW_CFA_SP,
		.cfa_off	= body_cfa,
		.ra_off		= -8,
		.fp_off		= -16,
		.flags		= SFRAME_JIT_ROW_FP_SAVED,
	};
}

/* Only called where the sysctl exists: the kernel-only cases. */
int raw_sframe_jit_open(struct sframe_jit_args *args, size_t size)
{
	long ret;

	ASSERT(!access(SFRAME_JIT_MAX_REGS_SYSCTL, F_OK));
	ret = syscall(__NR_sframe_jit_open, args, size);
	return ret == -1 ? -errno : (int)ret;
}

struct sframe_jit_header *raw_map(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	void *p;

	if (size <= 0)
		return NULL;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * A registration attempt fails with EEXIST exactly on overlap.  One
 * that succeeds is undone by closing its descriptor: a registry never
 * mapped is unregistered with its file.
 */
bool range_registered(uint64_t start, uint64_t end)
{
	struct sframe_jit_args args = {
		.text_start	= start,
		.text_end	= end,
		.fde_capacity	= 1,
		.fre_capacity	= 1,
	};
	int fd = raw_sframe_jit_open(&args, sizeof(args));

	if (fd == -EEXIST)
		return true;
	ASSERT(fd >= 0);
	close(fd);
	return false;
}

void *file_read(const char *path, size_t *size)
{
	struct stat st;
	ssize_t n;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !st.st_size) {
		close(fd);
		return NULL;
	}
	buf = malloc(st.st_size);
	n = buf ? read(fd, buf, st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return NULL;
	}
	*size = st.st_size;
	return buf;
}

bool rows_equal(const struct sframe_jit_row *a,
		const struct sframe_jit_row *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].start_off != b[i].start_off ||
		    a[i].cfa_off != b[i].cfa_off ||
		    a[i].ra_off != b[i].ra_off || a[i].fp_off != b[i].fp_off ||
		    a[i].cfa_base != b[i].cfa_base || a[i].flags != b[i].flags)
			return false;
	return true;
}

/**
 * jit_image_fixture() - the fixtures' jit_frame.so, copied as a JIT would
 * @im: filled in; jit_image_free() it.
 *
 * Skips the test where the fixture is not built.
 */
void jit_image_fixture(struct jit_image *im)
{
	char path[512];
	int err;

	snprintf(path, sizeof(path), "%s/jit_frame.so", test_env.fixtures);
	err = jit_image_load(path, im);
	if (err == -ENOENT)
		test_skip("no %s", path);
	ASSERT_EQ(err, 0);
}
