#!/bin/bash
# perf record --call-graph=sframe through JIT code
# SPDX-License-Identifier: GPL-2.0
#
# A small JIT emits three x86-64 functions without frame pointers (stack
# adjustments, pushes of callee-saved registers, %rbp used as a scratch
# register) and publishes their frame rows with libsframe_jit; their
# calls go through C code built with -fomit-frame-pointer -Wa,--gsframe
# and back into JIT code:
#
#   main -> run_jit -> jit_outer -> c_bridge -> jit_mid -> jit_leaf
#
# With --call-graph=sframe every sample taken in one of those functions
# must show exactly the rest of that chain down to main.  The same
# program under --call-graph=fp must not get one exact chain from the
# leaf (whose %rbp holds no frame pointer), so the test can fail.
#
# Skips (exit 2) off x86-64, without a C compiler or libsframe_jit, and
# on a kernel without sframe_jit_open(2) or --call-graph=sframe.
#
# libsframe_jit is found through SFRAME_JIT_CFLAGS and SFRAME_JIT_LIBS
# (for instance "-I<tree>/tools/lib" and "<build>/libsframe_jit.a -lelf
# -pthread"), else through pkg-config, else built from the sources of
# the tree this script lives in.  RECORD_SFRAME_SECONDS sets how long
# each recording runs (default 2).

set -u

err=0
verbose=0
[ "${1:-}" = "-v" ] && verbose=1

seconds=${RECORD_SFRAME_SECONDS:-2}
# Samples from the leaf each mode must take for its verdict to count.
min_leaf_samples=100
chain="jit_leaf jit_mid c_bridge jit_outer run_jit main"

skip() {
	echo "record_sframe: skip: $*"
	cleanup
	exit 2
}

tmpdir=$(mktemp -d /tmp/perf-test-sframe.XXXXXXXXXX)

