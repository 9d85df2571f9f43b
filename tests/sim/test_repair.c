/* Tree repair on the sim (comm/repair.h, collectives/repair_rule.h,
 * docs/trees.md).
 *
 * The switch. A communicator of n ranks loses ranks one at a time
 * (failures spaced between operations: each victim is dead before the
 * next background agreement starts), sometimes one more during that
 * agreement. Every live rank contributes (c, W) with c its own next
 * operation number, drawn apart from the others' (ranks are at different
 * points of the sequence when they learn of a failure). The agreement
 * (agree/era) runs on the simulator; every live rank applies the rule of
 * repair_rule.h to its outcome and the previous epoch, as comm/repair.c
 * does. Asserted at every live rank and every step: the same next epoch
 * (excluded set and first operation: the same tree for the same
 * operation everywhere); every rank that died before the agreement is
 * excluded and no live rank is; the first operation is at or after
 * c + W of every contributor (no rank can have run past it before it
 * learnt the decision). Every sequence of up to 4 victims at n = 3..6,
 * every ordered triple at n = 8, random sequences of 4 at n = 16, 32, 64.
 *
 * The operations after the switch. On each epoch (the survivors in a dense
 * order, placed by the interleave policy over their nodes, as
 * comm/repair.c places them): the corrected allreduce, broadcast, reduce
 * and barrier with f = 1 and no failure (the message count equals that of
 * a fresh communicator of the survivors: a world of n - k ranks with the
 * placement a new communicator of those ranks gets), and with each live
 * rank killed before each of its first sends: every live rank completes
 * with the corrected semantics (oracle), no hang, consistent outputs. */
#include "collectives/agree.h"
#include "collectives/repair_rule.h"
#include "collectives/tree_ft.h"
#include "placement/placement.h"
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

#define MAXN     64
#define BM       ((MAXN + 7) / 8)
#define WINDOW   16u
#define PER_NODE 4 /* ranks per simulated node */

typedef struct step {
    int n;
    uint32_t c[MAXN]; /* each rank's next operation number */
    /* The previous epoch (has_prev 0: none). */
    int has_prev, prev_ngone;
    uint8_t prev_gone[BM];
    uint32_t prev_from;
    /* The first live rank's outcome. */
    int have_first, first_k;
    uint8_t first_gone[BM];
    uint32_t first_from;
    uint8_t dead_before[MAXN]; /* dead before the agreement */
    char why[160];
} step_t;

static step_t *cur;
static unsigned long long runs;

static int bm_get(const uint8_t *b, int r)
{
    return coll_repair_bit(b, r);
}

static void fill(void *buf, const coll_args_t *args, int rank, int size)
{
    uint32_t *v = buf;
    (void)args, (void)size;
    coll_repair_contrib(cur->c[rank], WINDOW, v);
    memset(v + COLL_REPAIR_WORDS, 0, sizeof(coll_agree_hdr_t));
}

static int check(const void *buf, const coll_args_t *args, int rank, int size,
                 const uint8_t *dead)
{
    (void)buf, (void)args, (void)rank, (void)size, (void)dead;
    return 1; /* inspect checks */
}

static const coll_oracle_t oracle = {fill, check};

static int bad(int rank, const char *why)
{
    snprintf(cur->why, sizeof(cur->why), "rank %d: %s", rank, why);
    return 0;
}

static int inspect(void *arg, int rank, const void *state, const void *buf,
                   const uint8_t *dead)
{
    step_t *t = arg;
    uint8_t gone[BM] = {0};
    uint32_t from = 0;
    int k = coll_repair_decide(t->n, buf, coll_agree_failed(state),
                               t->has_prev ? t->prev_gone : NULL, t->prev_ngone,
                               t->prev_from, gone, &from);
    if (t->have_first) {
        if (k != t->first_k ||
            (k >= 0 &&
             (from != t->first_from || memcmp(gone, t->first_gone, BM) != 0)))
            return bad(rank, "another epoch than another live rank's");
        return 1;
    }
    t->have_first = 1;
    t->first_k = k;
    if (k < 0) {
        /* No new epoch: only possible when nobody new died before it. */
        for (int r = 0; r < t->n; r++)
            if (t->dead_before[r] && !bm_get(t->prev_gone, r))
                return bad(rank, "a rank dead before the agreement is not "
                                 "excluded");
        return 1;
    }
    memcpy(t->first_gone, gone, BM);
    t->first_from = from;
    const uint8_t *f = coll_agree_failed(state);
    for (int r = 0; r < t->n; r++) {
        if (t->dead_before[r] && !bm_get(gone, r))
            return bad(rank, "a rank dead before the agreement is not "
                             "excluded");
        if (bm_get(gone, r) && !dead[r])
            return bad(rank, "a live rank is excluded");
        if (!bm_get(f, r) && (int32_t)(from - (t->c[r] + WINDOW)) < 0)
            return bad(rank, "the switch is before a contributor's bound");
    }
    if (t->has_prev && (int32_t)(from - t->prev_from) < 0)
        return bad(rank, "epochs out of order");
    return 1;
}

