/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the sampling selftests that need the harness: when to skip,
 * and a registry for a code range, asserted.
 */
#ifndef SAMPLE_HARNESS_H
#define SAMPLE_HARNESS_H

#include "sframe_test.h"
#include "sample_lib.h"

/*
 * Sampling tests go through this program's own C code, built with
 * --gsframe, and want exact chains from its first sample: the program
 * runs itself again before main() with its table built at exec
 * (reexec_with_eager_tables()).  glibc passes main()'s arguments to
 * constructors.
 */
__attribute__((constructor))
static void sample_harness_eager_tables(int argc, char **argv, char **envp)
{
	reexec_with_eager_tables(argv);
}

/*
 * Whether sampling tests cannot run here; they skip.  Only the sysctl
 * is asked: without it 472 to 474 may be other system calls, and a kernel
 * without the series must not see perf_event_attr bit 40 either.
 */
static inline bool sampling_skip(struct __test_metadata *_metadata)
{
	int ret;

	if (access(MAX_REGS_SYSCTL, F_OK))
		SKIP(return true, "no %s: not a kernel with sframe_jit_open(2)",
		     MAX_REGS_SYSCTL);
	ret = sampler_probe();
	if (ret == -EACCES || ret == -EPERM)
		SKIP(return true, "perf_event_open: %s (perf_event_paranoid?)",
		     strerror(-ret));
	EXPECT_EQ(0, ret) TH_LOG("perf_event_open: %s", strerror(-ret));
	return ret != 0;
}

/*
 * Register a JIT registry for [start, end) with @flags and take it,
 * empty; @nrule rules with SFRAME_JIT_F_COMPACT, whose functions then go
 * through sample_lib.c's compact records.
 */
static inline void registry_new_flags(struct __test_metadata *_metadata,
				      struct jit_registry *r,
				      unsigned long start, unsigned long end,
				      __u32 nfde, __u32 nfre, __u32 flags,
				      __u32 nrule)
{
	struct sframe_jit_header *hdr = NULL;
	int fd = -1;

	ASSERT_EQ(0, jit_op_flags(flags, -1, start, end, nfde, nfre, nrule,
				  &hdr, &fd));
	ASSERT_EQ((__u32)SFRAME_JIT_MAGIC, hdr->magic);
	ASSERT_EQ(SFRAME_JIT_VERSION, hdr->version);
	ASSERT_EQ(flags, hdr->flags);
	ASSERT_EQ(0, jit_registry_attach(r, hdr));
	r->fd = fd;
	ASSERT_EQ(!!(flags & SFRAME_JIT_F_COMPACT), r->compact);
}

/*
 * A registry whose lookups the unwinder counts (SFRAME_JIT_F_STATS):
 * the sampling tests read the counts to see why a frame went as it did.
 */
static inline void registry_new(struct __test_metadata *_metadata,
				struct jit_registry *r, unsigned long start,
				unsigned long end, __u32 nfde, __u32 nfre)
{
	registry_new_flags(_metadata, r, start, end, nfde, nfre,
			   SFRAME_JIT_F_STATS, 0);
}

/* The same, compact (SFRAME_JIT_F_COMPACT), with @nrule rules. */
static inline void registry_new_compact(struct __test_metadata *_metadata,
					struct jit_registry *r,
					unsigned long start, unsigned long end,
					__u32 nfde, __u32 nfre, __u32 nrule)
{
	registry_new_flags(_metadata, r, start, end, nfde, nfre,
			   SFRAME_JIT_F_COMPACT | SFRAME_JIT_F_STATS, nrule);
}

/* Open a sampler of this thread, with a ring of @pages data pages. */
static inline void sampler_start(struct __test_metadata *_metadata,
				 struct sampler *s,
				 struct perf_event_attr *attr,
				 unsigned int pages)
{
	int ret = sampler_open(s, attr, pages);

	ASSERT_EQ(0, ret) TH_LOG("perf_event_open or its ring: %s",
				 strerror(-ret));
}

/*
 * row_trace() a run of @fns, asserted, and expect that every instruction
 * of each ran: a row never stepped through is a row not checked.  @what
 * names the run in the log.
 */
static inline void rows_trace(struct __test_metadata *_metadata,
			      const char *what, const struct trace_fn *fns,
			      unsigned int nr, long (*run)(void *arg),
			      void *arg, long *result)
{
	unsigned int i;

	ASSERT_EQ(0, row_trace(fns, nr, run, arg, result))
		TH_LOG("%s: %s", what, row_trace_error());
	for (i = 0; i < nr; i++) {
		int unseen = row_trace_unseen(i);

		EXPECT_EQ(-1, unseen) TH_LOG("%s: %s+%d never ran", what,
					     fns[i].fn->name, unseen);
	}
}

/*
 * Log a sampled user chain beside the one expected, frame by frame,
 * each named in a column @width wide (@names may be NULL): what a
 * failed comparison was.
 */
