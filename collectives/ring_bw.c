/*
 * Bandwidth-optimal ring baselines: allgather, reduce-scatter, allreduce
 * as a reduce-scatter followed by an allgather, and the broadcast as a
 * binomial scatter followed by an allgather ("scatter-ring"; ranks and
 * blocks then in virtual ranks of the root). Fault-aware, not
 * fault-tolerant (baseline.h, docs/baselines.md, docs/gather.md). Large
 * blocks run as up to RB_LANES concurrent rings ("lanes", ring_bw.h);
 * what follows describes one lane.
 *
 * Ranks sit on a ring in placement order (virtual ranks of root 0,
 * coll_vrank_of): v sends only to v + 1 and receives only from v - 1. The
 * vector is split into n blocks, one per job rank: block b (b a job rank)
 * holds q + (b < r) elements at element offset b q + min(b, r), where
 * q = count / n and r = count % n (allgather and reduce-scatter: r = 0,
 * every block the caller's count). The block "at ring position u" is the
 * block of the job rank at virtual rank u mod n.
 *
 *   reduce-scatter step k = 0 .. n - 2: send the block at position
 *                  v - k - 1, receive the one at v - k - 2 into a slot and
 *                  combine it into the own copy (own op left). The block
 *                  sent at step k + 1 is the one combined at step k; after
 *                  n - 1 steps the block at position v holds every rank's
 *                  value: x_{v+1} op x_{v+2} op ... op x_v (ring order;
 *                  every built-in operation is commutative).
 *   allgather step j = 0 .. n - 2: send the block at position v - j (the
 *                  own one first), receive the one at v - j - 1 in place.
 *   allreduce:     the n - 1 reduce-scatter steps, then the n - 1
 *                  allgather steps: each block is combined once, at its
 *                  owner's left neighbour chain, and copied everywhere, so
 *                  every rank ends with the same bits (floating point
 *                  too).
 * Traffic per rank: (n - 1) / n of the vector per phase (the lower bound
 * of either operation), n - 1 messages per phase. One receive and one send
 * per step; a step ends when both have completed, so a send never sees a
 * block being written. Messages of one instance from one peer carry the
 * same tag: T1 (FIFO per pair) orders them.
 *
 * Allgather buffer: the n blocks, then n presence bytes (coll_args_t.len
 * = n (block bytes + 1), docs/api.md): every presence byte is 1 when the
 * rank completes (a baseline either has every block or ends with an
 * error). Reduce-scatter: the vector; rank b's output is block b, in
 * place. Reduce-scatter and allreduce take one block-sized receive slot
 * after the vector (buf_mult 2).
 *
 * Failures (baseline.h): a rank ends with UCFT_ERR_PROC_FAILED when its
 * left neighbour fails while it still waits for one of its messages,
 * when that neighbour sends the error message, or when a receive or a
 * send fails for another reason than the receiver's death. It then sends
 * one error message to its right neighbour if it still owes it a message
 * (after its last data send has completed: T1 keeps the error behind the
 * data) and finishes. A send that fails because its receiver is dead
 * (UCFT_ERR_PROC_FAILED, T5) does not end the rank: its result needs
 * only its left neighbour, so it sends nothing more to the dead one (a
 * scatter child: that child only) and goes on receiving. So a rank stops
 * taking its left neighbour's messages only when that neighbour has sent
 * its error or died, and a live sender of a large message (whose send
 * completes only once received, T7) never waits for ever on it. Why no
 * live rank waits forever: the left neighbour of a waiting rank is either
 * dead (on_failure names it) or alive, and then sends every block it owes
 * or ends early and sends the error; a rank waits only for its left
 * neighbour (and, broadcast, its scatter parent).
 */
#include "ring_bw.h"

#include <stddef.h>
#include <string.h>

static size_t blk_off(const ring_bw_t *s, int b)
{
    size_t ub = (size_t)b;
    return s->base + ub * s->stride + (ub < s->r ? ub : s->r) * s->es;
}

