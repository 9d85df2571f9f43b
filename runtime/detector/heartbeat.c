/* The heartbeat ring detector: see heartbeat.h. */
#include "runtime/detector/heartbeat.h"
#include "runtime/detector/ctrl_wire.h"
#include "transport/ctrl_kinds.h"

#include <limits.h>
#include <string.h>

static const unsigned hb_recv_kind[HB_NRECV] = {
    UCFT_CTRL_HB, UCFT_CTRL_HB_REQUEST, UCFT_CTRL_HB_STOP};

static void hb_send_cb(tp_req_t *req)
{
    hb_send_t *s = (hb_send_t *)req;
    s->busy = 0;
}

/* Posts one control message from the pool; a full pool or a failed post
 * skips it (heartbeats are periodic; requests are repeated by
 * hb_membership_changed's callers and the stale rule tolerates a miss). */
static int hb_post(hb_t *hb, int dst, unsigned kind, uint64_t body)
{
    for (int i = 0; i < HB_NSEND; i++) {
        hb_send_t *s = &hb->sends[i];
        if (s->busy)
            continue;
        s->body = body;
        s->req.cb = hb_send_cb;
        s->req.arg = hb;
        ucft_status_t st =
            tp_send(hb->tp, dst, ucft_ctrl_tag((uint32_t)hb->me, kind),
                    &s->body, sizeof(s->body), &s->req);
        if (st == UCFT_INPROGRESS)
            s->busy = 1;
        return st == UCFT_OK || st == UCFT_INPROGRESS;
    }
    hb->stats.skipped++;
    return 0;
}

static void hb_send_heartbeat(hb_t *hb, uint64_t now)
{
    hb->last_send = now;
    hb->sent_once = 1;
    hb->followed = 0;
    if (hb_post(hb, hb->observer, UCFT_CTRL_HB, mb_summary(hb->mb)))
        hb->stats.sent++;
}

static void hb_take(void *arg, const standing_t *s);

void hb_init(hb_t *hb, tp_t *tp, const mb_t *mb, const hb_params_t *params,
             const hb_ops_t *ops)
{
    memset(hb, 0, sizeof(*hb));
    hb->tp = tp;
    hb->mb = mb;
    hb->me = tp->rank;
    hb->params = *params;
    hb->ops = *ops;
    hb->suspected = -1;
    hb->div_src = -1;
    hb->observed = mb_live_pred(mb, hb->me);
    hb->observer = mb_live_succ(mb, hb->me);
    for (int i = 0; i < HB_NSEND; i++)
        hb->sends[i].hb = hb;
    for (int i = 0; i < HB_NRECV; i++)
        standing_init(&hb->recvs[i], tp, hb_recv_kind[i], &hb->rbufs[i],
                      sizeof(hb->rbufs[i]), 1, hb_take, hb);
}

/* Our own run-queue wait so far (0 without run_delay_cb). */
static uint64_t hb_run_delay(hb_t *hb)
{
    return hb->ops.run_delay_cb != NULL ? hb->ops.run_delay_cb(hb->ops.arg) : 0;
}

/* The observed rank was heard (or is new): a full delta from now. The
 * run-queue baseline is read at most twice per delta (a read per
 * heartbeat would cost more than the heartbeat): a baseline up to delta/2
 * older than the last heartbeat only adds the wait before it, which
 * delays a detection, never hastens one. */
static void hb_heard(hb_t *hb, uint64_t now)
{
    hb->last_heard = now;
    hb->hold_until = 0;
    hb->adapt_until = 0;
    hb->credit = 0;
    hb->wait_credit = 0;
    if (hb->ops.run_delay_cb != NULL &&
        (hb->rd_at == 0 || now - hb->rd_at >= hb->params.delta_ns / 2)) {
        hb->rd_base = hb_run_delay(hb);
        hb->rd_at = now;
    }
}

/* When the observed rank may be suspected: delta after it was last heard,
 * plus our own run-queue wait meanwhile, not before the start-up grace
 * ends nor while the owner vouched for it. */
static uint64_t hb_limit(const hb_t *hb)
{
    uint64_t limit = hb->last_heard + hb->params.delta_ns + hb->wait_credit;
    if (limit < hb->grace_until)
        limit = hb->grace_until;
    if (!hb->heard_once && limit < hb->first_until)
        limit = hb->first_until;
    if (limit < hb->hold_until)
        limit = hb->hold_until;
    if (limit < hb->adapt_until)
        limit = hb->adapt_until;
    return limit;
}

/* `t` moved earlier by the owner's confirmation time (params.early_ns),
 * unless the owner has a kernel view of the observed rank. */
static uint64_t hb_early(const hb_t *hb, uint64_t t)
{
    uint64_t e = hb->viewed ? 0 : hb->params.early_ns;
    return t > e ? t - e : 0;
}

