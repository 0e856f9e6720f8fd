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
 * Whether sampling tests cannot run here; they skip.  Only the sysctl
 * is asked: without it 463 may be another system call, and a kernel
 * without the series must not see perf_event_attr bit 38 either.
 */
static inline bool sampling_skip(struct __test_metadata *_metadata)
{
	int ret;

	if (access(MAX_REGS_SYSCTL, F_OK))
		SKIP(return true, "no %s: not a kernel with sframe_register(2)",
		     MAX_REGS_SYSCTL);
	ret = sampler_probe();
	if (ret == -EACCES || ret == -EPERM)
		SKIP(return true, "perf_event_open: %s (perf_event_paranoid?)",
		     strerror(-ret));
	EXPECT_EQ(0, ret) TH_LOG("perf_event_open: %s", strerror(-ret));
	return ret != 0;
}

/* Register a JIT registry for [start, end) and take it, empty. */
static inline void registry_new(struct __test_metadata *_metadata,
				struct jit_registry *r, unsigned long start,
				unsigned long end, __u32 nfde, __u32 nfre)
{
	struct sframe_jit_header *hdr = NULL;

	ASSERT_EQ(0, jit_register(start, end, nfde, nfre, &hdr));
	ASSERT_EQ((__u32)SFRAME_JIT_MAGIC, hdr->magic);
	ASSERT_EQ(SFRAME_JIT_VERSION, hdr->version);
	ASSERT_EQ(0, jit_registry_attach(r, hdr));
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

#endif /* SAMPLE_HARNESS_H */
