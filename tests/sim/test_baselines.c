/* The fault-aware baselines on the sim (docs/baselines.md): binomial
 * reduce to every root and recursive-doubling, recursive-exchange
 * (radix up to 8) and star (linear) allreduce / barrier give
 * the right result for n = 1..64 over several datatypes, operations and
 * counts (0 included), with exactly the messages of their formulas; with
 * one failure before the operation or before any send of any rank, every
 * live rank ends (bounded run) with a correct result or
 * UCFT_ERR_PROC_FAILED, never a hang, never a wrong value. */
#include "collectives/dtype.h"
#include "simrun/oracle.h"
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
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RD_SCALE 3
#else
#define RD_SCALE 1
#endif

static unsigned long long runs_total;

static const coll_op_ops_t *find_op(const char *op, const char *alg)
{
    const coll_op_ops_t *o = coll_op_find(op, alg);
    assert_non_null(o);
    return o;
}

static const coll_op_ops_t *reduce_op(void)
{
    return find_op("reduce", "binomial");
}

/* The recursive allreduces: the algorithm and the most bits of the rank
 * one round covers (radix 2^bits). */
typedef struct rd_alg {
    const char *alg;
    unsigned bits;
} rd_alg_t;

/* bits = RD_STAR: the star ("linear"), no rounds at all. */
#define RD_STAR 0xffu
static const rd_alg_t rd_algs[] = {
    {"recdbl", 1}, {"recexch", 3}, {"linear", RD_STAR}};
#define NRD (sizeof(rd_algs) / sizeof(rd_algs[0]))

static const coll_op_ops_t *allreduce_op(void)
{
    return find_op("allreduce", "recdbl");
}

/* Largest power of two <= n (n >= 1) and its exponent. */
static int pow2_floor(int n, int *lg)
{
    int p = 1, l = 0;
    while (2 * p <= n) {
        p *= 2;
        l++;
    }
    *lg = l;
    return p;
}

/* Sends of one of the p = 2^L ranks in the rounds: L bits split evenly
 * over ceil(L / bits) rounds, a round of w bits sends 2^w - 1 messages. */
static unsigned round_sends(int lg, unsigned bits)
{
    unsigned nr = ((unsigned)lg + bits - 1) / bits, sends = 0;
    for (unsigned j = 0; j < nr; j++) {
        unsigned w = (unsigned)lg / nr + (j < (unsigned)lg % nr);
        sends += (1u << w) - 1;
    }
    return sends;
}

/* Recursive doubling / exchange, failure-free: p = 2^L <= n < 2p ranks
 * exchange in rounds (p round_sends messages; recdbl: p L); each of the
 * n - p extra ranks sends its value to a partner and gets the result back
 * (2 (n - p)). recdbl, n = 2^L: n log2 n. */
static uint64_t rd_msgs(int n, unsigned bits)
{
    if (bits == RD_STAR) /* n - 1 values in, n - 1 results out */
        return 2 * (uint64_t)(n - 1);
    int lg, p = pow2_floor(n, &lg);
    return (uint64_t)p * round_sends(lg, bits) + 2 * (uint64_t)(n - p);
}

static uint64_t recdbl_msgs(int n)
{
    return rd_msgs(n, 1);
}

/* Failure-free sends of (virtual = job, identity placement, root 0) rank
 * v: an upper bound for the "k-th send" sweep (a failing rank sends at
 * most as many messages: error messages replace data ones). */
static unsigned rd_sends(int v, int n, unsigned bits)
{
    if (bits == RD_STAR)
        return v == 0 ? (unsigned)n - 1 : 1;
    int lg, p = pow2_floor(n, &lg);
    if (v >= p)
        return 1;
    return round_sends(lg, bits) + (v < n - p);
}

typedef struct dcase {
    int dtype, redop;
    size_t count; /* (size_t)-1: 2 n, the counting encoding */
} dcase_t;

