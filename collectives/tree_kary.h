/*
 * Rank arithmetic of the interleaved k-ary tree (ALGORITHMS.md §1), on
 * virtual ranks (vrank 0 is the root), k >= 2.
 *
 * Level l holds the vranks [S(l-1), S(l)) with S(l) = 1 + k + ... + k^l
 * (S(-1) = 0): sizes 1, k, k^2, ... A rank v of level l has the children
 *   v + c * k^l,  c = 1..k  (while < n), in increasing c,
 * and the parent of a rank v of level l >= 1 is
 *   S(l-2) + (v - S(l-1)) mod k^(l-1).
 * k = 2, n = 15: 0 -> 1,2; 1 -> 3,5; 2 -> 4,6; 3 -> 7,11; the subtree of 1
 * is every odd vrank, so the ranks a failed node cuts off are spread around
 * the ring. Pure functions, no state.
 */
#ifndef UCFT_COLL_TREE_KARY_H
#define UCFT_COLL_TREE_KARY_H

#include <stdint.h>

/* Level of v: *lo = S(l-1) (first vrank of the level), *pw = k^l. */
static inline unsigned coll_kary_level(int v, unsigned k, int64_t *lo,
                                       int64_t *pw)
{
    int64_t s = 1, p = 1;
    unsigned l = 0;

    while ((int64_t)v >= s) {
        p *= k;
        s += p;
        l++;
    }
    *lo = s - p;
    *pw = p;
    return l;
}

/* The i-th child of v (i = 0..k-1), or -1. */
static inline int coll_kary_child(int v, unsigned i, int n, unsigned k)
{
    int64_t lo, pw;

    if (i >= k)
        return -1;
    coll_kary_level(v, k, &lo, &pw);
    int64_t c = (int64_t)v + (int64_t)(i + 1) * pw;
    return c < n ? (int)c : -1;
}

/* Parent of v, or -1 for the root. */
static inline int coll_kary_parent(int v, unsigned k)
{
    int64_t lo, pw;

    if (v <= 0)
        return -1;
    coll_kary_level(v, k, &lo, &pw);
    int64_t up = pw / k;   /* k^(l-1) */
    int64_t plo = lo - up; /* S(l-2) */
    return (int)(plo + ((int64_t)v - lo) % up);
}

#endif
