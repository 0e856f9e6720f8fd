# SPDX-License-Identifier: GPL-2.0
#
# java_vm.sh's tally, after perf_stacks.awk: of the samples whose first
# frame is in JIT code named as the first method of one of the chains
# of the file the variable chains names (one per line, leaf first, down
# to the thread's first Java frame), those whose Java frames are exactly
# one such chain, each frame the method it names or the interpreter
# running it, and whose stack then goes on, through frames that all fall
# in some object, to the launcher's JavaMain and ThreadJavaMain and into
# libc, where the Java main thread starts.

function jit(i) {
	return dso($i) ~ /\/perf-[0-9]+\.map$/
}

function java_frames_match(c,    k, i, want) {
	k = split(chain[c], want, " ")
	if (NF < k)
		return 0
	for (i = 1; i <= k; i++) {
		if (!jit(i))
			return 0
		if (sym($i) != want[i] && (i == 1 || sym($i) != "Interpreter"))
			return 0
	}
	return k + 1
}

function exact(    c, i) {
	for (c = 1; c <= nchains; c++) {
		i = java_frames_match(c)
		if (!i || sym($i) == "Interpreter" || sym($i) in method)
			continue
		for (; i < NF; i++) {
			if (sym($i) == "JavaMain" &&
			    sym($(i + 1)) == "ThreadJavaMain" &&
			    dso($(i + 2)) ~ /\/libc\.so\.6$/)
				return 1
			if (dso($i) == "" || dso($i) == "[unknown]" ||
			    sym($i) == "[stale]")
				return 0
		}
	}
	return 0
}

BEGIN {
	rs = RS
	RS = "\n"
	while ((getline line < chains) > 0) {
		if (line ~ /^[ \t]*(#|$)/)
			continue
		chain[++nchains] = line
		for (i = split(line, w, " "); i > 0; i--)
			method[w[i]] = 1
		leaf[w[1]] = 1
	}
	RS = rs
}

{
	if (!jit(1) || !(sym($1) in leaf))
		next
	total++
	if (exact())
		pick(1)
}
