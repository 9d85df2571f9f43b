/*
 * Baseline reduce on a plain binomial tree, to any root: fault-aware, not
 * fault-tolerant (baseline.h, docs/baselines.md).
 *
 * Tree on virtual ranks (coll_vrank_of: the root is 0):
 *   parent(v)   v with its lowest set bit cleared (none for 0)
 *   children(v) v + 2^j for 2^j below the lowest set bit of v (every j for
 *               the root) while v + 2^j < n, in increasing j
 * A rank combines its children's values into its own in that order (the
 * child with the smallest subtree first, so the first wait is the
 * shortest), then sends the sum to its parent. n - 1 messages, each rank
 * sends at most one; the order of combination is fixed, so floating-point
 * results do not depend on timing.
 *
 * State machine per rank:
 *   RECV --every child combined--> SEND (not the root) --sent--> DONE
 *   RECV --failure--> ERR (not the root: error message to the parent) --> DONE
 * The failures that count: a child not yet received from fails (on_failure)
 * or sends an error message, or the parent fails before this rank sent to
 * it; the send to the parent fails. A non-root rank that delivered its
 * value ends with UCFT_OK: it has no output.
 *
 * The op buffer holds 2 len bytes: the value (the result at the root),
 * then the receive buffer for a child's value.
 *
 * args->tree, when given (a communicator's rerouted tree after agreed
 * failures, UCFT_TREE_REPAIR=reroute|lookup, docs/trees.md), replaces the
 * tree above: its children in its order, its parent.
 */
#include "baseline.h"
#include "tree_ft.h"

#include <string.h>

enum { PH_RECV, PH_SEND, PH_ERR, PH_DONE };

typedef struct reduce_binomial {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf; /* value; the result at the root */
    unsigned char *rbuf;
    tp_req_t rreq, sreq;
    size_t len, count;
    int v, n;
    unsigned next;         /* the next child (its exponent, 0 first) */
    ucft_status_t send_st; /* outcome of the send to the parent */
    ucft_status_t status;  /* INPROGRESS until done */
    uint8_t phase, busy;   /* busy: a request of this rank is pending */
    uint8_t failed, cleaned, in_start;
} reduce_binomial_t;

/* The child of v with exponent j, or -1. */
static int child(int v, unsigned j, int n)
{
    if (j >= 31 || (v != 0 && (1u << j) >= ((unsigned)v & -(unsigned)v)))
        return -1;
    int64_t c = (int64_t)v + ((int64_t)1 << j);
    return c < n ? (int)c : -1;
}

static int rank_of(const reduce_binomial_t *s, int v)
{
    return coll_rank_of(s->args, v, s->args->root, s->n);
}

/* The rank of child i, or -1 past the last: in args->tree when given,
 * else in the binomial tree above through args->map. */
static int kid(const reduce_binomial_t *s, unsigned i)
{
    const coll_tree_t *t = s->args->tree;
    if (t != NULL)
        return coll_tree_kid(t, s->tp->rank, (int)i);
    int c = child(s->v, i, s->n);
    return c < 0 ? -1 : rank_of(s, c);
}

static int parent_rank(const reduce_binomial_t *s)
{
    const coll_tree_t *t = s->args->tree;
    if (t != NULL)
        return coll_tree_parent_of(t, s->tp->rank);
    return s->v > 0 ? rank_of(s, s->v & (s->v - 1)) : -1;
}

