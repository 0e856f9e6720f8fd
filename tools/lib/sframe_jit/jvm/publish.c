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

static void log_line(struct agent *ag, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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
		.fde_capacity = 4096,
		.flags = ag->no_kernel ? SFRAME_JIT_F_NO_KERNEL : 0);
	int err;

	if (ag->reg)
		return 0;
	if (ag->reg_err)
		return ag->reg_err;
	err = sframe_jvm_vm_read(&ag->vm);
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
static void evict(struct agent *ag, uint64_t addr, uint32_t size)
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
 * method's header is found: a body frame that disagrees with it means
 * the decoder misread the code, which had better go without rows.  The
 * header also names the OSR entry, which a jump enters.
 */
static int decode_method(struct agent *ag, uint64_t addr, uint32_t size,
			 struct sframe_jvm_frames *f, int *vm_frame)
{
	struct sframe_jvm_blob blob;
	uint32_t osr;
	bool have = !sframe_jvm_vm_blob(&ag->vm, addr, size, &blob);
	int err;

	*vm_frame = have ? (int)blob.frame_size : -1;
	osr = have && blob.osr_entry >= 0 ? (uint32_t)blob.osr_entry : 0;
	err = sframe_jvm_decode((const void *)addr, size, addr,
				SFRAME_JVM_NMETHOD, &osr, osr ? 1 : 0,
				have ? blob.frame_size : 0, f);
	if (err || !have)
		return err;
	ag->stats.checked++;
	if (blob.frame_size != f->stats.body_cfa) {
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

/**
 * agent_publish() - give a piece of code the JVM announced its rows
 * @ag: the agent.
 * @method: the compiled method's jmethodID, or NULL for a stub.
 * @addr: the code's address.
 * @size: its size.
 * @kind: how the code is entered; SFRAME_JVM_STUB with NULL rows left
 *	to frame pointers (stubs not entered by a call).
 * @decode: decode the code for rows; false leaves it to frame pointers.
 * @name: its name, for the perf map and the log.
 *
 * Called under @ag->lock.
 */
void agent_publish(struct agent *ag, const void *method, uint64_t addr,
		   uint32_t size, enum sframe_jvm_code_kind kind, bool decode,
		   const char *name)
{
	struct sframe_jvm_frames f = { 0 };
	struct code *c;
	int err, vm_frame = -1;

	if (!size || registry_open(ag))
		return;
	if (addr < ag->vm.code_low || addr + size > ag->vm.code_high) {
		log_line(ag, "outside %#" PRIx64 " %u %s", addr, size, name);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	*c = (struct code){ .addr = addr, .size = size, .method = method,
			    .name = strdup(name) };
	evict(ag, addr, size);
	err = 0;
	if (!decode)
		f.stats.unknown_bytes = size;
	else if (kind == SFRAME_JVM_NMETHOD)
		err = decode_method(ag, addr, size, &f, &vm_frame);
	else
		err = sframe_jvm_decode((const void *)addr, size, addr, kind,
					NULL, 0, 0, &f);
	if (!err)
		err = add_spans(ag, addr, &f);
	count(ag, &f, method, err);
	if (c->name)
		sframe_jit__perf_map_write(&ag->perf_map, addr, size, c->name);
	log_line(ag, "%s %#" PRIx64 " %u %s err=%d spans=%u rows=%u fp_bytes=%u frame=%u vm_frame=%d",
		 method ? "load" : "stub", addr, size, name, err, f.nr_spans,
		 f.nr_rows, f.stats.unknown_bytes, f.stats.body_cfa,
		 vm_frame);
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
 */
void agent_report(struct agent *ag)
{
	const struct agent_stats *s = &ag->stats;

	log_line(ag, "stats methods=%" PRIu64 " partial=%" PRIu64
		 " errors=%" PRIu64 " method_fp_bytes=%" PRIu64
		 " checked=%" PRIu64 " mismatches=%" PRIu64
		 " unloaded=%" PRIu64 " evicted=%" PRIu64 " stubs=%" PRIu64
		 " stub_fp_bytes=%" PRIu64,
		 s->methods, s->methods_partial, s->method_errors,
		 s->method_fp_bytes, s->checked, s->mismatches, s->unloaded,
		 s->evicted, s->stubs, s->stub_fp_bytes);
}
