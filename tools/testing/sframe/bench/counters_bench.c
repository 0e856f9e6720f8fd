// SPDX-License-Identifier: GPL-2.0
/*
 * What the counters of a JIT registry cost per lookup.  For every frame
 * in a registered range the unwinder calls sframe_region_find()
 * (kernel/unwind/sframe_lookup.c), which looks the PC up with
 * sframe_jit_find() and then counts the lookup and its outcome in the
 * registry's struct sframe_jit_stats (sframe_jit_count()): loads and
 * stores without atomics, from whichever CPU took the sample, into the
 * second cache line of the header page, which the process maps shared
 * and may write.  sframe_lookup.c and sframe_jit_read.c are built unchanged, -O2,
 * against the shims of tools/testing/sframe; the registry is jit_gen.c's,
 * looked up at random PCs, every lookup a hit.
 *
 * Each scenario is timed counting (sframe_region_find()) and not
 * counting (uncounted(): the same call without sframe_jit_count()):
 *
 *  1cpu         one thread on the first CPU;
 *  2cpu         a thread on each of the first two CPUs, in the same
 *               registry, as when both CPUs sample threads of one JIT
 *               process: the counters' line moves between the CPUs;
 *  2cpu+wstats  as 2cpu, with a third thread on the second CPU storing
 *               into the counters' line without pause, as a hostile or
 *               careless process may;
 *  2cpu+wcount  the same writer storing fde_count (its own value, with
 *               release) into the header's first line, which every
 *               lookup reads: what a process can do to a lookup without
 *               any counters, and what a JIT publishing functions at a
 *               high rate does.
 *
 * On two CPUs the writer shares the second CPU with the lookup thread
 * there, as a process's writing thread shares its CPU with the samples
 * taken of it; the lookup thread on the first CPU is the one it hurts.
 *
 * The lookups come in samples of FRAMES, each closed as the return from
 * the sampling interrupt closes one: iret is serializing, so the
 * counters' stores have to leave the store buffer before the CPU goes
 * on, and a miss on their line is paid there rather than hidden behind
 * the lookups that follow.
 *
 * Lookups are timed in chunks of CHUNK, in wall time.  A thread of a
 * two-CPU scenario keeps only the chunks during which the thread it
 * contends with ran (the writer if there is one, else the other lookup
 * thread), so that a shared machine running the threads in turn rather
 * than together does not hide the contention; a run of a cell is the
 * median of the chunks kept, which also leaves out those that a
 * preemption lands in.  Before each cell two threads toss a cache line
 * between the two CPUs, for what one transfer costs: on a virtual
 * machine it changes as the host moves the virtual CPUs.
 *
 *	counters_bench [-r RUNS] [-l LOOKUPS] [-f FRAMES] [-n FUNCS] [-s SEED]
 *
 * Runs go round all cells in turn, RUNS times; each thread makes LOOKUPS
 * lookups per cell.  A cell is the median of its runs in nanoseconds per
 * lookup, and count/none the median (and the range) of the ratio of the
 * two cells of a scenario in one run.  A run in which a thread kept
 * fewer than MIN_KEPT chunks does not count.  Exit status 1 if a lookup
 * missed, one thread's counts went wrong or a scenario had no run that
 * counts.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_time.h"
#include "jit_gen.h"
#include "sframe_internal.h"
#include "sframe_lookup.h"

#define NR_BENCH_CPUS		2
/* Lookups per timed chunk: tens of microseconds, far below a time slice. */
#define CHUNK		256
/* Lookups between two reports of a lookup thread's progress. */
#define TICK		16
/*
 * The other lookup thread's reports in a chunk kept: it ran for half of
 * the chunk at the same speed, or all of it at half the speed (the two
 * CPUs of a virtual machine need not be equally fast).
 */
#define TICK_NEED	8
/* Stores of the writer between two reports of its progress. */
#define WRITER_BATCH	64
/* The writer's reports in a chunk kept: a thousand stores or more. */
#define WRITER_NEED	16
/* Fewer chunks kept than this, and a thread's run does not count. */
#define MIN_KEPT	32
/* Round trips of the line per timed chunk, and chunks, for a transfer. */
#define TOSS_CHUNK	1000
#define TOSS_CHUNKS	101

enum scenario { ONE, TWO, WSTATS, WCOUNT, NR_SCENARIOS };

static const char *const scenario_names[NR_SCENARIOS] = {
	"1cpu", "2cpu", "2cpu+wstats", "2cpu+wcount",
};

/* The threads of a cell: the lookup threads, then the writer. */
enum { WRITER = NR_BENCH_CPUS, NR_THREADS };

