/*
 * A rank's view of the job's membership: the monotonic set of ranks it
 * knows have failed, and an epoch that counts them (epoch = number of
 * failed ranks known; it only grows). Nothing is ever removed: a rank
 * declared failed is dead to the job forever (fencing, DESIGN.md §4).
 *
 * The set is sparse so that it stays small at 10^5 - 10^6 ranks: a sorted
 * array of failed ranks (binary search for "is failed") plus the same ranks
 * in the order they were learned (the failure broadcast forwards facts in
 * that order, and the runtime's failure_get_acked can use it). Memory is
 * O(failures), not O(N); nothing is allocated until the first failure.
 *
 * Ring arithmetic is on job ranks 0..size-1; "predecessor" of r is r-1
 * (mod size), "successor" r+1.
 *
 * Thread safety: none; owned by one detector.
 */
#ifndef UCFT_DETECTOR_MEMBERSHIP_H
#define UCFT_DETECTOR_MEMBERSHIP_H

#include "ucft.h"

#include <stdint.h>

typedef struct mb {
    int size;        /* ranks in the job */
    uint64_t epoch;  /* number of failed ranks known */
    int *sorted;     /* failed ranks, ascending */
    int *order;      /* failed ranks, in the order learned */
    size_t count;    /* entries in both arrays (== epoch) */
    size_t capacity; /* allocated entries of both arrays */
    uint32_t digest; /* sum of mb_mix(rank) over the set (mb_summary) */
} mb_t;

void mb_init(mb_t *mb, int size);
void mb_cleanup(mb_t *mb);

int mb_is_failed(const mb_t *mb, int rank);

/* Adds `rank` to the failed set. Returns 1 when it is new (epoch grew by
 * one), 0 when it was known, or UCFT_ERR_NO_MEMORY / UCFT_ERR_INVALID_PARAM
 * (negative). */
int mb_add(mb_t *mb, int rank);

static inline uint64_t mb_epoch(const mb_t *mb)
{
    return mb->epoch;
}

static inline size_t mb_count(const mb_t *mb)
{
    return mb->count;
}

/* A 32-bit mix of one rank (a bijection), summed into the digest. */
static inline uint32_t mb_mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* The set in 64 bits, for comparing two ranks' views cheaply (heartbeats
 * carry it): the count in the high half, the order-independent digest in
 * the low half. Equal sets give equal summaries; different sets of the
 * same size collide with probability about 2^-32. */
static inline uint64_t mb_summary(const mb_t *mb)
{
    return ((uint64_t)mb->count << 32) | mb->digest;
}

/* The i-th failed rank in the order learned (0 <= i < count). */
static inline int mb_nth(const mb_t *mb, size_t i)
{
    return mb->order[i];
}

/* The i-th failed rank in ascending order (0 <= i < count). */
static inline int mb_nth_sorted(const mb_t *mb, size_t i)
{
    return mb->sorted[i];
}

/* The nearest live rank before `rank` on the ring (rank-1, rank-2, ...),
 * or -1 when every other rank has failed. `rank` itself need not be live. */
int mb_live_pred(const mb_t *mb, int rank);
/* The nearest live rank after `rank` on the ring, or -1. */
int mb_live_succ(const mb_t *mb, int rank);
/* The nearest live rank from `rank` stepping by `dir` (+1 or -1), starting
 * with rank+dir, or -1. */
int mb_live_step(const mb_t *mb, int rank, int dir);

/* Ring distance from `from` forward to `to`: (to - from) mod size. */
static inline int mb_ring_dist(const mb_t *mb, int from, int to)
{
    int d = (to - from) % mb->size;
    return d < 0 ? d + mb->size : d;
}

int mb_live_count(const mb_t *mb);

#endif
