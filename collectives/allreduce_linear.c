/*
 * Baseline allreduce (and barrier) by a star: every rank sends its value
 * to the root of the placement order (virtual rank 0), which combines them
 * in virtual-rank order (x_0 op x_1 op ... op x_{n-1}) and sends the
 * result to every rank. Fault-aware, not fault-tolerant (baseline.h,
 * docs/baselines.md). 2 (n - 1) messages, two hops; every rank but the
 * root waits once.
 *
 * Why a star: with more ranks than cores every wait is a context switch,
 * and here no rank but the root waits more than once (recursive doubling:
 * log2 n waits per rank). For small jobs on few cores it is the fastest
 * allreduce we have; the root's 2 (n - 1) messages in a row make it the
 * wrong choice for large n or large vectors (docs/baselines.md).
 *
 * The root receives one message at a time, in virtual-rank order, into
 * one slot (messages that come early wait in the transport), and sends
 * the result one message at a time: one receive and one send request, no
 * allocation. Every rank ends with the root's bits (floating point too).
 *
 * Failures: a non-root rank whose send fails, or that learns that the
 * root failed or receives the root's error message, ends with
 * UCFT_ERR_PROC_FAILED (it owes nobody a message). The root ends so when
 * a rank whose value it still waits for fails (or its receive fails); it
 * then sends the error message in place of the result to every rank.
 * A failed send of the result to one rank does not stop the others.
 * A message of another size than this rank's arguments give (logged)
 * ends the rank that receives it with UCFT_ERR_TRUNCATED the same way.
 */
#include "baseline.h"

#include <string.h>

typedef struct linear {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf;  /* value, then the result */
    unsigned char *rbuf; /* one receive slot of len bytes */
    tp_req_t rreq, sreq;
    size_t len, count;
    int v, n;
    int next;             /* root: next vrank to receive from or send to */
    ucft_status_t status; /* INPROGRESS until done */
    uint8_t gathered;     /* root: every value combined (or failed) */
    uint8_t started;      /* non-root: receive and send posted */
    uint8_t got;          /* non-root: the result is in rbuf */
    uint8_t mismatch;     /* a message of another size came (logged) */
    uint8_t rbusy, sbusy, failed, done, cleaned, in_start;
} linear_t;

static int rank_of(const linear_t *s, int v)
{
    return coll_rank_of(s->args, v, s->args->root, s->n);
}

static uint64_t tag_from(const linear_t *s, int rank, int err)
{
    return coll_tag(s->args, rank,
                    err ? COLL_KIND_LINEAR_ERR : COLL_KIND_LINEAR);
}

