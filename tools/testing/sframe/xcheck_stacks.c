// SPDX-License-Identifier: GPL-2.0
/*
 * The rule of the stack cross-check, frame by frame from the interrupted
 * PC outwards.  Each reference, libunwind and backtrace(), is a witness
 * until it goes wrong; at every frame compared, ours must be confirmed:
 *
 *  - where both witnesses have the frame and agree, ours must be that
 *    frame;
 *  - where they disagree, ours must be one of the two, and the other
 *    reference has gone wrong;
 *  - where only one witness has the frame (the other ended, failed to
 *    start, or returned 0), ours must be that frame, and the other has
 *    gone wrong.  With one witness left, for the rest of the sample or
 *    because backtrace() was not asked, ours is checked against it
 *    alone: a frame no reference confirms is a failure, even if the one
 *    reference there could be the one at fault.  Both references failing
 *    on the same frame is far rarer than either failing, and ours
 *    unconfirmed is what this check exists to catch;
 *  - where no witness has the frame, the references have ended, together
 *    or one after the other (libunwind and backtrace() end at _start,
 *    whose caller nothing describes): the comparison ends.
 *
 * A reference that went wrong is a witness no more in that sample: an
 * unwinder steps from the frame it got wrong, so its outer frames are
 * built on it.  A wrong reference is not a failure of the check; the
 * caller counts and prints them.
 */
#include "xcheck_stacks.h"

/* Entries of @w up to its end: @w->n, or its first 0. */
static int xc_len(const struct xc_walk *w)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (!w->pcs[i])
			break;
	return i;
}

/**
 * xc_stacks_compare() - judge our walk of a stack against two references
 * @w: the walks, indexed by enum xc_walker.
 * @want: frames to compare at most: those our tables cover and the one
 *	the last of them returns to.
 * @v: receives the verdict.
 *
 * The rule is at the head of this file.  A sample in which no reference
 * has even the interrupted PC compares nothing (@v->frames is 0) and
 * passes: there is nothing to check ours against.
 *
 * Return: false if ours is wrong at frame @v->bad, true otherwise.
 */
bool xc_stacks_compare(const struct xc_walk w[XC_WALKERS], int want,
		       struct xc_verdict *v)
{
	int len[XC_WALKERS], i, r, other, have;
	bool witness[XC_WALKERS];
	uint64_t pc[XC_WALKERS];

	v->frames = 0;
	v->bad = -1;
	for (r = 0; r < XC_WALKERS; r++) {
		v->ref_bad[r] = -1;
		witness[r] = r != XC_OURS && w[r].n != XC_NOT_RUN;
		len[r] = xc_len(&w[r]);
	}
	for (i = 0; i < want; i++) {
		have = 0;
		for (r = 0; r < XC_WALKERS; r++) {
			pc[r] = i < len[r] ? w[r].pcs[i] : 0;
			have += witness[r] && pc[r];
		}
		if (!have)
			break;
		/* Ours must be what some witness says ... */
		for (r = XC_LIBUNWIND; r < XC_WALKERS; r++)
			if (witness[r] && pc[r] && pc[r] == pc[XC_OURS])
				break;
		if (r == XC_WALKERS) {
			v->bad = i;
			return false;
		}
		/* ... and a witness that says otherwise goes wrong here. */
		other = r == XC_LIBUNWIND ? XC_BACKTRACE : XC_LIBUNWIND;
		if (witness[other] && pc[other] != pc[XC_OURS]) {
			v->ref_bad[other] = i;
			witness[other] = false;
		}
		v->frames = i + 1;
	}
	return true;
}
