#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install as a distribution package build does it, with a prefix
# and a DESTDIR, then build the example program against the installed
# files through pkg-config alone, linked to the shared library and to
# the static one, and run both.  A JIT's build system sees only what is
# installed, so this is the path its authors take.
#
#   tests/install_test.sh OUTPUT_DIR
#
# Ends with "N passed, N failed".
set -uo pipefail

mkdir -p "$1" && out=$(realpath "$1") || exit 1
here=$(cd "$(dirname "$0")/.." && pwd)
sample=$here/../../../samples/sframe_jit/sframe_jit_example.c
dest=$out/install-test
prefix=/opt/sframe-jit-test
root=$dest$prefix
. "$(dirname "$0")/tap.sh"

# pkg-config as a cross build uses it: only our .pc file, paths rooted
# at DESTDIR, and libelf's own .pc from the system for the static link.
pc() {
	PKG_CONFIG_PATH='' \
	PKG_CONFIG_LIBDIR=$root/lib/pkgconfig:$(pkg-config --variable pc_path pkg-config) \
	PKG_CONFIG_SYSROOT_DIR=$dest pkg-config "$@" libsframe_jit
}

rm -rf "$dest"
make -s -C "$here" OUTPUT="$out/" DESTDIR="$dest" prefix="$prefix" \
	install > "$out/install-test.log" 2>&1
result $? "make install DESTDIR=... prefix=$prefix"

missing=
for f in lib/libsframe_jit.a lib/libsframe_jit.so lib/libsframe_jit.so.0 \
	 lib/pkgconfig/libsframe_jit.pc include/sframe_jit/sframe_jit.h \
	 lib/libsframe_run.so bin/sframe-run; do
	[ -e "$root/$f" ] || missing="$missing $f"
done
[ -z "$missing" ]
result $? "installed under DESTDIR and prefix${missing:+ (missing:$missing)}"

# The .pc file names where the files will be, not where they were staged.
pcfile=$root/lib/pkgconfig/libsframe_jit.pc
grep -qx "prefix=$prefix" "$pcfile" && grep -qx "libdir=$prefix/lib" "$pcfile" &&
	! grep -q "$dest" "$pcfile"
result $? "the .pc file names the prefix, not DESTDIR"

# Shared: the example built with pkg-config's flags, run from the
# installed library.  ldd's output is taken whole: grep -q ending a
# pipe early would fail it under pipefail.
read -ra cflags <<< "$(pc --cflags)"
read -ra libs <<< "$(pc --libs)"
bin=$out/install-test/example-shared
cc -O2 -Wa,--gsframe "${cflags[@]}" -o "$bin" "$sample" "${libs[@]}" \
	>> "$out/install-test.log" 2>&1 &&
	LD_LIBRARY_PATH=$root/lib "$bin" --check >> "$out/install-test.log" 2>&1 &&
	deps=$(LD_LIBRARY_PATH=$root/lib ldd "$bin") &&
	[[ "$deps" == *"$root/lib/libsframe_jit.so.0"* ]]
result $? "the example builds with pkg-config and runs on the shared library"

# Static: the archive and what pkg-config --static adds (libelf,
# pthread); the program must not need the shared library.
bin=$out/install-test/example-static
read -ra libs <<< "$(pc --static --libs)"
libs=("${libs[@]/#-lsframe_jit/-l:libsframe_jit.a}")
cc -O2 -Wa,--gsframe "${cflags[@]}" -o "$bin" "$sample" "${libs[@]}" \
	>> "$out/install-test.log" 2>&1 &&
	"$bin" --check >> "$out/install-test.log" 2>&1 &&
	deps=$(ldd "$bin") && [[ "$deps" != *libsframe_jit* ]]
result $? "the example links the archive with pkg-config --static and runs"

# sframe-run names the preload where it will be installed, adds it in
# front of the LD_PRELOAD it finds, and runs the command with its
# arguments and status; the staged preload loads into a program (into
# private memory: the host's kernel may have no calls to take tables).
run=$root/bin/sframe-run
grep -qF "$prefix/lib/libsframe_run.so" "$run" && ! grep -qF "$dest" "$run"
result $? "sframe-run names the installed preload, not DESTDIR"
got=$(SFRAME_RUN_PRELOAD=$root/lib/libsframe_run.so LD_PRELOAD=libc.so.6 \
	SFRAME_RUN_NO_KERNEL=1 "$run" sh -c 'echo "$LD_PRELOAD:$1"; exit 3' sh 'a b' 2>&1)
[ $? = 3 ] && [ "$got" = "$root/lib/libsframe_run.so:libc.so.6:a b" ]
result $? "sframe-run runs CMD ARGS with the preload in front of LD_PRELOAD"
"$run" > /dev/null 2>&1
[ $? = 2 ]
result $? "sframe-run without a command is a usage error"

[ "$failed" = 0 ] || echo "# log: $out/install-test.log"
summary
