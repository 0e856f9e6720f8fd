#!/usr/bin/awk -f
# Fold the samples of "perf script" (its default output, with call
# chains) into one line per distinct stack, outermost frame first:
#
#	main;jit:f;jit:g;spin 42
#
# for mk/demo/flamegraph.c.  A frame is its symbol without the "+0x..."
# offset; kernel symbols get "_[k]" appended; a frame perf could not name
# is "[unknown]".  A sample with no frame at all counts as "[no stack]".
# Lines come out in no particular order (POSIX awk): pipe them to sort
# for a stable file.

function flush(    i, s) {
	if (!in_sample)
		return
	s = nframes ? frame[nframes] : "[no stack]"
	for (i = nframes - 1; i >= 1; i--)
		s = s ";" frame[i]
	count[s]++
	in_sample = 0
	nframes = 0
}

# "    addr sym+0x1f (dso)": the part between the address and the dso.
function frame_name(line,    dso, sym) {
	sub(/^[ \t]+[0-9a-fA-F]+[ \t]+/, "", line)
	dso = ""
	if (match(line, / \([^()]*\)$/)) {
		dso = substr(line, RSTART + 2, RLENGTH - 3)
		line = substr(line, 1, RSTART - 1)
	}
	sym = line
	sub(/\+0x[0-9a-fA-F]+$/, "", sym)
	if (sym == "" || sym == "[unknown]")
		return "[unknown]"
	gsub(/;/, ":", sym)
	if (dso ~ /^\[kernel\.kallsyms\]/ || dso ~ /^\[guest\.kernel/)
		sym = sym "_[k]"
	return sym
}

/^[ \t]*$/ { flush(); next }
/^[ \t]/ { if (in_sample) frame[++nframes] = frame_name($0); next }
{ flush(); in_sample = 1 }

END {
	flush()
	for (s in count)
		print s, count[s]
}
