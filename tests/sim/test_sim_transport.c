/* The sim backend beyond the shared conformance suite: LogGP timing,
 * fail-stop semantics, injection, notification, determinism, flush. */
#include "transport/sim/sim.h"

#include "runtime/base/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct treq {
    tp_req_t req; /* first */
    tp_t *tp;
    int done;
    uint64_t at; /* simulated time of the callback */
} treq_t;

static void treq_cb(tp_req_t *r)
{
    treq_t *t = (treq_t *)r;
    t->done++;
    t->at = tp_now(t->tp);
}

static void treq_init(treq_t *t, tp_t *tp)
{
    memset(t, 0, sizeof(*t));
    t->req.cb = treq_cb;
    t->tp = tp;
}

static uint64_t tag(int src, uint32_t t)
{
    return ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, (uint32_t)src, t);
}

static sim_world_t *world(int n, uint64_t L, uint64_t o, uint64_t g, uint64_t G)
{
    sim_params_t p;
    sim_world_t *w = NULL;
    sim_params_default(&p, n);
    p.loggp = (sim_loggp_t){L, o, g, G};
    assert_int_equal(sim_world_create(&p, &w), UCFT_OK);
    return w;
}

/* One s-byte message: the send completes at o, the receive at
 * o + (s-1)G + L + o. */
static void test_sim_transport_loggp_one_message(void **state)
{
    sim_world_t *w = world(2, 1000, 300, 400, 2000); /* G = 2 ns/B */
    tp_t *a = sim_world_tp(w, 0), *b = sim_world_tp(w, 1);
    char out[101] = {0}, in[101];
    treq_t s, r;

    treq_init(&s, a);
    treq_init(&r, b);
    assert_int_equal(tp_recv(b, tag(0, 1), UCFT_TAG_FULL_MASK, in, 101, &r.req),
                     UCFT_INPROGRESS);
    assert_int_equal(tp_send(a, 1, tag(0, 1), out, 101, &s.req),
                     UCFT_INPROGRESS);
    assert_int_equal(s.done + r.done, 0);
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    assert_int_equal(s.done, 1);
    assert_int_equal(r.done, 1);
    assert_int_equal(s.at, 300);
    assert_int_equal(r.at, 300 + 100 * 2 + 1000 + 300);
    assert_int_equal(r.req.length, 101);
    sim_stats_t st;
    sim_world_stats(w, &st);
    assert_int_equal(st.messages, 1);
    assert_int_equal(st.bytes, 101);
    assert_int_equal(st.events, 2);
    assert_int_equal(tp_probe(b, 0, 0, &(tp_probe_info_t){0}),
                     UCFT_ERR_NO_MESSAGE);
    sim_world_destroy(w);
}

/* Back-to-back sends of one rank leave g apart (g > o); two senders to
 * one receiver are received max(g, o) apart. */
static void test_sim_transport_loggp_gaps(void **state)
{
    sim_world_t *w = world(4, 1000, 300, 500, 0);
    tp_t *tp[4];
    int v = 0, in[3];
    treq_t s[3], r[3];

    for (int i = 0; i < 4; i++)
        tp[i] = sim_world_tp(w, i);
    for (int i = 0; i < 3; i++) {
        treq_init(&s[i], tp[0]);
        treq_init(&r[i], tp[1 + i]);
        tp_recv(tp[1 + i], 0, ucft_tag_mask(1, 1), &in[i], sizeof(int),
                &r[i].req);
        tp_send(tp[0], 1 + i, tag(0, 0), &v, sizeof(v), &s[i].req);
    }
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(s[i].at, (uint64_t)i * 500 + 300);
        assert_int_equal(r[i].at, (uint64_t)i * 500 + 1600);
    }
    /* Ranks 1, 2 and 3 send to 0 at once. */
    treq_t rr[3], ss[3];
    for (int i = 0; i < 3; i++) {
        treq_init(&rr[i], tp[0]);
        treq_init(&ss[i], tp[1 + i]);
        tp_recv(tp[0], 0, ucft_tag_mask(1, 1), &in[i], sizeof(int), &rr[i].req);
    }
    uint64_t t0 = sim_world_now(w);
    for (int i = 0; i < 3; i++)
        tp_send(tp[1 + i], 0, tag(1 + i, 0), &v, sizeof(v), &ss[i].req);
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rr[i].at - t0, 1600 + (uint64_t)i * 500);
        assert_int_equal(ucft_tag_src(rr[i].req.tag), 1 + i);
    }
    sim_world_destroy(w);
}

