/* The approximate allreduce family on the sim (collectives/gossip.h,
 * docs/gossip.md): every algorithm converges to within eps of the exact
 * sum (or mean) at every rank, for float and double, on every topology it
 * supports; over the survivors when ranks crash (push-flow family);
 * with an error, never a hang, when the survivors are cut apart; the
 * checksum variants deliver within eps despite a flipped exponent bit
 * where push-sum, push-flow and recursive doubling deliver wrong values;
 * bad parameters are refused; exact requests never find them. */
#include "collectives/gossip.h"
#include "collectives/gossip_sched.h"
#include "simrun/oracle.h"
#include "simrun/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define G_SLOW 1
#else
#define G_SLOW 0
#endif

static const char *const algs[] = {"ps",  "pf",    "pflc", "pfcc",
                                   "hps", "hpflc", "ardb"};
#define NALG (sizeof(algs) / sizeof(algs[0]))

static const coll_op_ops_t *approx(const char *alg)
{
    const coll_op_ops_t *o = coll_op_find("allreduce_approx", alg);
    assert_non_null(o);
    return o;
}

/* A run of `alg` on n ranks with count elements of dtype. */
static void setup(simrun_params_t *p, coll_gossip_params_t *g,
                  const coll_op_ops_t *o, int n, int dtype, size_t count,
                  double eps)
{
    simrun_params_default(p, o, n);
    memset(g, 0, sizeof(*g));
    g->eps = eps;
    g->seed = 5;
    p->args.dtype = dtype;
    p->args.redop = COLL_REDOP_SUM;
    p->args.count = count;
    p->len = count * (dtype == COLL_DTYPE_FLOAT ? 4 : 8);
    p->args.gossip = g;
    p->max_events = 50u * 1000 * 1000;
}

static void expect_all_right(const simrun_params_t *p, const char *what)
{
    simrun_result_t r;
    assert_int_equal(simrun_run(p, &r, NULL), UCFT_OK);
    if (r.bounded || r.completed != r.live || r.data_errors != 0 ||
        r.unfinished != 0 || r.not_idle != 0)
        fail_msg("%s %s n=%d: %d of %d live delivered, %d wrong, %d "
                 "unfinished, %d not idle%s",
                 p->op->alg, what, p->sim.nranks, r.completed, r.live,
                 r.data_errors, r.unfinished, r.not_idle,
                 r.bounded ? " (bounded)" : "");
}

static void test_gossip_converges(void **state)
{
    const int sizes[] = {1, 2, 3, 7, 32, 64};
    (void)state;
    for (size_t a = 0; a < NALG; a++)
        for (size_t i = 0; i < 6; i++)
            for (int dt = 0; dt < 2; dt++) {
                simrun_params_t p;
                coll_gossip_params_t g;
                int dtype = dt ? COLL_DTYPE_FLOAT : COLL_DTYPE_DOUBLE;
                setup(&p, &g, approx(algs[a]), sizes[i], dtype, 3,
                      dt ? 1e-5 : 1e-8);
                g.mean = (int)(i & 1);
                expect_all_right(&p, dt ? "float" : "double");
            }
}

static void test_gossip_topologies(void **state)
{
    const int topos[] = {GOSSIP_TOPO_RING, GOSSIP_TOPO_HYPERCUBE};
    (void)state;
    for (size_t a = 0; a < 4; a++) /* the random-neighbour ones */
        for (int t = 0; t < 2; t++)
            for (int n = 2; n <= (G_SLOW ? 9 : 16); n += 7) {
                simrun_params_t p;
                coll_gossip_params_t g;
                setup(&p, &g, approx(algs[a]), n, COLL_DTYPE_DOUBLE, 1, 1e-6);
                g.topo = topos[t];
                expect_all_right(&p, t ? "hypercube" : "ring");
            }
}

/* Crashes before and during the operation: the push-flow family and the
 * round-based variants end within eps of the survivors' exact sum at
 * every survivor (the oracle checks against the survivors). */
