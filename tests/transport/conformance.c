/*
 * Transport conformance suite: the contract of transport/transport.h
 * (T1-T9) checked through the interface only, so that every backend runs
 * the same cases (harness.h; this binary is linked with one harness).
 *
 * Backends may complete operations inline (UCFT_OK) or later through the
 * callback; the helpers accept both, but a callback must never run inside
 * the posting call (T3) and every request completes exactly once.
 */
#include "harness.h"
#include "transport/ctrl_kinds.h"

#include "runtime/base/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NRANKS 4

typedef struct fixture {
    tp_harness_t *h;
    tp_t *tp[NRANKS];
} fixture_t;

/* A request with a completion counter. */
typedef struct creq {
    tp_req_t req; /* first */
    int done;
} creq_t;

static void creq_cb(tp_req_t *r)
{
    ((creq_t *)r)->done++;
}

static int creq_done(void *arg)
{
    return ((creq_t *)arg)->done > 0;
}

static void creq_init(creq_t *c)
{
    memset(c, 0, sizeof(*c));
    c->req.cb = creq_cb;
}

/* Folds an immediate outcome into the request: the status is then in
 * req.status and done is 1, as if the callback had run. */
static ucft_status_t settle_post(creq_t *c, ucft_status_t st, int is_recv)
{
    if (st == UCFT_INPROGRESS) {
        assert_int_equal(c->done, 0); /* T3 */
        return st;
    }
    assert_int_equal(c->done, 0); /* T2: no callback for an inline result */
    if (st != UCFT_OK || !is_recv)
        c->req.status = st;
    c->done = 1;
    return st;
}

static ucft_status_t post_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                               size_t len, creq_t *c)
{
    creq_init(c);
    return settle_post(c, tp_send(tp, dst, tag, buf, len, &c->req), 0);
}

static ucft_status_t post_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                               size_t len, creq_t *c)
{
    creq_init(c);
    return settle_post(c, tp_recv(tp, tag, mask, buf, len, &c->req), 1);
}

static uint64_t p2p(int src, uint32_t utag)
{
    return ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, (uint32_t)src, utag);
}

static void wait_done(fixture_t *f, creq_t *c)
{
    assert_true(harness_wait(f->h, creq_done, c, HARNESS_WAIT_MSG));
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->h = harness_create(NRANKS, f->tp);
    assert_non_null(f->h);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    harness_destroy(f->h);
    free(f);
    return 0;
}

static void test_conformance_send_recv(void **state)
{
    fixture_t *f = *state;
    unsigned char out[100], in[100];
    creq_t s, r;

    for (int i = 0; i < 100; i++)
        out[i] = (unsigned char)(i * 7 + 3);
    memset(in, 0, sizeof(in));
    post_recv(f->tp[0], p2p(1, 42), UCFT_TAG_FULL_MASK, in, sizeof(in), &r);
    post_send(f->tp[1], 0, p2p(1, 42), out, sizeof(out), &s);
    wait_done(f, &r);
    wait_done(f, &s);
    harness_settle(f->h);
    assert_int_equal(r.done, 1);
    assert_int_equal(s.done, 1);
    assert_int_equal(s.req.status, UCFT_OK);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_int_equal(r.req.length, sizeof(out));
    assert_true(r.req.tag == p2p(1, 42));
    assert_memory_equal(in, out, sizeof(out));
}

static int probe_p2p(void *arg)
{
    tp_t *tp = arg;
    tp_probe_info_t info;
    return tp_probe(tp, 0, 0, &info) == UCFT_OK;
}

static void test_conformance_unexpected(void **state)
{
    fixture_t *f = *state;
    uint64_t v = 0x1122334455667788ull, got = 0;
    creq_t s, r;

    post_send(f->tp[2], 0, p2p(2, 9), &v, sizeof(v), &s);
    assert_true(harness_wait(f->h, probe_p2p, f->tp[0], HARNESS_WAIT_MSG));
    post_recv(f->tp[0], p2p(2, 9), UCFT_TAG_FULL_MASK, &got, sizeof(got), &r);
    wait_done(f, &r);
    wait_done(f, &s);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_int_equal(r.req.length, sizeof(v));
    assert_true(got == v);
}

#define FIFO_N 48

/* T1: one sender's messages arrive in order, whatever their sizes, whether
 * the receives were posted before or after. */
