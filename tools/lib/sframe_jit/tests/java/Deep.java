// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// The Java workload of tests/java_vm.sh: a hot loop C2 compiles five Java
// frames deep (main -> level1 -> ... -> level5) and the same loop at the
// bottom of a recursion (main -> rec x 11 -> level5), a fixed amount of
// work.  The test keeps these methods from being inlined
// (-XX:CompileCommand=dontinline), so that each is a frame of its own
// and the chain a sample must show is known exactly.
//
//   java Deep ROUNDS [GO_FILE]
//
// With GO_FILE, runs a tenth of ROUNDS, prints "ready", waits until
// GO_FILE exists, then runs ROUNDS: the test attaches to it meanwhile.
import java.io.File;

public class Deep {
	static final int DEPTH = 10;
	static long sink;

	static long level5(long x) {
		long s = x;
		for (int i = 0; i < 2000; i++)
			s += (s ^ i) * 31 + (s >>> 7);
		return s;
	}

	static long level4(long x) { return level5(x + 4) + 1; }
	static long level3(long x) { return level4(x + 3) + 1; }
	static long level2(long x) { return level3(x + 2) + 1; }
	static long level1(long x) { return level2(x + 1) + 1; }

	static long rec(int n, long x) {
		if (n == 0)
			return level5(x);
		return rec(n - 1, x + n) + 1;
	}

	static void run(long rounds) {
		for (long i = 0; i < rounds; i++) {
			sink += level1(i);
			sink += rec(DEPTH, i);
		}
	}

	public static void main(String[] args) throws Exception {
		long rounds = Long.parseLong(args[0]);

		if (args.length > 1) {
			run(rounds / 10);
			System.out.println("ready");
			System.out.flush();
			while (!new File(args[1]).exists())
				Thread.sleep(50);
		}
		run(rounds);
		System.out.println(sink);
	}
}
