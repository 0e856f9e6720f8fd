// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// The churn of tests/java_vm.sh: code that comes and goes while perf
// samples.  Each round loads class Work anew in a class loader of its
// own, runs it until C2 has compiled it, and drops the loader; the
// collection that follows unloads the class and its compiled code, and
// the next round's code may reuse that memory.  Meanwhile a call site
// in mix() that saw one Shape for many rounds sees others: the code C2
// compiled for one receiver is deoptimized and compiled again.
//
//   java Churn ROUNDS WORK_DIR
//
// WORK_DIR holds Work.class, which is not on the class path.  The
// test keeps the methods below from being inlined
// (-XX:CompileCommand=dontinline), so that their chains are exact:
//
//   main -> round -> Work.run -> Work.hot
//   main -> round -> mix
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;

public class Churn {
	public interface Task {
		long run(long n);
	}

	interface Shape {
		long area(long x);
	}

	static final class Square implements Shape {
		public long area(long x) { return x * x; }
	}

	static final class Circle implements Shape {
		public long area(long x) { return 3 * x * x + (x >>> 2); }
	}

	static final class Tri implements Shape {
		public long area(long x) { return (x * x) >>> 1; }
	}

	static long sink;

	static long mix(Shape s, long n) {
		long acc = 0;
		for (long i = 0; i < n; i++)
			acc += s.area(i ^ acc);
		return acc;
	}

	static void round(URL[] path, int r, long n) throws Exception {
		URLClassLoader loader = new URLClassLoader(path,
			Churn.class.getClassLoader());
		Task t = (Task)loader.loadClass("Work")
			.getDeclaredConstructor().newInstance();
		Shape[] shapes = { new Square(), new Circle(), new Tri() };

		sink += t.run(n);
		sink += mix(shapes[r < 8 ? 0 : r % 3], n);
		loader.close();
	}

	public static void main(String[] args) throws Exception {
		int rounds = Integer.parseInt(args[0]);
		URL[] path = { new File(args[1]).toURI().toURL() };
		long n = args.length > 2 ? Long.parseLong(args[2]) : 200000;

		for (int r = 0; r < rounds; r++) {
			round(path, r, n);
			System.gc();
		}
		System.out.println(sink);
	}
}