static void test_sim_transport_fd_arm_progress(void **state)
{
    sim_world_t *w = world(2, 1000, 300, 400, 80);
    tp_t *a = sim_world_tp(w, 0), *b = sim_world_tp(w, 1);
    int v = 3, got = 0;
    treq_t s, r;

    assert_int_equal(a->ops->fd(a), -1);
    assert_int_equal(a->ops->arm(a), UCFT_OK);
    assert_string_equal(a->ops->name, "sim");
    assert_int_equal(a->rank, 0);
    assert_int_equal(b->size, 2);
    treq_init(&s, a);
    treq_init(&r, b);
    tp_send(a, 1, tag(0, 2), &v, sizeof(v), &s.req);
    tp_recv(b, tag(0, 2), UCFT_TAG_FULL_MASK, &got, sizeof(got), &r.req);
    while (tp_progress(b) > 0)
        ;
    assert_int_equal(r.done, 1);
    assert_int_equal(got, 3);
    assert_true(sim_world_quiescent(w));
    tp_destroy(a); /* no-op: the world owns its ranks */
    sim_world_run(w, 5000, UINT64_MAX);
    assert_int_equal(sim_world_now(w), 5000);
    sim_world_destroy(w);
}

typedef struct seen {
    int count;
    int rank;
    uint64_t at;
    sim_world_t *w;
} seen_t;

static void seen_cb(void *arg, int rank, ucft_status_t why)
{
    seen_t *s = arg;
    assert_int_equal(why, UCFT_ERR_PROC_FAILED);
    s->count++;
    s->rank = rank;
    s->at = sim_world_now(s->w);
}

static int hooked;
static void hook(void *arg, sim_world_t *w, int rank, uint64_t time)
{
    *(int *)arg = rank;
}

/* Survivors hear of a death once, exactly detect_delay later; with
 * notification off, only the kill hook runs. */
static void test_sim_transport_notification(void **state)
{
    for (int mode = 0; mode < 2; mode++) {
        sim_params_t p;
        sim_world_t *w;
        seen_t seen[4] = {{0}};
        int hooked_rank = -1;

        sim_params_default(&p, 4);
        p.detect_delay_ns = 7000;
        p.notify = mode ? SIM_NOTIFY_NONE : SIM_NOTIFY_DELAY;
        p.kill_hook = hook;
        p.kill_hook_arg = &hooked_rank;
        assert_int_equal(sim_world_create(&p, &w), UCFT_OK);
        for (int i = 0; i < 4; i++) {
            tp_t *tp = sim_world_tp(w, i);
            seen[i].w = w;
            tp->peer_error_cb = seen_cb;
            tp->peer_error_arg = &seen[i];
        }
        sim_world_kill_at(w, 2, 5000);
        sim_world_run(w, UINT64_MAX, UINT64_MAX);
        assert_int_equal(hooked_rank, 2);
        assert_true(sim_world_is_dead(w, 2));
        assert_int_equal(sim_world_death_time(w, 2), 5000);
        assert_true(sim_world_death_time(w, 1) == UINT64_MAX);
        for (int i = 0; i < 4; i++) {
            int expect = (mode == 0 && i != 2) ? 1 : 0;
            assert_int_equal(seen[i].count, expect);
            if (expect) {
                assert_int_equal(seen[i].rank, 2);
                assert_int_equal(seen[i].at, 12000);
            }
        }
        sim_world_destroy(w);
    }
    (void)hooked;
}

static int timer_fired;
static void timer_cb(ucft_timer_t *t)
{
    timer_fired++;
}

/* Fail-stop: a dead rank's callbacks and timers never run, its sends are
 * swallowed, messages to it vanish; a message already on the wire when
 * its sender dies still arrives, one not yet started is lost. */