/* One background agreement of a communicator of n ranks: `victims`
 * (count) dead before it, `extra` (-1: none) dying before its k-th send
 * during it. Updates the step's previous epoch. */
static void agree_step(step_t *t, const int *victims, int count, int extra,
                       unsigned k, uint64_t seed)
{
    const coll_op_ops_t *op = coll_op_find("agree", "era");
    simrun_params_t p;
    simrun_fail_t fails[MAXN + 1];
    simrun_result_t res;
    size_t nf = 0;

    assert_non_null(op);
    simrun_params_default(&p, op, t->n);
    p.oracle = &oracle;
    p.len = coll_agree_len(COLL_REPAIR_WORDS);
    p.args.count = p.len;
    p.args.dtype = COLL_DTYPE_UINT8;
    p.sim.seed = seed;
    p.seq = (uint32_t)(0x8000u | (seed & 0x7fff));
    memset(t->dead_before, 0, sizeof(t->dead_before));
    for (int i = 0; i < count; i++) {
        fails[nf++] =
            (simrun_fail_t){SIMRUN_FAIL_BEFORE_OP, victims[i], 0, 0, 0};
        t->dead_before[victims[i]] = 1;
    }
    if (extra >= 0)
        fails[nf++] = (simrun_fail_t){SIMRUN_FAIL_BEFORE_SEND, extra, k, 0, 0};
    p.fails = fails;
    p.nfails = nf;
    p.inspect = inspect;
    p.hook_arg = t;
    /* Each rank at its own point of the sequence. */
    uint64_t x = seed * 2654435761u + 1;
    uint32_t base = (uint32_t)(seed % 1000) * 37u;
    for (int r = 0; r < t->n; r++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        t->c[r] = base + (uint32_t)((x >> 33) % 40);
    }
    t->have_first = 0;
    t->why[0] = 0;
    cur = t;
    assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
    runs++;
    if (res.unfinished || res.data_errors || res.failed_ops ||
        res.inconsistent || res.completed != res.live) {
        fprintf(stderr,
                "n=%d victims=%d extra=%d k=%u: completed %d of %d live, "
                "unfinished %d, errors %d, failed %d, inconsistent %d: %s\n",
                t->n, count, extra, k, res.completed, res.live, res.unfinished,
                res.data_errors, res.failed_ops, res.inconsistent, t->why);
        fail();
    }
    if (t->first_k >= 0) {
        t->has_prev = 1;
        t->prev_ngone = t->first_k;
        memcpy(t->prev_gone, t->first_gone, BM);
        t->prev_from = t->first_from;
    }
}

/* A whole sequence of victims, one agreement after each. */
static void sequence(int n, const int *seq, int len, int extra, uint64_t seed)
{
    step_t t;
    memset(&t, 0, sizeof(t));
    t.n = n;
    for (int i = 1; i <= len; i++) {
        int ex = i == len ? extra : -1;
        agree_step(&t, seq, i, ex, 1 + (unsigned)(seed % 5),
                   seed + (unsigned)i);
        /* The extra victim counts as dead from here on; the next agreement
         * excludes it at the latest. */
    }
}

