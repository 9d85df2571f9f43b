/*
 * Corrected broadcast on the sim: tree arithmetic (k-ary, Lamé), exact
 * failure-free message counts, any root, root failures, more than f
 * failures (must end), seeded random campaigns up to N = 4096. The
 * exhaustive placements are in test_bcast_corrected_exhaustive.c.
 */
#include "test_bcast_corrected_util.h"

static void check_is_tree(int tree, unsigned k, int n)
{
    int *seen = calloc((size_t)n, sizeof(int));
    int edges = 0;
    assert_non_null(seen);
    for (int v = 0; v < n; v++) {
        int prev = v;
        for (unsigned i = 0;; i++) {
            int c = tree == 1 ? coll_kary_child(v, i, n, k)
                              : coll_lame_child(v, i, n, k);
            if (c < 0)
                break;
            assert_true(c > prev && c < n);
            assert_int_equal(
                tree == 1 ? coll_kary_parent(c, k) : coll_lame_parent(c, k), v);
            seen[c]++;
            edges++;
            prev = c;
        }
    }
    assert_int_equal(edges, n - 1);
    for (int v = 1; v < n; v++)
        assert_int_equal(seen[v], 1);
    free(seen);
}

static void test_bcast_corrected_trees(void **state)
{
    /* k = 2, n = 15: 0 -> 1,2; 1 -> 3,5; 2 -> 4,6; 3 -> 7,11. */
    static const int kary2[4][2] = {{1, 2}, {3, 5}, {4, 6}, {7, 11}};
    for (int v = 0; v < 4; v++)
        for (unsigned i = 0; i < 2; i++)
            assert_int_equal(coll_kary_child(v, i, 15, 2), kary2[v][i]);
    assert_int_equal(coll_kary_child(0, 2, 15, 2), -1);
    /* Lamé order 2 (Fibonacci): 0 -> 1,2,3,5,8; 1 -> 4,6,9; 2 -> 7,10. */
    static const int lame2[3][5] = {
        {1, 2, 3, 5, 8}, {4, 6, 9, -1, -1}, {7, 10, -1, -1, -1}};
    for (int v = 0; v < 3; v++)
        for (unsigned i = 0; i < 5; i++)
            assert_int_equal(coll_lame_child(v, i, 13, 2), lame2[v][i]);
    /* Lamé order 1 is the binomial tree. */
    for (int n = 1; n <= 200; n++)
        for (int v = 0; v < n; v++)
            for (unsigned i = 0; i < 9; i++)
                assert_int_equal(coll_lame_child(v, i, n, 1),
                                 coll_binomial_child(v, i, n));
    for (int n = 1; n <= 300; n += (n < 40 ? 1 : 7))
        for (unsigned k = 1; k <= 5; k++) {
            if (k >= 2)
                check_is_tree(1, k, n);
            check_is_tree(2, k, n);
        }
    /* Interleaved: the subtree of the root's first child (k-ary, k = 2)
     * is every odd rank. */
    for (int v = 1; v < 64; v++) {
        int a = v;
        while (coll_kary_parent(a, 2) != 0)
            a = coll_kary_parent(a, 2);
        assert_int_equal(a == 1, v % 2 == 1);
    }
}

/* Without failures: N-1 tree messages plus the corrections of every rank
 * (bct_corrections_of: checked min(2h, N-1) with h = 1, ceil(f / 2) from
 * f = 3 on, failure-proof
 * min(2(f+1), N-1); opportunistic its window less the root and its
 * children, exactly for f = 1, at most for f > 1; none at N = 2), any
 * root. */
