// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// The Java workload of tests/java_vm.sh and make demo's third act: a hot
// loop C2 compiles five Java frames deep (main -> run -> level1 -> ...
// -> level5) and the same loop at the bottom of a recursion (main -> run
// -> rec x 11 -> level5), a fixed amount of work, run with the JVM's
// default flags.  Each of these methods is a frame of its own, so that the chain
// a sample must show is known exactly: each carries a block that never
// runs (cold is 0) but makes its bytecode longer than C2 inlines
// (-XX:FreqInlineSize, 325 bytes).
//
//   java Deep ROUNDS [GO_FILE [WARM]]
//
// With GO_FILE, first runs WARM rounds (20000: enough for C2 to have
// compiled every method), prints "ready", waits until GO_FILE exists,
// then runs ROUNDS: the test starts its profiler, or attaches the
// agent, meanwhile.
import java.io.File;

public class Deep {
	static final int DEPTH = 10;
	static final int cold = Integer.getInteger("deep.cold", 0);
	static long sink;

	static long level5(long x) {
		long s = x;

		if (cold != 0) {
			s = s * 31 + 1; s = s * 33 + 2; s = s * 35 + 3; s = s * 37 + 4; s = s * 39 + 5; s = s * 41 + 6;
			s = s * 43 + 7; s = s * 45 + 8; s = s * 47 + 9; s = s * 49 + 10; s = s * 51 + 11; s = s * 53 + 12;
			s = s * 55 + 13; s = s * 57 + 14; s = s * 59 + 15; s = s * 61 + 16; s = s * 63 + 17; s = s * 65 + 18;
			s = s * 67 + 19; s = s * 69 + 20; s = s * 71 + 21; s = s * 73 + 22; s = s * 75 + 23; s = s * 77 + 24;
			s = s * 79 + 25; s = s * 81 + 26; s = s * 83 + 27; s = s * 85 + 28; s = s * 87 + 29; s = s * 89 + 30;
			s = s * 91 + 31; s = s * 93 + 32; s = s * 95 + 33; s = s * 97 + 34; s = s * 99 + 35; s = s * 101 + 36;
		}
		for (int i = 0; i < 2000; i++)
			s += (s ^ i) * 31 + (s >>> 7);
		return s;
	}

	static long level4(long x) {
		long s = level5(x + 4);

		if (cold != 0) {
			s = s * 31 + 1; s = s * 33 + 2; s = s * 35 + 3; s = s * 37 + 4; s = s * 39 + 5; s = s * 41 + 6;
			s = s * 43 + 7; s = s * 45 + 8; s = s * 47 + 9; s = s * 49 + 10; s = s * 51 + 11; s = s * 53 + 12;
			s = s * 55 + 13; s = s * 57 + 14; s = s * 59 + 15; s = s * 61 + 16; s = s * 63 + 17; s = s * 65 + 18;
			s = s * 67 + 19; s = s * 69 + 20; s = s * 71 + 21; s = s * 73 + 22; s = s * 75 + 23; s = s * 77 + 24;
			s = s * 79 + 25; s = s * 81 + 26; s = s * 83 + 27; s = s * 85 + 28; s = s * 87 + 29; s = s * 89 + 30;
			s = s * 91 + 31; s = s * 93 + 32; s = s * 95 + 33; s = s * 97 + 34; s = s * 99 + 35; s = s * 101 + 36;
		}
		return s + 1;
	}

	static long level3(long x) {
		long s = level4(x + 3);

		if (cold != 0) {
			s = s * 31 + 1; s = s * 33 + 2; s = s * 35 + 3; s = s * 37 + 4; s = s * 39 + 5; s = s * 41 + 6;
			s = s * 43 + 7; s = s * 45 + 8; s = s * 47 + 9; s = s * 49 + 10; s = s * 51 + 11; s = s * 53 + 12;
			s = s * 55 + 13; s = s * 57 + 14; s = s * 59 + 15; s = s * 61 + 16; s = s * 63 + 17; s = s * 65 + 18;
			s = s * 67 + 19; s = s * 69 + 20; s = s * 71 + 21; s = s * 73 + 22; s = s * 75 + 23; s = s * 77 + 24;
			s = s * 79 + 25; s = s * 81 + 26; s = s * 83 + 27; s = s * 85 + 28; s = s * 87 + 29; s = s * 89 + 30;
			s = s * 91 + 31; s = s * 93 + 32; s = s * 95 + 33; s = s * 97 + 34; s = s * 99 + 35; s = s * 101 + 36;
		}
		return s + 1;
	}

