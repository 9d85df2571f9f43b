/* Allgather, reduce-scatter, the ring allreduce and the scatter-ring
 * broadcast on the sim
 * (collectives/ring_bw.c, collectives/gather_corrected.c, docs/reduce.md):
 *  - failure-free, n = 1..17 and a few larger, several block sizes (0
 *    included), datatypes and operations: the exact result at every rank
 *    and exactly the ring's messages (n (n - 1) per phase);
 *  - the ring baselines with one failure before the operation or before
 *    any send of any rank, and seeded campaigns of two (staggered starts
 *    too): every live rank ends, with the right result or
 *    UCFT_ERR_PROC_FAILED, never a hang, never a wrong value; a rank dead
 *    before the operation leaves no rank with a result;
 *  - the corrected forms with every placement of up to f failures (f = 1:
 *    n <= 16; f = 2: n <= 8) before the operation or before any send:
 *    every survivor completes, all with the same output, in which every
 *    live rank's block is present and a failed rank's block is its data in
 *    full or marked absent (allgather), and every reduce-scatter block is
 *    the reduction over the live ranks and some of the dead ones. */
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

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GT_SCALE 3
#else
#define GT_SCALE 1
#endif

static unsigned long long runs_total;
/* The root of the runs (the broadcast's; the others ignore it). */
static int g_root;
/* 1: every send is a rendezvous one (sim.rndv_min = 1, transport T7: it
 * completes only once its receiver takes it). */
static int g_rndv;

static const coll_op_ops_t *find_op(const char *op, const char *alg)
{
    const coll_op_ops_t *o = coll_op_find(op, alg);
    assert_non_null(o);
    return o;
}

typedef struct gcase {
    int dtype, redop;
    size_t per; /* elements per block (allreduce: per n elements in all,
                   plus `per` more, so that blocks differ in size) */
} gcase_t;

static const gcase_t gcases[] = {
    {COLL_DTYPE_UINT8, COLL_REDOP_SUM, 2},
    {COLL_DTYPE_INT32, COLL_REDOP_SUM, 5},
    {COLL_DTYPE_INT64, COLL_REDOP_SUM, 1},
    {COLL_DTYPE_DOUBLE, COLL_REDOP_MAX, 3},
    {COLL_DTYPE_FLOAT, COLL_REDOP_SUM, 7},
    {COLL_DTYPE_UINT16, COLL_REDOP_BXOR, 4},
    {COLL_DTYPE_UINT32, COLL_REDOP_PROD, 3},
    {COLL_DTYPE_INT32, COLL_REDOP_SUM, 0},
};
#define NGCASES (sizeof(gcases) / sizeof(gcases[0]))

static int is_allgather(const coll_op_ops_t *op)
{
    return strcmp(op->op, "allgather") == 0;
}

