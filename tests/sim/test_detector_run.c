/* The failure detector's runs and vetted transport evidence on the
 * simulated transport (runtime/detector/probe.h): a vanished host of k
 * consecutive ranks is declared by every survivor within delta + 2 eta +
 * 10 ms (the runtime's defaults: eta 20 ms, delta 100 ms, 3 helpers, a
 * window of delta/2); a starved rank and a deaf observer cost no more
 * than before; an endpoint error about a live rank that answers the
 * probes declares nobody, about a dead one it declares it within the
 * window. Every test asserts an outcome with a bound. */
#include "test_detector_harness.h"
#include "transport/ctrl_kinds.h"

#include <inttypes.h>
#include <stdio.h>

static const uint64_t eta = 20 * MS, delta = 100 * MS;

/* The runtime's defaults: 3 helpers, window delta/2, a round every eta;
 * `run` ranks probed together at most, `helpers` 0: probes off. Ranks
 * r / node_size share a node (0: no nodes), whose kernel sees every
 * node-mate dead or alive (a starved one too). */
static void h_create(harness_t *h, int n, int node_size, int run, int helpers)
{
    det_params_t p;

    det_params_default(&p);
    p.hb.eta_ns = eta;
    p.hb.delta_ns = delta;
    p.probe = (pb_params_t){.helpers = helpers,
                            .window_ns = delta / 2,
                            .round_ns = eta,
                            .run = run};
    h_create_det(h, n, 17, &p, node_size, H_VOUCH_LIVE);
}

static int h_false(const harness_t *h)
{
    int k = 0;
    for (int r = 0; r < h->n; r++)
        k += h->false_rank[r];
    return k;
}

/* Every live rank knows every one of ranks [lo, lo + k) (mod n); returns
 * the latest time one of them was learned. */
static uint64_t h_all_learned(harness_t *h, int lo, int k)
{
    uint64_t last = 0;
    for (int i = 0; i < k; i++) {
        int f = (lo + i) % h->n;
        for (int r = 0; r < h->n; r++)
            if (!sim_world_is_dead(h->w, r) && !det_is_failed(h->dets[r], f)) {
                fprintf(stderr, "rank %d does not know %d failed\n", r, f);
                fail();
            }
        if (h->last[f] > last)
            last = h->last[f];
    }
    return last;
}

/* A host of k ranks [lo, lo + k) vanishes at once; every survivor must
 * know all of them within `bound` of the kill. Returns the time the last
 * survivor learned the last of them, after the kill. */
static uint64_t host_dies(int n, int k, int lo, int run, uint64_t bound)
{
    harness_t h;
    h_create(&h, n, k, run, 3);
    const uint64_t t0 = 25 * eta + 3700 * US;
    for (int i = 0; i < k; i++)
        sim_world_kill_at(h.w, (lo + i) % n, t0);
    sim_world_run(h.w, t0 + 4 * delta, UINT64_MAX);
    uint64_t last = h_all_learned(&h, lo, k) - t0;
    assert_int_equal(h_false(&h), 0);
    int obs = (lo + k) % n;
    printf("run %2d: N = %2d, host of %d ranks (%d..%d) vanishes: all known "
           "%.1f ms after the kill (bound %.1f, 0: none); rank %d declared "
           "%" PRIu64 " with a head, %" PRIu64 " run entries added\n",
           run, n, k, lo, (lo + k - 1) % n, last / 1e6,
           bound == UINT64_MAX ? 0.0 : bound / 1e6, obs,
           h.dets[obs]->pb.stats.with_run, h.dets[obs]->pb.stats.widened);
    h_destroy(&h);
    return last;
}

static void test_run_host_vanishes(void **state)
{
    (void)state;
    const uint64_t bound = delta + 2 * eta + 10 * MS;
    assert_true(host_dies(8, 2, 4, PB_MAX_RUN, bound) <= bound);
    assert_true(host_dies(16, 4, 8, PB_MAX_RUN, bound) <= bound);
    assert_true(host_dies(16, 4, 12, PB_MAX_RUN, bound) <= bound); /* wrap */
    assert_true(host_dies(16, 4, 0, PB_MAX_RUN, bound) <= bound);
    assert_true(host_dies(32, 8, 8, PB_MAX_RUN, bound) <= bound);
    /* Each rank alone (the rule of before): one presumption window (2
     * eta) per rank after the first, beyond the bound for 4 per host. */
    assert_true(host_dies(16, 4, 8, 1, UINT64_MAX) > bound);
}

/* A starved rank on another node (everything it sends is lost for 2 s,
 * heartbeats and probe answers alike): its node-mates answer for it from
 * the kernel; the run of its predecessors answers by itself. Nobody is
 * declared. */
