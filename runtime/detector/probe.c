/* Indirect probes, the helper and suspect roles and the wire: see
 * probe.h (the origin's side: probe_origin.c). */
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
    if (pb->params.run < 1)
        pb->params.run = 1;
    if (pb->params.run > PB_MAX_RUN)
        pb->params.run = PB_MAX_RUN;
    pb->ops = *ops;
    pb__reset(pb);
    pb->alive = -1;
    for (int i = 0; i < PB_MAX_EVIDENCE; i++)
        pb->ev[i].rank = -1;
    standing_init(&pb->recv, tp, UCFT_CTRL_PROBE, pb->rbuf, sizeof(pb->rbuf), 1,
                  pb_take, pb);
}

static void pb_send_cb(tp_req_t *req)
{
    ((pb_send_t *)req)->busy = 0;
}

/* One probe message from the pool; a full pool skips it (counted): the
 * next round asks again. */
int pb__post(pb_t *pb, int dst, ctrl_probe_op_t op, int origin, int suspect,
             uint32_t nonce, uint32_t silent_ms)
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
                if (pb__post(pb, m->origin, CTRL_PROBE_RELAY, m->origin,
                             m->suspect, m->nonce, m->silent_ms))
                    pb->stats.vouched++;
                break;
            }
            if (v == HB_VOUCH_DEAD) { /* stopped, dead or stuck */
                pb->stats.unvouched++;
                break;
            }
        }
        if (pb__post(pb, m->suspect, CTRL_PROBE_PING, m->origin, m->suspect,
                     m->nonce, m->silent_ms))
            pb->stats.pings++;
        break;
    case CTRL_PROBE_PING: /* we are suspected: answer the helper */
        if (pb__post(pb, src, CTRL_PROBE_ACK, m->origin, pb->me, m->nonce,
                     m->silent_ms))
            pb->stats.acks++;
        break;
    case CTRL_PROBE_ACK: /* we help: tell the origin */
        if (!mb_is_failed(pb->mb, m->origin) &&
            pb__post(pb, m->origin, CTRL_PROBE_RELAY, m->origin, m->suspect,
                     m->nonce, m->silent_ms))
            pb->stats.relays++;
        break;
    case CTRL_PROBE_RELAY: /* an answer to one of our suspicions */
        pb__relay(pb, src, m->suspect, m->nonce);
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

    pb->timer.cb = pb__timer_cb;
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
    if (pb->timer_on)
        tp_timer_stop(pb->tp, &pb->timer);
    pb->timer_on = 0;
    pb__reset(pb);
    for (int i = 0; i < PB_MAX_EVIDENCE; i++)
        pb->ev[i].rank = -1;
    standing_stop(&pb->recv);
}

int pb_idle(const pb_t *pb)
{
    for (int i = 0; i < PB_NSEND; i++)
        if (pb->sends[i].busy)
            return 0;
    return !standing_posted(&pb->recv);
}
