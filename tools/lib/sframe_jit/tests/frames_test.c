// SPDX-License-Identifier: GPL-2.0
/*
 * What sframe-run takes from JITs (run/eh_blob.c, run/frames.c,
 * run/gdbjit.c): raw .eh_frame as __register_frame() gets it, in both
 * of its forms, converted to the fixture's known rows; registrations
 * published, unpublished, and kept under the keep policy; the GDB JIT
 * interface's objects named in the perf map, and their rows taken only
 * where their addresses are final.  The interposition itself, with
 * libgcc's unwinder behind it, is tests/frames_preload.c.
 */
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../run/gdb_jit.h"
#include "../run/sframe_run.h"
#include "jit_image.h"
#include "test.h"

static void image_get(struct jit_image *im)
{
	jit_image_fixture(im);
	ASSERT_EQ(im->text_size, JIT_CALL_SIZE);
}

static void rows_expect(const struct sframe_jit_row *rows, uint32_t nr)
{
	uint32_t i;

	ASSERT_EQ(nr, JIT_CALL_NR_ROWS);
	for (i = 0; i < nr; i++) {
		EXPECT_EQ(rows[i].start_off, jit_call_row_offs[i]);
		EXPECT_EQ(rows[i].cfa_base, SFRAME_JIT_ROW_CFA_SP);
		EXPECT_EQ(rows[i].cfa_off, jit_call_row_cfas[i]);
		EXPECT_EQ(rows[i].ra_off, -8);
		EXPECT_EQ(rows[i].flags, 0);
	}
}

static void blob_expect(const struct jit_image *im, const void *begin)
{
	const struct sframe_jit_row *rows;
	struct sframe_jit_cfi *cfi = NULL;
	struct sframe_jit_func f;
	uint64_t start, end;

	ASSERT_EQ(sframe_run__blob_convert(begin, &cfi, &start, &end), 0);
	EXPECT_EQ(start, im->text);
	EXPECT_EQ(end, im->text + JIT_CALL_SIZE);
	ASSERT_EQ(sframe_jit_cfi_nr_funcs(cfi), 1);
	ASSERT_EQ(sframe_jit_cfi_func(cfi, 0, &f, &rows), 0);
	EXPECT_EQ(f.start, im->text);
	EXPECT_EQ(f.size, JIT_CALL_SIZE);
	rows_expect(rows, f.nr_rows);
	sframe_jit_cfi_free(cfi);
}

TEST(raw_eh_frame_section_converts_to_the_fixture_rows, T_MEM)
{
	struct jit_image im;

	image_get(&im);
	blob_expect(&im, im.eh_frame);
	jit_image_free(&im);
}

TEST(raw_lone_fde_converts_to_its_function_alone, T_MEM)
{
	struct jit_image im;

	image_get(&im);
	blob_expect(&im, im.fde);
	jit_image_free(&im);
}

TEST(raw_eh_frame_without_entries_converts_to_nothing, T_MEM)
{
	static const uint32_t terminator[2];
	static const uint32_t dwarf64[4] = { 0xffffffff };
	struct sframe_jit_cfi *cfi = NULL;
	uint64_t start, end;

	EXPECT_EQ(sframe_run__blob_convert(NULL, &cfi, &start, &end), -ENOENT);
	EXPECT_EQ(sframe_run__blob_convert(terminator, &cfi, &start, &end),
		  -ENOENT);
	EXPECT_EQ(sframe_run__blob_convert(dwarf64, &cfi, &start, &end),
		  -EOPNOTSUPP);
	EXPECT(!cfi);
}

/* The registry's rows of jit_call, as the kernel would read them. */
static void registry_expect(struct sframe_jit *jit, const struct jit_image *im)
{
	struct sframe_jit_row rows[8];
	struct sframe_jit_func f;
	uint32_t off;

	for (off = 0; off < JIT_CALL_SIZE; off++) {
		ASSERT_EQ(sframe_jit_find(jit, im->text + off, &f, rows, 8), 0);
		EXPECT_EQ(f.start, im->text);
		EXPECT_EQ(f.size, JIT_CALL_SIZE);
	}
	rows_expect(rows, f.nr_rows);
	EXPECT_EQ(sframe_jit_find(jit, im->text + JIT_CALL_SIZE, NULL, NULL, 0),
		  -ENOENT);
}

TEST(registered_frames_are_published_until_deregistered, T_MEM)
{
	struct sframe_run_frames f;
	struct jit_image im;

	image_get(&im);
	sframe_run__frames_init(&f, &sframe_run__private_ops);
	f.sync = true;
	ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
	ASSERT_EQ(f.nr, 1);
	ASSERT_EQ(f.frames[0].reg.kind, SFRAME_RUN_JIT);
	EXPECT_EQ(f.frames[0].reg.start, im.text);
	EXPECT_EQ(f.frames[0].reg.end, im.text + JIT_CALL_SIZE);
	registry_expect(f.frames[0].reg.jit, &im);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.fde), 0);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 1);
	EXPECT_EQ(f.nr, 0);
	EXPECT_EQ(f.nr_published, 1);
	EXPECT_EQ(f.nr_unpublished, 1);
	sframe_run__frames_fini(&f);
	jit_image_free(&im);
}