static void test_sim_transport_dead_rank(void **state)
{
    sim_world_t *w = world(3, 1000, 300, 400, 0);
    tp_t *a = sim_world_tp(w, 0), *b = sim_world_tp(w, 1),
         *c = sim_world_tp(w, 2);
    int v = 1, in_b = 0, in_c[2] = {0, 0};
    treq_t rb, sa, sa2, sc, rc[2], sb;
    ucft_timer_t t = {.cb = timer_cb};
    sim_stats_t st;

    timer_fired = 0;
    treq_init(&rb, b);
    tp_recv(b, 0, ucft_tag_mask(1, 1), &in_b, sizeof(in_b), &rb.req);
    assert_int_equal(tp_timer_start(b, &t, 10000), UCFT_OK);
    for (int i = 0; i < 2; i++) {
        treq_init(&rc[i], c);
        tp_recv(c, tag(0, 0), ucft_tag_mask(0, 1), &in_c[i], sizeof(int),
                &rc[i].req);
    }
    /* Rank 0 sends twice to 2: the second waits for the send port (g) and
     * has not started when 0 dies at time 100. */
    treq_init(&sa, a);
    treq_init(&sa2, a);
    tp_send(a, 2, tag(0, 1), &v, sizeof(v), &sa.req);
    tp_send(a, 2, tag(0, 2), &v, sizeof(v), &sa2.req);
    sim_world_kill_at(w, 0, 100);
    sim_world_kill_at(w, 1, 200);
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    assert_int_equal(rc[0].done, 1);
    assert_int_equal(ucft_tag_payload(rc[0].req.tag), 1);
    assert_int_equal(rc[1].done, 0);
    assert_int_equal(sa.done + sa2.done, 0); /* 0's callbacks never run */
    assert_int_equal(timer_fired, 0);
    assert_int_equal(rb.done, 0);
    assert_true(b->ops->timer_next(b) == UINT64_MAX);

    /* Sends to the dead vanish; sends from the dead are swallowed. */
    treq_init(&sc, c);
    tp_send(c, 1, tag(2, 0), &v, sizeof(v), &sc.req);
    treq_init(&sb, b);
    assert_int_equal(tp_send(b, 2, tag(1, 0), &v, sizeof(v), &sb.req),
                     UCFT_INPROGRESS);
    sim_world_stats(w, &st);
    uint64_t msgs = st.messages;
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    sim_world_stats(w, &st);
    assert_int_equal(st.messages, msgs);
    assert_int_equal(sc.done, 1);
    assert_int_equal(sb.done, 0);
    assert_int_equal(rc[1].done, 0);
    assert_int_equal(st.dropped, 2); /* 0's second message, c's to b */
    assert_int_equal(st.deaths, 2);
    sim_world_destroy(w);
}

/* From a receive callback (inside the event loop): send, then flush. */
static ucft_status_t nested_flush;
static treq_t nested_send;
static uint64_t nested_v;

static void flush_inside_cb(tp_req_t *r)
{
    treq_t *t = (treq_t *)r;
    t->done++;
    treq_init(&nested_send, t->tp);
    tp_send(t->tp, 0, tag(t->tp->rank, 9), &nested_v, sizeof(nested_v),
            &nested_send.req);
    nested_flush = tp_flush(t->tp, UCFT_NSEC_PER_SEC);
}

/* T8 and T9 on the sim (sim.h): the address is the rank's id; flush runs
 * events until the rank's messages have arrived and its send completions
 * have run, moves the clock to its deadline when that comes first, does
 * not wait for a rendezvous send's receiver, returns at once inside the
 * event loop and on a dead rank. */
