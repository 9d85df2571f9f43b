/* The failure detector (runtime/detector) on the simulated transport: one
 * detector per simulated rank, the sim's own failure notification off, so
 * that the heartbeat ring does the detecting and the binomial broadcast
 * the telling. Every test asserts an outcome with a bound. */
#include "test_detector_harness.h"
#include "transport/ctrl_kinds.h"

#include <inttypes.h>
#include <stdio.h>

/* With indirect probes when `probe` is not NULL; node_size > 0: nodes
 * whose ranks see each other's kernel state (the starved rank alive, a
 * dead one dead). */
static void h_create_probe_vouch(harness_t *h, int n, uint64_t eta,
                                 uint64_t delta, int window, uint64_t seed,
                                 const pb_params_t *probe, int node_size)
{
    det_params_t p;

    det_params_default(&p);
    p.hb.eta_ns = eta;
    p.hb.delta_ns = delta;
    p.prop_window = window;
    if (probe != NULL)
        p.probe = *probe;
    h_create_det(h, n, seed, &p, node_size, H_LEARNS_ALONE);
}

static void h_create_probe(harness_t *h, int n, uint64_t eta, uint64_t delta,
                           int window, uint64_t seed, const pb_params_t *probe)
{
    h_create_probe_vouch(h, n, eta, delta, window, seed, probe, 0);
}

static void h_create(harness_t *h, int n, uint64_t eta, uint64_t delta,
                     int window, uint64_t seed)
{
    h_create_probe(h, n, eta, delta, window, seed, NULL);
}

/* Every live rank knows every one of `failed`. */
static void h_assert_all_learned(harness_t *h, const int *failed, int k)
{
    for (int r = 0; r < h->n; r++) {
        if (sim_world_is_dead(h->w, r))
            continue;
        for (int i = 0; i < k; i++)
            if (!det_is_failed(h->dets[r], failed[i])) {
                fprintf(stderr, "rank %d does not know %d failed\n", r,
                        failed[i]);
                fail();
            }
        assert_int_equal(det_epoch(h->dets[r]),
                         mb_count(det_membership(h->dets[r])));
    }
}

static unsigned ilog2_ceil(int n)
{
    unsigned l = 0;
    while ((1L << l) < n)
        l++;
    return l;
}

/* A generous bound on one broadcast: every hop costs a full fan-out of
 * 2 log2 N sends (gap g each) plus o + L + o; a binomial graph needs at
 * most log2 N + 1 hops, with 2 more for walk-ons. */
static uint64_t prop_bound(int n)
{
    uint64_t lg = ilog2_ceil(n);
    uint64_t hop = 2 * SIM_LOGGP_DEFAULT_O_NS + SIM_LOGGP_DEFAULT_L_NS +
                   2 * lg * SIM_LOGGP_DEFAULT_G_NS;
    return (lg + 3) * hop;
}

static void test_detector_no_failure(void **state)
{
    const int n = 64;
    const uint64_t eta = 10 * MS, periods = 1000;
    harness_t h;
    sim_stats_t st;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    sim_world_run(h.w, periods * eta, UINT64_MAX);
    sim_world_stats(h.w, &st);
    for (int r = 0; r < n; r++) {
        assert_int_equal(det_epoch(h.dets[r]), 0);
        assert_int_equal(h.dets[r]->hb.stats.suspicions, 0);
        assert_int_equal(h.dets[r]->hb.stats.guarded, 0);
    }
    assert_int_equal(h.false_decl, 0);
    /* One heartbeat per 0.9 eta: at most 1.2 messages per rank per eta. */
    double per = (double)st.messages / ((double)n * (double)periods);
    printf("no failure: N=%d, %" PRIu64 " eta: %.3f messages/rank/eta\n", n,
           periods, per);
    assert_true(st.messages <= (uint64_t)(1.2 * n * periods) + 2u * n);
    assert_true(st.messages >= (uint64_t)n * periods);
    /* Following: the first rank's tick starts a wave of heartbeats around
     * the ring, everyone else sends on receiving one, so their ticks (the
     * backups) almost never fire: about one wake-up per rank and period. */
    uint64_t ticks = 0, followed = 0;
    for (int r = 1; r < n; r++) {
        ticks += h.dets[r]->hb.stats.ticks;
        followed += h.dets[r]->hb.stats.followed;
    }
    printf("no failure: ranks 1..%d: %.3f ticks and %.3f followed sends per "
           "rank per eta; rank 0: %.3f ticks\n",
           n - 1, (double)ticks / ((double)(n - 1) * (double)periods),
           (double)followed / ((double)(n - 1) * (double)periods),
           (double)h.dets[0]->hb.stats.ticks / (double)periods);
    assert_true(ticks <= (uint64_t)(n - 1) * 4);
    assert_true(followed >= (uint64_t)((n - 1) * periods * 1.1) - 4u * n);
    h_destroy(&h);
}

