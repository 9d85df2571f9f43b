/*
 * Ring exchange (a shift): every rank sends its token (args->len bytes at
 * the start of its buffer) to rank + 1 and receives the token of rank - 1
 * into the second half of its buffer, all at once. N messages, latency one
 * hop. Chosen over a token travelling around the ring because it exercises
 * every rank pair of the ring concurrently and scales to a million ranks.
 * A failed rank r costs r + 1 its token; nobody else notices.
 *
 * A rank is done when both its receive and its send have completed; its
 * status is the receive's error if any, else the send's.
 */
#include "coll_op.h"

#include <string.h>

enum { RING_RECV = 1u, RING_SEND = 2u };

typedef struct ring_exchange {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf;
    tp_req_t rreq;
    tp_req_t sreq;
    ucft_status_t rstat, sstat;
    ucft_status_t status; /* INPROGRESS until done */
    uint8_t pending;      /* RING_RECV | RING_SEND */
    uint8_t cleaned;
} ring_exchange_t;

static void maybe_finish(ring_exchange_t *s, int in_cb)
{
    if (s->pending != 0 || s->status != UCFT_INPROGRESS)
        return;
    s->status = s->rstat != UCFT_OK ? s->rstat : s->sstat;
    if (in_cb && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, s->status);
}

static void ring_cb(tp_req_t *req)
{
    ring_exchange_t *s = req->arg;

    if (req == &s->rreq) {
        s->pending &= (uint8_t)~RING_RECV;
        s->rstat = coll_recv_status(s->tp, s->args, req, s->args->len);
    } else {
        s->pending &= (uint8_t)~RING_SEND;
        s->sstat = req->status;
    }
    if (!s->cleaned)
        maybe_finish(s, 1);
}

static ucft_status_t ring_init(void *state, tp_t *tp, const coll_args_t *args,
                               void *buf)
{
    ring_exchange_t *s = state;

    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->buf = buf;
    s->status = UCFT_INPROGRESS;
    s->rreq.cb = ring_cb;
    s->rreq.arg = s;
    s->sreq.cb = ring_cb;
    s->sreq.arg = s;
    return UCFT_OK;
}

static ucft_status_t ring_start(void *state)
{
    ring_exchange_t *s = state;
    const coll_args_t *a = s->args;
    int n = s->tp->size, me = s->tp->rank;
    int left = (me + n - 1) % n, right = (me + 1) % n;
    ucft_status_t st;

    st = tp_recv(s->tp, coll_tag(a, left, COLL_KIND_RING_EXCHANGE),
                 UCFT_TAG_FULL_MASK, s->buf + a->len, a->len, &s->rreq);
    if (st == UCFT_INPROGRESS)
        s->pending |= RING_RECV;
    else
        s->rstat =
            st == UCFT_OK ? coll_recv_status(s->tp, a, &s->rreq, a->len) : st;

    st = tp_send(s->tp, right, coll_tag(a, me, COLL_KIND_RING_EXCHANGE), s->buf,
                 a->len, &s->sreq);
    if (st == UCFT_INPROGRESS)
        s->pending |= RING_SEND;
    else
        s->sstat = st;

    maybe_finish(s, 0);
    return s->status;
}

static ucft_status_t ring_test(const void *state)
{
    return ((const ring_exchange_t *)state)->status;
}

static void ring_cleanup(void *state)
{
    ring_exchange_t *s = state;

    s->cleaned = 1;
    if (s->pending & RING_RECV)
        tp_cancel(s->tp, &s->rreq);
}

static int ring_idle(const void *state)
{
    return ((const ring_exchange_t *)state)->pending == 0;
}

const coll_op_ops_t coll_ring_exchange_ops = {
    .op = "ring",
    .alg = "exchange",
    .doc = "every rank sends a token to rank+1, receives from rank-1",
    .state_size = sizeof(ring_exchange_t),
    .buf_mult = 2,
    .init = ring_init,
    .start = ring_start,
    .test = ring_test,
    .cleanup = ring_cleanup,
    .idle = ring_idle,
};
