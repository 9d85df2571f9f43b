/* The detector's pieces without a network: the membership, the binomial
 * links, and the heartbeat state machine driven by a fake transport with a
 * fake clock (jitter guard, late-send warning, stale requests). */
#include "transport/ctrl_kinds.h"
#include "runtime/detector/heartbeat.h"
#include "runtime/detector/membership.h"
#include "runtime/detector/propagate.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define MS 1000000ull

/* A fake transport: sends complete at once and are recorded, receives are
 * kept for the test to complete, the clock is a variable. */
typedef struct fake {
    tp_t tp; /* first */
    uint64_t now;
    tp_req_t *recvs[8];
    uint64_t recv_tags[8];
    int nrecv;
    int sent_dst[64];
    unsigned sent_kind[64];
    int nsent;
} fake_t;

static ucft_status_t fake_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                               size_t len, tp_req_t *req)
{
    fake_t *f = (fake_t *)tp;
    if (f->nsent < 64) {
        f->sent_dst[f->nsent] = dst;
        f->sent_kind[f->nsent] = ucft_tag_payload(tag);
        f->nsent++;
    }
    return UCFT_OK;
}

static ucft_status_t fake_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                               size_t len, tp_req_t *req)
{
    fake_t *f = (fake_t *)tp;
    f->recvs[f->nrecv] = req;
    f->recv_tags[f->nrecv] = tag;
    f->nrecv++;
    return UCFT_INPROGRESS;
}

static void fake_cancel(tp_t *tp, tp_req_t *req) {}

static uint64_t fake_now(tp_t *tp)
{
    return ((fake_t *)tp)->now;
}

static ucft_status_t fake_timer_start(tp_t *tp, ucft_timer_t *t, uint64_t d)
{
    t->deadline = d;
    t->pos = 1;
    return UCFT_OK;
}

static void fake_timer_stop(tp_t *tp, ucft_timer_t *t)
{
    t->pos = 0;
}

static const tp_ops_t fake_ops = {
    .name = "fake",
    .send = fake_send,
    .recv = fake_recv,
    .cancel = fake_cancel,
    .now = fake_now,
    .timer_start = fake_timer_start,
    .timer_stop = fake_timer_stop,
};

static void fake_init(fake_t *f, int rank, int size)
{
    memset(f, 0, sizeof(*f));
    f->tp.ops = &fake_ops;
    f->tp.rank = rank;
    f->tp.size = size;
}

/* Delivers a control message of `kind` from `src` through the receive the
 * state machine posted for that kind. */
static void fake_deliver(fake_t *f, unsigned kind, int src)
{
    for (int i = 0; i < f->nrecv; i++) {
        if (ucft_tag_payload(f->recv_tags[i]) != kind)
            continue;
        tp_req_t *r = f->recvs[i];
        f->recvs[i] = f->recvs[--f->nrecv];
        f->recv_tags[i] = f->recv_tags[f->nrecv];
        r->status = UCFT_OK;
        r->tag = ucft_ctrl_tag((uint32_t)src, kind);
        r->length = 8;
        r->cb(r);
        return;
    }
    fail_msg("no receive posted for kind %u", kind);
}

typedef struct hb_rec {
    int suspected[8];
    int nsuspect;
    uint64_t late_gap;
    int nlate;
    hb_vouch_t vouch;      /* what vouch_cb answers */
    int nvouch;            /* its calls */
    uint64_t vouch_silent; /* the silence it was last asked about */
    uint64_t run_delay;    /* what run_delay_cb answers */
} hb_rec_t;

static void rec_suspect(void *arg, int rank, int kernel)
{
    (void)kernel;
    hb_rec_t *r = arg;
    r->suspected[r->nsuspect++] = rank;
}

static void rec_late(void *arg, uint64_t gap)
{
    hb_rec_t *r = arg;
    r->late_gap = gap;
    r->nlate++;
}

static hb_vouch_t rec_vouch(void *arg, int rank, uint64_t silent)
{
    hb_rec_t *r = arg;
    r->nvouch++;
    r->vouch_silent = silent;
    return r->vouch;
}

static uint64_t rec_run_delay(void *arg)
{
    return ((hb_rec_t *)arg)->run_delay;
}

