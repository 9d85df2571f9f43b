/* Collectives on the sim transport, through the same driver as ucft-sim:
 * LogGP closed forms, exact message counts, exact delivered sets under
 * failures, determinism. */
#include "collectives/dtype.h"
#include "collectives/tree_binomial.h"
#include "simrun/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const coll_op_ops_t *bcast(void)
{
    const coll_op_ops_t *op = coll_op_find("bcast", "binomial");
    assert_non_null(op);
    return op;
}

static uint64_t bytes_ns(const sim_loggp_t *p, size_t s)
{
    return s <= 1 ? 0 : ((s - 1) * p->G_ps + 999) / 1000;
}

/*
 * Binomial broadcast of s bytes on N = 2^k ranks, closed form.
 * One hop (send start to delivery, receiver idle): lambda = o + (s-1)G + L
 * + o. A sender's consecutive sends start Delta = max(g, o + (s-1)G) apart
 * (sends are chained on completion at ts + o <= ts + Delta, so chaining
 * costs nothing). A rank v first sends at its own delivery time T(v), and
 * child v + 2^j is its (j - bl(v))-th child. For v with set bits
 * p1 < ... < pm the path from the root is 0 -> 2^p1 -> 2^p1 + 2^p2 -> ...
 * and each hop waits (p_i - p_{i-1} - 1) sends, so
 *   T(v) = m * lambda + (pm + 1 - m) * Delta.
 * With pm <= k - 1 the maximum over v is max over m in 1..k of
 *   m * lambda + (k - m) * Delta = max(k * lambda, lambda + (k-1) * Delta)
 * (linear in m). Every rank receives exactly once, so no receive port is
 * ever contended, and the root's last send completes at (k-1)Delta + o,
 * before that.
 */
static uint64_t closed_form(const sim_loggp_t *p, unsigned k, size_t s)
{
    if (k == 0)
        return 0;
    uint64_t lambda = 2 * p->o_ns + bytes_ns(p, s) + p->L_ns;
    uint64_t busy = p->o_ns + bytes_ns(p, s);
    uint64_t delta = busy > p->g_ns ? busy : p->g_ns;
    uint64_t a = k * lambda, b = lambda + (k - 1) * delta;
    return a > b ? a : b;
}

static void test_sim_coll_bcast_closed_form(void **state)
{
    const sim_loggp_t models[] = {
        {SIM_LOGGP_DEFAULT_L_NS, SIM_LOGGP_DEFAULT_O_NS, SIM_LOGGP_DEFAULT_G_NS,
         SIM_LOGGP_DEFAULT_GB_PS},
        {1000, 300, 20000, 80}, /* huge gap: lambda < Delta */
        {500, 100, 50, 1000},   /* bandwidth-bound: (s-1)G dominates */
    };
    const size_t sizes[] = {0, 1, 8, 4096};

    for (size_t mi = 0; mi < 3; mi++)
        for (size_t si = 0; si < 4; si++)
            for (unsigned k = 0; k <= 11; k++) {
                simrun_params_t p;
                simrun_result_t r;
                int n = 1 << k;
                simrun_params_default(&p, bcast(), n);
                p.sim.loggp = models[mi];
                p.len = sizes[si];
                assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
                assert_int_equal(r.sim_latency_ns,
                                 closed_form(&models[mi], k, sizes[si]));
                assert_int_equal(r.stats.messages, (uint64_t)n - 1);
                assert_int_equal(r.stats.bytes, ((uint64_t)n - 1) * sizes[si]);
                assert_int_equal(r.completed, n);
                assert_int_equal(r.data_errors, 0);
                assert_int_equal(r.bounded, 0);
            }
}

static void test_sim_coll_bcast_any_root_any_n(void **state)
{
    for (int n = 1; n <= 40; n++)
        for (int root = 0; root < n; root += 3) {
            simrun_params_t p;
            simrun_result_t r;
            simrun_params_default(&p, bcast(), n);
            p.root = root;
            p.len = 13;
            p.seq = (uint32_t)(n * 100 + root);
            assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
            assert_int_equal(r.stats.messages, (uint64_t)n - 1);
            assert_int_equal(r.completed, n);
            assert_int_equal(r.data_errors, 0);
        }
}

/* The root dies before its k-th send: the subtrees of its children
 * number k-1, k, ... (0-based) are lost. Child 2^j's subtree is the vranks
 * whose lowest set bit is j, so vrank v > 0 is reached iff its lowest set
 * bit is below k-1. The lost ranks end with the error: the root's lost
 * children learn of its death (on_failure) and pass the error down, one
 * error message to every other lost rank. */