static void all_sequences(int n, int *seq, int len, int maxlen, uint8_t *used,
                          uint64_t *seed)
{
    if (len > 0) {
        (*seed)++;
        int extra = -1;
        /* Sometimes one more dies during the last agreement. */
        if ((*seed % 3) == 0)
            for (int r = 0; r < n && extra < 0; r++)
                if (!used[(r + (int)*seed) % n])
                    extra = (r + (int)*seed) % n;
        if (extra >= 0 && len + 1 >= n)
            extra = -1; /* someone must live */
        sequence(n, seq, len, extra, *seed);
    }
    if (len == maxlen || len + 1 >= n)
        return;
    for (int v = 0; v < n; v++) {
        if (used[v])
            continue;
        used[v] = 1;
        seq[len] = v;
        all_sequences(n, seq, len + 1, maxlen, used, seed);
        used[v] = 0;
    }
}

static void test_switch_exhaustive(void **state)
{
    (void)state;
    int seq[4];
    uint8_t used[MAXN] = {0};
    uint64_t seed = 1;
    for (int n = 3; n <= 6; n++)
        all_sequences(n, seq, 0, 4, used, &seed);
    all_sequences(8, seq, 0, 3, used, &seed);
    fprintf(stderr, "switch: %llu agreements\n", runs);
}

static void test_switch_random(void **state)
{
    (void)state;
    static const int ns[] = {16, 32, 64};
    uint64_t x = 12345;
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
        for (int trial = 0; trial < 60; trial++) {
            int n = ns[i], seq[4], m = 0;
            uint8_t used[MAXN] = {0};
            while (m < 4) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                int v = (int)((x >> 33) % (uint64_t)n);
                if (!used[v])
                    used[v] = 1, seq[m++] = v;
            }
            int extra = -1;
            for (int v = 0; v < n && trial % 2 == 0 && extra < 0; v++)
                if (!used[(v + trial) % n])
                    extra = (v + trial) % n;
            sequence(n, seq, 4, extra, x >> 20);
        }
    fprintf(stderr, "switch: %llu agreements in all\n", runs);
}

/* ---- the operations in an epoch ----------------------------------------- */

typedef struct epoch_map {
    int m;
    placement_locus_t loci[MAXN];
    int rank_at[MAXN], pos_of[MAXN];
    uint32_t node[MAXN];
    coll_map_t map;
} epoch_map_t;

/* The placement of the live members of a communicator of n (in their old
 * order; `gone` excluded), every PER_NODE consecutive ranks on one node:
 * what comm/repair.c computes, and what a fresh communicator of those
 * ranks gets (comm/create.c). */
static void epoch_place(epoch_map_t *e, int n, const uint8_t *gone)
{
    e->m = 0;
    for (int r = 0; r < n; r++) {
        if (bm_get(gone, r))
            continue;
        e->loci[e->m] = (placement_locus_t){r / PER_NODE, -1, -1, -1};
        e->node[e->m] = (uint32_t)(r / PER_NODE);
        e->m++;
    }
    assert_int_equal(placement_compute(PLACEMENT_INTERLEAVE, e->loci, e->m,
                                       e->rank_at, e->pos_of),
                     UCFT_OK);
    e->map = (coll_map_t){.n = e->m, .rank = e->rank_at, .pos = e->pos_of};
}

/* One more member of n, drawn from *x, into `gone`. */
static void add_victim(uint64_t *x, int n, uint8_t *gone)
{
    int v;
    do {
        *x = *x * 6364136223846793005ull + 1442695040888963407ull;
        v = (int)((*x >> 33) % (uint64_t)n);
    } while (bm_get(gone, v));
    gone[v >> 3] |= (uint8_t)(1u << (v & 7));
}

/* `op` on epoch `e` with f, `nf` deaths in `fail`, on `tree` (NULL: the
 * algorithm's own): every live rank must complete with the oracle's
 * value. */
