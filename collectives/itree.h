/*
 * Rank arithmetic of corrected reduce (papers/corrected-reduce-allreduce,
 * sections 4.2 and 4.5), on virtual ranks: v = 0 is the root, v = 1..n-1
 * the others (v = (rank - root) mod n). Pure functions, no state.
 *
 * Up-correction groups (tolerating f failures, F = f + 1):
 *   group(v) = (v - 1) / F for v > 0; group g = { gF+1, ..., gF+F } ∩ [1, n).
 *   There are full = (n - 1) / F full groups. If (n - 1) mod F != 0 the
 *   last group g = full is short (a - 1 members, a = ((n-1) mod F) + 1) and
 *   the root joins it, so it has a members; otherwise (a = 1) the root
 *   belongs to no group.
 *
 * I(f)-tree: the root's children are 1..min(F, n-1). Subtree k (0-based,
 * the subtree of child k + 1) holds the v with (v - 1) mod F = k; its
 * local index is j = (v - 1) / F, which is also v's group number, so each
 * group has exactly one member in each subtree (a short group: one in each
 * of subtrees 0..a-2). Subtree sizes are ceil((n - 1 - k) / F): they
 * differ by at most one (an I(f)-tree). Inside a subtree the tree is the
 * interleaved binomial tree of tree_binomial.h on the local index.
 *
 * Failure-free message counts (Theorem 5): up-correction
 * f * F * full + a * (a - 1); tree phase n - 1.
 */
#ifndef UCFT_COLL_ITREE_H
#define UCFT_COLL_ITREE_H

#include "tree_binomial.h"

#include <stdint.h>

/* Number of full groups. */
static inline int itree_full_groups(int n, int f)
{
    return n > 1 ? (n - 1) / (f + 1) : 0;
}

/* a of Theorem 5: members of the root's group including the root (1: the
 * root is in no group). */
static inline int itree_a(int n, int f)
{
    return n > 1 ? (n - 1) % (f + 1) + 1 : 1;
}

static inline int itree_root_in_group(int n, int f)
{
    return itree_a(n, f) > 1;
}

/* Group number of v > 0. The root's group (if any) is number full. */
static inline int itree_group(int v, int f)
{
    return (v - 1) / (f + 1);
}

/* Subtree (0-based) of v > 0. */
static inline int itree_subtree(int v, int f)
{
    return (v - 1) % (f + 1);
}

/* The member of group g in subtree k, or -1 if there is none. */
static inline int itree_member(int g, int k, int n, int f)
{
    long v = (long)g * (f + 1) + k + 1;
    return v < n ? (int)v : -1;
}

/* v > 0 is in the short group that the root joins. */
static inline int itree_grouped_with_root(int v, int n, int f)
{
    return v > 0 && itree_root_in_group(n, f) &&
           itree_group(v, f) == itree_full_groups(n, f);
}

/* Processes in subtree k. */
static inline int itree_subtree_size(int k, int n, int f)
{
    int m = n - 1 - k;
    return m > 0 ? (m + f) / (f + 1) : 0;
}

/* Number of children of the root. */
static inline int itree_root_nchildren(int n, int f)
{
    return n - 1 < f + 1 ? n - 1 : f + 1;
}

/* Tree parent of v > 0 (0 for the children of the root). */
static inline int itree_parent(int v, int f)
{
    int k = itree_subtree(v, f), j = itree_group(v, f);
    if (j == 0)
        return 0;
    return coll_binomial_parent(j) * (f + 1) + k + 1;
}

/* The i-th child of v (i = 0, 1, ...), or -1. The root's children are
 * 1..min(f+1, n-1); a subtree's children follow the binomial tree on the
 * local index. */
static inline int itree_child(int v, unsigned i, int n, int f)
{
    if (v == 0)
        return (int)i < itree_root_nchildren(n, f) ? (int)i + 1 : -1;
    int k = itree_subtree(v, f), j = itree_group(v, f);
    int c = coll_binomial_child(j, i, itree_subtree_size(k, n, f));
    return c < 0 ? -1 : c * (f + 1) + k + 1;
}

static inline unsigned itree_nchildren(int v, int n, int f)
{
    unsigned c = 0;
    while (itree_child(v, c, n, f) >= 0)
        c++;
    return c;
}

/* Up to ITREE_FLAT_MAX ranks the corrected reduce and allreduce use flat
 * subtrees (below) and the allreduce sends its result by a star from the
 * root (reduce_corrected.c): each shape makes fewer ranks wait, fewer
 * times, and with more ranks than cores every wait is a context switch
 * (docs/reduce.md has the figures). Above it the root's sends in a row
 * and a subtree root's receives would grow with n, the binomial tree's
 * depth only with log n. */
#define ITREE_FLAT_MAX 16

static inline int itree_flat(int n)
{
    return n <= ITREE_FLAT_MAX;
}

/* The same tree with flat subtrees (flat = 1): the first rank of each
 * subtree (local index 0, a child of the root) is the parent of all the
 * others. The I(f) properties (subtree sizes, one member of each group
 * per subtree) and Theorem 5's counts do not depend on the shape inside
 * a subtree; the depth drops to 2, and every rank but a subtree's first
 * waits for no tree message. flat = 0: the binomial tree above. */
static inline int itree_parent_in(int v, int f, int flat)
{
    if (!flat)
        return itree_parent(v, f);
    return itree_group(v, f) == 0 ? 0 : itree_subtree(v, f) + 1;
}

static inline int itree_child_in(int v, unsigned i, int n, int f, int flat)
{
    if (!flat || v == 0)
        return itree_child(v, i, n, f);
    int k = itree_subtree(v, f);
    if (itree_group(v, f) != 0 || (long)i + 1 >= itree_subtree_size(k, n, f))
        return -1;
    return (int)(((long)i + 1) * (f + 1) + k + 1);
}

static inline unsigned itree_nchildren_in(int v, int n, int f, int flat)
{
    unsigned c = 0;
    while (itree_child_in(v, c, n, f, flat) >= 0)
        c++;
    return c;
}

/* Theorem 5, failure-free: messages of the up-correction phase. */
static inline uint64_t itree_up_messages(int n, int f)
{
    uint64_t a = (uint64_t)itree_a(n, f);
    return (uint64_t)f * (uint64_t)(f + 1) * (uint64_t)itree_full_groups(n, f) +
           a * (a - 1);
}

/* Subtree k answers for the root without the root's value (and without the
 * short group's, whose members sit in subtrees 0..a-2): the root must
 * combine the answer with its own up-corrected value (section 4.3). */
static inline int itree_root_adds_own(int k, int n, int f)
{
    return k >= itree_a(n, f) - 1;
}

#endif