static const dcase_t dcases[] = {
    {COLL_DTYPE_UINT8, COLL_REDOP_SUM, (size_t)-1},
    {COLL_DTYPE_INT32, COLL_REDOP_SUM, 5},
    {COLL_DTYPE_INT64, COLL_REDOP_SUM, 1},
    {COLL_DTYPE_DOUBLE, COLL_REDOP_MAX, 3},
    {COLL_DTYPE_FLOAT, COLL_REDOP_SUM, 7},
    {COLL_DTYPE_UINT16, COLL_REDOP_BXOR, 2},
    {COLL_DTYPE_INT16, COLL_REDOP_MIN, 4},
    {COLL_DTYPE_UINT32, COLL_REDOP_PROD, 3},
    {COLL_DTYPE_INT32, COLL_REDOP_SUM, 0},
};
#define NDCASES (sizeof(dcases) / sizeof(dcases[0]))
/* Barrier: no payload (its buffer is not filled, nothing to compare). */
static const dcase_t no_data = {COLL_DTYPE_UINT8, COLL_REDOP_SUM, 0};

/* One bounded run; asserts what every outcome must satisfy. spread > 0:
 * staggered starts over [0, spread] ns, failures detected spread / 4
 * after they happen, so that many ranks start knowing of them. */
static void run_checked(const coll_op_ops_t *op, const coll_oracle_t *orc,
                        int n, int root, const dcase_t *dc,
                        const simrun_fail_t *fails, size_t nfails,
                        const coll_map_t *map, uint64_t spread,
                        simrun_result_t *r, uint8_t *ok)
{
    simrun_params_t p;
    size_t count = dc->count == (size_t)-1 ? 2 * (size_t)n : dc->count;

    simrun_params_default(&p, op, n);
    if (spread > 0) {
        p.start_spread_ns = spread;
        p.sim.detect_delay_ns = spread / 4;
        p.sim.seed = runs_total + 1;
    }
    p.root = root;
    p.seq = (uint32_t)(runs_total & 0xffff);
    p.oracle = orc; /* NULL: the operation's own */
    p.args.dtype = dc->dtype;
    p.args.redop = dc->redop;
    p.args.count = count;
    p.args.map = map;
    p.len = count * dtype_size(dc->dtype);
    p.fails = fails;
    p.nfails = nfails;
    p.max_events = 1000000;
    runs_total++;
    assert_int_equal(simrun_run(&p, r, ok), UCFT_OK);
    if (r->bounded || r->unfinished || r->data_errors || r->inconsistent)
        fprintf(stderr,
                "%s/%s n=%d root=%d %s/%s count %zu: bounded %d unfinished "
                "%d data_errors %d inconsistent %d (failure %d@%u kind %d, "
                "spread %llu ns, seed %llu)\n",
                op->op, op->alg, n, root, dtype_name(dc->dtype),
                dtype_op_name(dc->redop), count, r->bounded, r->unfinished,
                r->data_errors, r->inconsistent, nfails ? fails[0].rank : -1,
                nfails ? fails[0].k : 0, nfails ? (int)fails[0].kind : -1,
                (unsigned long long)spread, (unsigned long long)p.sim.seed);
    assert_int_equal(r->bounded, 0);
    assert_int_equal(r->unfinished, 0);
    assert_int_equal(r->data_errors, 0);
    assert_int_equal(r->inconsistent, 0);
    /* Every live rank ended: with the result or with an error. */
    assert_int_equal(r->completed + r->failed_ops, r->live);
}

static void run_spread(const coll_op_ops_t *op, int n, int root,
                       const dcase_t *dc, const simrun_fail_t *fails,
                       size_t nfails, const coll_map_t *map, uint64_t spread,
                       simrun_result_t *r, uint8_t *ok)
{
    run_checked(op, NULL, n, root, dc, fails, nfails, map, spread, r, ok);
}

static void run(const coll_op_ops_t *op, int n, int root, const dcase_t *dc,
                const simrun_fail_t *fails, size_t nfails,
                const coll_map_t *map, simrun_result_t *r, uint8_t *ok)
{
    run_spread(op, n, root, dc, fails, nfails, map, 0, r, ok);
}

