/* The guarantees stated above placement_compute() (collectives/
 * placement.c, docs/placement.md), checked for every root over many job
 * shapes: (I1)-(I6) for interleave, (L1)-(L2) for locality. */
#include "collectives/itree.h"
#include "collectives/tree_binomial.h"
#include "placement_job.h"

/* (I1) to (I5) for D nodes of m ranks, every f < D and every
 * root, with shuffled rank numbers and sparse node ids. */
static void test_placement_interleave_equal_nodes(void **state)
{
    for (int D = 1; D <= 12; D++)
        for (int m = 1; m <= 9; m++) {
            pl_job_t j;
            pl_gen(&j, D, 1, m, (uint64_t)(D * 131 + m));
            pl_run(&j, PLACEMENT_INTERLEAVE);
            pl_check_perm(&j);
            int n = j.n;
            for (int p = 0; p < n; p++) /* (I1) */
                assert_int_equal(j.node[j.rank_at[p]], p % D);
            for (int root = 0; root < n; root++) {
                if (D >= 2) /* ring neighbours on other nodes */
                    for (int v = 0; v < n; v++)
                        assert_int_not_equal(pl_vnode(&j, v, root),
                                             pl_vnode(&j, (v + 1) % n, root));
                for (int f = 0; f < D && f < n; f++) {
                    /* (I2): groups, including the root's short group. */
                    for (int v = 1; v < n; v++)
                        for (int w = v + 1; w < n; w++)
                            if (itree_group(v, f) == itree_group(w, f))
                                assert_int_not_equal(pl_vnode(&j, v, root),
                                                     pl_vnode(&j, w, root));
                    for (int v = 1; v < n; v++)
                        if (itree_grouped_with_root(v, n, f))
                            assert_int_not_equal(pl_vnode(&j, v, root),
                                                 pl_vnode(&j, 0, root));
                    for (int a = 0; a <= f; a++) /* candidate roots */
                        for (int b = a + 1; b <= f; b++)
                            assert_int_not_equal(pl_vnode(&j, a, root),
                                                 pl_vnode(&j, b, root));
                    if (D % (f + 1) == 0) { /* (I3) */
                        int cls[12];
                        for (int d = 0; d < D; d++)
                            cls[d] = -1;
                        for (int v = 1; v < n; v++) {
                            int d = pl_vnode(&j, v, root);
                            if (cls[d] < 0)
                                cls[d] = itree_subtree(v, f);
                            assert_int_equal(cls[d], itree_subtree(v, f));
                        }
                        /* (I5): q = D / (f + 1) a power of two, m >= 2: the
                         * I(f)-tree has exactly D edges between nodes
                         * (D - 1 when q = 1: child f + 1 = D of the root
                         * shares its node). */
                        int q = D / (f + 1), cross = 0;
                        for (int v = 1; v < n; v++)
                            cross += pl_vnode(&j, v, root) !=
                                     pl_vnode(&j, itree_parent(v, f), root);
                        if ((q & (q - 1)) == 0 && m >= 2)
                            assert_int_equal(cross, q == 1 ? D - 1 : D);
                    }
                }
                /* (I4): an edge spans 2^b positions, so it stays on a
                 * node iff D divides 2^b: D - 1 edges across for D a
                 * power of two (all into vranks < D), else all n - 1. */
                int cross = 0, pow2 = (D & (D - 1)) == 0;
                for (int v = 1; v < n; v++)
                    if (pl_vnode(&j, v, root) !=
                        pl_vnode(&j, coll_binomial_parent(v), root)) {
                        cross++;
                        assert_true(!pow2 || v < D);
                    }
                assert_int_equal(cross, pow2 ? D - 1 : n - 1);
            }
            pl_free(&j);
        }
}

/* (I3) as a failure statement: with (f+1) | D, every set of up to f whole
 * nodes other than the root's leaves an I(f)-subtree with no member on a
 * lost node, and every group a live member. With (f+1) not dividing D the
 * first claim fails: D = 3, f = 1 has a single node touching both subtrees. */
