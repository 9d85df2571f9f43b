/* Payload checksums (collectives/coll_csum.h) on the sim, the same filter
 * as UCFT_CHECKSUM=y in real jobs: one flipped bit in each message of the
 * root and of ranks 0, 1 and n - 1 in turn (n = 5 and 8), for every
 * registered collective algorithm, with the checksums off and on. With
 * them on, every flip is caught and:
 *   - the baselines (binomial broadcast, ring exchange, the rings,
 *     binomial reduce, recursive doubling and exchange, linear) end every
 *     rank, exact or with UCFT_ERR_PROC_FAILED, nothing left pending
 *     (without the checksums the same flips deliver wrong results: they
 *     hit);
 *   - the gossip flow algorithms (pf, pflc, pfcc, hpflc) deliver within
 *     eps at every rank; the push-sum ones (ps, hps, ardb) end everywhere
 *     but lose the message's mass;
 *   - the corrected algorithms and the agreement: the flipped message's
 *     sender is accused and dies (coll_csum_on_corrupt, as the runtime's
 *     detector declares and fences it); every live rank ends, with the
 *     corrected semantics' result (no wrong or differing output) or an
 *     error; none waits. */
#include "collectives/agree.h"
#include "collectives/coll_csum.h"
#include "collectives/coll_op.h"
#include "collectives/gossip.h"
#include "simrun/simrun.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What a flipped message caught by the checksums does, by algorithm. */
enum expect {
    DELIVER, /* every rank within eps / exact: the gossip flow algorithms */
    END,     /* every rank ends, exact or UCFT_ERR_PROC_FAILED: baselines */
    MASS,    /* every rank ends; the message's mass is lost (push-sum) */
    ACCUSE,  /* corrected algorithms: the sender dies; every live rank
                ends with their semantics' result or an error */
};

static enum expect expect_of(const coll_op_ops_t *o)
{
    if (strcmp(o->op, "allreduce_approx") == 0)
        return strcmp(o->alg, "ps") == 0 || strcmp(o->alg, "hps") == 0 ||
                       strcmp(o->alg, "ardb") == 0
                   ? MASS
                   : DELIVER;
    if (strstr(o->alg, "corrected") != NULL || strcmp(o->op, "agree") == 0)
        return ACCUSE;
    return END;
}

/* The run of o on n ranks, bit `bit` of rank `r`'s message k flipped. */
static void setup(simrun_params_t *p, coll_gossip_params_t *g,
                  const coll_op_ops_t *o, int n)
{
    simrun_params_default(p, o, n);
    p->max_events = 20u * 1000 * 1000;
    p->checksum = 1;
    if (strcmp(o->op, "allreduce_approx") == 0) {
        memset(g, 0, sizeof(*g));
        g->eps = 1e-6;
        g->seed = 3;
        g->rounds = 120; /* room to recover */
        p->args.dtype = COLL_DTYPE_DOUBLE;
        p->args.redop = COLL_REDOP_SUM;
        p->args.count = 2;
        p->len = 16;
        p->args.gossip = g;
        return;
    }
    if (strcmp(o->op, "agree") == 0) {
        p->len = sizeof(coll_agree_hdr_t) + 2 * sizeof(uint32_t);
        return;
    }
    if (strcmp(o->op, "barrier") == 0) {
        p->len = 0;
        return;
    }
    p->args.dtype = COLL_DTYPE_INT64;
    p->args.redop = COLL_REDOP_SUM;
    p->args.count = (size_t)n * 2;
    p->len = (size_t)n * 16 + (strcmp(o->op, "allgather") == 0 ? (size_t)n : 0);
    p->root = n > 2 ? 2 : 0;
}

/* Every flip of bit `bit` of every message (k = 1, 2, ... until the rank
 * sends no k-th message) of the root, ranks 0, 1 and n - 1, with the
 * checksums on. Returns the number of runs in which a flip hit; *wrong:
 * of these, the runs that delivered a wrong result at some rank with the
 * checksums off. */
static unsigned bad_runs;