/*
 * A counter of each thread's progress, which the others read before and
 * after a chunk to tell whether it ran meanwhile; in a line pair of its
 * own, away from the registry and from the others (the adjacent-line
 * prefetcher fetches lines in pairs).
 */
struct progress {
	u64 n;
} __attribute__((aligned(128)));

static struct progress progress[NR_THREADS];

/* The line the two CPUs toss to each other in transfer_ns(). */
static struct progress toss;

/* One run of one cell, per lookup thread. */
struct cell_run {
	double ns[NR_BENCH_CPUS];		/* per lookup, median of the chunks */
	double kept_share[NR_BENCH_CPUS];	/* chunks kept of those timed */
	double counted;			/* counted lookups per lookup made */
	double toss_ns;			/* a line's transfer, just before */
	bool valid;
};

/* What every thread of the benchmark reads. */
struct bench {
	struct sframe_region region;
	struct sframe_jit_reg reg;
	struct sframe_jit_header *hdr;
	const unsigned long *pcs;
	u32 nr_pcs;
	u32 lookups;
	u32 frames;
	int cpus[NR_BENCH_CPUS];
};

struct lookup_thread {
	const struct bench *b;
	pthread_barrier_t *start;
	int self;
	int other;			/* -1: none, every chunk is kept */
	u64 need;			/* its progress in a chunk kept */
	u32 first;
	bool count;
	double *chunk_ns;
	u32 nr_chunks, nr_kept, hits;
};

struct writer_thread {
	struct sframe_jit_header *hdr;
	pthread_barrier_t *start;
	enum scenario what;
	int stop;
};

/*
 * Called as a function of another file is: not inlined, and with the
 * arguments as declared (gcc would otherwise pass only the fields used).
 */
#ifdef __clang__
#define AS_EXTERN	__attribute__((noinline))
#else
#define AS_EXTERN	__attribute__((noipa))
#endif

/*
 * sframe_lookup.c asks for the table of a section registered at exec
 * that has none; the benchmark's registry is a JIT one, never such.
 */
void sframe_exec_want(struct sframe_region *r)
{
	abort();
}

/*
 * sframe_region_find() of kernel/unwind/sframe_lookup.c without its call
 * to sframe_jit_count(); keep the two alike.  Called as the original is,
 * so that the two differ by the count alone.
 */
static AS_EXTERN int
uncounted(struct sframe_region *r, unsigned long pc, struct sframe_row *row)
{
	if (r->kind == SFRAME_REGION_ELF)
		return sframe_table_find(r->elf->table, pc - r->bias, row);
	return sframe_jit_find(&r->jit->view, pc, row);
}

static u64 load(const struct progress *p)
{
	return __atomic_load_n(&p->n, __ATOMIC_RELAXED);
}

static void store(struct progress *p, u64 v)
{
	__atomic_store_n(&p->n, v, __ATOMIC_RELAXED);
}

/*
 * The end of a sample: mfence waits for the stores before it, lfence
 * keeps what follows from starting before that, as iret would.
 */
static inline void sample_end(void)
{
	asm volatile("mfence; lfence" ::: "memory");
}

/*
 * The thread's lookups, timed by chunks.  Inlined twice, counting and
 * not, so that the loop holds a direct call of either.
 */
static __always_inline void run_chunks(struct lookup_thread *t, bool count)
{
	const struct bench *b = t->b;
	struct sframe_region *r = (struct sframe_region *)&b->region;
	u32 c, i, j = t->first, frame = 0;
	struct sframe_row row;
	u64 o0 = 0, o1 = 0, ticks = 0;
	u32 reads = 0;
	double t0, t1;
	int res;

	for (c = 0; c < t->nr_chunks; c++) {
		if (t->other >= 0)
			o0 = load(&progress[t->other]);
		t0 = wall_ns();
		for (i = 0; i < CHUNK; i++) {
			if (count)
				res = sframe_region_find(r, b->pcs[j], &row,
							 &reads);
			else
				res = uncounted(r, b->pcs[j], &row);
			t->hits += res == SFRAME_FIND_HIT;
			if (++j == b->nr_pcs)
				j = 0;
			if (++frame == b->frames) {
				frame = 0;
				sample_end();
			}
			if (i % TICK == TICK - 1)
				store(&progress[t->self], ++ticks);
		}
		t1 = wall_ns();
		if (t->other >= 0)
			o1 = load(&progress[t->other]);
		if (t->other < 0 || o1 - o0 >= t->need)
			t->chunk_ns[t->nr_kept++] = (t1 - t0) / CHUNK;
	}
}

