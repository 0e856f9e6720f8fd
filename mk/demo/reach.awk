#!/usr/bin/awk -f
# The verdict of make demo, from folded stacks (mk/demo/fold.awk): of the
# samples taken in the code the act is about, how many have main on
# their stack.  Prints "REACHED TOTAL".  That code is, by default, the
# first act's: JIT code ("jit:" frames) or spin(), the code that main()
# runs; -v leaf=ERE takes the samples whose leaf frame matches ERE
# instead (the second act's: "^evalexpr_", PostgreSQL's JIT code).
BEGIN {
	if (leaf == "")
		leaf = "^jit:|^spin$"
}

{
	n = $NF
	stack = $0
	sub(/ [0-9]+$/, "", stack)
	k = split(stack, f, ";")
	if (f[k] !~ leaf)
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
