#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-run's command line and environment, on the host: its options,
# "--", the yes/no knobs read as words (a value that is neither refused
# before the program runs), an ASan program and unshare -Ur run under
# it, a plugin found through its loader's run path, and the warning
# where the kernel cannot take tables.  The registration itself
# is the VM layers' (sframe_run_vm.sh and those after it); here the
# preload works into private memory (SFRAME_RUN_NO_KERNEL=1).
#
#   tests/sframe_run_front.sh OUTPUT_DIR
#
# Ends with "N passed, N failed".
set -uo pipefail

mkdir -p "$1" && out=$(realpath "$1") || exit 1
run=$out/sframe-run
preload=$out/libsframe_run.so
dir=$(mktemp -d "$out/front.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/tap.sh"

got=$("$run" --help) && [[ "$got" == "usage: sframe-run [--] CMD"* ]]
result $? "--help prints the usage on stdout and exits 0"
got=$("$run" --version) && [[ "$got" =~ ^sframe-run\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
result $? "--version prints the version"
"$run" -x true > /dev/null 2> "$dir/err"
[ $? = 2 ] && grep -q "unknown option -x" "$dir/err"
result $? "an unknown option is a usage error"

# "--" ends the options: a command after it runs with its arguments
# and status, the preload in front of LD_PRELOAD.
got=$(SFRAME_RUN_NO_KERNEL=1 LD_PRELOAD= "$run" -- sh -c \
	'echo "$LD_PRELOAD:$1"; exit 3' sh 'a b')
[ $? = 3 ] && [ "$got" = "$preload:a b" ]
result $? "-- CMD runs CMD with its arguments, status and the preload"

# A knob's value that is neither a yes nor a no: refused, and the
# program does not run.
SFRAME_RUN_SYNC=maybe "$run" touch "$dir/ran" 2> "$dir/err"
[ $? = 2 ] && [ ! -e "$dir/ran" ] &&
	grep -q "SFRAME_RUN_SYNC=maybe: not 1, yes" "$dir/err"
result $? "SFRAME_RUN_SYNC=maybe is refused before the program runs"

# SFRAME_RUN_SYNC=no is a no: the start-up work goes to the thread,
# which says how long it waits; yes and 1 do it before main().
sync_of() {
	SFRAME_RUN_NO_KERNEL=1 SFRAME_RUN_VERBOSE=1 SFRAME_RUN_SYNC=$1 \
		SFRAME_RUN_DELAY_MS=600000 "$run" true 2>&1 |
		grep -c "start-up thread waits"
}
[ "$(sync_of no)" = 1 ] && [ "$(sync_of NO)" = 1 ] &&
	[ "$(sync_of 0)" = 1 ] && [ "$(sync_of '')" = 1 ]
result $? "SFRAME_RUN_SYNC=no, NO, 0 and empty leave the start-up to the thread"
[ "$(sync_of yes)" = 0 ] && [ "$(sync_of 1)" = 0 ] && [ "$(sync_of on)" = 0 ]
result $? "SFRAME_RUN_SYNC=yes, 1 and on do the start-up before main()"

# ASan aborts a program whose runtime is not the first object loaded,
# unless its own option says not to check.
if gcc -fsanitize=address -o "$dir/asan" -x c - <<'EOF' 2> "$dir/cc.log"
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	volatile char *p = malloc(8);

	p[0] = 7;
	printf("ran %d\n", p[0]);
	free((void *)p);
	return 0;
}
EOF
then
	got=$(SFRAME_RUN_NO_KERNEL=1 SFRAME_RUN_SYNC=1 "$run" "$dir/asan" 2>&1)
	[ $? = 0 ] && [ "$got" = "ran 7" ]
	result $? "an ASan program runs under sframe-run, its tables converted"
	got=$(ASAN_OPTIONS=verify_asan_link_order=1 SFRAME_RUN_NO_KERNEL=1 \
		"$run" "$dir/asan" 2>&1)
	[ $? != 0 ] && [[ "$got" == *"does not come first"* ]]
	result $? "the user's own verify_asan_link_order is left as it is"
else
	cat "$dir/cc.log"
	result 1 "build an ASan program (gcc -fsanitize=address)"
fi

# unshare -Ur wants a process of one thread: the start-up thread, while
# it waits and while it converts, makes way (where this host lets a
# process make a user namespace at all).
if unshare -Ur true 2> /dev/null; then
	ok=0
	for delay in 600000 0 600000 0; do
		got=$(SFRAME_RUN_NO_KERNEL=1 SFRAME_RUN_DELAY_MS=$delay \
			"$run" unshare -Ur sh -c 'id -u' 2> "$dir/err")
		[ $? = 0 ] && [ "$got" = 0 ] || { ok=1; cat "$dir/err"; }
	done
	result $ok "unshare -Ur runs under sframe-run, its thread waiting or converting"
else
	echo "# this host makes no user namespaces: unshare -Ur is not run"
fi

# A library that dlopen()s a plugin by name through its own run path
# finds it under sframe-run as without it, in the loader's order:
# LD_LIBRARY_PATH before DT_RUNPATH, DT_RPATH before LD_LIBRARY_PATH.
# What the loader does alone is the expectation; dlerror() after a
# dlopen() that succeeded is empty in both.
runpath_build() {
	mkdir -p "$dir/rp/plugins" "$dir/rp/llp" "$dir/rp/lib" &&
	echo 'int plug(void) { return 42; }' |
		gcc -shared -fPIC -x c - -o "$dir/rp/plugins/libplug.so" &&
	echo 'int plug(void) { return 7; }' |
		gcc -shared -fPIC -x c - -o "$dir/rp/llp/libplug.so" &&
	cat > "$dir/rp/loader.c" <<'EOF' &&
#include <dlfcn.h>
#include <stdio.h>

int load(void)
{
	void *h = dlopen("libplug.so", RTLD_NOW);
	int (*plug)(void);

	if (!h) {
		printf("%s\n", dlerror());
		return -1;
	}
	plug = (int (*)(void))dlsym(h, "plug");
	return plug();
}
EOF
	gcc -shared -fPIC "$dir/rp/loader.c" -o "$dir/rp/lib/librunpath.so" \
		-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../plugins' &&
	gcc -shared -fPIC "$dir/rp/loader.c" -o "$dir/rp/lib/librpath.so" \
		-Wl,--disable-new-dtags,-rpath,'$ORIGIN/../plugins' &&
	cat > "$dir/rp/main.c" <<'EOF' &&
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	int (*load)(void);
	const char *err;

	/* The loader keeps LD_LIBRARY_PATH as it was at the start. */
	if (argc == 3)
		setenv("LD_LIBRARY_PATH", argv[2], 1);
	if (!h || argc > 3)
		return 1;
	load = (int (*)(void))dlsym(h, "load");
	printf("%d\n", load());
	err = dlerror();
	printf("dlerror: %s\n", err ? err : "none");
	return 0;
}
EOF
	gcc "$dir/rp/main.c" -o "$dir/rp/main" -ldl
}
if runpath_build 2> "$dir/cc.log"; then
	ok=0
	for lib in runpath rpath; do
		for llp in "" "$dir/rp/llp"; do
			alone=$(LD_LIBRARY_PATH=$llp "$dir/rp/main" \
				"$dir/rp/lib/lib$lib.so" 2>&1)
			under=$(LD_LIBRARY_PATH=$llp SFRAME_RUN_NO_KERNEL=1 \
				SFRAME_RUN_SYNC=1 "$run" "$dir/rp/main" \
				"$dir/rp/lib/lib$lib.so" 2>&1)
			echo "# lib$lib.so, LD_LIBRARY_PATH '$llp':" \
				"alone" $alone "/ under sframe-run" $under
			[ "$alone" = "$under" ] || ok=1
			want=42
			[ -n "$llp" ] && [ $lib = runpath ] && want=7
			[ "$alone" = "$want"$'\n'"dlerror: none" ] || ok=1
		done
	done
	# LD_LIBRARY_PATH set by the program after its start: not the
	# loader's.
	alone=$("$dir/rp/main" "$dir/rp/lib/librunpath.so" "$dir/rp/llp" 2>&1)
	under=$(SFRAME_RUN_NO_KERNEL=1 SFRAME_RUN_SYNC=1 "$run" "$dir/rp/main" \
		"$dir/rp/lib/librunpath.so" "$dir/rp/llp" 2>&1)
	echo "# librunpath.so, LD_LIBRARY_PATH set at run time:" \
		"alone" $alone "/ under sframe-run" $under
	[ "$alone" = "$under" ] && [ "$alone" = 42$'\n'"dlerror: none" ] || ok=1
	result $ok "a plugin dlopen()ed through its caller's DT_RUNPATH or DT_RPATH"
else
	cat "$dir/cc.log"
	result 1 "build the run path test's programs"
fi

# Without the kernel's calls: a warning, and the program runs with
# nothing loaded into it.  (A host with the calls has the VM layers'
# tests of the registration instead.)
if [ ! -e /proc/sys/kernel/sframe_max_registrations ]; then
	got=$(LD_PRELOAD= "$run" sh -c 'echo "[$LD_PRELOAD]"' 2> "$dir/err")
	[ $? = 0 ] && [ "$got" = "[]" ] &&
		grep -q "warning: this kernel has no sframe_jit_open(2)" "$dir/err"
	result $? "without the kernel's calls: a warning, and nothing preloaded"
else
	echo "# this kernel has the calls: the warning without them is not run"
fi

summary