static void test_sim_coll_bcast_root_dies_before_kth_send(void **state)
{
    const int n = 64;
    uint8_t ok[64];

    for (unsigned k = 1; k <= 6; k++) { /* the root has 6 children */
        simrun_params_t p;
        simrun_result_t r;
        simrun_fail_t f = {.kind = SIMRUN_FAIL_BEFORE_SEND, .rank = 0, .k = k};
        int expect = 0;
        simrun_params_default(&p, bcast(), n);
        p.fails = &f;
        p.nfails = 1;
        assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
        assert_int_equal(ok[0], 0);
        for (int v = 1; v < n; v++) {
            int reached = __builtin_ctz((unsigned)v) < (int)k - 1;
            assert_int_equal(ok[v], reached);
            expect += reached;
        }
        assert_int_equal(r.completed, expect);
        assert_int_equal(r.failed_ops, n - 1 - expect);
        assert_int_equal(r.unfinished, 0);
        assert_int_equal(r.live, n - 1);
        int lost_children = 6 - ((int)k - 1);
        assert_int_equal(r.stats.messages, (uint64_t)expect +
                                               (uint64_t)(n - 1 - expect) -
                                               (uint64_t)lost_children);
        assert_int_equal(r.data_errors, 0);
        assert_int_equal(r.bounded, 0);
    }
    /* k = 3 concretely: exactly the ranks not divisible by 4. */
    simrun_params_t p;
    simrun_result_t r;
    simrun_fail_t f = {.kind = SIMRUN_FAIL_BEFORE_SEND, .rank = 0, .k = 3};
    simrun_params_default(&p, bcast(), n);
    p.fails = &f;
    p.nfails = 1;
    assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
    for (int v = 0; v < n; v++)
        assert_int_equal(ok[v], v % 4 != 0);
    assert_int_equal(r.completed, 48);
}

/* v is in the subtree of u iff u is on v's path to the root. */
static int in_subtree(int v, int u)
{
    for (; v > 0; v = coll_binomial_parent(v))
        if (v == u)
            return 1;
    return u == 0;
}

/* Baseline, not corrected: a failed non-root rank (before the op, at a
 * time, or before a send) cuts off exactly its subtree (or the part of it
 * below its unsent children); nothing hangs. */
static void test_sim_coll_bcast_nonroot_failures(void **state)
{
    const int n = 100;
    uint8_t ok[100];
    const int victims[] = {1, 5, 6, 12, 37, 99};

    for (size_t i = 0; i < sizeof(victims) / sizeof(victims[0]); i++) {
        int d = victims[i];
        for (int kind = 0; kind < 2; kind++) {
            simrun_params_t p;
            simrun_result_t r;
            simrun_fail_t f = {.rank = d};
            f.kind = kind ? SIMRUN_FAIL_AT_TIME : SIMRUN_FAIL_BEFORE_OP;
            f.time = 0;
            simrun_params_default(&p, bcast(), n);
            p.root = 0;
            p.fails = &f;
            p.nfails = 1;
            assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
            assert_int_equal(r.bounded, 0);
            int expect = 0;
            for (int v = 0; v < n; v++) {
                int reached = !in_subtree(v, d);
                assert_int_equal(ok[v], reached);
                expect += reached;
            }
            assert_int_equal(r.completed, expect);
        }
    }
    /* Rank 1 (children 3, 5, 9, 17, 33, 65) dies before its 2nd send:
     * only 3's subtree of its own is reached. */
    simrun_params_t p;
    simrun_result_t r;
    simrun_fail_t f = {.kind = SIMRUN_FAIL_BEFORE_SEND, .rank = 1, .k = 2};
    simrun_params_default(&p, bcast(), n);
    p.fails = &f;
    p.nfails = 1;
    assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
    for (int v = 0; v < n; v++) {
        int cut = in_subtree(v, 1) && !in_subtree(v, 3);
        assert_int_equal(ok[v], !cut);
    }
}

static void test_sim_coll_determinism(void **state)
{
    simrun_result_t r[3];
    uint8_t ok[3][512];

    for (int i = 0; i < 3; i++) {
        simrun_params_t p;
        simrun_params_default(&p, bcast(), 512);
        p.fail_random = 6;
        p.sim.seed = i < 2 ? 1234 : 999;
        assert_int_equal(simrun_run(&p, &r[i], ok[i]), UCFT_OK);
        assert_int_equal(r[i].live, 512 - 6);
        assert_int_equal(r[i].bounded, 0);
    }
    assert_true(r[0].trace_hash == r[1].trace_hash);
    assert_memory_equal(ok[0], ok[1], 512);
    assert_int_equal(r[0].sim_latency_ns, r[1].sim_latency_ns);
    assert_true(r[0].trace_hash != r[2].trace_hash);
    assert_memory_not_equal(ok[0], ok[2], 512);
}

