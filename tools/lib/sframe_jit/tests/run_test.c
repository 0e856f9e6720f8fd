// SPDX-License-Identifier: GPL-2.0
/*
 * sframe-run's pieces (run/): the snapshot of loaded objects, the
 * tracker following dlopen() and dlclose() with registries in private
 * memory and a stand-in for sframe_register(2), the rows an object
 * gets (those of its conversion, which the cross-check finds equal to
 * libdw's), failures that leave an object out and nothing else, stale
 * snapshots, fork, and many load and unload cycles.
 */
#include <dlfcn.h>
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../run/sframe_run.h"
#include "cfi_xcheck.h"
#include "test.h"

#define MAX_ELF	16

/* The stand-in kernel: JIT registries in memory, ELF ones recorded. */
static struct test_backend run_tb;
static struct sframe_setup elf_regs[MAX_ELF];
static int nr_elf_regs;
static int nr_unregs;
static int fail_elf;

static int fake_elf_register(const struct sframe_setup *args)
{
	if (fail_elf)
		return fail_elf;
	if (nr_elf_regs == MAX_ELF)
		return -ENOSPC;
	elf_regs[nr_elf_regs++] = *args;
	return 0;
}

/* As sframe_unregister(2): by the section's address alone. */
static int fake_unregister(uint64_t sframe_start)
{
	int i;

	if (!sframe_start)
		return -EINVAL;
	for (i = 0; i < nr_elf_regs; i++) {
		if (elf_regs[i].sframe_start != sframe_start)
			continue;
		elf_regs[i] = elf_regs[--nr_elf_regs];
		nr_unregs++;
		return 0;
	}
	return -ENOENT;
}

static struct sframe_run_ops run_ops = {
	.jit		= &test_ops_mem,
	.jit_priv	= &run_tb,
	.elf_register	= fake_elf_register,
	.unregister	= fake_unregister,
};

static void tracker_new(struct sframe_run_tracker *t)
{
	test_backend_init(&run_tb);
	sframe_run__tracker_init(t, &run_ops);
}

static char *fixture(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", test_env.fixtures, name);
	return path;
}

static const struct sframe_run_obj *
snap_find(const struct sframe_run_snapshot *s, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < s->nr; i++)
		if (addr >= s->objs[i].text_start && addr < s->objs[i].text_end)
			return &s->objs[i];
	return NULL;
}

static struct sframe_run_entry *
entry_at(struct sframe_run_tracker *t, uint64_t addr)
{
	uint32_t i;

	for (i = 0; i < t->nr; i++)
		if (addr >= t->entries[i].obj.text_start &&
		    addr < t->entries[i].obj.text_end)
			return &t->entries[i];
	return NULL;
}

static uint64_t sym_addr(void *handle, const char *name)
{
	void *p = dlsym(handle, name);

	ASSERT(p);
	return (uint64_t)(uintptr_t)p;
}

TEST(snapshot_lists_the_executable_first_then_libc_and_the_vdso, T_MEM)
{
	struct sframe_run_snapshot s;
	const struct sframe_run_obj *o;
	uint32_t i, vdso = 0;

	ASSERT_EQ(sframe_run__snapshot(&s), 0);
	ASSERT(s.nr >= 3);
	EXPECT(!strcmp(s.objs[0].name, "/proc/self/exe"));
	o = snap_find(&s, (uint64_t)(uintptr_t)&test_run_all);
	EXPECT(o == &s.objs[0]);
	o = snap_find(&s, sym_addr(RTLD_DEFAULT, "getpid"));
	ASSERT(o);
	EXPECT(strstr(o->name, "libc.so.6"));
	EXPECT(!o->image && !o->sframe_start);
	EXPECT_EQ(o->text_start & 0xfff, 0);
	for (i = 0; i < s.nr; i++) {
		if (!s.objs[i].image)
			continue;
		vdso++;
		/* Its image holds its section headers. */
		EXPECT(s.objs[i].image_size > 4096 / 2);
		EXPECT_EQ(s.objs[i].bias, (uint64_t)(uintptr_t)s.objs[i].image);
	}
	EXPECT_EQ(vdso, 1);
	EXPECT_EQ(s.gen, sframe_run__gen());
	sframe_run__snapshot_free(&s);
}

