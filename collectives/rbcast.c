/* Reliable broadcast of small facts (rbcast.h). */
#include "rbcast.h"
#include "collectives/coll_wire.h"
#include "transport/ctrl_kinds.h"

#include <stdlib.h>
#include <string.h>

static void rbc_pump(rbcast_t *rb);
static void rbc_post(rbcast_t *rb);

static ucft_status_t enqueue(rbcast_t *rb, const uint32_t fact[2],
                             const int *to, int n)
{
    /* The group is copied: its owner (a communicator) may be freed while
     * the fact is still on its way. */
    size_t extra = to != NULL ? (size_t)n * sizeof(int) : 0;
    rbc_item_t *it = calloc(1, sizeof(*it) + extra);
    if (it == NULL)
        return UCFT_ERR_NO_MEMORY;
    it->fact[0] = fact[0];
    it->fact[1] = fact[1];
    if (to != NULL) {
        memcpy(it->group, to, extra);
        it->to = it->group;
    }
    it->n = n;
    if (rb->tail != NULL)
        rb->tail->next = it;
    else
        rb->head = it;
    rb->tail = it;
    return UCFT_OK;
}

/* One send at a time, every fact to every rank of its group but this one.
 * A send that fails at once goes to a rank known dead: skipped. */
static void rbc_pump(rbcast_t *rb)
{
    while (!rb->sbusy && !rb->stopped && rb->head != NULL) {
        rbc_item_t *it = rb->head;
        if (it->next_i >= it->n) {
            rb->head = it->next;
            if (rb->head == NULL)
                rb->tail = NULL;
            free(it);
            continue;
        }
        int i = it->next_i++;
        int dst = it->to != NULL ? it->to[i] : i;
        if (dst == rb->tp->rank)
            continue;
        rb->sbuf[0] = it->fact[0];
        rb->sbuf[1] = it->fact[1];
        rb->sreq.buffered = 1;
        ucft_status_t st = tp_send(
            rb->tp, dst, ucft_ctrl_tag((uint32_t)rb->tp->rank, rb->kind),
            rb->sbuf, sizeof(rb->sbuf), &rb->sreq);
        rb->sbusy = st == UCFT_INPROGRESS;
    }
}

static void rbc_sent_cb(tp_req_t *req)
{
    rbcast_t *rb = req->arg;
    rb->sbusy = 0;
    rbc_pump(rb);
}

static void rbc_got(tp_req_t *req)
{
    rbcast_t *rb = req->arg;
    rb->rbusy = 0;
    if (req->status == UCFT_ERR_CANCELED || rb->stopped)
        return;
    uint32_t fact[2];
    if (req->status != UCFT_OK ||
        !coll_wire_fact(rb->rbuf, req->length, fact)) {
        ucft_warn(rb->tp->log,
                  "broadcast fact (kind %u) from rank %u: %zu bytes, "
                  "expected %zu (%s): dropped",
                  rb->kind, (unsigned)ucft_tag_src(req->tag), req->length,
                  sizeof(rb->rbuf), ucft_status_string(req->status));
    } else {
        const int *to = NULL;
        int n = 0;
        if (rb->deliver(rb->arg, fact, &to, &n) &&
            enqueue(rb, fact, to, n) != UCFT_OK)
            ucft_warn(rb->tp->log, "broadcast fact: no memory to pass it on");
        rbc_pump(rb);
    }
    rbc_post(rb);
}

static void rbc_post(rbcast_t *rb)
{
    while (!rb->rbusy && !rb->stopped) {
        ucft_status_t st = tp_recv(rb->tp, ucft_ctrl_tag(0, rb->kind),
                                   ucft_ctrl_mask_any_source(), rb->rbuf,
                                   sizeof(rb->rbuf), &rb->rreq);
        if (st == UCFT_INPROGRESS)
            rb->rbusy = 1;
        else if (st == UCFT_OK)
            rbc_got(&rb->rreq);
        else
            return;
    }
}

void rbc_init(rbcast_t *rb, tp_t *tp, unsigned kind, rbc_deliver_fn deliver,
              void *arg)
{
    *rb = (rbcast_t){.tp = tp, .kind = kind, .deliver = deliver, .arg = arg};
    rb->rreq = (tp_req_t){.cb = rbc_got, .arg = rb};
    rb->sreq = (tp_req_t){.cb = rbc_sent_cb, .arg = rb};
}

void rbc_start(rbcast_t *rb)
{
    rbc_post(rb);
}

ucft_status_t rbc_publish(rbcast_t *rb, const uint32_t fact[2], const int *to,
                          int n)
{
    ucft_status_t st = enqueue(rb, fact, to, n);
    rbc_pump(rb);
    return st;
}

int rbc_sent(const rbcast_t *rb)
{
    return !rb->sbusy && rb->head == NULL;
}

void rbc_stop(rbcast_t *rb)
{
    rb->stopped = 1;
    if (rb->rbusy)
        tp_cancel(rb->tp, &rb->rreq);
}

void rbc_destroy(rbcast_t *rb)
{
    while (rb->head != NULL) {
        rbc_item_t *it = rb->head;
        rb->head = it->next;
        free(it);
    }
    rb->tail = NULL;
}
