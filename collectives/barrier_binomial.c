/*
 * Baseline barrier on a binomial tree (the paper's case, docs/trees.md):
 * every rank hears an empty message from each of its children, in order,
 * then tells its parent; the root then sends an empty message down the
 * same tree. Fault-aware, not fault-tolerant: a parent or child that
 * fails while this rank waits for it ends its part with
 * UCFT_ERR_PROC_FAILED.
 *
 * The tree: args->tree when given (collectives/tree_ft.h: rerouted or
 * rebalanced around failed ranks, in the ranks of the transport), else the
 * binomial tree of the tp->size ranks through args->map.
 *
 *   UP (receive from child i, i = 0..) -> send to parent -> DOWN (receive
 *   from parent) -> send to every child -> DONE; the root skips the middle.
 */
#include "coll_op.h"
#include "tree_binomial.h"
#include "tree_ft.h"

enum { PH_UP, PH_UP_SEND, PH_DOWN, PH_DOWN_SEND, PH_DONE };

typedef struct barrier_binomial {
    tp_t *tp;
    const coll_args_t *args;
    tp_req_t rreq, sreq;
    int vrank, parent, nkids, root;
    int next; /* child heard from (UP) or sent to (DOWN_SEND) */
    ucft_status_t status;
    uint8_t phase, recv_pending, send_pending, cleaned;
    unsigned char scratch[8];
} barrier_binomial_t;

static int kid(const barrier_binomial_t *s, int i)
{
    const coll_tree_t *t = s->args->tree;
    if (t != NULL)
        return t->child[t->first[s->tp->rank] + i];
    int n = s->tp->size;
    return coll_rank_of(s->args, coll_binomial_child(s->vrank, (unsigned)i, n),
                        s->root, n);
}

static uint64_t tag_of(const barrier_binomial_t *s, int src, int down)
{
    return coll_tag(s->args, src, COLL_KIND_BARRIER_BINOMIAL + (down ? 1 : 0));
}