/* One failure at t0 = 5.37 eta: detection and broadcast bounds. */
static void single_failure(int n, int window)
{
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    const uint64_t t0 = 1 * eta + 3700 * US;
    const int victim = n / 3;
    harness_t h;
    sim_stats_t st;

    h_create(&h, n, eta, delta, window, 7);
    sim_world_kill_at(h.w, victim, t0);
    sim_world_run(h.w, t0 + delta + eta / 10 + 1 * MS, UINT64_MAX);
    sim_world_stats(h.w, &st);
    h_assert_all_learned(&h, &victim, 1);
    assert_int_equal(h.learned[victim], n - 1);
    assert_int_equal(h.false_decl, 0);
    assert_int_equal(h.hb_decl, 1);
    uint64_t detect = h.first[victim] - t0;
    uint64_t spread = h.last[victim] - h.first[victim];
    printf("single failure: N=%d detect %.3f ms (bound %.3f), broadcast "
           "%.1f us (bound %.1f, log2 N = %u), %" PRIu64 " events, %" PRIu64
           " messages\n",
           n, detect / 1e6, (delta + eta / 10 + 10 * US) / 1e6, spread / 1e3,
           prop_bound(n) / 1e3, ilog2_ceil(n), st.events, st.messages);
    assert_true(detect <= delta + eta / 10 + 10 * US);
    assert_true(detect >= delta - eta);
    assert_true(spread <= prop_bound(n));
    h_destroy(&h);
}

static void test_detector_single_failure_16(void **state)
{
    single_failure(16, 0);
}

static void test_detector_single_failure_1024(void **state)
{
    single_failure(1024, 0);
}

static void test_detector_single_failure_large(void **state)
{
    const char *env = getenv("UCFT_DETECTOR_LARGE_N");
    single_failure(env != NULL ? atoi(env) : 100000, 4);
}

/* Longest run of ring-consecutive ranks in `failed`. */
static int max_run(harness_t *h, const int *failed, int k)
{
    int best = 0;
    for (int i = 0; i < k; i++) {
        int len = 1, r = failed[i];
        for (;;) {
            int next = (r + 1) % h->n, found = 0;
            for (int j = 0; j < k; j++)
                found |= failed[j] == next;
            if (!found)
                break;
            len++;
            r = next;
        }
        if (len > best)
            best = len;
    }
    return best;
}

static void multi_failure(int n, const int *failed, int k, const char *what)
{
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    const uint64_t t0 = 5 * eta + 1100 * US;
    harness_t h;

    h_create(&h, n, eta, delta, 0, 3);
    for (int i = 0; i < k; i++)
        sim_world_kill_at(h.w, failed[i], t0);
    int m = max_run(&h, failed, k);
    uint64_t bound =
        delta + 2 * delta * (uint64_t)(m - 1) + eta / 10 + prop_bound(n);
    sim_world_run(h.w, t0 + bound + 2 * eta, UINT64_MAX);
    h_assert_all_learned(&h, failed, k);
    assert_int_equal(h.false_decl, 0);
    uint64_t worst = 0;
    for (int i = 0; i < k; i++) {
        assert_int_equal(h.learned[failed[i]], n - k);
        if (h.last[failed[i]] - t0 > worst)
            worst = h.last[failed[i]] - t0;
    }
    printf("%s: N=%d k=%d run=%d: all survivors know all in %.3f ms "
           "(bound delta + 2 delta (run-1) + prop = %.3f ms)\n",
           what, n, k, m, worst / 1e6, bound / 1e6);
    assert_true(worst <= bound);
    h_destroy(&h);
}

static void test_detector_consecutive(void **state)
{
    int failed[5];
    for (int k = 2; k <= 5; k++) {
        if (k == 4)
            continue;
        for (int i = 0; i < k; i++)
            failed[i] = 20 + i;
        multi_failure(64, failed, k, "consecutive");
    }
    /* Across the wrap of the ring. */
    int wrap[3] = {63, 0, 1};
    multi_failure(64, wrap, 3, "consecutive (wrap)");
}

/* The failure broadcast's counters summed over every rank. */
static void prop_totals(const harness_t *h, uint64_t *sent, uint64_t *facts,
                        uint64_t *skipped)
{
    *sent = *facts = *skipped = 0;
    for (int r = 0; r < h->n; r++) {
        *sent += h->dets[r]->prop.stats.sent;
        *facts += h->dets[r]->prop.stats.facts_sent;
        *skipped += h->dets[r]->prop.stats.skipped_alone;
    }
}

/* A whole pretend node (8 consecutive ranks of 256) declared at once by
 * one rank (det_hold: a batch of launcher events, or the kernel's word
 * about node-mates): the news leaves in one message per link, and every
 * relay forwards the 8 facts it learnt from one message together. Every
 * survivor learns all 8 within one broadcast's bound. Measured: 6,159
 * messages for 29,119 facts when the 8 are declared one by one (the send
 * pool's backlog batches too), 3,637 for 29,089 held together; one fact
 * per message, as before batching, was about 29,000 messages. */
static uint64_t burst_messages(int hold, uint64_t *facts)
{
    const int n = 256, k = 8, declarer = 100;
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    int failed[8];
    harness_t h;

    h_create(&h, n, eta, delta, 0, 7);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    for (int i = 0; i < k; i++) {
        failed[i] = 16 + i;
        sim_world_kill(h.w, failed[i]);
    }
    uint64_t t0 = sim_world_now(h.w);
    if (hold)
        det_hold(h.dets[declarer]);
    for (int i = 0; i < k; i++)
        det_declare(h.dets[declarer], failed[i], DET_WHY_EXTERNAL);
    if (hold)
        det_release(h.dets[declarer]);
    /* Before any observer's own deadline (delta): the broadcast alone. */
    sim_world_run(h.w, t0 + 2 * prop_bound(n), UINT64_MAX);
    h_assert_all_learned(&h, failed, k);
    assert_int_equal(h.false_decl, 0);
    uint64_t sent, skipped;
    prop_totals(&h, &sent, facts, &skipped);
    h_destroy(&h);
    return sent;
}

