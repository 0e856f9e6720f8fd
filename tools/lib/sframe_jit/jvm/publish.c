// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's registry: code the JVM announces goes in with the rows
 * decode.c finds, code it unloads goes out, and a record of every piece
 * of code keeps the two in step.
 *
 * JVMTI posts CompiledMethodUnload from the service thread, after the
 * fact; its specification warns that the code's memory may already hold
 * other code by then.  So a load never trusts that the unload of what it
 * overlaps came first: whatever live code the new code overlaps is
 * retired before the new rows go in (the JVM compiles only into memory
 * it freed), and the late unload of what was so retired is remembered
 * and ignored when it comes, so that it cannot retire the newcomer, even
 * when that is the same method compiled again at the same address.
 */
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sframe_jit_internal.h"
#include "agent.h"

/* One piece of code the registry holds rows for, or names. */
struct code {
	uint64_t addr;
	uint32_t size;
	const void *method;	/* jmethodID; NULL for a stub */
	char *name;
};

/* The unload of retired code still to come: ignore it once. */
struct stale {
	struct stale *next;
	uint64_t addr;
	const void *method;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Code is ordered by address; overlapping ranges compare equal. */
static int code_cmp(const void *a, const void *b)
{
	const struct code *x = a, *y = b;

	if (x->addr + x->size <= y->addr)
		return -1;
	if (y->addr + y->size <= x->addr)
		return 1;
	return 0;
}

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

static __printf(2, 3) void log_line(struct agent *ag, const char *fmt, ...);

static void log_line(struct agent *ag, const char *fmt, ...)
{
	va_list ap;

	if (!ag->log)
		return;
	fprintf(ag->log, "%" PRIu64 " ", now_ns());
	va_start(ap, fmt);
	vfprintf(ag->log, fmt, ap);
	va_end(ap);
	fputc('\n', ag->log);
	fflush(ag->log);
}

static int registry_open(struct agent *ag)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts,
		.fde_capacity = 1024,
		.flags = ag->no_kernel ? SFRAME_JIT_F_NO_KERNEL : 0);
	int err;

	if (ag->reg)
		return 0;
	if (ag->reg_err)
		return ag->reg_err;
	err = ag->vm_err;
	if (err) {
		log_line(ag, "error vmstructs %d", err);
		return ag->reg_err = err;
	}
	err = sframe_jit_create(ag->vm.code_low, ag->vm.code_high, &opts,
				&ag->reg);
	if (err == -ENOSYS && !ag->no_kernel) {
		/* No kernel support: keep the perf map and the log. */
		opts.flags |= SFRAME_JIT_F_NO_KERNEL;
		err = sframe_jit_create(ag->vm.code_low, ag->vm.code_high,
					&opts, &ag->reg);
	}
	log_line(ag, "registry %#" PRIx64 " %#" PRIx64 " %d%s",
		 ag->vm.code_low, ag->vm.code_high, err,
		 opts.flags & SFRAME_JIT_F_NO_KERNEL ? " no-kernel" : "");
	if (err)
		ag->reg_err = err;
	return err;
}

static void code_free(struct code *c)
{
	free(c->name);
	free(c);
}

/* Retire the rows of every live piece of code that [@addr, +@size) hits. */
static void retire_overlapping(struct agent *ag, uint64_t addr,
			       uint32_t size)
{
	struct code key = { .addr = addr, .size = size }, **hit;

	while ((hit = tfind(&key, &ag->live, code_cmp))) {
		struct code *old = *hit;
		struct stale *s;

		tdelete(old, &ag->live, code_cmp);
		sframe_jit_remove_range(ag->reg, old->addr,
					old->addr + old->size);
		ag->stats.evicted++;
		log_line(ag, "evict %#" PRIx64 " %u %s", old->addr, old->size,
			 old->name);
		s = old->method ? malloc(sizeof(*s)) : NULL;
		if (s) {
			s->addr = old->addr;
			s->method = old->method;
			s->next = ag->stale;
			ag->stale = s;
		}
		code_free(old);
	}
}

static bool stale_take(struct agent *ag, const void *method, uint64_t addr)
{
	struct stale **p;

	for (p = &ag->stale; *p; p = &(*p)->next) {
		struct stale *s = *p;

		if (s->addr == addr && s->method == method) {
			*p = s->next;
			free(s);
			return true;
		}
	}
	return false;
}

static int add_spans(struct agent *ag, uint64_t addr,
		     const struct sframe_jvm_frames *f)
{
	uint32_t i;
	int err;

	for (i = 0; i < f->nr_spans; i++) {
		const struct sframe_jvm_span *sp = &f->spans[i];

		err = sframe_jit_add(ag->reg, addr + sp->start, sp->size,
				     &f->rows[sp->first_row], sp->nr_rows, NULL);
		if (err) {
			/* All of the code or none of it. */
			sframe_jit_remove_range(ag->reg, addr,
						addr + sp->start);
			return err;
		}
	}
	return 0;
}

/*
 * The code's rows, checked against HotSpot's own figure where the
 * method's header was found: a body frame that disagrees with it means
 * the decoder misread the code, which had better go without rows.  The
 * header also names the OSR entry, which a jump enters.
 */
static int decode_method(struct agent *ag, const struct agent_event *ev,
			 struct sframe_jvm_frames *f)
{
	uint32_t osr = ev->have_blob && ev->blob.osr_entry >= 0 ?
		       (uint32_t)ev->blob.osr_entry : 0;
	int err;