static inline void chain_log(struct __test_metadata *_metadata,
			     const char * const *names, int width,
			     const __u64 *want, unsigned int n,
			     const __u64 *got, unsigned int got_nr)
{
	unsigned int f;

	for (f = 0; f < n; f++) {
		char s[24] = "(none)";

		if (f < got_nr)
			snprintf(s, sizeof(s), "%#llx",
				 (unsigned long long)got[f]);
		TH_LOG("  %u %-*s want %#llx got %s", f, width,
		       names ? names[f] : "",
		       (unsigned long long)want[f], s);
	}
}

/*
 * Log the kinds of chain in @ct, of @n frames: how many of the @what
 * samples were exact, how many first differed at each frame, with the
 * first of them.
 */
static inline void chain_tally_log(struct __test_metadata *_metadata,
				   const struct chain_tally *ct,
				   unsigned int n, const char *what,
				   const char * const *names, int width)
{
	unsigned int i;

	for (i = 0; i <= n; i++) {
		if (!ct->first_bad[i])
			continue;
		if (i == n) {
			TH_LOG("%lu %s exact", ct->first_bad[i], what);
			continue;
		}
		TH_LOG("%lu %s first differ at frame %u (%s), e.g.:",
		       ct->first_bad[i], what, i, names[i]);
		chain_log(_metadata, names, width, ct->want[i], n, ct->got[i],
			  ct->got_nr[i]);
	}
}

/*
 * A leaf session: runs of a call chain whose leaf spins between two
 * labels, sampled until enough samples landed in that loop, each
 * sample's chain compared with the one the run stored.
 */
struct leaf_session {
	const void *loop_start, *loop_end;	/* the leaf's spin loop */
	unsigned long *spin;		/* its loop count, tuned run by run */
	unsigned int nr_frames;		/* frames compared, the IP first */
	unsigned long min_samples;	/* in the loop, to end the session */
	double seconds;			/* at most, whatever was sampled */
	unsigned int ring_pages;
	/*
	 * One run: asserts what the run's functions stored and gives the
	 * chain expected after the IP in want[1] to want[nr_frames - 1].
	 */
	void (*run)(struct __test_metadata *_metadata, void *arg, __u64 *want);
	void *arg;
};

struct leaf_tally {
	unsigned long runs;
	struct ring_counts ring;
	unsigned long leaf, not_user;
	struct chain_tally chains;	/* of the samples in the loop */
};

struct leaf_judge {
	const struct leaf_session *ls;
	struct leaf_tally *t;
	__u64 want[CHAIN_MAX];
};

static inline void leaf_judge_chain(void *arg, __u64 ip, const __u64 *chain,
				    __u64 nr)
{
	struct leaf_judge *jd = arg;

	if (ip < (unsigned long)jd->ls->loop_start ||
	    ip >= (unsigned long)jd->ls->loop_end)
		return;
	jd->t->leaf++;
	jd->want[0] = ip;
	chain_tally_add(&jd->t->chains, jd->ls->nr_frames, chain, nr,
			jd->want);
}

/* Sample @ls's runs with @attr, a sampler of this thread, into @t. */
static inline void leaf_sample(struct __test_metadata *_metadata,
			       const struct leaf_session *ls,
			       struct perf_event_attr *attr,
			       struct leaf_tally *t)
{
	struct timespec start;
	struct sampler smp;

	memset(t, 0, sizeof(*t));
	ASSERT_GE((unsigned int)CHAIN_MAX, ls->nr_frames);
	sampler_start(_metadata, &smp, attr, ls->ring_pages);
	ASSERT_EQ(0, sampler_enable(&smp, true));
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (t->leaf < ls->min_samples &&
	       elapsed(CLOCK_MONOTONIC, &start) < ls->seconds) {
		struct leaf_judge jd = { .ls = ls, .t = t };
		struct timespec run_start;
		double took;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &run_start);
		ls->run(_metadata, ls->arg, jd.want);
		took = elapsed(CLOCK_THREAD_CPUTIME_ID, &run_start);
		t->runs++;
		sampler_drain_chains(&smp, leaf_judge_chain, &jd,
				     &t->not_user, &t->ring);
		spin_tune(ls->spin, took);
	}
	ASSERT_EQ(0, sampler_enable(&smp, false));
	sampler_close(&smp);
}

/*
 * What a leaf session sampled, chains of @n frames, each frame named in
 * @names.
 */
static inline void leaf_tally_log(struct __test_metadata *_metadata,
				  const struct leaf_tally *t, unsigned int n,
				  const char * const *names, int width)
{
	TH_LOG("%lu runs, %lu samples, %lu in the leaf loop, %lu of them exact",
	       t->runs, t->ring.samples, t->leaf, t->chains.first_bad[n]);
	TH_LOG("%lu without a user context, %lu bad records, %lu lost",
	       t->not_user, t->ring.bad_records, t->ring.lost);
	chain_tally_log(_metadata, &t->chains, n, "leaf samples", names,
			width);
}

#endif /* SAMPLE_HARNESS_H */
