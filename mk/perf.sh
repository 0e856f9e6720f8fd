#!/bin/bash
# Build perf from the assembled tree (build/linux/tools/perf, or $TREE)
# into build/perf/perf, with --call-graph=sframe.
#
# perf is compiled with -Wa,--gsframe: besides being the tool the tests
# and the demo use, it is a large real program that carries an .sframe
# section, which the cross-checks of the unwinder read.
#
# Optional features are off where they only slow the build down or need
# packages the project does not otherwise use: the scripting engines
# (Python, Perl), libtraceevent (tracepoint parsing, perf trace), the
# BPF skeletons and libbpf, the PMU event tables (jevents), the TUI and
# GTK browsers, babeltrace, debuginfod, SDT, libnuma, zstd, capstone,
# libpfm4 and LLVM (whose shared library alone slows every start of perf
# in the emulated test VM).  DWARF unwinding (--call-graph=dwarf, for
# comparisons) stays, through libdw; so do libelf, zlib, lzma, libcrypto
# and libaio where installed.
#
# Incremental: make rebuilds what changed, and is not even run when
# nothing in tools/ did.  Runs under nice, as every heavy userspace
# build here.
#
#   mk/perf.sh [make arguments...]     e.g. V=1
set -euo pipefail
. "$(dirname "$0")/lib.sh"

src=$tree/tools/perf
out=$build/perf
jobs=${JOBS:-$(nproc)}

[ -f "$src/Makefile.perf" ] || die "$src is missing; run 'make tree'"
mkdir -p "$out"

features=(
	NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBTRACEEVENT=1
	BUILD_BPF_SKEL=0 NO_LIBBPF=1 NO_JEVENTS=1
	NO_SLANG=1 NO_GTK2=1 NO_LIBBABELTRACE=1 NO_LIBDEBUGINFOD=1
	NO_SDT=1 NO_LIBNUMA=1 NO_LIBAUDIT=1 NO_LIBUNWIND=1 NO_LIBCAP=1
	NO_LIBZSTD=1 NO_CAPSTONE=1 NO_LIBPFM4=1 NO_LIBLLVM=1
)

# Each assembly of the tree is a new commit, and perf's version string
# names it, so make would relink perf every time.  Skip make when what
# perf is built from (tools/ without the tests and libsframe_jit, by git
# tree hashes) and the options are those of the last build.
not_perf=(':!tools/testing' ':!tools/lib/sframe_jit')
stamp=$out/.inputs
inputs="$(git -C "$tree" ls-tree HEAD tools/ tools/lib/ |
	grep -v -e 'tools/testing$' -e 'tools/lib$' -e 'tools/lib/sframe_jit$' |
	sha1sum) ${features[*]} $*"
if [ -x "$out/perf" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$inputs" ] &&
   [ -z "$(git -C "$tree" status --porcelain -- tools "${not_perf[@]}")" ]; then
	note "$out/perf is up to date"
	exit 0
fi
rm -f "$stamp"

# -Wa,--gsframe reaches every compiler call through EXTRA_CFLAGS, the
# feature checks included, so a toolchain without SFrame fails early.
nice -n 10 make -s -C "$src" O="$out" -j"$jobs" \
	CC="ccache gcc" HOSTCC="ccache gcc" \
	EXTRA_CFLAGS="-Wa,--gsframe" \
	"${features[@]}" "$@"

[ -x "$out/perf" ] || die "no $out/perf after the build"
echo "$inputs" > "$stamp"
readelf -S "$out/perf" | grep -q '\.sframe' ||
	die "$out/perf has no .sframe section"
note "$out/perf ($("$out/perf" version))"
