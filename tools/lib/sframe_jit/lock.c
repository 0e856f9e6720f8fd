// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The writer lock of a registry: a futex word, as the mutex of Ulrich
 * Drepper's "Futexes Are Tricky" (its third version), with a short spin
 * before sleeping and a count of the waits.
 *
 * A pthread mutex cost an append about 55 of its instructions, more than
 * the stores it protects; this lock costs one compare-and-swap to take
 * and one exchange to drop when no one waits.  Writers hold it for tens
 * of nanoseconds, except while the registry grows (a system call) or
 * compacts, so a waiter spins a little before it sleeps in the kernel.
 * Documentation/sframe_jit.rst says why writers take a lock at all.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sframe_jit_internal.h"

/* About a microsecond of polling, the time of a few appends. */
#define LOCK_SPINS	256

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static void futex_wait(atomic_uint *word, uint32_t val)
{
	/* EAGAIN (the word moved on) and EINTR just send us round again. */
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static bool spin_take(struct sframe_jit_lock *l)
{
	unsigned int free_val;
	int i;

	for (i = 0; i < LOCK_SPINS; i++) {
		free_val = SFRAME_JIT_LOCK_FREE;
		if (atomic_load_explicit(&l->state, memory_order_relaxed) ==
		    SFRAME_JIT_LOCK_FREE &&
		    atomic_compare_exchange_weak_explicit(&l->state, &free_val,
							  SFRAME_JIT_LOCK_HELD,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

/**
 * sframe_jit__lock_slow() - take a writer lock that another thread holds
 * @l: the lock.
 *
 * Spins, then sleeps on the futex, having marked the word as waited on
 * so that the holder wakes one sleeper when it lets go.  Counts the wait
 * and its time, under the lock once taken.
 */
void sframe_jit__lock_slow(struct sframe_jit_lock *l)
{
	uint64_t t0 = now_ns();

	if (!spin_take(l)) {
		while (atomic_exchange_explicit(&l->state,
						SFRAME_JIT_LOCK_WAITED,
						memory_order_acquire) !=
		       SFRAME_JIT_LOCK_FREE)
			futex_wait(&l->state, SFRAME_JIT_LOCK_WAITED);
	}
	l->nr_waits++;
	l->wait_ns += now_ns() - t0;
}

/**
 * sframe_jit__lock_wake() - wake one thread sleeping on a writer lock
 * @l: the lock, just dropped.
 */
void sframe_jit__lock_wake(struct sframe_jit_lock *l)
{
	syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
