/*
 * Baseline broadcast on the interleaved binomial tree (tree_binomial.h),
 * not fault-tolerant: a rank receives the payload from its parent, then
 * sends it to its children in increasing distance. A rank whose parent
 * fails before its message arrived (on_failure: the receive is cancelled)
 * ends with UCFT_ERR_PROC_FAILED and passes the error down, as below, so
 * a failed rank's whole subtree ends with the error and nobody waits for
 * ever.
 *
 * A receive that fails while the parent lives (a corrupted message under
 * the payload checksums, coll_csum.h: it cannot be taken as lost here) or
 * an error message from the parent end the rank with UCFT_ERR_PROC_FAILED,
 * as the fault-aware baselines do (baseline.h), a message of another size
 * with UCFT_ERR_TRUNCATED (logged); either way it first sends an empty error
 * message (kind COLL_KIND_BCAST_BINOMIAL_ERR) to each of its children instead
 * of the payload, so its whole subtree ends with the same error, and no rank
 * waits for ever for a message its parent cannot give.
 *
 * State machine per rank:
 *   IDLE --start--> RECV --payload--> SEND --last child--> DONE
 *   (the root starts in SEND)
 * One send request is reused for all children: the next child is sent to
 * when the previous send completes. On the sim backend this costs nothing
 * (the send port is busy until ts + max(g, o + (s-1)G) anyway, and the send
 * completes at ts + o); on UCP small sends complete inline. A send that
 * fails (child declared failed) is skipped.
 *
 * The tree: args->tree when given (a communicator's rerouted tree after
 * agreed failures, UCFT_TREE_REPAIR=reroute|lookup, docs/trees.md), else
 * the binomial tree of tp->size ranks through args->map.
 */
#include "baseline.h"
#include "tree_binomial.h"
#include "tree_ft.h"

#include <string.h>

enum { PH_IDLE, PH_RECV, PH_SEND, PH_DONE };

typedef struct bcast_binomial {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf;
    tp_req_t rreq;
    tp_req_t sreq;
    int vrank;
    int parent;           /* its rank (RECV) */
    ucft_status_t status; /* INPROGRESS until done */
    ucft_status_t ends;   /* the status once every child is sent to */
    int next;             /* index of the next child to send to */
    uint8_t phase;
    uint8_t recv_pending;
    uint8_t send_pending;
    uint8_t cleaned;
} bcast_binomial_t;

static void finish(bcast_binomial_t *s, ucft_status_t status, int in_cb)
{
    s->phase = PH_DONE;
    s->status = status;
    if (in_cb && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, status);
}

/* The i-th child's rank, or -1 past the last: in args->tree when given,
 * else in the binomial tree through args->map. */
static int kid(const bcast_binomial_t *s, int i)
{
    const coll_args_t *a = s->args;
    if (a->tree != NULL)
        return coll_tree_kid(a->tree, s->tp->rank, i);
    int c = coll_binomial_child(s->vrank, (unsigned)i, s->tp->size);
    return c < 0 ? -1 : coll_rank_of(a, c, a->root, s->tp->size);
}

/* Sends to the remaining children (the payload, or after a failure
 * (s->ends != UCFT_OK) the empty error message); returns UCFT_INPROGRESS
 * while a send is pending, else the rank's final status once the last
 * child has been sent to. */
static ucft_status_t send_children(bcast_binomial_t *s, int in_cb)
{
    const coll_args_t *a = s->args;
    int err = s->ends != UCFT_OK;

    for (;;) {
        int c = kid(s, s->next);
        if (c < 0)
            break;
        s->next++;
        ucft_status_t st =
            tp_send(s->tp, c,
                    coll_tag(a, s->tp->rank,
                             err ? COLL_KIND_BCAST_BINOMIAL_ERR
                                 : COLL_KIND_BCAST_BINOMIAL),
                    err ? NULL : s->buf, err ? 0 : a->len, &s->sreq);
        if (st == UCFT_INPROGRESS) {
            s->send_pending = 1;
            return UCFT_INPROGRESS;
        }
        if (st != UCFT_OK)
            ucft_debug(s->tp->log, "bcast: send to rank %d failed: %s", c,
                       ucft_status_string(st));
    }
    finish(s, s->ends, in_cb);
    return s->ends;
}

/* The parent's message is in req (done): UCFT_OK when it is the payload;
 * else the rank has failed (logged), and its children get the error. */