	err = sframe_jvm_decode(ev->code, ev->size, ev->addr,
				SFRAME_JVM_NMETHOD, &osr, osr ? 1 : 0,
				ev->have_blob ? ev->blob.frame_size : 0, f);
	if (err || !ev->have_blob)
		return err;
	if (!f->stats.body_cfa) {
		/* Made not entrant: the rows follow HotSpot's frame. */
		ag->stats.not_entrant++;
		return 0;
	}
	ag->stats.checked++;
	if (ev->blob.frame_size != f->stats.body_cfa) {
		ag->stats.mismatches++;
		return -EPROTO;
	}
	return 0;
}

static void count(struct agent *ag, const struct sframe_jvm_frames *f,
		  bool nmethod, int err)
{
	if (nmethod) {
		ag->stats.methods++;
		if (err)
			ag->stats.method_errors++;
		else if (f->stats.unknown_bytes)
			ag->stats.methods_partial++;
		ag->stats.method_fp_bytes += err ? 0 : f->stats.unknown_bytes;
	} else {
		ag->stats.stubs++;
		ag->stats.stub_fp_bytes += f->stats.unknown_bytes;
	}
}

static int rows_of(struct agent *ag, const struct agent_event *ev,
		   struct sframe_jvm_frames *f)
{
	if (!ev->decode) {
		f->stats.unknown_bytes = ev->size;
		return 0;
	}
	if (ev->method)
		return decode_method(ag, ev, f);
	return sframe_jvm_decode(ev->code, ev->size, ev->addr,
				 SFRAME_JVM_STUB, NULL, 0, 0, f);
}

/**
 * agent_publish() - give a piece of code the JVM announced its rows
 * @ag: the agent.
 * @ev: the load of a compiled method (@ev->method set) or a stub, with
 *	a copy of its code where @ev->decode says to decode it.
 *
 * Called by the worker, under @ag->lock.
 */
void agent_publish(struct agent *ag, const struct agent_event *ev)
{
	struct sframe_jvm_frames f = { 0 };
	struct code *c;
	int err;

	if (!ev->size || registry_open(ag))
		return;
	if (ev->addr < ag->vm.code_low ||
	    ev->addr + ev->size > ag->vm.code_high) {
		log_line(ag, "outside %#" PRIx64 " %u %s", ev->addr, ev->size,
			 ev->name);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	*c = (struct code){ .addr = ev->addr, .size = ev->size,
			    .method = ev->method, .name = strdup(ev->name) };
	retire_overlapping(ag, ev->addr, ev->size);
	err = rows_of(ag, ev, &f);
	if (!err)
		err = add_spans(ag, ev->addr, &f);
	count(ag, &f, ev->method, err);
	if (c->name)
		sframe_jit__perf_map_write(&ag->perf_map, ev->addr, ev->size,
					   c->name);
	log_line(ag, "%s %#" PRIx64 " %u %s err=%d spans=%u rows=%u "
		 "fp_bytes=%u frame=%u vm_frame=%d",
		 ev->method ? "load" : "stub", ev->addr, ev->size, ev->name,
		 err, f.nr_spans, f.nr_rows, f.stats.unknown_bytes,
		 f.stats.body_cfa,
		 ev->have_blob ? (int)ev->blob.frame_size : -1);
	sframe_jvm_frames_free(&f);
	if (!tsearch(c, &ag->live, code_cmp))
		code_free(c);
}

/**
 * agent_unpublish() - retire a compiled method the JVM unloaded
 * @ag: the agent.
 * @method: its jmethodID.
 * @addr: where its code was.
 *
 * Called under @ag->lock.
 */
void agent_unpublish(struct agent *ag, const void *method, uint64_t addr)
{
	struct code key = { .addr = addr, .size = 1 }, **hit, *c;

	if (stale_take(ag, method, addr)) {
		log_line(ag, "unload-late %#" PRIx64, addr);
		return;
	}
	hit = tfind(&key, &ag->live, code_cmp);
	if (!hit || (*hit)->addr != addr || (*hit)->method != method) {
		log_line(ag, "unload-unknown %#" PRIx64, addr);
		return;
	}
	c = *hit;
	tdelete(c, &ag->live, code_cmp);
	if (ag->reg)
		sframe_jit_remove_range(ag->reg, c->addr, c->addr + c->size);
	ag->stats.unloaded++;
	log_line(ag, "unload %#" PRIx64 " %u %s", c->addr, c->size, c->name);
	code_free(c);
}

/**
 * agent_report() - write the agent's counts to its log
 * @ag: the agent.
 *
 * With them, the registry's: functions and rows live, and the bytes its
 * capacities take (the header page, 24 bytes a descriptor and 16 a row
 * in version 1 records), which the kernel pins.
 */
void agent_report(struct agent *ag)
{
	const struct agent_stats *s = &ag->stats;
	SFRAME_JIT_OPTS(sframe_jit_info, info);
	uint64_t bytes = 0;

	if (ag->reg && !sframe_jit_get_info(ag->reg, &info))
		bytes = 4096 + 24ULL * info.fde_capacity +
			16ULL * info.fre_capacity;
	log_line(ag, "stats methods=%" PRIu64 " partial=%" PRIu64
		 " errors=%" PRIu64 " method_fp_bytes=%" PRIu64
		 " checked=%" PRIu64 " mismatches=%" PRIu64
		 " not_entrant=%" PRIu64
		 " unloaded=%" PRIu64 " evicted=%" PRIu64 " stubs=%" PRIu64
		 " stub_fp_bytes=%" PRIu64 " dropped=%" PRIu64
		 " funcs=%u rows=%u reg_bytes=%" PRIu64,
		 s->methods, s->methods_partial, s->method_errors,
		 s->method_fp_bytes, s->checked, s->mismatches, s->not_entrant,
		 s->unloaded,
		 s->evicted, s->stubs, s->stub_fp_bytes, s->dropped,
		 info.nr_funcs,
		 info.nr_rows_live, bytes);
}
