/* Placement policies (collectives/placement.c): valid permutations,
 * determinism, the interleave definition against a naive recursive
 * reference, and the guarantees stated above placement_compute() checked
 * for every root over many (nodes, ranks per node, f). */
#include "cmocka_inc.h"
#include "collectives/coll_op.h"
#include "collectives/itree.h"
#include "collectives/placement.h"
#include "collectives/tree_binomial.h"

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

static uint64_t pl_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void pl_alloc(pl_job_t *j, int n)
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

static void pl_free(pl_job_t *j)
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
static void pl_gen(pl_job_t *j, int D, int P, int q, uint64_t seed)
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

static void pl_run(pl_job_t *j, placement_policy_t policy)
{
    assert_int_equal(
        placement_compute(policy, j->loci, j->n, j->rank_at, j->pos_of),
        UCFT_OK);
    j->map = (coll_map_t){.n = j->n, .rank = j->rank_at, .pos = j->pos_of};
    j->args = (coll_args_t){.map = &j->map};
}

/* The rank holding vrank v of the tree rooted at `root`, and its node. */
static int pl_rank(const pl_job_t *j, int v, int root)
{
    return coll_rank_of(&j->args, v, root, j->n);
}

static int pl_vnode(const pl_job_t *j, int v, int root)
{
    return j->node[pl_rank(j, v, root)];
}

static void pl_check_perm(const pl_job_t *j)
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

/* ---- naive reference of interleave (the definition, O(n^2)) ---- */

static int32_t ref_key(const placement_locus_t *l, int level)
{
    int32_t id = level == 0   ? l->node
                 : level == 1 ? l->package
                 : level == 2 ? l->numa
                              : l->core;
    return id < 0 ? -1 : id;
}