static void *lookup_main(void *arg)
{
	struct lookup_thread *t = arg;

	pthread_barrier_wait(t->start);
	if (t->count)
		run_chunks(t, true);
	else
		run_chunks(t, false);
	return NULL;
}

/*
 * Stores without pause into the line under test: stats.lookups, any
 * value, or fde_count, its own value as a JIT republishes it.
 */
static void *writer_main(void *arg)
{
	struct writer_thread *w = arg;
	struct sframe_jit_header *h = w->hdr;
	u32 count = h->fde_count, i;
	u64 v = 0, batches = 0;

	pthread_barrier_wait(w->start);
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		for (i = 0; i < WRITER_BATCH; i++) {
			if (w->what == WSTATS)
				__atomic_store_n(&h->stats.lookups, v++,
						 __ATOMIC_RELAXED);
			else
				__atomic_store_n(&h->fde_count, count,
						 __ATOMIC_RELEASE);
		}
		store(&progress[WRITER], ++batches);
	}
	return NULL;
}

static void start_pinned(pthread_t *th, int cpu, void *(*fn)(void *),
			 void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err) {
		fprintf(stderr, "counters_bench: pthread_create: %s\n",
			strerror(err));
		exit(2);
	}
}

/* Answers each odd value of the tossed line with the next even one. */
static void *toss_back(void *arg)
{
	u64 i, n = (u64)TOSS_CHUNK * TOSS_CHUNKS;

	for (i = 0; i < n; i++) {
		while (load(&toss) != 2 * i + 1)
			;
		store(&toss, 2 * i + 2);
	}
	return NULL;
}

/* Sends the line over, waits for it back: the chunks' times at @arg. */
static void *toss_out(void *arg)
{
	double *ns = arg, t0;
	u64 i = 0;
	int c, k;

	for (c = 0; c < TOSS_CHUNKS; c++) {
		t0 = wall_ns();
		for (k = 0; k < TOSS_CHUNK; k++, i++) {
			store(&toss, 2 * i + 1);
			while (load(&toss) != 2 * i + 2)
				;
		}
		ns[c] = wall_ns() - t0;
	}
	return NULL;
}

/* One cache line's trip between the two CPUs: half a round trip. */
static double transfer_ns(const struct bench *b)
{
	double ns[TOSS_CHUNKS];
	pthread_t out, back;

	store(&toss, 0);
	start_pinned(&back, b->cpus[1], toss_back, NULL);
	start_pinned(&out, b->cpus[0], toss_out, ns);
	pthread_join(out, NULL);
	pthread_join(back, NULL);
	return median(ns, TOSS_CHUNKS) / TOSS_CHUNK / 2;
}

/* One run of one cell; false if a lookup missed or a count is wrong. */
static bool run_cell(struct bench *b, enum scenario s, bool count,
		     struct cell_run *out)
{
	bool writer = s == WSTATS || s == WCOUNT, ok = true;
	struct writer_thread w = { .hdr = b->hdr, .what = s };
	int nr = s == ONE ? 1 : NR_BENCH_CPUS, i;
	struct lookup_thread lt[NR_BENCH_CPUS];
	pthread_t th[NR_BENCH_CPUS], wth;
	pthread_barrier_t start;
	u64 counted, made = 0;