TEST(queued_frames_are_published_by_the_worker_or_cancelled, T_MEM)
{
	struct sframe_run_frames f;
	struct jit_image im;

	image_get(&im);
	sframe_run__frames_init(&f, &sframe_run__private_ops);
	/* Deregistered before the worker's turn: never published. */
	ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
	EXPECT_EQ(f.nr_pending, 1);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 0);
	EXPECT_EQ(f.nr, 0);
	EXPECT_EQ(f.nr_cancelled, 1);
	EXPECT_EQ(sframe_run__frames_work(&f), 0);
	EXPECT_EQ(f.nr_published, 0);
	/* Published by the worker, then deregistered. */
	ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
	ASSERT_EQ(sframe_run__frames_work(&f), 1);
	EXPECT_EQ(f.nr_pending, 0);
	ASSERT_EQ(f.nr, 1);
	ASSERT_EQ(f.frames[0].state, SFRAME_RUN_FRAME_LIVE);
	registry_expect(f.frames[0].reg.jit, &im);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 1);
	EXPECT_EQ(f.nr, 0);
	EXPECT_EQ(f.nr_published, 1);
	sframe_run__frames_fini(&f);
	jit_image_free(&im);
}

struct worker_arg {
	struct sframe_run_frames *f;
	atomic_bool stop;
};

static void *worker_loop(void *p)
{
	struct worker_arg *w = p;
	struct timespec nap = { .tv_nsec = 10000 };

	while (!atomic_load(&w->stop))
		if (!sframe_run__frames_work(w->f))
			nanosleep(&nap, NULL);
	return NULL;
}

TEST(deregistrations_racing_the_worker_leave_nothing_behind, T_MEM)
{
	struct worker_arg w = { 0 };
	struct sframe_run_frames f;
	struct jit_image im;
	uint32_t removed = 0;
	pthread_t tid;
	int i;

	image_get(&im);
	sframe_run__frames_init(&f, &sframe_run__private_ops);
	w.f = &f;
	ASSERT_EQ(pthread_create(&tid, NULL, worker_loop, &w), 0);
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
		/* Now before the worker's turn, now during it, now after. */
		if (i % 5 == 0)
			nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
		else if (i % 3)
			sched_yield();
		removed += sframe_run__frames_remove(&f, im.eh_frame);
	}
	atomic_store(&w.stop, true);
	pthread_join(tid, NULL);
	EXPECT_EQ(f.nr, 0);
	EXPECT_EQ(f.nr_pending, 0);
	EXPECT_EQ(f.nr_published, removed);
	EXPECT_EQ(f.nr_unpublished, removed);
	EXPECT_EQ(f.nr_published + f.nr_cancelled, 300);
	test_log("%u published by the worker, %llu cancelled", removed,
		 (unsigned long long)f.nr_cancelled);
	sframe_run__frames_fini(&f);
	jit_image_free(&im);
}

TEST(a_table_registers_each_section_under_its_key, T_MEM)
{
	struct sframe_run_frames f;
	struct jit_image im[2];
	const void *table[3];

	image_get(&im[0]);
	image_get(&im[1]);
	table[0] = im[0].eh_frame;
	table[1] = im[1].fde;
	table[2] = NULL;
	sframe_run__frames_init(&f, &sframe_run__private_ops);
	f.sync = true;
	ASSERT_EQ(sframe_run__frames_add(&f, table, table[0]), 0);
	ASSERT_EQ(sframe_run__frames_add(&f, table, table[1]), 0);
	EXPECT_EQ(f.nr, 2);
	EXPECT_EQ(sframe_run__frames_remove(&f, table), 2);
	EXPECT_EQ(f.nr, 0);
	sframe_run__frames_fini(&f);
	jit_image_free(&im[0]);
	jit_image_free(&im[1]);
}

TEST(the_keep_policy_keeps_the_newest_deregistered_frames, T_MEM)
{
	struct sframe_run_frames f;
	struct jit_image im;
	uint32_t i;

	image_get(&im);
	sframe_run__frames_init(&f, &sframe_run__private_ops);
	f.sync = true;
	f.keep = true;
	ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 1);
	ASSERT_EQ(f.nr, 1);
	EXPECT_EQ(f.frames[0].state, SFRAME_RUN_FRAME_KEPT);
	registry_expect(f.frames[0].reg.jit, &im);
	/* Kept ones are not deregistered again. */
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 0);
	/* Registries in memory overlap freely: only the count bounds them. */
	for (i = 0; i < SFRAME_RUN_MAX_KEPT + 3; i++) {
		ASSERT_EQ(sframe_run__frames_add(&f, im.fde, im.fde), 0);
		EXPECT_EQ(sframe_run__frames_remove(&f, im.fde), 1);
	}
	EXPECT_EQ(f.nr, SFRAME_RUN_MAX_KEPT);
	EXPECT_EQ(f.nr_kept, SFRAME_RUN_MAX_KEPT);
	for (i = 0; i < f.nr; i++)
		EXPECT(f.frames[i].id >= 4);
	sframe_run__frames_fini(&f);
	jit_image_free(&im);
}