static void test_conformance_fifo_per_pair(void **state)
{
    fixture_t *f = *state;
    static unsigned char out[FIFO_N][256], in[FIFO_N][256];
    creq_t s[FIFO_N], r[FIFO_N];

    memset(in, 0xff, sizeof(in));
    for (int i = 0; i < FIFO_N / 2; i++)
        post_recv(f->tp[0], p2p(1, 5), UCFT_TAG_FULL_MASK, in[i], 256, &r[i]);
    for (int i = 0; i < FIFO_N; i++) {
        size_t len = (size_t)(4 + (i * 37) % 250);
        memset(out[i], i, len);
        out[i][0] = (unsigned char)i;
        post_send(f->tp[1], 0, p2p(1, 5), out[i], len, &s[i]);
    }
    for (int i = 0; i < FIFO_N; i++)
        wait_done(f, &s[i]);
    harness_settle(f->h);
    for (int i = FIFO_N / 2; i < FIFO_N; i++)
        post_recv(f->tp[0], p2p(1, 5), UCFT_TAG_FULL_MASK, in[i], 256, &r[i]);
    for (int i = 0; i < FIFO_N; i++) {
        wait_done(f, &r[i]);
        assert_int_equal(r[i].req.status, UCFT_OK);
        assert_int_equal(in[i][0], i);
        assert_int_equal(r[i].req.length, (size_t)(4 + (i * 37) % 250));
    }
}

/* T1: receives match in post order, also when a wildcard receive was
 * posted first. */
static void test_conformance_recv_post_order(void **state)
{
    fixture_t *f = *state;
    int a = -1, b = -1, x = 1, y = 2;
    creq_t ra, rb, sx, sy;

    post_recv(f->tp[0], 0, ucft_tag_mask(1, 1), &a, sizeof(a), &ra);
    post_recv(f->tp[0], p2p(3, 8), UCFT_TAG_FULL_MASK, &b, sizeof(b), &rb);
    post_send(f->tp[3], 0, p2p(3, 8), &x, sizeof(x), &sx);
    post_send(f->tp[3], 0, p2p(3, 8), &y, sizeof(y), &sy);
    wait_done(f, &ra);
    wait_done(f, &rb);
    assert_int_equal(a, 1);
    assert_int_equal(b, 2);
    assert_true(ra.req.tag == p2p(3, 8));
}

static void test_conformance_any_source(void **state)
{
    fixture_t *f = *state;
    int in[3] = {-1, -1, -1}, out[NRANKS], seen = 0;
    creq_t r[3], s[NRANKS];

    for (int i = 0; i < 3; i++)
        post_recv(f->tp[0], p2p(0, 77), ucft_tag_mask(1, 0), &in[i],
                  sizeof(int), &r[i]);
    for (int src = 1; src < NRANKS; src++) {
        out[src] = 100 + src;
        post_send(f->tp[src], 0, p2p(src, 77), &out[src], sizeof(int), &s[src]);
    }
    for (int i = 0; i < 3; i++) {
        wait_done(f, &r[i]);
        assert_int_equal(r[i].req.status, UCFT_OK);
        int src = (int)ucft_tag_src(r[i].req.tag);
        assert_true(src >= 1 && src < NRANKS);
        assert_int_equal(in[i], 100 + src);
        assert_int_equal(ucft_tag_payload(r[i].req.tag), 77);
        seen |= 1 << src;
    }
    assert_int_equal(seen, 0xe);
}

/* ANY_TAG clears the payload only: class and context still match, so a
 * collective message is not taken by a point-to-point wildcard. */
static void test_conformance_any_tag_keeps_class(void **state)
{
    fixture_t *f = *state;
    int v1 = 11, v2 = 22, got = 0, got2 = 0;
    uint64_t coll =
        ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 1, ucft_tag_coll_payload(3, 1));
    tp_probe_info_t info;
    creq_t s1, s2, r, r2;

    post_send(f->tp[1], 0, coll, &v1, sizeof(v1), &s1);
    post_send(f->tp[1], 0, p2p(1, 1234), &v2, sizeof(v2), &s2);
    post_recv(f->tp[0], p2p(0, 0), ucft_tag_mask(1, 1), &got, sizeof(got), &r);
    wait_done(f, &r);
    assert_int_equal(got, 22);
    assert_int_equal(ucft_tag_payload(r.req.tag), 1234);
    assert_int_equal(ucft_tag_src(r.req.tag), 1);
    harness_settle(f->h);
    assert_int_equal(tp_probe(f->tp[0], coll, UCFT_TAG_FULL_MASK, &info),
                     UCFT_OK);
    post_recv(f->tp[0], coll, UCFT_TAG_FULL_MASK, &got2, sizeof(got2), &r2);
    wait_done(f, &r2);
    assert_int_equal(got2, 11);
}

