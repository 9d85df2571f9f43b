/*
 * Corrected broadcast, exhaustively on the sim: for every N in a range,
 * every root (N <= 16; roots 0, N/2, N-1 above), every placement of up to
 * f failures at every message boundary of the operation (a rank dies
 * before its k-th send, k = 1 .. its failure-free send count + 1 for one
 * failure, .. its failure-free send count for pairs) or before the
 * operation:
 *  - root alive: every live rank completes with UCFT_OK and the root's
 *    data (no unfinished rank, no error, no wrong data);
 *  - root among the failed: every survivor ends (no unfinished rank) and
 *    nobody holds wrong data; if the root dies before its first send,
 *    every survivor ends with an error.
 */
#include "test_bcast_corrected_util.h"

#include <stdio.h>

/* One failure event: rank dies before the op (k = 0) or before its k-th
 * send. */
typedef struct bct_event {
    int rank;
    unsigned k;
    unsigned slack; /* k of the one boundary past the failure-free sends */
} bct_event_t;

static simrun_fail_t to_fail(bct_event_t e)
{
    simrun_fail_t f = {.rank = e.rank, .k = e.k};
    f.kind = e.k == 0 ? SIMRUN_FAIL_BEFORE_OP : SIMRUN_FAIL_BEFORE_SEND;
    return f;
}

static size_t events_of(const bct_variant_t *var, int n, int root, int f,
                        bct_event_t *ev)
{
    size_t ne = 0;
    for (int r = 0; r < n; r++) {
        int v = (r - root + n) % n; /* identity placement */
        unsigned sends = bct_nchildren(var, v, n) +
                         bct_corrections_of(var, v, n, f, root) + 1;
        for (unsigned k = 0; k <= sends; k++)
            ev[ne++] = (bct_event_t){r, k, sends};
    }
    return ne;
}

typedef struct bct_tally {
    unsigned long runs;
    unsigned long root_runs;
    unsigned long errors_with_root_dead;
} bct_tally_t;

static void check_one(const bct_variant_t *var, int n, int root, int f,
                      const bct_event_t *e, size_t ne, bct_tally_t *t, int lazy)
{
    simrun_fail_t fl[2];
    simrun_result_t r;
    int root_hit = 0, root_first = 0;

    for (size_t i = 0; i < ne; i++) {
        fl[i] = to_fail(e[i]);
        if (e[i].rank == root) {
            root_hit = 1;
            root_first |= e[i].k <= 1;
        }
    }
    bct_run_mode(var, n, root, f, fl, ne, &r, NULL, lazy, 0);
    t->runs++;
    if (!root_hit) {
        if (r.completed != r.live || r.unfinished || r.data_errors ||
            r.failed_ops)
            fail_msg("%s%s n=%d root=%d f=%d fails (%d,%u)(%d,%u): live %d "
                     "completed %d unfinished %d failed %d data_errors %d",
                     var->alg, lazy ? " lazy" : "", n, root, f, e[0].rank,
                     e[0].k, ne > 1 ? e[1].rank : -1, ne > 1 ? e[1].k : 0,
                     r.live, r.completed, r.unfinished, r.failed_ops,
                     r.data_errors);
        return;
    }
    t->root_runs++;
    if (r.unfinished || r.data_errors)
        fail_msg("%s%s n=%d root=%d f=%d root fails (%d,%u)(%d,%u): "
                 "unfinished %d data_errors %d",
                 var->alg, lazy ? " lazy" : "", n, root, f, e[0].rank, e[0].k,
                 ne > 1 ? e[1].rank : -1, ne > 1 ? e[1].k : 0, r.unfinished,
                 r.data_errors);
    if (root_first) {
        /* The root sent nothing: nobody can have the data. */
        assert_int_equal(r.completed, 0);
        assert_int_equal(r.failed_ops, r.live);
    }
    t->errors_with_root_dead += (unsigned long)r.failed_ops;
}

/* All placements of up to f (1 or 2) failures for one (n, root). */
static void exhaust(const bct_variant_t *var, int n, int root, int f,
                    bct_tally_t *t, int lazy)
{
    static bct_event_t ev[4096];
    size_t ne = events_of(var, n, root, f, ev);

    assert_true(ne <= sizeof(ev) / sizeof(ev[0]));
    for (size_t i = 0; i < ne; i++) {
        check_one(var, n, root, f, &ev[i], 1, t, lazy);
        if (f < 2)
            continue;
        for (size_t j = i + 1; j < ne; j++) {
            /* Pairs: boundaries of the failure-free run only. */
            if (ev[j].rank == ev[i].rank || ev[i].k == ev[i].slack ||
                ev[j].k == ev[j].slack)
                continue;
            bct_event_t pair[2] = {ev[i], ev[j]};
            check_one(var, n, root, f, pair, 2, t, lazy);
        }
    }
}

