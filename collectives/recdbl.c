/*
 * Baseline allreduce (and barrier: an allreduce of nothing) by recursive
 * doubling: fault-aware, not fault-tolerant (baseline.h,
 * docs/baselines.md).
 *
 * Virtual ranks v = coll_vrank_of(rank) (root 0 of the placement order),
 * p = the largest power of two <= n, L = log2 p, rem = n - p.
 *   extra      v >= p: sends its value to v - p and receives the result
 *              from it (one stage, both messages posted together);
 *   fold       v < rem: first receives the value of v + p and combines it,
 *              then runs the rounds, then sends the result to v + p;
 *   rounds     round j = 0 .. L-1: exchange the current value with
 *              v ^ 2^j, then combine (value = value op partner's).
 * Messages without failures: p L + 2 rem (n = 2^L: n log2 n). Every pair
 * of ranks exchanges at most one message per direction, so the source in
 * the tag tells the stages apart and one data kind suffices. Combination
 * is commutative, and in every round both partners combine the same two
 * values, so every rank ends with the same bits (floating point too).
 *
 * A rank runs its stages in order; a stage posts its receive, then its
 * send (both from/into the op buffer: the value is combined only once
 * both have completed, so the send never sees a half-updated value), and
 * ends when both have completed. The op buffer holds 2 len bytes: the
 * value (the result), then the receive buffer.
 *
 * Failures (baseline.h): a rank ends with UCFT_ERR_PROC_FAILED when a peer
 * it still waits for fails or sends an error message, or when a send
 * fails. It then sends an error message to every peer of a stage whose
 * send it has not posted yet (the later round partners, the extra it owes
 * the result), one at a time, and finishes after the last one. Why no live
 * rank waits forever: a live partner of round j either reaches round j
 * (sends its value) or fails in round j or before (sends the error before
 * finishing); a dead one is named by on_failure.
 */
#include "baseline.h"
#include "reduce_corrected.h" /* rc_fill, rc_check_*: the shared test encoding */

#include <string.h>

enum { POST_NONE, POST_COMBINE, POST_COPY };

typedef struct recdbl {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf; /* value, then the result */
    unsigned char *rbuf;
    tp_req_t rreq, sreq;
    size_t len, count;
    int v, n, p, rem;
    unsigned nstage, stage; /* stages of this rank; the current one */
    unsigned unsent;        /* first stage whose send is not posted */
    unsigned err_next;      /* failed: next stage to send an error for */
    ucft_status_t status;   /* INPROGRESS until done */
    uint8_t posted;         /* the current stage's requests are posted */
    uint8_t rbusy, sbusy;   /* receive / send pending */
    uint8_t failed, done, cleaned, in_start, nodata;
} recdbl_t;

typedef struct rd_stage {
    int peer; /* vrank */
    uint8_t send, recv, post;
} rd_stage_t;

static rd_stage_t stage_of(const recdbl_t *s, unsigned i)
{
    int fold = s->v < s->rem;

    if (s->v >= s->p)
        return (rd_stage_t){s->v - s->p, 1, 1, POST_COPY};
    if (fold && i == 0)
        return (rd_stage_t){s->v + s->p, 0, 1, POST_COMBINE};
    if (fold && i == s->nstage - 1)
        return (rd_stage_t){s->v + s->p, 1, 0, POST_NONE};
    return (rd_stage_t){s->v ^ (1 << (i - (unsigned)fold)), 1, 1, POST_COMBINE};
}

static int rank_of(const recdbl_t *s, int v)
{
    return coll_rank_of(s->args, v, s->args->root, s->n);
}