static void test_gossip_crashes_survivors(void **state)
{
    const char *flowalgs[] = {"pf", "pflc", "pfcc", "hpflc"};
    (void)state;
    for (size_t a = 0; a < 4; a++)
        for (int scen = 0; scen < 3; scen++) {
            simrun_params_t p;
            coll_gossip_params_t g;
            simrun_fail_t f[2] = {
                {.kind = SIMRUN_FAIL_BEFORE_SEND, .rank = 5, .k = 10},
                {.kind = SIMRUN_FAIL_BEFORE_SEND, .rank = 17, .k = 25}};
            setup(&p, &g, approx(flowalgs[a]), 32, COLL_DTYPE_DOUBLE, 2, 1e-8);
            g.rounds = 120; /* room to re-converge after a late death */
            if (scen == 0) {
                p.fail_random = 3;
            } else {
                p.fails = f;
                p.nfails = (size_t)scen;
            }
            expect_all_right(&p, "crash");
        }
}

/* The ring cut in two places: every survivor ends with
 * UCFT_ERR_PROC_FAILED, none hangs. */
static void test_gossip_cut_ring_errors(void **state)
{
    simrun_params_t p;
    coll_gossip_params_t g;
    simrun_result_t r;
    simrun_fail_t f[2] = {{.kind = SIMRUN_FAIL_BEFORE_OP, .rank = 3},
                          {.kind = SIMRUN_FAIL_BEFORE_SEND, .rank = 9, .k = 4}};
    (void)state;
    setup(&p, &g, approx("pflc"), 16, COLL_DTYPE_DOUBLE, 1, 1e-6);
    g.topo = GOSSIP_TOPO_RING;
    p.fails = f;
    p.nfails = 2;
    assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
    assert_int_equal(r.bounded, 0);
    assert_int_equal(r.live, 14);
    assert_int_equal(r.unfinished, 0);
    assert_int_equal(r.failed_ops, 14);
}

/* One flipped exponent bit (bit 62 of the first value of rank 0's 20th
 * message) at n = 32: PFLC, PFCC and HPFLC still deliver within eps at
 * every rank; push-sum and push-flow deliver wrong values everywhere; so
 * does recursive doubling for the ranks the flipped value reaches. */
static void test_gossip_flip_exponent(void **state)
{
    coll_flip_params_t fl = {.bit = 62, .msg = 20};
    (void)state;
    for (size_t a = 0; a < NALG; a++) {
        simrun_params_t p;
        coll_gossip_params_t g;
        simrun_result_t r;
        if (strcmp(algs[a], "ardb") == 0 || strcmp(algs[a], "hps") == 0)
            continue;
        setup(&p, &g, approx(algs[a]), 32, COLL_DTYPE_DOUBLE, 1, 1e-10);
        g.rounds = 250;
        p.flip = &fl;
        p.flip_rank = 0;
        assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
        assert_int_equal(r.flips, 1);
        assert_int_equal(r.completed, 32);
        int corrected = strcmp(algs[a], "ps") != 0 && strcmp(algs[a], "pf");
        if (corrected && r.data_errors != 0)
            fail_msg("%s: %d ranks wrong after one flip", algs[a],
                     r.data_errors);
        if (!corrected && r.data_errors != 32)
            fail_msg("%s: only %d ranks wrong after an exponent flip", algs[a],
                     r.data_errors);
    }
    /* Recursive doubling on the same data with the same bit flipped in
     * rank 0's first message: the half of the ranks that this message's
     * receiver reaches end wrong. */
    simrun_params_t p;
    coll_gossip_params_t g;
    simrun_result_t r;
    coll_flip_params_t fr = {.bit = 62, .msg = 1};
    setup(&p, &g, coll_op_find("allreduce", "recdbl"), 32, COLL_DTYPE_DOUBLE, 1,
          1e-10);
    p.oracle = &coll_oracle_gossip;
    p.flip = &fr;
    p.flip_rank = 0;
    assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
    assert_int_equal(r.completed, 32);
    assert_int_equal(r.data_errors, 16);
}

/* Many flips (rate 1e-3 per message, about 15 in a run of 32 x 300):
 * PFCC and HPFLC still deliver within eps. */
static void test_gossip_flip_rate(void **state)
{
    const char *ca[] = {"pfcc", "hpflc"};
    coll_flip_params_t fl = {.bit = -1, .rate = 1e-3, .seed = 3};
    (void)state;
    for (size_t a = 0; a < 2; a++) {
        simrun_params_t p;
        coll_gossip_params_t g;
        simrun_result_t r;
        setup(&p, &g, approx(ca[a]), 32, COLL_DTYPE_DOUBLE, 1, 1e-8);
        g.rounds = 300;
        p.flip = &fl;
        p.flip_rank = -1;
        assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
        assert_true(r.flips >= 3);
        if (r.completed != 32 || r.data_errors != 0)
            fail_msg("%s: %u flips, %d of 32 delivered, %d wrong", ca[a],
                     r.flips, r.completed, r.data_errors);
    }
}

