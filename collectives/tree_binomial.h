/*
 * Rank arithmetic of the interleaved binomial tree (ALGORITHMS.md §1), on
 * virtual ranks: vrank 0 is the root (vrank = (rank - root) mod n).
 *
 *   bl(v)       bit length of v, bl(0) = 0
 *   parent(v)   v with its most significant bit cleared (none for 0)
 *   children(v) v + 2^j for j >= bl(v) while v + 2^j < n, in increasing j
 *
 * n = 16: 0 -> 1,2,4,8; 1 -> 3,5,9; 2 -> 6,10; 3 -> 7,11. The subtree of
 * child 2^j of the root is every vrank whose lowest set bit is j, so the
 * ranks a failed node cuts off are spread around the ring ("interleaved").
 * Pure functions, no state: safe anywhere.
 */
#ifndef UCFT_COLL_TREE_BINOMIAL_H
#define UCFT_COLL_TREE_BINOMIAL_H

#include <stdint.h>

static inline unsigned coll_bitlen(uint32_t v)
{
    return v ? 32u - (unsigned)__builtin_clz(v) : 0u;
}

/* Parent of vrank v, or -1 for the root. */
static inline int coll_binomial_parent(int v)
{
    if (v <= 0)
        return -1;
    return v & ~(1 << (coll_bitlen((uint32_t)v) - 1));
}

/* Exponent of v's first child: children are v + 2^j, j >= this. */
static inline unsigned coll_binomial_first_exp(int v)
{
    return coll_bitlen((uint32_t)v);
}

/* The i-th child of v (i = 0, 1, ...), or -1 when v has fewer children. */
static inline int coll_binomial_child(int v, unsigned i, int n)
{
    unsigned j = coll_binomial_first_exp(v) + i;
    if (j >= 31)
        return -1;
    int64_t c = (int64_t)v + ((int64_t)1 << j);
    return c < n ? (int)c : -1;
}

static inline unsigned coll_binomial_nchildren(int v, int n)
{
    unsigned k = 0;
    while (coll_binomial_child(v, k, n) >= 0)
        k++;
    return k;
}

/* Depth of v in the tree: its number of set bits. */
static inline unsigned coll_binomial_depth(int v)
{
    return (unsigned)__builtin_popcount((unsigned)v);
}

#endif