static void hb_setup(hb_t *hb, fake_t *f, mb_t *mb, hb_rec_t *rec, int rank,
                     int size)
{
    fake_init(f, rank, size);
    mb_init(mb, size);
    memset(rec, 0, sizeof(*rec));
    hb_init(
        hb, &f->tp, mb, &(hb_params_t){.eta_ns = 10 * MS, .delta_ns = 40 * MS},
        &(hb_ops_t){
            .suspect_cb = rec_suspect, .warn_late_cb = rec_late, .arg = rec});
    assert_int_equal(hb_start(hb), UCFT_OK);
}

static void test_detector_unit_membership(void **state)
{
    mb_t mb;
    mb_init(&mb, 10);
    assert_int_equal(mb_live_pred(&mb, 0), 9);
    assert_int_equal(mb_live_succ(&mb, 9), 0);
    assert_int_equal(mb_add(&mb, 9), 1);
    assert_int_equal(mb_add(&mb, 3), 1);
    assert_int_equal(mb_add(&mb, 9), 0);
    assert_int_equal(mb_add(&mb, 10), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(mb_epoch(&mb), 2);
    assert_true(mb_is_failed(&mb, 3) && mb_is_failed(&mb, 9));
    assert_false(mb_is_failed(&mb, 4));
    assert_int_equal(mb_nth(&mb, 0), 9); /* learning order */
    assert_int_equal(mb_nth_sorted(&mb, 0), 3);
    assert_int_equal(mb_live_pred(&mb, 0), 8);
    assert_int_equal(mb_live_succ(&mb, 8), 0);
    assert_int_equal(mb_live_pred(&mb, 4), 2);
    assert_int_equal(mb_ring_dist(&mb, 8, 1), 3);
    for (int r = 0; r < 10; r++)
        mb_add(&mb, r == 5 ? 9 : r);
    assert_int_equal(mb_live_count(&mb), 1);
    assert_int_equal(mb_live_pred(&mb, 5), -1);
    assert_int_equal(mb_live_succ(&mb, 5), -1);
    mb_cleanup(&mb);

    /* Sparse at a million ranks: memory grows with failures only. */
    mb_init(&mb, 1000000);
    for (int r = 999999; r >= 0; r -= 7919)
        assert_int_equal(mb_add(&mb, r), 1);
    assert_true(mb.capacity < 256);
    assert_int_equal(mb_live_pred(&mb, 0), 999998);
    mb_cleanup(&mb);
}

static void test_detector_unit_links(void **state)
{
    fake_t f;
    mb_t mb;
    prop_t p;
    int t[16];

    fake_init(&f, 0, 16);
    mb_init(&mb, 16);
    assert_int_equal(prop_init(&p, &f.tp, &mb, 0,
                               &(prop_ops_t){.news_cb = NULL, .self_cb = NULL}),
                     UCFT_OK);
    assert_int_equal(p.nlinks, 8);
    for (int l = 0; l < 8; l++)
        t[l] = prop_link_target(&p, l);
    int want[8] = {1, 15, 2, 14, 4, 12, 8, -1}; /* +8 == -8 once */
    assert_memory_equal(t, want, sizeof(want));
    /* Distance 1 walks on past failures; larger distances are skipped. */
    mb_add(&mb, 15);
    mb_add(&mb, 14);
    mb_add(&mb, 4);
    assert_int_equal(prop_link_target(&p, 1), 13);
    assert_int_equal(prop_link_target(&p, 3), -1);
    assert_int_equal(prop_link_target(&p, 4), -1);
    prop_cleanup(&p);
    mb_cleanup(&mb);
}

/* Quiet observed rank: suspected once, right after delta. */
static void test_detector_unit_suspect(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup(&hb, &f, &mb, &rec, 5, 10);
    assert_int_equal(hb.observed, 4);
    assert_int_equal(hb.observer, 6);
    for (uint64_t t = 1 * MS; t <= 60 * MS; t += 1 * MS) {
        f.now = t;
        if (t <= 20 * MS)
            fake_deliver(&f, UCFT_CTRL_HB, 4);
        hb_tick_at(&hb, t, t);
        if (t <= 60 * MS && t <= 20 * MS + 40 * MS)
            assert_int_equal(rec.nsuspect, 0);
    }
    /* heard at 20 ms; suspected at the first tick after 60 ms */
    f.now = 61 * MS;
    hb_tick_at(&hb, f.now, f.now);
    assert_int_equal(rec.nsuspect, 1);
    assert_int_equal(rec.suspected[0], 4);
    hb_tick_at(&hb, 62 * MS, 62 * MS);
    assert_int_equal(rec.nsuspect, 1); /* once per target */
    /* Heartbeats from a rank we do not watch change nothing. */
    fake_deliver(&f, UCFT_CTRL_HB, 2);
    assert_int_equal(hb.stats.received, 20);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* Rank 5 of 10 with parameters `p`; views 1: with a kernel view
 * (vouch_cb) and this thread's run-queue wait (run_delay_cb). */
static void hb_setup_p(hb_t *hb, fake_t *f, mb_t *mb, hb_rec_t *rec,
                       hb_params_t p, int views)
{
    fake_init(f, 5, 10);
    mb_init(mb, 10);
    memset(rec, 0, sizeof(*rec));
    hb_ops_t ops = {
        .suspect_cb = rec_suspect, .warn_late_cb = rec_late, .arg = rec};
    if (views) {
        ops.vouch_cb = rec_vouch;
        ops.run_delay_cb = rec_run_delay;
    }
    hb_init(hb, &f->tp, mb, &p, &ops);
    assert_int_equal(hb_start(hb), UCFT_OK);
}

/* eta = 10 ms, delta = 40 ms, with the kernel view and run-queue wait. */
static void hb_setup_kernel(hb_t *hb, fake_t *f, mb_t *mb, hb_rec_t *rec)
{
    hb_setup_p(hb, f, mb, rec,
               (hb_params_t){.eta_ns = 10 * MS, .delta_ns = 40 * MS}, 1);
}

/* Kernel truth: an overdue rank the owner vouches for is held, asked
 * again every eta, and suspected the moment the owner says it is dead;
 * with no view the timeout decides as before. */
static void test_detector_unit_kernel_view(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup_kernel(&hb, &f, &mb, &rec);
    f.now = 1 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4); /* heard at 1 ms: due at 41 ms */
    rec.vouch = HB_VOUCH_ALIVE;        /* starved, say */
    hb_tick_at(&hb, 41 * MS, 41 * MS);
    assert_int_equal(rec.nvouch, 0); /* not overdue yet */
    hb_tick_at(&hb, 42 * MS, 42 * MS);
    assert_int_equal(rec.nvouch, 1);
    assert_int_equal(rec.vouch_silent, 41 * MS);
    assert_int_equal(rec.nsuspect, 0);
    assert_int_equal(hb.stats.vouched, 1);
    /* Held for eta: the next look is after 52 ms, not sooner. */
    hb_tick_at(&hb, 50 * MS, 50 * MS);
    hb_tick_at(&hb, 52 * MS, 52 * MS);
    assert_int_equal(rec.nvouch, 1);
    /* Seconds of starvation: never suspected while vouched for. */
    for (uint64_t t = 53 * MS; t < 3000 * MS; t += 10 * MS)
        hb_tick_at(&hb, t, t);
    assert_int_equal(rec.nsuspect, 0);
    assert_true(rec.nvouch > 140); /* every other 10 ms tick */
    /* A heartbeat ends the episode: a full delta again. */
    f.now = 3000 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    int calls = rec.nvouch;
    hb_tick_at(&hb, 3040 * MS, 3040 * MS);
    assert_int_equal(rec.nvouch, calls);
    /* Stopped (the kernel says so): suspected at once. */
    rec.vouch = HB_VOUCH_DEAD;
    hb_tick_at(&hb, 3041 * MS, 3041 * MS);
    assert_int_equal(rec.nsuspect, 1);
    assert_int_equal(rec.suspected[0], 4);
    assert_int_equal(hb.stats.kernel, 1);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);

    /* No view (another node): the timeout alone, as without vouch_cb. */
    hb_setup_kernel(&hb, &f, &mb, &rec);
    f.now = 1 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    rec.vouch = HB_VOUCH_NONE;
    hb_tick_at(&hb, 42 * MS, 42 * MS);
    assert_int_equal(rec.nvouch, 1);
    assert_int_equal(rec.nsuspect, 1);
    assert_int_equal(hb.stats.kernel, 0);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* Starvation of the observer: its thread waited 30 ms on a run queue
 * since the observed rank was last heard (its ticks were each on time, so
 * the stall credit gave nothing back). The deadline moves by those 30 ms;
 * a rank still silent then is suspected. A wait the stall credit already
 * gave back is not counted twice. */
static void test_detector_unit_own_wait(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup_kernel(&hb, &f, &mb, &rec);
    rec.vouch = HB_VOUCH_NONE;
    rec.run_delay = 1000 * MS; /* the thread's total so far */
    f.now = 100 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4); /* due at 140 ms */
    rec.run_delay += 30 * MS;
    hb_tick_at(&hb, 141 * MS, 141 * MS);
    assert_int_equal(rec.nsuspect, 0);
    assert_int_equal(hb.stats.own_wait, 1);
    assert_int_equal(rec.nvouch, 0);
    hb_tick_at(&hb, 170 * MS, 170 * MS);
    assert_int_equal(rec.nsuspect, 0);
    hb_tick_at(&hb, 171 * MS, 171 * MS);
    assert_int_equal(rec.nsuspect, 1);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);

    /* A tick 25 ms late (credited 25 ms by the stall credit) within a
     * 30 ms wait: 5 ms more, not 30. Heard at 100 ms; due at 140 ms. */
    hb_setup_kernel(&hb, &f, &mb, &rec);
    rec.vouch = HB_VOUCH_NONE;
    rec.run_delay = 1000 * MS;
    f.now = 100 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    rec.run_delay += 30 * MS;
    hb_tick_at(&hb, 135 * MS, 110 * MS); /* 25 ms late: last heard 125 */
    assert_int_equal(hb.stats.credited, 1);
    hb_tick_at(&hb, 166 * MS, 166 * MS); /* past 165: own wait adds 5 */
    assert_int_equal(rec.nsuspect, 0);
    assert_int_equal(hb.stats.own_wait, 1);
    hb_tick_at(&hb, 170 * MS, 170 * MS);
    assert_int_equal(rec.nsuspect, 0);
    hb_tick_at(&hb, 171 * MS, 171 * MS);
    assert_int_equal(rec.nsuspect, 1);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* Starvation-aware timeout where the owner has no kernel view: heartbeats
 * that lately came 100 ms apart (delta 40 ms) give the rank 3 x 100 ms;
 * 500 ms apart, the cap of 20 x delta = 800 ms. Once the gaps are back to
 * normal for two windows (2 s), delta alone again. */
