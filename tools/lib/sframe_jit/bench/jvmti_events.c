// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A JVMTI agent that asks for the events libsframe_jvm asks for and does
 * nothing with them: mk/bench/80-java runs it beside the real agent, to
 * tell what HotSpot spends posting the events (the address-location map
 * and inlining records it builds for each compiled method) from what
 * the agent spends on them.
 */
#include <jvmti.h>

static void JNICALL on_load(jvmtiEnv *jvmti, jmethodID method, jint size,
			    const void *addr, jint map_len,
			    const jvmtiAddrLocationMap *map, const void *info)
{
	(void)jvmti, (void)method, (void)size, (void)addr;
	(void)map_len, (void)map, (void)info;
}

static void JNICALL on_unload(jvmtiEnv *jvmti, jmethodID method,
			      const void *addr)
{
	(void)jvmti, (void)method, (void)addr;
}

static void JNICALL on_code(jvmtiEnv *jvmti, const char *name,
			    const void *addr, jint size)
{
	(void)jvmti, (void)name, (void)addr, (void)size;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiCapabilities caps = { .can_generate_compiled_method_load_events = 1 };
	jvmtiEventCallbacks cb = {
		.CompiledMethodLoad = on_load,
		.CompiledMethodUnload = on_unload,
		.DynamicCodeGenerated = on_code,
	};
	jvmtiEnv *jvmti;

	(void)options, (void)reserved;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK ||
	    (*jvmti)->AddCapabilities(jvmti, &caps) ||
	    (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
			JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL) ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
			JVMTI_EVENT_COMPILED_METHOD_UNLOAD, NULL) ||
	    (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
			JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL))
		return JNI_ERR;
	return JNI_OK;
}
