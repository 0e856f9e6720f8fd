# SPDX-License-Identifier: GPL-2.0
#
# What the VM tests' tallies of perf script's stacks share: a sample is a
# paragraph, its frames lines of "ip sym+off (dso)" (perf script -F
# ip,sym,dso, or perf script's default with the sample's header line
# first).  The program given after this file with -f counts in total
# the samples it looks at, and calls pick() on those whose stack is what
# it wants; this file's END prints "picked total", and writes the
# commonest picked stack, by its names, to the file the variable path
# names.

# The function of a frame's line, without its offset.
function sym(line,    s) {
	s = line
	sub(/^[ \t]*[0-9a-f]+ /, "", s)
	sub(/ \([^()]*\)$/, "", s)
	sub(/\+0x[0-9a-f]+$/, "", s)
	return s
}

# The object of a frame's line: a path, or "[unknown]".
function dso(line) {
	if (match(line, /\([^()]*\)$/))
		return substr(line, RSTART + 1, RLENGTH - 2)
	return ""
}

# The sample is picked; its stack is its frames from field @from on.
function pick(from,    i, s) {
	picked++
	s = ""
	for (i = from; i <= NF; i++)
		s = s sym($i) " "
	seen[s]++
}

BEGIN { RS = ""; FS = "\n" }

END {
	for (s in seen)
		if (seen[s] > best) {
			best = seen[s]
			top = s
		}
	print top > path
	printf "%d %d\n", picked, total
}