/* T4: a cancelled receive completes once with UCFT_ERR_CANCELED and takes
 * no later message; cancelling a completed request changes nothing. */
static void test_conformance_cancel(void **state)
{
    fixture_t *f = *state;
    int got = -1, v = 5, got2 = -1;
    creq_t r, s, r2;
    tp_probe_info_t info;

    assert_int_equal(post_recv(f->tp[0], p2p(1, 5), UCFT_TAG_FULL_MASK, &got,
                               sizeof(got), &r),
                     UCFT_INPROGRESS);
    tp_cancel(f->tp[0], &r.req);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_CANCELED);
    post_send(f->tp[1], 0, p2p(1, 5), &v, sizeof(v), &s);
    wait_done(f, &s);
    harness_settle(f->h);
    assert_int_equal(r.done, 1);
    assert_int_equal(got, -1);
    assert_int_equal(tp_probe(f->tp[0], p2p(1, 5), UCFT_TAG_FULL_MASK, &info),
                     UCFT_OK);
    post_recv(f->tp[0], p2p(1, 5), UCFT_TAG_FULL_MASK, &got2, sizeof(got2),
              &r2);
    wait_done(f, &r2);
    assert_int_equal(got2, 5);
    tp_cancel(f->tp[0], &r2.req);
    harness_settle(f->h);
    assert_int_equal(r2.done, 1);
    assert_int_equal(r2.req.status, UCFT_OK);
}

/* T2: a message longer than the buffer completes the receive with
 * UCFT_ERR_TRUNCATED and nothing is written past the buffer; posted and
 * unexpected. */
static void test_conformance_truncation(void **state)
{
    fixture_t *f = *state;
    unsigned char out[64], in[32];
    creq_t s, r;

    for (int i = 0; i < 64; i++)
        out[i] = (unsigned char)(i + 1);
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        memset(in, 0xee, sizeof(in));
        if (!unexpected)
            post_recv(f->tp[0], p2p(2, 3), UCFT_TAG_FULL_MASK, in, 16, &r);
        post_send(f->tp[2], 0, p2p(2, 3), out, sizeof(out), &s);
        if (unexpected) {
            assert_true(
                harness_wait(f->h, probe_p2p, f->tp[0], HARNESS_WAIT_MSG));
            post_recv(f->tp[0], p2p(2, 3), UCFT_TAG_FULL_MASK, in, 16, &r);
        }
        wait_done(f, &r);
        wait_done(f, &s);
        assert_int_equal(r.req.status, UCFT_ERR_TRUNCATED);
        for (int i = 16; i < 32; i++)
            assert_int_equal(in[i], 0xee);
        if (r.req.length == 16)
            assert_memory_equal(in, out, 16);
        else
            assert_true(r.req.length < 16);
    }
}

static void test_conformance_probe(void **state)
{
    fixture_t *f = *state;
    char out[40] = "probe me", in[40];
    tp_probe_info_t info;
    creq_t s, r;

    assert_int_equal(tp_probe(f->tp[0], 0, 0, &info), UCFT_ERR_NO_MESSAGE);
    post_send(f->tp[3], 0, p2p(3, 600), out, sizeof(out), &s);
    assert_true(harness_wait(f->h, probe_p2p, f->tp[0], HARNESS_WAIT_MSG));
    memset(&info, 0, sizeof(info));
    assert_int_equal(
        tp_probe(f->tp[0], p2p(0, 600), ucft_tag_mask(1, 0), &info), UCFT_OK);
    assert_true(info.tag == p2p(3, 600));
    assert_int_equal(info.length, sizeof(out));
    assert_int_equal(tp_probe(f->tp[0], p2p(3, 601), UCFT_TAG_FULL_MASK, &info),
                     UCFT_ERR_NO_MESSAGE);
    assert_int_equal(tp_probe(f->tp[0], p2p(2, 600), UCFT_TAG_FULL_MASK, &info),
                     UCFT_ERR_NO_MESSAGE);
    /* Probing does not consume. */
    assert_int_equal(tp_probe(f->tp[0], p2p(3, 600), UCFT_TAG_FULL_MASK, &info),
                     UCFT_OK);
    post_recv(f->tp[0], p2p(3, 600), UCFT_TAG_FULL_MASK, in, sizeof(in), &r);
    wait_done(f, &r);
    assert_string_equal(in, "probe me");
    assert_int_equal(tp_probe(f->tp[0], 0, 0, &info), UCFT_ERR_NO_MESSAGE);
}