static void test_baselines_reduce_failure_free(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    for (int n = 1; n <= 64; n++)
        for (int root = 0; root < n; root++)
            for (size_t d = 0; d < NDCASES; d++) {
                /* every root with the counting encoding, a few otherwise */
                if (d > 0 && root != 0 && root != n - 1 && root != n / 3)
                    continue;
                run(reduce_op(), n, root, &dcases[d], NULL, 0, NULL, &r, ok);
                assert_int_equal(r.completed, n);
                assert_int_equal(ok[root], 1);
                assert_int_equal(r.stats.messages, (uint64_t)(n - 1));
            }
}

static void test_baselines_allreduce_failure_free(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    for (size_t a = 0; a < NRD; a++)
        for (int n = 1; n <= 64; n++)
            for (size_t d = 0; d < NDCASES; d++) {
                run(find_op("allreduce", rd_algs[a].alg), n, 0, &dcases[d],
                    NULL, 0, NULL, &r, ok);
                assert_int_equal(r.completed, n);
                assert_int_equal(r.stats.messages, rd_msgs(n, rd_algs[a].bits));
            }
    /* Spot values of the formula: 2^k ranks, n log2 n. */
    assert_int_equal(recdbl_msgs(1), 0);
    assert_int_equal(recdbl_msgs(2), 2);
    assert_int_equal(recdbl_msgs(3), 4);
    assert_int_equal(recdbl_msgs(8), 24);
    assert_int_equal(recdbl_msgs(13), 34);
    assert_int_equal(recdbl_msgs(64), 384);
    /* recexch: one round of 2^L - 1 sends up to 8 ranks, then 4 x 4 (16),
     * 8 x 4 (32), 8 x 8 (64); extras as in recdbl. */
    assert_int_equal(rd_msgs(4, 3), 12);
    assert_int_equal(rd_msgs(8, 3), 56);
    assert_int_equal(rd_msgs(13, 3), 66);
    assert_int_equal(rd_msgs(16, 3), 96);
    assert_int_equal(rd_msgs(32, 3), 320);
    assert_int_equal(rd_msgs(64, 3), 896);
}

static void test_baselines_barrier_failure_free(void **state)
{
    simrun_result_t r;
    for (size_t a = 0; a < NRD; a++)
        for (int n = 1; n <= 64; n++) {
            run(find_op("barrier", rd_algs[a].alg), n, 0, &no_data, NULL, 0,
                NULL, &r, NULL);
            assert_int_equal(r.completed, n);
            assert_int_equal(r.stats.messages, rd_msgs(n, rd_algs[a].bits));
        }
}

/* A placement map (reversed order): same counts, same results. */
static void test_baselines_placement(void **state)
{
    static uint8_t ok[64];
    int rank[24], pos[24];
    simrun_result_t r;
    for (int n = 2; n <= 24; n += 5) {
        for (int i = 0; i < n; i++) {
            rank[i] = n - 1 - i;
            pos[n - 1 - i] = i;
        }
        coll_map_t map = {n, rank, pos};
        for (int root = 0; root < n; root += 3) {
            run(reduce_op(), n, root, &dcases[0], NULL, 0, &map, &r, ok);
            assert_int_equal(ok[root], 1);
            assert_int_equal(r.stats.messages, (uint64_t)(n - 1));
        }
        for (size_t a = 0; a < NRD; a++) {
            run(find_op("allreduce", rd_algs[a].alg), n, 0, &dcases[1], NULL, 0,
                &map, &r, ok);
            assert_int_equal(r.completed, n);
            assert_int_equal(r.stats.messages, rd_msgs(n, rd_algs[a].bits));
        }
    }
}

/* One failure before the operation or before the k-th send of one rank,
 * every rank and every k up to its failure-free sends (+ 1: "never"). */
