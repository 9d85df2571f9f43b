/*
 * Rank arithmetic of the interleaved Lamé tree of order k (ALGORITHMS.md
 * §1), on virtual ranks (vrank 0 is the root), k >= 1. It is the optimal
 * broadcast tree when a rank that has just received needs k send slots
 * before it can send itself; k = 1 is the binomial tree.
 *
 *   rts(t) = 1 for 0 <= t < k, rts(t-1) + rts(t-k) after
 * In slot t every rank that received in slot t-k or earlier (and the root)
 * sends to itself + rts(t+k-1); after slot t the informed ranks are exactly
 * [0, rts(t+k)). So the vranks informed in slot m-k+1 are the block
 * [rts(m), rts(m+1)) (m >= k-1), and a rank v of block m(v) has
 *   parent(v)  = v - rts(m(v))
 *   child i    = v + rts(m(v) + k + i)     (i = 0, 1, ... while < n)
 * with m(0) = -1 for the root (children rts(k-1), rts(k), ... = 1, 2, ...).
 * Pure functions, no state.
 */
#ifndef UCFT_COLL_TREE_LAME_H
#define UCFT_COLL_TREE_LAME_H

#include <stdint.h>

#define COLL_LAME_MAX_K 8

/* rts(t) of order k, saturated at INT64_MAX / 2. */
static inline int64_t coll_lame_rts(unsigned k, int t)
{
    int64_t ring[COLL_LAME_MAX_K + 1] = {0};
    if (t < (int)k)
        return 1;
    for (unsigned i = 0; i < k; i++)
        ring[i] = 1;
    /* ring[x % (k+1)] holds rts(x) for the last k+1 values of x. */
    int64_t cur = 1;
    for (int x = (int)k; x <= t; x++) {
        int64_t a = ring[(x - 1) % (k + 1)], b = ring[(x - (int)k) % (k + 1)];
        cur = a + b;
        if (cur > INT64_MAX / 4)
            cur = INT64_MAX / 4;
        ring[x % (k + 1)] = cur;
    }
    return cur;
}

/* Block of v > 0: the largest m >= k-1 with rts(m) <= v; -1 for the root.
 * One pass over the sequence. */
static inline int coll_lame_block(int v, unsigned k)
{
    int64_t ring[COLL_LAME_MAX_K + 1] = {0};
    if (v <= 0)
        return -1;
    for (unsigned i = 0; i < k; i++)
        ring[i] = 1;
    /* rts(k-1) = 1 <= v; look at rts(x) for x = k, k+1, ... */
    for (int x = (int)k;; x++) {
        int64_t cur = ring[(x - 1) % (k + 1)] + ring[(x - (int)k) % (k + 1)];
        if (cur > (int64_t)v)
            return x - 1;
        ring[x % (k + 1)] = cur;
    }
}

/* The i-th child of v, or -1. `m` is coll_lame_block(v, k). */
static inline int coll_lame_child_m(int v, int m, unsigned i, int n, unsigned k)
{
    int64_t c = (int64_t)v + coll_lame_rts(k, m + (int)k + (int)i);
    return c < n ? (int)c : -1;
}

static inline int coll_lame_child(int v, unsigned i, int n, unsigned k)
{
    return coll_lame_child_m(v, coll_lame_block(v, k), i, n, k);
}

/* Parent of v, or -1 for the root. */
static inline int coll_lame_parent(int v, unsigned k)
{
    if (v <= 0)
        return -1;
    return v - (int)coll_lame_rts(k, coll_lame_block(v, k));
}

#endif
