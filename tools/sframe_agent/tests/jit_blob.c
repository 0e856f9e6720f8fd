// SPDX-License-Identifier: GPL-2.0
/*
 * The code jit_direct "generates": linked on its own at a fixed
 * address, without frame pointers, with the .eh_frame that describes
 * it there.  jit_direct copies its segments to those addresses and
 * hands the whole file to the GDB JIT interface as the object
 * describing it, as a JIT that emits ELF does, or the .eh_frame to
 * __register_frame(), as LLVM's JITs do.  The code touches no data of
 * its own.
 */

__attribute__((noinline)) long blob_leaf(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++) {
		s += (i * i) ^ (s >> 3);
		/* The loop stays a loop: its sum is "used" each turn. */
		__asm__ volatile("" : "+r"(s));
	}
	return s;
}

__attribute__((noinline)) long blob_mid(long n)
{
	return blob_leaf(n) + 1;
}

__attribute__((noinline)) long blob_entry(long n)
{
	return blob_mid(n) * 3;
}
