/* Agreement on the sim (collectives/agree.h, docs/comms.md): for every
 * outcome of every run, every live rank
 *   - completes (termination; the run is unbounded and must go quiet),
 *   - holds the same value, failed set F and error bit (agreement),
 *   - holds value = AND of the contributions of the ranks not in F, with F
 *     only ranks that died and every rank alive at the end outside F
 *     (validity), and err = "some rank of F was not acknowledged by some
 *     rank outside F" (the chapter's uniform error),
 * over: no failure at n = 1..40 (the message count of the fast path
 * asserted), one failure before the call or before any of the victim's
 * sends at n = 2..32, two at n = 2..16, with ranks entering at different
 * times, every flag pattern at n <= 6, acknowledged sets that differ, and
 * random campaigns of 10 % of the ranks dying during the call up to
 * n = 4096; and what communicator makers compute from the outcome
 * (coll_agree_members: dup, shrink, split with random colors and keys)
 * at n = 2..10 under every single and pair of failures: every live rank
 * finds itself where the (key, rank) order puts it, with every rank
 * outside F of its color. */
#include "collectives/agree.h"
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
#define AG_SCALE 3
#else
#define AG_SCALE 1
#endif

#define AG_MAXN 4096

typedef struct ag_test {
    int n;
    size_t words, bm;
    uint8_t *acked;       /* rank r's acknowledged set at r * bm */
    uint32_t pattern;     /* flags mode: rank r's flag is bit r */
    int flags_mode;       /* 1: one word, flag 0/1 per rank */
    int have_first;       /* a first outcome was recorded */
    int gate;             /* 1: under the majority gate (agree_gate.c) */
    const uint64_t *skew; /* per rank: how much later it hears of deaths */
    uint8_t first_f[AG_MAXN / 8];
    uint32_t first_err;
    char why[160];
} ag_test_t;

static unsigned long long runs;

static int bm_get(const uint8_t *b, int r)
{
    return b != NULL && ((b[r >> 3] >> (r & 7)) & 1);
}

/* Flags mode: the pattern travels in the instance's sequence number. */
static void flags_fill(void *buf, const coll_args_t *args, int rank, int size)
{
    uint32_t *v = buf;
    (void)size;
    v[0] = (args->seq >> rank) & 1;
    memset(v + 1, 0, sizeof(coll_agree_hdr_t));
}

static int flags_check(const void *buf, const coll_args_t *args, int rank,
                       int size, const uint8_t *dead)
{
    (void)buf, (void)args, (void)rank, (void)size, (void)dead;
    return 1; /* inspect does the checking */
}

static const coll_oracle_t flags_oracle = {flags_fill, flags_check};

static void prepare(void *arg, int rank, void *state)
{
    ag_test_t *t = arg;
    coll_agree_set_acked(state, t->acked + (size_t)rank * t->bm);
}

/* What rank r contributes (agree_fill, or the flag pattern). */
static void contribution(const ag_test_t *t, int r, uint32_t *v)
{
    if (t->flags_mode) {
        v[0] = (t->pattern >> r) & 1;
        return;
    }
    for (size_t i = 0; i < t->words; i++)
        v[i] = UINT32_MAX;
    size_t bit = (size_t)r % (32 * t->words);
    v[bit / 32] &= ~(UINT32_C(1) << (bit % 32));
}

static int bad(ag_test_t *t, int rank, const char *why)
{
    snprintf(t->why, sizeof(t->why), "rank %d: %s", rank, why);
    return 0;
}