static void test_detector_burst_batched(void **state)
{
    uint64_t facts1, facts8;
    uint64_t one = burst_messages(0, &facts1);
    uint64_t batched = burst_messages(1, &facts8);
    printf("8 facts at N = 256: %llu messages (%llu facts) one by one, "
           "%llu (%llu facts) held together\n",
           (unsigned long long)one, (unsigned long long)facts1,
           (unsigned long long)batched, (unsigned long long)facts8);
    /* One fact per message, as before batching, would be facts1 sends. */
    assert_true(one * 3 <= facts1);
    assert_true(batched * 6 <= facts8);
    assert_true(batched < one);
}

static void test_detector_scattered(void **state)
{
    int failed[12];
    assert_int_equal(sim_plan_random(256, 12, -1, 42, failed), UCFT_OK);
    multi_failure(256, failed, 12, "scattered");
}

/* Relays die in the middle of forwarding: both ring neighbours of the
 * declarer (the victim's observer) learn the news from it and die before
 * their 2nd and 3rd news message. Every survivor still learns every
 * failure. (The declarer itself is not killed by kill_before_send: its
 * first news goes out from its timer callback, and the sim frees a rank's
 * timer queue while expiring it when the rank is killed from a timer
 * callback.) */
static void test_detector_relay_dies(void **state)
{
    const int n = 1024, victim = 100;
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    const uint64_t t0 = 5 * eta + 500 * US;
    const int relay1 = victim + 2, relay2 = victim - 1;
    harness_t h;

    h_create(&h, n, eta, delta, 0, 5);
    sim_world_kill_at(h.w, victim, t0);
    assert_int_equal(sim_world_kill_before_send(
                         h.w, relay1, 2, ucft_ctrl_tag(0, UCFT_CTRL_FAILED),
                         ~UCFT_TAG_SRC_MASK),
                     UCFT_OK);
    assert_int_equal(sim_world_kill_before_send(
                         h.w, relay2, 3, ucft_ctrl_tag(0, UCFT_CTRL_FAILED),
                         ~UCFT_TAG_SRC_MASK),
                     UCFT_OK);
    sim_world_run(h.w, t0 + 4 * delta + 2 * eta, UINT64_MAX);
    assert_true(sim_world_is_dead(h.w, relay1));
    assert_true(sim_world_is_dead(h.w, relay2));
    int failed[3] = {victim, relay1, relay2};
    h_assert_all_learned(&h, failed, 3);
    assert_int_equal(h.false_decl, 0);
    uint64_t worst = 0;
    for (int i = 0; i < 3; i++)
        if (h.last[failed[i]] - t0 > worst)
            worst = h.last[failed[i]] - t0;
    printf("relay dies: N=%d, all survivors know all 3 in %.3f ms\n", n,
           worst / 1e6);
    /* victim-1, victim and victim+2 die; victim+1 observes victim-2 after
     * two timeouts, victim+3 detects victim+2 after one. */
    assert_true(worst <= delta + 2 * delta + eta / 10 + prop_bound(n));
    h_destroy(&h);
}

/* A rank that stops cleanly is never reported as failed. */
static void test_detector_clean_stop(void **state)
{
    const int n = 16;
    const uint64_t eta = 10 * MS;
    harness_t h;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    det_stop(h.dets[7]);
    sim_world_run(h.w, 6 * eta, UINT64_MAX);
    assert_true(det_idle(h.dets[7]));
    sim_world_kill(h.w, 7); /* the process exits */
    sim_world_run(h.w, 100 * eta, UINT64_MAX);
    for (int r = 0; r < n; r++)
        assert_int_equal(det_epoch(h.dets[r]), 0);
    assert_int_equal(h.dets[8]->hb.observed, -1);
    assert_int_equal(h.false_decl + h.hb_decl, 0);
    h_destroy(&h);
}

/* A live rank declared failed (falsely, from outside) is told and
 * reports itself declared; everyone else learns it; nothing else fails. */
static void test_detector_fencing(void **state)
{
    const int n = 32, victim = 20;
    const uint64_t eta = 10 * MS;
    harness_t h;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    uint64_t t0 = sim_world_now(h.w);
    det_declare(h.dets[3], victim, DET_WHY_EXTERNAL);
    sim_world_run(h.w, t0 + 1 * MS, UINT64_MAX);
    assert_int_equal(h.self_declared[victim], 1);
    assert_true(sim_world_is_dead(h.w, victim)); /* it aborted */
    int failed[1] = {victim};
    h_assert_all_learned(&h, failed, 1);
    sim_world_run(h.w, t0 + 50 * eta, UINT64_MAX);
    for (int r = 0; r < n; r++) {
        if (r != victim)
            assert_int_equal(det_epoch(h.dets[r]), 1);
        assert_int_equal(h.self_declared[r], r == victim);
    }
    assert_int_equal(h.dets[victim + 1]->hb.observed, victim - 1);
    assert_int_equal(h.hb_decl, 0);
    h_destroy(&h);
}

/* A live rank declared failed that does not abort at once keeps sending
 * heartbeats; its observer drops them (fencing) and tells it again. */
