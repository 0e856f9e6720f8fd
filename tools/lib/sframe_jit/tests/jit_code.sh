# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the VM tests that attach sframe-agent to a running JIT.
#
# jit_code PID [SECONDS]: wait, up to SECONDS (default 20), until PID
# has anonymous executable memory, a JIT's first code.  LLVM's
# RuntimeDyld hands the object's .eh_frame to libgcc before it makes the
# code executable, so a JIT's first registration is done by then too.
jit_code() {
	local i n=$((${2:-20} * 10))

	for ((i = 0; i < n; i++)); do
		awk '$2 ~ /x/ && NF == 5 { f = 1 } END { exit !f }' \
			"/proc/$1/maps" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}
