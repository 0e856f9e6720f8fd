#!/usr/bin/awk -f
# The verdict of make demo, from folded stacks (mk/demo/fold.awk): of the
# samples taken in JIT code ("jit:" frames) or in spin(), the code that
# main() runs, how many have main on their stack.  Prints "REACHED TOTAL".
{
	n = $NF
	stack = $0
	sub(/ [0-9]+$/, "", stack)
	k = split(stack, f, ";")
	if (f[k] !~ /^jit:/ && f[k] != "spin")
		next
	total += n
	for (i = 1; i <= k; i++) {
		if (f[i] == "main") {
			reached += n
			break
		}
	}
}

END { print reached + 0, total + 0 }