static void sweep_one_failure(const coll_op_ops_t *op, unsigned bits, int n0,
                              int n1)
{
    static uint8_t ok[64];
    simrun_result_t r;
    int allreduce = bits > 0; /* 0: the binomial reduce */
    n1 = n0 + (n1 - n0) / RD_SCALE;
    for (int n = n0; n <= n1; n++)
        for (int root = 0; root < (allreduce ? 1 : n); root++)
            for (int a = 0; a < n; a++) {
                int v = (a - root + n) % n;
                unsigned ka = allreduce ? rd_sends(a, n, bits) : v > 0;
                for (unsigned k = 0; k <= ka + 1; k++) {
                    const dcase_t *dc = &dcases[k % 2 ? 0 : 3];
                    if (strcmp(op->op, "barrier") == 0)
                        dc = &no_data;
                    simrun_fail_t fl = {.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                                  : SIMRUN_FAIL_BEFORE_OP,
                                        .rank = a,
                                        .k = k};
                    run(op, n, root, dc, &fl, 1, NULL, &r, ok);
                    /* Without corrections the root of a reduce, and every
                     * survivor of an allreduce, needs the dead rank's
                     * value: before the op nobody can have it. */
                    if (k == 0 && allreduce)
                        assert_int_equal(r.completed, 0);
                    if (k == 0 && !allreduce && a != root)
                        assert_int_equal(ok[root], 0);
                    /* A rank that never reaches its k-th send: no
                     * failure within the operation. */
                    if (k == ka + 1)
                        assert_int_equal(r.completed, n);
                }
            }
}

static void test_baselines_reduce_one_failure(void **state)
{
    sweep_one_failure(reduce_op(), 0, 2, 24);
}

static void test_baselines_allreduce_one_failure(void **state)
{
    for (size_t a = 0; a < NRD; a++) {
        sweep_one_failure(find_op("allreduce", rd_algs[a].alg), rd_algs[a].bits,
                          2, 64);
        sweep_one_failure(find_op("barrier", rd_algs[a].alg), rd_algs[a].bits,
                          2, 33);
    }
}

/* nf seeded deaths among n ranks: each before the operation or before
 * one of the first three sends of its rank. */
static void draw_fails(uint64_t *x, int n, size_t nf, simrun_fail_t *fl)
{
    for (size_t j = 0; j < nf; j++) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned k = (unsigned)((*x >> 50) % 4);
        fl[j] = (simrun_fail_t){.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                          : SIMRUN_FAIL_BEFORE_OP,
                                .rank = (int)((*x >> 20) % (uint64_t)n),
                                .k = k};
    }
}

/* Two deaths at once, seeded: still no hang and no wrong value. */
static void test_baselines_two_failures_campaign(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    uint64_t x = 12345;
    for (int i = 0; i < 600 / RD_SCALE; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int n = 2 + (int)((x >> 33) % 40);
        simrun_fail_t fl[2];
        draw_fails(&x, n, 2, fl);
        int root = (int)((x >> 8) % (uint64_t)n);
        run(reduce_op(), n, root, &dcases[0], fl, 2, NULL, &r, ok);
        for (size_t a = 0; a < NRD; a++)
            run(find_op("allreduce", rd_algs[a].alg), n, 0,
                &dcases[i % NDCASES], fl, 2, NULL, &r, ok);
    }
}

/* Staggered starts (simrun: start_spread_ns): ranks enter the operation
 * up to 2 or 20 us apart and hear of a death a quarter of that after it,
 * so that some start with a transport that already refuses sends to the
 * dead rank and are told of it only after their start, as in a real run.
 * One or two failures before the operation or before a send. A rank that
 * stopped sending a round when one send failed at once left a live peer
 * waiting for ever: only this campaign reaches that path on the sim. */