TEST(snapshot_follows_dlopen_and_dlclose, T_MEM)
{
	struct sframe_run_snapshot s;
	const struct sframe_run_obj *o;
	uint64_t gen = sframe_run__gen(), fn;
	void *h = dlopen(fixture("run_sframe.so"), RTLD_NOW | RTLD_LOCAL);

	ASSERT(h);
	EXPECT(sframe_run__gen() > gen);
	fn = sym_addr(h, "run_fixture_leaf");
	ASSERT_EQ(sframe_run__snapshot(&s), 0);
	o = snap_find(&s, fn);
	ASSERT(o);
	EXPECT(strstr(o->name, "run_sframe.so"));
	/* gcc -Wa,--gsframe: its .sframe is a PT_GNU_SFRAME segment. */
	EXPECT(o->sframe_start > o->bias && o->sframe_size > 28);
	sframe_run__snapshot_free(&s);

	gen = sframe_run__gen();
	ASSERT_EQ(dlclose(h), 0);
	EXPECT(sframe_run__gen() > gen);
	ASSERT_EQ(sframe_run__snapshot(&s), 0);
	EXPECT(!snap_find(&s, fn));
	sframe_run__snapshot_free(&s);
}

/* @t registered @path's CFI exactly as its conversion, at @bias. */
static void expect_rows_of_conversion(struct sframe_run_entry *e)
{
	struct sframe_jit_row got[64];
	const struct sframe_jit_row *want;
	struct sframe_jit_func f, g;
	struct sframe_jit_cfi *cfi;
	struct xc_result xc;
	size_t size;
	void *img = file_read(e->obj.name, &size);
	int i, n;

	ASSERT(img);
	/* The conversion itself agrees with libdw everywhere. */
	ASSERT_EQ(xc_object(e->obj.name, &xc, stdout, 4), 0);
	EXPECT_EQ(xc.mismatches, 0);
	EXPECT(xc.addrs > 0);
	n = sframe_jit_cfi_convert(img, size, &cfi);
	ASSERT(n > 0);
	EXPECT_EQ(e->reg.stats.nr_converted, n);
	for (i = 0; i < n; i++) {
		uint32_t r;

		ASSERT_EQ(sframe_jit_cfi_func(cfi, i, &f, &want), 0);
		ASSERT_EQ(sframe_jit_find(e->reg.jit, f.start + e->obj.bias,
					  &g, got, 64), 0);
		EXPECT_EQ(g.start, f.start + e->obj.bias);
		EXPECT_EQ(g.size, f.size);
		ASSERT_EQ(g.nr_rows, f.nr_rows);
		for (r = 0; r < f.nr_rows; r++) {
			EXPECT_EQ(got[r].start_off, want[r].start_off);
			EXPECT_EQ(got[r].cfa_base, want[r].cfa_base);
			EXPECT_EQ(got[r].cfa_off, want[r].cfa_off);
			EXPECT_EQ(got[r].ra_off, want[r].ra_off);
			EXPECT_EQ(got[r].fp_off, want[r].fp_off);
			EXPECT_EQ(got[r].flags, want[r].flags);
		}
	}
	sframe_jit_cfi_free(cfi);
	free(img);
}

