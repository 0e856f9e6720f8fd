/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's state: one per JVM, that is one per process. */
#ifndef __SFRAME_JVM_AGENT_H
#define __SFRAME_JVM_AGENT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "sframe_jvm.h"

struct agent_stats {
	uint64_t methods;		/* compiled methods announced */
	uint64_t methods_partial;	/* ... with code left to fp */
	uint64_t method_errors;		/* ... with no rows at all */
	uint64_t method_fp_bytes;	/* their bytes left to fp */
	uint64_t checked;		/* frames checked against VMStructs */
	uint64_t mismatches;		/* ... that disagreed */
	uint64_t not_entrant;		/* entry patched before the agent saw it */
	uint64_t unloaded;
	uint64_t evicted;		/* retired by code loaded over them */
	uint64_t stubs;
	uint64_t stub_fp_bytes;		/* stub bytes left to fp */
	uint64_t dropped;		/* not decoded: the queue was full */
};

/*
 * An event the JVM posted, queued for the worker with what must be read
 * while it is posted: the method's name, HotSpot's header, the code.
 */
struct agent_event {
	struct agent_event *next;
	bool unload;
	bool decode;			/* @code holds a copy to decode */
	bool have_blob;
	const void *method;		/* jmethodID; NULL for a stub */
	uint64_t addr;
	uint32_t size;
	struct sframe_jvm_blob blob;
	char *name;
	uint8_t code[];
};

struct agent {
	pthread_mutex_t lock;		/* the registry, the tree, the log */
	struct sframe_jit *reg;
	int reg_err;			/* why there is no registry */
	struct sframe_jvm_vm vm;
	int vm_err;			/* why VMStructs could not be read */
	/* The queue to the worker, under @qlock. */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct agent_event *qhead, **qtail;
	size_t qbytes;
	bool qstop;
	pthread_t worker;
	void *live;			/* tsearch tree of struct code */
	struct stale *stale;
	struct sframe_jit_perf_map perf_map;
	FILE *log;
	bool no_kernel;
	struct agent_stats stats;
};

void agent_publish(struct agent *ag, const struct agent_event *ev);
void agent_unpublish(struct agent *ag, const void *method, uint64_t addr);
void agent_report(struct agent *ag);

#endif /* __SFRAME_JVM_AGENT_H */
