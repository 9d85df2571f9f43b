/*
 * The majority gate (collectives/coll_gate.c) against
 * partitions at every point of a corrected allreduce: for every job of 3 to
 * 7 ranks, every split into two sides and partition times spread over the
 * whole operation (from its start to past its failure-free end), all
 * messages between the sides vanish and, a detection delay later, each
 * side hears that the other failed (simrun_params_t.partition_side). No
 * rank dies; the side that would fence runs on.
 *
 * With the gate: no rank hands over a result that differs from another
 * rank's (simrun's `inconsistent`), none is wrong, none hangs, and the
 * side that holds the quorum (more than half, in a tie the half with rank
 * 0) completes whenever the other side is within f. Without the gate the
 * same sweep finds runs where the two sides handed over different results:
 * the window the gate closes, and the proof that this test sees it.
 */
#include "collectives/agree.h"
#include "simrun/oracle.h"
#include "simrun/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define POINTS 40

typedef struct sweep {
    int runs, split; /* runs; runs where both sides handed over results
                        that differ */
    int lost_live;   /* quorum side within f, yet a rank of it failed */
} sweep_t;

/* Payload: 16 bytes; an allgather's n blocks of 8 and presence bytes. */
static size_t len_of(const coll_op_ops_t *op, int n)
{
    if (strcmp(op->op, "agree") == 0)
        return coll_agree_len(1); /* one word: a bit per rank (n <= 32) */
    return strcmp(op->op, "allgather") == 0 ? (size_t)n * 9 : 16;
}

static int is_agree(const coll_op_ops_t *op)
{
    return strcmp(op->op, "agree") == 0;
}

static int holds_quorum(uint64_t side, int n)
{
    int k = __builtin_popcountll(side);
    return 2 * k > n || (2 * k == n && (side & 1));
}

static void run_one(const coll_op_ops_t *op, int n, int f, uint64_t side,
                    uint64_t at, int gate, sweep_t *sw)
{
    simrun_params_t p;
    simrun_result_t res;
    uint8_t ok[64];

    simrun_params_default(&p, op, n);
    p.len = len_of(op, n);
    if (strcmp(op->op, "allgather") == 0)
        p.args.count = (size_t)n * 8; /* int8 blocks */
    p.args.f = f;
    p.partition_side = side;
    p.partition_at_ns = at;
    p.quorum_gate = gate;
    p.max_events = 10000000;
    assert_int_equal(simrun_run(&p, &res, ok), UCFT_OK);
    sw->runs++;
    if (res.bounded || res.unfinished || res.data_errors)
        fail_msg("%s/%s n=%d f=%d side %#llx cut at %llu ns%s: %d unfinished, "
                 "%d wrong, bounded %d",
                 op->op, op->alg, n, f, (unsigned long long)side,
                 (unsigned long long)at, gate ? " (gate)" : "", res.unfinished,
                 res.data_errors, res.bounded);
    if (res.inconsistent > 0)
        sw->split++;
    if (!gate)
        return;
    if (res.inconsistent > 0)
        fail_msg("%s/%s n=%d f=%d side %#llx cut at %llu ns: two results "
                 "handed over",
                 op->op, op->alg, n, f, (unsigned long long)side,
                 (unsigned long long)at);
    uint64_t win = holds_quorum(side, n) ? side : ~side & ((1ull << n) - 1);
    int lose = n - __builtin_popcountll(win);
    if (is_agree(op))
        lose = 0; /* an agreement ends whatever the number of failures */
    for (int r = 0; lose <= f && r < n; r++)
        if ((win >> r & 1) && !ok[r]) {
            sw->lost_live++;
            fail_msg("%s/%s n=%d f=%d side %#llx cut at %llu ns: rank %d of "
                     "the quorum side failed",
                     op->op, op->alg, n, f, (unsigned long long)side,
                     (unsigned long long)at, r);
        }
}

/* The failure-free run's end: the partition times are spread over it. */
static uint64_t end_time(const coll_op_ops_t *op, int n, int f)
{
    simrun_params_t p;
    simrun_result_t res;
    simrun_params_default(&p, op, n);
    p.len = len_of(op, n);
    if (strcmp(op->op, "allgather") == 0)
        p.args.count = (size_t)n * 8; /* int8 blocks */
    p.args.f = f;
    p.quorum_gate = 1;
    assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
    assert_int_equal(res.completed, n);
    return res.sim_latency_ns;
}

static void sweep(const char *name, const char *alg, int gate, sweep_t *sw)
{
    const coll_op_ops_t *op = coll_op_find(name, alg);
    assert_non_null(op);
    for (int n = 3; n <= 7; n++)
        for (int f = 1; f <= (is_agree(op) ? 1 : 2) && f < n - 1; f++) {
            uint64_t t = end_time(op, n, f) * 5 / 4;
            /* Every side without rank 0 (its complement has it). */
            for (uint64_t side = 2; side < (1ull << n); side += 2)
                for (int i = 0; i <= POINTS; i++)
                    run_one(op, n, f, side, t * (uint64_t)i / POINTS, gate, sw);
        }
}

/* Both sweeps of one algorithm: without the gate some runs must hand
 * over two results (else this sweep cannot see the window), with it none. */
