/*
 * Baseline barrier on a binomial tree (the paper's case, docs/trees.md):
 * every rank hears an empty message from each of its children, in order,
 * then tells its parent; the root then sends an empty message down the
 * same tree. Fault-aware, not fault-tolerant (docs/baselines.md): a rank
 * ends with UCFT_ERR_PROC_FAILED when a parent or child it still waits for
 * fails (on_failure), when a peer sends it an error message, or when its
 * send to its parent fails; before it ends it sends an error message, in
 * place of the message still owed, to its parent (if it had not told it
 * yet) and to every child it had not sent down to, so that no live rank
 * waits for ever.
 *
 * Kinds: 120 up, 121 up error, 122 down, 123 down error (a receive masks
 * kind bit 0 and takes either).
 *
 * The tree: args->tree when given (collectives/tree_ft.h: rerouted or
 * rebalanced around failed ranks, in the ranks of the transport), else the
 * binomial tree of the tp->size ranks through args->map.
 *
 *   UP (receive from child i, i = 0..) -> send to parent -> DOWN (receive
 *   from parent) -> send to every child -> DONE; the root skips the middle.
 *   Any phase --failure--> ERR (error messages owed, one at a time) -> DONE
 */
#include "baseline.h"
#include "tree_binomial.h"
#include "tree_ft.h"

enum { PH_UP, PH_UP_SEND, PH_DOWN, PH_DOWN_SEND, PH_ERR, PH_DONE };

typedef struct barrier_binomial {
    tp_t *tp;
    const coll_args_t *args;
    tp_req_t rreq, sreq;
    int vrank, parent, nkids, root;
    int next;      /* child heard from (UP) or sent to (DOWN_SEND) */
    int down_from; /* ERR: the first child still owed a message */
    ucft_status_t status;
    uint8_t phase, recv_pending, send_pending, cleaned;
    uint8_t up_owed; /* ERR: the parent still waits for our message */
    unsigned char scratch[8];
} barrier_binomial_t;

static int kid(const barrier_binomial_t *s, int i)
{
    const coll_tree_t *t = s->args->tree;
    if (t != NULL)
        return coll_tree_kid(t, s->tp->rank, i);
    int n = s->tp->size;
    return coll_rank_of(s->args, coll_binomial_child(s->vrank, (unsigned)i, n),
                        s->root, n);
}

