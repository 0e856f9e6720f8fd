#!/bin/bash
# make demo: profile a JIT whose code has no frame pointers, in the test
# kernel, with perf's frame-pointer walk and then with SFrame.
#
# exprjit (samples/sframe_jit) compiles a small program to x86-64 and
# publishes each function's unwind rows through libsframe_jit; main calls
# it for a few seconds, several JIT frames deep, into a C hot loop.  The
# VM boots once and runs it under perf record --call-graph=fp, then
# --call-graph=sframe; we print both call graphs, the share of samples
# whose stack reaches main() in each mode, and draw a flame graph of each
# (mk/demo/flamegraph.c) under build/demo/.
#
# The second act, in the same boot: PostgreSQL 15's JIT (Debian's
# postgresql-15, llvmjit on libLLVM-14), which no one here wrote, under
# sframe-run, one query whose expressions it compiles profiled with fp
# and with sframe (mk/demo/postgres.sh); its call graphs, flame graphs
# (postgres-MODE.svg) and the share of samples in its code (evalexpr_*)
# whose stack reaches main().
#
# The third act, in the same boot: HotSpot, OpenJDK 17's JIT, with the
# JVM's default flags (C1 and C2 code keeps no frame pointer) and
# libsframe_jvm, the JVMTI agent that publishes each compiled method's
# rows (mk/demo/java.sh): a loop compiled five Java frames deep and at
# the bottom of a recursion, profiled with fp and with sframe; its call
# graphs, flame graphs (java-MODE.svg) and the share of samples in its
# compiled code whose Java frames are exact down to the main thread's
# start.
#
# Environment: DEMO_SECONDS (how long exprjit runs, default 3), PERF (a
# perf binary to use instead of build/perf/perf), DEMO_PG_ROWS (the rows
# PostgreSQL's query goes through, default 1000000).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$build/demo
scratch=$out/vm
seconds=${DEMO_SECONDS:-3}
pg_rows=${DEMO_PG_ROWS:-1000000}
pgbin=/usr/lib/postgresql/15/bin
t0=$SECONDS
mkdir -p "$out" "$scratch" "$build/logs"

section() {
	printf '\n== %s\n' "$*"
}

build_tools() {
	nice make -s -C "$top/tools/lib/sframe_jit" OUTPUT="$build/sframe_jit/" \
		all tests-postgres tests-java > /dev/null
	nice make -s -C "$top/samples/sframe_jit" OUTPUT="$out/" \
		LIBDIR="$build/sframe_jit" INCDIR="$top/tools/lib/sframe_jit" \
		exprjit
	gcc -O2 -Wall -Wextra -o "$out/flamegraph" "$top/mk/demo/flamegraph.c"
}

# The perf to run in the guest: ours from the patched tree (make perf),
# or Debian's, which can only do the frame pointer half.
pick_perf() {
	if [ -n "${PERF:-}" ]; then
		perf=$PERF
	elif [ -f "$top/mk/perf.sh" ]; then
		echo "demo: make perf (the first build takes minutes; log in $build/logs/demo-perf.log)"
		make -s -C "$top" perf > "$build/logs/demo-perf.log" 2>&1 ||
			die "make perf failed; see $build/logs/demo-perf.log"
		perf=$build/perf/perf
	else
		perf=
	fi
	if [ -z "$perf" ] || [ ! -x "$perf" ]; then
		echo "demo: no perf from the patched tree (make perf); using Debian's"
		perf=$(command -v perf) || die "no perf at all (make deps installs linux-perf)"
	fi
}

# perf record -h lists the record modes it knows (and exits non-zero).
has_sframe() {
	local help

	help=$("$perf" record -h 2>&1 || true)
	grep -q 'record_mode:.*sframe' <<< "$help"
}

# A cluster for the second act, made on the host, where initdb takes a
# second rather than most of a minute; the guest unpacks it.
make_cluster() {
	local tmp

	rm -rf "$scratch/pg-cluster" "$scratch/pg-cluster.tar.gz"
	tmp=$(mktemp -d /tmp/demo-pg.XXXXXX) || return 1
	chown postgres: "$tmp"
	if ! setpriv --reuid=postgres --regid=postgres --init-groups -- \
		"$pgbin/initdb" -D "$tmp/data" -A trust -U postgres -E UTF8 \
		--locale=C --no-sync > "$build/logs/demo-initdb.log" 2>&1; then
		echo "demo: initdb failed; see $build/logs/demo-initdb.log"
		rm -rf "$tmp"
		return 1
	fi
	tar -czf "$scratch/pg-cluster.tar.gz" -C "$tmp/data" .
	rm -rf "$tmp"
}