static void finish(recdbl_t *s, ucft_status_t st)
{
    s->done = 1;
    s->status = st;
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void fail(recdbl_t *s, const char *why, int vpeer)
{
    if (s->failed)
        return;
    ucft_debug(s->tp->log, "allreduce recdbl: %s (rank %d)", why,
               rank_of(s, vpeer));
    s->failed = 1;
    s->err_next = s->unsent;
    if (s->rbusy)
        tp_cancel(s->tp, &s->rreq);
}

/* The current stage's receive completed (status in rreq). */
static void took(recdbl_t *s)
{
    int peer = stage_of(s, s->stage).peer;
    if (s->rreq.status != UCFT_OK)
        fail(s, "receive failed", peer);
    else if (coll_baseline_is_err(&s->rreq))
        fail(s, "the peer failed", peer);
    else if (s->rreq.length != s->len)
        fail(s, "the peer's value has the wrong length", peer);
}

static uint64_t tag_from(const recdbl_t *s, int rank, int err)
{
    return coll_tag(s->args, rank,
                    err ? COLL_KIND_RECDBL_ERR : COLL_KIND_RECDBL);
}

/* Failed: error messages to the peers of the stages not sent yet. */
static void send_errors(recdbl_t *s)
{
    while (!s->sbusy && !s->done) {
        while (s->err_next < s->nstage && !stage_of(s, s->err_next).send)
            s->err_next++;
        if (s->err_next >= s->nstage) {
            if (!s->rbusy)
                finish(s, UCFT_ERR_PROC_FAILED);
            return;
        }
        int dst = rank_of(s, stage_of(s, s->err_next++).peer);
        ucft_status_t st =
            tp_send(s->tp, dst, tag_from(s, s->tp->rank, 1), NULL, 0, &s->sreq);
        if (st == UCFT_INPROGRESS)
            s->sbusy = 1;
    }
}

static void post_stage(recdbl_t *s, rd_stage_t g)
{
    int peer = rank_of(s, g.peer);

    s->posted = 1;
    if (g.recv) {
        ucft_status_t st =
            tp_recv(s->tp, tag_from(s, peer, 0), COLL_BASELINE_RECV_MASK,
                    s->rbuf, s->len, &s->rreq);
        if (st == UCFT_INPROGRESS)
            s->rbusy = 1;
        else if (st == UCFT_OK)
            took(s);
        else
            fail(s, "receive failed", g.peer);
        if (s->failed)
            return;
    }
    if (g.send) {
        s->unsent = s->stage + 1;
        ucft_status_t st = tp_send(s->tp, peer, tag_from(s, s->tp->rank, 0),
                                   s->buf, s->len, &s->sreq);
        if (st == UCFT_INPROGRESS)
            s->sbusy = 1;
        else if (st != UCFT_OK)
            fail(s, "send failed", g.peer);
    }
}

static void step(recdbl_t *s)
{
    while (!s->done && !s->cleaned) {
        if (s->failed) {
            send_errors(s);
            return;
        }
        if (s->stage == s->nstage) {
            finish(s, UCFT_OK);
            return;
        }
        rd_stage_t g = stage_of(s, s->stage);
        if (!s->posted) {
            post_stage(s, g);
            continue;
        }
        if (s->rbusy || s->sbusy)
            return;
        if (g.post == POST_COMBINE && s->count > 0)
            coll_combine(s->args, s->buf, s->rbuf, s->count);
        else if (g.post == POST_COPY && s->len > 0)
            memcpy(s->buf, s->rbuf, s->len);
        s->stage++;
        s->posted = 0;
    }
}

static void req_cb(tp_req_t *req)
{
    recdbl_t *s = req->arg;

    if (req == &s->sreq)
        s->sbusy = 0;
    else
        s->rbusy = 0;
    if (s->cleaned || s->done)
        return;
    if (!s->failed) {
        int peer = stage_of(s, s->stage).peer;
        if (req == &s->rreq)
            took(s);
        else if (req->status != UCFT_OK)
            fail(s, "send failed", peer);
    }
    step(s);
}

static ucft_status_t rd_init_common(void *state, tp_t *tp,
                                    const coll_args_t *args, void *buf,
                                    int nodata)
{
    recdbl_t *s = state;
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
    s->nodata = (uint8_t)nodata;
    s->n = tp->size;
    s->v = coll_vrank_of(args, tp->rank, args->root, tp->size);
    unsigned lg = 0;
    while (lg < 30 && (2 << lg) <= s->n)
        lg++;
    s->p = 1 << lg;
    s->rem = s->n - s->p;
    s->nstage = s->v >= s->p ? 1 : lg + (s->v < s->rem ? 2 : 0);
    s->status = UCFT_INPROGRESS;
    s->rreq.cb = s->sreq.cb = req_cb;
    s->rreq.arg = s->sreq.arg = s;
    return UCFT_OK;
}

static ucft_status_t rd_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf)
{
    return rd_init_common(state, tp, args, buf, 0);
}

static ucft_status_t rd_barrier_init(void *state, tp_t *tp,
                                     const coll_args_t *args, void *buf)
{
    return rd_init_common(state, tp, args, buf, 1);
}

static ucft_status_t rd_start(void *state)
{
    recdbl_t *s = state;

    s->in_start = 1;
    step(s);
    s->in_start = 0;
    return s->status;
}

static ucft_status_t rd_test(const void *state)
{
    return ((const recdbl_t *)state)->status;
}

static void rd_on_failure(void *state, int rank)
{
    recdbl_t *s = state;

    if (s->cleaned || s->done || s->failed)
        return;
    int v = coll_vrank_of(s->args, rank, s->args->root, s->n);
    /* A peer of this stage whose message has not arrived, or of a later
     * stage that receives. */
    for (unsigned i = s->stage; i < s->nstage; i++) {
        rd_stage_t g = stage_of(s, i);
        if (g.peer != v || !g.recv)
            continue;
        if (i > s->stage || !s->posted || s->rbusy) {
            fail(s, "a peer failed", v);
            step(s);
        }
        return;
    }
}

static void rd_cleanup(void *state)
{
    recdbl_t *s = state;

    s->cleaned = 1;
    if (s->rbusy)
        tp_cancel(s->tp, &s->rreq);
}

static int rd_idle(const void *state)
{
    const recdbl_t *s = state;
    return !s->rbusy && !s->sbusy;
}

const coll_op_ops_t coll_allreduce_recdbl_ops = {
    .op = "allreduce",
    .alg = "recdbl",
    .doc = "baseline recursive doubling (extra ranks fold into a partner), "
           "p log2 p + 2 (n - p) messages; fault-aware (ends with "
           "ERR_PROC_FAILED), not fault-tolerant",
    .state_size = sizeof(recdbl_t),
    .buf_mult = 2,
    .init = rd_init,
    .start = rd_start,
    .test = rd_test,
    .cleanup = rd_cleanup,
    .idle = rd_idle,
    .on_failure = rd_on_failure,
    .fill = rc_fill,
    .check = rc_check_all,
    .consistent = 1,
};

/* Barrier: no data, so no fill or check; the buffer is left alone. */
const coll_op_ops_t coll_barrier_recdbl_ops = {
    .op = "barrier",
    .alg = "recdbl",
    .doc = "baseline recursive doubling of nothing; fault-aware, not "
           "fault-tolerant",
    .state_size = sizeof(recdbl_t),
    .buf_mult = 1,
    .init = rd_barrier_init,
    .start = rd_start,
    .test = rd_test,
    .cleanup = rd_cleanup,
    .idle = rd_idle,
    .on_failure = rd_on_failure,
    .consistent = 1,
};