static void test_sim_coll_ring(void **state)
{
    const coll_op_ops_t *ring = coll_op_find("ring", NULL);
    simrun_params_t p;
    simrun_result_t r;
    uint8_t ok[100];

    assert_non_null(ring);
    assert_string_equal(ring->alg, "exchange");
    for (int n = 1; n <= 100; n += 33) {
        simrun_params_default(&p, ring, n);
        p.len = 24;
        assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
        assert_int_equal(r.completed, n);
        assert_int_equal(r.stats.messages, (uint64_t)n);
        assert_int_equal(r.data_errors, 0);
        /* All at once: one hop, lambda = 2o + (s-1)G + L. */
        assert_int_equal(r.sim_latency_ns, 2 * SIM_LOGGP_DEFAULT_O_NS +
                                               SIM_LOGGP_DEFAULT_L_NS +
                                               bytes_ns(&p.sim.loggp, 24));
    }
    simrun_fail_t f = {.kind = SIMRUN_FAIL_BEFORE_OP, .rank = 7};
    simrun_params_default(&p, ring, 100);
    p.fails = &f;
    p.nfails = 1;
    assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
    assert_int_equal(r.completed, 98);
    assert_int_equal(r.live, 99);
    for (int v = 0; v < 100; v++)
        assert_int_equal(ok[v], v != 7 && v != 8);
}

static void test_sim_coll_op_table(void **state)
{
    size_t n = 0;
    for (; coll_op_table[n] != NULL; n++) {
        const coll_op_ops_t *o = coll_op_table[n];
        assert_true(o->state_size > 0 && o->buf_mult > 0);
        assert_ptr_equal(coll_op_find(o->op, o->alg), o);
        /* A kept state runs on after its result, so whatever it will never
         * receive must be named, or it blocks the late-message sweeper
         * (whose head-of-queue scan stops at a running instance's
         * message) for the rest of the run. */
        if (o->keep_after_done && o->stale_kinds == NULL)
            fail_msg("%s %s: kept after done but names no stale kinds", o->op,
                     o->alg);
    }
    assert_true(n >= 2);
    assert_null(coll_op_find("bcast", "nope"));
    assert_null(coll_op_find("nope", NULL));
    assert_null(coll_op_find(NULL, NULL));
}

/* Allgather and reduce-scatter take n blocks of `count` elements each
 * (allgather: then n presence bytes, docs/api.md): 2 elements per block. */
static void block_shape(simrun_params_t *p, const coll_op_ops_t *o, int n)
{
    int ag = strcmp(o->op, "allgather") == 0;
    if (!ag && strcmp(o->op, "reduce_scatter") != 0)
        return;
    p->args.count = 2 * (size_t)n;
    p->len = p->args.count * 8 + (ag ? (size_t)n : 0);
}

/* Every algorithm says when its state may be reused (ops->idle): after
 * cleanup and a quiescent run every live rank's state is idle, with and
 * without failures (a dead root, a dead rank before the op, a rank dying
 * during it, random deaths), at several sizes and roots. The runtime
 * recycles a state as soon as idle says so. */