static void test_detector_unit_adapt(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup_p(
        &hb, &f, &mb, &rec,
        (hb_params_t){.eta_ns = 10 * MS, .delta_ns = 40 * MS, .adapt = 1}, 1);
    rec.vouch = HB_VOUCH_NONE;
    uint64_t t;
    /* The gaps grow (a node getting crowded): 30, 60, then 100 ms. */
    f.now = 10 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4); /* the first: no gap yet */
    f.now = 40 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    for (t = 100 * MS; t <= 1000 * MS; t += 100 * MS) {
        hb_tick_at(&hb, t - 1, t - 1); /* would be overdue at delta */
        f.now = t;
        fake_deliver(&f, UCFT_CTRL_HB, 4);
    }
    assert_int_equal(rec.nsuspect, 0);
    assert_true(hb.stats.adapted > 0);
    /* Silent from 1000 ms: asked at 1041 (no view), suspected after 1300. */
    hb_tick_at(&hb, 1041 * MS, 1041 * MS);
    assert_int_equal(rec.nvouch > 0, 1);
    assert_int_equal(rec.nsuspect, 0);
    hb_tick_at(&hb, 1300 * MS, 1300 * MS);
    assert_int_equal(rec.nsuspect, 0);
    hb_tick_at(&hb, 1301 * MS, 1301 * MS);
    assert_int_equal(rec.nsuspect, 1);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);

    /* 500 ms gaps: capped at 800 ms; then normal gaps for 2 s: delta. */
    hb_setup_p(
        &hb, &f, &mb, &rec,
        (hb_params_t){.eta_ns = 10 * MS, .delta_ns = 40 * MS, .adapt = 1}, 0);
    f.now = 1 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    f.now = 500 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    hb_tick_at(&hb, 1300 * MS, 1300 * MS);
    assert_int_equal(rec.nsuspect, 0);
    hb_tick_at(&hb, 1301 * MS, 1301 * MS);
    assert_int_equal(rec.nsuspect, 1);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);

    hb_setup_p(
        &hb, &f, &mb, &rec,
        (hb_params_t){.eta_ns = 10 * MS, .delta_ns = 40 * MS, .adapt = 1}, 0);
    f.now = 500 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    for (t = 510 * MS; t <= 3000 * MS; t += 10 * MS) {
        f.now = t;
        fake_deliver(&f, UCFT_CTRL_HB, 4);
    }
    hb_tick_at(&hb, 3041 * MS, 3041 * MS);
    assert_int_equal(rec.nsuspect, 1); /* delta alone again */
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* A rank still starting (no heartbeat of it yet) is not suspected before
 * first_hb_ns; once heard, delta applies as usual. */