static simrun_result_t run_op_framed(const coll_op_ops_t *op,
                                     const epoch_map_t *e, int root, int f,
                                     const simrun_fail_t *fail, size_t nf,
                                     const coll_tree_t *tree,
                                     const coll_map_t *frame)
{
    simrun_params_t p;
    simrun_result_t res;
    simrun_params_default(&p, op, e->m);
    p.len = 8 * (size_t)(2 * e->m);
    p.args.f = f;
    p.args.count = 2 * (size_t)e->m;
    p.args.dtype = COLL_DTYPE_INT64;
    p.args.redop = COLL_REDOP_SUM;
    p.args.map = &e->map;
    p.sim.domain = e->node;
    p.root = root;
    p.release_at_done = 1;
    if (strcmp(op->op, "barrier") == 0)
        p.len = 0, p.args.count = 0;
    if (strcmp(op->op, "bcast") == 0)
        p.args.count = p.len;
    p.args.tree = tree;
    p.args.frame = frame;
    p.fails = fail;
    p.nfails = nf;
    assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
    runs++;
    if (res.unfinished || res.data_errors || res.inconsistent ||
        res.failed_ops || res.completed != res.live) {
        fprintf(stderr,
                "%s/%s on %d%s%s, f %d: victims %d (k %u), %d (k %u): "
                "completed %d of %d live, unfinished %d, errors %d, failed "
                "%d, inconsistent %d\n",
                op->op, op->alg, e->m, tree ? " (given tree)" : "",
                frame ? " (framed)" : "", f, nf > 0 ? fail[0].rank : -1,
                nf > 0 ? fail[0].k : 0, nf > 1 ? fail[1].rank : -1,
                nf > 1 ? fail[1].k : 0, res.completed, res.live, res.unfinished,
                res.data_errors, res.failed_ops, res.inconsistent);
        fail();
    }
    return res;
}

static simrun_result_t run_op_on(const coll_op_ops_t *op, const epoch_map_t *e,
                                 int root, int f, const simrun_fail_t *fail,
                                 size_t nf, const coll_tree_t *tree)
{
    return run_op_framed(op, e, root, f, fail, nf, tree, NULL);
}

static simrun_result_t run_op(const coll_op_ops_t *op, const epoch_map_t *e,
                              int root, const simrun_fail_t *fail)
{
    return run_op_on(op, e, root, 1, fail, fail != NULL, NULL);
}

static void test_epoch_ops(void **state)
{
    (void)state;
    static const char *const ops[][2] = {{"allreduce", "corrected"},
                                         {"bcast", "corrected"},
                                         {"reduce", "corrected"},
                                         {"barrier", "corrected"}};
    static const int ns[] = {4, 7, 12, 16, 33, 64};
    uint64_t x = 777;
    unsigned long long before = runs;
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        int n = ns[i];
        uint8_t gone[BM] = {0};
        for (int k = 0; k <= 4 && k < n - 2; k++) {
            if (k > 0) /* one more victim, spaced */
                add_victim(&x, n, gone);
            epoch_map_t e, fresh;
            epoch_place(&e, n, gone);
            /* A fresh communicator of the survivors: their job ranks in
             * order, the same nodes. */
            epoch_place(&fresh, n, gone);
            for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
                const coll_op_ops_t *op = coll_op_find(ops[o][0], ops[o][1]);
                assert_non_null(op);
                int root = (int)(x % (uint64_t)e.m);
                simrun_result_t a = run_op(op, &e, root, NULL);
                simrun_result_t b = run_op(op, &fresh, root, NULL);
                assert_int_equal(a.stats.messages, b.stats.messages);
                assert_int_equal(a.stats.cross_domain, b.stats.cross_domain);
                /* Every live rank, before each of its first sends (all
                 * of them up to 16 ranks, a stride beyond). */
                int stride = e.m <= 16 ? 1 : e.m / 8;
                for (int v = 0; v < e.m; v += stride)
                    for (unsigned s = 1; s <= 6; s++) {
                        simrun_fail_t f = {SIMRUN_FAIL_BEFORE_SEND, v, s, 0, 0};
                        if (v == root && strcmp(op->op, "allreduce") != 0 &&
                            strcmp(op->op, "barrier") != 0)
                            continue; /* a rooted op's root: nothing to
                                         correct */
                        run_op(op, &e, root, &f);
                    }
            }
        }
    }
    fprintf(stderr, "epoch operations: %llu runs\n", runs - before);
}

/* ---- the binomial barrier on rerouted and rebalanced trees --------------- */

static int depth_of(const coll_tree_t *t, int r)
{
    int d = 0;
    while (t->parent[r] >= 0 && d <= t->n)
        r = t->parent[r], d++;
    return d;
}