static void finish(barrier_binomial_t *s, ucft_status_t st, int in_cb)
{
    if (s->phase == PH_DONE)
        return;
    s->phase = PH_DONE;
    s->status = st;
    if (in_cb && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void recv_cb(tp_req_t *req);
static void send_cb(tp_req_t *req);

/* Posts the receive of an empty message with this tag: 1 when the
 * machine must stop here (pending, or finished with the error), 0 when it
 * completed at once. */
static int post_recv(barrier_binomial_t *s, uint64_t tag, int in_cb)
{
    s->rreq = (tp_req_t){.cb = recv_cb, .arg = s};
    ucft_status_t st = tp_recv(s->tp, tag, UCFT_TAG_FULL_MASK, s->scratch,
                               sizeof(s->scratch), &s->rreq);
    if (st == UCFT_INPROGRESS)
        s->recv_pending = 1;
    else if (st != UCFT_OK)
        finish(s, st, in_cb);
    return st != UCFT_OK;
}

/* Runs the state machine as far as it goes without waiting. */
static void step(barrier_binomial_t *s, int in_cb)
{
    for (;;) {
        ucft_status_t st;
        switch (s->phase) {
        case PH_UP:
            if (s->next == s->nkids) {
                s->phase = s->parent < 0 ? PH_DOWN_SEND : PH_UP_SEND;
                s->next = 0;
                continue;
            }
            if (post_recv(s, tag_of(s, kid(s, s->next), 0), in_cb))
                return;
            s->next++;
            continue;
        case PH_UP_SEND:
        case PH_DOWN_SEND: {
            int down = s->phase == PH_DOWN_SEND;
            if (down && s->next == s->nkids) {
                finish(s, UCFT_OK, in_cb);
                return;
            }
            int dst = down ? kid(s, s->next) : s->parent;
            s->sreq = (tp_req_t){.cb = send_cb, .arg = s, .buffered = 1};
            st = tp_send(s->tp, dst, tag_of(s, s->tp->rank, down), NULL, 0,
                         &s->sreq);
            if (st == UCFT_INPROGRESS) {
                s->send_pending = 1;
                return;
            }
            if (st != UCFT_OK && !down) {
                finish(s, st, in_cb);
                return;
            }
            if (down)
                s->next++; /* a failed child cuts off only its subtree */
            else
                s->phase = PH_DOWN;
            continue;
        }
        case PH_DOWN:
            if (post_recv(s, tag_of(s, s->parent, 1), in_cb))
                return;
            s->phase = PH_DOWN_SEND;
            s->next = 0;
            continue;
        default:
            return;
        }
    }
}

static void recv_cb(tp_req_t *req)
{
    barrier_binomial_t *s = req->arg;
    s->recv_pending = 0;
    if (s->cleaned || s->phase == PH_DONE)
        return;
    if (req->status != UCFT_OK) {
        finish(s, req->status, 1);
        return;
    }
    if (s->phase == PH_UP)
        s->next++;
    else {
        s->phase = PH_DOWN_SEND;
        s->next = 0;
    }
    step(s, 1);
}

static void send_cb(tp_req_t *req)
{
    barrier_binomial_t *s = req->arg;
    s->send_pending = 0;
    if (s->cleaned || s->phase == PH_DONE)
        return;
    if (s->phase == PH_UP_SEND) {
        if (req->status != UCFT_OK) {
            finish(s, req->status, 1);
            return;
        }
        s->phase = PH_DOWN;
    } else {
        s->next++;
    }
    step(s, 1);
}

static ucft_status_t bb_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf)
{
    barrier_binomial_t *s = state;
    const coll_tree_t *t = args->tree;
    int n = tp->size;
    (void)buf;
    *s =
        (barrier_binomial_t){.tp = tp, .args = args, .status = UCFT_INPROGRESS};
    if (t != NULL) {
        if (t->n != n)
            return UCFT_ERR_INVALID_PARAM;
        s->root = t->root;
        s->parent = t->parent[tp->rank];
        s->nkids = t->first[tp->rank + 1] - t->first[tp->rank];
    } else {
        s->root = 0;
        s->vrank = coll_vrank_of(args, tp->rank, 0, n);
        int p = coll_binomial_parent(s->vrank);
        s->parent = p < 0 ? -1 : coll_rank_of(args, p, 0, n);
        s->nkids = (int)coll_binomial_nchildren(s->vrank, n);
    }
    return UCFT_OK;
}

static ucft_status_t bb_start(void *state)
{
    barrier_binomial_t *s = state;
    step(s, 0);
    return s->phase == PH_DONE ? s->status : UCFT_INPROGRESS;
}

static ucft_status_t bb_test(const void *state)
{
    return ((const barrier_binomial_t *)state)->status;
}

static void bb_cleanup(void *state)
{
    barrier_binomial_t *s = state;
    s->cleaned = 1;
    if (s->recv_pending)
        tp_cancel(s->tp, &s->rreq);
}

static void bb_on_failure(void *state, int rank)
{
    barrier_binomial_t *s = state;
    if (s->phase == PH_DONE || s->cleaned)
        return;
    int waited =
        (s->phase == PH_UP && s->next < s->nkids && kid(s, s->next) == rank) ||
        ((s->phase == PH_DOWN || s->phase == PH_UP_SEND) && rank == s->parent);
    for (int i = s->next; s->phase == PH_UP && i < s->nkids && !waited; i++)
        waited = kid(s, i) == rank;
    if (!waited)
        return;
    if (s->recv_pending)
        tp_cancel(s->tp, &s->rreq);
    finish(s, UCFT_ERR_PROC_FAILED, 1);
}

static int bb_idle(const void *state)
{
    const barrier_binomial_t *s = state;
    return !s->recv_pending && !s->send_pending;
}

const coll_op_ops_t coll_barrier_binomial_ops = {
    .op = "barrier",
    .alg = "binomial",
    .doc = "baseline binomial fan-in / fan-out barrier (the fault-aware "
           "trees' case: coll_args_t.tree)",
    .state_size = sizeof(barrier_binomial_t),
    .buf_mult = 1, /* no data; every table entry takes a buffer */
    .init = bb_init,
    .start = bb_start,
    .test = bb_test,
    .cleanup = bb_cleanup,
    .on_failure = bb_on_failure,
    .idle = bb_idle,
};
