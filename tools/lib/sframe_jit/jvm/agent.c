// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsframe_jvm's JVMTI side: the events that say where HotSpot's code
 * is, and the attach path that asks for the ones already past.
 *
 *	java -agentpath:/usr/local/lib/libsframe_jvm.so ...
 *	jcmd PID JVMTI.agent_load /usr/local/lib/libsframe_jvm.so
 *
 * Options, comma-separated: log=FILE or log:FILE (one line per piece of
 * code, see Documentation/sframe_jit.rst; jcmd reads "name=value" as an
 * argument of its own), nokernel (build the registry in private memory
 * only).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>

#include "sframe_jit_internal.h"
#include "agent.h"

static struct agent agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.qlock = PTHREAD_MUTEX_INITIALIZER,
	.qcond = PTHREAD_COND_INITIALIZER,
	.qtail = &agent.qhead,
};

static bool started;
static pthread_once_t vm_once = PTHREAD_ONCE_INIT;

/*
 * Code copies queued and not yet decoded, at most: past it, code is
 * published without rows (counted as dropped) rather than held.
 */
#define QUEUE_MAX_BYTES	(64 << 20)

/*
 * Stubs that are not entered by a call, so that the frame at their first
 * instruction is not the one decode.c starts from: the template
 * interpreter and the adapters (jumped to, their frames built on
 * %rbp, which the fallback follows), and the blobs that the VM enters by
 * a return or a jump with a frame of its own making.
 */
static const char *const fp_only_stubs[] = {
	"Interpreter",
	"I2C/C2I adapters*",
	"*Blob",
	"forward exception",
	"catch_exception",
	"*throw_exception",
};

static bool stub_is_called(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fp_only_stubs); i++)
		if (!fnmatch(fp_only_stubs[i], name, 0))
			return false;
	return true;
}

/* "Lpkg/Cls;" and "m" as "pkg.Cls.m", the name perf report shows. */
static char *method_name(jvmtiEnv *jvmti, jmethodID method)
{
	char *mname = NULL, *csig = NULL, *out = NULL;
	jclass klass;
	size_t n, i;

	if ((*jvmti)->GetMethodName(jvmti, method, &mname, NULL, NULL) ||
	    (*jvmti)->GetMethodDeclaringClass(jvmti, method, &klass) ||
	    (*jvmti)->GetClassSignature(jvmti, klass, &csig, NULL))
		goto out;
	n = strlen(csig);
	if (n >= 2 && csig[0] == 'L' && csig[n - 1] == ';') {
		memmove(csig, csig + 1, n - 2);
		csig[n - 2] = '\0';
	}
	for (i = 0; csig[i]; i++)
		if (csig[i] == '/')
			csig[i] = '.';
	if (asprintf(&out, "%s.%s", csig, mname) < 0)
		out = NULL;
out:
	if (mname)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)mname);
	if (csig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	return out;
}

static void vm_read(void)
{
	agent.vm_err = sframe_jvm_vm_read(&agent.vm);
}

static void enqueue(struct agent_event *ev)
{
	pthread_mutex_lock(&agent.qlock);
	*agent.qtail = ev;
	agent.qtail = &ev->next;
	agent.qbytes += ev->decode ? ev->size : 0;
	pthread_cond_signal(&agent.qcond);
	pthread_mutex_unlock(&agent.qlock);
}

/*
 * What JVMTI says of a piece of code, and a copy of the code while it is
 * surely what was announced.  The rest, decoding and publishing, is the
 * worker's: JVMTI posts these events from its service thread, which
 * would otherwise compete with the compiler threads for the time it
 * takes.
 */
static struct agent_event *event_new(const void *method, const void *addr,
				     jint size, bool decode, const char *name)
{
	struct agent_event *ev;
	bool room;

	pthread_mutex_lock(&agent.qlock);
	room = agent.qbytes + (size_t)size <= QUEUE_MAX_BYTES;
	pthread_mutex_unlock(&agent.qlock);
	if (size < 0)
		return NULL;
	if (decode && !room) {
		__atomic_fetch_add(&agent.stats.dropped, 1, __ATOMIC_RELAXED);
		decode = false;
	}
	ev = calloc(1, sizeof(*ev) + (decode ? (size_t)size : 0));
	if (!ev)
		return NULL;
	ev->name = strdup(name);
	if (!ev->name) {
		free(ev);
		return NULL;
	}
	ev->method = method;
	ev->addr = (uint64_t)addr;
	ev->size = (uint32_t)size;
	ev->decode = decode;
	if (decode)
		memcpy(ev->code, addr, (size_t)size);
	pthread_once(&vm_once, vm_read);
	if (method && !agent.vm_err)
		ev->have_blob = !sframe_jvm_vm_blob(&agent.vm, ev->addr,
						    ev->size, &ev->blob);
	return ev;
}

static void JNICALL on_method_load(jvmtiEnv *jvmti, jmethodID method,
				   jint size, const void *addr,
				   jint map_len, const jvmtiAddrLocationMap *map,
				   const void *info)
{
	char *name = method_name(jvmti, method);
	struct agent_event *ev;

	(void)map_len;
	(void)map;
	(void)info;
	ev = event_new(method, addr, size, true,
		       name ? name : "java.unknown");
	free(name);
	if (ev)
		enqueue(ev);
}

static void JNICALL on_method_unload(jvmtiEnv *jvmti, jmethodID method,
				     const void *addr)
{
	struct agent_event *ev = calloc(1, sizeof(*ev));

	(void)jvmti;
	if (!ev)
		return;
	ev->unload = true;
	ev->method = method;
	ev->addr = (uint64_t)addr;
	enqueue(ev);
}