static void test_tree_designs(void **state)
{
    (void)state;
    const coll_op_ops_t *op = coll_op_find("barrier", "binomial");
    assert_non_null(op);
    uint64_t x = 99;
    for (int n = 1; n <= 64; n++)
        for (int trial = 0; trial < 12; trial++) {
            uint8_t dead[MAXN] = {0};
            int known[MAXN], k = 0;
            int want = n == 1 ? 0 : (int)((x >> 40) % (uint64_t)n);
            while (k < want) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                int v = (int)((x >> 33) % (uint64_t)n);
                if (v != 0 && !dead[v])
                    dead[v] = 1, known[k++] = v;
            }
            int m = n - k, maxd = 0;
            while ((1 << maxd) < m)
                maxd++;
            for (int design = 0; design < 2; design++) {
                coll_tree_t t;
                assert_int_equal(coll_tree_build(&t, n, dead, 0, design), 0);
                /* Every live rank but the root has a live parent that lists
                 * it exactly once; the failed ranks are nowhere. */
                int seen[MAXN] = {0};
                for (int r = 0; r < n; r++)
                    for (int i = t.first[r]; i < t.first[r + 1]; i++) {
                        int c = t.child[i];
                        assert_false(dead[c]);
                        assert_false(dead[r]);
                        assert_int_equal(t.parent[c], r);
                        seen[c]++;
                    }
                for (int r = 0; r < n; r++) {
                    assert_int_equal(seen[r], dead[r] || r == t.root ? 0 : 1);
                    if (design == COLL_TREE_REBALANCE && !dead[r])
                        assert_true(depth_of(&t, r) <= maxd);
                }
                /* Over placement positions (a reversed map: rank r at
                 * position n - 1 - r): the same tree, relabelled. */
                int rank_at[MAXN], pos_of[MAXN];
                uint8_t dead_r[MAXN];
                for (int q = 0; q < n; q++) {
                    rank_at[q] = pos_of[q] = n - 1 - q;
                    dead_r[n - 1 - q] = dead[q];
                }
                coll_tree_t tp = {0};
                assert_int_equal(coll_tree_build_placed(&tp, n, dead_r, n - 1,
                                                        design, rank_at,
                                                        pos_of),
                                 0);
                assert_int_equal(tp.root, n - 1 - t.root);
                for (int r = 0; r < n; r++) {
                    int q = n - 1 - r, pq = t.parent[q];
                    assert_int_equal(tp.parent[r], pq < 0 ? -1 : n - 1 - pq);
                    assert_int_equal(coll_tree_nkids(&tp, r),
                                     coll_tree_nkids(&t, q));
                    for (int i = 0; i < coll_tree_nkids(&t, q); i++)
                        assert_int_equal(coll_tree_kid(&tp, r, i),
                                         n - 1 - coll_tree_kid(&t, q, i));
                }
                coll_tree_free(&tp);
                /* The barrier on it: every live rank completes, one message
                 * up and one down per edge. */
                simrun_params_t p;
                simrun_result_t res;
                simrun_params_default(&p, op, n);
                p.len = 0;
                p.args.tree = &t;
                p.known_dead = known;
                p.nknown_dead = (size_t)k;
                assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
                runs++;
                assert_int_equal(res.completed, m);
                assert_int_equal(res.unfinished, 0);
                assert_int_equal(res.stats.messages, 2 * (uint64_t)(m - 1));
                coll_tree_free(&t);
            }
        }
}

/* The binomial broadcast, reduce and barrier (the algorithms that take a
 * rerouted tree, UCFT_TREE_REPAIR=reroute|lookup) on the plain binomial
 * tree and on a tree rerouted around one rank known dead (the barrier's
 * root too: its tree is then rooted at the lowest live rank), with one
 * more rank dying before the operation or before each of its first three
 * sends: fault-aware, so every live rank ends (none waits for ever); and
 * with no further death every live rank completes. */