TEST(tracker_registers_each_object_and_unregisters_it_at_dlclose, T_MEM)
{
	struct sframe_run_tracker t;
	struct sframe_run_entry *e;
	uint32_t live;
	uint64_t fn, sfn;
	void *h, *hs;

	tracker_new(&t);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	EXPECT(sframe_run__tracker_work(&t, true) >= 3);
	live = sframe_run__tracker_live(&t);
	e = entry_at(&t, sym_addr(RTLD_DEFAULT, "getpid"));
	ASSERT(e);
	EXPECT_EQ(e->state, SFRAME_RUN_DONE);
	EXPECT_EQ(e->reg.kind, SFRAME_RUN_JIT);

	/* One object with CFI only, one with .sframe. */
	h = dlopen(fixture("run_cfi.so"), RTLD_NOW | RTLD_LOCAL);
	hs = dlopen(fixture("run_sframe.so"), RTLD_NOW | RTLD_LOCAL);
	ASSERT(h && hs);
	fn = sym_addr(h, "run_fixture_sum");
	sfn = sym_addr(hs, "run_fixture_leaf");
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	EXPECT_EQ(sframe_run__tracker_work(&t, true), 2);
	EXPECT_EQ(sframe_run__tracker_live(&t), live + 2);
	e = entry_at(&t, fn);
	ASSERT(e);
	ASSERT_EQ(e->reg.kind, SFRAME_RUN_JIT);
	EXPECT(e->reg.compact);
	EXPECT_EQ(e->reg.start, e->obj.text_start);
	expect_rows_of_conversion(e);
	e = entry_at(&t, sfn);
	ASSERT(e);
	EXPECT_EQ(e->reg.kind, SFRAME_RUN_ELF);
	ASSERT_EQ(nr_elf_regs, 1);
	EXPECT_EQ(elf_regs[0].sframe_start, e->obj.sframe_start);
	EXPECT_EQ(elf_regs[0].text_start, e->obj.text_start);
	EXPECT(sfn >= elf_regs[0].text_start &&
	       sfn < elf_regs[0].text_start + elf_regs[0].text_size);

	ASSERT_EQ(dlclose(h), 0);
	ASSERT_EQ(dlclose(hs), 0);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	EXPECT_EQ(sframe_run__tracker_live(&t), live);
	EXPECT(!entry_at(&t, fn));
	EXPECT_EQ(nr_elf_regs, 0);
	EXPECT_EQ(nr_unregs, 1);
	EXPECT_EQ(t.nr_unpublished, 2);
	sframe_run__tracker_fini(&t);
	EXPECT_EQ(run_tb.nr_unmaps, run_tb.nr_creates);
}

TEST(deferred_objects_wait_for_the_thread_that_takes_all, T_MEM)
{
	struct sframe_run_tracker t;
	struct sframe_run_entry *e;
	uint32_t n;
	void *h;

	tracker_new(&t);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	n = t.nr;
	sframe_run__tracker_defer(&t);
	/* A dlopen() meanwhile converts its own object, and only that. */
	h = dlopen(fixture("run_cfi.so"), RTLD_NOW | RTLD_LOCAL);
	ASSERT(h);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	EXPECT_EQ(sframe_run__tracker_work(&t, false), 1);
	e = entry_at(&t, sym_addr(h, "run_fixture_sum"));
	EXPECT(e && e->state == SFRAME_RUN_DONE);
	EXPECT_EQ(sframe_run__tracker_live(&t), 1);
	EXPECT_EQ(sframe_run__tracker_work(&t, true), n);
	EXPECT_EQ(sframe_run__tracker_live(&t), n + 1);
	ASSERT_EQ(dlclose(h), 0);
	sframe_run__tracker_fini(&t);

	/* A forked child has no such thread: nothing stays deferred. */
	tracker_new(&t);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	sframe_run__tracker_defer(&t);
	pthread_mutex_lock(&t.lock);
	sframe_run__tracker_forked(&t);
	EXPECT_EQ(sframe_run__tracker_work(&t, false), n);
	sframe_run__tracker_fini(&t);
}

TEST(a_stale_snapshot_changes_nothing, T_MEM)
{
	struct sframe_run_snapshot old, cur;
	struct sframe_run_tracker t;
	void *h;
	uint64_t fn;

	tracker_new(&t);
	h = dlopen(fixture("run_cfi.so"), RTLD_NOW | RTLD_LOCAL);
	ASSERT(h);
	fn = sym_addr(h, "run_fixture_sum");
	ASSERT_EQ(sframe_run__snapshot(&old), 0);
	ASSERT_EQ(dlclose(h), 0);
	ASSERT_EQ(sframe_run__snapshot(&cur), 0);
	/* Taken in this order, arrived in the other. */
	ASSERT_EQ(sframe_run__tracker_apply(&t, &cur), 0);
	ASSERT_EQ(sframe_run__tracker_apply(&t, &old), 0);
	EXPECT(!entry_at(&t, fn));
	sframe_run__snapshot_free(&old);
	sframe_run__snapshot_free(&cur);
	sframe_run__tracker_fini(&t);
}

