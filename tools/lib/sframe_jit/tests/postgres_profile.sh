#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PostgreSQL 15's JIT (Debian's postgresql-15, llvmjit.so on libLLVM-14)
# under sframe-run and perf record, once per call-graph mode; run as root
# in the test VM by tests/postgres_vm.sh and by make demo.
#
#   postgres_profile.sh OUTPUT_DIR PERF OUTDIR MODE...
#
# OUTPUT_DIR is the library's build directory (sframe-run,
# libsframe_run.so and, from make tests-postgres, test-bin/sysv_shm.so,
# preloaded into initdb and postgres when the kernel has no System V
# IPC, as the test kernel has not).  A cluster is made with initdb under
# the guest's /tmp (a tmpfs: the postgres user may not be able to reach
# the scratch directory's parents), and its postmaster started as the
# postgres user under sframe-run with SFRAME_RUN_SYNC=1 (every table
# registered before the code it covers runs).  For each MODE, a session
# of its own connects, perf record -e cpu-clock:u -F 499
# --call-graph=MODE attaches to its backend, and once perf says it is
# recording the session runs QUERY below with EXPLAIN ANALYZE and ends.
# OUTDIR gets postmaster.log (the postmaster's and sframe-run's lines,
# the backends' too) and, per MODE (a --call-graph mode, or bpftrace-fp
# and bpftrace-sframe: see bpftrace_profile() below):
#
#   MODE.data     the recording of the session's backend
#   MODE.pid      that backend
#   MODE.explain  the query's plan, with PostgreSQL's JIT summary
#   MODE.script   perf script of the recording (run here, where the
#                 backend's /tmp/perf-PID.map is)
#   MODE.log      perf record's messages
#
# llvmjit.so is preloaded into the postmaster, so that libLLVM-14's
# table is converted once there and every backend has it from fork().
# jit_debugging_support hands each query's objects to the GDB JIT
# interface, whose symbol tables sframe-run writes to the backend's
# perf map (evalexpr_N_M, the expressions' functions).
#
# MODE agent is the same backend given its tables from outside: the
# postmaster is started again without sframe-run, at the kernel's
# default budget for pinned tables, with no library preloaded and
# without jit_debugging_support (llvmjit's objects reach the agent
# through libgcc's __register_frame()), a session starts the query with
# PG_AGENT_ROWS rows (default 1000000000: longer than the test),
# and once the backend has JIT code, PG_AGENT (the sframe-agent binary)
# attaches to it with --once -p, so that every JIT object was registered
# before the agent came; then perf record -p takes PG_AGENT_SECONDS
# (default 3) of it with --call-graph=sframe, and the query is
# cancelled.  OUTDIR gets agent.log
# (the agent's summary), agent.data, agent.script (every sample: there
# is no perf map to name the JIT's code), agent.maps.
#
# Environment: PG_CLUSTER (a .tar.gz of a cluster's directory that
# initdb made elsewhere, unpacked rather than made here: under software
# emulation initdb takes most of a minute, and copying its thousand
# files from the scratch directory longer still), PG_SCRIPT_JIT_ONLY
# (see script() below), PG_ROWS (the rows the query goes through,
# default 3000000: 2000000 gave 74 to 85 samples in evalexpr_* per mode
# under software emulation in a clean-clone run on 2026-12-02).
set -uo pipefail

if [ $# -lt 4 ]; then
	echo "usage: $0 OUTPUT_DIR PERF OUTDIR MODE..." >&2
	exit 2
fi
lib=$1
perf=$2
out=$3
shift 3

bin=/usr/lib/postgresql/15/bin
rows=${PG_ROWS:-3000000}
port=54329
pg=/tmp/postgres-sframe
data=$pg/data
# Tries a tenth of a second apart: two minutes, for each wait below.
tries=1200
. "$(dirname "$0")/jit_code.sh"

if [ ! -x "$bin/postgres" ] || [ ! -f /usr/lib/postgresql/15/lib/llvmjit.so ]; then
	echo "postgres_profile: no PostgreSQL 15 with llvmjit.so under $bin" \
		"(Debian's postgresql-15)" >&2
	exit 1
fi
if ! id -u postgres > /dev/null 2>&1; then
	echo "postgres_profile: no postgres user (Debian's postgresql-15 makes it)" >&2
	exit 1
fi
case "$rows" in
'' | *[!0-9]*)
	echo "postgres_profile: PG_ROWS must be a number of rows, not '$rows'" >&2
	exit 2
	;;
esac