static ucft_status_t took(bcast_binomial_t *s, const tp_req_t *req)
{
    const char *why;
    if (req->status == UCFT_OK && coll_baseline_is_err(req)) {
        why = "the parent failed";
        s->ends = UCFT_ERR_PROC_FAILED;
    } else if (coll_recv_status(s->tp, s->args, req, s->args->len) == UCFT_OK) {
        return UCFT_OK;
    } else if (req->status == UCFT_OK || req->status == UCFT_ERR_TRUNCATED) {
        why = "a message of another size"; /* logged by coll_recv_status */
        s->ends = UCFT_ERR_TRUNCATED;
    } else {
        why = "receive failed";
        s->ends = UCFT_ERR_PROC_FAILED;
    }
    ucft_debug(s->tp->log, "bcast: %s (%s): the children get the error", why,
               ucft_status_string(req->status));
    return s->ends;
}

static void send_cb(tp_req_t *req)
{
    bcast_binomial_t *s = req->arg;

    s->send_pending = 0;
    if (s->cleaned || s->phase != PH_SEND)
        return;
    send_children(s, 1);
}

static void recv_cb(tp_req_t *req)
{
    bcast_binomial_t *s = req->arg;

    s->recv_pending = 0;
    if (s->cleaned)
        return;
    took(s, req);
    s->phase = PH_SEND;
    send_children(s, 1);
}

static ucft_status_t bcast_init(void *state, tp_t *tp, const coll_args_t *args,
                                void *buf)
{
    bcast_binomial_t *s = state;

    if (args->root < 0 || args->root >= tp->size ||
        (args->tree != NULL &&
         (args->tree->n != tp->size || args->tree->root != args->root)))
        return UCFT_ERR_INVALID_PARAM;
    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->buf = buf;
    s->vrank = coll_vrank_of(args, tp->rank, args->root, tp->size);
    s->status = UCFT_INPROGRESS;
    s->ends = UCFT_OK;
    s->rreq.cb = recv_cb;
    s->rreq.arg = s;
    s->sreq.cb = send_cb;
    s->sreq.arg = s;
    return UCFT_OK;
}

static ucft_status_t bcast_start(void *state)
{
    bcast_binomial_t *s = state;
    const coll_args_t *a = s->args;
    int n = s->tp->size;

    if (s->vrank == 0) {
        s->phase = PH_SEND;
        return send_children(s, 0);
    }
    int parent =
        a->tree != NULL
            ? coll_tree_parent_of(a->tree, s->tp->rank)
            : coll_rank_of(a, coll_binomial_parent(s->vrank), a->root, n);
    s->parent = parent;
    s->phase = PH_RECV;
    ucft_status_t st =
        tp_recv(s->tp, coll_tag(a, parent, COLL_KIND_BCAST_BINOMIAL),
                COLL_BASELINE_RECV_MASK, s->buf, a->len, &s->rreq);
    if (st == UCFT_INPROGRESS) {
        s->recv_pending = 1;
        return UCFT_INPROGRESS;
    }
    if (st != UCFT_OK) { /* refused at once: the children get the error */
        s->rreq.status = st;
        s->rreq.length = 0;
    }
    took(s, &s->rreq);
    s->phase = PH_SEND;
    return send_children(s, 0);
}

static ucft_status_t bcast_test(const void *state)
{
    return ((const bcast_binomial_t *)state)->status;
}

static void bcast_cleanup(void *state)
{
    bcast_binomial_t *s = state;

    s->cleaned = 1;
    if (s->recv_pending)
        tp_cancel(s->tp, &s->rreq);
}

/* The parent failed before its message arrived: the receive is cancelled,
 * and its callback sends the children the error (took). */
static void bcast_on_failure(void *state, int rank)
{
    bcast_binomial_t *s = state;

    if (s->cleaned || s->phase != PH_RECV || !s->recv_pending ||
        rank != s->parent)
        return;
    tp_cancel(s->tp, &s->rreq);
}

static int bcast_idle(const void *state)
{
    const bcast_binomial_t *s = state;
    return !s->recv_pending && !s->send_pending;
}

const coll_op_ops_t coll_bcast_binomial_ops = {
    .op = "bcast",
    .alg = "binomial",
    .doc = "baseline interleaved binomial tree, no fault tolerance",
    .state_size = sizeof(bcast_binomial_t),
    .buf_mult = 1,
    .init = bcast_init,
    .start = bcast_start,
    .test = bcast_test,
    .cleanup = bcast_cleanup,
    .idle = bcast_idle,
    .on_failure = bcast_on_failure,
    .direct = 1,
    .takes_tree = 1,
};
