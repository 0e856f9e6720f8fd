// SPDX-License-Identifier: GPL-2.0
/* The perf map: one whole line per named function, whoever writes. */
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

static char *tmp_path(char *dir, size_t len, const char *name)
{
	char *p;

	snprintf(dir, len, "/tmp/sframe_jit_test.XXXXXX");
	ASSERT(mkdtemp(dir));
	p = malloc(strlen(dir) + strlen(name) + 2);
	ASSERT(p);
	sprintf(p, "%s/%s", dir, name);
	return p;
}

static void tmp_clean(const char *dir, char *path)
{
	unlink(path);
	rmdir(dir);
	free(path);
}

/* Count the lines of @path; check that each reads "HEX HEX NAME". */
static int lines_check(const char *path, const char *prefix)
{
	char *buf, *line, *save = NULL;
	size_t size;
	int n = 0;

	buf = file_read(path, &size);
	if (!buf)
		return 0;
	buf = realloc(buf, size + 1);
	ASSERT(buf);
	buf[size] = '\0';
	EXPECT(buf[size - 1] == '\n');
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long start, len;
		int name = 0;

		if (sscanf(line, "%llx %llx %n", &start, &len, &name) != 2 ||
		    !name || strncmp(line + name, prefix, strlen(prefix))) {
			test_fail(__FILE__, __LINE__, "bad line \"%s\"", line);
			break;
		}
		n++;
	}
	free(buf);
	return n;
}

TEST(perf_map_lines_name_each_named_function, T_BOTH)
{
	struct test_backend tb;
	struct sframe_jit *reg;
	char dir[64], want[256], *path, *buf;
	uint64_t code = arena(4096);
	size_t size;

	test_backend_init(&tb);
	path = tmp_path(dir, sizeof(dir), "perf.map");
	{
		SFRAME_JIT_OPTS(sframe_jit_opts, opts,
				.flags = SFRAME_JIT_F_PERF_MAP,
				.perf_map_path = path);

		reg = reg_new(&tb, code, code + 4096, &opts);
	}
	EXPECT_EQ(0, sframe_jit_add(reg, code, 0x20, NULL, 0, "first"));
	EXPECT_EQ(0, sframe_jit_add(reg, code + 0x20, 0x10, NULL, 0, NULL));
	EXPECT_EQ(0, sframe_jit_add_x86_64(reg, code + 0x40, 0x31, NULL,
					   "js::Interpret(int)"));
	EXPECT_EQ(-EEXIST, sframe_jit_add(reg, code, 0x20, NULL, 0, "dup"));
	snprintf(want, sizeof(want),
		 "%" PRIx64 " 20 first\n%" PRIx64 " 31 js::Interpret(int)\n",
		 code, code + 0x40);
	buf = file_read(path, &size);
	ASSERT(buf);
	EXPECT_EQ(strlen(want), size);
	EXPECT(!memcmp(buf, want, size < strlen(want) ? size : strlen(want)));
	{
		struct sframe_jit_info info = { .sz = sizeof(info) };

		EXPECT_EQ(0, sframe_jit_get_info(reg, &info));
		EXPECT_EQ(0, info.nr_perf_map_errors);
	}
	free(buf);
	sframe_jit_destroy(reg);
	/* The file stays for perf. */
	EXPECT(!access(path, F_OK));
	tmp_clean(dir, path);
}

TEST(perf_map_names_stay_on_one_line_and_are_cut, T_MEM)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_PERF_MAP);
	struct test_backend tb;
	struct sframe_jit *reg;
	char dir[64], *path, *buf, name[2000];
	uint64_t code = arena(4096);
	size_t size;

	test_backend_init(&tb);
	path = tmp_path(dir, sizeof(dir), "perf.map");
	opts.perf_map_path = path;
	reg = reg_new(&tb, code, code + 4096, &opts);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 16, NULL, 0, "two\nlines\r"));
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	EXPECT_EQ(0, sframe_jit_add(reg, code + 16, 16, NULL, 0, name));
	sframe_jit_destroy(reg);
	EXPECT_EQ(2, lines_check(path, ""));
	buf = file_read(path, &size);
	ASSERT(buf);
	EXPECT(size < 700);
	EXPECT(!memcmp(buf + strcspn(buf, " ") + 4, "two lines ", 10));
	free(buf);
	tmp_clean(dir, path);
}

TEST(perf_map_default_is_tmp_perf_pid_map, T_MEM)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_PERF_MAP);
	struct test_backend tb;
	struct sframe_jit *reg;
	char path[64];
	uint64_t code = arena(4096);

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	test_backend_init(&tb);
	reg = reg_new(&tb, code, code + 4096, &opts);
	EXPECT_EQ(0, sframe_jit_add(reg, code, 16, NULL, 0, "jit_fn"));
	sframe_jit_destroy(reg);
	EXPECT_EQ(1, lines_check(path, "jit_fn"));
	unlink(path);
}

TEST(perf_map_that_cannot_be_opened_fails_creation, T_MEM)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_PERF_MAP,
			.perf_map_path = "/nonexistent/sframe_jit/perf.map");
	struct test_backend tb;
	struct sframe_jit *reg = NULL;
	uint64_t code = arena(4096);

	test_backend_init(&tb);
	EXPECT_EQ(-ENOENT, reg_try(&tb, code, code + 4096, &opts, &reg));
	EXPECT(!reg);
	EXPECT_EQ(0, tb.nr_creates);
}

#define WRITERS		4
#define PER_WRITER	1500

struct pm_writer {
	struct sframe_jit *reg;
	uint64_t code;
	int id;
	int errors;
};

static void *pm_write(void *arg)
{
	struct pm_writer *w = arg;
	char name[400];
	int i;

	for (i = 0; i < PER_WRITER; i++) {
		snprintf(name, sizeof(name), "w%d_%d_%0300d", w->id, i, i);
		if (sframe_jit_add(w->reg, w->code + 16 * i, 16, NULL, 0, name))
			w->errors++;
	}
	return NULL;
}

/* Two registries and four threads append to one file: whole lines. */
TEST_TIMEOUT(perf_map_shared_by_two_registries_gets_whole_lines, T_BOTH, 120)
{
	struct test_backend tb[2];
	struct sframe_jit *reg[2];
	struct pm_writer w[WRITERS];
	pthread_t th[WRITERS];
	char dir[64], *path;
	uint64_t code[2];
	int i;

	path = tmp_path(dir, sizeof(dir), "perf.map");
	for (i = 0; i < 2; i++) {
		SFRAME_JIT_OPTS(sframe_jit_opts, opts,
				.flags = SFRAME_JIT_F_PERF_MAP,
				.perf_map_path = path);

		test_backend_init(&tb[i]);
		code[i] = arena(1 << 20);
		reg[i] = reg_new(&tb[i], code[i], code[i] + (1 << 20), &opts);
	}
	for (i = 0; i < WRITERS; i++) {
		w[i] = (struct pm_writer) {
			.reg = reg[i % 2],
			.code = code[i % 2] + (i / 2) * 16 * PER_WRITER,
			.id = i,
		};
		ASSERT(!pthread_create(&th[i], NULL, pm_write, &w[i]));
	}
	for (i = 0; i < WRITERS; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].errors);
	}
	EXPECT_EQ(WRITERS * PER_WRITER, lines_check(path, "w"));
	for (i = 0; i < 2; i++)
		sframe_jit_destroy(reg[i]);
	tmp_clean(dir, path);
}