static void test_binomial_failures(void **state)
{
    (void)state;
    static const char *const ops[] = {"barrier", "bcast", "reduce"};
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        const coll_op_ops_t *op = coll_op_find(ops[o], "binomial");
        assert_non_null(op);
        for (int n = 2; n <= 20; n++)
            for (int gone = -1; gone < n; gone += 3) /* -1: no tree */
                for (int a = -1; a < n; a++)         /* -1: nobody dies */
                    for (unsigned k = 0; k <= (a < 0 ? 0u : 3u); k++) {
                        int root = o == 0 ? 0 : (n / 2 == a ? 0 : n / 2);
                        if (a == gone || (o > 0 && gone >= 0 && root == gone) ||
                            (a == root && o > 0))
                            continue;
                        uint8_t dead[MAXN] = {0};
                        coll_tree_t t = {0};
                        if (gone >= 0) {
                            dead[gone] = 1;
                            assert_int_equal(coll_tree_build(&t, n, dead, root,
                                                             COLL_TREE_REROUTE),
                                             0);
                        }
                        simrun_fail_t fl = {.kind = k ? SIMRUN_FAIL_BEFORE_SEND
                                                      : SIMRUN_FAIL_BEFORE_OP,
                                            .rank = a,
                                            .k = k};
                        simrun_params_t p;
                        simrun_result_t res;
                        simrun_params_default(&p, op, n);
                        p.len = o == 0 ? 0 : 8;
                        p.root = gone >= 0 ? t.root : root;
                        p.args.tree = gone >= 0 ? &t : NULL;
                        p.known_dead = gone >= 0 ? &gone : NULL;
                        p.nknown_dead = gone >= 0 ? 1 : 0;
                        p.fails = a >= 0 ? &fl : NULL;
                        p.nfails = a >= 0 ? 1 : 0;
                        assert_int_equal(simrun_run(&p, &res, NULL), UCFT_OK);
                        runs++;
                        if (res.unfinished != 0)
                            fail_msg("%s n %d gone %d victim %d k %u: %d "
                                     "live ranks never ended",
                                     ops[o], n, gone, a, k, res.unfinished);
                        assert_int_equal(res.data_errors, 0);
                        assert_int_equal(res.completed + res.failed_ops,
                                         res.live);
                        if (a < 0)
                            assert_int_equal(res.completed, res.live);
                        coll_tree_free(&t);
                    }
    }
}

/* f = 2: every pair of live ranks (but the root when `spare_root`), each
 * killed before the operation or before one of its first 2 sends. */
static void pairs_f2(const coll_op_ops_t *op, const epoch_map_t *e, int root,
                     int spare_root, const coll_tree_t *tree,
                     const coll_map_t *frame)
{
    for (int w = 0; w < e->m; w++)
        for (int u = w + 1; u < e->m; u++)
            for (unsigned sw = 0; sw <= 2; sw++)
                for (unsigned su = 0; su <= 2; su++) {
                    if (spare_root && (w == root || u == root))
                        continue;
                    simrun_fail_t two[2] = {
                        {sw ? SIMRUN_FAIL_BEFORE_SEND : SIMRUN_FAIL_BEFORE_OP,
                         w, sw, 0, 0},
                        {su ? SIMRUN_FAIL_BEFORE_SEND : SIMRUN_FAIL_BEFORE_OP,
                         u, su, 0, 0}};
                    run_op_framed(op, e, root, 2, two, 2, tree, frame);
                }
}

/* The corrected broadcasts on rerouted trees (UCFT_TREE_REPAIR=reroute|
 * lookup, comm/repair_tree.c): in each epoch of a communicator that loses
 * up to 4 ranks one at a time, the original binomial tree over the
 * original placement, rerouted around the excluded members and projected
 * onto the epoch's dense ranks, and the correction ring in the original
 * placement order with the excluded members skipped (the rerouted ring;
 * the rebalanced one: the epoch's placement recomputed). Failure-free: every
 * live rank completes, with as many messages as the same algorithm on the
 * rebalanced tree (one tree message per live rank but the root, and the
 * corrections, which do not depend on the tree). Then each live rank but the
 * root killed before each of its first 6 sends (f = 1), and, up to 16
 * survivors, every pair of them killed before the operation or before one of
 * their first two sends (f = 2): every live rank completes with the root's data
 * (oracle), none hangs. The opportunistic broadcast takes no given tree: its
 * window assumes the interleaved binomial tree over the ring's own order, and
 * on a rerouted tree this sweep left a live rank waiting for ever (n = 7, one
 * excluded, victim 5 before its first send). */
