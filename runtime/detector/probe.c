/* Indirect probes: see probe.h. */
#include "runtime/detector/probe.h"
#include "runtime/detector/ctrl_wire.h"
#include "transport/ctrl_kinds.h"

#include <string.h>

static void pb_take(void *arg, const standing_t *s);

void pb_init(pb_t *pb, tp_t *tp, const mb_t *mb, const pb_params_t *params,
             const pb_ops_t *ops)
{
    memset(pb, 0, sizeof(*pb));
    pb->tp = tp;
    pb->mb = mb;
    pb->me = tp->rank;
    pb->params = *params;
    if (pb->params.helpers > PB_MAX_HELPERS)
        pb->params.helpers = PB_MAX_HELPERS;
    if (pb->params.helpers < 0)
        pb->params.helpers = 0;
    pb->ops = *ops;
    pb->suspect = -1;
    standing_init(&pb->recv, tp, UCFT_CTRL_PROBE, pb->rbuf, sizeof(pb->rbuf), 1,
                  pb_take, pb);
}

static void pb_send_cb(tp_req_t *req)
{
    ((pb_send_t *)req)->busy = 0;
}

/* One probe message from the pool; a full pool skips it (counted): the
 * next round asks again. */
static int pb_post(pb_t *pb, int dst, ctrl_probe_op_t op, int origin,
                   int suspect, uint32_t nonce, uint32_t silent_ms)
{
    for (int i = 0; i < PB_NSEND; i++) {
        pb_send_t *s = &pb->sends[i];
        if (s->busy)
            continue;
        uint32_t body[5] = {(uint32_t)op, (uint32_t)origin, (uint32_t)suspect,
                            nonce, silent_ms};
        memcpy(s->body, body, sizeof(body));
        s->req.cb = pb_send_cb;
        s->req.arg = pb;
        ucft_status_t st = tp_send(
            pb->tp, dst, ucft_ctrl_tag((uint32_t)pb->me, UCFT_CTRL_PROBE),
            s->body, sizeof(s->body), &s->req);
        if (st == UCFT_INPROGRESS)
            s->busy = 1;
        return st == UCFT_OK || st == UCFT_INPROGRESS;
    }
    pb->stats.skipped++;
    return 0;
}

/* Candidate helper c (0 .. 2 levels - 1): this rank's binomial link
 * +-2^(c/2), the live neighbour at distance 1; -1 when it is no use. */
static int pb_candidate(const pb_t *pb, unsigned c)
{
    const int n = pb->mb->size;
    long dist = 1L << (c / 2);
    int dir = (c & 1) ? -1 : +1;
    int t;

    if (dist == 1)
        t = mb_live_step(pb->mb, pb->me, dir);
    else
        t = (int)(((long)pb->me + dir * (dist % n) + n) % n);
    if (t < 0 || t == pb->me || t == pb->suspect || mb_is_failed(pb->mb, t))
        return -1;
    return t;
}

static unsigned pb_ncandidates(const pb_t *pb)
{
    unsigned levels = 0;
    for (long d = 1; d <= pb->mb->size / 2; d *= 2)
        levels++;
    return 2 * levels;
}

/* Asks the next `helpers` candidates (distinct) to probe the suspect;
 * returns how many were asked. */
static int pb_round(pb_t *pb)
{
    unsigned nc = pb_ncandidates(pb);
    int asked[PB_MAX_HELPERS], na = 0;
    uint64_t now = tp_now(pb->tp);
    uint64_t silent = now > pb->since ? (now - pb->since) / 1000000 : 0;
    uint32_t silent_ms = silent > UINT32_MAX ? UINT32_MAX : (uint32_t)silent;

    pb->stats.rounds++;
    for (unsigned tried = 0; tried < nc && na < pb->params.helpers; tried++) {
        int h = pb_candidate(pb, pb->cursor++ % nc);
        int dup = h < 0;
        for (int i = 0; i < na && !dup; i++)
            dup = asked[i] == h;
        if (dup)
            continue;
        asked[na++] = h;
        if (pb_post(pb, h, CTRL_PROBE_REQ, pb->me, pb->suspect, pb->nonce,
                    silent_ms))
            pb->stats.requests++;
    }
    return na;
}

static void pb_arm(pb_t *pb, uint64_t now)
{
    uint64_t next = now + pb->params.round_ns;
    if (pb->params.round_ns == 0 || next > pb->deadline)
        next = pb->deadline;
    pb->timer_on = tp_timer_start(pb->tp, &pb->timer, next) == UCFT_OK;
}

static void pb_disarm(pb_t *pb)
{
    if (pb->timer_on)
        tp_timer_stop(pb->tp, &pb->timer);
    pb->timer_on = 0;
}

static void pb_confirm(pb_t *pb)
{
    int s = pb->suspect;
    pb->suspect = -1;
    pb_disarm(pb);
    pb->stats.confirmed++;
    pb->ops.confirmed_cb(pb->ops.arg, s);
}