static int inspect(void *arg, int rank, const void *state, const void *buf,
                   const uint8_t *dead)
{
    ag_test_t *t = arg;
    const uint32_t *val = buf;
    const coll_agree_hdr_t *h = (const coll_agree_hdr_t *)(val + t->words);
    const uint8_t *f = coll_agree_failed(state);
    uint32_t nf = 0, want[64], c[64];
    int err = 0;
    uint8_t fb[AG_MAXN / 8] = {0};

    if (f != NULL)
        memcpy(fb, f, t->bm);
    if (t->have_first) { /* the first outcome was checked in full */
        if (memcmp(t->first_f, fb, t->bm) != 0 || t->first_err != h->err)
            return bad(t, rank, "F or err differs from another rank's");
        return 1; /* the value: simrun compares buffers (consistent) */
    }
    /* Who acknowledged each failed rank: AND over the ranks outside F. */
    uint8_t ackand[AG_MAXN / 8];
    memset(ackand, 0xff, t->bm);
    for (int r = 0; r < t->n; r++)
        if (!bm_get(f, r))
            for (size_t i = 0; i < t->bm; i++)
                ackand[i] &= t->acked[(size_t)r * t->bm + i];
    for (int x = 0; x < t->n; x++)
        if (bm_get(f, x) && !bm_get(ackand, x))
            err = 1;
    for (size_t i = 0; i < t->words; i++)
        want[i] = UINT32_MAX;
    for (int r = 0; r < t->n; r++) {
        if (bm_get(f, r)) {
            nf++;
            if (!dead[r])
                return bad(t, rank, "a live rank is in F");
            continue;
        }
        contribution(t, r, c);
        for (size_t i = 0; i < t->words; i++)
            want[i] &= c[i];
    }
    if (nf != h->nfailed)
        return bad(t, rank, "|F| in the header differs from F");
    if (memcmp(want, val, t->words * sizeof(uint32_t)) != 0)
        return bad(t, rank, "value is not the AND over the ranks outside F");
    if ((uint32_t)err != h->err)
        return bad(t, rank, "error bit differs from the acknowledged sets");
    t->have_first = 1;
    memcpy(t->first_f, fb, t->bm);
    t->first_err = h->err;
    return 1;
}

/* One run; asserts every property. Returns the result for more checks. */
static simrun_result_t
run_full(ag_test_t *t, const simrun_fail_t *fails, size_t nfails,
         uint64_t spread, uint64_t seed, const coll_oracle_t *orc,
         int (*insp)(void *, int, const void *, const void *, const uint8_t *));

static simrun_result_t run(ag_test_t *t, const simrun_fail_t *fails,
                           size_t nfails, uint64_t spread, uint64_t seed)
{
    return run_full(t, fails, nfails, spread, seed,
                    t->flags_mode ? &flags_oracle : NULL, inspect);
}

static simrun_result_t
run_full(ag_test_t *t, const simrun_fail_t *fails, size_t nfails,
         uint64_t spread, uint64_t seed, const coll_oracle_t *orc,
         int (*insp)(void *, int, const void *, const void *, const uint8_t *))
{
    simrun_params_t p;
    simrun_result_t res;
    const coll_op_ops_t *op = coll_op_find("agree", "era");
    assert_non_null(op);
    simrun_params_default(&p, op, t->n);
    p.len = coll_agree_len(t->words);
    p.fails = fails;
    p.nfails = nfails;
    p.start_spread_ns = spread;
    p.sim.seed = seed;
    p.prepare = prepare;
    p.inspect = insp;
    p.hook_arg = t;
    p.oracle = orc;
    p.quorum_gate = t->gate;
    p.sim.notify_skew_ns = t->skew;
    if (orc != NULL)
        p.seq = t->pattern;
    t->have_first = 0;
    t->why[0] = 0;
    assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
    runs++;
    if (res.unfinished || res.failed_ops || res.data_errors ||
        res.inconsistent || res.bounded || res.not_idle ||
        res.completed != res.live) {
        fprintf(stderr,
                "n %d nfails %zu spread %llu seed %llu: live %d completed %d "
                "failed %d unfinished %d data_errors %d inconsistent %d "
                "not_idle %d bounded %d (%s)\n",
                t->n, nfails, (unsigned long long)spread,
                (unsigned long long)seed, res.live, res.completed,
                res.failed_ops, res.unfinished, res.data_errors,
                res.inconsistent, res.not_idle, res.bounded, t->why);
        for (size_t i = 0; i < nfails; i++)
            fprintf(stderr, "  fail %zu: kind %d rank %d k %u time %llu\n", i,
                    (int)fails[i].kind, fails[i].rank, fails[i].k,
                    (unsigned long long)fails[i].time);
        fail();
    }
    return res;
}

