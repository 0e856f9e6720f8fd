// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Loaded anew each round of Churn.java by a class loader of its own, and
// unloaded with it.
public class Work implements Churn.Task {
	static long hot(long x) {
		long s = x;
		for (int i = 0; i < 500; i++)
			s += (s ^ i) * 17 + (s >>> 5);
		return s;
	}

	public long run(long n) {
		long acc = 0;
		for (long i = 0; i < n / 100; i++)
			acc += hot(i + acc);
		return acc;
	}
}