/* With rendezvous sends every message is received (each state idle). */
static void test_gossip_rndv(void **state)
{
    (void)state;
    for (size_t a = 0; a < NALG; a++) {
        simrun_params_t p;
        coll_gossip_params_t g;
        setup(&p, &g, approx(algs[a]), 13, COLL_DTYPE_DOUBLE, 2, 1e-6);
        p.sim.rndv_min = 1;
        expect_all_right(&p, "rndv");
    }
}

/* A large run: HPFLC, float, eps 1e-3 at 2^14 ranks (2^20 in
 * docs/gossip.md). */
static void test_gossip_large(void **state)
{
    simrun_params_t p;
    coll_gossip_params_t g;
    (void)state;
    setup(&p, &g, approx("hpflc"), G_SLOW ? 1 << 10 : 1 << 14, COLL_DTYPE_FLOAT,
          1, 1e-3);
    expect_all_right(&p, "large");
}

static void expect_invalid(simrun_params_t *p)
{
    simrun_result_t r;
    assert_int_equal(simrun_run(p, &r, NULL), UCFT_ERR_INVALID_PARAM);
}

static void test_gossip_bad_params(void **state)
{
    simrun_params_t p;
    coll_gossip_params_t g;
    coll_flip_params_t fl = {.bit = 3, .msg = 0};
    (void)state;
    setup(&p, &g, approx("pf"), 4, COLL_DTYPE_INT64, 1, 1e-3);
    p.len = 8;
    expect_invalid(&p); /* integers */
    setup(&p, &g, approx("pf"), 4, COLL_DTYPE_DOUBLE, 1, 1.5);
    expect_invalid(&p); /* eps */
    setup(&p, &g, approx("hps"), 4, COLL_DTYPE_DOUBLE, 1, 1e-3);
    g.topo = GOSSIP_TOPO_RING;
    expect_invalid(&p); /* permutation schedules need the full topology */
    setup(&p, &g, approx("pf"), 4, COLL_DTYPE_DOUBLE, 1, 1e-3);
    g.topo = 7;
    expect_invalid(&p);
    setup(&p, &g, approx("pf"), 4, COLL_DTYPE_DOUBLE, 1, 1e-3);
    p.args.redop = COLL_REDOP_MAX;
    expect_invalid(&p); /* sums only */
    setup(&p, &g, approx("pf"), 4, COLL_DTYPE_DOUBLE, 1, 1e-3);
    p.flip = &fl;
    expect_invalid(&p); /* message numbers start at 1 */
    fl = (coll_flip_params_t){.bit = -1, .rate = 2};
    expect_invalid(&p);
    /* An exact request never finds an approximate algorithm. */
    for (size_t a = 0; a < NALG; a++)
        assert_null(coll_op_find("allreduce", algs[a]));
}

/* The schedules: permutations are bijections, cycles single n-cycles. */
static void test_gossip_sched_perm(void **state)
{
    const uint32_t sizes[] = {1, 2, 3, 5, 16, 17, 1000};
    (void)state;
    for (size_t i = 0; i < 7; i++) {
        uint32_t n = sizes[i];
        uint8_t *seen = calloc(n, 1);
        assert_non_null(seen);
        for (uint32_t x = 0; x < n; x++) {
            uint32_t y = gs_perm(42, n, x, 0);
            assert_true(y < n);
            assert_int_equal(gs_perm(42, n, y, 1), x);
            assert_int_equal(seen[y], 0);
            seen[y] = 1;
        }
        free(seen);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gossip_converges),
        cmocka_unit_test(test_gossip_topologies),
        cmocka_unit_test(test_gossip_crashes_survivors),
        cmocka_unit_test(test_gossip_cut_ring_errors),
        cmocka_unit_test(test_gossip_flip_exponent),
        cmocka_unit_test(test_gossip_flip_rate),
        cmocka_unit_test(test_gossip_rndv),
        cmocka_unit_test(test_gossip_large),
        cmocka_unit_test(test_gossip_bad_params),
        cmocka_unit_test(test_gossip_sched_perm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
