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
} hb_rec_t;

static void rec_suspect(void *arg, int rank)
{
    hb_rec_t *r = arg;
    r->suspected[r->nsuspect++] = rank;
}

static void rec_late(void *arg, uint64_t gap)
{
    hb_rec_t *r = arg;
    r->late_gap = gap;
    r->nlate++;
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
        cmocka_unit_test(test_detector_unit_stale_request),
        cmocka_unit_test(test_detector_unit_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