cleanup() {
	rm -rf "${tmpdir}"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

log() {
	[ "${verbose}" = 1 ] && echo "$@"
	return 0
}

[ "$(uname -m)" = x86_64 ] || skip "the JIT emits x86-64 code"
cc=${CC:-cc}
command -v "${cc}" > /dev/null || skip "no C compiler (${cc})"

write_workload() {
	cat > "${tmpdir}/chain.c" << 'EOF'
/*
 * The workload of record_sframe.sh: emit three JIT functions without
 * frame pointers, publish their rows with libsframe_jit (which names them
 * in /tmp/perf-PID.map) and spin in the innermost for a while.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <sframe_jit/sframe_jit.h>

#define CODE_SIZE	4096
#define SPIN		(1L << 18)	/* loop turns of one jit_leaf() call */

typedef long (*jit_fn)(long n);

static jit_fn jit_outer, jit_mid;
static volatile long bridge_calls;

/*
 * jit_leaf(n): 0 push %rbp; 1 mov $0x5eed,%ebp; 6 mov %rdi,%rcx;
 * 9 dec %rcx; 12 jnz 9; 14 pop %rbp; 15 xor %eax,%eax; 17 ret.
 * %rbp holds no frame pointer while it spins.
 */
static const unsigned char leaf_code[] = {
	0x55, 0xbd, 0xed, 0x5e, 0x00, 0x00, 0x48, 0x89, 0xf9,
	0x48, 0xff, 0xc9, 0x75, 0xfb, 0x5d, 0x31, 0xc0, 0xc3,
};
static const struct sframe_jit_x86_64_epilogue leaf_exit = {
	.pop_rbp = 15, .ret = 18,
};
static const struct sframe_jit_x86_64_frame leaf_frame = {
	.push_rbp = 1, .nr_epilogues = 1, .epilogue = &leaf_exit,
};

/*
 * jit_mid(n): 0 sub $24,%rsp; 4 movabs $jit_leaf,%rax; 14 call *%rax;
 * 16 add $24,%rsp; 20 ret.
 */
static const unsigned char mid_code[] = {
	0x48, 0x83, 0xec, 0x18, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xd0, 0x48, 0x83, 0xc4, 0x18, 0xc3,
};
static const struct sframe_jit_x86_64_epilogue mid_exit = {
	.add_rsp = 20, .ret = 21,
};
static const struct sframe_jit_x86_64_frame mid_frame = {
	.sub_rsp = 4, .stack_size = 24, .nr_epilogues = 1,
	.epilogue = &mid_exit,
};

/*
 * jit_outer(n): 0 push %rbx; 1 push %r12; 3 sub $8,%rsp;
 * 7 movabs $c_bridge,%rax; 17 call *%rax; 19 add $8,%rsp; 23 pop %r12;
 * 25 pop %rbx; 26 ret.
 */
static const unsigned char outer_code[] = {
	0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0x08, 0x48, 0xb8,
	0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08,
	0x41, 0x5c, 0x5b, 0xc3,
};
static const struct sframe_jit_x86_64_epilogue outer_exit = {
	.add_rsp = 23, .pop = { 25, 26 }, .ret = 27,
};
static const struct sframe_jit_x86_64_frame outer_frame = {
	.nr_saves = 2, .save = { 1, 3 }, .sub_rsp = 7, .stack_size = 8,
	.nr_epilogues = 1, .epilogue = &outer_exit,
};

/* C between two JIT frames; the increment keeps the call from a tail jump. */
__attribute__((noinline, noclone)) long c_bridge(long n)
{
	long r = jit_mid(n);

	bridge_calls++;
	return r;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline, noclone)) long run_jit(double seconds)
{
	double end = now() + seconds;
	long calls = 0;

	do {
		calls++;
		jit_outer(SPIN);
	} while (now() < end);
	return calls;
}

/* Copy a function's code at @at, patch its call target, publish it. */
static int emit(struct sframe_jit *reg, unsigned char *at,
		const unsigned char *code, size_t size, size_t imm_at,
		const void *target, const struct sframe_jit_x86_64_frame *frame,
		const char *name)
{
	unsigned long addr = (unsigned long)target;

	memcpy(at, code, size);
	if (imm_at)
		memcpy(at + imm_at, &addr, sizeof(addr));
	return sframe_jit_add_x86_64(reg, (unsigned long)at, size, frame,
				     name);
}

int main(int argc, char **argv)
{
	SFRAME_JIT_OPTS(sframe_jit_opts, opts, .flags = SFRAME_JIT_F_PERF_MAP);
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct sframe_jit *reg;
	unsigned char *code;
	long calls;
	int err;

	code = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	err = sframe_jit_create((unsigned long)code,
				(unsigned long)code + CODE_SIZE, &opts, &reg);
	if (err) {
		fprintf(stderr, "sframe_jit_create: %s\n", strerror(-err));
		return err == -ENOSYS ? 2 : 1;
	}
	err = emit(reg, code, leaf_code, sizeof(leaf_code), 0, NULL,
		   &leaf_frame, "jit_leaf");
	err = err ?: emit(reg, code + 64, mid_code, sizeof(mid_code), 6, code,
			  &mid_frame, "jit_mid");
	err = err ?: emit(reg, code + 128, outer_code, sizeof(outer_code), 9,
			  (const void *)c_bridge, &outer_frame, "jit_outer");
	if (err) {
		fprintf(stderr, "sframe_jit_add_x86_64: %s\n", strerror(-err));
		return 1;
	}
	/* Executable from here on: perf sees the mapping then. */
	if (mprotect(code, CODE_SIZE, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	jit_mid = (jit_fn)(code + 64);
	jit_outer = (jit_fn)(code + 128);
	calls = run_jit(seconds);
	/* After run_jit(), so that main() does not tail-call it. */
	printf("%ld calls, %ld through c_bridge\n", calls, bridge_calls);
	sframe_jit_destroy(reg);
	return 0;
}
EOF
}

# The compiler flags and libraries of libsframe_jit, on stdout.
find_libsframe_jit() {
	local lib srcs

	if [ -n "${SFRAME_JIT_LIBS:-}" ]; then
		echo "${SFRAME_JIT_CFLAGS:-} ${SFRAME_JIT_LIBS}"
		return 0
	fi
	if pkg-config --exists libsframe_jit 2> /dev/null; then
		pkg-config --cflags --libs --static libsframe_jit
		return 0
	fi
	lib=$(cd "$(dirname "$0")/../../../lib/sframe_jit" 2> /dev/null && pwd)
	[ -n "${lib}" ] && [ -f "${lib}/registry.c" ] || return 1
	srcs=$(cd "${lib}" && ls ./*.c | sed "s|^\./|${lib}/|")
	# <linux/sframe.h> from the tree, the rest from the system.
	echo "-I${lib}/.. -idirafter ${lib}/../../../include/uapi" \
		"-D_GNU_SOURCE -fvisibility=hidden ${srcs} -lelf -pthread"
}

build_workload() {
	local flags

	flags=$(find_libsframe_jit) || skip "libsframe_jit not found"
	write_workload
	# shellcheck disable=SC2086
	if ! "${cc}" -O2 -g -fomit-frame-pointer -Wa,--gsframe \
		-o "${tmpdir}/chain" "${tmpdir}/chain.c" ${flags} \
		2> "${tmpdir}/cc.log"; then
		cat "${tmpdir}/cc.log"
		echo "record_sframe: cannot build the workload [Failed]"
		err=1
		cleanup
		exit 1
	fi
	# The C frames are unwound through the executable's .sframe, which
	# the kernel registers at exec from PT_GNU_SFRAME.
	if ! readelf -lW "${tmpdir}/chain" | grep -q GNU_SFRAME; then
		skip "the linker gives no PT_GNU_SFRAME segment"
	fi
}

check_support() {
	[ -e /proc/sys/kernel/sframe_max_registrations ] ||
		skip "kernel without sframe_jit_open(2)"
	if ! perf record -q -o "${tmpdir}/probe.data" --call-graph=sframe \
		-e task-clock:u -- true > "${tmpdir}/probe.log" 2>&1; then
		if grep -q 'does not support --call-graph=sframe' \
			"${tmpdir}/probe.log"; then
			skip "kernel without --call-graph=sframe"
		fi
		cat "${tmpdir}/probe.log"
		echo "record_sframe: perf record --call-graph=sframe fails [Failed]"
		cleanup
		exit 1
	fi
}

# Record the workload with --call-graph=$1; perf script's output in
# ${tmpdir}/$1.script.
record() {
	local mode=$1

	if ! perf record -q -N -B -o "${tmpdir}/${mode}.data" \
		-e task-clock:u -c 500000 --call-graph="${mode}" \
		-- "${tmpdir}/chain" "${seconds}" > "${tmpdir}/${mode}.log" 2>&1; then
		cat "${tmpdir}/${mode}.log"
		echo "record_sframe: perf record --call-graph=${mode} [Failed]"
		return 1
	fi
	log "$(cat "${tmpdir}/${mode}.log")"
	perf script -i "${tmpdir}/${mode}.data" -F ip,sym \
		> "${tmpdir}/${mode}.script" 2> "${tmpdir}/${mode}.script.err"
}

# Count the samples of one recording: "total in_chain exact leaf
# leaf_exact", where in_chain samples start in a function of the chain,
# exact ones show the rest of the chain down to main, and leaf ones
# start in jit_leaf.  Inexact chains go to ${tmpdir}/$1.bad.
count_chains() {
	awk -v chain="${chain}" -v bad="${tmpdir}/$1.bad" '
	BEGIN {
		n = split(chain, want, " ")
		for (i = 1; i <= n; i++)
			pos[want[i]] = i
	}
	function sample(   i, k, ok, line) {
		if (!nr)
			return
		total++
		if (sym[1] in pos) {
			in_chain++
			k = pos[sym[1]]
			ok = nr >= n - k + 1
			for (i = 1; ok && i <= n - k + 1; i++)
				if (sym[i] != want[k + i - 1])
					ok = 0
			exact += ok
			if (sym[1] == want[1]) {
				leaf++
				leaf_exact += ok
			}
			if (!ok) {
				line = sym[1]
				for (i = 2; i <= nr; i++)
					line = line " <- " sym[i]
				print line > bad
			}
		}
		nr = 0
	}
	NF == 0 { sample(); next }
	{ sym[++nr] = $2 }
	END {
		sample()
		printf "%d %d %d %d %d\n", total, in_chain, exact, leaf, leaf_exact
	}' "${tmpdir}/$1.script"
}

build_workload
check_support

for mode in sframe fp; do
	record "${mode}" || { err=1; continue; }
	read -r total in_chain exact leaf leaf_exact < <(count_chains "${mode}")
	echo "record_sframe: --call-graph=${mode}: ${total} samples," \
		"${in_chain} in the chain, ${exact} exact;" \
		"${leaf} in jit_leaf, ${leaf_exact} exact"
	if [ "${leaf}" -lt "${min_leaf_samples}" ]; then
		echo "record_sframe: --call-graph=${mode}: fewer than" \
			"${min_leaf_samples} samples in jit_leaf [Failed]"
		err=1
		continue
	fi
	if [ "${mode}" = sframe ] && [ "${exact}" != "${in_chain}" ]; then
		echo "record_sframe: --call-graph=sframe: inexact chains [Failed]"
		sort "${tmpdir}/sframe.bad" | uniq -c | sort -rn | head -n 10
		err=1
	fi
	if [ "${mode}" = fp ] && [ "${leaf_exact}" != 0 ]; then
		echo "record_sframe: --call-graph=fp reaches main from jit_leaf," \
			"the test cannot tell the modes apart [Failed]"
		err=1
	fi
	if [ "${verbose}" = 1 ] && [ -s "${tmpdir}/${mode}.bad" ]; then
		echo "record_sframe: --call-graph=${mode}: commonest inexact chains:"
		sort "${tmpdir}/${mode}.bad" | uniq -c | sort -rn | head -n 5
	fi
done

cleanup
exit ${err}