static void test_baselines_staggered_campaign(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    uint64_t x = 777;
    int knowing = 0;
    for (int i = 0; i < 1200 / RD_SCALE; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int n = 2 + (int)((x >> 33) % 31);
        uint64_t spread = (x >> 40) % 2 ? 20000 : 2000;
        size_t nf = 1 + (size_t)((x >> 45) % 4 == 0);
        simrun_fail_t fl[2];
        draw_fails(&x, n, nf, fl);
        const rd_alg_t *ra = &rd_algs[i % NRD];
        run_spread(find_op(i % 3 ? "allreduce" : "barrier", ra->alg), n, 0,
                   i % 3 ? &dcases[i % NDCASES] : &no_data, fl, nf, NULL,
                   spread, &r, ok);
        knowing += r.started_knowing > 0;
        run_spread(reduce_op(), n, (int)((x >> 8) % (uint64_t)n), &dcases[0],
                   fl, nf, NULL, spread, &r, ok);
    }
    print_message("%d runs with a rank that started knowing of a death\n",
                  knowing);
    assert_true(knowing > 1200 / RD_SCALE / 10);
}

/* Floating point values whose sum depends on the order of the additions
 * (1 / (rank + 3) scaled per element): every rank of a recursive
 * allreduce must still end with the same bits (the driver compares the
 * outputs: `consistent`), close to the exact sum. */
static double fp_value(int rank, size_t i)
{
    return (1.0 + (double)i * 1e3) / (double)(rank + 3);
}

static void fp_fill(void *buf, const coll_args_t *a, int rank, int size)
{
    (void)size;
    for (size_t i = 0; i < a->count; i++) {
        if (a->dtype == COLL_DTYPE_FLOAT)
            ((float *)buf)[i] = (float)fp_value(rank, i);
        else
            ((double *)buf)[i] = fp_value(rank, i);
    }
}

static int fp_check(const void *buf, const coll_args_t *a, int rank, int size,
                    const uint8_t *dead)
{
    (void)rank;
    (void)dead;
    for (size_t i = 0; i < a->count; i++) {
        double want = 0, got;
        for (int q = 0; q < size; q++)
            want += fp_value(q, i);
        if (a->dtype == COLL_DTYPE_FLOAT)
            got = ((const float *)buf)[i];
        else
            got = ((const double *)buf)[i];
        double tol = (a->dtype == COLL_DTYPE_FLOAT ? 1e-5 : 1e-12) * want;
        if (got < want - tol || got > want + tol)
            return 0;
    }
    return 1;
}

static void test_baselines_allreduce_fp_consistent(void **state)
{
    static uint8_t ok[64];
    static const coll_oracle_t fp_oracle = {fp_fill, fp_check};
    static const dcase_t fp[] = {{COLL_DTYPE_FLOAT, COLL_REDOP_SUM, 5},
                                 {COLL_DTYPE_DOUBLE, COLL_REDOP_SUM, 3}};
    simrun_result_t r;
    for (size_t a = 0; a < NRD; a++) {
        const coll_op_ops_t *o = find_op("allreduce", rd_algs[a].alg);
        for (int n = 2; n <= 64; n++)
            for (size_t d = 0; d < 2; d++) {
                run_checked(o, &fp_oracle, n, 0, &fp[d], NULL, 0, NULL, 0, &r,
                            ok);
                assert_int_equal(r.completed, n);
            }
    }
}

/* The wait's hint (coll_args_t.remote_wait, runtime/progress.c): mate(r) =
 * r ^ flip (flip 0: no mate). With ucftrun --bind-to core on n / 2 cores
 * the mate is r ^ (n / 2), recursive doubling's last-round peer: the only
 * case it says 1 (nothing it waits for needs more of the mate), in every
 * round before the last. A rank that has failed says 0. The star gives no
 * hint. The hint changes nothing else: every rank ends with the sum. */
#define RW_MAXN 8
typedef struct rw_run {
    coll_args_t a[RW_MAXN];
    void *st[RW_MAXN];
    unsigned char buf[RW_MAXN][256];
    uint8_t hint[RW_MAXN];
    uint8_t start_hint[RW_MAXN]; /* right after every rank started */
    uint8_t saw1[RW_MAXN];       /* said 1 at some point before it ended */
    int done[RW_MAXN];
    ucft_status_t status[RW_MAXN];
} rw_run_t;