/* When suspect_cb may be called: the deadline, moved earlier so that the
 * owner's confirmation ends about when it passes. */
static uint64_t hb_due(const hb_t *hb)
{
    return hb_early(hb, hb_limit(hb));
}

/* The observed rank's heartbeat came `gap` after the one before: kept as
 * the longest of the current window (two windows of 1 s: the estimate
 * forgets a starvation 1-2 s after it ends). */
static void hb_note_gap(hb_t *hb, uint64_t now, uint64_t gap)
{
    if (now - hb->gap_win >= HB_ADAPT_WINDOW_NS) {
        hb->gap_prev =
            now - hb->gap_win >= 2 * HB_ADAPT_WINDOW_NS ? 0 : hb->gap_cur;
        hb->gap_cur = 0;
        hb->gap_win = now;
    }
    if (gap > hb->gap_cur)
        hb->gap_cur = gap;
}

/* The starvation-aware deadline (hb_params_t.adapt): a rank whose
 * heartbeats came up to g apart lately may be silent 3 g before anything
 * is wrong with it; never less than delta, never more than 20 delta. */
static uint64_t hb_adapt_limit(const hb_t *hb)
{
    uint64_t g = hb->gap_cur > hb->gap_prev ? hb->gap_cur : hb->gap_prev;
    uint64_t t = HB_ADAPT_FACTOR * g, cap = HB_ADAPT_CAP * hb->params.delta_ns;
    if (t < hb->params.delta_ns)
        t = hb->params.delta_ns;
    if (t > cap)
        t = cap;
    return hb->last_heard + t + hb->wait_credit;
}

/* The observed rank failed (or we start): watch the next live predecessor
 * and ask it for heartbeats. It gets delta from now to answer. */
static void hb_retarget(hb_t *hb, uint64_t now)
{
    int target = mb_live_pred(hb->mb, hb->me);
    hb->observed = target;
    hb->viewed = 0;
    hb_heard(hb, now);
    if (target < 0)
        return;
    if (hb_post(hb, target, UCFT_CTRL_HB_REQUEST, mb_epoch(hb->mb)))
        hb->stats.requests++;
}

void hb_membership_changed(hb_t *hb)
{
    if (!hb->running)
        return;
    uint64_t now = tp_now(hb->tp);
    if (hb->observed >= 0 && mb_is_failed(hb->mb, hb->observed))
        hb_retarget(hb, now);
    if (hb->observer >= 0 && mb_is_failed(hb->mb, hb->observer)) {
        hb->observer = mb_live_succ(hb->mb, hb->me);
        if (hb->observer >= 0)
            hb_send_heartbeat(hb, now);
    }
}

/* When our next heartbeat is due: 0.9 eta after one sent by the tick;
 * when following the observed rank (hb_follow), its next heartbeat
 * normally comes first and carries ours with it, so the tick only backs it
 * up, 1.1 eta after the last one. */
static uint64_t hb_send_due(const hb_t *hb)
{
    const uint64_t eta = hb->params.eta_ns;
    if (hb->followed)
        return hb->follow_base + eta * 11 / 10;
    return hb->last_send + eta * 9 / 10;
}