TEST(an_overlapping_frame_replaces_only_a_kept_one, T_KERNEL)
{
	struct sframe_run_frames f;
	struct jit_image im;

	image_get(&im);
	sframe_run__frames_init(&f, &sframe_run__kernel_ops);
	f.sync = true;
	ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
	EXPECT(range_registered(im.text, im.text + JIT_CALL_SIZE));
	EXPECT_EQ(sframe_run__frames_add(&f, im.fde, im.fde), -EEXIST);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 1);
	EXPECT(!range_registered(im.text, im.text + JIT_CALL_SIZE));
	f.keep = true;
	ASSERT_EQ(sframe_run__frames_add(&f, im.eh_frame, im.eh_frame), 0);
	EXPECT_EQ(sframe_run__frames_remove(&f, im.eh_frame), 1);
	EXPECT(range_registered(im.text, im.text + JIT_CALL_SIZE));
	ASSERT_EQ(sframe_run__frames_add(&f, im.fde, im.fde), 0);
	EXPECT_EQ(f.nr, 1);
	EXPECT_EQ(f.nr_kept, 0);
	sframe_run__frames_fini(&f);
	EXPECT(!range_registered(im.text, im.text + JIT_CALL_SIZE));
	jit_image_free(&im);
}

/*
 * The relocatable fixture with its .text "loaded" at @addr: LLVM's copy
 * for debuggers has the section addresses set, its contents as they were.
 */
static char *relocatable_at(size_t *size, uint64_t addr)
{
	const Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	char path[512];
	const char *names;
	char *data;
	unsigned int i;

	snprintf(path, sizeof(path), "%s/jit_frame.o", test_env.fixtures);
	data = file_read(path, size);
	ASSERT(data && *size > sizeof(*eh));
	eh = (const Elf64_Ehdr *)data;
	ASSERT(eh->e_shoff + eh->e_shnum * sizeof(*sh) <= *size);
	sh = (Elf64_Shdr *)(data + eh->e_shoff);
	names = data + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, ".text"))
			sh[i].sh_addr = addr;
	return data;
}

TEST(gdb_jit_objects_are_named_and_final_ones_registered, T_MEM)
{
	struct jit_code_entry e[2] = { 0 };
	struct jit_descriptor d = { .version = 1 };
	char map[] = "/tmp/sframe_jit_gdbjit_XXXXXX";
	struct sframe_run_gdbjit g;
	char path[512], buf[256];
	size_t so_size, o_size;
	char *so, *o;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/jit_frame.so", test_env.fixtures);
	so = file_read(path, &so_size);
	ASSERT(so);
	o = relocatable_at(&o_size, 0x7000);
	fd = mkstemp(map);
	ASSERT(fd >= 0);
	e[0] = (struct jit_code_entry) { &e[1], NULL, so, so_size };
	e[1] = (struct jit_code_entry) { NULL, &e[0], o, o_size };
	d.first_entry = &e[0];

	sframe_run__gdbjit_init(&g, &sframe_run__private_ops, map);
	ASSERT_EQ(sframe_run__gdbjit_watch(&g, &d), 0);
	sframe_run__gdbjit_poll(&g);
	ASSERT_EQ(g.nr, 2);
	EXPECT_EQ(g.objs[0].nr_names, 1);
	EXPECT_EQ(g.objs[0].reg.kind, SFRAME_RUN_JIT);
	EXPECT_EQ(g.objs[0].reg.start, 0x1000);
	EXPECT_EQ(g.objs[0].reg.end, 0x1000 + JIT_CALL_SIZE);
	EXPECT_EQ(g.objs[1].nr_names, 1);
	EXPECT_EQ(g.objs[1].reg.kind, SFRAME_RUN_NONE);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	ASSERT(n > 0);
	buf[n] = 0;
	EXPECT(!strcmp(buf, "1000 13 jit_call\n7000 13 jit_call\n"));

	/* Polls find what they found, once; an object unlinked goes. */
	sframe_run__gdbjit_poll(&g);
	EXPECT_EQ(g.nr, 2);
	d.first_entry = &e[1];
	sframe_run__gdbjit_poll(&g);
	ASSERT_EQ(g.nr, 1);
	EXPECT(g.objs[0].image == o);
	d.first_entry = NULL;
	sframe_run__gdbjit_poll(&g);
	EXPECT_EQ(g.nr, 0);
	EXPECT_EQ(pread(fd, buf, sizeof(buf), 0), 34);

	sframe_run__gdbjit_fini(&g);
	close(fd);
	unlink(map);
	free(so);
	free(o);
}