	out->toss_ns = transfer_ns(b);
	memset(&b->hdr->stats, 0, sizeof(b->hdr->stats));
	memset(progress, 0, sizeof(progress));
	pthread_barrier_init(&start, NULL, nr + writer);
	if (writer) {
		w.start = &start;
		start_pinned(&wth, b->cpus[1], writer_main, &w);
	}
	for (i = 0; i < nr; i++) {
		lt[i] = (struct lookup_thread){
			.b = b,
			.start = &start,
			.self = i,
			.other = nr == 1 ? -1 : i == 0 && writer ? WRITER :
				 1 - i,
			.need = i == 0 && writer ? WRITER_NEED : TICK_NEED,
			.first = (u64)b->nr_pcs * i / NR_BENCH_CPUS,
			.count = count,
			.nr_chunks = b->lookups / CHUNK,
		};
		lt[i].chunk_ns = jit_gen_alloc(sizeof(double) *
					       lt[i].nr_chunks);
		start_pinned(&th[i], b->cpus[i], lookup_main, &lt[i]);
	}
	for (i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	if (writer) {
		__atomic_store_n(&w.stop, 1, __ATOMIC_RELAXED);
		pthread_join(wth, NULL);
	}
	pthread_barrier_destroy(&start);

	out->valid = true;
	for (i = 0; i < nr; i++) {
		struct lookup_thread *t = &lt[i];
		u32 n = t->nr_chunks * CHUNK;

		made += n;
		if (t->hits != n) {
			fprintf(stderr, "counters_bench: %s: %u of %u lookups hit\n",
				scenario_names[s], t->hits, n);
			ok = false;
		}
		out->kept_share[i] = (double)t->nr_kept / t->nr_chunks;
		if (t->nr_kept < MIN_KEPT)
			out->valid = false;
		else
			out->ns[i] = median(t->chunk_ns, t->nr_kept);
		free(t->chunk_ns);
	}
	counted = b->hdr->stats.lookups;
	out->counted = (double)counted / made;
	/* One CPU alone must count every lookup, and each as a hit. */
	if (count && s == ONE &&
	    (counted != made || b->hdr->stats.hits != made)) {
		fprintf(stderr, "counters_bench: one thread counted %llu lookups and %llu hits of %llu\n",
			(unsigned long long)counted,
			(unsigned long long)b->hdr->stats.hits,
			(unsigned long long)made);
		ok = false;
	}
	if (!count && s != WSTATS && counted) {
		fprintf(stderr, "counters_bench: uncounted lookups counted\n");
		ok = false;
	}
	return ok;
}

/* The first two CPUs the process may run on. */
static void pick_cpus(struct bench *b)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("counters_bench: sched_getaffinity");
		exit(2);
	}
	for (cpu = 0; cpu < CPU_SETSIZE && n < NR_BENCH_CPUS; cpu++)
		if (CPU_ISSET(cpu, &set))
			b->cpus[n++] = cpu;
	if (n < NR_BENCH_CPUS) {
		fprintf(stderr, "counters_bench: needs %d CPUs\n", NR_BENCH_CPUS);
		exit(2);
	}
}

static void setup(struct bench *b, struct jit_gen *g, u32 funcs)
{
	unsigned long *pcs;
	u32 i;

	jit_gen_funcs(g, funcs);
	jit_gen_registry(g);
	pcs = jit_gen_alloc(sizeof(*pcs) * b->nr_pcs);
	for (i = 0; i < b->nr_pcs; i++) {
		const struct jit_gen_func *f = &g->funcs[jit_gen_below(funcs)];

		pcs[i] = f->start + jit_gen_below(f->size);
	}
	b->pcs = pcs;
	b->hdr = g->jit;
	b->reg.view = g->view;
	/* A registry made with SFRAME_JIT_F_STATS: the counted case. */
	b->reg.view.stats = true;
	b->region = (struct sframe_region){
		.start = g->view.text_start,
		.end = g->view.text_end,
		.kind = SFRAME_REGION_JIT,
		.jit = &b->reg,
	};
}

static void print_usage(void)
{
	fprintf(stderr, "usage: counters_bench [-r RUNS] [-l LOOKUPS] [-f FRAMES] [-n FUNCS] [-s SEED]\n");
	exit(2);
}

static void print_header(int argc, char **argv, const struct bench *b,
			 const struct jit_gen *g,
			 struct cell_run *cells[NR_SCENARIOS][2], int runs)
{
	double toss[NR_SCENARIOS * 2 * runs], t;
	int i, n = 0, s, c, r;

	for (s = 0; s < NR_SCENARIOS; s++)
		for (c = 0; c < 2; c++)
			for (r = 0; r < runs; r++)
				toss[n++] = cells[s][c][r].toss_ns;
	t = median(toss, n);

	printf("# command:");
	for (i = 0; i < argc; i++)
		printf(" %s", argv[i]);
	printf("\n# registry: %u functions, %.2f rows each, %zu KiB; lookups at random PCs\n",
	       g->nr_funcs, (double)g->nr_rows / g->nr_funcs, g->jit_size >> 10);
	printf("# lookup threads on CPUs %d and %d, the writer of 2cpu+w* on CPU %d;\n",
	       b->cpus[0], b->cpus[1], b->cpus[1]);
	printf("# one cache line from one CPU to the other: %.1f ns (%.1f-%.1f),\n",
	       t, toss[0], toss[n - 1]);
	printf("#   median (min-max) of a measure before each cell\n");
	printf("# samples of %u lookups, each closed by mfence; lfence\n",
	       b->frames);
	printf("# ns per lookup (wall time of chunks of %d), median over %d runs of\n",
	       CHUNK, runs);
	printf("# each run's median chunk, %u lookups per thread and cell\n",
	       b->lookups);
	printf("# none: sframe_jit_find() alone; count: sframe_region_find(), with the counters\n");
	printf("# +ns, count/none: of the two cells of a run, median (min-max of the ratio)\n");
	printf("# +ns/smp: +ns times the lookups of a sample\n");
	printf("# xfer: +ns over the line's transfer time measured with the two cells\n");
	printf("# paired: chunks kept, those in which the thread contended with ran\n");
	printf("#   (for CPU %d the writer in 2cpu+w*, else the other lookup thread)\n",
	       b->cpus[0]);
	printf("# counted: increments of stats.lookups kept per lookup made\n");
	printf("# runs: runs in which every thread kept %d chunks or more\n",
	       MIN_KEPT);
	printf("%-12s %3s %7s %7s %6s  %-19s %8s %5s %6s %7s %4s\n",
	       "scenario", "cpu", "none", "count", "+ns", "count/none",
	       "+ns/smp", "xfer", "paired", "counted", "runs");
}