static void test_bcast_corrected_counts(void **state)
{
    for (size_t i = 0; i < BCT_NVARIANTS; i++) {
        const bct_variant_t *var = &bct_variants[i];
        for (int f = 1; f <= 3; f++)
            for (int n = 1; n <= 130; n += (n < 40 ? 1 : 9))
                for (int root = 0; root < n; root += 1 + n / 3) {
                    simrun_result_t r;
                    bct_run(var, n, root, f, NULL, 0, &r, NULL);
                    bct_assert_delivered(&r);
                    assert_int_equal(r.completed, n);
                    if (var->window && f > 1)
                        assert_true(r.stats.messages <=
                                    bct_messages(var, n, f, root));
                    else
                        assert_int_equal(r.stats.messages,
                                         bct_messages(var, n, f, root));
                }
    }
    /* Checked: exactly 3N - 1 messages for N >= 3. Opportunistic, f = 1:
     * N - 1 plus one copy to every rank but the root and its 10 children
     * (1, 2, 4, .., 512), and one to the root in instance 7016 (root 16),
     * not in 7017 (root 17). */
    simrun_result_t r;
    bct_run(&bct_variants[0], 1000, 17, 1, NULL, 0, &r, NULL);
    assert_int_equal(r.stats.messages, 2999);
    bct_run(&bct_variants[1], 1000, 17, 1, NULL, 0, &r, NULL);
    assert_int_equal(r.stats.messages, 999 + 989);
    bct_run(&bct_variants[1], 1000, 16, 1, NULL, 0, &r, NULL);
    assert_int_equal(r.stats.messages, 999 + 989 + 1);
}

/* Latency on the LogGP model (a CPU per rank), no failure: every
 * variant's last output is final no later than the binomial broadcast's
 * last delivery (the corrections are off the critical path; a correction
 * from a ring neighbour can even beat a deep tree message), and the
 * checked corrections themselves end after that (sim_latency_ns). Binomial has
 * no early completion: its outputs are final at its completion. */
static void test_bcast_corrected_output_latency(void **state)
{
    const coll_op_ops_t *bin = coll_op_find("bcast", "binomial");
    assert_non_null(bin);
    for (int n = 2; n <= 130; n += (n < 40 ? 1 : 9))
        for (int root = 0; root < n; root += 1 + n / 3) {
            simrun_params_t p;
            simrun_result_t b;
            simrun_params_default(&p, bin, n);
            p.root = root;
            assert_int_equal(simrun_run(&p, &b, NULL), UCFT_OK);
            assert_int_equal(b.ready_ns, b.sim_latency_ns);
            for (size_t i = 0; i < BCT_NVARIANTS; i++) {
                simrun_result_t r;
                bct_run(&bct_variants[i], n, root, 1, NULL, 0, &r, NULL);
                bct_assert_delivered(&r);
                /* Checked: the exchange with the neighbours ends after
                 * the data is everywhere. Opportunistic: its one-way
                 * copies may end with the last delivery. */
                int after = bct_variants[i].window
                                ? r.ready_ns > r.sim_latency_ns
                                : n >= 3 && r.ready_ns >= r.sim_latency_ns;
                if (r.ready_ns > b.sim_latency_ns || after)
                    fail_msg("%s n %d root %d: output final %llu ns, "
                             "corrections end %llu ns, binomial %llu ns",
                             bct_variants[i].alg, n, root,
                             (unsigned long long)r.ready_ns,
                             (unsigned long long)r.sim_latency_ns,
                             (unsigned long long)b.sim_latency_ns);
            }
        }
}

/* The root dies before its k-th send on a larger ring: survivors end,
 * nobody has wrong data, and everyone errs when nothing was sent. */
static void test_bcast_corrected_root_failure(void **state)
{
    const int n = 300, root = 123;
    for (size_t i = 0; i < BCT_NVARIANTS; i++) {
        unsigned sends = bct_nchildren(&bct_variants[i], 0, n) +
                         bct_corrections_of(&bct_variants[i], 0, n, 1, root);
        for (unsigned k = 0; k <= sends; k++) {
            simrun_fail_t fl = {.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                          : SIMRUN_FAIL_BEFORE_OP,
                                .rank = root,
                                .k = k};
            simrun_result_t r;
            bct_run(&bct_variants[i], n, root, 1, &fl, 1, &r, NULL);
            bct_assert_ended(&r);
            assert_int_equal(r.live, n - 1);
            if (k <= 1) {
                assert_int_equal(r.completed, 0);
                assert_int_equal(r.failed_ops, n - 1);
            }
        }
    }
}

/* Draws a failure plan: `nf` distinct ranks (the root allowed or not),
 * each before the op or before a random send. */
static size_t draw_plan(uint64_t *seed, int n, int root, int nf, int allow_root,
                        simrun_fail_t *fl)
{
    size_t m = 0;
    while ((int)m < nf && (int)m < n - 1) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        int rk = (int)((*seed >> 33) % (uint64_t)n);
        unsigned k = (unsigned)((*seed >> 20) % 8);
        int dup = rk == root && !allow_root;
        for (size_t j = 0; j < m; j++)
            dup |= fl[j].rank == rk;
        if (dup)
            continue;
        fl[m++] = (simrun_fail_t){.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                            : SIMRUN_FAIL_BEFORE_OP,
                                  .rank = rk,
                                  .k = k};
    }
    return m;
}