typedef struct notes {
    int count[NRANKS][NRANKS]; /* [observer][failed] */
    ucft_status_t why;
} notes_t;

typedef struct note_arg {
    notes_t *notes;
    int self;
} note_arg_t;

static void note_cb(void *arg, int rank, ucft_status_t why)
{
    note_arg_t *a = arg;
    assert_true(rank >= 0 && rank < NRANKS);
    a->notes->count[a->self][rank]++;
    a->notes->why = why;
}

typedef struct notified {
    notes_t *notes;
    int failed;
    int observers; /* bitmask */
} notified_t;

static int all_notified(void *arg)
{
    notified_t *n = arg;
    for (int r = 0; r < NRANKS; r++)
        if ((n->observers & (1 << r)) && n->notes->count[r][n->failed] == 0)
            return 0;
    return 1;
}

/* T5: survivors are told once; after peer_failed() a pending send fails,
 * a later send fails at once, receives are not completed by it, and other
 * peers are unaffected. */
static void test_conformance_peer_failure(void **state)
{
    fixture_t *f = *state;
    notes_t notes = {0};
    note_arg_t args[NRANKS];
    notified_t w = {.notes = &notes, .failed = 3, .observers = 0x7};
    int v = 1, got = -1, got2 = -1;
    creq_t s, s2, r, r2, s3;

    for (int i = 0; i < NRANKS; i++) {
        args[i] = (note_arg_t){&notes, i};
        f->tp[i]->peer_error_cb = note_cb;
        f->tp[i]->peer_error_arg = &args[i];
    }
    post_recv(f->tp[0], p2p(3, 1), UCFT_TAG_FULL_MASK, &got, sizeof(got), &r);
    /* A backend reports the peers it watches (T5); the runtime watches the
     * sources of its receives, here every observer watches rank 3. */
    for (int o = 0; o < 3; o++)
        tp_watch(f->tp[o], 3);
    harness_kill(f->h, 3);
    assert_true(harness_wait(f->h, all_notified, &w, HARNESS_WAIT_FAILURE));
    assert_int_equal(notes.why, UCFT_ERR_PROC_FAILED);

    if (post_send(f->tp[0], 3, p2p(0, 1), &v, sizeof(v), &s) ==
        UCFT_INPROGRESS) {
        tp_peer_failed(f->tp[0], 3);
        wait_done(f, &s);
        assert_int_equal(s.req.status, UCFT_ERR_PROC_FAILED);
    } else {
        tp_peer_failed(f->tp[0], 3);
    }
    creq_init(&s2);
    assert_int_equal(tp_send(f->tp[0], 3, p2p(0, 1), &v, sizeof(v), &s2.req),
                     UCFT_ERR_PROC_FAILED);
    harness_settle(f->h);
    assert_int_equal(s2.done, 0);
    assert_int_equal(r.done, 0); /* receives are the owner's to cancel */
    tp_cancel(f->tp[0], &r.req);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_CANCELED);

    /* Other peers still work. */
    post_recv(f->tp[0], p2p(1, 2), UCFT_TAG_FULL_MASK, &got2, sizeof(got2),
              &r2);
    post_send(f->tp[1], 0, p2p(1, 2), &v, sizeof(v), &s3);
    wait_done(f, &r2);
    assert_int_equal(got2, 1);
    harness_settle(f->h);
    for (int o = 0; o < 3; o++) {
        assert_int_equal(notes.count[o][3], 1);
        for (int x = 0; x < 3; x++)
            assert_int_equal(notes.count[o][x], 0);
    }
}

/* T5: once the owner declared a peer failed, its messages that arrive
 * afterwards are dropped. */
