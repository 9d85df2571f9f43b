/* Placement policies (placement/placement.c): names, bad input, valid
 * permutations, determinism, interleave against a naive recursive
 * reference of its definition, imbalanced nodes, unknown ids, large n.
 * The guarantees per policy: test_placement_guarantees.c. */
#include "placement_job.h"

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

/* The core mate: the one other rank on the same known node and core. */
static void test_placement_core_mate(void **state)
{
    (void)state;
    /* Node 0: ranks 0 and 2 on core 0, rank 1 alone on core 1, ranks 3, 4
     * and 5 on core 2; node 1: rank 6 on core 0 (not 0's mate: other
     * node), ranks 7 and 8 unbound. */
    placement_locus_t l[9] = {
        {0, 0, 0, 0}, {0, 0, 0, 1},    {0, 0, 0, 0},
        {0, 0, 0, 2}, {0, 0, 0, 2},    {0, 0, 0, 2},
        {1, 0, 0, 0}, {1, -1, -1, -1}, {1, -1, -1, -1},
    };
    const int want[9] = {2, -1, 0, -1, -1, -1, -1, -1, -1};
    for (int r = 0; r < 9; r++)
        assert_int_equal(placement_core_mate(l, 9, r), want[r]);
    /* Same core number, unknown node: no mate. */
    placement_locus_t u[2] = {{-1, 0, 0, 3}, {-1, 0, 0, 3}};
    assert_int_equal(placement_core_mate(u, 2, 0), -1);
    /* ucftrun --bind-to core on 2 cores: rank i on core i mod 2. */
    placement_locus_t rr[4] = {
        {0, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 0}, {0, 0, 0, 1}};
    for (int r = 0; r < 4; r++)
        assert_int_equal(placement_core_mate(rr, 4, r), r ^ 2);
    assert_int_equal(placement_core_mate(rr, 1, 0), -1); /* alone */
    assert_int_equal(placement_core_mate(NULL, 4, 0), -1);
    assert_int_equal(placement_core_mate(rr, 4, 4), -1);
    assert_int_equal(placement_core_mate(rr, 4, -1), -1);
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
        cmocka_unit_test(test_placement_interleave_imbalanced),
        cmocka_unit_test(test_placement_unknown_ids),
        cmocka_unit_test(test_placement_large),
        cmocka_unit_test(test_placement_core_mate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