# The call graph of perf report, without its header and cut short.
show_report() {
	local file=$1

	if [ ! -s "$file" ]; then
		echo "(no report)"
		return
	fi
	grep -v '^#' "$file" | sed '/./,$!d' | cat -s | head -n 40
}

# modes_in DIR EXT: the modes of $modes whose DIR/MODE.EXT came out.
modes_in() {
	local mode found=

	for mode in $modes; do
		[ -s "$1/$mode.$2" ] && found+=" $mode"
	done
	echo "$found"
}

# list_svgs PREFIX MODE...: where each mode's flame graph is.
list_svgs() {
	local prefix=$1 mode

	shift
	for mode in "$@"; do
		echo "  $out/$prefix$mode.svg"
	done
}

# verdict_line MODE REACHED TOTAL: one mode's line of a verdict.
verdict_line() {
	awk -v m="$1" -v r="$2" -v t="$3" 'BEGIN {
		printf "  --call-graph=%-7s %5.1f%%  (%d of %d samples)\n",
			m, t ? 100 * r / t : 0, r, t
	}'
}

section "make demo: perf through JIT code without frame pointers"
echo "exprjit (samples/sframe_jit/exprjit.c) compiles this program to x86-64;"
echo "its code keeps its first argument in %rbp, so no frame pointer chain"
echo "gets through it, and publishes each function's unwind rows through"
echo "libsframe_jit. main() calls f(0), f(1), ... for ${seconds} s:"
build_tools
"$out/exprjit" --print | sed 's/^/    /'
pick_perf
modes=fp
if has_sframe; then
	modes="fp sframe"
else
	echo "demo: $perf has no --call-graph=sframe (mk/perf.sh builds one that"
	echo "      has): only the frame pointer half runs, and the demo fails."
fi

how=
for mode in $modes; do
	how+="${how:+, then }--call-graph=$mode"