static void both(const char *name, const char *alg)
{
    sweep_t with = {0}, without = {0};
    sweep(name, alg, 0, &without);
    sweep(name, alg, 1, &with);
    printf("%s/%s: %d partitioned runs without the gate, %d with two "
           "results; with the gate %d runs, %d\n",
           name, alg, without.runs, without.split, with.runs, with.split);
    assert_true(without.split > 0);
    assert_int_equal(with.split, 0);
}

static void test_gate_corrected(void **state)
{
    (void)state;
    both("allreduce", "corrected");
}

static void test_gate_ring(void **state)
{
    (void)state;
    both("allreduce", "corrected-ring");
}

static void test_gate_allgather(void **state)
{
    (void)state;
    both("allgather", "corrected");
}

/* The agreement (agree_gate.c): a shrink on either side of a cut would
 * otherwise make two communicators that both go on. */
static void test_gate_agree(void **state)
{
    (void)state;
    both("agree", "era");
}

/* Link cuts: outputs are not checked against the dead (a falsely
 * suspected rank is left out, alive); only that no two ranks deliver
 * different decisions (simrun's inconsistent and dead_disagree). */
static int any_output(const void *buf, const coll_args_t *args, int rank,
                      int size, const uint8_t *dead)
{
    (void)buf, (void)args, (void)rank, (void)size, (void)dead;
    return 1;
}

static const coll_oracle_t cuts_oracle = {agree_fill, any_output};

static uint64_t xorshift(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    return x ^ (x << 17);
}

/* Views that differ rank by rank (link cuts: each end declares the other)
 * and a crash on top: random scenarios at n = 4..7, 1 to 3 cut links and
 * in half of them a rank killed, all at random times over the gated
 * agreement's failure-free span. Under the gate no two ranks may deliver
 * different decisions, also ranks that delivered and died later;
 * without it some do. Ranks may be left waiting: a rank ignores a
 * coordinator it takes for failed, which only fencing ends. */
static void test_gate_agree_cuts(void **state)
{
    (void)state;
    const coll_op_ops_t *op = coll_op_find("agree", "era");
    assert_non_null(op);
    int split[2] = {0, 0}, runs = 0;
    uint64_t x = 88172645463325252ull;
    for (int gate = 0; gate <= 1; gate++)
        for (int n = 4; n <= 7; n++) {
            uint64_t span = end_time(op, n, 1) * 3 / 2;
            for (int i = 0; i < 1500; i++) {
                simrun_cut_t cuts[5];
                simrun_fail_t fl = {.kind = SIMRUN_FAIL_AT_TIME};
                simrun_params_t p;
                simrun_result_t res;
                x = xorshift(x);
                size_t nc = 1 + x % 5;
                for (size_t k = 0; k < nc; k++) {
                    x = xorshift(x);
                    cuts[k].a = (int)(x % (uint64_t)n);
                    cuts[k].b = (int)((uint64_t)cuts[k].a + 1 +
                                      (x >> 8) % (uint64_t)(n - 1)) %
                                n;
                    cuts[k].at_ns = (x >> 16) % span;
                }
                x = xorshift(x);
                fl.rank = (int)(x % (uint64_t)n);
                fl.time = (x >> 8) % span;
                simrun_params_default(&p, op, n);
                p.len = len_of(op, n);
                p.oracle = &cuts_oracle;
                p.cuts = cuts;
                p.ncuts = nc;
                p.fails = &fl;
                p.nfails = (x >> 40) & 1;
                p.quorum_gate = gate;
                p.max_events = 10000000;
                assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
                assert_false(res.bounded);
                runs += gate;
                if (res.inconsistent > 0 || res.dead_disagree > 0) {
                    split[gate]++;
                    if (gate)
                        fail_msg("n=%d run %d: two decisions delivered "
                                 "(inconsistent %d, dead_disagree %d)",
                                 n, i, res.inconsistent, res.dead_disagree);
                }
            }
        }
    printf("agree/era with link cuts: %d runs; two decisions delivered in %d "
           "without the gate, %d with it\n",
           runs, split[0], split[1]);
    assert_true(split[0] > 0);
}

/* A gate needs f + 1 attempt numbers after the operation's own: with
 * f = 8 every rank ends with UCFT_ERR_NOT_SUPPORTED (and an error line),
 * never a hang or a result the gate did not allow. */
static void test_gate_f_too_large(void **state)
{
    simrun_params_t p;
    simrun_result_t res;
    (void)state;
    simrun_params_default(&p, coll_op_find("allreduce", "corrected"), 20);
    p.len = 16;
    p.args.f = 8;
    p.quorum_gate = 1;
    assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
    assert_int_equal(res.completed, 0);
    assert_int_equal(res.failed_ops, 20);
    assert_int_equal(res.unfinished, 0);
    p.args.f = 7; /* the largest that fits */
    assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
    assert_int_equal(res.completed, 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_corrected),
        cmocka_unit_test(test_gate_ring),
        cmocka_unit_test(test_gate_allgather),
        cmocka_unit_test(test_gate_agree),
        cmocka_unit_test(test_gate_agree_cuts),
        cmocka_unit_test(test_gate_f_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