static size_t blk_len(const ring_bw_t *s, int b)
{
    return (s->q + ((size_t)b < s->r)) * s->es;
}

/* The job rank whose block sits at ring position u (any integer). */
static int blk_at(const ring_bw_t *s, int u)
{
    int vu = ((u % s->n) + s->n) % s->n;
    return s->mode == RB_BCAST ? vu : coll_rank_of(s->args, vu, 0, s->n);
}

/* Broadcast: the lowest set bit of v (the root: the power of two >= n),
 * and the bytes of the blocks of v's scatter subtree [v, v + lowbit). */
static unsigned lowbit(const ring_bw_t *s, int v)
{
    unsigned m = 1;
    if (v == 0) {
        while (m < (unsigned)s->n)
            m <<= 1;
        return m;
    }
    return (unsigned)v & (0u - (unsigned)v);
}

static size_t sub_off_len(const ring_bw_t *s, int v, size_t *len)
{
    unsigned end = (unsigned)v + lowbit(s, v);
    size_t e = end >= (unsigned)s->n ? s->vend : blk_off(s, (int)end);
    *len = e - blk_off(s, v);
    return blk_off(s, v);
}

static uint64_t tag_from(const ring_bw_t *s, int rank, int err)
{
    return coll_tag(s->args, rank, s->kind + (err ? 1u : 0u));
}

static const char *name(const ring_bw_t *s)
{
    return s->mode == RB_ALLGATHER        ? "allgather ring"
           : s->mode == RB_REDUCE_SCATTER ? "reduce_scatter ring"
           : s->mode == RB_BCAST          ? "bcast scatter-ring"
                                          : "allreduce ring";
}

static void fail(ring_bw_t *s, const char *why)
{
    if (s->failed)
        return;
    ucft_debug(s->tp->log, "%s: %s (step %u, left rank %d)", name(s), why,
               s->step, s->left);
    s->failed = 1;
    if (s->rbusy)
        tp_cancel(s->tp, &s->rreq);
}

static int combining(const ring_bw_t *s)
{
    return s->step < s->rs_steps;
}

/* The job rank whose block the current step receives (send: 0) or
 * sends (1). */
static int step_blk(const ring_bw_t *s, int send)
{
    int c = combining(s);
    int j = c ? (int)s->step : (int)(s->step - s->rs_steps);
    return blk_at(s, s->v - j - (c ? 2 : 1) + send);
}

/* A completed receive of `want` bytes: 1 if it brought them, otherwise
 * the rank has failed (an error message, another size, a failed
 * receive). */
static int took_ok(ring_bw_t *s, size_t want)
{
    const tp_req_t *q = &s->rreq;
    int err = q->status == UCFT_OK && coll_baseline_is_err(q);

    if (q->status == UCFT_ERR_TRUNCATED ||
        (q->status == UCFT_OK && !err && q->length != want)) {
        coll_log_mismatch(s->tp, s->args, q);
        s->mismatch = 1;
        fail(s, "a message of another size");
    } else if (q->status != UCFT_OK) {
        fail(s, "receive failed");
    } else if (err) {
        fail(s, "a peer it waits for failed");
    }
    return !s->failed;
}

/* The receive of the current step completed (status in rreq). */
static void took(ring_bw_t *s)
{
    int rb = step_blk(s, 0);
    size_t want = blk_len(s, rb);

    if (s->scattering) {
        size_t len;
        sub_off_len(s, s->v, &len);
        s->scat_got = took_ok(s, len);
        return;
    }
    if (took_ok(s, want)) {
        s->got = 1;
        if (combining(s) && want > 0)
            coll_combine(s->args, s->buf + blk_off(s, rb), s->rbuf,
                         want / s->es);
    }
}

