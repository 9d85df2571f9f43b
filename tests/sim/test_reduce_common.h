/* Shared helpers of the corrected reduce / allreduce sim tests. */
#ifndef UCFT_TEST_REDUCE_COMMON_H
#define UCFT_TEST_REDUCE_COMMON_H

#include "collectives/dtype.h"
#include "collectives/itree.h"
#include "simrun/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Sanitizer builds run the same sweeps over fewer rank counts. */
#if defined(__SANITIZE_ADDRESS__)
#define RD_SCALE 3
#else
#define RD_SCALE 1
#endif

static const coll_op_ops_t *find_op(const char *op, const char *alg)
{
    const coll_op_ops_t *o = coll_op_find(op, alg);
    assert_non_null(o);
    return o;
}

static unsigned long long runs_total;

/* 1: run as the runtime does (simrun_params_t.release_at_done). */
static int rd_release;
/* Failure notification delay (ns; 0: the sim's default, 1 ms). */
static uint64_t rd_detect_ns;
/* Staggered starts over this many ns (simrun_params_t.start_spread_ns;
 * 0: all at once). */
static uint64_t rd_spread_ns;
/* A user-defined operation in place of redop (NULL: redop). */
static const coll_user_op_t *rd_user_op;

/* One run with the counting encoding (uint8 sum, 2n elements: rank r adds
 * 1 at r and n + r), asserting the outcome every case shares: no live rank
 * unfinished, no data error, identical results where required. */
static void run_case(const coll_op_ops_t *op, int n, int f, int root,
                     const simrun_fail_t *fails, size_t nfails,
                     simrun_result_t *r, uint8_t *ok)
{
    simrun_params_t p;
    simrun_params_default(&p, op, n);
    p.root = root;
    p.seq = (uint32_t)(runs_total & 0xffff);
    p.args.f = f;
    p.args.dtype = COLL_DTYPE_UINT8;
    p.args.redop = COLL_REDOP_SUM;
    p.args.count = 2 * (size_t)n;
    p.args.user_op = rd_user_op;
    p.len = 2 * (size_t)n;
    p.fails = fails;
    p.nfails = nfails;
    p.max_events = 10000000;
    p.release_at_done = rd_release;
    if (rd_detect_ns != 0)
        p.sim.detect_delay_ns = rd_detect_ns;
    p.start_spread_ns = rd_spread_ns;
    p.sim.seed = runs_total + 1;
    runs_total++;
    assert_int_equal(simrun_run(&p, r, ok), UCFT_OK);
    if (r->unfinished || r->bounded || r->data_errors || r->inconsistent) {
        fprintf(stderr,
                "%s/%s n=%d f=%d root=%d%s spread %llu seed %llu: unfinished "
                "%d bounded %d data_errors %d inconsistent %d; failures:",
                op->op, op->alg, n, f, root, rd_release ? " (released)" : "",
                (unsigned long long)rd_spread_ns,
                (unsigned long long)p.sim.seed, r->unfinished, r->bounded,
                r->data_errors, r->inconsistent);
        for (size_t i = 0; i < nfails; i++)
            fprintf(stderr, " %d@%u(%d)", fails[i].rank, fails[i].k,
                    (int)fails[i].kind);
        fprintf(stderr, "\n");
    }
    assert_int_equal(r->bounded, 0);
    assert_int_equal(r->unfinished, 0);
    assert_int_equal(r->data_errors, 0);
    assert_int_equal(r->inconsistent, 0);
}

/* Failure-free messages of corrected reduce (Theorem 5). */
static uint64_t reduce_msgs(int n, int f)
{
    return itree_up_messages(n, f) + (uint64_t)(n - 1);
}

/* Failure-free messages of corrected allreduce: for n = 2 the exchange
 * alone; otherwise the reduce, then the broadcast: n - 1 tree messages,
 * f(f+1) per full group, and in the root's short group (a - 1 members)
 * (a - 1)(a - 2) among the members plus a - 1 from the root unless those
 * members are the root's children. */
static uint64_t allreduce_msgs(int n, int f)
{
    if (n == 2)
        return 2; /* the up exchange alone (reduce_corrected.c: pair) */
    if (n <= ITREE_FLAT_MAX)
        return reduce_msgs(n, f) + (uint64_t)(n - 1); /* down by star */
    uint64_t a = (uint64_t)itree_a(n, f), full = itree_full_groups(n, f);
    uint64_t down = (uint64_t)(n - 1) + (uint64_t)f * (f + 1) * full;
    if (a > 1)
        down += (a - 1) * (a - 2) + (full > 0 ? a - 1 : 0);
    return reduce_msgs(n, f) + down;
}

