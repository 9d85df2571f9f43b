/* Shared helpers of the corrected-broadcast sim tests. */
#ifndef UCFT_TEST_BCAST_CORRECTED_UTIL_H
#define UCFT_TEST_BCAST_CORRECTED_UTIL_H

#include "collectives/bcast_corrected_impl.h"
#include "collectives/tree_binomial.h"
#include "collectives/tree_kary.h"
#include "collectives/tree_lame.h"
#include "simrun/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The registered variants and what the tests need to know of them. */
typedef struct bct_variant {
    const char *alg;
    int tree; /* 0 binomial, 1 k-ary, 2 Lamé */
    unsigned k;
    int window;  /* opportunistic */
    int h_f1;    /* failure-proof: h = f + 1 */
    int batched; /* batched copies: the root never holds for one */
} bct_variant_t;

static const bct_variant_t bct_variants[] = {
    {"corrected", 0, 0, 0, 0, 0},
    {"corrected-opportunistic", 0, 0, 1, 0, 0},
    {"corrected-batched", 0, 0, 1, 0, 1},
    {"corrected-failproof", 0, 0, 0, 1, 0},
    {"corrected-kary", 1, 4, 0, 0, 0},
    {"corrected-lame", 2, 2, 0, 0, 0},
};
#define BCT_NVARIANTS (sizeof(bct_variants) / sizeof(bct_variants[0]))

static inline const coll_op_ops_t *bct_op(const bct_variant_t *v)
{
    const coll_op_ops_t *op = coll_op_find("bcast", v->alg);
    assert_non_null(op);
    return op;
}

static inline unsigned bct_nchildren(const bct_variant_t *var, int v, int n)
{
    unsigned c = 0;
    for (;; c++) {
        int x = var->tree == 1   ? coll_kary_child(v, c, n, var->k)
                : var->tree == 2 ? coll_lame_child(v, c, n, var->k)
                                 : coll_binomial_child(v, c, n);
        if (x < 0)
            return c;
    }
}

/* The instance number of a test run (bct_run_mode). */
static inline uint32_t bct_seq(int n, int root)
{
    return (uint32_t)(n * 7 + root);
}

static inline int bct_parent(const bct_variant_t *var, int v)
{
    return var->tree == 1   ? coll_kary_parent(v, var->k)
           : var->tree == 2 ? coll_lame_parent(v, var->k)
                            : coll_binomial_parent(v);
}

/* Corrections that vrank v sends without failures; none with two ranks
 * (the tree message is all there is to deliver), never more offsets than
 * the ring has. Checked and failure-proof: h per side. Opportunistic:
 * offsets 1..d - d/2 rightwards and 1..d/2 leftwards (d = 2^f - 1),
 * alternating, right first, none to a child of the root nor, but in one
 * instance of BC_HOLD_EVERY (never for the batched variant), to the root
 * (for
 * f > 1 at most that many: a heard correction may cover offsets). */
static inline unsigned bct_corrections_of(const bct_variant_t *var, int v,
                                          int n, int f, int root)
{
    if (n <= 2)
        return 0;
    if (!var->window) {
        /* h: failure-proof f + 1; checked 1, ceil(f / 2) from f = 3 on. */
        unsigned h = var->h_f1 ? (unsigned)f + 1
                     : f <= 2  ? 1u
                               : (unsigned)(f + 1) / 2;
        unsigned c = 2 * h;
        return n - 1 < (int)c ? (unsigned)(n - 1) : c;
    }
    unsigned d = (1u << f) - 1, w[2] = {d - d / 2, d / 2}, next[2] = {1, 1};
    unsigned c = 0;
    for (int turn = 0;;) {
        int sent = 0;
        for (int i = 0; i < 2 && !sent; i++) {
            int side = turn ^ i;
            for (;;) {
                int t =
                    side == 0
                        ? (int)((v + next[side]) % (unsigned)n)
                        : (int)((v - (int)(next[side] % (unsigned)n) + n) % n);
                if (next[side] > w[side] ||
                    next[0] - 1 + next[1] - 1 >= (unsigned)n - 1)
                    break;
                next[side]++;
                if (t == 0 ? !var->batched && bc_hold(bct_seq(n, root))
                           : bct_parent(var, t) != 0) {
                    c++;
                    sent = 1;
                    turn = side ^ 1;
                    break;
                }
            }
        }
        if (!sent)
            return c;
    }
}

static inline uint64_t bct_messages(const bct_variant_t *var, int n, int f,
                                    int root)
{
    uint64_t m = n <= 1 ? 0 : (uint64_t)(n - 1);
    for (int v = 0; v < n; v++)
        m += bct_corrections_of(var, v, n, f, root);
    return m;
}

/* lazy: copies by rendezvous (args.rndv_min), on a sim that models it
 * (sim.rndv_min), with states released at completion and late messages
 * swept, as in the runtime. spread > 0: staggered starts over [0, spread]
 * ns, deaths detected spread / 4 after they happen. */
static inline void bct_run_mode(const bct_variant_t *var, int n, int root,
                                int f, const simrun_fail_t *fails,
                                size_t nfails, simrun_result_t *r, uint8_t *ok,
                                int lazy, uint64_t spread)
{
    simrun_params_t p;
    simrun_params_default(&p, bct_op(var), n);
    p.root = root;
    p.len = 8;
    p.seq = bct_seq(n, root);
    p.args.f = f;
    p.fails = fails;
    p.nfails = nfails;
    p.max_events = 50000000;
    if (spread > 0) {
        p.start_spread_ns = spread;
        p.sim.detect_delay_ns = spread / 4;
        p.sim.seed = (uint64_t)n * 7919u + (uint64_t)root + spread;
    }
    if (lazy) {
        p.args.rndv_min = 1;
        p.sim.rndv_min = 1;
        p.release_at_done = 1;
    }
    assert_int_equal(simrun_run(&p, r, ok), UCFT_OK);
    assert_int_equal(r->bounded, 0);
}

static inline void bct_run(const bct_variant_t *var, int n, int root, int f,
                           const simrun_fail_t *fails, size_t nfails,
                           simrun_result_t *r, uint8_t *ok)
{
    bct_run_mode(var, n, root, f, fails, nfails, r, ok, 0, 0);
}

/* The root is alive: every live rank completes with the root's data. */
static inline void bct_assert_delivered(const simrun_result_t *r)
{
    if (r->completed != r->live || r->unfinished || r->data_errors ||
        r->failed_ops)
        fail_msg("live %d completed %d unfinished %d failed %d data_errors %d",
                 r->live, r->completed, r->unfinished, r->failed_ops,
                 r->data_errors);
}

/* Anything goes but a hang or wrong data. */
static inline void bct_assert_ended(const simrun_result_t *r)
{
    if (r->unfinished || r->data_errors)
        fail_msg("live %d completed %d unfinished %d failed %d data_errors %d",
                 r->live, r->completed, r->unfinished, r->failed_ops,
                 r->data_errors);
}

#endif