static void rw_done(void *arg, int rank, ucft_status_t st)
{
    rw_run_t *r = arg;
    r->done[rank] = 1;
    r->status[rank] = st;
}

/* Runs alg on n ranks, one event at a time; dead: a rank killed before
 * the start and announced to the others (-1: none). */
static void rw_run(const char *alg, int n, int flip, int dead, rw_run_t *r)
{
    const coll_op_ops_t *op = find_op("allreduce", alg);
    sim_params_t sp;
    sim_world_t *w;

    memset(r, 0, sizeof(*r));
    sim_params_default(&sp, n);
    sp.notify = SIM_NOTIFY_NONE; /* the test tells of the failure */
    assert_int_equal(sim_world_create(&sp, &w), UCFT_OK);
    if (dead >= 0)
        assert_int_equal(sim_world_kill(w, dead), UCFT_OK);
    for (int k = 0; k < n; k++) {
        r->a[k] = (coll_args_t){.len = 3 * sizeof(int32_t),
                                .seq = 5,
                                .f = 1,
                                .count = 3,
                                .dtype = COLL_DTYPE_INT32,
                                .redop = COLL_REDOP_SUM,
                                .done_cb = rw_done,
                                .done_arg = r,
                                .remote_wait = &r->hint[k],
                                .mate = flip ? k ^ flip : -1};
        r->hint[k] = 7; /* neither 0 nor 1: not written */
        r->st[k] = calloc(1, op->state_size);
        assert_non_null(r->st[k]);
        assert_true(op->buf_mult * r->a[k].len <= sizeof(r->buf[k]));
        coll_oracle_of(op)->fill(r->buf[k], &r->a[k], k, n);
        assert_int_equal(
            op->init(r->st[k], sim_world_tp(w, k), &r->a[k], r->buf[k]),
            UCFT_OK);
    }
    for (int k = 0; k < n; k++) {
        if (k == dead)
            continue;
        ucft_status_t st = op->start(r->st[k]);
        assert_int_equal(st, UCFT_INPROGRESS);
        if (dead >= 0)
            op->on_failure(r->st[k], dead);
    }
    memcpy(r->start_hint, r->hint, sizeof(r->hint));
    for (int k = 0; k < n; k++)
        r->saw1[k] = !r->done[k] && r->hint[k] == 1;
    for (uint64_t ev = 0; sim_world_run(w, UINT64_MAX, 1) > 0; ev++) {
        assert_true(ev < 10000);
        for (int k = 0; k < n; k++)
            r->saw1[k] |= !r->done[k] && r->hint[k] == 1;
    }
    uint8_t dmask[RW_MAXN] = {0};
    if (dead >= 0)
        dmask[dead] = 1;
    for (int k = 0; k < n; k++) {
        if (k == dead)
            continue;
        assert_int_equal(r->done[k], 1);
        if (dead < 0) {
            assert_int_equal(r->status[k], UCFT_OK);
            assert_true(
                coll_oracle_of(op)->check(r->buf[k], &r->a[k], k, n, dmask));
        }
    }
    for (int k = 0; k < n; k++)
        op->cleanup(r->st[k]);
    /* As simrun: no callback runs after the world is destroyed; destroy
     * frees what cleanup kept for pending requests. */
    sim_world_destroy(w);
    for (int k = 0; k < n; k++) {
        if (op->destroy != NULL)
            op->destroy(r->st[k]);
        free(r->st[k]);
    }
}