static void test_placement_interleave_node_loss(void **state)
{
    for (int D = 2; D <= 8; D++)
        for (int m = 1; m <= 5; m++)
            for (int f = 1; f < D; f++) {
                pl_job_t j;
                pl_gen(&j, D, 1, m, (uint64_t)(7 * D + m));
                pl_run(&j, PLACEMENT_INTERLEAVE);
                int n = j.n, kids = itree_root_nchildren(n, f);
                int divides = D % (f + 1) == 0;
                for (int root = 0; root < n; root++)
                    for (unsigned lost = 1; lost < (1u << D); lost++) {
                        if (__builtin_popcount(lost) > f ||
                            (lost >> pl_vnode(&j, 0, root)) & 1)
                            continue;
                        unsigned hit = 0; /* subtrees with a lost member */
                        for (int v = 1; v < n; v++)
                            if ((lost >> pl_vnode(&j, v, root)) & 1)
                                hit |= 1u << itree_subtree(v, f);
                        if (divides && kids == f + 1)
                            assert_true(__builtin_popcount(hit) < kids);
                        for (int g = 0; g <= itree_full_groups(n, f); g++) {
                            int live = 0, members = 0;
                            for (int k = 0; k <= f; k++) {
                                int v = itree_member(g, k, n, f);
                                if (v < 0)
                                    continue;
                                members++;
                                live += !((lost >> pl_vnode(&j, v, root)) & 1);
                            }
                            if (members > 0)
                                assert_true(
                                    live > 0 ||
                                    itree_grouped_with_root(
                                        itree_member(g, 0, n, f), n, f));
                        }
                    }
                pl_free(&j);
            }
    /* The condition matters: D = 3, f = 1, 4 ranks per node. */
    pl_job_t j;
    pl_gen(&j, 3, 1, 4, 5);
    pl_run(&j, PLACEMENT_INTERLEAVE);
    unsigned classes = 0;
    for (int v = 1; v < j.n; v++)
        if (pl_vnode(&j, v, 0) == 1)
            classes |= 1u << itree_subtree(v, 1);
    assert_int_equal(classes, 3u);
    pl_free(&j);
}

/* Inner levels: a node's ranks alternate over its packages (each package
 * one NUMA node, q ranks on q cores), and for D, P powers of two exactly
 * D (P - 1) binomial edges join two packages of one node, every root. */
static void test_placement_interleave_packages(void **state)
{
    for (int D = 1; D <= 8; D *= 2)
        for (int P = 1; P <= 4; P *= 2)
            for (int q = 1; q <= 4; q++) {
                pl_job_t j;
                pl_gen(&j, D, P, q, (uint64_t)(D * 100 + P * 10 + q));
                pl_run(&j, PLACEMENT_INTERLEAVE);
                int n = j.n;
                int seen[8] = {0};
                for (int p = 0; p < n; p++) {
                    int r = j.rank_at[p], nd = j.node[r];
                    assert_int_equal(j.loci[r].package, seen[nd] % P);
                    seen[nd]++;
                }
                for (int root = 0; root < n; root++) {
                    int cross_node = 0, cross_pkg = 0;
                    for (int v = 1; v < n; v++) {
                        int a = pl_rank(&j, v, root);
                        int b = pl_rank(&j, coll_binomial_parent(v), root);
                        if (j.node[a] != j.node[b])
                            cross_node++;
                        else if (j.loci[a].package != j.loci[b].package) {
                            cross_pkg++;
                            assert_true(v >= D && v < D * P);
                        }
                    }
                    assert_int_equal(cross_node, D - 1);
                    assert_int_equal(cross_pkg, D * (P - 1));
                }
                pl_free(&j);
            }
}

/* Longest run of consecutive vranks the binomial tree does not reach
 * when the nodes in `lost` (bit set of node indexes) are dead. Vrank 0 is
 * reached (its node is never lost), so no run wraps. */
