/* Anti-entropy for the failed set: see reconcile.h. */
#include "runtime/detector/reconcile.h"
#include "runtime/detector/ctrl_wire.h"
#include "transport/ctrl_kinds.h"

#include <string.h>

static void rec_take(void *arg, const standing_t *s);

_Static_assert(REC_MAX_FACTS == CTRL_WIRE_MAX_FACTS &&
                   REC_FLAG_ANSWER == CTRL_WIRE_FLAG_ANSWER,
               "the failed set's format is ctrl_wire.h's");

/* Running is the standing receive's state: started and not stopped. */
static int rec_running(const rec_t *r)
{
    return r->recv.on;
}

void rec_init(rec_t *r, tp_t *tp, const mb_t *mb, const rec_ops_t *ops)
{
    memset(r, 0, sizeof(*r));
    r->tp = tp;
    r->mb = mb;
    r->me = tp->rank;
    r->ops = *ops;
    standing_init(&r->recv, tp, UCFT_CTRL_FAILED_SET, r->rbuf, sizeof(r->rbuf),
                  0, rec_take, r);
}

static void rec_send_cb(tp_req_t *req)
{
    rec_t *r = req->arg;
    r->send_busy = 0;
}

/* Our set (or its next window) to `rank`, with `flags`. */
static void rec_send(rec_t *r, int rank, uint32_t flags)
{
    size_t count = mb_count(r->mb), n = count, first = 0;

    if (!rec_running(r) || rank < 0 || rank == r->me)
        return;
    if (r->send_busy) {
        r->stats.skipped++;
        return;
    }
    if (count > REC_MAX_FACTS) {
        n = REC_MAX_FACTS;
        first = r->window % count;
        r->window = first + n;
    }
    r->sbuf[0] = flags;
    r->sbuf[1] = (uint32_t)n;
    for (size_t i = 0; i < n; i++)
        r->sbuf[2 + i] = (uint32_t)mb_nth(r->mb, (first + i) % count);
    r->send.cb = rec_send_cb;
    r->send.arg = r;
    ucft_status_t st = tp_send(
        r->tp, rank, ucft_ctrl_tag((uint32_t)r->me, UCFT_CTRL_FAILED_SET),
        r->sbuf, (2 + n) * sizeof(uint32_t), &r->send);
    if (st == UCFT_INPROGRESS)
        r->send_busy = 1;
    if (st != UCFT_OK && st != UCFT_INPROGRESS)
        return;
    if (flags & REC_FLAG_ANSWER)
        r->stats.offers++;
    else
        r->stats.answers++;
}

void rec_offer(rec_t *r, int rank)
{
    rec_send(r, rank, REC_FLAG_ANSWER);
}

static void rec_on_msg(rec_t *r, int src, size_t len)
{
    ctrl_wire_set_t m;

    r->stats.received++;
    if (ctrl_wire_set_decode(r->rbuf, len, &m) != UCFT_OK || src < 0 ||
        src >= r->mb->size) {
        r->stats.malformed++;
        return;
    }
    if (mb_is_failed(r->mb, src)) {
        r->stats.fenced++;
        r->ops.fenced_cb(r->ops.arg, src);
        return;
    }
    uint32_t n = m.n;
    for (uint32_t i = 0; i < n; i++) {
        if (ctrl_wire_set_fact(&m, i) == (uint32_t)r->me) {
            r->ops.self_cb(r->ops.arg, src);
            return;
        }
    }
    size_t listed = 0;
    for (uint32_t i = 0; i < n && rec_running(r); i++) {
        uint32_t f = ctrl_wire_set_fact(&m, i);
        if (f >= (uint32_t)r->mb->size)
            continue;
        listed++;
        if (!mb_is_failed(r->mb, (int)f)) {
            r->stats.learnt++;
            ucft_info(r->tp->log,
                      "learnt that rank %u failed from rank %d's failed set "
                      "(a failure message to this rank was lost)",
                      f, src);
            r->ops.news_cb(r->ops.arg, (int)f, src);
        }
    }
    /* After the news every listed fact is ours: more than that is news
     * for the sender. */
    if ((m.flags & REC_FLAG_ANSWER) && mb_count(r->mb) > listed)
        rec_send(r, src, 0);
}

static void rec_take(void *arg, const standing_t *s)
{
    /* Whole messages only (standing.c drops a truncated one). */
    rec_on_msg(arg, (int)ucft_tag_src(s->req.tag), s->req.length);
}

ucft_status_t rec_start(rec_t *r)
{
    return standing_start(&r->recv);
}

void rec_stop(rec_t *r)
{
    standing_stop(&r->recv);
}

int rec_idle(const rec_t *r)
{
    return !standing_posted(&r->recv) && !r->send_busy;
}