static void test_init(ag_test_t *t, int n)
{
    memset(t, 0, sizeof(*t));
    t->n = n;
    t->words = n <= 32 ? 1 : ((size_t)n + 31) / 32;
    if (t->words > 64)
        t->words = 64;
    t->bm = coll_agree_bm_bytes(n);
    t->acked = calloc((size_t)n, t->bm);
    assert_non_null(t->acked);
}

static void test_fini(ag_test_t *t)
{
    free(t->acked);
}

/* The failure-free run of n ranks: p log2 p + 2 (n - p) messages, twice
 * that under the gate (its confirmation is a second fast path). */
static void failure_free(int n, int gate)
{
    ag_test_t t;
    test_init(&t, n);
    t.gate = gate;
    simrun_result_t res = run(&t, NULL, 0, 0, 1);
    int lg = 0;
    while ((2 << lg) <= n)
        lg++;
    uint64_t p = 1u << lg;
    assert_int_equal(res.completed, n);
    assert_int_equal(res.stats.messages,
                     (uint64_t)(gate + 1) * (p * lg + 2 * (n - p)));
    test_fini(&t);
}

/* Fast path: the message count, nothing else. */
static void test_failure_free(void **unused)
{
    (void)unused;
    for (int n = 1; n <= 40; n++)
        failure_free(n, 0);
}

static simrun_fail_t fail_at(int rank, int k)
{
    simrun_fail_t f = {.rank = rank};
    if (k < 0)
        f.kind = SIMRUN_FAIL_BEFORE_OP;
    else
        f.kind = SIMRUN_FAIL_BEFORE_SEND, f.k = (unsigned)k + 1;
    return f;
}

static void run_with(ag_test_t *t, const simrun_fail_t *f, size_t nf,
                     const coll_oracle_t *orc,
                     int (*insp)(void *, int, const void *, const void *,
                                 const uint8_t *))
{
    run_full(t, f, nf, 0, 1, orc, insp);
}

/* Sends a rank may make: fast stages, HELP, REPORT, a round's queries and
 * decisions. */
static int kmax_of(int n)
{
    return 2 * n + 8;
}

/* Every rank killed before the call or before each of its first kmax + 1
 * sends (a few also with ranks entering at different times). */
static void sweep_one(int n, int gate, int kmax)
{
    ag_test_t t;
    test_init(&t, n);
    t.gate = gate;
    for (int v = 0; v < n; v++)
        for (int k = -1; k <= kmax; k++) {
            simrun_fail_t f = fail_at(v, k);
            run(&t, &f, 1, 0, 1);
            if (k < 3)
                run(&t, &f, 1, 30000, (uint64_t)(v * 131 + k + 7));
        }
    test_fini(&t);
}

/* Every pair of ranks, each killed before the call or before one of its
 * first km + 1 sends. */
static void sweep_two(int n, int gate, int km)
{
    ag_test_t t;
    test_init(&t, n);
    t.gate = gate;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            for (int ka = -1; ka <= km; ka++)
                for (int kb = -1; kb <= km; kb++) {
                    simrun_fail_t f[2] = {fail_at(a, ka), fail_at(b, kb)};
                    run(&t, f, 2, 0, 1);
                }
    test_fini(&t);
}

static void test_one_failure(void **unused)
{
    (void)unused;
    for (int n = 2; n <= 32; n += AG_SCALE)
        sweep_one(n, 0, kmax_of(n));
}

static void test_two_failures(void **unused)
{
    (void)unused;
    for (int n = 2; n <= 16; n += AG_SCALE)
        sweep_two(n, 0, n <= 8 ? kmax_of(n) : 10);
}