/* Posts the current step's receive, then its send. */
static void post_step(ring_bw_t *s)
{
    int rb = step_blk(s, 0), sb = step_blk(s, 1);
    unsigned char *dst = combining(s) ? s->rbuf : s->buf + blk_off(s, rb);
    ucft_status_t st;

    s->posted = 1;
    s->got = 0;
    st = tp_recv(s->tp, tag_from(s, s->left, 0), COLL_BASELINE_RECV_MASK,
                 blk_len(s, rb) ? dst : NULL, blk_len(s, rb), &s->rreq);
    if (st == UCFT_INPROGRESS)
        s->rbusy = 1;
    else if (st == UCFT_OK)
        took(s);
    else
        fail(s, "receive failed");
    if (s->failed || s->rdead)
        return;
    s->nsent++;
    st = tp_send(s->tp, s->right, tag_from(s, s->tp->rank, 0),
                 blk_len(s, sb) ? s->buf + blk_off(s, sb) : NULL,
                 blk_len(s, sb), &s->sreq);
    if (st == UCFT_INPROGRESS)
        s->sbusy = 1;
    else if (st == UCFT_ERR_PROC_FAILED)
        s->rdead = 1;
    else if (st != UCFT_OK)
        fail(s, "send failed");
}

static void lane_done(struct ring_op *op, ucft_status_t st);

static void finish(ring_bw_t *s, ucft_status_t st)
{
    s->done = 1;
    s->status = st;
    lane_done(s->op, st);
}

/* Broadcast, phase one: a binomial scatter of the blocks from the root
 * (virtual rank 0): v receives the blocks of its subtree [v, v +
 * lowbit(v)) from v - lowbit(v), then sends each child c = v + m (m =
 * lowbit(v) / 2, ..., 1, c < n) the blocks of c's subtree, one send at a
 * time. 1 when the phase is over. */
static int scatter(ring_bw_t *s)
{
    ucft_status_t st;
    size_t len, off;

    if (s->parent >= 0 && !s->scat_got) {
        if (s->rbusy)
            return 0;
        off = sub_off_len(s, s->v, &len);
        st = tp_recv(s->tp, tag_from(s, s->parent, 0), COLL_BASELINE_RECV_MASK,
                     len ? s->buf + off : NULL, len, &s->rreq);
        if (st == UCFT_INPROGRESS) {
            s->rbusy = 1;
            return 0;
        }
        if (st == UCFT_OK)
            took(s);
        else
            fail(s, "receive failed");
        if (s->failed)
            return 0;
    }
    while (!s->failed && !s->sbusy && s->cmask != 0) {
        unsigned m = s->cmask & (0u - s->cmask);
        unsigned top = m;
        while (s->cmask & ~(2 * top - 1))
            top <<= 1; /* the largest bit left */
        s->cmask &= ~top;
        int c = s->v + (int)top;
        if (c >= s->n)
            continue;
        off = sub_off_len(s, c, &len);
        st = tp_send(s->tp, coll_rank_of(s->args, c, s->root, s->n),
                     tag_from(s, s->tp->rank, 0), len ? s->buf + off : NULL,
                     len, &s->sreq);
        if (st == UCFT_INPROGRESS)
            s->sbusy = 1;
        else if (st != UCFT_OK && st != UCFT_ERR_PROC_FAILED)
            fail(s, "send failed"); /* a dead child: its subtree's news */
    }
    if (s->failed || s->sbusy)
        return 0;
    s->scattering = 0;
    return 1;
}

/* After a failure: the error message to the next peer that still
 * expects a message (scatter children not sent to, then the right
 * neighbour while ring sends remain). 1 when one is in flight. */