static int bcast_worst_run(const pl_job_t *j, int root, unsigned lost,
                           unsigned char *reached)
{
    int worst = 0, run = 0;
    reached[0] = 1;
    for (int v = 1; v < j->n; v++) {
        reached[v] = reached[coll_binomial_parent(v)] &&
                     !((lost >> pl_vnode(j, v, root)) & 1);
        run = reached[v] ? 0 : run + 1;
        worst = run > worst ? run : worst;
    }
    return worst;
}

/* (I6): D a power of two, equal nodes: after losing any f whole nodes
 * other than the root's, every run of consecutive positions the binomial
 * tree does not reach (dead or cut off) is at most 2^f - 1 long, for every
 * root: the bound ALGORITHMS.md derives for f single failures, so the
 * opportunistic correction with distance 2^f - 1 still delivers.
 * Not for other D: 3 nodes of 4, one lost node leaves a run of 3. */
static void test_placement_interleave_bcast_runs(void **state)
{
    unsigned char reached[16 * 5];
    for (int D = 1; D <= 16; D *= 2)
        for (int m = 1; m <= 5; m++)
            for (int f = 1; f <= 3 && f < D; f++) {
                pl_job_t j;
                pl_gen(&j, D, 1, m, (uint64_t)(D * 7 + m));
                pl_run(&j, PLACEMENT_INTERLEAVE);
                for (int root = 0; root < j.n; root++)
                    for (unsigned lost = 1; lost < (1u << D); lost++) {
                        if (__builtin_popcount(lost) != f ||
                            (lost >> pl_vnode(&j, 0, root)) & 1)
                            continue;
                        assert_true(bcast_worst_run(&j, root, lost, reached) <=
                                    (1 << f) - 1);
                    }
                pl_free(&j);
            }
    pl_job_t j;
    pl_gen(&j, 3, 1, 4, 9);
    pl_run(&j, PLACEMENT_INTERLEAVE);
    int worst = 0;
    for (int d = 0; d < 3; d++) {
        if (d == pl_vnode(&j, 0, 0))
            continue; /* the root's node */
        int r = bcast_worst_run(&j, 0, 1u << d, reached);
        worst = r > worst ? r : worst;
    }
    assert_true(worst > 1); /* beyond 2^f - 1 = 1 (it is 3) */
    pl_free(&j);
}

/* (L1), (L2): locality makes blocks; D ring pairs cross nodes; with the
 * root at a block start exactly n - m binomial edges cross nodes (the
 * edges into vranks >= m); the first group (f + 1 <= m - 1) lies on one
 * node. */
static void test_placement_locality_blocks(void **state)
{
    for (int D = 1; D <= 8; D++)
        for (int m = 1; m <= 16; m++) {
            pl_job_t j;
            pl_gen(&j, D, 1, m, (uint64_t)(D * 17 + m));
            pl_run(&j, PLACEMENT_LOCALITY);
            int n = j.n, ring = 0;
            for (int p = 0; p < n; p++) {
                assert_int_equal(j.node[j.rank_at[p]], p / m);
                ring += D >= 2 &&
                        j.node[j.rank_at[p]] != j.node[j.rank_at[(p + 1) % n]];
            }
            assert_int_equal(ring, D >= 2 ? D : 0);
            for (int b = 0; b < D; b++) {
                int root = j.rank_at[b * m], cross = 0;
                for (int v = 1; v < n; v++)
                    cross += pl_vnode(&j, v, root) !=
                             pl_vnode(&j, coll_binomial_parent(v), root);
                assert_int_equal(cross, n - m);
            }
            for (int f = 0; f + 2 <= m; f++)
                for (int v = 2; v <= f + 1; v++)
                    assert_int_equal(pl_vnode(&j, v, j.rank_at[0]),
                                     pl_vnode(&j, 1, j.rank_at[0]));
            pl_free(&j);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placement_interleave_equal_nodes),
        cmocka_unit_test(test_placement_interleave_node_loss),
        cmocka_unit_test(test_placement_interleave_packages),
        cmocka_unit_test(test_placement_interleave_bcast_runs),
        cmocka_unit_test(test_placement_locality_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