static void test_sim_coll_idle_after_cleanup(void **state)
{
    const int sizes[] = {1, 2, 3, 7, 16, 33};
    for (size_t i = 0; coll_op_table[i] != NULL; i++) {
        const coll_op_ops_t *o = coll_op_table[i];
        assert_non_null(o->idle);
        for (size_t si = 0; si < 6; si++) {
            int n = sizes[si];
            for (int scen = 0; scen < 5; scen++) {
                simrun_params_t p;
                simrun_result_t r;
                simrun_fail_t f = {.kind = SIMRUN_FAIL_BEFORE_OP};
                simrun_params_default(&p, o, n);
                p.len = 16;
                p.root = n > 2 ? 1 : 0;
                p.args.f = 1;
                p.args.dtype = COLL_DTYPE_INT64;
                p.args.redop = COLL_REDOP_SUM;
                p.args.count = 2;
                p.sim.seed = (uint64_t)(7 + scen);
                block_shape(&p, o, n);
                if (strcmp(o->op, "allreduce_approx") == 0)
                    p.args.dtype = COLL_DTYPE_DOUBLE; /* floating only */
                if (scen == 1 && n > 1) {             /* the root is dead */
                    f.rank = p.root;
                    p.fails = &f;
                    p.nfails = 1;
                } else if (scen == 2 && n > 2) { /* another rank */
                    f.rank = n - 1;
                    p.fails = &f;
                    p.nfails = 1;
                } else if (scen == 3 && n > 2) { /* mid-operation */
                    f.kind = SIMRUN_FAIL_BEFORE_SEND;
                    f.rank = (p.root + 1) % n;
                    f.k = 2;
                    p.fails = &f;
                    p.nfails = 1;
                } else if (scen == 4 && n > 8) {
                    p.fail_random = 3;
                }
                assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
                assert_int_equal(r.bounded, 0);
                if (r.not_idle != 0)
                    fail_msg("%s %s, n = %d, scenario %d: %d live ranks "
                             "not idle after cleanup",
                             o->op, o->alg, n, scen, r.not_idle);
            }
        }
    }
}

/* Every algorithm with rendezvous sends (sim.rndv_min = 1: a send that is
 * not buffered completes only once received, as large messages do on
 * UCX, transport contract T7). Without failures every rank completes and
 * every unbuffered message is received (each state is idle after
 * cleanup); with a failure before or during the operation no rank is left
 * waiting that completes when sends complete at once (the baselines that
 * are not fault-aware leave a dead rank's subtree waiting either way). */
static void rndv_params(simrun_params_t *p, const coll_op_ops_t *o, int n,
                        int scen, simrun_fail_t *f)
{
    simrun_params_default(p, o, n);
    p->len = 16;
    p->root = n > 2 ? 1 : 0;
    p->args.f = 1;
    p->args.dtype = COLL_DTYPE_INT64;
    p->args.redop = COLL_REDOP_SUM;
    p->args.count = 2;
    block_shape(p, o, n);
    p->release_at_done = 1;
    *f = (simrun_fail_t){.kind = SIMRUN_FAIL_BEFORE_OP, .rank = n - 1};
    if (scen == 2 || scen == 3) { /* dies before its second send */
        f->kind = SIMRUN_FAIL_BEFORE_SEND;
        f->rank = scen == 2 ? (p->root + 1) % n : p->root;
        f->k = 2;
    }
    p->fails = f;
    p->nfails = scen > 0;
}

static void test_sim_coll_rndv(void **state)
{
    const int sizes[] = {2, 3, 5, 8, 13};
    for (size_t i = 0; coll_op_table[i] != NULL; i++) {
        const coll_op_ops_t *o = coll_op_table[i];
        /* Approximate, and push-sum loses mass to a crash by design:
         * tests/sim/test_gossip.c runs them with rendezvous sends. */
        if (strcmp(o->op, "allreduce_approx") == 0)
            continue;
        for (size_t si = 0; si < 5; si++) {
            int n = sizes[si];
            for (int scen = 0; scen < 4; scen++) {
                simrun_params_t p;
                simrun_result_t eager, r;
                simrun_fail_t f;
                rndv_params(&p, o, n, scen, &f);
                assert_int_equal(simrun_run(&p, &eager, NULL), UCFT_OK);
                p.sim.rndv_min = 1;
                assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
                assert_int_equal(r.bounded, 0);
                if (r.unfinished > eager.unfinished || r.data_errors != 0)
                    fail_msg("%s %s, n = %d, scenario %d: %d unfinished "
                             "(%d with eager sends), %d wrong",
                             o->op, o->alg, n, scen, r.unfinished,
                             eager.unfinished, r.data_errors);
                if (scen == 0 && (r.completed != n || r.not_idle != 0))
                    fail_msg("%s %s, n = %d: %d of %d completed, %d not "
                             "idle (a message nobody received)",
                             o->op, o->alg, n, r.completed, n, r.not_idle);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_coll_bcast_closed_form),
        cmocka_unit_test(test_sim_coll_bcast_any_root_any_n),
        cmocka_unit_test(test_sim_coll_bcast_root_dies_before_kth_send),
        cmocka_unit_test(test_sim_coll_bcast_nonroot_failures),
        cmocka_unit_test(test_sim_coll_determinism),
        cmocka_unit_test(test_sim_coll_ring),
        cmocka_unit_test(test_sim_coll_op_table),
        cmocka_unit_test(test_sim_coll_idle_after_cleanup),
        cmocka_unit_test(test_sim_coll_rndv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
