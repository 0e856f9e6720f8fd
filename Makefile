# SFrame unwinding for JIT code: top-level orchestration.
#
#   make demo       the main job (see README.md)
#   make check      every test layer; ends with "N passed, N failed"
#
# Everything is built under build/, which is never committed.

SHELL := /bin/bash
BUILD := $(CURDIR)/build
TREE := $(BUILD)/linux
KOUT := $(BUILD)/kbuild
KERNEL := $(KOUT)/arch/x86/boot/bzImage
KCONFIG_FRAGMENTS := mk/vm.config tools/testing/selftests/sframe_jit/config \
	mk/kunit.config
KOUT_DEBUG := $(BUILD)/kbuild-debug
JOBS ?= $(shell nproc)
# LOCALVERSION= (empty) keeps setlocalversion from appending "+" for
# the git tree in build/linux.
KBUILD_ARGS = -s -C $(TREE) CC="ccache gcc" HOSTCC="ccache gcc" LOCALVERSION=
KMAKE = $(MAKE) $(KBUILD_ARGS) O=$(KOUT)

export BUILD TREE KOUT KERNEL KMAKE
# ccache hashes paths below build/ relative to the compiler's directory,
# so a second clone (CI's, a colleague's) reuses the objects of the
# first instead of rebuilding both kernels and perf from nothing.
export CCACHE_BASEDIR := $(BUILD)
# The guest command of "make vm"; read from the environment by the recipe
# so that it may hold any quoting.
export CMD

.PHONY: all deps tree refresh kernel kernel-locked kernel-debug \
	kernel-debug-locked kernel-w1 headers vm selftests \
	check check-runner demo clean help perf fuzz bench series series-check \
	check-debug

all: kernel

deps:
	@mk/deps.sh

tree: deps
	@mk/tree.sh

refresh: deps
	@mk/refresh.sh

# Two kernel builds at once would only slow each other on two cores and
# could see build/linux change under them: each build holds a lock.
KLOCK = mkdir -p $(BUILD) && flock $(BUILD)/.kernel.lock

kernel: deps
	+@$(KLOCK) $(MAKE) -s kernel-locked

kernel-locked:
	@mk/tree.sh
	@mk/kconfig.sh $(KOUT) $(KCONFIG_FRAGMENTS)
	+@$(KMAKE) -j$(JOBS) bzImage
	+@$(MAKE) -s kernel-w1
	@echo "kernel: $(KERNEL) ($$(cat $(KOUT)/include/config/kernel.release))"

# The same kernel with lockdep, KASAN, UBSAN and kmemleak, and its
# exported headers for the selftests; run it with
# KERNEL=$(KOUT_DEBUG)/arch/x86/boot/bzImage mk/vm.sh '...'.
kernel-debug: deps
	+@$(KLOCK) $(MAKE) -s kernel-debug-locked

kernel-debug-locked:
	@mk/tree.sh
	@mk/kconfig.sh $(KOUT_DEBUG) $(KCONFIG_FRAGMENTS) mk/debug.config
	+@$(MAKE) $(KBUILD_ARGS) O=$(KOUT_DEBUG) -j$(JOBS) bzImage headers
	@echo "kernel-debug: $(KOUT_DEBUG)/arch/x86/boot/bzImage"

# Our own kernel files, rebuilt with W=1: they must be warning-free.
kernel-w1:
	@mk/w1.sh

headers: kernel
	+@$(KLOCK) $(KMAKE) headers

vm: kernel
	@if [ -z "$$CMD" ]; then echo "usage: make vm CMD='command'"; exit 2; fi
	@mk/vm.sh "$$CMD"

selftests: headers
	@mk/selftests.sh

check-runner: kernel
	@mk/tests/runner-test.sh

check: kernel headers
	@mk/check.sh

demo: headers
	@mk/demo.sh

# perf from the patched tree (--call-graph=sframe), built with
# -Wa,--gsframe: build/perf/perf.
perf: tree
	@mk/perf.sh

# Each libFuzzer target of tools/testing/sframe for FUZZ_TIME seconds.
fuzz: deps
	@mk/fuzz.sh

# Benchmarks: every mk/bench/NN-NAME in order; ratios side by side.
bench: headers
	@mk/bench.sh

# The series as maintainers receive it, and its per-patch checks.  The
# series is signed off by your git identity (user.name, user.email);
# DRAFT=1 writes a draft ("[DRAFT PATCH ...]") that needs none, as
# series-check does unless told DRAFT=0.
series: tree
	@mk/series.sh

series-check: export DRAFT ?= 1
series-check: series
	@mk/series-check.sh

# Every kselftest and the stress run on the debug kernel.
check-debug: deps
	@mk/check-debug.sh

clean:
	rm -rf $(BUILD)