static void test_detector_unit_first_heartbeat(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    for (int heard = 0; heard < 2; heard++) {
        hb_setup_p(&hb, &f, &mb, &rec,
                   (hb_params_t){.eta_ns = 10 * MS,
                                 .delta_ns = 40 * MS,
                                 .first_hb_ns = 500 * MS},
                   0);
        if (heard) {
            f.now = 10 * MS;
            fake_deliver(&f, UCFT_CTRL_HB, 4);
            hb_tick_at(&hb, 51 * MS, 51 * MS);
            assert_int_equal(rec.nsuspect, 1);
        } else {
            hb_tick_at(&hb, 200 * MS, 200 * MS);
            hb_tick_at(&hb, 500 * MS, 500 * MS);
            assert_int_equal(rec.nsuspect, 0);
            hb_tick_at(&hb, 501 * MS, 501 * MS);
            assert_int_equal(rec.nsuspect, 1);
        }
        hb_stop(&hb, 0);
        mb_cleanup(&mb);
    }
}

/* Following: a heartbeat from the observed rank makes us send ours with
 * it when ours is at least eta/2 old, and wait for the next one when it is
 * younger; the tick only backs up, 1.1 eta later. The first live rank of
 * the ring never follows. eta = 10 ms. */
static void test_detector_unit_follow(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup(&hb, &f, &mb, &rec, 5, 10);
    assert_int_equal(f.nsent, 1); /* the first heartbeat, at 0 */
    f.now = 3 * MS;               /* ours is 3 ms old: wait for the next one */
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    assert_int_equal(f.nsent, 1);
    assert_int_equal(hb.tick.deadline, 14 * MS);
    hb_tick_at(&hb, 9 * MS, 9 * MS); /* 0.9 eta: no longer due */
    assert_int_equal(f.nsent, 1);
    f.now = 12 * MS; /* 12 ms old: goes out with this one */
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    assert_int_equal(f.nsent, 2);
    assert_int_equal(f.sent_dst[1], 6);
    assert_int_equal(f.sent_kind[1], UCFT_CTRL_HB);
    assert_int_equal(hb.stats.followed, 1);
    assert_int_equal(hb.tick.deadline, 23 * MS);
    f.now = 23 * MS; /* rank 4 fell silent: the backup sends */
    hb_tick_at(&hb, f.now, f.now);
    assert_int_equal(f.nsent, 3);
    assert_int_equal(hb.stats.followed, 1);
    assert_int_equal(rec.nlate, 0);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);

    hb_setup(&hb, &f, &mb, &rec, 0, 10); /* observes 9: leads */
    f.now = 7 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 9);
    assert_int_equal(f.nsent, 1);
    assert_int_equal(hb.stats.followed, 0);
    hb_tick_at(&hb, 9 * MS, 9 * MS);
    assert_int_equal(f.nsent, 2);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* The observer itself is descheduled: its tick fires 50 ms late, after the
 * deadline. The lateness is credited back to the observed rank (the
 * silence was ours); the heartbeats that were waiting arrive and the next
 * tick is quiet. Without them it suspects one stall later. */