	static long level2(long x) {
		long s = level3(x + 2);

		if (cold != 0) {
			s = s * 31 + 1; s = s * 33 + 2; s = s * 35 + 3; s = s * 37 + 4; s = s * 39 + 5; s = s * 41 + 6;
			s = s * 43 + 7; s = s * 45 + 8; s = s * 47 + 9; s = s * 49 + 10; s = s * 51 + 11; s = s * 53 + 12;
			s = s * 55 + 13; s = s * 57 + 14; s = s * 59 + 15; s = s * 61 + 16; s = s * 63 + 17; s = s * 65 + 18;
			s = s * 67 + 19; s = s * 69 + 20; s = s * 71 + 21; s = s * 73 + 22; s = s * 75 + 23; s = s * 77 + 24;
			s = s * 79 + 25; s = s * 81 + 26; s = s * 83 + 27; s = s * 85 + 28; s = s * 87 + 29; s = s * 89 + 30;
			s = s * 91 + 31; s = s * 93 + 32; s = s * 95 + 33; s = s * 97 + 34; s = s * 99 + 35; s = s * 101 + 36;
		}
		return s + 1;
	}

	static long level1(long x) {
		long s = level2(x + 1);

		if (cold != 0) {
			s = s * 31 + 1; s = s * 33 + 2; s = s * 35 + 3; s = s * 37 + 4; s = s * 39 + 5; s = s * 41 + 6;
			s = s * 43 + 7; s = s * 45 + 8; s = s * 47 + 9; s = s * 49 + 10; s = s * 51 + 11; s = s * 53 + 12;
			s = s * 55 + 13; s = s * 57 + 14; s = s * 59 + 15; s = s * 61 + 16; s = s * 63 + 17; s = s * 65 + 18;
			s = s * 67 + 19; s = s * 69 + 20; s = s * 71 + 21; s = s * 73 + 22; s = s * 75 + 23; s = s * 77 + 24;
			s = s * 79 + 25; s = s * 81 + 26; s = s * 83 + 27; s = s * 85 + 28; s = s * 87 + 29; s = s * 89 + 30;
			s = s * 91 + 31; s = s * 93 + 32; s = s * 95 + 33; s = s * 97 + 34; s = s * 99 + 35; s = s * 101 + 36;
		}
		return s + 1;
	}

	static long rec(int n, long x) {
		long s;

		if (n == 0)
			return level5(x);
		s = rec(n - 1, x + n);
		if (cold != 0) {
			s = s * 31 + 1; s = s * 33 + 2; s = s * 35 + 3; s = s * 37 + 4; s = s * 39 + 5; s = s * 41 + 6;
			s = s * 43 + 7; s = s * 45 + 8; s = s * 47 + 9; s = s * 49 + 10; s = s * 51 + 11; s = s * 53 + 12;
			s = s * 55 + 13; s = s * 57 + 14; s = s * 59 + 15; s = s * 61 + 16; s = s * 63 + 17; s = s * 65 + 18;
			s = s * 67 + 19; s = s * 69 + 20; s = s * 71 + 21; s = s * 73 + 22; s = s * 75 + 23; s = s * 77 + 24;
			s = s * 79 + 25; s = s * 81 + 26; s = s * 83 + 27; s = s * 85 + 28; s = s * 87 + 29; s = s * 89 + 30;
			s = s * 91 + 31; s = s * 93 + 32; s = s * 95 + 33; s = s * 97 + 34; s = s * 99 + 35; s = s * 101 + 36;
		}
		return s + 1;
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
			run(args.length > 2 ? Long.parseLong(args[2]) : 20000);
			System.out.println("ready");
			System.out.flush();
			while (!new File(args[1]).exists())
				Thread.sleep(50);
		}
		run(rounds);
		System.out.println(sink);
	}
}