static void test_conformance_drop_from_failed(void **state)
{
    fixture_t *f = *state;
    int v = 9, got = -1, w = 10, got2 = -1;
    creq_t s, r, s2, r2;

    post_send(f->tp[1], 0, p2p(1, 4), &v, sizeof(v), &s);
    tp_peer_failed(f->tp[0], 1);
    post_recv(f->tp[0], p2p(1, 4), UCFT_TAG_FULL_MASK, &got, sizeof(got), &r);
    post_recv(f->tp[0], p2p(2, 4), UCFT_TAG_FULL_MASK, &got2, sizeof(got2),
              &r2);
    post_send(f->tp[2], 0, p2p(2, 4), &w, sizeof(w), &s2);
    wait_done(f, &r2);
    assert_int_equal(got2, 10);
    harness_settle(f->h);
    /* The fenced message never completes the receive (T5); the buffer's
     * contents are undefined until completion, so `got` is not checked. */
    assert_int_equal(r.done, 0);
    tp_cancel(f->tp[0], &r.req);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_CANCELED);
}

/* T5, the other half: a message that was already here when the owner
 * declared its sender failed is still received (the sender sent it while
 * alive); only what arrives afterwards is dropped. Checked through a
 * receive and a probe, with a second sender's message in between. */
static void test_conformance_kept_from_before(void **state)
{
    fixture_t *f = *state;
    int a = 31, b = 32, c = 33, got = -1;
    creq_t s1, s2, s3, r;

    post_send(f->tp[1], 0, p2p(1, 7), &a, sizeof(a), &s1);
    post_send(f->tp[1], 0, p2p(1, 8), &b, sizeof(b), &s2);
    wait_done(f, &s1);
    wait_done(f, &s2);
    harness_settle(f->h); /* both are here, unexpected */
    tp_peer_failed(f->tp[0], 1);
    tp_probe_info_t pi;
    assert_int_equal(tp_probe(f->tp[0], p2p(1, 8), UCFT_TAG_FULL_MASK, &pi),
                     UCFT_OK);
    assert_int_equal(pi.tag, p2p(1, 8));
    assert_int_equal(pi.length, sizeof(int));
    /* Any tag from rank 1: the first one sent comes first (T1). */
    post_recv(f->tp[0], p2p(1, 0), ucft_tag_mask(0, 1), &got, sizeof(got), &r);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_int_equal(got, 31);
    assert_int_equal(r.req.tag, p2p(1, 7));
    post_recv(f->tp[0], p2p(1, 8), UCFT_TAG_FULL_MASK, &got, sizeof(got), &r);
    wait_done(f, &r);
    assert_int_equal(got, 32);
    /* Sent after the declaration: dropped. */
    post_send(f->tp[1], 0, p2p(1, 9), &c, sizeof(c), &s3);
    harness_settle(f->h);
    got = -1;
    post_recv(f->tp[0], p2p(1, 9), UCFT_TAG_FULL_MASK, &got, sizeof(got), &r);
    harness_settle(f->h);
    assert_int_equal(r.done, 0);
    tp_cancel(f->tp[0], &r.req);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_CANCELED);
}

/* disconnect (optional op): the connection goes, the peer is not fenced:
 * its messages still arrive, and sending to it again connects again, both
 * ways, several times. */
static void test_conformance_disconnect_keeps_peer(void **state)
{
    fixture_t *f = *state;
    creq_t s, r;

    for (int round = 0; round < 3; round++) {
        int v = 20 + round, got = -1;
        tp_disconnect(f->tp[0], 1);
        post_recv(f->tp[0], p2p(1, 5), UCFT_TAG_FULL_MASK, &got, sizeof(got),
                  &r);
        post_send(f->tp[1], 0, p2p(1, 5), &v, sizeof(v), &s);
        wait_done(f, &r);
        wait_done(f, &s);
        assert_int_equal(r.req.status, UCFT_OK);
        assert_int_equal(got, v);
        assert_int_equal(s.req.status, UCFT_OK);
        /* And from the side that disconnected. */
        int back = -1;
        post_recv(f->tp[1], p2p(0, 6), UCFT_TAG_FULL_MASK, &back, sizeof(back),
                  &r);
        post_send(f->tp[0], 1, p2p(0, 6), &v, sizeof(v), &s);
        wait_done(f, &s);
        wait_done(f, &r);
        assert_int_equal(s.req.status, UCFT_OK);
        assert_int_equal(back, v);
    }
    tp_disconnect(f->tp[0], 0);  /* itself: nothing */
    tp_disconnect(f->tp[0], -1); /* out of range: nothing */
    tp_disconnect(f->tp[0], NRANKS);
}