done
section "in the test kernel: perf record -e cpu-clock:u -F 499 $how"
echo "then PostgreSQL's JIT under sframe-run, with the same modes"
rm -f "$scratch"/*.data "$scratch"/*.report "$scratch"/*.script "$scratch"/*.log
rm -rf "$scratch/postgres" "$scratch/java"
pg_act=0
if [ -x "$pgbin/postgres" ] && make_cluster; then
	pg_act=1
else
	echo "demo: no PostgreSQL 15 at $pgbin or no cluster (make deps installs"
	echo "      postgresql-15): the second act does not run, and the demo fails."
fi
guest="rc=0; bash $top/mk/demo/guest.sh $perf $out/exprjit $seconds $scratch $modes || rc=1"
if [ "$pg_act" = 1 ]; then
	guest+="; PG_CLUSTER=$scratch/pg-cluster.tar.gz PG_ROWS=$pg_rows"
	guest+=" bash $top/mk/demo/postgres.sh $perf $build/sframe_jit $scratch/postgres $modes || rc=1"
fi
guest+="; bash $top/mk/demo/java.sh $perf $build/sframe_jit $scratch/java $modes || rc=1"
guest+='; exit $rc'
vm_rc=0
VM_SCRATCH=$scratch VM_LOG=$build/logs/demo-console.log VM_TIMEOUT=800 \
	"$top/mk/vm.sh" "$guest" > "$out/vm-output.txt" 2>&1 || vm_rc=$?
grep -E '^demo:|^  ' "$out/vm-output.txt" | grep -v '^  mk/' || true
# The modes that produced a profile; a failed one is reported above.
done_modes=
for mode in $modes; do
	sed -n "s/^exprjit: /  [$mode] exprjit: /p" "$scratch/$mode.log" 2> /dev/null
	[ -s "$scratch/$mode.script" ] && done_modes+=" $mode"
done
if [ "$vm_rc" != 0 ]; then
	grep -E '^vm:' "$out/vm-output.txt" || true
	echo "demo: the guest failed (status $vm_rc); console log in $build/logs/demo-console.log"
fi

declare -A share
for mode in $done_modes; do
	section "perf report --call-graph=$mode (callers above callees, trimmed)"
	show_report "$scratch/$mode.report"
	awk -f "$top/mk/demo/fold.awk" "$scratch/$mode.script" | sort > "$out/$mode.folded"
	"$out/flamegraph" -t "exprjit under perf record --call-graph=$mode" \
		"$out/$mode.folded" > "$out/$mode.svg"
	share[$mode]=$(awk -f "$top/mk/demo/reach.awk" "$out/$mode.folded")
done

section "verdict: samples in JIT code or spin() whose stack reaches main()"
for mode in $done_modes; do
	verdict_line "$mode" ${share[$mode]}
done
echo "  (fp stops at the first JIT frame, whose %rbp holds data; sframe"
echo "  follows the rows libsframe_jit published, and exprjit's .sframe)"
echo "flame graphs (open in a browser; hover for numbers):"
list_svgs "" $done_modes

# The second act: the same, of PostgreSQL's backend.
pg=$scratch/postgres
pg_modes=$(modes_in "$pg" script)
section "act two: PostgreSQL 15's JIT (llvmjit, libLLVM-14) under sframe-run"
echo "a cluster started as the postgres user under sframe-run, jit_above_cost=0,"
echo "one session running, over generate_series(1, $pg_rows):"
echo "    SELECT sum(CASE ... END), count(*) FILTER (WHERE ...), max(...)"
echo "llvmjit compiles its expressions (evalexpr_*), registers their .eh_frame"
echo "with __register_frame() and names them to the GDB JIT interface;"
echo "sframe-run takes both. EXPLAIN ANALYZE says:"
for mode in $pg_modes; do
	sed -n "s/^\(JIT:\|  Functions:\|  Options:\|Execution Time:\)/  [$mode] &/p" \
		"$pg/$mode.explain"
done
declare -A pg_share
for mode in $pg_modes; do
	section "perf report --call-graph=$mode of the backend (callers above callees, trimmed)"
	show_report "$pg/$mode.report"
	awk -f "$top/mk/demo/fold.awk" "$pg/$mode.script" | sort > "$out/postgres-$mode.folded"
	"$out/flamegraph" -t "PostgreSQL's JIT under perf record --call-graph=$mode" \
		"$out/postgres-$mode.folded" > "$out/postgres-$mode.svg"
	pg_share[$mode]=$(awk -v leaf='^evalexpr_' -f "$top/mk/demo/reach.awk" \
		"$out/postgres-$mode.folded")
done

section "verdict: samples in PostgreSQL's JIT code (evalexpr_*) whose stack reaches main()"
for mode in $pg_modes; do
	verdict_line "$mode" ${pg_share[$mode]}
done
echo "  (neither llvmjit's code nor Debian's postgres keeps frame pointers;"
echo "  sframe follows the rows sframe-run took from __register_frame() and"
echo "  converted from each loaded object's .eh_frame)"
echo "flame graphs:"
list_svgs postgres- $pg_modes

# The third act: HotSpot's compiled code.
jv=$scratch/java
java_modes=$(modes_in "$jv" paths)
section "act three: HotSpot (OpenJDK 17) with libsframe_jvm, the JVMTI agent"
echo "java -agentpath:libsframe_jvm.so Deep, the JVM's default flags: C1 and"
echo "C2 keep no frame pointer. Deep's hot loop runs five Java frames deep"
echo "(main, run, level1 ... level5) and under a recursion (main, run, rec x 11,"
echo "level5); the agent decodes each compiled method for its frames,"
echo "cross-checked with HotSpot's own frame size, and names it in the perf"
echo "map. Profiled as a service is: perf record -p once it has warmed up."
declare -A java_share
for mode in $java_modes; do
	section "perf report --call-graph=$mode of the Java main thread (callers above callees, trimmed)"
	show_report "$jv/$mode.report"
	awk -f "$top/mk/demo/fold.awk" "$jv/$mode.script" | sort > "$out/java-$mode.folded"
	"$out/flamegraph" -t "HotSpot under perf record --call-graph=$mode" \
		"$out/java-$mode.folded" > "$out/java-$mode.svg"
	java_share[$mode]=$(awk -v path=/dev/null \
		-v chains="$top/tools/lib/sframe_jit/tests/java/Deep.chains" \
		-f "$top/tools/lib/sframe_jit/tests/perf_stacks.awk" \
		-f "$top/tools/lib/sframe_jit/tests/java_paths.awk" "$jv/$mode.paths")
done

section "verdict: samples in Deep's compiled code whose Java frames are exact, down to JavaMain"
for mode in $java_modes; do
	verdict_line "$mode" ${java_share[$mode]}
done
echo "  (fp loses the chain at the first compiled frame, whose %rbp is an"
echo "  ordinary register; sframe follows the rows the agent published)"
echo "flame graphs:"
list_svgs java- $java_modes
echo "demo: done in $((SECONDS - t0)) s"
[ "$vm_rc" = 0 ] && [ "${done_modes# }" = "fp sframe" ] ||
	die "half a demo: --call-graph=sframe did not run (see above)"
[ "${pg_modes# }" = "fp sframe" ] ||
	die "half a demo: PostgreSQL's act did not run in both modes (see above)"
[ "${java_modes# }" = "fp sframe" ] ||
	die "half a demo: the Java act did not run in both modes (see above)"
