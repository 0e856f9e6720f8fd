// SPDX-License-Identifier: GPL-2.0
/*
 * A C++ program for the cross-checks: template instances, virtual calls,
 * exceptions thrown through frames (landing pads split code into hot and
 * cold parts), and std::sort with a lambda, inlined into the program.
 *
 *	work_cxx [SECONDS]
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

namespace {

unsigned long rng = 2463534242UL;

unsigned long next_rand()
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct Node {
	virtual ~Node() = default;
	virtual long eval(int depth, long x) = 0;
};

std::unique_ptr<Node> make_node(int kind);

template <int N>
__attribute__((noinline)) long spin(long x)
{
	for (int i = 0; i < N * 50; i++)
		x = x * 2862933555777941757L + 3037000493L;
	return x;
}

long descend(int depth, long x);

struct Sum : Node {
	long eval(int depth, long x) override
	{
		std::vector<long> v(8 + (x & 31));
		for (auto &e : v)
			e = spin<3>(x++);
		std::sort(v.begin(), v.end(),
			  [](long a, long b) { return (a ^ 0x55) < (b ^ 0x55); });
		return descend(depth - 1, v.front()) + v.back();
	}
};

struct Throw : Node {
	long eval(int depth, long x) override
	{
		long r = spin<7>(x);
		if ((r & 7) == 0)
			throw std::runtime_error("odd");
		return descend(depth - 1, r) ^ r;
	}
};

struct Catch : Node {
	long eval(int depth, long x) override
	{
		try {
			return descend(depth - 1, spin<2>(x)) * 3;
		} catch (const std::exception &) {
			return spin<5>(x) + 1;
		}
	}
};

struct Table : Node {
	std::map<long, long> m;
	long eval(int depth, long x) override
	{
		for (int i = 0; i < 16; i++)
			m[spin<1>(x + i) & 255] += i;
		return descend(depth - 1, m.begin()->second + x);
	}
};

std::unique_ptr<Node> make_node(int kind)
{
	switch (kind) {
	case 0:
		return std::make_unique<Sum>();
	case 1:
		return std::make_unique<Throw>();
	case 2:
		return std::make_unique<Catch>();
	default:
		return std::make_unique<Table>();
	}
}

__attribute__((noinline)) long descend(int depth, long x)
{
	if (depth <= 0)
		return spin<20>(x);
	return make_node(next_rand() % 4)->eval(depth, x) + 1;
}

double cpu_seconds()
{
	timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

} // namespace

int main(int argc, char **argv)
{
	double end = cpu_seconds() + (argc > 1 ? atof(argv[1]) : 3);
	unsigned long rounds = 0, thrown = 0;
	long sum = 0;

	while (cpu_seconds() < end) {
		try {
			sum += descend(4 + next_rand() % 24, sum);
		} catch (const std::exception &) {
			thrown++;
		}
		rounds++;
	}
	std::printf("work_cxx: %lu rounds, %lu thrown, checksum %lx\n", rounds,
		    thrown, sum);
	return 0;
}