static uint64_t tag_of(const barrier_binomial_t *s, int src, int down, int err)
{
    return coll_tag(s->args, src,
                    COLL_KIND_BARRIER_BINOMIAL + (down ? 2u : 0u) +
                        (err ? 1u : 0u));
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

/* This rank's part has failed: from here on it only sends the error
 * messages it owes (step, PH_ERR), then ends with UCFT_ERR_PROC_FAILED. */
static void fail(barrier_binomial_t *s, const char *why, int peer)
{
    if (s->phase == PH_ERR || s->phase == PH_DONE)
        return;
    ucft_debug(s->tp->log, "barrier binomial: %s (rank %d)", why, peer);
    /* Before PH_DOWN nothing went up; in PH_DOWN_SEND the children before
     * `next` have their message (step moves on as it posts). */
    s->up_owed = s->parent >= 0 && s->phase <= PH_UP_SEND;
    s->down_from = s->phase == PH_DOWN_SEND ? s->next : 0;
    s->phase = PH_ERR;
    if (s->recv_pending)
        tp_cancel(s->tp, &s->rreq);
}

static void recv_cb(tp_req_t *req);
static void send_cb(tp_req_t *req);

/* Posts the receive of this tag's message (or its error): 1 when the
 * machine must stop here (pending, or failed), 0 when it completed. */
static int post_recv(barrier_binomial_t *s, int src, int down)
{
    s->rreq = (tp_req_t){.cb = recv_cb, .arg = s};
    ucft_status_t st =
        tp_recv(s->tp, tag_of(s, src, down, 0), COLL_BASELINE_RECV_MASK,
                s->scratch, sizeof(s->scratch), &s->rreq);
    if (st == UCFT_INPROGRESS) {
        s->recv_pending = 1;
        return 1;
    }
    if (st != UCFT_OK || s->rreq.status != UCFT_OK) {
        fail(s, "receive failed", src);
        return 1;
    }
    if (coll_baseline_is_err(&s->rreq)) {
        fail(s, "a peer failed", src);
        return 1;
    }
    return 0;
}

/* Sends an empty message (or error); 1 when pending or failed towards the
 * parent (the machine stops here), 0 when done or failed towards a child
 * (a failed child cuts off only its subtree). */
static int post_send(barrier_binomial_t *s, int dst, int down, int err)
{
    s->sreq = (tp_req_t){.cb = send_cb, .arg = s, .buffered = 1};
    ucft_status_t st = tp_send(s->tp, dst, tag_of(s, s->tp->rank, down, err),
                               NULL, 0, &s->sreq);
    if (st == UCFT_INPROGRESS) {
        s->send_pending = 1;
        return 1;
    }
    if (st != UCFT_OK && !down && !err) {
        fail(s, "send to the parent failed", dst);
        return 1;
    }
    return 0;
}

/* Runs the state machine as far as it goes without waiting. */
static void step(barrier_binomial_t *s, int in_cb)
{
    while (!s->recv_pending && !s->send_pending && !s->cleaned) {
        switch (s->phase) {
        case PH_UP:
            if (s->next == s->nkids) {
                s->phase = s->parent < 0 ? PH_DOWN_SEND : PH_UP_SEND;
                s->next = 0;
                continue;
            }
            if (post_recv(s, kid(s, s->next), 0))
                continue;
            s->next++;
            continue;
        case PH_UP_SEND:
            s->phase = PH_DOWN; /* the message is on its way */
            post_send(s, s->parent, 0, 0);
            continue;
        case PH_DOWN:
            if (post_recv(s, s->parent, 1))
                continue;
            s->phase = PH_DOWN_SEND;
            s->next = 0;
            continue;
        case PH_DOWN_SEND:
            if (s->next == s->nkids) {
                finish(s, UCFT_OK, in_cb);
                return;
            }
            post_send(s, kid(s, s->next++), 1, 0);
            continue;
        case PH_ERR:
            if (s->up_owed) {
                s->up_owed = 0;
                post_send(s, s->parent, 0, 1);
            } else if (s->down_from < s->nkids) {
                post_send(s, kid(s, s->down_from++), 1, 1);
            } else {
                finish(s, UCFT_ERR_PROC_FAILED, in_cb);
                return;
            }
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
    if (s->phase != PH_ERR) {
        int src = s->phase == PH_UP ? kid(s, s->next) : s->parent;
        if (req->status != UCFT_OK)
            fail(s, "receive failed", src);
        else if (coll_baseline_is_err(req))
            fail(s, "a peer failed", src);
        else if (s->phase == PH_UP)
            s->next++;
        else {
            s->phase = PH_DOWN_SEND;
            s->next = 0;
        }
    }
    step(s, 1);
}

static void send_cb(tp_req_t *req)
{
    barrier_binomial_t *s = req->arg;
    s->send_pending = 0;
    if (s->cleaned || s->phase == PH_DONE)
        return;
    /* Our message up failed: the parent is dead. */
    if (req->status != UCFT_OK && s->phase == PH_DOWN)
        fail(s, "send to the parent failed", s->parent);
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
    if (s->phase >= PH_ERR || s->cleaned)
        return;
    /* A child not yet heard from, or the parent before its message down
     * arrived. */
    int waited = s->phase <= PH_DOWN && rank == s->parent;
    for (int i = s->next; s->phase == PH_UP && i < s->nkids && !waited; i++)
        waited = kid(s, i) == rank;
    if (!waited)
        return;
    fail(s, rank == s->parent ? "the parent failed" : "a child failed", rank);
    step(s, 1);
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
    .takes_tree = 1,
};