# query_of ROWS: arithmetic and CASE on every row: with inlining the
# operators' code is part of the JIT's functions, where most of the time
# goes.
query_of() {
	echo "SELECT sum(CASE WHEN g % 3 = 0 THEN g / 3 WHEN g % 5 = 1 THEN g * 2
	ELSE g + 7 END),
	count(*) FILTER (WHERE g % 7 = 3 OR g % 11 = 5),
	max(g % 1013 * 3 + g % 17)
FROM (SELECT generate_series(1, $1) AS g) s"
}
query=$(query_of "$rows")

# "${as_postgres[@]}" CMD...: CMD as the postgres user, with the
# System V stand-in where the kernel lacks the real thing (set up below).
as_postgres=()

# A copy of sframe-run that the postgres user can read wherever the
# build directory is, and the cluster.
setup() {
	rm -rf "$pg"
	mkdir -p "$pg"
	cp "$lib/libsframe_run.so" "$lib/sframe-run" "$pg/"
	shm=
	if [ ! -e /proc/sysvipc/shm ]; then
		[ -f "$lib/test-bin/sysv_shm.so" ] || {
			echo "postgres_profile: no System V IPC in this kernel" \
				"and no $lib/test-bin/sysv_shm.so (make tests-postgres)" >&2
			return 1
		}
		cp "$lib/test-bin/sysv_shm.so" "$pg/"
		shm=$pg/sysv_shm.so
	fi
	as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups --
		env ${shm:+"LD_PRELOAD=$shm"})
	if [ -n "${PG_CLUSTER:-}" ]; then
		mkdir -m 700 "$data"
		tar -xzf "$PG_CLUSTER" -C "$data" && [ -f "$data/PG_VERSION" ] || {
			echo "postgres_profile: PG_CLUSTER=$PG_CLUSTER" \
				"is no tar.gz of a cluster" >&2
			return 1
		}
	fi
	chown -R postgres: "$pg"
	[ -n "${PG_CLUSTER:-}" ] && return 0
	"${as_postgres[@]}" "$bin/initdb" -D "$data" -A trust -U postgres \
		-E UTF8 --locale=C --no-sync > "$out/initdb.log" 2>&1 || {
		echo "postgres_profile: initdb failed:" >&2
		cat "$out/initdb.log" >&2
		return 1
	}
}

# psql ARGS...: a session as the postgres user, through the socket;
# without JIT for the helpers' own queries (the profiled session's
# input comes from a pipe, with the server's settings).
psql_() {
	PGOPTIONS=${PGOPTIONS--c jit=off} "$bin/psql" -X -A -t -q \
		-v ON_ERROR_STOP=1 -h "$pg" -p "$port" -U postgres -d postgres "$@"
}

# The kernel's budget for pinned tables, per user, as the test found it.
pinned_kb=$(cat /proc/sys/kernel/sframe_user_pinned_kb)

# start [stock]: the postmaster under sframe-run, or without it, until it
# takes connections.
start() {
	local i run=() opts

	# The JIT's settings: a stock server's, past the costs that make
	# it JIT a query this small.
	opts=(-c jit=on -c jit_above_cost=0 -c jit_inline_above_cost=0
	      -c jit_optimize_above_cost=0)
	if [ "${1:-}" = stock ]; then
		echo "$pinned_kb" > /proc/sys/kernel/sframe_user_pinned_kb
	else
		opts+=(-c shared_preload_libraries=llvmjit
		       -c jit_debugging_support=on)
		# Every backend converts and registers its own tables, all
		# charged to the postgres user: more than the default 16 MiB
		# of kernel.sframe_user_pinned_kb, which sframe-run cannot
		# share.
		echo 1048576 > /proc/sys/kernel/sframe_user_pinned_kb
		run=(env SFRAME_RUN_PRELOAD=$pg/libsframe_run.so
		     SFRAME_RUN_SYNC=1 SFRAME_RUN_VERBOSE=1 "$pg/sframe-run")
	fi
	"${as_postgres[@]}" "${run[@]}" "$bin/postgres" -D "$data" \
		-k "$pg" -p "$port" -c listen_addresses= -c shared_buffers=16MB \
		"${opts[@]}" -c max_parallel_workers_per_gather=0 -c fsync=off \
		>> "$out/postmaster.log" 2>&1 &
	postmaster=$!
	for ((i = 0; i < tries; i++)); do
		"$bin/pg_isready" -q -h "$pg" -p "$port" -U postgres && return 0
		kill -0 "$postmaster" 2> /dev/null || break
		sleep 0.1
	done
	echo "postgres_profile: the postmaster did not start:" >&2
	cat "$out/postmaster.log" >&2
	return 1
}

stop() {
	kill -INT "$postmaster" 2> /dev/null
	wait "$postmaster"
	echo "$pinned_kb" > /proc/sys/kernel/sframe_user_pinned_kb
}