static void test_detector_fencing_late_notice(void **state)
{
    const int n = 16, victim = 5;
    const uint64_t eta = 10 * MS;
    harness_t h;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    h.kill_on_self = 0;
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    /* Rank 6 declares 5 (e.g. an endpoint error); all learn it. */
    det_declare(h.dets[6], victim, DET_WHY_EXTERNAL);
    sim_world_run(h.w, 10 * eta, UINT64_MAX);
    assert_int_equal(h.self_declared[victim], 1);
    assert_true(h.dets[victim]->self_declared);
    /* The self-declared detector is silent: nothing more from it. */
    assert_int_equal(h.dets[victim]->hb.running, 0);
    for (int r = 0; r < n; r++)
        if (r != victim)
            assert_true(det_is_failed(h.dets[r], victim));
    h_destroy(&h);
}

/* Every failure message to one rank is lost (a connection that closed
 * under them, say): the failure broadcast never tells it. The ring
 * neighbour's heartbeats carry another failed set, the pair reconciles,
 * and the rank learns the fact within a few heartbeat periods. */
static void test_detector_lost_news(void **state)
{
    const int n = 16, victim = 3, deaf = 9;
    const uint64_t eta = 10 * MS, delta = 40 * MS, t0 = 5 * eta;
    harness_t h;

    h_create(&h, n, eta, delta, 0, 5);
    assert_int_equal(sim_world_lose(h.w, SIM_ANY_RANK, deaf, 1000,
                                    ucft_ctrl_tag(0, UCFT_CTRL_FAILED),
                                    ucft_ctrl_mask_any_source()),
                     UCFT_OK);
    sim_world_kill_at(h.w, victim, t0);
    /* Detection (delta + eta / 10), two differing heartbeats (at most
     * 2.2 eta apart), one round trip. */
    uint64_t bound = delta + eta / 10 + 3 * eta;
    sim_world_run(h.w, t0 + bound, UINT64_MAX);
    h_assert_all_learned(&h, &victim, 1);
    assert_int_equal(h.false_decl, 0);
    const rec_stats_t *rs = &h.dets[deaf]->rec.stats;
    printf("lost news: rank %d learnt rank %d failed %.3f ms after the kill "
           "(bound %.3f), %" PRIu64 " offers, %" PRIu64 " fact learnt\n",
           deaf, victim, (h.last[victim] - t0) / 1e6, bound / 1e6, rs->offers,
           rs->learnt);
    assert_int_equal(rs->learnt, 1);
    assert_true(rs->offers >= 1);
    /* Later heartbeats agree: no more offers anywhere. */
    uint64_t offers = 0;
    for (int r = 0; r < n; r++)
        offers += h.dets[r]->rec.stats.offers;
    sim_world_run(h.w, t0 + bound + 20 * eta, UINT64_MAX);
    uint64_t later = 0;
    for (int r = 0; r < n; r++)
        later += h.dets[r]->rec.stats.offers;
    assert_int_equal(later, offers);
    h_destroy(&h);
}

/* The split seen in stress runs on an overloaded node: two ranks really
 * die, then two live ranks are declared falsely while the notices that
 * should tell them are lost, and a bystander misses every failure
 * message. Without reconciliation the bystander never learns the false
 * declarations (and one of the declared ranks, once it aborted, is
 * watched by nobody who does not already know), so its collectives would
 * wait forever. Now: the declared ranks learn it and stop, and every
 * other live rank agrees on the same failed set. */
static void test_detector_split_views(void **state)
{
    const int n = 8, deaf = 2;
    const uint64_t eta = 10 * MS, delta = 40 * MS, t0 = 5 * eta;
    harness_t h;

    h_create(&h, n, eta, delta, 0, 11);
    sim_world_kill_at(h.w, 3, t0);
    sim_world_kill_at(h.w, 4, t0);
    sim_world_run(h.w, t0 + 3 * delta, UINT64_MAX);
    int real[2] = {3, 4};
    h_assert_all_learned(&h, real, 2);
    /* Lost: the declarers' notices, and everything to the bystander. */
    const uint64_t failed_tag = ucft_ctrl_tag(0, UCFT_CTRL_FAILED);
    const uint64_t any = ucft_ctrl_mask_any_source();
    assert_int_equal(sim_world_lose(h.w, 1, 0, 1, failed_tag, any), UCFT_OK);
    assert_int_equal(sim_world_lose(h.w, 6, 5, 1, failed_tag, any), UCFT_OK);
    assert_int_equal(
        sim_world_lose(h.w, SIM_ANY_RANK, deaf, 1000, failed_tag, any),
        UCFT_OK);
    uint64_t t1 = sim_world_now(h.w);
    det_declare(h.dets[1], 0, DET_WHY_HEARTBEAT);
    det_declare(h.dets[6], 5, DET_WHY_HEARTBEAT);
    sim_world_run(h.w, t1 + 1000 * MS, UINT64_MAX);
    const int all[4] = {0, 3, 4, 5};
    for (int r = 0; r < n; r++) {
        int declared = r == 0 || r == 5;
        assert_int_equal(h.self_declared[r], declared);
        if (declared || r == 3 || r == 4) {
            assert_true(sim_world_is_dead(h.w, r));
            continue;
        }
        assert_false(sim_world_is_dead(h.w, r));
        assert_int_equal(det_epoch(h.dets[r]), 4);
    }
    h_assert_all_learned(&h, all, 4);
    printf("split views: every live rank knows {0, 3, 4, 5}; rank %d learnt "
           "%" PRIu64 " facts by reconciliation; ranks 0 and 5 stopped\n",
           deaf, h.dets[deaf]->rec.stats.learnt);
    assert_int_equal(h.dets[deaf]->rec.stats.learnt, 2);
    h_destroy(&h);
}

