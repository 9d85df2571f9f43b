/* A standing receive of one control kind: see standing.h. */
#include "runtime/detector/standing.h"
#include "runtime/ctrl_kinds.h"

static ucft_status_t standing_post(standing_t *s);

static void standing_cb(tp_req_t *req)
{
    standing_t *s = req->arg;

    s->posted = 0;
    if (req->status == UCFT_ERR_CANCELED || !s->on)
        return;
    s->fn(s->arg, s);
    if (s->on && !s->posted)
        standing_post(s);
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
        s->fn(s->arg, s);
        if (!s->on)
            return UCFT_OK;
    }
}

void standing_init(standing_t *s, tp_t *tp, unsigned kind, void *buf,
                   size_t len, standing_fn_t fn, void *arg)
{
    *s = (standing_t){
        .tp = tp, .kind = kind, .buf = buf, .len = len, .fn = fn, .arg = arg};
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