typedef struct tfire {
    ucft_timer_t t;
    tp_t *tp;
    int fired;
    uint64_t at;
} tfire_t;

static void tfire_cb(ucft_timer_t *t)
{
    tfire_t *x = t->arg;
    x->fired++;
    x->at = tp_now(x->tp);
}

static int tfire_done(void *arg)
{
    return ((tfire_t *)arg)->fired > 0;
}

/* T6: timers fire from progress at or after their deadline; a stopped
 * timer does not fire; the clock is monotonic. */
static void test_conformance_timers(void **state)
{
    fixture_t *f = *state;
    tp_t *tp = f->tp[1];
    tfire_t a = {.tp = tp}, b = {.tp = tp};
    uint64_t t0 = tp_now(tp);

    a.t.cb = b.t.cb = tfire_cb;
    a.t.arg = &a;
    b.t.arg = &b;
    assert_int_equal(tp_timer_start(tp, &b.t, t0 + 1 * UCFT_NSEC_PER_MSEC),
                     UCFT_OK);
    assert_int_equal(tp_timer_start(tp, &a.t, t0 + 2 * UCFT_NSEC_PER_MSEC),
                     UCFT_OK);
    assert_int_equal(a.fired + b.fired, 0);
    assert_true(tp->ops->timer_next(tp) == t0 + 1 * UCFT_NSEC_PER_MSEC);
    tp_timer_stop(tp, &b.t);
    assert_true(tp->ops->timer_next(tp) == t0 + 2 * UCFT_NSEC_PER_MSEC);
    assert_true(harness_wait(f->h, tfire_done, &a, HARNESS_WAIT_MSG));
    assert_int_equal(a.fired, 1);
    assert_true(a.at >= t0 + 2 * UCFT_NSEC_PER_MSEC);
    assert_int_equal(b.fired, 0);
    assert_true(tp->ops->timer_next(tp) == UINT64_MAX);
    assert_true(tp_now(tp) >= a.at);
}

/* T7: a buffered send of a large message completes with nobody receiving
 * it (with UCX: no rendezvous), and it can still be received, whole,
 * afterwards. */
static void test_conformance_coll_send_buffered(void **state)
{
    fixture_t *f = *state;
    const size_t len = 4u << 20;
    unsigned char *out = malloc(len), *in = calloc(1, len);
    uint64_t tag = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 1, 77);
    creq_t s, r;

    assert_non_null(out);
    assert_non_null(in);
    for (size_t i = 0; i < len; i++)
        out[i] = (unsigned char)(i * 13 + 1);
    creq_init(&s);
    s.req.buffered = 1;
    settle_post(&s, tp_send(f->tp[1], 0, tag, out, len, &s.req), 0);
    wait_done(f, &s);
    assert_int_equal(s.req.status, UCFT_OK);
    memset(out, 0, len); /* the message is the sender's no longer */
    post_recv(f->tp[0], tag, UCFT_TAG_FULL_MASK, in, len, &r);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_int_equal(r.req.length, len);
    for (size_t i = 0; i < len; i++)
        if (in[i] != (unsigned char)(i * 13 + 1))
            fail_msg("byte %zu is %u", i, in[i]);
    free(out);
    free(in);
}

/* T7, the other half: a large send that is not buffered waits for its
 * receive (UCX's rendezvous), and a receive that truncates it, as the
 * runtime's sweeper of late messages does with a small scratch buffer,
 * releases it. */
static void test_conformance_rndv_send_waits(void **state)
{
    fixture_t *f = *state;
    const size_t len = 4u << 20;
    unsigned char *out = malloc(len), small[8] = {0};
    uint64_t tag = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 1, 78);
    creq_t s, r;

    assert_non_null(out);
    memset(out, 0x5a, len);
    creq_init(&s);
    settle_post(&s, tp_send(f->tp[1], 0, tag, out, len, &s.req), 0);
    harness_settle(f->h);
    assert_int_equal(s.done, 0);
    post_recv(f->tp[0], tag, UCFT_TAG_FULL_MASK, small, sizeof(small), &r);
    wait_done(f, &r);
    wait_done(f, &s);
    assert_int_equal(r.req.status, UCFT_ERR_TRUNCATED);
    assert_true(r.req.tag == tag); /* who sent what, even when truncated */
    assert_int_equal(s.req.status, UCFT_OK);
    free(out);
}