static void noop_cb(tp_req_t *req)
{
    (void)req;
}

/* Malformed failed-set messages are counted and change nothing; a set
 * from a rank already declared is answered with a notice, not believed. */
static void test_detector_reconcile_malformed(void **state)
{
    const int n = 8, to = 4;
    const uint64_t eta = 10 * MS;
    harness_t h;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    h.kill_on_self = 0;
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    const uint64_t tag = ucft_ctrl_tag(1, UCFT_CTRL_FAILED_SET);
    static uint32_t bad[4][4] = {
        {0, 0, 0, 0},   /* 6 bytes: shorter than the header */
        {0, 300, 5, 0}, /* n above REC_MAX_FACTS */
        {1, 2, 5, 0},   /* n = 2 but one fact */
        {0, 1, 99, 0},  /* a rank outside the job: skipped, well formed */
    };
    const size_t len[4] = {6, 12, 12, 12};
    tp_t *tp1 = sim_world_tp(h.w, 1);
    for (int i = 0; i < 4; i++) {
        tp_req_t req = {.cb = noop_cb};
        ucft_status_t st = tp_send(tp1, to, tag, bad[i], len[i], &req);
        assert_true(st == UCFT_OK || st == UCFT_INPROGRESS);
        sim_world_run(h.w, sim_world_now(h.w) + 1 * MS, UINT64_MAX);
    }
    const rec_stats_t *rs = &h.dets[to]->rec.stats;
    assert_int_equal(rs->received, 4);
    assert_int_equal(rs->malformed, 3);
    assert_int_equal(rs->learnt, 0);
    for (int r = 0; r < n; r++)
        assert_int_equal(det_epoch(h.dets[r]), 0);
    /* Rank 6 is declared (by rank 4, whose notice is lost); its set
     * naming rank 5 is then not believed, and it is told again. */
    assert_int_equal(sim_world_lose(h.w, 4, 6, 1,
                                    ucft_ctrl_tag(0, UCFT_CTRL_FAILED),
                                    ucft_ctrl_mask_any_source()),
                     UCFT_OK);
    det_declare(h.dets[4], 6, DET_WHY_EXTERNAL);
    sim_world_run(h.w, sim_world_now(h.w) + 1 * MS, UINT64_MAX);
    assert_int_equal(h.self_declared[6], 0);
    static uint32_t five[3] = {1, 1, 5};
    tp_req_t req = {.cb = noop_cb};
    ucft_status_t st = tp_send(sim_world_tp(h.w, 6), to,
                               ucft_ctrl_tag(6, UCFT_CTRL_FAILED_SET), five,
                               sizeof(five), &req);
    assert_true(st == UCFT_OK || st == UCFT_INPROGRESS);
    sim_world_run(h.w, sim_world_now(h.w) + 1 * MS, UINT64_MAX);
    assert_int_equal(rs->fenced, 1);
    assert_false(det_is_failed(h.dets[to], 5));
    assert_int_equal(h.self_declared[6], 1);
    h_destroy(&h);
}

/* Control messages that are not what their kind says (empty, truncated,
 * from a source that is no rank or the receiver itself) are dropped: no
 * rank is declared, nobody stops itself, and a forged empty HB_STOP does
 * not stop the watch of the rank it names: its death is still found. */
static void test_detector_malformed_control(void **state)
{
    const int n = 8, to = 1;
    const uint64_t eta = 10 * MS;
    harness_t h;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    static const uint32_t names3[3] = {3, 0, 0};
    static const uint64_t zero = 0;
    const struct {
        uint32_t src;
        unsigned kind;
        const void *body;
        size_t len;
    } bad[] = {
        {2, UCFT_CTRL_FAILED, &zero, 0},          /* empty notice */
        {2, UCFT_CTRL_FAILED, names3, 10},        /* not whole words */
        {2, UCFT_CTRL_FAILED, names3, 4},         /* no epoch, names 3 */
        {2, UCFT_CTRL_FAILED, names3, 136},       /* above a batch */
        {99, UCFT_CTRL_HB_REQUEST, &zero, 8},     /* no such rank */
        {to, UCFT_CTRL_HB_REQUEST, &zero, 8},     /* the receiver itself */
        {0, UCFT_CTRL_HB_STOP, &zero, 0},         /* forged, empty */
        {0, UCFT_CTRL_HB, &zero, 4},              /* short heartbeat */
        {2, UCFT_CTRL_FAILED_SET, names3, 12000}, /* longer than any set */
    };
    tp_t *tp2 = sim_world_tp(h.w, 2);
    static tp_req_t reqs[9];
    static unsigned char big[12000];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        reqs[i] = (tp_req_t){.cb = noop_cb, .buffered = 1};
        ucft_status_t st =
            tp_send(tp2, to, ucft_ctrl_tag(bad[i].src, bad[i].kind),
                    bad[i].len > 12 ? big : bad[i].body, bad[i].len, &reqs[i]);
        assert_true(st == UCFT_OK || st == UCFT_INPROGRESS);
    }
    sim_world_run(h.w, sim_world_now(h.w) + 1000 * MS, UINT64_MAX);
    for (int r = 0; r < n; r++) {
        assert_int_equal(h.self_declared[r], 0);
        assert_false(sim_world_is_dead(h.w, r));
        assert_int_equal(det_epoch(h.dets[r]), 0);
    }
    assert_int_equal(h.false_decl, 0);
    uint64_t t0 = sim_world_now(h.w);
    sim_world_kill(h.w, 0);
    sim_world_run(h.w, t0 + 500 * MS, UINT64_MAX);
    int failed[1] = {0};
    h_assert_all_learned(&h, failed, 1);
    assert_int_equal(h.false_decl, 0);
    h_destroy(&h);
}