static void test_run_starved(void **state)
{
    (void)state;
    const int n = 16, victim = 7;
    harness_t h;
    h_create(&h, n, 4, PB_MAX_RUN, 3);
    sim_world_run(h.w, 25 * eta, UINT64_MAX);
    assert_int_equal(sim_world_lose(h.w, victim, SIM_ANY_RANK, 1000000, 0, 0),
                     UCFT_OK);
    sim_world_run(h.w, 25 * eta + 2000 * MS, UINT64_MAX);
    const pb_stats_t *ps = &h.dets[victim + 1]->pb.stats;
    printf("run, a starved rank, 2 s: %d ranks declared; its observer "
           "suspected it %" PRIu64 " times, %" PRIu64 " refuted, %" PRIu64
           " runs ended by a live predecessor\n",
           h_false(&h), ps->suspicions, ps->refuted, ps->boundary);
    assert_int_equal(h_false(&h), 0);
    for (int r = 0; r < n; r++)
        assert_int_equal(det_epoch(h.dets[r]), 0);
    assert_true(ps->suspicions >= 10);
    assert_int_equal(ps->confirmed, 0);
    h_destroy(&h);
}

/* The observer itself hears nothing (everything sent to it is lost, as
 * to a thread that does not run): its silent predecessor is declared, as
 * before (no probe can tell), but its own deafness is no evidence against
 * the ranks before it: with runs nobody else within 2 delta - eta; the
 * rule of before (each next rank presumed for 2 eta) took one more per
 * presumption window. Returns the ranks falsely declared. */
static int deaf_observer(int run)
{
    const int n = 16, obs = 10;
    harness_t h;
    h_create(&h, n, 0, run, 3);
    const uint64_t t1 = 25 * eta;
    sim_world_run(h.w, t1, UINT64_MAX);
    assert_int_equal(sim_world_lose(h.w, SIM_ANY_RANK, obs, 1000000, 0, 0),
                     UCFT_OK);
    sim_world_run(h.w, t1 + 2 * delta - eta, UINT64_MAX);
    int k = h_false(&h);
    printf("run %2d: a deaf observer, %.0f ms: %d ranks falsely declared\n",
           run, (2 * delta - eta) / 1e6, k);
    h_destroy(&h);
    return k;
}

static void test_run_deaf_observer(void **state)
{
    (void)state;
    assert_int_equal(deaf_observer(PB_MAX_RUN), 1);
    assert_true(deaf_observer(1) >= 3);
}

/* An endpoint error (det_suspect) about a live rank whose link to the
 * suspecting rank loses everything: the helpers reach it, nobody declares
 * it, and the owner is told to reconnect (cleared_cb). About a dead rank:
 * declared by the suspecting rank within the window (before the dead
 * rank's own observer, a delta), and known by every survivor. With
 * probes off: declared at once, as before. */
static void test_evidence(void **state)
{
    (void)state;
    const int n = 16, me = 3, live = 9, dead = 12;
    const uint64_t w = delta / 2;
    harness_t h;

    h_create(&h, n, 0, PB_MAX_RUN, 3);
    h.watch = me;
    uint64_t t1 = 25 * eta;
    sim_world_run(h.w, t1, UINT64_MAX);
    assert_int_equal(sim_world_lose(h.w, me, live, 1000000, 0, 0), UCFT_OK);
    assert_int_equal(sim_world_lose(h.w, live, me, 1000000, 0, 0), UCFT_OK);
    det_suspect(h.dets[me], live);
    sim_world_run(h.w, t1 + 3 * w, UINT64_MAX);
    const pb_stats_t *ps = &h.dets[me]->pb.stats;
    assert_int_equal(h_false(&h), 0);
    assert_int_equal(det_epoch(h.dets[me]), 0);
    assert_int_equal(ps->evidence, 1);
    assert_int_equal(ps->ev_refuted, 1);
    assert_int_equal(ps->ev_confirmed, 0);
    assert_int_equal(h.cleared, 1);

    uint64_t t2 = sim_world_now(h.w) + 1300 * US;
    sim_world_kill_at(h.w, dead, t2);
    sim_world_run(h.w, t2 + 100 * US, UINT64_MAX);
    det_suspect(h.dets[me], dead); /* its connection broke */
    sim_world_run(h.w, t2 + 3 * delta, UINT64_MAX);
    uint64_t found = h.first[dead] - t2;
    printf("evidence: a live rank behind a broken link not declared (%" PRIu64
           " refuted); a dead one declared %.1f ms after the kill (window "
           "%.1f ms), all survivors told %.1f ms after\n",
           ps->ev_refuted, found / 1e6, w / 1e6,
           (h_all_learned(&h, dead, 1) - t2) / 1e6);
    assert_int_equal(ps->ev_confirmed, 1);
    assert_int_equal(h.why_at[dead], DET_WHY_EXTERNAL);
    assert_true(found >= w && found <= w + eta / 10 + 200 * US);
    assert_int_equal(h_false(&h), 0);
    h_destroy(&h);

    /* Probes off: the evidence declares at once, as before. */
    h_create(&h, n, 0, PB_MAX_RUN, 0);
    sim_world_run(h.w, t1, UINT64_MAX);
    det_suspect(h.dets[me], live);
    assert_true(det_is_failed(h.dets[me], live));
    h_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_host_vanishes),
        cmocka_unit_test(test_run_starved),
        cmocka_unit_test(test_run_deaf_observer),
        cmocka_unit_test(test_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