void hb_tick_at(hb_t *hb, uint64_t now, uint64_t deadline)
{
    const uint64_t eta = hb->params.eta_ns;
    uint64_t late = now > deadline ? now - deadline : 0;
    uint64_t prev_tick = hb->prev_tick;

    hb->stats.ticks++;
    hb->prev_tick = now;
    if (hb->observer >= 0 && (!hb->sent_once || now >= hb_send_due(hb))) {
        uint64_t gap = now - hb->last_send;
        if (hb->sent_once && gap >= 2 * eta) {
            hb->stats.warnings++;
            if (hb->ops.warn_late_cb != NULL)
                hb->ops.warn_late_cb(hb->ops.arg, gap);
        }
        hb_send_heartbeat(hb, now);
    }
    if (hb->observed < 0 || hb->observed == hb->suspected)
        return;
    /* Stall credit: this tick fired `late` after its deadline, so this
     * thread was not running for that long (descheduled, or the whole node
     * stalled, which delays every heartbeat alike). That silence is ours,
     * not the observed rank's: give it the time back. A dead rank is still
     * declared, one stall later. */
    if (late > eta) {
        uint64_t before = hb->last_heard;
        hb->last_heard += late;
        if (hb->last_heard > now)
            hb->last_heard = now;
        hb->credit += hb->last_heard - before;
        hb->stats.credited++;
    }
    uint64_t limit = hb_due(hb);
    if (now <= limit)
        return;
    /* Starvation: our own thread waited on a run queue since the observed
     * rank was last heard (more than the stall credit gave back). The
     * heartbeats may have come and waited for us: that wait is added to
     * the deadline. */
    if (hb->ops.run_delay_cb != NULL) {
        uint64_t rd = hb_run_delay(hb);
        uint64_t waited = rd > hb->rd_base ? rd - hb->rd_base : 0;
        uint64_t extra = waited > hb->credit ? waited - hb->credit : 0;
        if (extra > hb->wait_credit) {
            hb->wait_credit = extra;
            hb->stats.own_wait++;
            limit = hb_due(hb);
            if (now <= limit)
                return;
        }
    }
    /* Jitter guard: we fired more than eta late and were still within the
     * deadline at the previous tick, so the silence may be ours. */
    if (late > eta && prev_tick <= limit) {
        hb->stats.guarded++;
        return;
    }
    /* Kernel truth: for a rank on this node the owner can see whether its
     * process is stopped, dead, or alive but starved. */
    hb_vouch_t v = HB_VOUCH_NONE;
    if (hb->ops.vouch_cb != NULL) {
        v = hb->ops.vouch_cb(hb->ops.arg, hb->observed, now - hb->last_heard);
        if (v == HB_VOUCH_ALIVE) {
            hb->viewed = 1;
            hb->hold_until = now + eta;
            hb->stats.vouched++;
            return;
        }
        if (v != HB_VOUCH_NONE) {
            /* The kernel decides, at the deadline itself. */
            hb->viewed = 1;
            if (now <= hb_limit(hb))
                return;
            if (v == HB_VOUCH_DEAD)
                hb->stats.kernel++;
            goto suspect;
        }
    }
    /* No kernel view: the rank's own recent heartbeat gaps. */
    if (hb->params.adapt) {
        uint64_t a = hb_adapt_limit(hb);
        if (now <= hb_early(hb, a)) {
            if (hb->adapt_until == 0)
                hb->stats.adapted++;
            hb->adapt_until = a;
            return;
        }
    }
suspect:
    hb->suspected = hb->observed;
    hb->stats.suspicions++;
    /* may re-target */
    hb->ops.suspect_cb(hb->ops.arg, hb->observed, v == HB_VOUCH_DEAD);
}

/* When the tick has something to do next: our next heartbeat, or the
 * observed rank's deadline, whichever is first; at least eta/10 from now
 * (a heartbeat that could not be sent is retried then) and at most 1.1 eta.
 * Between them the thread sleeps. */
uint64_t hb_next_tick(const hb_t *hb, uint64_t now)
{
    const uint64_t eta = hb->params.eta_ns;
    uint64_t next = now + eta * 11 / 10;
    if (hb->observer >= 0) {
        uint64_t send = hb->sent_once ? hb_send_due(hb) : now;
        next = send < next ? send : next;
    }
    if (hb->observed >= 0 && hb->observed != hb->suspected) {
        uint64_t limit = hb_due(hb) + 1; /* suspicion needs now > limit */
        next = limit < next ? limit : next;
    }
    return next < now + eta / 10 ? now + eta / 10 : next;
}

/* Sets the tick for hb_next_tick (re-arming an armed one). */
static ucft_status_t hb_rearm(hb_t *hb, uint64_t now)
{
    hb->tick_deadline = hb_next_tick(hb, now);
    return tp_timer_start(hb->tp, &hb->tick, hb->tick_deadline);
}

int hb_presume(hb_t *hb, int rank)
{
    if (rank < 0 || rank != hb->observed || !hb->running)
        return 0;
    hb->suspected = rank;
    hb->stats.presumed++;
    return 1;
}

void hb_refute(hb_t *hb, int rank)
{
    if (rank < 0 || rank != hb->observed || rank != hb->suspected)
        return;
    uint64_t now = tp_now(hb->tp);
    hb->suspected = -1;
    hb->stats.refuted++;
    hb_heard(hb, now);
    if (hb->running)
        (void)hb_rearm(hb, now);
}

static void hb_tick_cb(ucft_timer_t *t)
{
    hb_t *hb = t->arg;
    uint64_t now = tp_now(hb->tp);
    hb_tick_at(hb, now, hb->tick_deadline);
    if (!hb->running)
        return;
    (void)hb_rearm(hb, now);
}

/* A heartbeat from the observed rank woke this thread: send ours now if it
 * is at least half a period old, instead of waking again for it; if it is
 * younger, skip our next tick and send with the observed rank's next
 * heartbeat (without this, ranks whose tick fires just before their
 * predecessor's heartbeat arrives would never follow). The first live rank
 * of the ring (its observed rank is above it) never follows: its tick
 * starts every wave, so that ranks started in step do not all wait for
 * each other. */