static void finish(linear_t *s, ucft_status_t st)
{
    s->done = 1;
    s->status = st;
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void fail(linear_t *s, const char *why, int vpeer)
{
    if (s->failed)
        return;
    ucft_debug(s->tp->log, "allreduce linear: %s (rank %d)", why,
               rank_of(s, vpeer));
    s->failed = 1;
    if (s->rbusy)
        tp_cancel(s->tp, &s->rreq);
    if (s->v == 0 && !s->gathered) {
        s->gathered = 1;
        s->next = 1; /* the error message to every rank */
    }
}

/* Ends the rank's part: UCFT_ERR_TRUNCATED after a message of another
 * size than this rank's arguments give (the ranks disagree), else
 * UCFT_ERR_PROC_FAILED; OK without a failure. */
static ucft_status_t end_status(const linear_t *s)
{
    if (!s->failed)
        return UCFT_OK;
    return s->mismatch ? UCFT_ERR_TRUNCATED : UCFT_ERR_PROC_FAILED;
}

/* The receive from vrank `peer` completed (status in rreq). */
static void took(linear_t *s, int peer)
{
    int err = s->rreq.status == UCFT_OK && coll_baseline_is_err(&s->rreq);
    if (s->rreq.status == UCFT_ERR_TRUNCATED ||
        (s->rreq.status == UCFT_OK && !err && s->rreq.length != s->len)) {
        coll_log_mismatch(s->tp, s->args, &s->rreq);
        s->mismatch = 1;
        fail(s, "a message of another size", peer);
    } else if (s->rreq.status != UCFT_OK)
        fail(s, "receive failed", peer);
    else if (err)
        fail(s, "the peer failed", peer);
    else if (s->v > 0)
        s->got = 1; /* copied out once the value's send completed */
    else if (s->count > 0)
        coll_combine(s->args, s->buf, s->rbuf, s->count);
}

static void post_recv(linear_t *s, int peer)
{
    ucft_status_t st =
        tp_recv(s->tp, tag_from(s, rank_of(s, peer), 0),
                COLL_BASELINE_RECV_MASK, s->rbuf, s->len, &s->rreq);
    if (st == UCFT_INPROGRESS)
        s->rbusy = 1;
    else if (st == UCFT_OK)
        took(s, peer);
    else
        fail(s, "receive failed", peer);
}

/* The value (err = 0) or the error message to vrank `peer`. */
static void post_send(linear_t *s, int peer, int err)
{
    ucft_status_t st =
        tp_send(s->tp, rank_of(s, peer), tag_from(s, s->tp->rank, err),
                err ? NULL : s->buf, err ? 0 : s->len, &s->sreq);
    if (st == UCFT_INPROGRESS)
        s->sbusy = 1;
    else if (st != UCFT_OK && s->v > 0)
        fail(s, "send failed", peer);
    else if (st != UCFT_OK) /* the root goes on with the others */
        ucft_debug(s->tp->log, "allreduce linear: send to rank %d: %s",
                   rank_of(s, peer), ucft_status_string(st));
}

static void step(linear_t *s)
{
    if (s->done || s->cleaned)
        return;
    if (s->v > 0) {
        if (!s->started) {
            s->started = 1;
            post_recv(s, 0);
            if (!s->failed)
                post_send(s, 0, 0);
        }
        if (s->rbusy || s->sbusy)
            return;
        if (!s->failed && s->len > 0)
            memcpy(s->buf, s->rbuf, s->len);
        finish(s, end_status(s));
        return;
    }
    while (!s->rbusy && !s->gathered) {
        if (s->next >= s->n) {
            s->gathered = 1;
            s->next = 1;
        } else {
            post_recv(s, s->next++);
        }
    }
    while (s->gathered && !s->sbusy && s->next < s->n)
        post_send(s, s->next++, s->failed);
    if (s->gathered && !s->sbusy && !s->rbusy && s->next >= s->n)
        finish(s, end_status(s));
}

static void req_cb(tp_req_t *req)
{
    linear_t *s = req->arg;
    int is_send = req == &s->sreq;

    if (is_send)
        s->sbusy = 0;
    else
        s->rbusy = 0;
    if (s->cleaned || s->done)
        return;
    if (!s->failed && !is_send)
        took(s, s->v == 0 ? s->next - 1 : 0);
    else if (!s->failed && req->status != UCFT_OK && s->v > 0 && !s->got)
        fail(s, "send failed", 0); /* (with the result in, it was taken) */
    step(s);
}

static ucft_status_t ln_init_common(void *state, tp_t *tp,
                                    const coll_args_t *args, void *buf,
                                    int nodata)
{
    linear_t *s = state;
    size_t count, len;
    ucft_status_t st = coll_baseline_args(tp, args, buf, nodata, &count, &len);

    if (st != UCFT_OK)
        return st;
    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->buf = len ? buf : NULL;
    s->rbuf = len ? s->buf + len : NULL;
    s->len = len;
    s->count = count;
    s->n = tp->size;
    s->v = coll_vrank_of(args, tp->rank, args->root, tp->size);
    s->next = 1;
    s->status = UCFT_INPROGRESS;
    s->rreq.cb = s->sreq.cb = req_cb;
    s->rreq.arg = s->sreq.arg = s;
    return UCFT_OK;
}

static ucft_status_t ln_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf)
{
    return ln_init_common(state, tp, args, buf, 0);
}

static ucft_status_t ln_barrier_init(void *state, tp_t *tp,
                                     const coll_args_t *args, void *buf)
{
    return ln_init_common(state, tp, args, buf, 1);
}

static ucft_status_t ln_start(void *state)
{
    linear_t *s = state;

    s->in_start = 1;
    step(s);
    s->in_start = 0;
    return s->status;
}

static ucft_status_t ln_test(const void *state)
{
    return ((const linear_t *)state)->status;
}

static void ln_on_failure(void *state, int rank)
{
    linear_t *s = state;

    if (s->cleaned || s->done || s->failed)
        return;
    int v = coll_vrank_of(s->args, rank, s->args->root, s->n);
    /* The root: a rank whose value has not arrived; the others: the root
     * while its result has not arrived. */
    int waiting = s->v == 0 ? !s->gathered && v > 0 &&
                                  v >= (s->rbusy ? s->next - 1 : s->next)
                            : v == 0 && !s->got;
    if (waiting) {
        fail(s, "a rank it waits for failed", v);
        step(s);
    }
}

static void ln_cleanup(void *state)
{
    linear_t *s = state;

    s->cleaned = 1;
    if (s->rbusy)
        tp_cancel(s->tp, &s->rreq);
}

static int ln_idle(const void *state)
{
    const linear_t *s = state;
    return !s->rbusy && !s->sbusy;
}

#define LN_OPS(name, opname, doc_, mult, init_)                                \
    const coll_op_ops_t name = {                                               \
        .op = opname,                                                          \
        .alg = "linear",                                                       \
        .doc = doc_,                                                           \
        .state_size = sizeof(linear_t),                                        \
        .buf_mult = mult,                                                      \
        .init = init_,                                                         \
        .start = ln_start,                                                     \
        .test = ln_test,                                                       \
        .cleanup = ln_cleanup,                                                 \
        .idle = ln_idle,                                                       \
        .on_failure = ln_on_failure,                                           \
        .consistent = 1,                                                       \
    };

LN_OPS(coll_allreduce_linear_ops, "allreduce",
       "baseline star: every rank sends its value to the root, which sends "
       "the result back, 2 (n - 1) messages, one wait per rank (small jobs "
       "on few cores); fault-aware, not fault-tolerant",
       2, ln_init)
/* Barrier: no data; the buffer is left alone. */
LN_OPS(coll_barrier_linear_ops, "barrier",
       "baseline star of nothing; fault-aware, not fault-tolerant", 1,
       ln_barrier_init)