/* Sends of rank `rank` in a failure-free run (attempt 0), an upper bound
 * for "the k-th send" injection. */
static unsigned sends_of(int rank, int n, int f, int root, int allreduce)
{
    if (allreduce && n == 2)
        return 1;
    int v = (rank - root + n) % n, full = itree_full_groups(n, f);
    int g = v == 0 ? full : itree_group(v, f);
    unsigned up = 0, dn = 0;
    if (v > 0 || itree_root_in_group(n, f))
        for (int k = 0; k <= f; k++) {
            int m = itree_member(g, k, n, f);
            if (m > 0 && m != v)
                up++;
        }
    if (itree_grouped_with_root(v, n, f))
        up++;
    if (!allreduce)
        return up + (v > 0);
    if (n <= ITREE_FLAT_MAX)
        return up + (v > 0) + (v == 0 ? (unsigned)n - 1 : 0);
    dn = itree_nchildren_in(v, n, f, itree_flat(n)) + up -
         (itree_grouped_with_root(v, n, f));
    if (v == 0 && g == 0)
        dn = itree_nchildren_in(0, n, f, itree_flat(n));
    return up + (v > 0) + dn;
}

#endif

enum { SW_PRE = 1, SW_IN = 2, SW_MIXED = 4, SW_OVER = 8 };

/* Roots tried for n: every root up to sweep_all_roots_upto ranks (16;
 * 8 for f = 2), else 0, n/2, n-1. */
static int sweep_all_roots_upto = 16;

static int sweep_roots(int n, int *roots)
{
    if (n <= sweep_all_roots_upto) {
        for (int i = 0; i < n; i++)
            roots[i] = i;
        return n;
    }
    roots[0] = 0;
    roots[1] = n / 2;
    roots[2] = n - 1;
    return 3;
}

/* Asserts the outcome of a run with at most f failures. */
static void expect_delivery(const simrun_result_t *r, const uint8_t *ok,
                            int root, int allreduce, int root_dead)
{
    if (allreduce || !root_dead)
        assert_int_equal(r->completed, r->live);
    if (!allreduce && !root_dead && !ok[root])
        fprintf(stderr, "root %d not ok: completed %d live %d\n", root,
                r->completed, r->live);
    if (!allreduce && !root_dead)
        assert_int_equal(ok[root], 1);
    assert_int_equal(r->failed_ops, 0);
}

/* Every placement of failures of the given modes, every n in [n0, n1]. */
static void sweep(const coll_op_ops_t *op, int f, int n0, int n1, int modes)
{
    int allreduce = strcmp(op->op, "reduce") != 0;
    static uint8_t ok[64];
    int roots[64];
    simrun_result_t r;

    sweep_all_roots_upto = f >= 2 ? 8 : 16;
    n1 = n0 + (n1 - n0) / RD_SCALE;
    for (int n = n0; n <= n1; n++) {
        int nr = sweep_roots(n, roots);
        for (int ri = 0; ri < nr; ri++) {
            int root = roots[ri];
            simrun_fail_t fl[3];
            run_case(op, n, f, root, NULL, 0, &r, ok);
            assert_int_equal(r.completed, n);
            assert_int_equal(r.stats.messages, allreduce ? allreduce_msgs(n, f)
                                                         : reduce_msgs(n, f));
            for (int a = 0; a < n; a++) {
                unsigned ka = sends_of(a, n, f, root, allreduce);
                if (modes & SW_PRE) {
                    fl[0] = (simrun_fail_t){SIMRUN_FAIL_BEFORE_OP, a, 0, 0, 0};
                    run_case(op, n, f, root, fl, 1, &r, ok);
                    expect_delivery(&r, ok, root, allreduce, a == root);
                }
                for (unsigned k = 1; (modes & SW_IN) && k <= ka; k++) {
                    fl[0] =
                        (simrun_fail_t){SIMRUN_FAIL_BEFORE_SEND, a, k, 0, 0};
                    run_case(op, n, f, root, fl, 1, &r, ok);
                    expect_delivery(&r, ok, root, allreduce, a == root);
                }
                for (int b = a + 1; b < n && f >= 2; b++) {
                    unsigned kb = sends_of(b, n, f, root, allreduce);
                    int rd = a == root || b == root;
                    if (modes & SW_PRE) {
                        fl[0] =
                            (simrun_fail_t){SIMRUN_FAIL_BEFORE_OP, a, 0, 0, 0};
                        fl[1] =
                            (simrun_fail_t){SIMRUN_FAIL_BEFORE_OP, b, 0, 0, 0};
                        run_case(op, n, f, root, fl, 2, &r, ok);
                        expect_delivery(&r, ok, root, allreduce, rd);
                    }
                    for (unsigned i = 1; (modes & SW_IN) && i <= ka; i++)
                        for (unsigned j = 1; j <= kb; j++) {
                            fl[0] = (simrun_fail_t){SIMRUN_FAIL_BEFORE_SEND, a,
                                                    i, 0, 0};
                            fl[1] = (simrun_fail_t){SIMRUN_FAIL_BEFORE_SEND, b,
                                                    j, 0, 0};
                            run_case(op, n, f, root, fl, 2, &r, ok);
                            expect_delivery(&r, ok, root, allreduce, rd);
                        }
                    /* One before, one during (both orders). */
                    for (unsigned i = 1; (modes & SW_MIXED) && i <= kb; i++)
                        for (int side = 0; side < 2; side++) {
                            int pre = side ? b : a, in = side ? a : b;
                            unsigned kin = side ? (i <= ka ? i : 0) : i;
                            if (kin == 0)
                                continue;
                            fl[0] = (simrun_fail_t){SIMRUN_FAIL_BEFORE_OP, pre,
                                                    0, 0, 0};
                            fl[1] = (simrun_fail_t){SIMRUN_FAIL_BEFORE_SEND, in,
                                                    kin, 0, 0};
                            run_case(op, n, f, root, fl, 2, &r, ok);
                            expect_delivery(&r, ok, root, allreduce, rd);
                        }
                }
            }
        }
    }
}