static int ref_cmp_int(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Writes the interleave of ranks[0..k) at `level` into out. */
static void ref_interleave(const placement_locus_t *loci, const int *ranks,
                           int k, int level, int *out)
{
    if (level == 4) {
        memcpy(out, ranks, (size_t)k * sizeof *out);
        qsort(out, (size_t)k, sizeof *out, ref_cmp_int);
        return;
    }
    int32_t *ids = malloc((size_t)k * sizeof *ids);
    int *sub = malloc((size_t)k * sizeof *sub);
    int *seq = malloc((size_t)k * sizeof *seq);
    int *start = malloc((size_t)(k + 1) * sizeof *start);
    assert_true(ids && sub && seq && start);
    for (int i = 0; i < k; i++)
        ids[i] = ref_key(&loci[ranks[i]], level);
    qsort(ids, (size_t)k, sizeof *ids, ref_cmp_int);
    int nd = 0;
    for (int i = 0; i < k; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            ids[nd++] = ids[i];
    int len = 0;
    for (int c = 0; c < nd; c++) {
        int cnt = 0;
        for (int i = 0; i < k; i++)
            if (ref_key(&loci[ranks[i]], level) == ids[c])
                sub[cnt++] = ranks[i];
        start[c] = len;
        ref_interleave(loci, sub, cnt, level + 1, seq + len);
        len += cnt;
    }
    start[nd] = len;
    int o = 0;
    for (int r = 0; o < k; r++)
        for (int c = 0; c < nd; c++)
            if (start[c] + r < start[c + 1])
                out[o++] = seq[start[c] + r];
    free(ids);
    free(sub);
    free(seq);
    free(start);
}

/* Random loci: few distinct ids per level, some -1 (and other negatives). */
static void pl_gen_random(pl_job_t *j, int n, uint64_t seed)
{
    pl_alloc(j, n);
    for (int r = 0; r < n; r++) {
        int32_t v[4];
        for (int d = 0; d < 4; d++) {
            uint64_t x = pl_rand(&seed);
            v[d] = x % 7 == 0 ? -(int32_t)(x % 3 + 1) : (int32_t)(x % 5) * 3;
        }
        j->loci[r] = (placement_locus_t){v[0], v[1], v[2], v[3]};
    }
}

/* ---- tests ---- */

static void test_placement_policy_names(void **state)
{
    placement_policy_t p = PLACEMENT_LOCALITY;
    const placement_policy_t all[] = {PLACEMENT_INTERLEAVE, PLACEMENT_LOCALITY,
                                      PLACEMENT_IDENTITY};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(
            placement_policy_parse(placement_policy_name(all[i]), &p), UCFT_OK);
        assert_int_equal(p, all[i]);
    }
    assert_string_equal(placement_policy_name(PLACEMENT_INTERLEAVE),
                        "interleave");
    p = PLACEMENT_LOCALITY;
    const char *bad[] = {"", "Interleave", "interleave ", "round-robin"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(placement_policy_parse(bad[i], &p),
                         UCFT_ERR_INVALID_PARAM);
        assert_int_equal(p, PLACEMENT_LOCALITY); /* untouched */
    }
    assert_int_equal(placement_policy_parse(NULL, &p), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(placement_policy_parse("identity", NULL),
                     UCFT_ERR_INVALID_PARAM);
    assert_string_equal(placement_policy_name((placement_policy_t)9), "?");
}

static void test_placement_bad_input(void **state)
{
    placement_locus_t loci[4] = {{0, 0, 0, 0}};
    int ra[4] = {-7, -7, -7, -7}, po[4] = {-7, -7, -7, -7};
    placement_policy_t pols[] = {PLACEMENT_INTERLEAVE, PLACEMENT_LOCALITY,
                                 PLACEMENT_IDENTITY};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(placement_compute(pols[i], loci, 0, ra, po),
                         UCFT_ERR_INVALID_PARAM);
        assert_int_equal(placement_compute(pols[i], loci, -3, ra, po),
                         UCFT_ERR_INVALID_PARAM);
        assert_int_equal(placement_compute(pols[i], NULL, 4, ra, po),
                         UCFT_ERR_INVALID_PARAM);
        assert_int_equal(placement_compute(pols[i], loci, 4, NULL, po),
                         UCFT_ERR_INVALID_PARAM);
        assert_int_equal(placement_compute(pols[i], loci, 4, ra, NULL),
                         UCFT_ERR_INVALID_PARAM);
    }
    assert_int_equal(placement_compute((placement_policy_t)3, loci, 4, ra, po),
                     UCFT_ERR_INVALID_PARAM);
    for (int i = 0; i < 4; i++) /* outputs untouched */
        assert_true(ra[i] == -7 && po[i] == -7);
}

/* Every policy yields a permutation and its inverse, the same one on every
 * call; identity is pos = rank; interleave equals the naive recursive
 * definition; locality is sorted by (node, package, numa, core, rank). */
static void test_placement_random_against_reference(void **state)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int n = 1; n <= 160; n += (n < 40 ? 1 : 7)) {
        pl_job_t j;
        pl_gen_random(&j, n, seed + (uint64_t)n);
        int *again = malloc((size_t)n * sizeof *again);
        int *again_pos = malloc((size_t)n * sizeof *again_pos);
        int *ref = malloc((size_t)n * sizeof *ref);
        int *all = malloc((size_t)n * sizeof *all);
        assert_true(again && again_pos && ref && all);
        for (int pol = 0; pol < 3; pol++) {
            pl_run(&j, (placement_policy_t)pol);
            pl_check_perm(&j);
            assert_int_equal(placement_compute((placement_policy_t)pol, j.loci,
                                               n, again, again_pos),
                             UCFT_OK);
            assert_memory_equal(again, j.rank_at, (size_t)n * sizeof *again);
            if (pol == PLACEMENT_IDENTITY)
                for (int r = 0; r < n; r++)
                    assert_int_equal(j.rank_at[r], r);
            if (pol == PLACEMENT_LOCALITY)
                for (int p = 1; p < n; p++) {
                    const placement_locus_t *a = &j.loci[j.rank_at[p - 1]],
                                            *b = &j.loci[j.rank_at[p]];
                    int d = 0;
                    while (d < 4 && ref_key(a, d) == ref_key(b, d))
                        d++;
                    if (d < 4)
                        assert_true(ref_key(a, d) < ref_key(b, d));
                    else
                        assert_true(j.rank_at[p - 1] < j.rank_at[p]);
                }
            if (pol == PLACEMENT_INTERLEAVE) {
                for (int r = 0; r < n; r++)
                    all[r] = r;
                ref_interleave(j.loci, all, n, 0, ref);
                assert_memory_equal(ref, j.rank_at, (size_t)n * sizeof *ref);
            }
        }
        free(again);
        free(again_pos);
        free(ref);
        free(all);
        pl_free(&j);
    }
}

/* (I1), (I2), (I3), (I4) for D nodes of m ranks, every f < D and every
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
                    }
                }
                if ((D & (D - 1)) == 0) { /* (I4) */
                    int cross = 0;
                    for (int v = 1; v < n; v++)
                        if (pl_vnode(&j, v, root) !=
                            pl_vnode(&j, coll_binomial_parent(v), root)) {
                            cross++;
                            assert_true(v < D);
                        }
                    assert_int_equal(cross, D - 1);
                }
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

/* (I0): imbalanced nodes. Round k holds one rank of every node with more
 * than k ranks, in increasing node id; the complete rounds follow p mod D. */
