# SPDX-License-Identifier: GPL-2.0
#
# qemu_tcg_vm.sh's tally, after perf_stacks.awk: of the samples whose
# leaf is code_gen_buffer from the perf map, those whose caller is QEMU's
# (with jit_only, what the translated code's row gives alone), or whose
# every frame is the vCPU thread's: QEMU and its TCG module through
# cpu_exec() and tcg_cpus_exec(), the thread's start function in QEMU,
# then libc's start_thread() and clone3().  With anon, there is no perf
# map (sframe-agent writes none): the leaf is translated code when it is
# in anonymous memory, where QEMU's only code is its code buffer, and
# which perf names //anon, [unknown] or, for executable memory, the perf
# map's path even when there is no such file.

# QEMU and its TCG module, whose static functions have no names in
# Debian's stripped build: only their objects say where a frame is.
function qemu(line) {
	return dso(line) ~ /\/(qemu-system-x86_64|accel-tcg-x86_64\.so)$/
}

function exact(    i, named) {
	if (dso($2) !~ /\/qemu-system-x86_64$/)
		return 0
	if (jit_only)
		return 1
	for (i = 2; i <= NF - 2; i++) {
		if (!qemu($i))
			return 0
		if (sym($i) == "cpu_exec" || sym($i) == "tcg_cpus_exec")
			named++
	}
	return named == 2 && dso($(NF - 2)) ~ /\/qemu-system-x86_64$/ &&
	       sym($(NF - 1)) == "start_thread" &&
	       dso($(NF - 1)) ~ /\/libc\.so\.6$/ &&
	       sym($NF) == "clone3" && dso($NF) ~ /\/libc\.so\.6$/
}

function translated(line) {
	if (anon)
		return dso(line) ~ /^(\/\/anon|\[unknown\]|\/tmp\/perf-[0-9]+\.map)$/
	return sym(line) == "code_gen_buffer" &&
	       dso(line) ~ /\/perf-[0-9]+\.map$/
}

{
	if (!translated($1))
		next
	total++
	if (exact())
		pick(1)
}