static void pb_timer_cb(ucft_timer_t *t)
{
    pb_t *pb = t->arg;
    uint64_t now = tp_now(pb->tp);

    pb->timer_on = 0;
    if (pb->suspect < 0 || !pb->recv.on)
        return;
    if (now >= pb->deadline) {
        pb_confirm(pb);
        return;
    }
    pb_round(pb);
    pb_arm(pb, now);
}

void pb_suspect(pb_t *pb, int suspect, uint64_t since, uint64_t window_ns)
{
    uint64_t now = tp_now(pb->tp);

    pb_disarm(pb);
    pb->suspect = suspect;
    pb->since = since;
    pb->nonce++;
    pb->deadline = now + (window_ns > 0 ? window_ns : pb->params.window_ns);
    pb->stats.suspicions++;
    /* Nobody else to ask (every helper failed, or N <= 3): the window
     * still passes, for the rank's own heartbeat; a later round may find
     * a helper. Confirming at once would declare a rank before its
     * deadline, or a presumed one before it could answer. */
    if (pb_round(pb) == 0)
        pb->stats.alone++;
    pb_arm(pb, now);
}

void pb_cancel(pb_t *pb, int suspect)
{
    if (pb->suspect != suspect || suspect < 0)
        return;
    pb->suspect = -1;
    pb_disarm(pb);
}

static void pb_on_msg(pb_t *pb, int src, const ctrl_wire_probe_t *m)
{
    if (mb_is_failed(pb->mb, src)) {
        pb->stats.fenced++;
        return;
    }
    switch (m->op) {
    case CTRL_PROBE_REQ: /* we help: ping the suspect */
        if (mb_is_failed(pb->mb, m->suspect))
            break;
        if (pb->ops.vouch_cb != NULL) {
            hb_vouch_t v = pb->ops.vouch_cb(pb->ops.arg, m->suspect,
                                            (uint64_t)m->silent_ms * 1000000);
            if (v == HB_VOUCH_ALIVE) { /* the kernel shows it alive */
                if (pb_post(pb, m->origin, CTRL_PROBE_RELAY, m->origin,
                            m->suspect, m->nonce, m->silent_ms))
                    pb->stats.vouched++;
                break;
            }
            if (v == HB_VOUCH_DEAD) { /* stopped, dead or stuck */
                pb->stats.unvouched++;
                break;
            }
        }
        if (pb_post(pb, m->suspect, CTRL_PROBE_PING, m->origin, m->suspect,
                    m->nonce, m->silent_ms))
            pb->stats.pings++;
        break;
    case CTRL_PROBE_PING: /* we are suspected: answer the helper */
        if (pb_post(pb, src, CTRL_PROBE_ACK, m->origin, pb->me, m->nonce,
                    m->silent_ms))
            pb->stats.acks++;
        break;
    case CTRL_PROBE_ACK: /* we help: tell the origin */
        if (!mb_is_failed(pb->mb, m->origin) &&
            pb_post(pb, m->origin, CTRL_PROBE_RELAY, m->origin, m->suspect,
                    m->nonce, m->silent_ms))
            pb->stats.relays++;
        break;
    case CTRL_PROBE_RELAY: /* an answer to our suspicion */
        if (m->suspect != pb->suspect || m->nonce != pb->nonce) {
            pb->stats.stale++;
            break;
        }
        pb->suspect = -1;
        pb_disarm(pb);
        pb->stats.refuted++;
        pb->ops.refuted_cb(pb->ops.arg, m->suspect, src);
        break;
    }
}

static void pb_take(void *arg, const standing_t *s)
{
    pb_t *pb = arg;
    uint32_t src = ucft_tag_src(s->req.tag);
    ctrl_wire_probe_t m;
    const char *why;

    if (ctrl_wire_probe(s->buf, s->req.length, pb->mb->size, pb->me, src, &m,
                        &why) != UCFT_OK) {
        pb->stats.malformed++;
        ucft_warn(pb->tp->log, "probe message from rank %u dropped: %s",
                  (unsigned)src, why);
        return;
    }
    pb_on_msg(pb, (int)src, &m);
}

ucft_status_t pb_start(pb_t *pb)
{
    const int n = pb->mb->size;

    pb->timer.cb = pb_timer_cb;
    pb->timer.arg = pb;
    if (pb->params.helpers > 0)
        for (long d = 1; d <= n / 2; d *= 2) {
            /* Helper of the suspect (our link's predecessor); suspect of
             * the helpers (our observer's links). */
            long t[4] = {pb->me - 1 - d, pb->me - 1 + d, pb->me + 1 - d,
                         pb->me + 1 + d};
            for (int i = 0; i < 4; i++) {
                int r = (int)((t[i] % n + n) % n);
                if (r != pb->me)
                    tp_watch(pb->tp, r);
            }
        }
    return standing_start(&pb->recv);
}

void pb_stop(pb_t *pb)
{
    pb_disarm(pb);
    pb->suspect = -1;
    standing_stop(&pb->recv);
}

int pb_idle(const pb_t *pb)
{
    for (int i = 0; i < PB_NSEND; i++)
        if (pb->sends[i].busy)
            return 0;
    return !standing_posted(&pb->recv);
}