static void test_detector_unit_jitter_guard(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup(&hb, &f, &mb, &rec, 5, 10);
    f.now = 1 * MS;
    fake_deliver(&f, UCFT_CTRL_HB, 4);
    hb_tick_at(&hb, f.now, f.now); /* last heard 1 ms */
    f.now = 52 * MS;               /* tick due at 2 ms fires at 52 ms */
    hb_tick_at(&hb, f.now, 2 * MS);
    assert_int_equal(rec.nsuspect, 0);
    assert_int_equal(hb.stats.credited, 1);
    /* Our own heartbeat was 51 ms late: warned. */
    assert_int_equal(rec.nlate, 1);
    assert_true(rec.late_gap >= 20 * MS);
    f.now = 52 * MS + 100;
    fake_deliver(&f, UCFT_CTRL_HB, 4); /* waiting in the network */
    f.now = 53 * MS;
    hb_tick_at(&hb, f.now, f.now);
    assert_int_equal(rec.nsuspect, 0);

    /* Same again but the observed rank is really dead: heard last at
     * 52.0001 ms, a tick 56 ms late credits 56 ms, so the deadline moves to
     * 108.0001 + delta (40 ms): quiet on-time ticks until then, suspicion
     * at the first tick after it. */
    f.now = 110 * MS;
    hb_tick_at(&hb, f.now, 54 * MS);
    assert_int_equal(rec.nsuspect, 0);
    assert_int_equal(hb.stats.credited, 2);
    for (uint64_t t = 111 * MS; t <= 148 * MS; t += MS) {
        hb_tick_at(&hb, t, t);
        assert_int_equal(rec.nsuspect, 0);
    }
    hb_tick_at(&hb, 149 * MS, 149 * MS);
    assert_int_equal(rec.nsuspect, 1);

    /* A late tick when we were already past the deadline at the previous
     * tick is not guarded. */
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
    hb_setup(&hb, &f, &mb, &rec, 5, 10);
    f.now = 41 * MS;
    hb_tick_at(&hb, f.now, f.now - 1 * MS + 1); /* on time, but quiet */
    assert_int_equal(rec.nsuspect, 1);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* A request from farther than our observer is stale while the observer
 * lives; once the observer is known failed, heartbeats move on anyway. */
static void test_detector_unit_stale_request(void **state)
{
    fake_t f;
    mb_t mb;
    hb_t hb;
    hb_rec_t rec;

    hb_setup(&hb, &f, &mb, &rec, 5, 10);
    f.nsent = 0;
    fake_deliver(&f, UCFT_CTRL_HB_REQUEST, 8);
    assert_int_equal(hb.stats.stale, 1);
    assert_int_equal(hb.observer, 6);
    assert_int_equal(f.nsent, 0);
    /* 6 and 7 fail: the heartbeats go to 8 without a new request. */
    mb_add(&mb, 6);
    mb_add(&mb, 7);
    hb_membership_changed(&hb);
    assert_int_equal(hb.observer, 8);
    assert_int_equal(f.nsent, 1);
    assert_int_equal(f.sent_dst[0], 8);
    assert_int_equal(f.sent_kind[0], UCFT_CTRL_HB);
    /* A request from 9 is now stale; one from 8 is accepted. */
    fake_deliver(&f, UCFT_CTRL_HB_REQUEST, 9);
    assert_int_equal(hb.stats.stale, 2);
    fake_deliver(&f, UCFT_CTRL_HB_REQUEST, 8);
    assert_int_equal(hb.observer, 8);
    /* Messages from a failed rank are dropped. */
    fake_deliver(&f, UCFT_CTRL_HB_REQUEST, 6);
    assert_int_equal(hb.observer, 8);
    assert_int_equal(hb.stats.fenced, 1);
    /* The observed rank fails: walk to the next live predecessor and ask
     * it for heartbeats. */
    mb_add(&mb, 4);
    f.nsent = 0;
    hb_membership_changed(&hb);
    assert_int_equal(hb.observed, 3);
    assert_int_equal(f.sent_dst[0], 3);
    assert_int_equal(f.sent_kind[0], UCFT_CTRL_HB_REQUEST);
    hb_stop(&hb, 0);
    mb_cleanup(&mb);
}

/* Clean stop: the observer is told, and then never suspects. */
static void test_detector_unit_stop(void **state)
{
    fake_t f, g;
    mb_t mb, mg;
    hb_t hb, hg;
    hb_rec_t rec, rg;

    hb_setup(&hb, &f, &mb, &rec, 5, 10);
    hb_setup(&hg, &g, &mg, &rg, 6, 10);
    f.nsent = 0;
    hb_stop(&hb, 1);
    assert_int_equal(f.nsent, 1);
    assert_int_equal(f.sent_dst[0], 6);
    assert_int_equal(f.sent_kind[0], UCFT_CTRL_HB_STOP);
    fake_deliver(&g, UCFT_CTRL_HB_STOP, 5);
    assert_int_equal(hg.observed, -1);
    for (uint64_t t = 1 * MS; t < 500 * MS; t += 1 * MS)
        hb_tick_at(&hg, t, t);
    assert_int_equal(rg.nsuspect, 0);
    hb_stop(&hg, 0);
    mb_cleanup(&mb);
    mb_cleanup(&mg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detector_unit_membership),
        cmocka_unit_test(test_detector_unit_links),
        cmocka_unit_test(test_detector_unit_suspect),
        cmocka_unit_test(test_detector_unit_follow),
        cmocka_unit_test(test_detector_unit_jitter_guard),
        cmocka_unit_test(test_detector_unit_kernel_view),
        cmocka_unit_test(test_detector_unit_own_wait),
        cmocka_unit_test(test_detector_unit_adapt),
        cmocka_unit_test(test_detector_unit_first_heartbeat),
        cmocka_unit_test(test_detector_unit_stale_request),
        cmocka_unit_test(test_detector_unit_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
