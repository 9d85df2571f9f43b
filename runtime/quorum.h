/*
 * No split brain: the majority rule (UCFT_QUORUM, docs/detector.md).
 *
 * After a partition each side's detector declares the other side failed,
 * and without a rule both sides would go on, each with a result of its
 * own. With the rule, a rank goes on only while the ranks it holds alive
 * are a strict majority of the last agreed membership; in a tie (exactly
 * half) the half that holds the lowest-numbered live rank of that
 * membership goes on. Every other rank fences: it ends as a rank the job
 * declared failed does (monitor.c, the documented abort), and a healed link
 * does not bring it back.
 *
 * The agreed membership is the world until the communicator layer's
 * agreement sets it (rt_quorum_agree). With `settle_ns` > 0
 * (UCFT_QUORUM_SETTLE) a failure view that stood unchanged that long
 * becomes the membership too, so that failures spread over time (a
 * crash, later another) shrink it step by step, each step needing a
 * majority of the one before. That is safe only if every partition is
 * detected whole within `settle_ns`: the ring declares the other side
 * one re-target at a time, and a minority that rebases between two of
 * its declarations can end up with a majority of its own shrunken view.
 * Hence the default 0: never (docs/detector.md).
 *
 * Why it is safe: the live sets of two sides of a partition are disjoint
 * subsets of the same agreed membership of m ranks; two disjoint sets
 * cannot both hold more than m/2, and of two halves exactly one holds
 * the membership's lowest rank. Failures only shrink a view, so a side
 * that ends with a majority never saw less on the way.
 * tests/unit/test_quorum.c checks this for every partition of up to 10
 * ranks with up to 2 failures known before; tests/sim/test_quorum_sim.c
 * with the real detector on the sim for every partition of up to 8.
 *
 * Pure bookkeeping: no clock read (callers pass `now`), no I/O, one
 * allocation at init. Thread: the one driving the detector.
 */
#ifndef UCFT_RT_QUORUM_H
#define UCFT_RT_QUORUM_H

#include "ucft.h"

#include <stdint.h>

typedef struct rt_quorum {
    int size;              /* the world */
    uint64_t settle_ns;    /* a view unchanged this long is agreed */
    unsigned char *failed; /* [size]: declared by our detector */
    unsigned char *member; /* [size]: in the last agreed membership */
    int live;              /* ranks alive in our view */
    int base;              /* live ranks of the agreed membership */
    int lowest;            /* its lowest rank (the tie holder) */
    uint64_t changed_ns;   /* when our view last changed */
    int lost;              /* we fenced: sticky */
} rt_quorum_t;

ucft_status_t rt_quorum_init(rt_quorum_t *q, int size, uint64_t settle_ns,
                             uint64_t now);
void rt_quorum_cleanup(rt_quorum_t *q);

/* Our detector declared `rank` failed at `now`. Returns 1 while this rank
 * holds a quorum, 0 once it does not (and for good after that). A view
 * that stood `settle_ns` before this failure becomes the agreed
 * membership first. */
int rt_quorum_on_failed(rt_quorum_t *q, int rank, uint64_t now);

/* The membership is our current view from now on (the settle rule above;
 * no agreement calls it yet: a shrink of the world does not rebase the
 * quorum, docs/detector.md). */
void rt_quorum_agree(rt_quorum_t *q, uint64_t now);

/* The majority gate (coll_args_t.gate): 1 when the ranks marked in
 * held[size] (world ranks holding a result) cover the quorum, i.e. the
 * members of the agreed membership outside them could not hold it: no
 * strict majority, and in a tie not the tie holder. Then every side of a
 * partition that goes on holds one of them. */
int rt_quorum_covers(const rt_quorum_t *q, const unsigned char *held);

#endif