/* Under the majority gate (UCFT_QUORUM) while a majority lives: the same
 * outcomes as without it (every live rank completes with the same
 * decision: run_full), with one failure at n = 3..16 and two at n = 5..10
 * at every send of the agreement and of its confirmation (fewer under the
 * sanitizers: n = 5 and 8, sends up to 6). */
static void test_gate(void **unused)
{
    (void)unused;
    for (int n = 1; n <= 20; n++)
        failure_free(n, 1);
    for (int n = 3; n <= 16; n += AG_SCALE)
        sweep_one(n, 1, 2 * kmax_of(n));
    for (int n = 5; n <= 10; n += AG_SCALE)
        sweep_two(n, 1, AG_SCALE == 1 ? 12 : 6);
}

/* Acknowledged sets that differ: the error bit must follow them. */
static void test_acked(void **unused)
{
    (void)unused;
    for (int n = 2; n <= 12; n++) {
        ag_test_t t;
        test_init(&t, n);
        for (int v = 0; v < n; v++)
            for (int mode = 0; mode < 3; mode++) {
                memset(t.acked, 0, (size_t)n * t.bm);
                for (int r = 0; r < n; r++)
                    if (mode == 2 || (mode == 1 && r % 2 == 0))
                        t.acked[(size_t)r * t.bm + (size_t)(v >> 3)] |=
                            (uint8_t)(1u << (v & 7));
                simrun_fail_t f = fail_at(v, -1);
                run(&t, &f, 1, 0, 1);
                run(&t, &f, 1, 50000, (uint64_t)(v + 3));
            }
        test_fini(&t);
    }
}

/* Every flag pattern with a failure at every point of one rank. */
static void test_flags(void **unused)
{
    (void)unused;
    for (int n = 2; n <= 6; n++) {
        ag_test_t t;
        test_init(&t, n);
        t.flags_mode = 1;
        for (uint32_t pat = 0; pat < (1u << n); pat++) {
            t.pattern = pat;
            run(&t, NULL, 0, 0, 1);
            for (int v = 0; v < n; v++)
                for (int k = -1; k <= 6; k++) {
                    simrun_fail_t f = fail_at(v, k);
                    run(&t, &f, 1, 0, 1);
                }
        }
        test_fini(&t);
    }
}

/* Communicator making (coll_agree_members): rank r's (color, key) from
 * the instance's sequence number; every live rank must find itself in
 * its color's list, at a place the (key, rank) order gives, and every
 * rank outside F of that color with it. */
static uint32_t split_color(uint32_t seq, int r)
{
    uint32_t h = (seq * 2654435761u) ^ ((uint32_t)r * 40503u);
    h = (h ^ (h >> 13)) * 0x5bd1e995u;
    return (h >> 7) % 4 == 3 ? COLL_SPLIT_UNDEF : (h >> 7) % 4;
}

static uint32_t split_key(uint32_t seq, int r)
{
    uint32_t h = (seq + 17u) * 2246822519u ^ ((uint32_t)r * 3266489917u);
    return (uint32_t)((int32_t)((h >> 9) % 5) - 2);
}

static void split_fill(void *buf, const coll_args_t *args, int rank, int size)
{
    uint32_t *v = buf;
    for (int i = 0; i < 2 * size; i++)
        v[i] = UINT32_MAX;
    v[2 * rank] = split_color(args->seq, rank);
    v[2 * rank + 1] = split_key(args->seq, rank);
    memset(v + 2 * size, 0, sizeof(coll_agree_hdr_t));
}

static const coll_oracle_t split_oracle = {split_fill, flags_check};