static void finish(reduce_binomial_t *s, ucft_status_t st)
{
    s->phase = PH_DONE;
    s->status = st;
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void fail(reduce_binomial_t *s, const char *why, int peer)
{
    if (s->failed)
        return;
    ucft_debug(s->tp->log, "reduce binomial: %s (rank %d)", why, peer);
    s->failed = 1;
    if (s->busy && s->phase == PH_RECV)
        tp_cancel(s->tp, &s->rreq);
}

/* A child's message arrived (req status UCFT_OK): combine or fail. */
static void took(reduce_binomial_t *s)
{
    int c = kid(s, s->next);
    if (coll_baseline_is_err(&s->rreq)) {
        fail(s, "a child failed", c);
        return;
    }
    if (s->rreq.length != s->len) {
        fail(s, "a child's value has the wrong length", c);
        return;
    }
    coll_combine(s->args, s->buf, s->rbuf, s->count);
    s->next++;
}

static void send_to_parent(reduce_binomial_t *s, int err)
{
    const coll_args_t *a = s->args;
    int parent = parent_rank(s);
    unsigned kind =
        err ? COLL_KIND_REDUCE_BINOMIAL_ERR : COLL_KIND_REDUCE_BINOMIAL;

    s->phase = err ? PH_ERR : PH_SEND;
    ucft_status_t st = tp_send(s->tp, parent, coll_tag(a, s->tp->rank, kind),
                               s->buf, err ? 0 : s->len, &s->sreq);
    if (st == UCFT_INPROGRESS)
        s->busy = 1;
    else
        s->send_st = st;
}

static void step(reduce_binomial_t *s)
{
    while (s->phase != PH_DONE && !s->cleaned && !s->busy) {
        if (s->phase == PH_SEND) {
            if (s->send_st != UCFT_OK)
                ucft_debug(s->tp->log, "reduce binomial: send to parent: %s",
                           ucft_status_string(s->send_st));
            finish(s, s->send_st == UCFT_OK ? UCFT_OK : UCFT_ERR_PROC_FAILED);
            return;
        }
        if (s->phase == PH_ERR) {
            finish(s, UCFT_ERR_PROC_FAILED);
            return;
        }
        if (s->failed) {
            if (s->v == 0)
                finish(s, UCFT_ERR_PROC_FAILED);
            else
                send_to_parent(s, 1);
            continue;
        }
        int src = kid(s, s->next);
        if (src < 0) {
            if (s->v == 0)
                finish(s, UCFT_OK);
            else
                send_to_parent(s, 0);
            continue;
        }
        ucft_status_t st =
            tp_recv(s->tp, coll_tag(s->args, src, COLL_KIND_REDUCE_BINOMIAL),
                    COLL_BASELINE_RECV_MASK, s->rbuf, s->len, &s->rreq);
        if (st == UCFT_INPROGRESS)
            s->busy = 1;
        else if (st == UCFT_OK && s->rreq.status == UCFT_OK)
            took(s);
        else
            fail(s, "receive from a child failed", src);
    }
}

static void req_cb(tp_req_t *req)
{
    reduce_binomial_t *s = req->arg;

    s->busy = 0;
    if (s->cleaned || s->phase == PH_DONE)
        return;
    if (req == &s->sreq) {
        s->send_st = req->status;
    } else if (!s->failed) {
        if (req->status == UCFT_OK)
            took(s);
        else
            fail(s, "receive from a child failed", kid(s, s->next));
    }
    step(s);
}

static ucft_status_t rb_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf)
{
    reduce_binomial_t *s = state;
    size_t count, len;
    ucft_status_t st = coll_baseline_args(tp, args, buf, 0, &count, &len);

    if (st != UCFT_OK)
        return st;
    if (args->tree != NULL &&
        (args->tree->n != tp->size || args->tree->root != args->root))
        return UCFT_ERR_INVALID_PARAM;
    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->buf = buf;
    s->rbuf = len ? s->buf + len : NULL;
    s->len = len;
    s->count = count;
    s->n = tp->size;
    s->v = coll_vrank_of(args, tp->rank, args->root, tp->size);
    s->status = UCFT_INPROGRESS;
    s->rreq.cb = s->sreq.cb = req_cb;
    s->rreq.arg = s->sreq.arg = s;
    return UCFT_OK;
}

static ucft_status_t rb_start(void *state)
{
    reduce_binomial_t *s = state;

    s->in_start = 1;
    step(s);
    s->in_start = 0;
    return s->status;
}

static ucft_status_t rb_test(const void *state)
{
    return ((const reduce_binomial_t *)state)->status;
}

static void rb_on_failure(void *state, int rank)
{
    reduce_binomial_t *s = state;

    if (s->cleaned || s->phase == PH_DONE || s->failed)
        return;
    /* A child not yet combined (next or later), or the parent before
     * anything was sent to it. */
    int waited = 0;
    for (unsigned i = s->next; !waited; i++) {
        int c = kid(s, i);
        if (c < 0)
            break;
        waited = c == rank;
    }
    int parent = s->v > 0 && rank == parent_rank(s) && s->phase == PH_RECV;
    if (!waited && !parent)
        return;
    fail(s, waited ? "a child failed" : "the parent failed", rank);
    step(s);
}

static void rb_cleanup(void *state)
{
    reduce_binomial_t *s = state;

    s->cleaned = 1;
    if (s->busy && s->phase == PH_RECV)
        tp_cancel(s->tp, &s->rreq);
}

static int rb_idle(const void *state)
{
    return !((const reduce_binomial_t *)state)->busy;
}

const coll_op_ops_t coll_reduce_binomial_ops = {
    .op = "reduce",
    .alg = "binomial",
    .doc = "baseline binomial tree to any root, n - 1 messages; fault-aware "
           "(ends with ERR_PROC_FAILED), not fault-tolerant",
    .state_size = sizeof(reduce_binomial_t),
    .buf_mult = 2,
    .init = rb_init,
    .start = rb_start,
    .test = rb_test,
    .cleanup = rb_cleanup,
    .idle = rb_idle,
    .on_failure = rb_on_failure,
    .takes_tree = 1,
};
