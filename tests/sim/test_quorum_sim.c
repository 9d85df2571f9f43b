/*
 * The majority rule (runtime/quorum.h) on top of the real failure detector
 * (runtime/detector) on the simulated transport: for every split of a job
 * of 2 to 8 ranks into two sides, at several moments, all messages between
 * the sides vanish from then on (a partition: no error, no notice). Each
 * rank's detector feeds its own quorum; a rank that loses it, or that
 * learns it was declared, fences (the sim kills it). After 6 s of
 * simulated time: the side with a strict majority (in a tie, the half with
 * rank 0) is whole and alive, every rank of the other side has fenced,
 * and no rank of the winning side was declared by one of its own. With one rank
 * killed before the partition (the membership stays the world:
 * UCFT_QUORUM_SETTLE 0), at most one side is left: never both.
 */
#include "runtime/detector/detector.h"
#include "runtime/quorum.h"
#include "transport/sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MS   1000000ull
#define MAXN 8

typedef struct world world_t;
typedef struct rank_ctx {
    world_t *w;
    int rank;
} rank_ctx_t;

struct world {
    sim_world_t *sim;
    int n;
    det_t *det[MAXN];
    rt_quorum_t q[MAXN];
    rank_ctx_t ctx[MAXN];
    int fenced[MAXN];
    unsigned side_a;     /* bit mask: the partition's first side */
    unsigned win;        /* the side that must go on */
    int cut;             /* the partition is in place */
    int declared_within; /* a rank declared by a rank of its own side */
};

static int same_side(const world_t *w, int a, int b)
{
    return ((w->side_a >> a) & 1) == ((w->side_a >> b) & 1);
}

static void failed_cb(void *arg, int rank, uint64_t epoch, det_why_t why)
{
    rank_ctx_t *c = arg;
    world_t *w = c->w;

    if (w->cut && same_side(w, c->rank, rank) && (w->win >> rank & 1) &&
        !sim_world_is_dead(w->sim, rank))
        w->declared_within++; /* a false suspicion on the winning side */
    if (w->fenced[c->rank])
        return;
    if (!rt_quorum_on_failed(&w->q[c->rank], rank, sim_world_now(w->sim))) {
        w->fenced[c->rank] = 1;
        sim_world_kill(w->sim, c->rank);
    }
}

static void self_cb(void *arg)
{
    rank_ctx_t *c = arg;
    c->w->fenced[c->rank] = 1;
    sim_world_kill(c->w->sim, c->rank);
}

/* Runs one job of n ranks: `prior` (-1: none) killed at 1.2 s, the
 * partition side_a / the rest at `at`; returns the mask of ranks alive and
 * not fenced at 6 s. */
static unsigned run(int n, unsigned side_a, unsigned win, uint64_t at,
                    int prior, int *declared_within)
{
    world_t w;
    sim_params_t sp;
    det_params_t dp;

    memset(&w, 0, sizeof(w));
    w.n = n;
    w.side_a = side_a;
    w.win = win;
    sim_params_default(&sp, n);
    sp.notify = SIM_NOTIFY_NONE;
    sp.seed = 1000 + side_a;
    assert_int_equal(sim_world_create(&sp, &w.sim), UCFT_OK);
    det_params_default(&dp);
    dp.hb.eta_ns = 20 * MS;
    dp.hb.delta_ns = 100 * MS;
    for (int r = 0; r < n; r++) {
        w.ctx[r] = (rank_ctx_t){&w, r};
        det_ops_t ops = {
            .failed_cb = failed_cb, .self_cb = self_cb, .arg = &w.ctx[r]};
        assert_int_equal(rt_quorum_init(&w.q[r], n, 0, 0), UCFT_OK);
        assert_int_equal(
            det_create(sim_world_tp(w.sim, r), &dp, &ops, &w.det[r]), UCFT_OK);
    }
    for (int r = 0; r < n; r++)
        assert_int_equal(det_start(w.det[r]), UCFT_OK);
    if (prior >= 0) {
        sim_world_run(w.sim, 1200 * MS, UINT64_MAX);
        assert_int_equal(sim_world_kill(w.sim, prior), UCFT_OK);
    }
    sim_world_run(w.sim, at, UINT64_MAX);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++)
            if (!same_side(&w, a, b))
                assert_int_equal(sim_world_lose(w.sim, a, b, UINT32_MAX, 0, 0),
                                 UCFT_OK);
    w.cut = 1;
    sim_world_run(w.sim, 6000 * MS, UINT64_MAX);
    unsigned alive = 0;
    for (int r = 0; r < n; r++)
        if (!sim_world_is_dead(w.sim, r) && !w.fenced[r])
            alive |= 1u << r;
    sim_world_destroy(w.sim);
    for (int r = 0; r < n; r++) {
        det_destroy(w.det[r]);
        rt_quorum_cleanup(&w.q[r]);
    }
    *declared_within = w.declared_within;
    return alive;
}

static void test_quorum_sim_partitions(void **state)
{
    static const uint64_t when[] = {1500 * MS, 1517 * MS, 2003 * MS};
    int jobs = 0;

    for (int n = 2; n <= MAXN; n++) {
        unsigned all = (1u << n) - 1;
        for (unsigned a = 1; a < all; a++) {
            unsigned b = all & ~a;
            int na = __builtin_popcount(a), nb = n - na;
            unsigned win = 2 * na > n || (2 * na == n && (a & 1)) ? a : b;
            (void)nb;
            for (size_t t = 0; t < sizeof(when) / sizeof(when[0]); t++) {
                int within = 0;
                unsigned alive = run(n, a, win, when[t], -1, &within);
                jobs++;
                if (alive != win || within != 0)
                    fail_msg("n %d sides %#x/%#x at %llu ms: alive %#x, "
                             "expected %#x; %d declared within a side",
                             n, a, b, (unsigned long long)(when[t] / MS), alive,
                             win, within);
            }
        }
    }
    printf("quorum on the sim: %d partitioned jobs, the majority side whole "
           "and alone every time\n",
           jobs);
}

static void test_quorum_sim_partition_after_failure(void **state)
{
    int jobs = 0;

    for (int n = 3; n <= MAXN; n++) {
        unsigned all = (1u << n) - 1;
        for (int dead = 0; dead < n; dead++) {
            unsigned live = all & ~(1u << dead);
            for (unsigned a = live; a != 0; a = (a - 1) & live) {
                unsigned b = live & ~a;
                if (b == 0)
                    continue;
                int within = 0;
                unsigned alive = run(n, a, 0, 2000 * MS, dead, &within);
                jobs++;
                if ((alive & a) != 0 && (alive & b) != 0)
                    fail_msg("split brain: n %d, rank %d dead, sides %#x/%#x: "
                             "alive %#x",
                             n, dead, a, b, alive);
            }
        }
    }
    printf("quorum on the sim: %d jobs partitioned after a failure, never "
           "two sides\n",
           jobs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quorum_sim_partitions),
        cmocka_unit_test(test_quorum_sim_partition_after_failure),
    };
    return cmocka_run_group_tests_name("quorum_sim", tests, NULL, NULL);
}