static void test_sim_transport_address_flush(void **state)
{
    sim_params_t p;
    sim_world_t *w = NULL;
    const void *addr;
    size_t len;
    uint64_t v = 7, in = 0;
    char big[100] = {0};
    treq_t s[3], r;

    sim_params_default(&p, 3);
    p.loggp = (sim_loggp_t){1000, 300, 400, 0};
    p.rndv_min = 64;
    assert_int_equal(sim_world_create(&p, &w), UCFT_OK);
    tp_t *a = sim_world_tp(w, 0), *b = sim_world_tp(w, 1),
         *c = sim_world_tp(w, 2);

    tp_address(b, &addr, &len);
    assert_int_equal(len, sizeof(int));
    assert_int_equal(*(const int *)addr, 1);

    /* Nothing sent: at once, the clock where it was. */
    assert_int_equal(tp_flush(a, UCFT_NSEC_PER_SEC), UCFT_OK);
    assert_int_equal(sim_world_now(w), 0);

    /* Sends start at 0, 400, 800 (g) and arrive o + L + o later: flush
     * ends with the last arrival, nobody having posted a receive. */
    for (int k = 0; k < 3; k++) {
        treq_init(&s[k], a);
        assert_int_equal(tp_send(a, k == 2 ? 2 : 1, tag(0, (uint32_t)k), &v,
                                 sizeof(v), &s[k].req),
                         UCFT_INPROGRESS);
    }
    assert_int_equal(tp_flush(a, UCFT_NSEC_PER_SEC), UCFT_OK);
    assert_int_equal(sim_world_now(w), 800 + 1600);
    assert_int_equal(s[0].done + s[1].done + s[2].done, 3);
    assert_int_equal(
        tp_probe(b, tag(0, 1), UCFT_TAG_FULL_MASK, &(tp_probe_info_t){0}),
        UCFT_OK);
    assert_int_equal(
        tp_probe(c, tag(0, 2), UCFT_TAG_FULL_MASK, &(tp_probe_info_t){0}),
        UCFT_OK);

    /* A deadline before the send completes: timed out, the clock at the
     * deadline; a second flush finishes the job. */
    treq_init(&s[0], a);
    tp_send(a, 1, tag(0, 3), &v, sizeof(v), &s[0].req);
    assert_int_equal(tp_flush(a, 100), UCFT_ERR_TIMED_OUT);
    assert_int_equal(sim_world_now(w), 2400 + 100);
    assert_int_equal(s[0].done, 0);
    assert_int_equal(tp_flush(a, UCFT_NSEC_PER_SEC), UCFT_OK);
    assert_int_equal(sim_world_now(w), 2400 + 1600);
    assert_int_equal(s[0].done, 1);

    /* A rendezvous send (100 >= rndv_min): its message arrives, its
     * request waits for a receive that flush does not wait for. */
    treq_init(&s[1], a);
    tp_send(a, 1, tag(0, 4), big, sizeof(big), &s[1].req);
    assert_int_equal(tp_flush(a, UCFT_NSEC_PER_SEC), UCFT_OK);
    assert_int_equal(s[1].done, 0);
    assert_int_equal(
        tp_probe(b, tag(0, 4), UCFT_TAG_FULL_MASK, &(tp_probe_info_t){0}),
        UCFT_OK);

    /* Inside the event loop: no events can run, so at once. */
    treq_init(&r, b);
    r.req.cb = flush_inside_cb;
    nested_flush = UCFT_OK;
    tp_recv(b, tag(0, 0), UCFT_TAG_FULL_MASK, &in, sizeof(in), &r.req);
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    assert_int_equal(r.done, 1);
    assert_int_equal(nested_flush, UCFT_ERR_TIMED_OUT);
    assert_int_equal(nested_send.done, 1);

    /* A dead rank's flush: at once, the clock where it was. */
    treq_init(&s[2], c);
    tp_send(c, 0, tag(2, 0), &v, sizeof(v), &s[2].req);
    sim_world_kill(w, 2);
    uint64_t now = sim_world_now(w);
    assert_int_equal(tp_flush(c, UCFT_NSEC_PER_SEC), UCFT_OK);
    assert_int_equal(sim_world_now(w), now);
    sim_world_destroy(w);
}

/* A rank dies just before its k-th matching send; other sends do not
 * count. Kill-before-op applies when a driver announces the op. */
static void test_sim_transport_kill_before_send(void **state)
{
    sim_world_t *w = world(2, 1000, 300, 400, 0);
    tp_t *a = sim_world_tp(w, 0);
    uint64_t coll5 =
        ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 0, ucft_tag_coll_payload(5, 1));
    uint64_t coll6 =
        ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 0, ucft_tag_coll_payload(6, 1));
    uint64_t mask = ~(UCFT_TAG_SRC_MASK | 0xffull);
    int v = 0;
    treq_t s[6];
    sim_stats_t st;

    assert_int_equal(sim_world_kill_before_send(w, 0, 2, coll5, mask), UCFT_OK);
    assert_int_equal(sim_world_kill_before_send(w, 0, 0, 0, 0),
                     UCFT_ERR_INVALID_PARAM);
    uint64_t tags[5] = {coll6, coll5, tag(0, 1), coll6, coll5};
    for (int i = 0; i < 5; i++) {
        treq_init(&s[i], a);
        tp_send(a, 1, tags[i], &v, sizeof(v), &s[i].req);
        assert_int_equal(sim_world_is_dead(w, 0), i == 4);
    }
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    sim_world_stats(w, &st);
    assert_int_equal(st.messages, 4);
    /* All four were posted at time 0 and the rank died at time 0: only the
     * first had left (the others waited for the send port, g apart). */
    assert_int_equal(st.delivered, 1);
    assert_int_equal(st.dropped, 3);
    sim_world_destroy(w);

    w = world(3, 1000, 300, 400, 0);
    sim_world_kill_before_op(w, 1, coll5, mask);
    assert_int_equal(sim_world_op_starting(w, 1, coll6), 0);
    assert_int_equal(sim_world_op_starting(w, 2, coll5), 0);
    assert_int_equal(sim_world_op_starting(w, 1, coll5), 1);
    assert_true(sim_world_is_dead(w, 1));
    sim_world_destroy(w);
}