/* One bounded run; asserts what every outcome must satisfy. */
static void run(const coll_op_ops_t *op, int n, int f, const gcase_t *gc,
                const simrun_fail_t *fails, size_t nfails, uint64_t spread,
                simrun_result_t *r, uint8_t *ok)
{
    simrun_params_t p;
    int ar = strcmp(op->op, "allreduce") == 0 || strcmp(op->op, "bcast") == 0;
    size_t count = ar ? gc->per * (size_t)n + gc->per : gc->per * (size_t)n;
    size_t es = dtype_size(gc->dtype);

    simrun_params_default(&p, op, n);
    if (spread > 0) {
        p.start_spread_ns = spread;
        p.sim.detect_delay_ns = spread / 4;
    }
    p.sim.seed = runs_total + 1;
    p.seq = (uint32_t)(runs_total & 0xffff);
    p.root = g_root < n ? g_root : n - 1;
    p.sim.rndv_min = g_rndv ? 1 : 0;
    p.args.f = f;
    p.args.dtype = gc->dtype;
    p.args.redop = gc->redop;
    p.args.count = count;
    p.len = count * es + (is_allgather(op) ? (size_t)n : 0);
    p.fails = fails;
    p.nfails = nfails;
    p.max_events = 10000000;
    p.dirty_states = (int)(runs_total & 1); /* recycled states too */
    runs_total++;
    assert_int_equal(simrun_run(&p, r, ok), UCFT_OK);
    if (r->bounded || r->unfinished || r->data_errors || r->inconsistent) {
        fprintf(stderr,
                "%s/%s n=%d f=%d %s/%s per %zu: bounded %d unfinished %d "
                "data_errors %d inconsistent %d; failures:",
                op->op, op->alg, n, f, dtype_name(gc->dtype),
                dtype_op_name(gc->redop), gc->per, r->bounded, r->unfinished,
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
    assert_int_equal(r->completed + r->failed_ops, r->live);
}

static const char *const ring_ops[] = {"allgather", "reduce_scatter",
                                       "allreduce", "bcast"};
#define NRING 4

static const coll_op_ops_t *ring_op(size_t o)
{
    return find_op(ring_ops[o], o == 3 ? "scatter-ring" : "ring");
}

/* Ring sends of one rank, failure-free: n - 1 per phase (broadcast: an
 * upper bound, the scatter sends at most log2 n + 1 more). */
static unsigned ring_sends(const coll_op_ops_t *op, int n)
{
    unsigned lg = 0;
    while ((1 << lg) < n)
        lg++;
    if (strcmp(op->op, "bcast") == 0)
        return (unsigned)(n - 1) + lg;
    return (unsigned)(n - 1) * (strcmp(op->op, "allreduce") == 0 ? 2u : 1u);
}

/* Failure-free messages of the whole run. */
static uint64_t ring_msgs(const coll_op_ops_t *op, int n)
{
    uint64_t ring = (uint64_t)n * (uint64_t)(n - 1);
    if (strcmp(op->op, "bcast") == 0)
        return ring + (uint64_t)(n - 1); /* the scatter: one per non-root */
    return strcmp(op->op, "allreduce") == 0 ? 2 * ring : ring;
}

static void test_gather_ring_failure_free(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    (void)state;
    for (size_t o = 0; o < NRING; o++) {
        const coll_op_ops_t *op = ring_op(o);
        for (int n = 1; n <= 40; n += n < 17 ? 1 : 7)
            for (size_t d = 0; d < NGCASES; d++) {
                if (is_allgather(op) && gcases[d].redop != COLL_REDOP_SUM)
                    continue; /* the operation does not matter */
                g_root = (int)d % 3 == 0 ? 0 : (int)d * 5 % n;
                run(op, n, 1, &gcases[d], NULL, 0, 0, &r, ok);
                assert_int_equal(r.completed, n);
                assert_int_equal(r.stats.messages, ring_msgs(op, n));
            }
    }
}

/* A failure before the op, or before the k-th send of one rank, for
 * every rank and k up to its sends + 1 ("never"). */
static void test_gather_ring_one_failure(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    (void)state;
    for (size_t o = 0; o < NRING; o++) {
        const coll_op_ops_t *op = ring_op(o);
        for (int n = 2; n <= 2 + 15 / GT_SCALE; n++)
            for (int a = 0; a < n; a++)
                for (unsigned k = 0; k <= ring_sends(op, n) + 1; k++) {
                    g_root = (a + k) % n;
                    simrun_fail_t fl = {.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                                  : SIMRUN_FAIL_BEFORE_OP,
                                        .rank = a,
                                        .k = k};
                    run(op, n, 1, &gcases[k % 3], &fl, 1, 0, &r, ok);
                    /* Every survivor needs the dead rank's block (the
                     * broadcast: the block only it was sent, or the
                     * root's). */
                    if (k == 0)
                        assert_int_equal(r.completed, 0);
                    if (k == ring_sends(op, n) + 1)
                        assert_int_equal(r.completed, n);
                }
    }
}

static void draw_fails(uint64_t *x, int n, size_t nf, unsigned kmax,
                       simrun_fail_t *fl)
{
    for (size_t j = 0; j < nf; j++) {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned k = (unsigned)((*x >> 50) % (kmax + 1));
        fl[j] = (simrun_fail_t){.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                          : SIMRUN_FAIL_BEFORE_OP,
                                .rank = (int)((*x >> 20) % (uint64_t)n),
                                .k = k};
    }
}

/* Two deaths, seeded, all at once or staggered starts (some ranks start
 * knowing of a death): still every live rank ends, never a wrong value. */
static void test_gather_ring_campaign(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    uint64_t x = 4040;
    (void)state;
    for (int i = 0; i < 900 / GT_SCALE; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int n = 2 + (int)((x >> 33) % 30);
        const coll_op_ops_t *op = ring_op((size_t)i % NRING);
        g_root = (int)((x >> 12) % (uint64_t)n);
        simrun_fail_t fl[2];
        size_t nf = 1 + (size_t)((x >> 45) % 2);
        draw_fails(&x, n, nf, ring_sends(op, n), fl);
        run(op, n, 1, &gcases[(size_t)i % NGCASES], fl, nf, i % 2 ? 20000 : 0,
            &r, ok);
    }
}

/* Lanes (ring_bw.c): blocks over 32 KiB run as up to 4 concurrent rings,
 * one per 32 KiB of a block. The same formula as the algorithm's. */
static unsigned lanes_of(const coll_op_ops_t *op, int n, const gcase_t *gc)
{
    int ar = strcmp(op->op, "allreduce") == 0 || strcmp(op->op, "bcast") == 0;
    size_t count = ar ? gc->per * (size_t)n + gc->per : gc->per * (size_t)n;
    size_t blk = count / (size_t)n, nl = blk * dtype_size(gc->dtype) / 32768;
    nl = nl > 4 ? 4 : nl;
    nl = nl > blk ? blk : nl;
    return nl < 1 ? 1 : (unsigned)nl;
}

/* Large blocks, 1 to 4 lanes: exact results and lanes x the ring's
 * messages; then every single failure (before the op, before any send of
 * any rank) with 2 and 4 lanes: every live rank ends, right or with an
 * error, never a hang. */
static void test_gather_ring_lanes(void **state)
{
    static const gcase_t big[] = {
        {COLL_DTYPE_INT32, COLL_REDOP_SUM, 9000},   /* 1 lane */
        {COLL_DTYPE_INT32, COLL_REDOP_SUM, 17000},  /* 2 */
        {COLL_DTYPE_DOUBLE, COLL_REDOP_MAX, 12300}, /* 3 */
        {COLL_DTYPE_UINT8, COLL_REDOP_SUM, 200000}, /* 4 (more: capped) */
    };
    static uint8_t ok[64];
    simrun_result_t r;
    unsigned seen[5] = {0};
    (void)state;
    for (size_t o = 0; o < NRING; o++) {
        const coll_op_ops_t *op = ring_op(o);
        for (int n = 2; n <= 9; n += 1 + (n > 3) * 2)
            for (size_t d = 0; d < 4; d++) {
                if (is_allgather(op) && big[d].redop != COLL_REDOP_SUM)
                    continue;
                unsigned nl = lanes_of(op, n, &big[d]);
                seen[nl]++;
                g_root = n - 1;
                run(op, n, 1, &big[d], NULL, 0, 0, &r, ok);
                assert_int_equal(r.completed, n);
                assert_int_equal(r.stats.messages, nl * ring_msgs(op, n));
            }
        for (int n = 2; n <= 2 + 3 / GT_SCALE; n++)
            for (size_t d = 1; d < 4; d += 2)
                for (int a = 0; a < n; a++) {
                    unsigned ks = lanes_of(op, n, &big[d]) * ring_sends(op, n);
                    for (unsigned k = 0; k <= ks + 1; k += 1 + (k > 6)) {
                        simrun_fail_t fl = {.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                                      : SIMRUN_FAIL_BEFORE_OP,
                                            .rank = a,
                                            .k = k};
                        g_root = (a + 1) % n;
                        run(op, n, 1, &big[d], &fl, 1, 2000 * (k % 2), &r, ok);
                        if (k == 0)
                            assert_int_equal(r.completed, 0);
                    }
                }
    }
    for (unsigned nl = 1; nl <= 4; nl++)
        assert_true(seen[nl] > 0);
    g_root = 0;
}

/* Placement maps: the blocks stay the job ranks' (reversed order). */
static void test_gather_ring_placement(void **state)
{
    static uint8_t ok[32];
    int rank[17], pos[17];
    simrun_result_t r;
    (void)state;
    for (int n = 2; n <= 17; n += 3) {
        for (int i = 0; i < n; i++) {
            rank[i] = n - 1 - i;
            pos[n - 1 - i] = i;
        }
        coll_map_t map = {n, rank, pos};
        for (size_t o = 0; o < NRING; o++) {
            const coll_op_ops_t *op = ring_op(o);
            simrun_params_t p;
            simrun_params_default(&p, op, n);
            p.args.dtype = COLL_DTYPE_INT32;
            p.args.redop = COLL_REDOP_SUM;
            p.args.count = 3 * (size_t)n + (o >= 2);
            p.root = o == 3 ? n / 2 : 0;
            p.args.map = &map;
            p.len = p.args.count * 4 + (o == 0 ? (size_t)n : 0);
            assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
            assert_int_equal(r.completed, n);
            assert_int_equal(r.data_errors + r.inconsistent, 0);
        }
    }
}

/* Bad arguments: an error from init, nothing posted. */
static void test_gather_bad_args(void **state)
{
    simrun_params_t p;
    simrun_result_t r;
    (void)state;
    for (size_t o = 0; o < 2; o++)
        for (int c = 0; c < 2; c++) {
            const coll_op_ops_t *op =
                find_op(ring_ops[o], c ? "corrected" : "ring");
            simrun_params_default(&p, op, 4);
            p.args.dtype = COLL_DTYPE_INT32;
            p.args.redop = COLL_REDOP_SUM;
            p.args.count = 6; /* not a multiple of 4 */
            p.len = 24 + (o == 0 ? 4 : 0);
            assert_int_equal(simrun_run(&p, &r, NULL), UCFT_ERR_INVALID_PARAM);
            p.args.count = 8;
            p.len = 8; /* not what count gives */
            assert_int_equal(simrun_run(&p, &r, NULL), UCFT_ERR_INVALID_PARAM);
        }
}

/* Failure-free sends of rank v of a corrected allreduce rooted at 0 with
 * flat trees (n <= 16): an upper bound (up group + parent, the root's
 * star down); k past a rank's last send is a run without that death. */
static unsigned corr_sends(int v, int n, int f)
{
    return (unsigned)f + 2 + (v == 0 ? (unsigned)n - 1 : 0);
}

/* The same bound for the corrected-ring allreduce: the ring's 2 (n - 1)
 * sends (one lane), then two corrected allreduces (the agreement, and
 * the fallback after a failure). */
static unsigned cring_sends(int v, int n, int f)
{
    return 2 * (unsigned)(n - 1) + 2 * corr_sends(v, n, f);
}

static unsigned sends_bound(const coll_op_ops_t *op, int v, int n, int f)
{
    return strcmp(op->alg, "corrected-ring") == 0 ? cring_sends(v, n, f)
                                                  : corr_sends(v, n, f);
}

static void corr_expect(const simrun_result_t *r)
{
    assert_int_equal(r->completed, r->live);
    assert_int_equal(r->failed_ops, 0);
}

/* The corrected-ring broadcast: all or nothing. Every survivor holds the
 * root's data (the oracle checks it), or, only when the root died, every
 * survivor ends with an error. */
static void corr_expect_fl(const coll_op_ops_t *op, int n,
                           const simrun_fail_t *fl, size_t nfl,
                           const simrun_result_t *r)
{
    int root = g_root < n ? g_root : n - 1, root_dead = 0;
    for (size_t i = 0; i < nfl; i++)
        root_dead |= fl[i].rank == root;
    if (strcmp(op->op, "bcast") == 0 && root_dead && r->completed == 0) {
        assert_int_equal(r->failed_ops, r->live);
        return;
    }
    corr_expect(r);
}

/* Every placement of up to f deaths before the op or before any send. */
static void corr_sweep(const coll_op_ops_t *op, int f, int n1,
                       const gcase_t *gc)
{
    static uint8_t ok[64];
    simrun_result_t r;
    simrun_fail_t fl[2];
    for (int n = 2; n <= n1; n++) {
        run(op, n, f, gc, NULL, 0, 0, &r, ok);
        assert_int_equal(r.completed, n);
        for (int a = 0; a < n; a++) {
            unsigned ka = sends_bound(op, a, n, f);
            for (unsigned i = 0; i <= ka; i++) {
                fl[0] = (simrun_fail_t){.kind = i ? SIMRUN_FAIL_BEFORE_SEND
                                                  : SIMRUN_FAIL_BEFORE_OP,
                                        .rank = a,
                                        .k = i};
                if (f < 2) {
                    run(op, n, f, gc, fl, 1, 0, &r, ok);
                    corr_expect_fl(op, n, fl, 1, &r);
                    continue;
                }
                for (int b = a + 1; b < n; b++)
                    for (unsigned j = 0; j <= sends_bound(op, b, n, f); j++) {
                        fl[1] =
                            (simrun_fail_t){.kind = j ? SIMRUN_FAIL_BEFORE_SEND
                                                      : SIMRUN_FAIL_BEFORE_OP,
                                            .rank = b,
                                            .k = j};
                        run(op, n, f, gc, fl, 2, 0, &r, ok);
                        corr_expect_fl(op, n, fl, 2, &r);
                    }
            }
        }
    }
}

static void test_gather_corrected_f1_exhaustive(void **state)
{
    (void)state;
    corr_sweep(find_op("allgather", "corrected"), 1, 16 / GT_SCALE, &gcases[0]);
    corr_sweep(find_op("reduce_scatter", "corrected"), 1, 16 / GT_SCALE,
               &gcases[1]);
}

static void test_gather_corrected_f2_exhaustive(void **state)
{
    (void)state;
    corr_sweep(find_op("allgather", "corrected"), 2, 8 / GT_SCALE, &gcases[2]);
    corr_sweep(find_op("reduce_scatter", "corrected"), 2, 7 / GT_SCALE,
               &gcases[0]);
}

/* Failure-free over sizes and datatypes, and a dead rank before the op:
 * its allgather block is absent at every survivor (presence byte 0). */
static void test_gather_corrected_values(void **state)
{
    static uint8_t ok[64];
    simrun_result_t r;
    (void)state;
    for (int n = 1; n <= 17; n++)
        for (size_t d = 0; d < NGCASES; d++) {
            run(find_op("reduce_scatter", "corrected"), n, 1, &gcases[d], NULL,
                0, 0, &r, ok);
            assert_int_equal(r.completed, n);
            run(find_op("allgather", "corrected"), n, 1, &gcases[d], NULL, 0, 0,
                &r, ok);
            assert_int_equal(r.completed, n);
        }
    /* ag_check accepts an absent block only for a dead rank; here the
     * oracle is asked for one that must be absent. */
    for (int n = 2; n <= 9; n++) {
        simrun_fail_t fl = {.kind = SIMRUN_FAIL_BEFORE_OP, .rank = n - 1};
        const coll_op_ops_t *op = find_op("allgather", "corrected");
        simrun_params_t p;
        size_t len = 3 * (size_t)n + (size_t)n;
        simrun_params_default(&p, op, n);
        p.args.dtype = COLL_DTYPE_UINT8;
        p.args.redop = COLL_REDOP_SUM;
        p.args.count = 3 * (size_t)n;
        p.len = len;
        p.fails = &fl;
        p.nfails = 1;
        assert_int_equal(simrun_run(&p, &r, ok), UCFT_OK);
        assert_int_equal(r.completed, n - 1);
        assert_int_equal(r.data_errors + r.inconsistent, 0);
    }
}

/* Corrected-ring allreduce, reduce-scatter and allgather
 * (allreduce_ring_corrected.c):
 * every placement
 * of up to f failures (f = 1: n <= 12; f = 2: n <= 6) before the
 * operation or before any send (the ring's, the agreement's, the
 * fallback's): every survivor completes, the same value at all, each
 * live rank's input once and a dead one's entirely or not at all (the
 * oracle's counting encoding). */
static void test_gather_corrected_ring_exhaustive(void **state)
{
    const coll_op_ops_t *op = find_op("allreduce", "corrected-ring");
    (void)state;
    corr_sweep(op, 1, 12 / GT_SCALE, &gcases[0]);
    corr_sweep(op, 2, 6 / GT_SCALE, &gcases[0]);
    corr_sweep(op, 1, 7 / GT_SCALE, &gcases[3]); /* double, max */
    /* Rendezvous sends: a rank whose ring ended early must still take
     * what a live left neighbour sends, or that neighbour's send (and
     * its agreement) waits for ever. */
    g_rndv = 1;
    corr_sweep(op, 1, 9 / GT_SCALE, &gcases[1]);
    g_rndv = 0;
    /* The reduce-scatter: every block over the live ranks and some dead
     * ones. */
    op = find_op("reduce_scatter", "corrected-ring");
    corr_sweep(op, 1, 12 / GT_SCALE, &gcases[1]);
    corr_sweep(op, 2, 6 / GT_SCALE, &gcases[0]);
    g_rndv = 1;
    corr_sweep(op, 1, 8 / GT_SCALE, &gcases[1]);
    g_rndv = 0;
    /* The broadcast: the root's data at every survivor, or (the root
     * dead) an error at every survivor; roots 0 and 2. */
    op = find_op("bcast", "corrected-ring");
    for (g_root = 0; g_root <= 2; g_root += 2) {
        corr_sweep(op, 1, 12 / GT_SCALE, &gcases[0]);
        corr_sweep(op, 2, 6 / GT_SCALE, &gcases[1]);
        g_rndv = 1;
        corr_sweep(op, 1, 8 / GT_SCALE, &gcases[1]);
        g_rndv = 0;
    }
    g_root = 0;
    /* The allgather: the corrected allgather's semantics (presence). */
    op = find_op("allgather", "corrected-ring");
    corr_sweep(op, 1, 12 / GT_SCALE, &gcases[0]);
    corr_sweep(op, 2, 6 / GT_SCALE, &gcases[2]);
    g_rndv = 1;
    corr_sweep(op, 1, 8 / GT_SCALE, &gcases[1]);
    g_rndv = 0;
}

/* Failure-free it sends the ring's bytes plus a few one-byte messages per
 * rank (the agreement), at any size, with 1, 2 and 4 lanes, n = 1..17
 * (large vectors: n <= 9 and 16): at the
 * ring's traffic (2 (n - 1) / n of the vector per rank), where the
 * corrected allreduce's root alone sends n - 1 copies. */
static void test_gather_corrected_ring_traffic(void **state)
{
    static const gcase_t sizes[] = {
        {COLL_DTYPE_INT32, COLL_REDOP_SUM, 3},
        {COLL_DTYPE_INT32, COLL_REDOP_SUM, 17000},  /* 2 lanes */
        {COLL_DTYPE_UINT8, COLL_REDOP_SUM, 140000}, /* 4 lanes */
    };
    static uint8_t ok[64];
    simrun_result_t r, rr, rc;
    (void)state;
    for (int n = 1; n <= 17; n++)
        for (size_t d = 0; d < 3; d++) {
            if (d > 0 && n > 9 && n != 16)
                continue; /* megabytes per rank: a few sizes suffice */
            run(find_op("allreduce", "corrected-ring"), n, 1, &sizes[d], NULL,
                0, 0, &r, ok);
            assert_int_equal(r.completed, n);
            run(find_op("allreduce", "ring"), n, 1, &sizes[d], NULL, 0, 0, &rr,
                ok);
            run(find_op("allreduce", "corrected"), n, 1, &sizes[d], NULL, 0, 0,
                &rc, ok);
            uint64_t extra = r.stats.bytes - rr.stats.bytes;
            assert_true(r.stats.bytes >= rr.stats.bytes);
            /* the agreement: under 64 bytes per message, f + 2 + (n - 1)
             * messages per rank at most */
            assert_true(extra <= 64 * (uint64_t)n * (uint64_t)(n + 3));
            /* The corrected allreduce's root sends n - 1 whole copies:
             * from 4 ranks on, large vectors take it over twice as long
             * (simulated, deterministic). */
            if (d > 0 && n >= 4 && 2 * r.sim_latency_ns >= rc.sim_latency_ns)
                fail_msg("n = %d, %zu per block: corrected-ring %llu ns, "
                         "corrected %llu ns",
                         n, sizes[d].per, (unsigned long long)r.sim_latency_ns,
                         (unsigned long long)rc.sim_latency_ns);
        }
}

/* Built twice (tests/sim/CMakeLists.txt): the every-placement sweeps
 * (GT_EXHAUSTIVE = 1, label "exhaustive", which the sanitizer legs skip)
 * and the rest. */
#ifndef GT_EXHAUSTIVE
#define GT_EXHAUSTIVE 0
#endif

int main(void)
{
    const struct CMUnitTest sweeps[] = {
        cmocka_unit_test(test_gather_corrected_f1_exhaustive),
        cmocka_unit_test(test_gather_corrected_f2_exhaustive),
        cmocka_unit_test(test_gather_corrected_ring_exhaustive),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gather_ring_failure_free),
        cmocka_unit_test(test_gather_ring_one_failure),
        cmocka_unit_test(test_gather_ring_campaign),
        cmocka_unit_test(test_gather_ring_placement),
        cmocka_unit_test(test_gather_ring_lanes),
        cmocka_unit_test(test_gather_bad_args),
        cmocka_unit_test(test_gather_corrected_values),
        cmocka_unit_test(test_gather_corrected_ring_traffic),
    };
    int rc = GT_EXHAUSTIVE ? cmocka_run_group_tests(sweeps, NULL, NULL)
                           : cmocka_run_group_tests(tests, NULL, NULL);
    fprintf(stderr, "%llu simulated runs\n", runs_total);
    return rc;
}