static void test_corrected_bcast_rerouted(void **state)
{
    (void)state;
    static const char *const algs[] = {"corrected", "corrected-failproof"};
    static const int ns[] = {4, 7, 12, 16, 33, 64};
    uint64_t x = 4242;
    unsigned long long before = runs;
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        int n = ns[i];
        uint8_t gone[BM] = {0}, none[BM] = {0};
        epoch_map_t orig;
        epoch_place(&orig, n, none);
        for (int k = 1; k <= 4 && k < n - 2; k++) {
            add_victim(&x, n, gone);
            epoch_map_t e;
            epoch_place(&e, n, gone);
            int live[MAXN], dense[MAXN], m = 0;
            uint8_t dead[MAXN];
            for (int r = 0; r < n; r++) {
                dead[r] = (uint8_t)bm_get(gone, r);
                dense[r] = dead[r] ? -1 : m;
                if (!dead[r])
                    live[m++] = r;
            }
            assert_int_equal(m, e.m);
            /* The rerouted ring: the survivors in their original
             * placement order (comm/repair_tree.c's order). */
            epoch_map_t o = e;
            for (int p = 0, j = 0; p < n; p++) {
                int d = dense[orig.rank_at[p]];
                if (d >= 0) {
                    o.rank_at[j] = d;
                    o.pos_of[d] = j++;
                }
            }
            o.map = (coll_map_t){.n = m, .rank = o.rank_at, .pos = o.pos_of};
            for (int rr = 0; rr < 3; rr++) {
                int root = (int)((x >> (8 * rr)) % (uint64_t)m);
                coll_tree_t full = {0}, t = {0};
                assert_int_equal(
                    coll_tree_build_placed(&full, n, dead, live[root],
                                           COLL_TREE_REROUTE, orig.rank_at,
                                           orig.pos_of),
                    0);
                assert_int_equal(coll_tree_project(&full, m, live, dense, &t),
                                 0);
                assert_int_equal(t.root, root);
                for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
                    const coll_op_ops_t *op = coll_op_find("bcast", algs[a]);
                    assert_non_null(op);
                    assert_true(op->takes_tree);
                    simrun_result_t on =
                        run_op_on(op, &o, root, 1, NULL, 0, &t);
                    simrun_result_t rb =
                        run_op_on(op, &e, root, 1, NULL, 0, NULL);
                    if (on.stats.messages != rb.stats.messages)
                        fail_msg("%s n %d k %d root %d: %llu messages on the "
                                 "rerouted tree, %llu on the rebalanced one",
                                 algs[a], n, k, root,
                                 (unsigned long long)on.stats.messages,
                                 (unsigned long long)rb.stats.messages);
                    int stride = m <= 16 ? 1 : m / 8;
                    for (int w = 0; w < m; w += stride)
                        for (unsigned s = 1; s <= 6; s++) {
                            simrun_fail_t f = {SIMRUN_FAIL_BEFORE_SEND, w, s, 0,
                                               0};
                            if (w != root)
                                run_op_on(op, &o, root, 1, &f, 1, &t);
                        }
                    /* f = 2 (up to 16 survivors, the first root): every
                     * pair of live ranks but the root, each killed before
                     * the operation or before one of its first 2 sends. */
                    if (m <= 16 && rr == 0)
                        pairs_f2(op, &o, root, 1, &t, NULL);
                }
                coll_tree_free(&full);
                coll_tree_free(&t);
            }
        }
    }
    assert_false(coll_op_find("bcast", "corrected-opportunistic")->takes_tree);
    fprintf(stderr, "corrected broadcasts on rerouted trees: %llu runs\n",
            runs - before);
}

/* Failure-free messages of the corrected reduce around holes
 * (reduce_corrected_holes.c), f = 1: in each original group of two (the
 * root's position 0 in no group), its live members' exchange, plus one
 * message to the root from each live member of a group with a hole; and
 * one tree message per live rank but the root. `hole[v]` over the
 * original vranks of the operation's root. */
static unsigned long long holed_reduce_messages(int n, const uint8_t *hole)
{
    unsigned long long msgs = 0;
    int m = 0;
    for (int v = 0; v < n; v++)
        m += !hole[v];
    for (int g = 0; 2 * g + 1 < n; g++) {
        int a = 2 * g + 1, b = 2 * g + 2, live = 0, holed = 0;
        live += !hole[a];
        if (b < n)
            live += !hole[b];
        holed = hole[a] || b >= n || hole[b];
        msgs += (unsigned long long)(live * (live - 1)) +
                (holed ? (unsigned long long)live : 0);
    }
    return msgs + (unsigned long long)(m - 1);
}