static void JNICALL on_code_generated(jvmtiEnv *jvmti, const char *name,
				      const void *addr, jint size)
{
	struct agent_event *ev;

	(void)jvmti;
	ev = event_new(NULL, addr, size, stub_is_called(name), name);
	if (ev)
		enqueue(ev);
}

static void handle(struct agent_event *ev)
{
	pthread_mutex_lock(&agent.lock);
	if (ev->unload)
		agent_unpublish(&agent, ev->method, ev->addr);
	else
		agent_publish(&agent, ev);
	pthread_mutex_unlock(&agent.lock);
}

/*
 * The worker: takes the events in the order they were posted, so that
 * an unload never overtakes its load.  It runs at the JVM's priority: at
 * a lower one a JVM whose threads keep every CPU busy, the very one
 * worth profiling, would never get its code published.  It never calls
 * into the JVM.
 */
static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&agent.qlock);
	for (;;) {
		struct agent_event *ev = agent.qhead;

		if (!ev && agent.qstop)
			break;
		if (!ev) {
			pthread_cond_wait(&agent.qcond, &agent.qlock);
			continue;
		}
		agent.qhead = ev->next;
		if (!agent.qhead)
			agent.qtail = &agent.qhead;
		agent.qbytes -= ev->decode ? ev->size : 0;
		pthread_mutex_unlock(&agent.qlock);
		handle(ev);
		free(ev->name);
		free(ev);
		pthread_mutex_lock(&agent.qlock);
	}
	pthread_mutex_unlock(&agent.qlock);
	return NULL;
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	(void)jni;
	/* What was posted is published, then counted. */
	pthread_mutex_lock(&agent.qlock);
	agent.qstop = true;
	pthread_cond_signal(&agent.qcond);
	pthread_mutex_unlock(&agent.qlock);
	pthread_join(agent.worker, NULL);
	pthread_mutex_lock(&agent.lock);
	agent_report(&agent);
	pthread_mutex_unlock(&agent.lock);
}

static int parse_options(struct agent *ag, const char *options)
{
	char *copy, *tok, *save = NULL;
	int err = 0;

	if (!options || !*options)
		return 0;
	copy = strdup(options);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "log=", 4) || !strncmp(tok, "log:", 4)) {
			ag->log = fopen(tok + 4, "ae");
			if (!ag->log)
				err = -errno;
		} else if (!strcmp(tok, "nokernel")) {
			ag->no_kernel = true;
		} else {
			err = -EINVAL;
		}
		if (err) {
			fprintf(stderr, "libsframe_jvm: option '%s': %s\n",
				tok, strerror(-err));
			break;
		}
	}
	free(copy);
	return err;
}

static int enable_events(jvmtiEnv *jvmti)
{
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
		JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
		JVMTI_EVENT_VM_DEATH,
	};
	jvmtiCapabilities caps = { .can_generate_compiled_method_load_events = 1 };
	jvmtiEventCallbacks cb = {
		.CompiledMethodLoad = on_method_load,
		.CompiledMethodUnload = on_method_unload,
		.DynamicCodeGenerated = on_code_generated,
		.VMDeath = on_vm_death,
	};
	size_t i;

	if ((*jvmti)->AddCapabilities(jvmti, &caps) ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)))
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(events); i++)
		if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
						       events[i], NULL))
			return -EINVAL;
	return 0;
}

static jint agent_start(JavaVM *vm, char *options, jvmtiEnv **jvmtip)
{
	jvmtiEnv *jvmti;

	if (started) {
		fprintf(stderr, "libsframe_jvm: already loaded\n");
		return JNI_OK;
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		fprintf(stderr, "libsframe_jvm: no JVMTI 1.2\n");
		return JNI_ERR;
	}
	if (parse_options(&agent, options) ||
	    sframe_jit__perf_map_open(&agent.perf_map, NULL))
		return JNI_ERR;
	if (pthread_create(&agent.worker, NULL, worker, NULL)) {
		fprintf(stderr, "libsframe_jvm: cannot create its worker\n");
		return JNI_ERR;
	}
	if (enable_events(jvmti)) {
		fprintf(stderr, "libsframe_jvm: cannot enable JVMTI events\n");
		return JNI_ERR;
	}
	started = true;
	*jvmtip = jvmti;
	return JNI_OK;
}

/**
 * Agent_OnLoad() - the agent given with -agentpath: at start
 * @vm: the JVM.
 * @options: the text after '=', or NULL.
 * @reserved: unused.
 *
 * Return: JNI_OK, or JNI_ERR (the JVM then does not start).
 */
JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEnv *jvmti;

	(void)reserved;
	return agent_start(vm, options, &jvmti);
}

/**
 * Agent_OnAttach() - the agent loaded into a running JVM
 * @vm: the JVM.
 * @options: the text after the path given to JVMTI.agent_load, or NULL.
 * @reserved: unused.
 *
 * Asks the JVM to post the events of the code it already holds:
 * compiled methods and stubs get their rows as if the agent had been
 * there from the start.
 *
 * Return: JNI_OK, or JNI_ERR.
 */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options,
				      void *reserved)
{
	jvmtiEnv *jvmti = NULL;
	jint ret;

	(void)reserved;
	if (started)
		return JNI_OK;
	ret = agent_start(vm, options, &jvmti);
	if (ret != JNI_OK || !jvmti)
		return ret;
	if ((*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED) ||
	    (*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD))
		return JNI_ERR;
	return JNI_OK;
}
