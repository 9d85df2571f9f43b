/* Generated jobs for the placement tests (test_placement.c,
 * test_placement_guarantees.c): loci of D nodes with the ground truth of
 * each rank's node, the placement computed into a coll_map_t, and the
 * rank / node of a vrank through coll_rank_of (what the algorithms use). */
#ifndef UCFT_TEST_PLACEMENT_JOB_H
#define UCFT_TEST_PLACEMENT_JOB_H

#include "cmocka_inc.h"
#include "collectives/coll_op.h"
#include "placement/placement.h"

#include <stdlib.h>
#include <string.h>

/* A generated job: loci plus, per rank, the index of its node among the
 * sorted distinct node ids (the tests' ground truth). */
typedef struct pl_job {
    int n;
    placement_locus_t *loci;
    int *node; /* node index of rank */
    int *rank_at, *pos_of;
    coll_map_t map;
    coll_args_t args;
} pl_job_t;

static inline uint64_t pl_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline void pl_alloc(pl_job_t *j, int n)
{
    j->n = n;
    j->loci = calloc((size_t)n, sizeof *j->loci);
    j->node = calloc((size_t)n, sizeof *j->node);
    j->rank_at = calloc((size_t)n, sizeof *j->rank_at);
    j->pos_of = calloc((size_t)n, sizeof *j->pos_of);
    assert_non_null(j->loci);
    assert_non_null(j->node);
    assert_non_null(j->rank_at);
    assert_non_null(j->pos_of);
}

static inline void pl_free(pl_job_t *j)
{
    free(j->loci);
    free(j->node);
    free(j->rank_at);
    free(j->pos_of);
}

/* D nodes, each with P packages of q ranks (m = P q per node), each rank
 * bound to its own core (one NUMA node per package). Node ids are sparse
 * (11 + 5 i); the rank numbers are shuffled with `seed` (0: ranks by slot,
 * node i holds ranks i m .. i m + m - 1). */
static inline void pl_gen(pl_job_t *j, int D, int P, int q, uint64_t seed)
{
    int m = P * q, n = D * m;
    pl_alloc(j, n);
    int *perm = malloc((size_t)n * sizeof *perm);
    assert_non_null(perm);
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; seed != 0 && i > 0; i--) {
        int k = (int)(pl_rand(&seed) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    for (int i = 0; i < n; i++) {
        int r = perm[i], nd = i / m, l = i % m;
        j->loci[r] = (placement_locus_t){
            .node = 11 + 5 * nd, .package = l / q, .numa = l / q, .core = l};
        j->node[r] = nd;
    }
    free(perm);
}

static inline void pl_run(pl_job_t *j, placement_policy_t policy)
{
    assert_int_equal(
        placement_compute(policy, j->loci, j->n, j->rank_at, j->pos_of),
        UCFT_OK);
    j->map = (coll_map_t){.n = j->n, .rank = j->rank_at, .pos = j->pos_of};
    j->args = (coll_args_t){.map = &j->map};
}

/* The rank holding vrank v of the tree rooted at `root`, and its node. */
static inline int pl_rank(const pl_job_t *j, int v, int root)
{
    return coll_rank_of(&j->args, v, root, j->n);
}

static inline int pl_vnode(const pl_job_t *j, int v, int root)
{
    return j->node[pl_rank(j, v, root)];
}

static inline void pl_check_perm(const pl_job_t *j)
{
    char *seen = calloc((size_t)j->n, 1);
    assert_non_null(seen);
    for (int p = 0; p < j->n; p++) {
        int r = j->rank_at[p];
        assert_true(r >= 0 && r < j->n);
        assert_int_equal(seen[r], 0);
        seen[r] = 1;
        assert_int_equal(j->pos_of[r], p);
    }
    free(seen);
}

#endif