/* Sanitizer builds run the random campaigns on rings of up to a quarter
 * of the size, and half the runs beyond f (single-threaded code: TSan has
 * nothing to find; under it this binary neared its 120 s bound). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BCT_SCALE       4
#define BCT_BEYOND_STEP 2
#else
#define BCT_SCALE       1
#define BCT_BEYOND_STEP 1
#endif

/* Seeded random campaigns, N up to 4096, up to f failures of non-roots:
 * everyone live gets the data. */
static void test_bcast_corrected_random_campaign(void **state)
{
    uint64_t seed = 0x5eedull;
    unsigned runs = 0;
    for (size_t i = 0; i < BCT_NVARIANTS; i++)
        for (int it = 0; it < 60; it++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int n = 2 + (int)((seed >> 35) % (4095 / BCT_SCALE));
            int root = (int)((seed >> 17) % (uint64_t)n);
            int f = 1 + it % 3;
            simrun_fail_t fl[3];
            size_t m = draw_plan(&seed, n, root, 1 + it % f, 0, fl);
            simrun_result_t r;
            bct_run(&bct_variants[i], n, root, f, fl, m, &r, NULL);
            bct_assert_delivered(&r);
            runs++;
        }
    print_message("%u random runs\n", runs);
}

/* Staggered starts: ranks enter up to 2 or 20 us apart and hear of a
 * death a quarter of that after it, so some start knowing of it (their
 * sends to the dead rank fail at once, their state is told right after
 * its start). Up to f failures of non-roots, eager and lazy copies:
 * everyone live gets the data. */
static void test_bcast_corrected_staggered(void **state)
{
    uint64_t seed = 0x57a6ull;
    unsigned runs = 0, knowing = 0;
    for (size_t i = 0; i < BCT_NVARIANTS; i++)
        for (int it = 0; it < 120; it++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int n = 2 + (int)((seed >> 35) % 63);
            int root = (int)((seed >> 17) % (uint64_t)n);
            int f = 1 + it % 3;
            simrun_fail_t fl[3];
            size_t m = draw_plan(&seed, n, root, 1 + it % f, 0, fl);
            simrun_result_t r;
            bct_run_mode(&bct_variants[i], n, root, f, fl, m, &r, NULL,
                         it % 4 == 3, it % 2 ? 20000 : 2000);
            bct_assert_delivered(&r);
            knowing += r.started_knowing > 0;
            runs++;
        }
    print_message("%u staggered runs, %u with a rank that started knowing "
                  "of a death\n",
                  runs, knowing);
    assert_true(knowing > runs / 10);
}

/* More than f failures, the root included or not: every run ends (no
 * unfinished rank, no wrong data), errors allowed. */
static void test_bcast_corrected_beyond_f_ends(void **state)
{
    uint64_t seed = 0xbeefull;
    unsigned runs = 0, with_errors = 0;
    for (size_t i = 0; i < BCT_NVARIANTS; i++)
        for (int it = 0; it < 400; it += BCT_BEYOND_STEP) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int n = 2 + (int)((seed >> 35) % (it < 300 ? 40 : 2000));
            int root = (int)((seed >> 17) % (uint64_t)n);
            int nf = 2 + it % 7;
            simrun_fail_t fl[8];
            size_t m = draw_plan(&seed, n, root, nf, it % 4 == 0, fl);
            simrun_result_t r;
            bct_run(&bct_variants[i], n, root, 1, fl, m, &r, NULL);
            bct_assert_ended(&r);
            with_errors += r.failed_ops > 0;
            runs++;
        }
    print_message("%u runs beyond f, %u with errors\n", runs, with_errors);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_corrected_trees),
        cmocka_unit_test(test_bcast_corrected_counts),
        cmocka_unit_test(test_bcast_corrected_output_latency),
        cmocka_unit_test(test_bcast_corrected_root_failure),
        cmocka_unit_test(test_bcast_corrected_random_campaign),
        cmocka_unit_test(test_bcast_corrected_beyond_f_ends),
        cmocka_unit_test(test_bcast_corrected_staggered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