static int inspect_split(void *arg, int rank, const void *state,
                         const void *buf, const uint8_t *dead)
{
    ag_test_t *t = arg;
    const uint32_t *v = buf;
    const uint8_t *f = coll_agree_failed(state);
    int n = t->n, out[64], k;
    for (int r = 0; r < n; r++) {
        int in = bm_get(f, r);
        if (in && !dead[r])
            return bad(t, rank, "a live rank is in F");
        uint32_t c = in ? UINT32_MAX : split_color(t->pattern, r);
        uint32_t kk = in ? UINT32_MAX : split_key(t->pattern, r);
        if (v[2 * r] != c || v[2 * r + 1] != kk)
            return bad(t, rank, "a slot is not its rank's contribution");
    }
    for (int kind = COLL_MEMBERS_DUP; kind <= COLL_MEMBERS_SPLIT; kind++) {
        k = coll_agree_members(kind, n, rank, v, f, out);
        uint32_t mine = split_color(t->pattern, rank);
        int want = 0, pos = -1;
        for (int r = 0; r < n; r++)
            want += kind == COLL_MEMBERS_DUP ||
                    (!bm_get(f, r) &&
                     (kind == COLL_MEMBERS_SHRINK || v[2 * r] == mine));
        if (kind == COLL_MEMBERS_SPLIT && mine == COLL_SPLIT_UNDEF)
            want = 0;
        if (k != want)
            return bad(t, rank, "wrong number of members");
        for (int i = 0; i < k; i++) {
            if (out[i] == rank)
                pos = i;
            if (i > 0 && kind == COLL_MEMBERS_SPLIT) {
                int32_t a = (int32_t)v[2 * out[i - 1] + 1],
                        b = (int32_t)v[2 * out[i] + 1];
                if (a > b || (a == b && out[i - 1] > out[i]))
                    return bad(t, rank, "members out of (key, rank) order");
            } else if (i > 0 && out[i - 1] >= out[i]) {
                return bad(t, rank, "members out of rank order");
            }
        }
        if (k > 0 && pos < 0)
            return bad(t, rank, "this rank is not in its communicator");
    }
    return 1;
}

static void test_members(void **unused)
{
    (void)unused;
    for (int n = 2; n <= 10; n += AG_SCALE) {
        ag_test_t t;
        test_init(&t, n);
        t.words = 2 * (size_t)n;
        for (uint32_t seq = 1; seq <= 3; seq++) {
            t.pattern = seq;
            for (int a = 0; a < n; a++)
                for (int b = a; b < n; b++)
                    for (int ka = -1; ka <= 8; ka++)
                        for (int kb = -1; kb <= (a == b ? -1 : 8); kb++) {
                            simrun_fail_t f[2] = {fail_at(a, ka),
                                                  fail_at(b, kb)};
                            run_with(&t, f, a == b ? 1 : 2, &split_oracle,
                                     inspect_split);
                        }
        }
        test_fini(&t);
    }
}

/* 10 % of the ranks die at random times during the call. */
static void test_random(void **unused)
{
    (void)unused;
    static const int ns[] = {64, 256, 1024, 4096};
    simrun_fail_t *f = calloc(AG_MAXN / 10 + 1, sizeof(*f));
    assert_non_null(f);
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        int n = ns[i];
        int seeds = n >= 1024 ? 2 : 10 / AG_SCALE;
        ag_test_t t;
        test_init(&t, n);
        for (int s = 0; s < seeds; s++) {
            uint64_t x = (uint64_t)s * 0x9e3779b97f4a7c15ull + (uint64_t)n;
            int nf = n / 10;
            for (int j = 0; j < nf; j++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                f[j].kind = SIMRUN_FAIL_AT_TIME;
                f[j].rank = (int)((x >> 33) % (uint64_t)n);
                f[j].time = (x >> 11) % 40000; /* within the call */
                f[j].whole_node = 0;
            }
            run(&t, f, (size_t)nf, s % 2 ? 20000 : 0, (uint64_t)s + 1);
        }
        test_fini(&t);
    }
    free(f);
}

/* The slow path's round is a tree: with a rank dead before the call
 * (known to every rank after the detection delay), the agreement ends
 * within a few tree traversals of that, not after the coordinator's
 * n - 1 queries one after the other (a star's round took 1.2 ms at
 * n = 1024 and 4.9 ms at 4096 beyond the delay; the tree 54 and 67 us).
 * The dead rank is the first coordinator, or a rank in the middle. */