/* A rank killed from inside one of its own timer callbacks (its send there
 * trips a kill_before_send rule): its other due timers never fire, and the
 * simulator does not touch the freed rank state (regression; run under
 * ASan). */
typedef struct tick {
    ucft_timer_t t;
    tp_t *tp;
    int fired;
    treq_t s;
} tick_t;

static void tick_send_cb(ucft_timer_t *t)
{
    tick_t *k = t->arg;
    int v = 1;
    k->fired++;
    treq_init(&k->s, k->tp);
    tp_send(k->tp, 1, tag(0, 9), &v, sizeof(v), &k->s.req);
}

static void tick_count_cb(ucft_timer_t *t)
{
    ((tick_t *)t->arg)->fired++;
}

static void test_sim_transport_kill_inside_own_timer(void **state)
{
    sim_world_t *w = world(2, 1000, 300, 400, 0);
    tp_t *a = sim_world_tp(w, 0);
    tick_t k1 = {.tp = a}, k2 = {.tp = a};
    (void)state;
    k1.t = (ucft_timer_t){.cb = tick_send_cb, .arg = &k1};
    k2.t = (ucft_timer_t){.cb = tick_count_cb, .arg = &k2};
    assert_int_equal(sim_world_kill_before_send(w, 0, 1, 0, 0), UCFT_OK);
    assert_int_equal(tp_timer_start(a, &k1.t, 1000), UCFT_OK);
    assert_int_equal(tp_timer_start(a, &k2.t, 1000), UCFT_OK);
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    assert_true(sim_world_is_dead(w, 0));
    /* Equal deadlines fire in arming order: k1 first, whose send kills the
     * rank, so k2 must never run. */
    assert_int_equal(k1.fired, 1);
    assert_int_equal(k2.fired, 0);
    sim_world_destroy(w);
}

