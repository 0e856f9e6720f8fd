# SPDX-License-Identifier: GPL-2.0
#
# java_vm.sh's tally, after perf_stacks.awk: of the samples whose first
# frame is compiled code of Deep (tests/java/Deep.java, named by the
# agent's perf map), those whose Java frames are exactly one of Deep's
# two call paths and whose stack then goes on, through frames that all
# fall in some object, to the launcher's JavaMain and ThreadJavaMain and
# into libc, where the Java main thread starts.
#
#   main -> level1 -> level2 -> level3 -> level4 -> level5
#   main -> rec x (depth + 1) -> level5
#
# depth is Deep.DEPTH; main may still run in the interpreter.

function jit(i) {
	return dso($i) ~ /\/perf-[0-9]+\.map$/
}

# The index of the frame after the Java frames of the two paths, or 0.
function java_frames(    i, k, n) {
	i = 1
	if (sym($1) ~ /^Deep\.level[1-5]$/) {
		k = substr(sym($1), 11) + 0
		if (k == 5 && sym($2) == "Deep.rec") {
			i = 2
		} else {
			for (; k >= 1; k--) {
				if (sym($i) != "Deep.level" k || !jit(i))
					return 0
				i++
			}
		}
	}
	for (n = 0; sym($i) == "Deep.rec" && jit(i); n++)
		i++
	if (n > depth + 1 || (sym($1) == "Deep.level5" && i > 2 &&
			      n != depth + 1))
		return 0
	if (!jit(i) || (sym($i) != "Deep.main" && sym($i) != "Interpreter"))
		return 0
	return i + 1
}

function exact(    i) {
	i = java_frames()
	if (!i)
		return 0
	for (; i < NF; i++) {
		if (sym($i) == "JavaMain" && sym($(i + 1)) == "ThreadJavaMain" &&
		    dso($(i + 2)) ~ /\/libc\.so\.6$/)
			return 1
		if (dso($i) == "" || dso($i) == "[unknown]")
			return 0
	}
	return 0
}

{
	if (sym($1) !~ /^Deep\./ || !jit(1))
		next
	total++
	if (exact())
		pick(1)
}