/* One death seen by the kernel on a node of 16 (of 64 ranks): the ranks
 * there declare it themselves (DET_WHY_EXITED) and send it to nobody on
 * their node, nor to the dead rank; every rank elsewhere still learns it,
 * from fewer messages than when the news had to reach everyone. */
static uint64_t kernel_death_run(int node_size, uint64_t *skipped)
{
    const int n = 64, victim = 21;
    const uint64_t eta = 10 * MS;
    harness_t h;
    uint64_t sent = 0;

    h_create(&h, n, eta, 40 * MS, 0, 1);
    h.node_size = node_size;
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    uint64_t t0 = sim_world_now(h.w);
    sim_world_kill(h.w, victim);
    for (int r = 16; r < 32; r++)
        if (r != victim)
            det_declare(h.dets[r], victim, DET_WHY_EXITED);
    sim_world_run(h.w, t0 + 2 * MS, UINT64_MAX); /* well before delta */
    int failed[1] = {victim};
    h_assert_all_learned(&h, failed, 1);
    assert_int_equal(h.false_decl, 0);
    assert_int_equal(h.hb_decl, 0);
    uint64_t facts;
    prop_totals(&h, &sent, &facts, skipped);
    h_destroy(&h);
    return sent;
}

static void test_detector_kernel_evidence(void **state)
{
    uint64_t skipped_all, skipped_none;
    uint64_t with_nodes = kernel_death_run(16, &skipped_all);
    uint64_t without = kernel_death_run(0, &skipped_none);
    assert_int_equal(skipped_none, 0);
    assert_true(skipped_all > 0);
    assert_true(with_nodes < without);
    print_message("kernel evidence on the node: %" PRIu64
                  " failure messages (%" PRIu64
                  " links skipped) instead of %" PRIu64 "\n",
                  with_nodes, skipped_all, without);
}

static uint64_t run_hash(uint64_t seed)
{
    harness_t h;
    int victims[3];
    h_create(&h, 256, 10 * MS, 40 * MS, 0, seed);
    assert_int_equal(sim_plan_random(256, 3, -1, seed, victims), UCFT_OK);
    for (int i = 0; i < 3; i++)
        sim_world_kill_at(h.w, victims[i], 52 * MS + (uint64_t)i * 7 * MS);
    sim_world_run(h.w, 200 * MS, UINT64_MAX);
    h_assert_all_learned(&h, victims, 3);
    uint64_t hash = sim_world_trace_hash(h.w);
    h_destroy(&h);
    return hash;
}

static void test_detector_determinism(void **state)
{
    uint64_t a = run_hash(11), b = run_hash(11), c = run_hash(12);
    assert_true(a == b);
    assert_true(a != c);
}

/* Indirect probes (probe.h). N = 16, eta = 10 ms, delta = 40 ms, 2
 * helpers per round, a round every eta, a window of 2 eta (probing
 * begins 2 eta before the deadline and ends at it). Rank 5's
 * heartbeats to its observer 6 all vanish from 50 ms on (a link that
 * loses them, the others intact): with probes nobody declares rank 5 in
 * 2 s (each suspicion is refuted through a helper); without them rank 6
 * declares it after delta, a false declaration. Then rank 5 dies, its
 * heartbeats still lost: every survivor knows it within delta + eta/10
 * (+ a broadcast) of the kill, and nobody else is declared. */
static const pb_params_t probe_params = {
    .helpers = 2, .window_ns = 20 * MS, .round_ns = 10 * MS};

static void lose_heartbeats(harness_t *h, int src, int dst)
{
    assert_int_equal(sim_world_lose(h->w, src, dst, 1000000,
                                    ucft_ctrl_tag((uint32_t)src, UCFT_CTRL_HB),
                                    ucft_ctrl_mask_any_source()),
                     UCFT_OK);
}

static void test_detector_probe_lossy_link(void **state)
{
    const int n = 16, victim = 5, obs = 6;
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    harness_t h;

    /* Without probes: the lossy link alone gets rank 5 declared. */
    h_create(&h, n, eta, delta, 0, 3);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    lose_heartbeats(&h, victim, obs);
    sim_world_run(h.w, 5 * eta + delta + 2 * eta, UINT64_MAX);
    assert_true(det_is_failed(h.dets[obs], victim));
    assert_true(h.false_decl >= 1);
    h_destroy(&h);

    h_create_probe(&h, n, eta, delta, 0, 3, &probe_params);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    lose_heartbeats(&h, victim, obs);
    sim_world_run(h.w, 2000 * MS, UINT64_MAX);
    for (int r = 0; r < n; r++) {
        assert_int_equal(det_epoch(h.dets[r]), 0);
        assert_int_equal(h.self_declared[r], 0);
    }
    assert_int_equal(h.false_decl, 0);
    const pb_stats_t *ps = &h.dets[obs]->pb.stats;
    const hb_stats_t *hs = &h.dets[obs]->hb.stats;
    printf("probes, lossy link: rank %d suspected %" PRIu64 " times in 2 s, "
           "%" PRIu64 " refuted through helpers (%" PRIu64 " requests), "
           "%" PRIu64 " confirmed\n",
           victim, hs->suspicions, ps->refuted, ps->requests, ps->confirmed);
    assert_true(hs->suspicions >= 30); /* one per delta + a round trip */
    assert_true(ps->refuted + 1 >= hs->suspicions); /* one may be pending */
    assert_int_equal(hs->refuted, ps->refuted);
    assert_int_equal(ps->confirmed, 0);

    /* A real death behind the same lossy link: found and confirmed. */
    uint64_t t0 = sim_world_now(h.w) + 3700 * US;
    sim_world_kill_at(h.w, victim, t0);
    const uint64_t bound = delta + eta / 10 + prop_bound(n);
    sim_world_run(h.w, t0 + bound, UINT64_MAX);
    int failed[1] = {victim};
    h_assert_all_learned(&h, failed, 1);
    assert_int_equal(h.false_decl, 0);
    assert_int_equal(h.hb_decl, 1);
    uint64_t detect = h.first[victim] - t0;
    printf("probes, lossy link: death found %.3f ms after the kill (bound "
           "%.3f = delta + eta/10 + broadcast)\n",
           detect / 1e6, bound / 1e6);
    assert_true(detect <= delta + eta / 10 + 10 * US);
    assert_int_equal(ps->confirmed, 1);
    h_destroy(&h);
}