# backend_of APP: the pid of the backend of the session named APP.
backend_of() {
	local i pid

	for ((i = 0; i < tries; i++)); do
		pid=$(psql_ -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$1'")
		[ -n "$pid" ] && echo "$pid" && return 0
		sleep 0.1
	done
	return 1
}

# session_start MODE: a session named for MODE, idle on its input
# ($in, a FIFO), whose backend's pid goes to $pid and OUTDIR/MODE.pid.
session_start() {
	local mode=$1 app=sframe-run-$1

	PGOPTIONS= PGAPPNAME=$app psql_ < "$pg/$mode.in" > "$out/$mode.explain" 2>&1 &
	sess=$!
	exec {in}> "$pg/$mode.in"
	if ! pid=$(backend_of "$app"); then
		echo "postgres_profile: $mode: no backend for the session" >&2
		exec {in}>&-
		wait "$sess"
		cat "$out/$mode.explain" >&2
		return 1
	fi
	echo "$pid" > "$out/$mode.pid"
}

# bpftrace_profile fp|sframe: the session's backend under bpftrace, a
# profiler that cannot ask for the SFrame walk, with the sysctl
# kernel.sframe_user_callchains at 0 or 1; OUTDIR/bpftrace-MODE.stacks
# gets its ustack counts as addresses (BPFTRACE_NO_USER_SYMBOLS: its
# symbolizer takes minutes over libLLVM-14 under emulation), and
# bpftrace-MODE.maps the backend's maps, to read them with, taken while
# the session still runs.
bpftrace_profile() {
	local mode=bpftrace-$1 i rc=0 bt on=0

	[ "$1" = sframe ] && on=1
	rm -f "$out/$mode".* "$pg/$mode".*
	mkfifo "$pg/$mode.in" || return 1
	echo "$on" > /proc/sys/kernel/sframe_user_callchains || return 1
	session_start "$mode" || return 1
	BPFTRACE_NO_USER_SYMBOLS=1 \
		bpftrace -e "profile:hz:499 /pid == $pid/ { @[ustack] = count(); }" \
		> "$out/$mode.stacks" 2> "$out/$mode.log" {in}>&- &
	bt=$!
	for ((i = 0; i < tries * 5; i++)); do
		grep -q '^Attaching' "$out/$mode.stacks" && break
		kill -0 "$bt" 2> /dev/null || break
		sleep 0.1
	done
	if grep -q '^Attaching' "$out/$mode.stacks"; then
		# The query, then a mark that psql leaves once it is done.
		printf 'EXPLAIN (ANALYZE, TIMING OFF) %s;\n\\! touch %s\n' \
			"$query" "$pg/$mode.done" >&"$in"
		for ((i = 0; i < tries * 5; i++)); do
			[ -e "$pg/$mode.done" ] && break
			kill -0 "$sess" 2> /dev/null || break
			sleep 0.1
		done
		[ -e "$pg/$mode.done" ] || rc=1
		cat "/proc/$pid/maps" > "$out/$mode.maps"
		cp "/tmp/perf-$pid.map" "$out/$mode.perf-map" 2> /dev/null
	else
		echo "postgres_profile: $mode: bpftrace did not attach:" >&2
		cat "$out/$mode.log" >&2
		rc=1
	fi
	kill -INT "$bt" 2> /dev/null
	wait "$bt"
	exec {in}>&-
	wait "$sess" || rc=1
	echo 0 > /proc/sys/kernel/sframe_user_callchains
	[ "$rc" = 0 ] || cat "$out/$mode.explain" >&2
	return "$rc"
}

# agent_profile: the backend of a stock postmaster, given its tables by
# sframe-agent while its query runs, under perf record -p.
agent_profile() {
	local mode=agent rows=${PG_AGENT_ROWS:-1000000000} rc=0

	stop
	start stock || return 1
	rm -f "$out/$mode".* "$pg/$mode".*
	mkfifo "$pg/$mode.in" || return 1
	session_start "$mode" || return 1
	printf 'EXPLAIN (ANALYZE, TIMING OFF) %s;\n' "$(query_of "$rows")" >&"$in"
	exec {in}>&-
	if ! jit_code "$pid" 120; then
		echo "postgres_profile: agent: the backend has no JIT code" >&2
		rc=1
	elif ! "$PG_AGENT" --cache-dir="$out/agent-cache" -v --once -p "$pid" \
		2> "$out/$mode.log"; then
		echo "postgres_profile: agent: sframe-agent failed:" >&2
		cat "$out/$mode.log" >&2
		rc=1
	elif ! "$perf" record -q --no-buildid -e cpu-clock:u -F 499 \
		--call-graph=sframe -p "$pid" -o "$pg/$mode.data" \
		-- sleep "${PG_AGENT_SECONDS:-3}" >> "$out/$mode.log" 2>&1; then
		echo "postgres_profile: agent: perf record failed:" >&2
		cat "$out/$mode.log" >&2
		rc=1
	fi
	cat "/proc/$pid/maps" > "$out/$mode.maps" 2> /dev/null
	# Recorded: the rest of the query is not needed.
	psql_ -c "SELECT pg_cancel_backend($pid)" > /dev/null
	wait "$sess"
	grep -q 'canceling statement due to user request' "$out/$mode.explain" || {
		echo "postgres_profile: agent: the query ended early:" >&2
		cat "$out/$mode.explain" >&2
		rc=1
	}
	[ "$rc" = 0 ] && "$perf" script -i "$pg/$mode.data" -F ip,sym,dso \
		> "$out/$mode.script" 2> "$out/$mode.script.err" || rc=1
	mv "$pg/$mode.data" "$out/$mode.data" 2> /dev/null
	return "$rc"
}

# profile MODE: one session's backend under perf record.
profile() {
	local mode=$1 ctl ack reply rec rc=0

	case "$mode" in
	bpftrace-fp | bpftrace-sframe)
		bpftrace_profile "${mode#bpftrace-}"
		return
		;;
	agent)
		agent_profile
		return
		;;
	esac
	rm -f "$out/$mode".* "$pg/$mode".*
	mkfifo "$pg/$mode.in" "$pg/$mode.ctl" "$pg/$mode.ack" || return 1
	# The session connects, then waits for its input.
	session_start "$mode" || return 1
	# Without the session's input, which must end when ours is closed;
	# reading the backend's maps takes more than perf's default half a
	# second under emulation, and a map left out is a frame unnamed.
	# Into the guest's tmpfs and through a 4 MiB buffer: dwarf's 8 KiB
	# stack copies, written over 9p on a busy host, lost half the
	# samples and the JIT's mappings with them.
	"$perf" record -q --no-buildid -e cpu-clock:u -F 499 -m 1024 \
		--call-graph="$mode" -D -1 --proc-map-timeout=60000 \
		--control="fifo:$pg/$mode.ctl,$pg/$mode.ack" -p "$pid" \
		-o "$pg/$mode.data" > "$out/$mode.log" 2>&1 {in}>&- &
	rec=$!
	# Its events on, and perf's word for it, before the query starts.
	exec {ctl}> "$pg/$mode.ctl" {ack}< "$pg/$mode.ack"
	echo enable >&"$ctl"
	if ! read -r -t 120 reply <&"$ack" || [ "$reply" != ack ]; then
		echo "postgres_profile: --call-graph=$mode: perf record did not start:" >&2
		cat "$out/$mode.log" >&2
		rc=1
	else
		printf 'EXPLAIN (ANALYZE, TIMING OFF) %s;\n' "$query" >&"$in"
	fi
	exec {in}>&-
	wait "$sess" || {
		echo "postgres_profile: --call-graph=$mode: the query failed:" >&2
		cat "$out/$mode.explain" >&2
		rc=1
	}
	# perf record ends on SIGINT, with a status that says so.
	kill -INT "$rec"
	wait "$rec"
	exec {ctl}>&- {ack}<&-
	[ "$rc" = 0 ] && script "$mode" "$pid" || rc=1
	mv "$pg/$mode.data" "$out/$mode.data" || rc=1
	return "$rc"
}

# script MODE PID: perf script of the backend's samples; with
# PG_SCRIPT_JIT_ONLY=1 only of those taken in the JIT's code, by the
# names in its perf map: perf's DWARF unwinder takes most of a second a
# sample under software emulation, and the JIT's share is what counts.
script() {
	local mode=$1 pid=$2 syms=()

	if [ "${PG_SCRIPT_JIT_ONLY:-0}" = 1 ]; then
		syms=(-S "$(awk '{ print $3 }' "/tmp/perf-$pid.map" 2> /dev/null |
			sort -u | paste -s -d ,)")
		[ "${syms[1]}" ] || {
			echo "postgres_profile: --call-graph=$mode:" \
				"no names in /tmp/perf-$pid.map" >&2
			return 1
		}
	fi
	"$perf" script -i "$pg/$mode.data" "${syms[@]}" \
		> "$out/$mode.script" 2> "$out/$mode.script.err" && [ -s "$out/$mode.script" ]
}

setup || exit 1
start || exit 1
status=0
for mode in "$@"; do
	profile "$mode" || status=1
done
stop
exit "$status"