/* The corrected reduce, allreduce and barrier around holes
 * (UCFT_TREE_REPAIR=reroute|lookup: args->frame, the communicator's
 * original placement with the excluded members' positions empty): in
 * each epoch of a communicator that loses up to 4 ranks one at a time,
 * three roots. Failure-free, every live rank completes with the oracle's
 * value, and the reduce sends exactly the messages of the rerouted
 * structure (holed_reduce_messages). Then each live rank (a stride above
 * 16) killed before each of its first 6 sends, f = 1 (the root too, for
 * the allreduce and the barrier), and up to 16 survivors every pair
 * killed before the operation or one of their first 2 sends, f = 2:
 * every live rank completes with the corrected semantics (oracle), none
 * hangs, the outputs agree. */
static void test_corrected_reduce_rerouted(void **state)
{
    (void)state;
    static const char *const ops[][2] = {
        {"reduce", "corrected"},    {"reduce", "corrected-countbit"},
        {"allreduce", "corrected"}, {"allreduce", "corrected-bit"},
        {"barrier", "corrected"},
    };
    static const int ns[] = {4, 7, 12, 16, 33, 64};
    uint64_t x = 9191;
    unsigned long long before = runs;
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        int n = ns[i];
        uint8_t gone[BM] = {0}, none[BM] = {0};
        epoch_map_t orig;
        epoch_place(&orig, n, none);
        for (int k = 1; k <= 4 && k < n - 2; k++) {
            add_victim(&x, n, gone);
            epoch_map_t e;
            epoch_place(&e, n, gone);
            int dense[MAXN], frank[MAXN], fpos[MAXN], m = 0;
            for (int r = 0; r < n; r++)
                dense[r] = bm_get(gone, r) ? -1 : m++;
            for (int p = 0; p < n; p++) {
                int d = dense[orig.rank_at[p]];
                frank[p] = d;
                if (d >= 0)
                    fpos[d] = p;
            }
            coll_map_t frame = {.n = n, .rank = frank, .pos = fpos};
            for (int rr = 0; rr < 3; rr++) {
                int root = (int)((x >> (8 * rr)) % (uint64_t)m);
                uint8_t hole[MAXN];
                for (int v = 0; v < n; v++)
                    hole[v] = frank[(v + fpos[root]) % n] < 0;
                for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
                    const coll_op_ops_t *op =
                        coll_op_find(ops[o][0], ops[o][1]);
                    assert_non_null(op);
                    assert_true(op->takes_frame);
                    int rooted = strcmp(op->op, "reduce") == 0;
                    simrun_result_t a =
                        run_op_framed(op, &e, root, 1, NULL, 0, NULL, &frame);
                    if (rooted &&
                        a.stats.messages != holed_reduce_messages(n, hole))
                        fail_msg("%s/%s n %d k %d root %d: %llu messages, "
                                 "%llu expected",
                                 op->op, op->alg, n, k, root,
                                 (unsigned long long)a.stats.messages,
                                 holed_reduce_messages(n, hole));
                    int stride = m <= 16 ? 1 : m / 8;
                    for (int w = 0; w < m; w += stride)
                        for (unsigned s = 1; s <= 6; s++) {
                            simrun_fail_t f = {SIMRUN_FAIL_BEFORE_SEND, w, s, 0,
                                               0};
                            if (w != root || !rooted)
                                run_op_framed(op, &e, root, 1, &f, 1, NULL,
                                              &frame);
                        }
                    if (m <= 16 && rr == 0)
                        pairs_f2(op, &e, root, rooted, NULL, &frame);
                }
            }
        }
    }
    fprintf(stderr, "corrected reduce family around holes: %llu runs\n",
            runs - before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switch_exhaustive),
        cmocka_unit_test(test_switch_random),
        cmocka_unit_test(test_epoch_ops),
        cmocka_unit_test(test_tree_designs),
        cmocka_unit_test(test_binomial_failures),
        cmocka_unit_test(test_corrected_bcast_rerouted),
        cmocka_unit_test(test_corrected_reduce_rerouted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
