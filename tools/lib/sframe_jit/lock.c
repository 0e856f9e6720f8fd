// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The writer lock of a registry: a futex word, the mutex of Ulrich
 * Drepper's "Futexes Are Tricky" (its third version) with the two
 * states "held" and "may have sleepers" as bits of the word, a short
 * spin before sleeping, and a count of the waits.
 *
 * A pthread mutex cost an append about 55 of its instructions, more than
 * the stores it protects.  Uncontended, this lock costs one atomic
 * instruction to take (set the held bit, see that it was clear) and one
 * to drop (subtract it, see that nothing else was set).  Writers hold it
 * for tens of nanoseconds, except while the registry grows (a system
 * call) or compacts, so a waiter spins a little before it sleeps in the
 * kernel.  Documentation/sframe_jit.rst says why writers take a lock at
 * all.
 *
 * The states: 0 free; HELD; HELD | WAITERS, held with threads that may
 * sleep on the word; WAITERS, let go by a holder that is about to wake
 * one of them.  A sleeper sleeps only on HELD | WAITERS, so a holder
 * that drops the lock sees WAITERS and wakes it; a thread that takes the
 * lock while WAITERS is set inherits that duty.
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
	int i;

	for (i = 0; i < LOCK_SPINS; i++) {
		if (!(atomic_load_explicit(&l->state, memory_order_relaxed) &
		      SFRAME_JIT_LOCK_HELD) &&
		    sframe_jit__trylock(l))
			return true;
	}
	return false;
}

/**
 * sframe_jit__lock_slow() - take a writer lock that another thread holds
 * @l: the lock.
 *
 * Spins, then sleeps on the futex, having marked the word as waited on
 * so that the holder wakes one sleeper when it lets go.  The lock is
 * taken with WAITERS set, since others may still sleep.  Counts the wait
 * and its time, under the lock once taken.
 */
void sframe_jit__lock_slow(struct sframe_jit_lock *l)
{
	uint64_t t0 = now_ns();

	if (!spin_take(l)) {
		while (atomic_exchange_explicit(&l->state,
						SFRAME_JIT_LOCK_WAITED,
						memory_order_acquire) &
		       SFRAME_JIT_LOCK_HELD)
			futex_wait(&l->state, SFRAME_JIT_LOCK_WAITED);
	}
	l->nr_waits++;
	l->wait_ns += now_ns() - t0;
}

/**
 * sframe_jit__lock_wake() - wake a thread sleeping on a writer lock
 * @l: the lock, just dropped with WAITERS set.
 *
 * Clears WAITERS and wakes one sleeper, which sets it again if others
 * remain.  If a thread took the lock in between, the bit is its to
 * clear: it wakes a sleeper when it lets go.
 */
void sframe_jit__lock_wake(struct sframe_jit_lock *l)
{
	unsigned int waiters = SFRAME_JIT_LOCK_WAITERS;

	if (atomic_compare_exchange_strong_explicit(&l->state, &waiters,
						    SFRAME_JIT_LOCK_FREE,
						    memory_order_relaxed,
						    memory_order_relaxed))
		syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}