static void hb_follow(hb_t *hb, uint64_t now)
{
    if (hb->observer < 0 || !hb->sent_once || !hb->running ||
        hb->observed > hb->me)
        return;
    if (now - hb->last_send >= hb->params.eta_ns / 2) {
        hb_send_heartbeat(hb, now);
        hb->stats.followed++;
    }
    hb->followed = 1;
    hb->follow_base = now;
    (void)hb_rearm(hb, now);
}

/* Anti-entropy: a heartbeat says which failed set its sender has. The
 * failure broadcast sends each fact once, so a lost message would leave
 * two views apart for good; two differing heartbeats in a row (one can
 * cross a fact still on its way) hand the pair to the owner to reconcile. */
static void hb_compare(hb_t *hb, int src, uint64_t summary)
{
    if (summary == mb_summary(hb->mb)) {
        hb->div_src = -1;
        return;
    }
    if (hb->div_src != src) {
        hb->div_src = src;
        return;
    }
    hb->div_src = -1;
    hb->stats.diverged++;
    if (hb->ops.diverged_cb != NULL)
        hb->ops.diverged_cb(hb->ops.arg, src);
}

/* Only whole 8-byte messages from another rank of the job get here
 * (standing.c). */
static void hb_on_msg(hb_t *hb, unsigned kind, int src, uint64_t body)
{
    uint64_t now = tp_now(hb->tp);

    if (mb_is_failed(hb->mb, src)) {
        hb->stats.fenced++;
        if (hb->ops.fenced_cb != NULL)
            hb->ops.fenced_cb(hb->ops.arg, src);
        return;
    }
    switch (kind) {
    case UCFT_CTRL_HB:
        hb_compare(hb, src, body);
        if (src == hb->observed) {
            if (hb->suspected == src) { /* it was only late */
                hb->suspected = -1;
                hb->stats.recovered++;
            }
            if (hb->heard_once)
                hb_note_gap(hb, now, now - hb->last_heard);
            hb->heard_once = 1;
            hb_heard(hb, now);
            hb->stats.received++;
            hb_follow(hb, now);
        }
        break;
    case UCFT_CTRL_HB_REQUEST: {
        int cur = INT_MAX;
        if (hb->observer >= 0 && !mb_is_failed(hb->mb, hb->observer))
            cur = mb_ring_dist(hb->mb, hb->me, hb->observer);
        if (mb_ring_dist(hb->mb, hb->me, src) > cur) {
            hb->stats.stale++;
            break;
        }
        hb->observer = src;
        hb_send_heartbeat(hb, now);
        break;
    }
    case UCFT_CTRL_HB_STOP:
        /* A clean exit: stop watching it, never suspect it. */
        if (src == hb->observed)
            hb->observed = -1;
        break;
    default:
        break;
    }
}

static void hb_take(void *arg, const standing_t *s)
{
    uint64_t body;
    if (ctrl_wire_word(s->buf, s->req.length, &body) != UCFT_OK)
        return; /* not 8 bytes: standing.c drops those already */
    hb_on_msg(arg, s->kind, (int)ucft_tag_src(s->req.tag), body);
}

ucft_status_t hb_start(hb_t *hb)
{
    uint64_t now = tp_now(hb->tp);
    ucft_status_t st;

    hb->running = 1;
    hb->observed = mb_live_pred(hb->mb, hb->me);
    hb->observer = mb_live_succ(hb->mb, hb->me);
    for (int i = 0; i < HB_NRECV; i++) {
        st = standing_start(&hb->recvs[i]);
        if (st != UCFT_OK)
            goto err_recv;
    }
    hb_heard(hb, now);
    hb->prev_tick = now;
    hb->grace_until = now + hb->params.start_grace_ns;
    hb->first_until = now + hb->params.first_hb_ns;
    if (hb->observer >= 0)
        hb_send_heartbeat(hb, now);
    hb->tick.cb = hb_tick_cb;
    hb->tick.arg = hb;
    st = hb_rearm(hb, now);
    if (st != UCFT_OK)
        goto err_recv;
    return UCFT_OK;

err_recv:
    hb_stop(hb, 0);
    return st;
}

void hb_stop(hb_t *hb, int notify)
{
    if (!hb->running)
        return;
    hb->running = 0;
    tp_timer_stop(hb->tp, &hb->tick);
    if (notify && hb->observer >= 0)
        hb_post(hb, hb->observer, UCFT_CTRL_HB_STOP, 0);
    for (int i = 0; i < HB_NRECV; i++)
        standing_stop(&hb->recvs[i]);
}

int hb_idle(const hb_t *hb)
{
    for (int i = 0; i < HB_NSEND; i++)
        if (hb->sends[i].busy)
            return 0;
    for (int i = 0; i < HB_NRECV; i++)
        if (standing_posted(&hb->recvs[i]))
            return 0;
    return 1;
}