TEST(a_failed_registration_leaves_that_object_out_and_no_other, T_MEM)
{
	struct sframe_run_tracker t;
	struct sframe_run_entry *e;
	void *h, *hs;

	tracker_new(&t);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	sframe_run__tracker_work(&t, true);
	h = dlopen(fixture("run_cfi.so"), RTLD_NOW | RTLD_LOCAL);
	hs = dlopen(fixture("run_sframe.so"), RTLD_NOW | RTLD_LOCAL);
	ASSERT(h && hs);
	/* The user's limit reached for the registry, a section version the kernel refuses. */
	run_tb.fail_create = ENOMEM;
	fail_elf = -EOPNOTSUPP;
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	EXPECT_EQ(sframe_run__tracker_work(&t, true), 2);
	e = entry_at(&t, sym_addr(h, "run_fixture_sum"));
	ASSERT(e);
	EXPECT_EQ(e->reg.kind, SFRAME_RUN_NONE);
	EXPECT_EQ(e->reg.err, -ENOMEM);
	e = entry_at(&t, sym_addr(hs, "run_fixture_leaf"));
	ASSERT(e);
	EXPECT_EQ(e->reg.kind, SFRAME_RUN_NONE);
	EXPECT_EQ(e->reg.err, -EOPNOTSUPP);
	/* Nothing to undo at dlclose, and the rest stays registered. */
	e = entry_at(&t, sym_addr(RTLD_DEFAULT, "getpid"));
	ASSERT(e);
	EXPECT_EQ(e->reg.kind, SFRAME_RUN_JIT);
	fail_elf = 0;
	ASSERT_EQ(dlclose(h), 0);
	ASSERT_EQ(dlclose(hs), 0);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	EXPECT_EQ(nr_unregs, 0);
	EXPECT_EQ(t.nr_unpublished, 0);
	sframe_run__tracker_fini(&t);
}

TEST(a_forked_child_keeps_its_objects_and_registers_new_ones, T_MEM)
{
	struct sframe_run_tracker t;
	struct sframe_run_entry *e;
	uint32_t live;
	int status;
	pid_t pid;

	tracker_new(&t);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	/* A conversion under way in another thread at the fork. */
	t.entries[0].state = SFRAME_RUN_BUSY;
	sframe_run__tracker_work(&t, true);
	live = sframe_run__tracker_live(&t);
	pthread_mutex_lock(&t.lock);
	pid = fork();
	ASSERT(pid >= 0);
	if (!pid) {
		void *h;

		sframe_run__tracker_forked(&t);
		EXPECT_EQ(t.entries[0].state, SFRAME_RUN_PENDING);
		EXPECT_EQ(sframe_run__tracker_work(&t, true), 1);
		h = dlopen(fixture("run_cfi.so"), RTLD_NOW | RTLD_LOCAL);
		ASSERT(h);
		ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
		EXPECT_EQ(sframe_run__tracker_work(&t, true), 1);
		e = entry_at(&t, sym_addr(h, "run_fixture_sum"));
		EXPECT(e && e->reg.kind == SFRAME_RUN_JIT);
		EXPECT_EQ(sframe_run__tracker_live(&t), live + 2);
		_exit(test_failed());
	}
	pthread_mutex_unlock(&t.lock);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(sframe_run__tracker_live(&t), live);
	sframe_run__tracker_fini(&t);
}