static void test_sim_transport_random_plan(void **state)
{
    int a[50], b[50], c[50];

    assert_int_equal(sim_plan_random(100, 50, 0, 42, a), UCFT_OK);
    assert_int_equal(sim_plan_random(100, 50, 0, 42, b), UCFT_OK);
    assert_int_equal(sim_plan_random(100, 50, 0, 43, c), UCFT_OK);
    assert_memory_equal(a, b, sizeof(a));
    assert_memory_not_equal(a, c, sizeof(a));
    int seen[100] = {0};
    for (int i = 0; i < 50; i++) {
        assert_true(a[i] > 0 && a[i] < 100);
        assert_int_equal(seen[a[i]]++, 0);
    }
    assert_int_equal(sim_plan_random(10, 10, 3, 1, a), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(sim_plan_random(10, 9, 3, 1, a), UCFT_OK);
}

/* Many ranks exchanging messages and timers under random failures: the
 * same seed gives the same trace, another seed another one. */
static uint64_t traffic(uint64_t seed)
{
    enum { N = 64, M = 4 };
    static int bufs[N][M];
    static treq_t r[N][M], s[N][M];
    sim_params_t p;
    sim_world_t *w;

    sim_params_default(&p, N);
    p.seed = seed;
    assert_int_equal(sim_world_create(&p, &w), UCFT_OK);
    assert_int_equal(sim_world_kill_random(w, 5, 0, NULL), UCFT_OK);
    for (int i = 0; i < N; i++) {
        tp_t *tp = sim_world_tp(w, i);
        for (int j = 0; j < M; j++) {
            treq_init(&r[i][j], tp);
            treq_init(&s[i][j], tp);
            tp_recv(tp, 0, ucft_tag_mask(1, 1), &bufs[i][j], sizeof(int),
                    &r[i][j].req);
            tp_send(tp, (i * 7 + j * 13 + 1) % N, tag(i, (uint32_t)j),
                    &bufs[i][j], sizeof(int), &s[i][j].req);
        }
    }
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    uint64_t h = sim_world_trace_hash(w);
    sim_world_destroy(w);
    return h;
}

static void test_sim_transport_determinism(void **state)
{
    uint64_t h1 = traffic(7), h2 = traffic(7), h3 = traffic(8);
    assert_true(h1 == h2);
    assert_true(h1 != h3);
}

/* Domains: every send between ranks of different domains is counted, and
 * only those; a send of a dead rank is not a message. No domains: 0. */
static void test_sim_transport_cross_domain(void **state)
{
    enum { N = 12 };
    static const uint32_t dom[N] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    static int bufs[N];
    static treq_t s[N][N];
    for (int with = 0; with < 2; with++) {
        sim_params_t p;
        sim_world_t *w;
        uint64_t cross = 0;
        sim_params_default(&p, N);
        p.domain = with ? dom : NULL;
        assert_int_equal(sim_world_create(&p, &w), UCFT_OK);
        assert_int_equal(sim_world_kill(w, 4), UCFT_OK);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                tp_t *tp = sim_world_tp(w, i);
                treq_init(&s[i][j], tp);
                tp_send(tp, j, tag(i, 0), &bufs[i], sizeof(int), &s[i][j].req);
                if (i != 4 && dom[i] != dom[j])
                    cross++;
            }
        sim_world_run(w, UINT64_MAX, UINT64_MAX);
        sim_stats_t st;
        sim_world_stats(w, &st);
        assert_int_equal(st.messages, (uint64_t)(N - 1) * N);
        assert_int_equal(st.cross_domain, with ? cross : 0);
        assert_int_equal(cross, 11u * 9u); /* 9 ranks off-domain each */
        sim_world_destroy(w);
    }
}

static void test_sim_transport_bad_params(void **state)
{
    sim_params_t p;
    sim_world_t *w = NULL;
    sim_loggp_t g;

    sim_params_default(&p, 0);
    assert_int_equal(sim_world_create(&p, &w), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(sim_loggp_parse("1,0.3,0.4,0.08", &g), 0);
    assert_int_equal(g.L_ns, 1000);
    assert_int_equal(g.o_ns, 300);
    assert_int_equal(g.g_ns, 400);
    assert_int_equal(g.G_ps, 80);
    assert_int_equal(sim_loggp_parse("1,2,3", &g), -1);
    assert_int_equal(sim_loggp_parse("nan,0,0,0", &g), -1);
    assert_int_equal(sim_loggp_parse("1,inf,0,0", &g), -1);
    assert_int_equal(sim_loggp_parse("1,2,3,4,5", &g), -1);
    assert_int_equal(sim_loggp_parse("1,-2,3,4", &g), -1);
    assert_int_equal(sim_loggp_parse("a,2,3,4", &g), -1);

    w = world(2, 1, 1, 1, 1);
    tp_t *tp = sim_world_tp(w, 0);
    treq_t s;
    treq_init(&s, tp);
    assert_int_equal(tp_send(tp, 2, 0, &s, 1, &s.req), UCFT_ERR_INVALID_PARAM);
    assert_int_equal(tp_send(tp, -1, 0, &s, 1, &s.req), UCFT_ERR_INVALID_PARAM);
    assert_null(sim_world_tp(w, 2));
    assert_int_equal(sim_world_kill(w, 5), UCFT_ERR_INVALID_PARAM);
    sim_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_transport_loggp_one_message),
        cmocka_unit_test(test_sim_transport_loggp_gaps),
        cmocka_unit_test(test_sim_transport_fd_arm_progress),
        cmocka_unit_test(test_sim_transport_notification),
        cmocka_unit_test(test_sim_transport_dead_rank),
        cmocka_unit_test(test_sim_transport_kill_before_send),
        cmocka_unit_test(test_sim_transport_kill_inside_own_timer),
        cmocka_unit_test(test_sim_transport_random_plan),
        cmocka_unit_test(test_sim_transport_determinism),
        cmocka_unit_test(test_sim_transport_cross_domain),
        cmocka_unit_test(test_sim_transport_bad_params),
        cmocka_unit_test(test_sim_transport_address_flush),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