static void test_round_cost(void **unused)
{
    (void)unused;
    static const int ns[] = {256, 1024, 4096};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        int n = ns[i], lg = 0;
        while ((1 << lg) < n)
            lg++;
        ag_test_t t;
        test_init(&t, n);
        for (int v = 0; v < 2; v++) {
            simrun_fail_t f = fail_at(v ? n / 2 + 3 : 0, -1);
            simrun_result_t res = run(&t, &f, 1, 0, 1);
            uint64_t beyond = res.sim_latency_ns - SIM_DEFAULT_DETECT_DELAY_NS;
            printf("agree: n %d, rank %d dead: %.1f us beyond the "
                   "detection delay\n",
                   n, f.rank, (double)beyond / 1e3);
            assert_true(res.sim_latency_ns > SIM_DEFAULT_DETECT_DELAY_NS);
            assert_true(beyond < 16000u * (uint64_t)lg);
        }
        test_fini(&t);
    }
}

/* Ranks that hear of a death at different times (the runtime spreads the
 * news over a graph). The scenario a review found: rank `v` dead before
 * the call, the first coordinator killed before each of its sends, one
 * rank hearing of deaths later than the others; a HELP answered with the
 * old coordinator's decision, which the helper ignored, left it waiting
 * for ever. Then random kills and skews (every property asserted by run:
 * no rank left waiting, one outcome). */
static void test_skew(void **unused)
{
    (void)unused;
    uint64_t skew[16];
    for (int n = 5; n <= 8; n++) {
        ag_test_t t;
        test_init(&t, n);
        t.skew = skew;
        for (int late = 1; late < n; late++)
            for (int k = -1; k <= 14; k++) {
                memset(skew, 0, sizeof(skew));
                skew[late] = 100000;
                simrun_fail_t f[2] = {fail_at(n - 2, -1), fail_at(0, k)};
                run(&t, f, 2, 0, 1);
            }
        test_fini(&t);
    }
    uint64_t x = 12345;
    int total = AG_SCALE == 1 ? 6000 : 1500;
    for (int it = 0; it < total; it++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int n = 4 + (int)((x >> 33) % 13);
        ag_test_t t;
        test_init(&t, n);
        t.skew = skew;
        t.gate = it % 3 == 0;
        for (int r = 0; r < n; r++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            skew[r] = (x >> 40) % 2 ? (x >> 20) % 3000000 : 0;
        }
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int nf = 1 + (int)((x >> 35) % 4);
        simrun_fail_t f[4];
        for (int j = 0; j < nf; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            f[j] = fail_at((int)((x >> 33) % (uint64_t)n), -1);
            if ((x >> 20) % 2) {
                f[j].kind = SIMRUN_FAIL_AT_TIME;
                f[j].time = (x >> 11) % 3500000;
            } else {
                f[j].kind = SIMRUN_FAIL_BEFORE_SEND;
                f[j].k = 1 + (unsigned)((x >> 13) % 14);
            }
        }
        int ok = 1; /* distinct victims; under the gate a majority lives */
        for (int a = 0; a < nf; a++)
            for (int b = a + 1; b < nf; b++)
                ok &= f[a].rank != f[b].rank;
        if (t.gate && 2 * (n - nf) <= n)
            ok = 0;
        if (ok)
            run(&t, f, (size_t)nf, it % 2 ? 40000 : 0, (uint64_t)it + 1);
        test_fini(&t);
    }
}

static int report(void **unused)
{
    (void)unused;
    printf("agree: %llu runs\n", runs);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_free), cmocka_unit_test(test_one_failure),
        cmocka_unit_test(test_acked),        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_two_failures), cmocka_unit_test(test_members),
        cmocka_unit_test(test_random),       cmocka_unit_test(test_gate),
        cmocka_unit_test(test_round_cost),   cmocka_unit_test(test_skew),
    };
    const char *only = getenv("AGREE_TEST");
    if (only != NULL)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests(tests, NULL, report);
}