TEST_TIMEOUT(dlopen_dlclose_cycles_leave_no_registration_or_memory, T_MEM, 120)
{
	struct sframe_run_tracker t;
	uint32_t live, entries;
	size_t heap = 0;
	int i;

	tracker_new(&t);
	ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
	sframe_run__tracker_work(&t, true);
	live = sframe_run__tracker_live(&t);
	entries = t.nr;
	for (i = 0; i < 1000; i++) {
		void *h = dlopen(fixture(i & 1 ? "run_sframe.so" :
					 "run_cfi.so"),
				 RTLD_NOW | RTLD_LOCAL);

		ASSERT(h);
		ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
		ASSERT_EQ(sframe_run__tracker_work(&t, true), 1);
		ASSERT_EQ(sframe_run__tracker_live(&t), live + 1);
		ASSERT_EQ(dlclose(h), 0);
		ASSERT_EQ(sframe_run__tracker_sync(&t), 0);
		ASSERT_EQ(sframe_run__tracker_live(&t), live);
		ASSERT_EQ(t.nr, entries);
		/* The heap after a warm-up must not grow. */
		if (i == 99)
			heap = mallinfo2().uordblks;
	}
	EXPECT(mallinfo2().uordblks <= heap + 4096);
	EXPECT_EQ(t.nr_published - t.nr_unpublished, live);
	EXPECT_EQ(run_tb.nr_creates - run_tb.nr_unmaps, (int)live);
	sframe_run__tracker_fini(&t);
}

/* The memory backend of a kernel without SFRAME_JIT_F_COMPACT. */
static long v1_only_create(void *priv, const struct sframe_jit_args *args,
			   int *fdp)
{
	if (args->flags || args->rule_capacity)
		return -EINVAL;
	return sframe_jit__mem_create(priv, args, fdp);
}

static const struct sframe_jit_backend v1_only = {
	.create		= v1_only_create,
	.replace	= sframe_jit__mem_replace,
	.unmap		= sframe_jit__unmap,
};

TEST(objects_get_compact_registries_or_version_1_ones, T_MEM)
{
	struct sframe_run_ops ops = { .jit = &sframe_jit__mem_backend };
	struct sframe_run_reg compact, v1, blob;
	struct sframe_jit_func lo, hi;
	struct sframe_jit_cfi *cfi;
	uint64_t base;
	size_t size;
	void *img = file_read("/lib/x86_64-linux-gnu/libc.so.6", &size);
	int n;

	if (!img)
		test_skip("no libc.so.6 to read");
	n = sframe_jit_cfi_convert(img, size, &cfi);
	ASSERT(n > 1000);
	sframe_jit_cfi_func(cfi, 0, &lo, NULL);
	sframe_jit_cfi_func(cfi, n - 1, &hi, NULL);
	base = arena(hi.start + hi.size - lo.start);

	ASSERT_EQ(sframe_run__publish_cfi(&ops, base,
					  base + hi.start + hi.size - lo.start,
					  cfi, base - lo.start, true, &compact),
		  0);
	EXPECT_EQ(compact.kind, SFRAME_RUN_JIT);
	EXPECT(compact.compact);
	EXPECT(compact.jit->l.compact);
	/* Asked not to (a JIT's blobs): version 1. */
	ASSERT_EQ(sframe_run__publish_cfi(&ops, base,
					  base + hi.start + hi.size - lo.start,
					  cfi, base - lo.start, false, &blob),
		  0);
	EXPECT(!blob.compact);
	EXPECT(!blob.jit->l.compact);
	/* A kernel that refuses compact records: version 1 as before. */
	ops.jit = &v1_only;
	ASSERT_EQ(sframe_run__publish_cfi(&ops, base,
					  base + hi.start + hi.size - lo.start,
					  cfi, base - lo.start, true, &v1), 0);
	EXPECT_EQ(v1.kind, SFRAME_RUN_JIT);
	EXPECT(!v1.compact);
	EXPECT_EQ(v1.map_size, blob.map_size);
	EXPECT(compact.map_size * 2 < v1.map_size);
	EXPECT_EQ(sframe_jit_find(compact.jit, hi.start + base - lo.start,
				  NULL, NULL, 0), 0);
	sframe_run__unpublish(&ops, &compact);
	sframe_run__unpublish(&ops, &blob);
	sframe_run__unpublish(&ops, &v1);
	sframe_jit_cfi_free(cfi);
	free(img);
}