/* Probes on, no loss: a death is found within delta + eta/10 as without
 * probes (the window ends at the deadline); every survivor knows it; a
 * dead helper only costs its answer. */
static void test_detector_probe_death(void **state)
{
    const int n = 16, victim = 9;
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    const uint64_t t0 = 1 * eta + 3700 * US;
    harness_t h;

    h_create_probe(&h, n, eta, delta, 0, 7, &probe_params);
    sim_world_kill_at(h.w, victim, t0);
    sim_world_kill_at(h.w, victim + 2, t0); /* a helper of rank 10 */
    const uint64_t bound = delta + eta / 10 + 10 * US;
    sim_world_run(h.w, t0 + bound + prop_bound(n), UINT64_MAX);
    int failed[2] = {victim, victim + 2};
    h_assert_all_learned(&h, failed, 2);
    assert_int_equal(h.false_decl, 0);
    uint64_t detect = h.first[victim] - t0;
    printf("probes, no loss: death found %.3f ms after the kill (bound "
           "%.3f = delta + eta/10, as without probes)\n",
           detect / 1e6, bound / 1e6);
    assert_true(detect <= bound);
    assert_true(detect >= delta - eta);
    h_destroy(&h);
}

/* Probes on, 3 consecutive ranks die at once (a host): the observer
 * confirms the first at delta, then each next one at once (its window
 * only), not one delta apart. */
static void test_detector_probe_consecutive(void **state)
{
    const int n = 16;
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    const uint64_t t0 = 1 * eta + 3700 * US, w = probe_params.window_ns;
    int failed[3] = {8, 9, 10};
    harness_t h;

    h_create_probe(&h, n, eta, delta, 0, 5, &probe_params);
    for (int i = 0; i < 3; i++)
        sim_world_kill_at(h.w, failed[i], t0);
    const uint64_t bound = delta + eta / 10 + 2 * w + prop_bound(n);
    sim_world_run(h.w, t0 + bound, UINT64_MAX);
    h_assert_all_learned(&h, failed, 3);
    assert_int_equal(h.false_decl, 0);
    uint64_t last = 0;
    for (int i = 0; i < 3; i++)
        if (h.last[failed[i]] > last)
            last = h.last[failed[i]];
    printf("probes, 3 consecutive deaths: all known %.3f ms after the kill "
           "(bound %.3f = delta + eta/10 + 2 windows + broadcast; without "
           "probes about 3 delta)\n",
           (last - t0) / 1e6, bound / 1e6);
    assert_true(last - t0 <= bound);
    /* Rank 11 presumed 9, 8 and then 7, which answered. */
    assert_int_equal(h.dets[11]->hb.stats.presumed, 3);
    assert_int_equal(h.dets[11]->pb.stats.confirmed, 3);
    assert_int_equal(h.dets[11]->pb.stats.refuted, 1);
    h_destroy(&h);
}

/* A starved rank on another node (its heartbeat thread does not run: the
 * sim loses everything it sends for 2 s, heartbeats and probe acks
 * alike): with helpers that see their node-mates' kernel state (nodes of
 * 4; rank 7's helpers 4 and 6 are on its node), they answer for it and
 * nobody declares it; without the kernel view it is declared. */
static void starved_run(int vouch, uint64_t *false_decl, uint64_t *vouched)
{
    const int n = 16, victim = 7;
    const uint64_t eta = 10 * MS, delta = 40 * MS;
    harness_t h;

    h_create_probe_vouch(&h, n, eta, delta, 0, 11, &probe_params,
                         vouch ? 4 : 0);
    h.starved = victim;
    h.kill_on_self = 0; /* count, do not kill */
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    assert_int_equal(sim_world_lose(h.w, victim, SIM_ANY_RANK, 1000000, 0, 0),
                     UCFT_OK);
    sim_world_run(h.w, 2000 * MS, UINT64_MAX);
    *false_decl = h.false_decl;
    *vouched = 0;
    for (int r = 0; r < n; r++)
        *vouched += h.dets[r]->pb.stats.vouched;
    h_destroy(&h);
}

