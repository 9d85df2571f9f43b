/* A standing receive of one control kind: see standing.h. */
#include "runtime/detector/standing.h"
#include "runtime/detector/ctrl_wire.h"
#include "transport/ctrl_kinds.h"

static ucft_status_t standing_post(standing_t *s);

/* A message fit to hand on: received whole, from another rank of the
 * job, of the owner's exact length when it has one. Anything else is
 * dropped here with a log line (a peer running other code, or bytes that
 * are not ours), so no owner reads a body that was not sent whole. */
static int standing_valid(const standing_t *s)
{
    const tp_req_t *r = &s->req;
    uint32_t src = ucft_tag_src(r->tag);
    const char *why = ctrl_wire_check(r->status, src, r->length, s->tp->size,
                                      s->tp->rank, s->len, s->fixed);
    if (why == NULL)
        return 1;
    ucft_warn(s->tp->log,
              "control message kind %u from rank %u (%zu bytes) dropped: %s",
              s->kind, (unsigned)src, r->length, why);
    return 0;
}

static void standing_cb(tp_req_t *req)
{
    standing_t *s = req->arg;

    s->posted = 0;
    if (req->status == UCFT_ERR_CANCELED || !s->on)
        return;
    if (standing_valid(s))
        s->fn(s->arg, s);
    if (s->on && !s->posted) {
        ucft_status_t st = standing_post(s);
        if (st != UCFT_OK)
            ucft_error(s->tp->log,
                       "control messages of kind %u: the receive could not "
                       "be posted again (%s): no more are received",
                       s->kind, ucft_status_string(st));
    }
}

static ucft_status_t standing_post(standing_t *s)
{
    for (;;) {
        s->req.cb = standing_cb;
        s->req.arg = s;
        ucft_status_t st =
            tp_recv(s->tp, ucft_ctrl_tag(0, s->kind),
                    ucft_ctrl_mask_any_source(), s->buf, s->len, &s->req);
        if (st == UCFT_INPROGRESS) {
            s->posted = 1;
            return UCFT_OK;
        }
        if (st != UCFT_OK)
            return st;
        if (standing_valid(s))
            s->fn(s->arg, s);
        if (!s->on)
            return UCFT_OK;
    }
}

void standing_init(standing_t *s, tp_t *tp, unsigned kind, void *buf,
                   size_t len, int fixed, standing_fn_t fn, void *arg)
{
    *s = (standing_t){.tp = tp,
                      .kind = kind,
                      .buf = buf,
                      .len = len,
                      .fn = fn,
                      .arg = arg,
                      .fixed = (uint8_t)(fixed != 0)};
}

ucft_status_t standing_start(standing_t *s)
{
    s->on = 1;
    ucft_status_t st = standing_post(s);
    if (st != UCFT_OK)
        s->on = 0;
    return st;
}

void standing_stop(standing_t *s)
{
    if (!s->on)
        return;
    s->on = 0;
    if (s->posted)
        tp_cancel(s->tp, &s->req);
}