static unsigned sweep(const coll_op_ops_t *o, int n, int bit, unsigned *wrong,
                      unsigned *accused)
{
    enum expect e = expect_of(o);
    const int ranks[] = {0, 1, n - 1, n > 2 ? 2 : 0};
    unsigned hits = 0;
    for (size_t i = 0; i < 4; i++) {
        /* Gossip: every 7th of its 120 messages per rank. */
        unsigned step = strcmp(o->op, "allreduce_approx") == 0 ? 7 : 1;
        for (unsigned k = 1; k <= 400; k += step) {
            simrun_params_t p;
            coll_gossip_params_t g;
            coll_flip_params_t f = {.bit = bit, .msg = k};
            simrun_result_t r;
            setup(&p, &g, o, n);
            p.flip = &f;
            p.flip_rank = ranks[i];
            p.checksum = 0;
            ucft_status_t st = simrun_run(&p, &r, NULL);
            if (st == UCFT_OK && r.flips > 0 &&
                r.data_errors + r.inconsistent > 0)
                ++*wrong;
            p.checksum = 1;
            st = simrun_run(&p, &r, NULL);
            if (st != UCFT_OK)
                fail_msg("%s %s n=%d: simrun_run %s", o->op, o->alg, n,
                         ucft_status_string(st));
            if (e == ACCUSE && r.live < n)
                ++*accused;
            if (r.bounded || r.unfinished != 0 || r.not_idle != 0 ||
                (e != MASS && (r.data_errors != 0 || r.inconsistent != 0)) ||
                (e == DELIVER && r.completed != r.live) ||
                (e != DELIVER && r.completed + r.failed_ops != r.live) ||
                (e != ACCUSE && r.live != n) || r.csum_dropped > r.flips) {
                bad_runs++;
                print_message(
                    "%s %s n=%d, bit %d of rank %d's message %u: %d of "
                    "%d live delivered, %d failed, %d wrong, %d "
                    "inconsistent, %d unfinished, %d not idle, %u "
                    "flipped, %llu caught%s",
                    o->op, o->alg, n, bit, ranks[i], k, r.completed, r.live,
                    r.failed_ops, r.data_errors, r.inconsistent, r.unfinished,
                    r.not_idle, r.flips, (unsigned long long)r.csum_dropped,
                    r.bounded ? " (bounded)" : "");
                break;
            }
            if (r.flips == 0)
                break; /* the rank sent fewer than k messages */
            hits++;
        }
    }
    return hits;
}

static void test_csum_every_alg_every_message(void **state)
{
    (void)state;
    for (size_t i = 0; coll_op_table[i] != NULL; i++) {
        const coll_op_ops_t *o = coll_op_table[i];
        int gossip = strcmp(o->op, "allreduce_approx") == 0;
        /* Gossip: the flows' bit 0 would stay within eps unchecked; the
         * others: bit 3 of an int64 or of a byte pattern. */
        unsigned hits = 0, wrong = 0, accused = 0;
        const int sizes[] = {5, 8};
        for (size_t s = 0; s < 2; s++)
            hits += sweep(o, sizes[s], gossip ? 62 : 3, &wrong, &accused);
        /* The flips hit: the baselines deliver wrong results without the
         * checksums (some corrected algorithms mask a flipped copy). */
        if (strcmp(o->op, "barrier") != 0 &&
            (hits == 0 || (expect_of(o) == END && wrong == 0)))
            fail_msg("%s %s: %u flips hit a message, %u of them gave a "
                     "wrong result without the checksums",
                     o->op, o->alg, hits, wrong);
        print_message("%-16s %-24s %4u flips caught (%3u wrong without), "
                      "%3u cost their sender\n",
                      o->op, o->alg, hits, wrong, accused);
    }
    assert_int_equal(bad_runs, 0);
}

/* The flips of the real jobs it.gossip.corrected.checksum and
 * it.gossip.cring.checksum: bit 62 of rank 0's first corrected-allreduce
 * message (rank 0 is accused and dies; the 3 others deliver the corrected
 * semantics' sum, the same at each), and of each of the 6 messages rank 0
 * sends in the corrected ring's ring phase (n = 4; the ring fails, its
 * corrected fallback delivers the exact sum at every rank, nobody dies). */
static void test_csum_corrected_exact(void **state)
{
    (void)state;
    for (unsigned k = 1; k <= 7; k++) {
        const coll_op_ops_t *o =
            coll_op_find("allreduce", k == 7 ? "corrected" : "corrected-ring");
        simrun_params_t p;
        coll_gossip_params_t g;
        coll_flip_params_t f = {.bit = 62, .msg = k == 7 ? 1 : k};
        simrun_result_t r;
        assert_non_null(o);
        setup(&p, &g, o, 4);
        p.flip = &f;
        p.flip_rank = 0;
        assert_int_equal(simrun_run(&p, &r, NULL), UCFT_OK);
        int want = k == 7 ? 3 : 4;
        if (r.flips != 1 || r.csum_dropped != 1 || r.live != want ||
            r.completed != want || r.data_errors != 0 || r.inconsistent != 0)
            fail_msg("allreduce %s, message %u: %u flipped, %llu caught, %d "
                     "of %d live delivered, %d wrong, %d inconsistent",
                     o->alg, f.msg, r.flips, (unsigned long long)r.csum_dropped,
                     r.completed, r.live, r.data_errors, r.inconsistent);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csum_every_alg_every_message),
        cmocka_unit_test(test_csum_corrected_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