static void test_detector_probe_starved(void **state)
{
    uint64_t fd_on, v_on, fd_off, v_off;
    starved_run(1, &fd_on, &v_on);
    starved_run(0, &fd_off, &v_off);
    printf("probes, a starved rank on another node, 2 s: %" PRIu64
           " false declarations with node-mate helpers (%" PRIu64
           " kernel-vouched relays), %" PRIu64 " without\n",
           fd_on, v_on, fd_off);
    assert_int_equal(fd_on, 0);
    assert_true(v_on >= 10);
    assert_true(fd_off >= 1);
    assert_int_equal(v_off, 0);
}

/* Malformed and forged probes are dropped (counted), nobody is declared
 * or refuted by them, and a forged relay does not save a dead rank. */
static void test_detector_probe_malformed(void **state)
{
    const int n = 8, to = 3;
    const uint64_t eta = 10 * MS;
    harness_t h;

    h_create_probe(&h, n, eta, 40 * MS, 0, 1, &probe_params);
    sim_world_run(h.w, 5 * eta, UINT64_MAX);
    static const uint32_t bodies[][5] = {
        {9, 1, 2, 1, 0},          /* unknown op */
        {1, 99, 2, 1, 0},         /* origin out of range */
        {1, 2, 2, 1, 0},          /* origin is the suspect */
        {1, 1, 2, 1, 0},          /* request not from its origin (src 2) */
        {2, 1, 5, 1, 0},          /* ping not to its suspect */
        {3, 1, 4, 1, 0},          /* ack from a rank other than its suspect */
        {4, 3, 2, 1, 0},          /* relay from the suspect itself */
        {1, 2, 0xffffffff, 1, 0}, /* suspect out of range */
    };
    const size_t nb = sizeof(bodies) / sizeof(bodies[0]);
    tp_t *tp2 = sim_world_tp(h.w, 2);
    static tp_req_t reqs[10];
    for (size_t i = 0; i < nb; i++) {
        reqs[i] = (tp_req_t){.cb = noop_cb, .buffered = 1};
        assert_true(tp_send(tp2, to, ucft_ctrl_tag(2, UCFT_CTRL_PROBE),
                            bodies[i], 20, &reqs[i]) != UCFT_ERR_INVALID_PARAM);
    }
    reqs[nb] = (tp_req_t){.cb = noop_cb, .buffered = 1};
    assert_true(tp_send(tp2, to, ucft_ctrl_tag(2, UCFT_CTRL_PROBE), bodies[0],
                        16, &reqs[nb]) != UCFT_ERR_INVALID_PARAM); /* short */
    sim_world_run(h.w, sim_world_now(h.w) + 200 * MS, UINT64_MAX);
    /* The short one is dropped by the standing receive (fixed length). */
    assert_int_equal(h.dets[to]->pb.stats.malformed, nb);
    for (int r = 0; r < n; r++)
        assert_int_equal(det_epoch(h.dets[r]), 0);

    /* Rank 2 dies; rank 3 suspects it; a forged relay "from rank 5" with a
     * wrong nonce does not refute it. */
    uint64_t t0 = sim_world_now(h.w);
    sim_world_kill(h.w, 2);
    sim_world_run(h.w, t0 + 25 * MS, UINT64_MAX); /* probing since 10-21 */
    assert_int_equal(h.dets[to]->pb.suspect, 2);
    uint32_t forged[5] = {4, 3, 2, h.dets[to]->pb.nonce + 1, 0};
    tp_t *tp5 = sim_world_tp(h.w, 5);
    static tp_req_t freq;
    freq = (tp_req_t){.cb = noop_cb, .buffered = 1};
    assert_true(tp_send(tp5, to, ucft_ctrl_tag(5, UCFT_CTRL_PROBE), forged, 20,
                        &freq) != UCFT_ERR_INVALID_PARAM);
    sim_world_run(h.w, t0 + 500 * MS, UINT64_MAX);
    int failed[1] = {2};
    h_assert_all_learned(&h, failed, 1);
    assert_true(h.dets[to]->pb.stats.stale >= 1);
    /* Rank 2's suspicion was confirmed; the next target, rank 1, probed
     * at once after it (det_confirmed_cb), answered. */
    assert_int_equal(h.dets[to]->pb.stats.confirmed, 1);
    assert_int_equal(h.dets[to]->pb.stats.refuted, 1);
    assert_int_equal(h.false_decl, 0);
    h_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detector_no_failure),
        cmocka_unit_test(test_detector_single_failure_16),
        cmocka_unit_test(test_detector_single_failure_1024),
        cmocka_unit_test(test_detector_single_failure_large),
        cmocka_unit_test(test_detector_consecutive),
        cmocka_unit_test(test_detector_burst_batched),
        cmocka_unit_test(test_detector_scattered),
        cmocka_unit_test(test_detector_relay_dies),
        cmocka_unit_test(test_detector_clean_stop),
        cmocka_unit_test(test_detector_fencing),
        cmocka_unit_test(test_detector_fencing_late_notice),
        cmocka_unit_test(test_detector_lost_news),
        cmocka_unit_test(test_detector_split_views),
        cmocka_unit_test(test_detector_reconcile_malformed),
        cmocka_unit_test(test_detector_malformed_control),
        cmocka_unit_test(test_detector_kernel_evidence),
        cmocka_unit_test(test_detector_determinism),
        cmocka_unit_test(test_detector_probe_lossy_link),
        cmocka_unit_test(test_detector_probe_death),
        cmocka_unit_test(test_detector_probe_consecutive),
        cmocka_unit_test(test_detector_probe_starved),
        cmocka_unit_test(test_detector_probe_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