static int send_error(ring_bw_t *s)
{
    int to = -1;

    while (s->cmask != 0 && to < 0) {
        unsigned m = s->cmask & (0u - s->cmask);
        s->cmask &= ~m;
        if (s->v + (int)m < s->n)
            to = coll_rank_of(s->args, s->v + (int)m, s->root, s->n);
    }
    if (to < 0 && !s->err_sent && !s->rdead && s->nsent < s->nsteps) {
        s->err_sent = 1;
        to = s->right;
    }
    if (to < 0)
        return 0;
    ucft_status_t st =
        tp_send(s->tp, to, tag_from(s, s->tp->rank, 1), NULL, 0, &s->sreq);
    if (st == UCFT_INPROGRESS)
        s->sbusy = 1;
    return 1;
}

static void progress(ring_bw_t *s)
{
    if (s->done || s->cleaned)
        return;
    if (s->scattering && !s->failed && !scatter(s) && !s->failed)
        return;
    while (!s->failed && s->step < s->nsteps) {
        if (!s->posted)
            post_step(s);
        if (s->failed || s->rbusy || s->sbusy)
            break;
        s->step++;
        s->posted = 0;
    }
    if (!s->failed) {
        if (s->step == s->nsteps)
            finish(s, UCFT_OK);
        return;
    }
    if (s->rbusy || s->sbusy)
        return; /* the cancelled receive, the last data send */
    while (send_error(s))
        if (s->sbusy)
            return;
    finish(s, s->mismatch ? UCFT_ERR_TRUNCATED : UCFT_ERR_PROC_FAILED);
}

static void req_cb(tp_req_t *req)
{
    ring_bw_t *s = req->arg;
    int is_send = req == &s->sreq;

    if (is_send)
        s->sbusy = 0;
    else
        s->rbusy = 0;
    if (s->cleaned || s->done)
        return;
    if (!is_send && !s->failed)
        took(s);
    else if (is_send && !s->failed && req->status == UCFT_ERR_PROC_FAILED)
        s->rdead |= !s->scattering; /* a dead child: nothing to do */
    else if (is_send && !s->failed && req->status != UCFT_OK)
        fail(s, "send failed");
    progress(s);
}

static void lane_done(ring_op_t *op, ucft_status_t st)
{
    if (st != UCFT_OK && op->status == UCFT_INPROGRESS)
        op->status = st; /* the first lane's error is the operation's */
    if (++op->ndone < op->nlanes)
        return;
    if (op->status == UCFT_INPROGRESS)
        op->status = UCFT_OK;
    if (op->status == UCFT_OK && op->mode == RB_ALLGATHER)
        memset(coll_buf_at(op->args, op->buf, op->vbytes), 1,
               (size_t)op->tp->size);
    if (!op->in_start && op->args->done_cb != NULL)
        op->args->done_cb(op->args->done_arg, op->tp->rank, op->status);
}

/* Lane `l` of `nl` over `count` elements: allgather and reduce-scatter
 * take part l of every block (their blocks are equal and must stay
 * whole per rank); allreduce and broadcast take the l-th contiguous
 * slice of the vector and split it into n blocks of their own. */
