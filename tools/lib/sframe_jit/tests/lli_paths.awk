# SPDX-License-Identifier: GPL-2.0
#
# sframe_run_jit_vm.sh's tally, after perf_stacks.awk: of the samples
# whose first frame is leaf, those with the JIT's four frames from the
# perf map and then (unless jit_only) only frames of lli and libLLVM
# down to lli's main and libc's __libc_start_call_main.

function exact(    i, want) {
	split("leaf func_b func_a main", want, " ")
	for (i = 1; i <= 4; i++)
		if (sym($i) != want[i] || dso($i) !~ /\/perf-[0-9]+\.map$/)
			return 0
	if (jit_only)
		return 1
	for (i = 5; i < NF; i++) {
		if (sym($i) == "main" && dso($i) ~ /\/lli$/ &&
		    sym($(i + 1)) == "__libc_start_call_main" &&
		    dso($(i + 1)) ~ /\/libc\.so\.6$/)
			return 1
		if (sym($i) == "[unknown]" ||
		    dso($i) !~ /\/(lli|libLLVM-14\.so\.1)$/)
			return 0
	}
	return 0
}

{
	if (sym($1) != "leaf")
		next
	total++
	if (exact())
		pick(1)
}
