# SPDX-License-Identifier: GPL-2.0
#
# With perf_stacks.awk: of the samples whose leaf frame is in an object
# matching the variable leaf (or, with leafsym, whose function matches
# that), those whose stack reaches main: a frame in
# libc.so.6 right above one in an object matching exe (main, called by
# __libc_start_call_main).

(leafsym != "" ? sym($1) ~ leafsym : dso($1) ~ leaf) {
	total++
	for (i = 2; i <= NF; i++)
		if (dso($i) ~ /\/libc\.so\.6$/ && dso($(i - 1)) ~ exe) {
			pick(1)
			break
		}
}
