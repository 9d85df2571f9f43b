/*
 * Binomial trees over a group with failed members (Hursey & Graham's
 * designs; docs/trees.md), as explicit parent / children lists that an
 * algorithm reads (collectives/barrier_binomial.c; coll_args_t.tree).
 *
 *   reroute    the original binomial tree of the n ranks; a failed node's
 *              children are adopted, recursively, by its nearest live
 *              ancestor (the paper's rerouting; its "lookup avoiding"
 *              variant is the same tree computed once per failed set,
 *              which is what these lists are)
 *   rebalance  the binomial tree of the live ranks in a dense order
 *              (projected to dense indices, built, projected back)
 *
 * The root is rank `root` if it lives, else the lowest live rank.
 * coll_tree_build allocates; coll_tree_free frees. O(n log n).
 */
#ifndef UCFT_COLL_TREE_FT_H
#define UCFT_COLL_TREE_FT_H

#include "tree_binomial.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct coll_tree {
    int n, root;
    int *parent; /* [n]: -1 for the root and the failed ranks */
    int *first; /* [n + 1]: rank r's children are child[first[r]..first[r+1]) */
    int *child;
} coll_tree_t;

enum { COLL_TREE_REROUTE = 0, COLL_TREE_REBALANCE = 1 };

/* Appends to out the rerouted children of vrank v: its binomial children
 * in order, a failed one replaced by its own rerouted children. */
static inline void coll_tree_adopt_(int v, int n, const uint8_t *dead, int root,
                                    int *out, int *k)
{
    for (unsigned i = 0;; i++) {
        int c = coll_binomial_child(v, i, n);
        if (c < 0)
            break;
        int r = (c + root) % n;
        if (dead[r])
            coll_tree_adopt_(c, n, dead, root, out, k);
        else
            out[(*k)++] = r;
    }
}

static inline void coll_tree_free(coll_tree_t *t)
{
    free(t->parent);
    free(t->first);
    free(t->child);
    t->parent = t->first = t->child = NULL;
}

/* dead[r] = 1 for the failed ranks. UCFT-style status: 0 or -1 (no
 * memory, or no live rank). */
static inline int coll_tree_build(coll_tree_t *t, int n, const uint8_t *dead,
                                  int root, int design)
{
    t->n = n;
    t->parent = malloc((size_t)n * sizeof(int));
    t->first = malloc(((size_t)n + 1) * sizeof(int));
    t->child = malloc((size_t)n * sizeof(int));
    int *dense = malloc((size_t)n * sizeof(int));
    int *live = malloc((size_t)n * sizeof(int));
    int m = 0;
    if (!t->parent || !t->first || !t->child || !dense || !live)
        goto fail;
    if (dead[root])
        for (root = 0; root < n && dead[root]; root++)
            ;
    if (root >= n)
        goto fail;
    t->root = root;
    /* Live ranks in the order of the rotated tree (root first). */
    for (int v = 0; v < n; v++) {
        int r = (v + root) % n;
        dense[r] = dead[r] ? -1 : m;
        if (!dead[r])
            live[m++] = r;
    }
    int k = 0;
    for (int r = 0; r < n; r++) {
        t->first[r] = k;
        t->parent[r] = -1;
        if (dead[r])
            continue;
        if (design == COLL_TREE_REBALANCE) {
            int d = dense[r];
            for (unsigned i = 0;; i++) {
                int c = coll_binomial_child(d, i, m);
                if (c < 0)
                    break;
                t->child[k++] = live[c];
            }
            if (d > 0)
                t->parent[r] = live[coll_binomial_parent(d)];
        } else {
            int v = (r - root + n) % n;
            coll_tree_adopt_(v, n, dead, root, t->child, &k);
            int p = coll_binomial_parent(v);
            while (p > 0 && dead[(p + root) % n])
                p = coll_binomial_parent(p);
            if (v > 0)
                t->parent[r] = (p + root) % n;
        }
    }
    t->first[n] = k;
    free(dense);
    free(live);
    return 0;
fail:
    free(dense);
    free(live);
    coll_tree_free(t);
    return -1;
}

/* Projects `full` (over its n nodes) onto m labels: out's node i is full's
 * node node_of[i], and full's node v is labelled label[v] (every parent
 * and child of a projected node must be projected too). 0, or -1 without
 * memory. */
static inline int coll_tree_project(const coll_tree_t *full, int m,
                                    const int *node_of, const int *label,
                                    coll_tree_t *out)
{
    *out = (coll_tree_t){.n = m, .root = label[full->root]};
    out->parent = malloc((size_t)m * sizeof(int));
    out->first = malloc(((size_t)m + 1) * sizeof(int));
    out->child = malloc((size_t)m * sizeof(int));
    if (!out->parent || !out->first || !out->child) {
        coll_tree_free(out);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < m; i++) {
        int v = node_of[i], pv = full->parent[v];
        out->parent[i] = pv < 0 ? -1 : label[pv];
        out->first[i] = k;
        for (int c = full->first[v]; c < full->first[v + 1]; c++)
            out->child[k++] = label[full->child[c]];
    }
    out->first[m] = k;
    return 0;
}

/* The same tree over placement positions (rank_at[pos], pos_of[rank]; both
 * NULL: identity), as the algorithms place their binomial trees
 * (coll_rank_of), given and returned in ranks: dead[rank], the root a
 * rank. 0, or -1 (no memory, or no live rank). */
static inline int coll_tree_build_placed(coll_tree_t *t, int n,
                                         const uint8_t *dead, int root,
                                         int design, const int *rank_at,
                                         const int *pos_of)
{
    if (rank_at == NULL || pos_of == NULL)
        return coll_tree_build(t, n, dead, root, design);
    coll_tree_t full = {0};
    int st = -1;
    uint8_t *dpos = malloc((size_t)n);
    *t = (coll_tree_t){.n = n};
    if (dpos != NULL) {
        for (int p = 0; p < n; p++)
            dpos[p] = dead[rank_at[p]];
        if (coll_tree_build(&full, n, dpos, pos_of[root], design) == 0)
            st = coll_tree_project(&full, n, pos_of, rank_at, t);
    }
    coll_tree_free(&full);
    free(dpos);
    return st;
}

/* Readers of a built tree, for the algorithms that take one
 * (coll_args_t.tree: rerouted around failed ranks by the communicator's
 * UCFT_TREE_REPAIR=reroute|lookup, comm/repair_tree.c; without it they use
 * their own binomial tree through coll_args_t.map). */
static inline int coll_tree_parent_of(const coll_tree_t *t, int rank)
{
    return t->parent[rank];
}

static inline int coll_tree_nkids(const coll_tree_t *t, int rank)
{
    return t->first[rank + 1] - t->first[rank];
}

/* The i-th child of `rank`, or -1 past the last. */
static inline int coll_tree_kid(const coll_tree_t *t, int rank, int i)
{
    return i < coll_tree_nkids(t, rank) ? t->child[t->first[rank] + i] : -1;
}

#endif