/*
 * The rows of one scenario, a row per lookup thread, over the runs in
 * which both cells count; false if there is none.
 */
static bool print_scenario(const struct bench *b, enum scenario s,
			   const struct cell_run *none,
			   const struct cell_run *count, int runs)
{
	double vn[runs], vc[runs], vd[runs], vq[runs], vp[runs], vk[runs];
	int nr = s == ONE ? 1 : NR_BENCH_CPUS, i, r, n = 0;
	double vx[runs], d, q;

	for (i = 0; i < nr; i++) {
		n = 0;
		for (r = 0; r < runs; r++) {
			if (!none[r].valid || !count[r].valid)
				continue;
			vn[n] = none[r].ns[i];
			vc[n] = count[r].ns[i];
			vd[n] = count[r].ns[i] - none[r].ns[i];
			vq[n] = count[r].ns[i] / none[r].ns[i];
			vp[n] = count[r].kept_share[i];
			vk[n] = count[r].counted;
			vx[n] = vd[n] * 2 / (none[r].toss_ns + count[r].toss_ns);
			n++;
		}
		if (!n) {
			printf("%-12s %3d  no run with %d chunks kept\n",
			       scenario_names[s], b->cpus[i], MIN_KEPT);
			continue;
		}
		d = median(vd, n);
		/* median() sorts: the range of the ratio after it. */
		q = median(vq, n);
		printf("%-12s %3d %7.1f %7.1f %6.1f  x%5.2f (%4.2f-%4.2f) %8.1f %5.2f",
		       scenario_names[s], b->cpus[i], median(vn, n),
		       median(vc, n), d, q, vq[0], vq[n - 1], d * b->frames,
		       median(vx, n));
		if (s == ONE)
			printf(" %6s", "-");
		else
			printf(" %5.0f%%", 100 * median(vp, n));
		if (i == 0 && s <= TWO)
			printf(" %6.1f%%", 100 * median(vk, n));
		else
			printf(" %7s", "-");
		printf(" %4d\n", n);
	}
	return n > 0;
}

int main(int argc, char **argv)
{
	struct bench b = { .lookups = 1U << 20, .frames = 8 };
	struct cell_run *cells[NR_SCENARIOS][2];
	int runs = 11, opt, r, s, c, bad = 0;
	struct jit_gen g = {};
	u32 funcs = 10000;
	u64 seed = 1;

	while ((opt = getopt(argc, argv, "r:l:f:n:s:")) != -1) {
		switch (opt) {
		case 'r':
			runs = atoi(optarg);
			break;
		case 'l':
			b.lookups = strtoul(optarg, NULL, 0);
			break;
		case 'f':
			b.frames = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			funcs = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			print_usage();
		}
	}
	if (optind != argc || runs < 1 || b.lookups < CHUNK * MIN_KEPT ||
	    !b.frames || !funcs || funcs > SFRAME_JIT_MAX_FDES)
		print_usage();
	pick_cpus(&b);
	jit_gen_seed(seed);
	b.nr_pcs = b.lookups;
	setup(&b, &g, funcs);
	for (s = 0; s < NR_SCENARIOS; s++)
		for (c = 0; c < 2; c++)
			cells[s][c] = jit_gen_alloc(sizeof(struct cell_run) * runs);

	for (r = 0; r < runs; r++)
		for (s = 0; s < NR_SCENARIOS; s++)
			for (c = 0; c < 2; c++)
				bad += !run_cell(&b, s, c, &cells[s][c][r]);
	print_header(argc, argv, &b, &g, cells, runs);
	for (s = 0; s < NR_SCENARIOS; s++)
		bad += !print_scenario(&b, s, cells[s][0], cells[s][1], runs);
	if (bad)
		fprintf(stderr, "counters_bench: %d cells went wrong\n", bad);
	return bad ? 1 : 0;
}