static void exhaust_range_mode(const char *alg, int nmin, int nmax, int f,
                               int all_roots_upto, int lazy)
{
    const bct_variant_t *var = NULL;
    bct_tally_t t = {0};

    for (size_t i = 0; i < BCT_NVARIANTS; i++)
        if (strcmp(bct_variants[i].alg, alg) == 0)
            var = &bct_variants[i];
    assert_non_null(var);
    for (int n = nmin; n <= nmax; n++) {
        if (n <= all_roots_upto) {
            for (int root = 0; root < n; root++)
                exhaust(var, n, root, f, &t, lazy);
        } else {
            const int roots[3] = {0, n / 2, n - 1};
            for (int i = 0; i < 3; i++)
                exhaust(var, n, roots[i], f, &t, lazy);
        }
    }
    print_message("%s%s f=%d n=%d..%d: %lu runs (%lu with the root "
                  "failing, %lu survivor errors there)\n",
                  alg, lazy ? " (lazy copies)" : "", f, nmin, nmax, t.runs,
                  t.root_runs, t.errors_with_root_dead);
}

static void exhaust_range(const char *alg, int nmin, int nmax, int f,
                          int all_roots_upto)
{
    exhaust_range_mode(alg, nmin, nmax, f, all_roots_upto, 0);
}

/* The same with lazy copies (rendezvous sends taken empty by ranks that
 * hold the data, coll_args_t.rndv_min), on a sim whose unbuffered sends
 * complete only when received. */
static void test_bcast_corrected_exhaustive_lazy_checked_f1(void **state)
{
    exhaust_range_mode("corrected", 2, 32, 1, 16, 1);
}

static void test_bcast_corrected_exhaustive_lazy_checked_f2(void **state)
{
    exhaust_range_mode("corrected", 2, 16, 2, 8, 1);
}

static void test_bcast_corrected_exhaustive_lazy_others_f1(void **state)
{
    exhaust_range_mode("corrected-opportunistic", 2, 24, 1, 8, 1);
    exhaust_range_mode("corrected-failproof", 2, 24, 1, 8, 1);
    exhaust_range_mode("corrected-kary", 2, 24, 1, 8, 1);
    exhaust_range_mode("corrected-lame", 2, 24, 1, 8, 1);
}

static void test_bcast_corrected_exhaustive_lazy_failproof_f2(void **state)
{
    exhaust_range_mode("corrected-failproof", 2, 12, 2, 6, 1);
}

static void test_bcast_corrected_exhaustive_checked_f1(void **state)
{
    exhaust_range("corrected", 2, 32, 1, 16);
}

static void test_bcast_corrected_exhaustive_checked_f2(void **state)
{
    exhaust_range("corrected", 2, 32, 2, 16);
}

static void test_bcast_corrected_exhaustive_opportunistic_f1(void **state)
{
    exhaust_range("corrected-opportunistic", 2, 32, 1, 16);
}

static void test_bcast_corrected_exhaustive_opportunistic_f2(void **state)
{
    exhaust_range("corrected-opportunistic", 2, 16, 2, 8);
}

/* Batched copies: on the simulator's single instance every copy leaves
 * as it is appended (nothing to batch it with), so these runs check the
 * protocol's decisions; tests/sim/test_bcast_batched.c runs instances
 * back to back with copies held. */
static void test_bcast_corrected_exhaustive_batched_f1(void **state)
{
    exhaust_range("corrected-batched", 2, 32, 1, 16);
}

static void test_bcast_corrected_exhaustive_batched_f2(void **state)
{
    exhaust_range("corrected-batched", 2, 16, 2, 8);
}

static void test_bcast_corrected_exhaustive_failproof_f1(void **state)
{
    exhaust_range("corrected-failproof", 2, 32, 1, 16);
}

static void test_bcast_corrected_exhaustive_failproof_f2(void **state)
{
    exhaust_range("corrected-failproof", 2, 16, 2, 8);
}

static void test_bcast_corrected_exhaustive_kary_f1(void **state)
{
    exhaust_range("corrected-kary", 2, 32, 1, 16);
}

static void test_bcast_corrected_exhaustive_lame_f1(void **state)
{
    exhaust_range("corrected-lame", 2, 32, 1, 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_corrected_exhaustive_checked_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_checked_f2),
        cmocka_unit_test(test_bcast_corrected_exhaustive_opportunistic_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_opportunistic_f2),
        cmocka_unit_test(test_bcast_corrected_exhaustive_batched_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_batched_f2),
        cmocka_unit_test(test_bcast_corrected_exhaustive_failproof_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_failproof_f2),
        cmocka_unit_test(test_bcast_corrected_exhaustive_kary_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_lame_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_lazy_checked_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_lazy_checked_f2),
        cmocka_unit_test(test_bcast_corrected_exhaustive_lazy_others_f1),
        cmocka_unit_test(test_bcast_corrected_exhaustive_lazy_failproof_f2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