static void test_baselines_remote_wait(void **state)
{
    rw_run_t r;
    (void)state;
    for (int n = 4; n <= 8; n *= 2)
        for (int flip = 0; flip < n; flip = flip ? 2 * flip : 1) {
            /* recdbl: 1 from the start iff the mate is the last peer. */
            rw_run("recdbl", n, flip, -1, &r);
            for (int k = 0; k < n; k++) {
                assert_int_equal(r.start_hint[k], flip == n / 2);
                assert_int_equal(r.saw1[k], flip == n / 2);
            }
            /* recexch, one round up to 8 ranks: 0 until the mate's
             * message is in. */
            rw_run("recexch", n, flip, -1, &r);
            for (int k = 0; k < n; k++)
                assert_int_equal(r.start_hint[k], 0);
            /* linear gives no hint (docs/baselines.md): untouched. */
            rw_run("linear", n, flip, -1, &r);
            for (int k = 0; k < n; k++)
                assert_int_equal(r.hint[k], 7);
        }
    /* recexch on 4 ranks, mate r ^ 2: 1 once the mate's message is in and
     * another is not, at some rank. */
    rw_run("recexch", 4, 2, -1, &r);
    assert_true(r.saw1[0] || r.saw1[1] || r.saw1[2] || r.saw1[3]);
    /* The corrected allreduce (docs/reduce.md), root 0: up groups {1, 2}
     * and {0, 3}, subtrees {1, 3} (3 a child of 1) and {2}. Mate r ^ 2:
     * rank 3, a leaf awaiting the root's up message, says 1 (once its
     * own sends have completed: the sim completes them later); rank 1
     * once its child 3 (its mate) has answered; rank 2 (mate: the root)
     * and the root never. Mate r ^ 1: the leaves 2 and 3, not rank 1
     * (mate: the root) nor the root. */
    static const uint8_t c2_saw[4] = {0, 1, 0, 1}, c1_saw[4] = {0, 0, 1, 1};
    rw_run("corrected", 4, 2, -1, &r);
    assert_memory_equal(r.saw1, c2_saw, 4);
    rw_run("corrected", 4, 1, -1, &r);
    assert_memory_equal(r.saw1, c1_saw, 4);
    /* With a failure known (rank 1 dead before the start): 0 at all. */
    rw_run("corrected", 4, 2, 1, &r);
    for (int k = 0; k < 4; k++)
        assert_int_equal(r.saw1[k] | (k != 1 && r.start_hint[k]), 0);
    /* Rank 1 dead: its round-one peer 0 fails and says 0; rank 2 still
     * waits for rank 3 only (1). */
    rw_run("recdbl", 4, 2, 1, &r);
    assert_int_equal(r.hint[0], 0);
    assert_int_equal(r.status[0], UCFT_ERR_PROC_FAILED);
    assert_int_equal(r.start_hint[2], 1);
}

/* Bad arguments: an error from init, nothing posted. */
static void test_baselines_bad_args(void **state)
{
    static const dcase_t bad = {COLL_DTYPE_DOUBLE, COLL_REDOP_BAND, 1};
    simrun_params_t p;
    simrun_result_t r;
    const coll_op_ops_t *ops[3] = {reduce_op(), allreduce_op(),
                                   find_op("allreduce", "recexch")};
    for (int i = 0; i < 3; i++) {
        simrun_params_default(&p, ops[i], 4);
        p.args.dtype = bad.dtype;
        p.args.redop = bad.redop;
        p.args.count = 1;
        p.len = 8;
        assert_int_equal(simrun_run(&p, &r, NULL), UCFT_ERR_INVALID_PARAM);
        p.args.redop = COLL_REDOP_SUM;
        p.args.count = 3; /* 24 bytes, but len 8 */
        assert_int_equal(simrun_run(&p, &r, NULL), UCFT_ERR_INVALID_PARAM);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baselines_reduce_failure_free),
        cmocka_unit_test(test_baselines_allreduce_failure_free),
        cmocka_unit_test(test_baselines_barrier_failure_free),
        cmocka_unit_test(test_baselines_placement),
        cmocka_unit_test(test_baselines_reduce_one_failure),
        cmocka_unit_test(test_baselines_allreduce_one_failure),
        cmocka_unit_test(test_baselines_two_failures_campaign),
        cmocka_unit_test(test_baselines_staggered_campaign),
        cmocka_unit_test(test_baselines_allreduce_fp_consistent),
        cmocka_unit_test(test_baselines_bad_args),
        cmocka_unit_test(test_baselines_remote_wait),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fprintf(stderr, "%llu simulated runs\n", runs_total);
    return rc;
}