static void lane_init(ring_op_t *op, ring_bw_t *s, unsigned l, unsigned nl,
                      size_t count, size_t es, void *buf)
{
    const coll_args_t *a = op->args;
    size_t n = (size_t)op->tp->size, lo, cnt;
    int mode = op->mode;

    memset(s, 0, sizeof(*s));
    s->op = op;
    s->kind = COLL_KIND_RING_BW + 2 * l;
    s->tp = op->tp;
    s->args = a;
    s->mode = (uint8_t)mode;
    s->buf = a->len ? buf : NULL;
    s->es = es;
    if (mode == RB_ALLGATHER || mode == RB_REDUCE_SCATTER) {
        size_t qb = count / n; /* elements per block */
        lo = qb * l / nl;
        s->q = qb * (l + 1) / nl - lo;
        s->r = 0;
        s->base = lo * es;
        s->stride = qb * es;
    } else {
        lo = count * l / nl;
        cnt = count * (l + 1) / nl - lo;
        s->q = cnt / n;
        s->r = cnt % n;
        s->base = lo * es;
        s->stride = s->q * es;
        s->vend = (lo + cnt) * es;
    }
    /* Reduce-scatter phase: the lane's receive slot, disjoint from the
     * others' (a block part never exceeds the lane's share). */
    s->rbuf = mode == RB_ALLGATHER || mode == RB_BCAST || !a->len
                  ? NULL
                  : coll_buf_at(a, buf, a->len + s->base);
    s->n = op->tp->size;
    s->root = mode == RB_BCAST ? a->root : 0;
    s->v = coll_vrank_of(a, s->tp->rank, s->root, s->n);
    s->left = coll_rank_of(a, (s->v + s->n - 1) % s->n, s->root, s->n);
    s->right = coll_rank_of(a, (s->v + 1) % s->n, s->root, s->n);
    s->parent = -1;
    if (mode == RB_BCAST) {
        s->scattering = 1;
        s->cmask = lowbit(s, s->v) - 1;
        if (s->v > 0)
            s->parent =
                coll_rank_of(a, s->v - (int)lowbit(s, s->v), s->root, s->n);
    }
    s->rs_steps =
        mode == RB_ALLGATHER || mode == RB_BCAST ? 0 : (unsigned)(s->n - 1);
    s->nsteps = s->rs_steps + (mode == RB_REDUCE_SCATTER ? 0 : s->n - 1);
    s->status = UCFT_INPROGRESS;
    s->rreq.cb = s->sreq.cb = req_cb;
    s->rreq.arg = s->sreq.arg = s;
}

/* Lanes for blocks of `blk` elements of `es` bytes: one per RB_SEG bytes
 * of a block, at most RB_LANES, at most one per element. */
static unsigned lanes_for(size_t blk, size_t es)
{
    size_t nl = blk * es / RB_SEG;
    if (nl > RB_LANES)
        nl = RB_LANES;
    if (nl > blk)
        nl = blk;
    return nl < 1 ? 1 : (unsigned)nl;
}

ucft_status_t rb_init(void *state, tp_t *tp, const coll_args_t *a, void *buf,
                      int mode)
{
    ring_op_t *op = state;
    size_t es = dtype_size(a->dtype), n = (size_t)tp->size;
    size_t count = a->count;
    int ok = es > 0 && a->root >= 0 && a->root < tp->size;

    if (count == 0 && mode != RB_ALLGATHER && es > 0 && a->len % es == 0)
        count = a->len / es; /* a driver that gives bytes only */
    size_t vbytes = count * es;
    if (mode == RB_ALLGATHER)
        ok = ok && a->count % n == 0 && a->len == vbytes + n;
    else if (mode == RB_BCAST)
        ok = ok && a->len == vbytes;
    else
        ok = ok && a->len == vbytes && coll_redop_valid(a) &&
             (mode == RB_ALLREDUCE || count % n == 0);
    if (!ok || (a->len > 0 && buf == NULL))
        return UCFT_ERR_INVALID_PARAM;
    memset(op, 0, offsetof(ring_op_t, lane));
    op->tp = tp;
    op->args = a;
    op->buf = a->len ? buf : NULL;
    op->vbytes = vbytes;
    op->mode = (uint8_t)mode;
    op->status = UCFT_INPROGRESS;
    op->nlanes = lanes_for(count / n, es);
    for (unsigned l = 0; l < op->nlanes; l++)
        lane_init(op, &op->lane[l], l, op->nlanes, count, es, buf);
    return UCFT_OK;
}

static ucft_status_t rb_ag_init(void *st, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    return rb_init(st, tp, a, buf, RB_ALLGATHER);
}

static ucft_status_t rb_rs_init(void *st, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    return rb_init(st, tp, a, buf, RB_REDUCE_SCATTER);
}

static ucft_status_t rb_ar_init(void *st, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    return rb_init(st, tp, a, buf, RB_ALLREDUCE);
}