static void test_placement_interleave_imbalanced(void **state)
{
    uint64_t seed = 42;
    for (int trial = 0; trial < 200; trial++) {
        int D = 1 + (int)(pl_rand(&seed) % 7), size[7], n = 0, mmin = 1 << 30;
        for (int d = 0; d < D; d++) {
            size[d] = 1 + (int)(pl_rand(&seed) % 6);
            n += size[d];
            mmin = size[d] < mmin ? size[d] : mmin;
        }
        pl_job_t j;
        pl_alloc(&j, n);
        for (int r = 0; r < n; r++) { /* random node for each rank */
            int d;
            do
                d = (int)(pl_rand(&seed) % (uint64_t)D);
            while (size[d] == 0);
            size[d]--;
            j.node[r] = d;
            j.loci[r] = (placement_locus_t){100 - 9 * (D - d), -1, -1, -1};
        }
        for (int r = 0; r < n; r++)
            size[j.node[r]]++;
        pl_run(&j, PLACEMENT_INTERLEAVE);
        pl_check_perm(&j);
        int p = 0, taken[7] = {0};
        for (int k = 0; p < n; k++)
            for (int d = 0; d < D; d++)
                if (size[d] > k) {
                    int r = j.rank_at[p++];
                    assert_int_equal(j.node[r], d);
                    taken[d]++;
                }
        for (p = 0; p < D * mmin; p++)
            assert_int_equal(j.node[j.rank_at[p]], p % D);
        /* Inside a node the ranks come in ascending order (no inner ids). */
        int last[7] = {-1, -1, -1, -1, -1, -1, -1};
        for (p = 0; p < n; p++) {
            int r = j.rank_at[p];
            assert_true(r > last[j.node[r]]);
            last[j.node[r]] = r;
        }
        pl_free(&j);
    }
}

/* Unknown ids: all -1 is one domain (every policy is the identity); any
 * negative id equals -1; unbound ranks of a node form one package domain
 * that sorts first. */
static void test_placement_unknown_ids(void **state)
{
    pl_job_t j, k;
    pl_alloc(&j, 9);
    pl_alloc(&k, 9);
    for (int r = 0; r < 9; r++)
        j.loci[r] = (placement_locus_t){-1, -1, -1, -1};
    for (int pol = 0; pol < 3; pol++) {
        pl_run(&j, (placement_policy_t)pol);
        for (int p = 0; p < 9; p++)
            assert_int_equal(j.rank_at[p], p);
    }
    /* One node: ranks 0-2 unbound, 3-5 on package 1, 6-8 on package 0. */
    for (int r = 0; r < 9; r++) {
        int pkg = r < 3 ? -1 : r < 6 ? 1 : 0;
        j.loci[r] = (placement_locus_t){4, pkg, pkg, r < 3 ? -1 : r};
        k.loci[r] = j.loci[r];
        if (r < 3) /* other negative spellings of "unknown" */
            k.loci[r] = (placement_locus_t){4, -2 - r, -9, INT32_MIN};
    }
    pl_run(&j, PLACEMENT_INTERLEAVE);
    pl_run(&k, PLACEMENT_INTERLEAVE);
    assert_memory_equal(j.rank_at, k.rank_at, 9 * sizeof(int));
    for (int p = 0; p < 9; p++) { /* packages -1, 0, 1 in turn */
        int r = j.rank_at[p];
        assert_int_equal(j.loci[r].package, p % 3 - 1);
    }
    pl_run(&j, PLACEMENT_LOCALITY);
    for (int p = 0; p < 9; p++)
        assert_int_equal(j.loci[j.rank_at[p]].package, p / 3 - 1);
    pl_free(&j);
    pl_free(&k);
}

/* (L1), (L2): locality makes blocks; D ring pairs cross nodes; with m a
 * power of two and the root at a block start, n - m binomial edges cross
 * nodes; the first group (f + 1 <= m - 1) lies on one node. */
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
            if ((m & (m - 1)) == 0)
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

/* Large n: 2^20 ranks on 1024 nodes, ranks by node (round robin), bound to
 * 2 packages: a permutation with (I1), computed twice identically. */
static void test_placement_large(void **state)
{
    pl_job_t j;
    int D = 1024, m = 1024, n = D * m;
    pl_alloc(&j, n);
    for (int r = 0; r < n; r++) {
        int l = r / D;
        j.node[r] = r % D;
        j.loci[r] = (placement_locus_t){r % D, l % 2, l % 2, l};
    }
    pl_run(&j, PLACEMENT_INTERLEAVE);
    pl_check_perm(&j);
    for (int p = 0; p < n; p++)
        assert_int_equal(j.node[j.rank_at[p]], p % D);
    int *again = malloc((size_t)n * sizeof *again);
    int *again_pos = malloc((size_t)n * sizeof *again_pos);
    assert_true(again && again_pos);
    assert_int_equal(
        placement_compute(PLACEMENT_INTERLEAVE, j.loci, n, again, again_pos),
        UCFT_OK);
    assert_memory_equal(again, j.rank_at, (size_t)n * sizeof *again);
    pl_run(&j, PLACEMENT_LOCALITY);
    pl_check_perm(&j);
    for (int p = 0; p < n; p++)
        assert_int_equal(j.node[j.rank_at[p]], p / m);
    free(again);
    free(again_pos);
    pl_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placement_policy_names),
        cmocka_unit_test(test_placement_bad_input),
        cmocka_unit_test(test_placement_random_against_reference),
        cmocka_unit_test(test_placement_interleave_equal_nodes),
        cmocka_unit_test(test_placement_interleave_node_loss),
        cmocka_unit_test(test_placement_interleave_packages),
        cmocka_unit_test(test_placement_interleave_imbalanced),
        cmocka_unit_test(test_placement_unknown_ids),
        cmocka_unit_test(test_placement_locality_blocks),
        cmocka_unit_test(test_placement_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