/* More than f failures: f + 1 ranks before the op, every placement for
 * small n, then f + 1 in-operation deaths at the first send: an error or a
 * result, never a hang, never a wrong value (run_case asserts). */
static void sweep_over(const coll_op_ops_t *op, int f, int n0, int n1)
{
    static uint8_t ok[64];
    simrun_result_t r;
    n1 = n0 + (n1 - n0) / RD_SCALE;
    for (int n = n0; n <= n1; n++)
        for (int root = 0; root < n; root += n / 3 + 1)
            for (int a = 0; a < n; a++)
                for (int b = a + 1; b < n; b++)
                    for (int c = f >= 2 ? b + 1 : n; c < n || f < 2; c++) {
                        simrun_fail_t fl[3] = {
                            {SIMRUN_FAIL_BEFORE_OP, a, 0, 0, 0},
                            {SIMRUN_FAIL_BEFORE_OP, b, 0, 0, 0},
                            {SIMRUN_FAIL_BEFORE_OP, c, 0, 0, 0},
                        };
                        run_case(op, n, f, root, fl, (size_t)f + 1, &r, ok);
                        for (int i = 0; i <= f; i++) {
                            fl[i].kind = SIMRUN_FAIL_BEFORE_SEND;
                            fl[i].k = 1 + (unsigned)i;
                        }
                        run_case(op, n, f, root, fl, (size_t)f + 1, &r, ok);
                        if (f < 2)
                            break;
                    }
}

/* Seeded random campaign: `fails` random pre-op deaths and as many random
 * in-op deaths (rank, k), n from a list up to 4096. */
static void campaign(const coll_op_ops_t *op, int f, int nruns, uint64_t seed)
{
    static const int sizes[] = {33, 100, 257, 1000, 1023, 4096};
    static uint8_t ok[4096];
    int allreduce = strcmp(op->op, "reduce") != 0;
    uint64_t x = seed;
    nruns /= RD_SCALE;
    for (int i = 0; i < nruns; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int n = sizes[(x >> 33) % 6];
        int root = (int)((x >> 20) % (uint64_t)n);
        simrun_fail_t fl[4];
        size_t nf = 0;
        int nd = (int)((x >> 40) % (uint64_t)(f + 1));
        for (int j = 0; j < nd; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int rank = (int)((x >> 25) % (uint64_t)n);
            unsigned k = (unsigned)((x >> 50) % 4);
            fl[nf++] = (simrun_fail_t){k ? SIMRUN_FAIL_BEFORE_SEND
                                         : SIMRUN_FAIL_BEFORE_OP,
                                       rank, k, 0, 0};
        }
        simrun_result_t r;
        run_case(op, n, f, root, fl, nf, &r, ok);
        int rd = 0;
        for (size_t j = 0; j < nf; j++)
            rd |= fl[j].rank == root;
        expect_delivery(&r, ok, root, allreduce, rd);
        if (nf == 0)
            assert_int_equal(r.stats.messages, allreduce ? allreduce_msgs(n, f)
                                                         : reduce_msgs(n, f));
    }
}