/* Control messages (class CTRL; the UCP backend carries them apart from
 * the tagged data path, tp_ucp_ctrl.c) keep the contract: an ANY_SOURCE
 * receive names the sender in the tag; a message that came first waits,
 * in arrival order, for a receive or a probe; classes never mix (an
 * any-source, any-tag receive of another class takes none); truncation
 * (T2); cancel (T4); a declared sender's message that arrives afterwards
 * is dropped while one from before is still received (T5). */
static uint64_t ctrl(int src, unsigned kind)
{
    return ucft_ctrl_tag((uint32_t)src, kind);
}

static void test_conformance_ctrl_class(void **state)
{
    fixture_t *f = *state;
    const uint64_t any = ucft_ctrl_mask_any_source();
    uint32_t a = 101, b = 102, c = 103, big[8] = {0}, got = 0, small = 0;
    creq_t s1, s2, s3, s4, r, rp;
    tp_probe_info_t pi;

    /* Posted first: rank 2's message completes it, its tag names rank 2. */
    assert_int_equal(
        post_recv(f->tp[0], ctrl(0, 7), any, &got, sizeof(got), &r),
        UCFT_INPROGRESS);
    post_send(f->tp[2], 0, ctrl(2, 7), &a, sizeof(a), &s1);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_int_equal(got, 101);
    assert_true(r.req.tag == ctrl(2, 7));
    assert_int_equal(r.req.length, sizeof(got));

    /* Sent first: two messages of rank 1 wait in arrival order; an
     * any-source, any-tag point-to-point receive takes neither. */
    post_recv(f->tp[0], p2p(0, 0), ucft_tag_mask(1, 1), &got, sizeof(got), &rp);
    post_send(f->tp[1], 0, ctrl(1, 7), &b, sizeof(b), &s2);
    post_send(f->tp[1], 0, ctrl(1, 7), &c, sizeof(c), &s3);
    wait_done(f, &s2);
    wait_done(f, &s3);
    harness_settle(f->h);
    assert_int_equal(rp.done, 0);
    assert_int_equal(tp_probe(f->tp[0], ctrl(0, 7), any, &pi), UCFT_OK);
    assert_true(pi.tag == ctrl(1, 7));
    assert_int_equal(pi.length, sizeof(b));
    assert_int_equal(tp_probe(f->tp[0], ctrl(0, 6), any, &pi),
                     UCFT_ERR_NO_MESSAGE);
    post_recv(f->tp[0], ctrl(0, 7), any, &got, sizeof(got), &r);
    wait_done(f, &r);
    assert_int_equal(got, 102);
    /* Truncated: the tag, no length, nothing written past the buffer. */
    uint16_t tiny[2] = {0, 0xbeef};
    post_recv(f->tp[0], ctrl(0, 7), any, tiny, sizeof(tiny[0]), &r);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_TRUNCATED);
    assert_true(r.req.tag == ctrl(1, 7));
    assert_true(r.req.length <= sizeof(tiny[0])); /* T2: filled, or 0 */
    assert_int_equal(tiny[1], 0xbeef);
    tp_cancel(f->tp[0], &rp.req);
    wait_done(f, &rp);
    assert_int_equal(rp.req.status, UCFT_ERR_CANCELED);

    /* Cancel: completes once, from progress, and takes no later message. */
    assert_int_equal(
        post_recv(f->tp[0], ctrl(0, 5), any, &small, sizeof(small), &r),
        UCFT_INPROGRESS);
    tp_cancel(f->tp[0], &r.req);
    assert_int_equal(r.done, 0); /* T3 */
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_CANCELED);

    /* T5: rank 3's message from before its declaration is received; the
     * one sent afterwards is dropped. */
    big[0] = 104;
    post_send(f->tp[3], 0, ctrl(3, 5), big, sizeof(big), &s4);
    wait_done(f, &s4);
    harness_settle(f->h);
    tp_peer_failed(f->tp[0], 3);
    post_recv(f->tp[0], ctrl(0, 5), any, big, sizeof(big), &r);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_int_equal(big[0], 104);
    assert_true(r.req.tag == ctrl(3, 5));
    post_send(f->tp[3], 0, ctrl(3, 5), &a, sizeof(a), &s4);
    post_recv(f->tp[0], ctrl(0, 5), any, &got, sizeof(got), &r);
    harness_settle(f->h);
    assert_int_equal(r.done, 0);
    tp_cancel(f->tp[0], &r.req);
    wait_done(f, &r);
    assert_int_equal(r.req.status, UCFT_ERR_CANCELED);
}