static ucft_status_t rb_bc_init(void *st, tp_t *tp, const coll_args_t *a,
                                void *buf)
{
    return rb_init(st, tp, a, buf, RB_BCAST);
}

ucft_status_t rb_start(void *state)
{
    ring_op_t *op = state;

    op->in_start = 1;
    for (unsigned l = 0; l < op->nlanes; l++)
        progress(&op->lane[l]);
    op->in_start = 0;
    return op->status;
}

ucft_status_t rb_test(const void *state)
{
    return ((const ring_op_t *)state)->status;
}

static void lane_on_failure(ring_bw_t *s, int rank)
{
    if (s->cleaned || s->done || s->failed)
        return;
    if (rank == s->parent && s->scattering && !s->scat_got) {
        fail(s, "the scatter parent failed");
        progress(s);
        return;
    }
    if (rank != s->left)
        return;
    /* Still waiting for one of the left neighbour's messages? */
    if (s->step + 1 < s->nsteps || !s->posted || !s->got) {
        fail(s, "the left neighbour failed");
        progress(s);
    }
}

void rb_on_failure(void *state, int rank)
{
    ring_op_t *op = state;
    for (unsigned l = 0; l < op->nlanes; l++)
        lane_on_failure(&op->lane[l], rank);
}

void rb_cleanup(void *state)
{
    ring_op_t *op = state;

    for (unsigned l = 0; l < op->nlanes; l++) {
        ring_bw_t *s = &op->lane[l];
        s->cleaned = 1;
        if (s->rbusy)
            tp_cancel(s->tp, &s->rreq);
    }
}

int rb_idle(const void *state)
{
    const ring_op_t *op = state;
    for (unsigned l = 0; l < op->nlanes; l++)
        if (op->lane[l].rbusy || op->lane[l].sbusy)
            return 0;
    return 1;
}

#define RB_OPS(var, opname, alg_, doc_, mult, init_, cons, direct_)            \
    const coll_op_ops_t var = {                                                \
        .op = opname,                                                          \
        .alg = alg_,                                                           \
        .doc = doc_,                                                           \
        .state_size = sizeof(ring_op_t),                                       \
        .buf_mult = mult,                                                      \
        .init = init_,                                                         \
        .start = rb_start,                                                     \
        .test = rb_test,                                                       \
        .cleanup = rb_cleanup,                                                 \
        .idle = rb_idle,                                                       \
        .on_failure = rb_on_failure,                                           \
        .consistent = cons,                                                    \
        .direct = direct_,                                                     \
    };

RB_OPS(coll_allgather_ring_ops, "allgather", "ring",
       "baseline ring: n - 1 steps, each rank forwards one block per step "
       "((n - 1) / n of the output per rank; blocks over 32 KiB in up to 4 "
       "concurrent lanes); fault-aware, not fault-tolerant",
       1, rb_ag_init, 1, 1)
RB_OPS(coll_reduce_scatter_ring_ops, "reduce_scatter", "ring",
       "baseline ring: n - 1 steps, each rank combines one block per step "
       "and forwards it (up to 4 lanes); fault-aware, not fault-tolerant",
       2, rb_rs_init, 0, 0)
RB_OPS(coll_allreduce_ring_ops, "allreduce", "ring",
       "baseline ring reduce-scatter then ring allgather: 2 (n - 1) / n of "
       "the vector sent per rank, bandwidth-optimal for large vectors (up "
       "to 4 lanes); fault-aware, not fault-tolerant",
       2, rb_ar_init, 1, 1)
RB_OPS(coll_bcast_scatter_ring_ops, "bcast", "scatter-ring",
       "baseline binomial scatter of n blocks, then ring allgather: about "
       "2 (n - 1) / n of the vector sent per rank, for large vectors (up to "
       "4 lanes); fault-aware, not fault-tolerant",
       1, rb_bc_init, 1, 1)