/* progress_spin (optional; tp_progress_spin falls back to progress): a
 * transport driven by it alone completes a message, the call that ran the
 * completion counts it, and a completion already queued (a cancelled
 * receive) ends the spin at its first poll however many turns it was
 * given. */
static void test_conformance_progress_spin(void **state)
{
    fixture_t *f = *state;
    uint64_t out = 0x1122334455667788ull, in = 0;
    creq_t s, r, c;

    if (f->tp[0]->ops->progress_spin == NULL)
        return; /* the fallback is progress itself: nothing more to check */
    post_recv(f->tp[0], p2p(1, 7), UCFT_TAG_FULL_MASK, &in, sizeof(in), &r);
    post_send(f->tp[1], 0, p2p(1, 7), &out, sizeof(out), &s);
    uint64_t until = ucft_clock_now_ns() + 10 * UCFT_NSEC_PER_SEC;
    while (!r.done && ucft_clock_now_ns() < until) {
        unsigned n = tp_progress_spin(f->tp[0], 8);
        if (r.done)
            assert_true(n > 0);
        tp_progress_spin(f->tp[1], 8);
    }
    assert_int_equal(r.done, 1);
    assert_int_equal(r.req.status, UCFT_OK);
    assert_true(in == out);
    wait_done(f, &s);

    assert_int_equal(
        post_recv(f->tp[0], p2p(2, 8), UCFT_TAG_FULL_MASK, &in, sizeof(in), &c),
        UCFT_INPROGRESS);
    tp_cancel(f->tp[0], &c.req);
    uint64_t t0 = ucft_clock_now_ns();
    for (int i = 0; i < 4 && !c.done; i++)
        tp_progress_spin(f->tp[0], 1u << 24); /* seconds if it spun */
    assert_int_equal(c.done, 1);
    assert_int_equal(c.req.status, UCFT_ERR_CANCELED);
    assert_true(ucft_clock_now_ns() - t0 < UCFT_NSEC_PER_SEC);
}

/* T8: every rank has an address of its own, the same bytes at the same
 * place on every call. T9: with nothing sent, flush returns UCFT_OK. (What
 * it waits for after sends is backend-specific: on UCP over TCP the peers
 * must progress meanwhile, which this one-thread harness cannot do during
 * the call; the sim's flush has its own test in tests/sim.) */
static void test_conformance_address_flush_idle(void **state)
{
    fixture_t *f = *state;
    const void *addr[NRANKS], *again;
    size_t len[NRANKS], again_len;

    for (int i = 0; i < NRANKS; i++) {
        tp_address(f->tp[i], &addr[i], &len[i]);
        assert_non_null(addr[i]);
        assert_true(len[i] > 0);
        tp_address(f->tp[i], &again, &again_len);
        assert_ptr_equal(again, addr[i]);
        assert_int_equal(again_len, len[i]);
        for (int j = 0; j < i; j++)
            assert_false(len[j] == len[i] &&
                         memcmp(addr[j], addr[i], len[i]) == 0);
        assert_int_equal(tp_flush(f->tp[i], UCFT_NSEC_PER_SEC), UCFT_OK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_conformance_send_recv),
        T(test_conformance_unexpected),
        T(test_conformance_fifo_per_pair),
        T(test_conformance_recv_post_order),
        T(test_conformance_any_source),
        T(test_conformance_any_tag_keeps_class),
        T(test_conformance_cancel),
        T(test_conformance_truncation),
        T(test_conformance_probe),
        T(test_conformance_peer_failure),
        T(test_conformance_drop_from_failed),
        T(test_conformance_kept_from_before),
        T(test_conformance_disconnect_keeps_peer),
        T(test_conformance_timers),
        T(test_conformance_coll_send_buffered),
        T(test_conformance_rndv_send_waits),
        T(test_conformance_address_flush_idle),
        T(test_conformance_progress_spin),
        T(test_conformance_ctrl_class),
#undef T
    };
    return cmocka_run_group_tests_name(harness_name(), tests, NULL, NULL);
}
