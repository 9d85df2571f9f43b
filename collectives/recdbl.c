/*
 * Baseline allreduce (and barrier: an allreduce of nothing) by recursive
 * doubling, and its radix-k form, recursive exchange: fault-aware, not
 * fault-tolerant (baseline.h, docs/baselines.md).
 *
 * Virtual ranks v = coll_vrank_of(rank) (root 0 of the placement order),
 * p = the largest power of two <= n, L = log2 p, rem = n - p, radix
 * k = 2^r (recdbl: k = 2; recexch: k = 4 and 8).
 *   extra      v >= p: sends its value to v - p and receives the result
 *              from it (one stage, both messages posted together);
 *   fold       v < rem: first receives the value of v + p and combines it,
 *              then runs the rounds, then sends the result to v + p;
 *   rounds     round j = 0 .. ceil(L / r) - 1 covers the bits [j r,
 *              min(j r + r, L)) of v, w of them: the group of 2^w ranks
 *              that differ from v only there exchange their current
 *              values, each sending to the 2^w - 1 others, and every
 *              member combines the group's values in the order of those
 *              bits (value = x_0 op x_1 op ...).
 * Messages without failures: p sum_j (2^w_j - 1) + 2 rem (k = 2, n = 2^L:
 * n log2 n). Every pair of ranks exchanges at most one message per
 * direction (the rounds' groups differ in disjoint bits), so the source in
 * the tag tells the stages apart and one data kind suffices. Every member
 * of a group combines the same values in the same order (with k = 2 the
 * order does not matter: combination is commutative), so every rank ends
 * with the same bits (floating point too). More values per round means
 * fewer rounds: each round is a wait, and with more ranks than cores a
 * wait is a context switch.
 *
 * A rank runs its stages in order; a stage posts its receives, then its
 * sends (all from the value: it is combined only once every request has
 * completed, so a send never sees a half-updated value), and ends when all
 * have completed. The op buffer holds k len bytes: the value (the result),
 * then one receive slot per group member (k - 1).
 *
 * Failures (baseline.h): a rank ends with UCFT_ERR_PROC_FAILED when a peer
 * it still waits for fails or sends an error message, or when a send
 * fails. It then sends an error message to every peer of a stage whose
 * sends it has not posted yet (the later round groups, the extra it owes
 * the result), one at a time, and finishes after the last one. Why no live
 * rank waits forever: a live peer of round j either reaches round j
 * (sends its value) or fails in round j or before (sends the error before
 * finishing); a dead one is named by on_failure.
 */
#include "baseline.h"

#include <string.h>

#define RD_KMAX 8 /* largest radix */

enum { POST_NONE, POST_COMBINE, POST_COPY };

typedef struct recdbl {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf;  /* value, then the result */
    unsigned char *rbuf; /* k - 1 receive slots of len bytes */
    tp_req_t rreq[RD_KMAX - 1], sreq[RD_KMAX - 1];
    size_t len, count;
    int v, n, p, rem;
    int vmate;              /* virtual rank of args->mate, or -1 */
    uint8_t mate_last;      /* n = 2^L and the mate is a last-round peer */
    unsigned lg, nround;    /* log2 p; rounds: lg bits split evenly */
    unsigned nstage, stage; /* stages of this rank; the current one */
    unsigned unsent;        /* first stage whose sends are not posted */
    unsigned err_next;      /* failed: next stage to send errors for */
    unsigned err_peer;      /* ... and its next peer */
    ucft_status_t status;   /* INPROGRESS until done */
    uint8_t rbusy, sbusy;   /* bit i: rreq[i] / sreq[i] pending */
    uint8_t posted;         /* the current stage's requests are posted */
    uint8_t failed, done, cleaned, in_start;
} recdbl_t;

/* One stage: peers base | d << shift for every digit d of w bits but own
 * (a round), or the single peer `base` (fold, extra: w = 0, own = 1). */
typedef struct rd_stage {
    int base;
    unsigned shift, w, own;
    uint8_t send, recv, post;
} rd_stage_t;

static rd_stage_t stage_of(const recdbl_t *s, unsigned i)
{
    int fold = s->v < s->rem;

    if (s->v >= s->p)
        return (rd_stage_t){s->v - s->p, 0, 0, 1, 1, 1, POST_COPY};
    if (fold && i == 0)
        return (rd_stage_t){s->v + s->p, 0, 0, 1, 0, 1, POST_COMBINE};
    if (fold && i == s->nstage - 1)
        return (rd_stage_t){s->v + s->p, 0, 0, 1, 1, 0, POST_NONE};
    unsigned j = i - (unsigned)fold, base = s->lg / s->nround,
             extra = s->lg % s->nround;
    unsigned shift = j * base + (j < extra ? j : extra);
    unsigned w = base + (j < extra);
    unsigned mask = ((1u << w) - 1) << shift;
    return (rd_stage_t){
        s->v & (int)~mask, shift, w, ((unsigned)s->v & mask) >> shift, 1, 1,
        POST_COMBINE};
}

/* Peers of a stage: (1 << w) - 1 of them; peer i has digit i, or i + 1
 * from the own digit on (so receive slot i holds digit i or i + 1). */
static unsigned npeers(rd_stage_t g)
{
    return g.w ? (1u << g.w) - 1 : 1;
}

static int peer_of(rd_stage_t g, unsigned i)
{
    if (g.w == 0)
        return g.base;
    return g.base | (int)((i < g.own ? i : i + 1) << g.shift);
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

/* Cancels the receives still pending (their callbacks follow). */
static void cancel_receives(recdbl_t *s)
{
    for (unsigned i = 0; i < RD_KMAX - 1; i++)
        if (s->rbusy & (1u << i))
            tp_cancel(s->tp, &s->rreq[i]);
}

static void fail(recdbl_t *s, const char *why, int vpeer)
{
    if (s->failed)
        return;
    ucft_debug(s->tp->log, "allreduce recdbl: %s (rank %d)", why,
               rank_of(s, vpeer));
    s->failed = 1;
    if (s->args->remote_wait != NULL)
        *s->args->remote_wait = 0; /* error messages go to any peer */
    s->err_next = s->unsent;
    s->err_peer = 0;
    cancel_receives(s);
}

/* Receive i of the current stage completed (status in rreq[i]). */
static void took(recdbl_t *s, unsigned i)
{
    int peer = peer_of(stage_of(s, s->stage), i);
    if (s->rreq[i].status != UCFT_OK)
        fail(s, "receive failed", peer);
    else if (coll_baseline_is_err(&s->rreq[i]))
        fail(s, "the peer failed", peer);
    else if (s->rreq[i].length != s->len)
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
        rd_stage_t g = stage_of(s, s->err_next);
        int dst = rank_of(s, peer_of(g, s->err_peer));
        if (++s->err_peer == npeers(g)) {
            s->err_next++;
            s->err_peer = 0;
        }
        ucft_status_t st = tp_send(s->tp, dst, tag_from(s, s->tp->rank, 1),
                                   NULL, 0, &s->sreq[0]);
        if (st == UCFT_INPROGRESS)
            s->sbusy = 1;
    }
}

static void post_stage(recdbl_t *s, rd_stage_t g)
{
    unsigned np = npeers(g);

    s->posted = 1;
    for (unsigned i = 0; g.recv && i < np && !s->failed; i++) {
        int peer = rank_of(s, peer_of(g, i));
        ucft_status_t st =
            tp_recv(s->tp, tag_from(s, peer, 0), COLL_BASELINE_RECV_MASK,
                    s->len ? s->rbuf + i * s->len : NULL, s->len, &s->rreq[i]);
        if (st == UCFT_INPROGRESS)
            s->rbusy |= (uint8_t)(1u << i);
        else if (st == UCFT_OK)
            took(s, i);
        else
            fail(s, "receive failed", peer_of(g, i));
    }
    if (s->failed || !g.send)
        return;
    /* Every send of the stage is posted, also after one to a known-dead
     * peer failed at once: no error message replaces the others (this
     * stage counts as sent), so a peer skipped here would wait for ever. */
    s->unsent = s->stage + 1;
    for (unsigned i = 0; i < np; i++) {
        ucft_status_t st =
            tp_send(s->tp, rank_of(s, peer_of(g, i)),
                    tag_from(s, s->tp->rank, 0), s->buf, s->len, &s->sreq[i]);
        if (st == UCFT_INPROGRESS)
            s->sbusy |= (uint8_t)(1u << i);
        else if (st != UCFT_OK)
            fail(s, "send failed", peer_of(g, i));
    }
}

/* value = x_0 op x_1 op ... in digit order (x_own is the value). */
static void combine_group(recdbl_t *s, rd_stage_t g)
{
    unsigned np = npeers(g);

    if (np == 1) { /* two values: commutative, any order */
        coll_combine(s->args, s->buf, s->rbuf, s->count);
        return;
    }
    unsigned char *acc = g.own == 0 ? s->buf : s->rbuf;
    for (unsigned d = 1; d <= np; d++) {
        const unsigned char *x =
            d == g.own ? s->buf : s->rbuf + (d < g.own ? d : d - 1) * s->len;
        coll_combine(s->args, acc, x, s->count);
    }
    if (acc != s->buf)
        memcpy(s->buf, acc, s->len);
}

/* coll_args_t.remote_wait. A rank may say 1 (nothing it waits for needs
 * work the mate has yet to do) only when the mate is a peer of its last
 * round and n is a power of two (no fold or extra stages):
 *   - before the last round, a peer's message of round j needs that
 *     peer's earlier rounds of this instance (ranks that differ from this
 *     one only below round j's bits: not the mate) and its completion of
 *     the previous instance, which needed at most the mate's sends of
 *     that instance; the mate had posted them all when it sent this rank
 *     its last-round message of that instance, which this rank has;
 *   - in the last round, once the mate's message is in, the mate has
 *     posted its sends of every round, the others' messages need nothing
 *     more of it.
 * Otherwise 0: e.g. with mate r ^ 1 (the first round's peer), a peer of a
 * later round may still need the mate's first-round message. */
static void note_wait(const recdbl_t *s, rd_stage_t g)
{
    uint8_t remote = s->mate_last;
    if (remote && s->stage + 1 == s->nstage)
        for (unsigned i = 0; i < npeers(g); i++)
            if ((((s->rbusy | s->sbusy) >> i) & 1) && peer_of(g, i) == s->vmate)
                remote = 0;
    *s->args->remote_wait = remote;
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
        if (s->rbusy || s->sbusy) {
            if (s->args->remote_wait != NULL)
                note_wait(s, g);
            return;
        }
        if (g.post == POST_COMBINE && s->count > 0)
            combine_group(s, g);
        else if (g.post == POST_COPY && s->len > 0)
            memcpy(s->buf, s->rbuf, s->len);
        s->stage++;
        s->posted = 0;
    }
}

static void req_cb(tp_req_t *req)
{
    recdbl_t *s = req->arg;
    int is_send = req >= s->sreq && req < s->sreq + RD_KMAX - 1;
    unsigned i = (unsigned)(is_send ? req - s->sreq : req - s->rreq);

    if (is_send)
        s->sbusy &= (uint8_t) ~(1u << i);
    else
        s->rbusy &= (uint8_t) ~(1u << i);
    if (s->cleaned || s->done)
        return;
    if (!s->failed) {
        if (!is_send)
            took(s, i);
        else if (req->status != UCFT_OK)
            fail(s, "send failed", peer_of(stage_of(s, s->stage), i));
    }
    step(s);
}

static ucft_status_t rd_init_common(void *state, tp_t *tp,
                                    const coll_args_t *args, void *buf,
                                    int nodata, unsigned r)
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
    s->rbuf = len ? coll_buf_at(args, buf, len) : NULL;
    s->len = len;
    s->count = count;
    s->n = tp->size;
    s->v = coll_vrank_of(args, tp->rank, args->root, tp->size);
    while (s->lg < 30 && (2 << s->lg) <= s->n)
        s->lg++;
    s->p = 1 << s->lg;
    s->rem = s->n - s->p;
    s->nround = (s->lg + r - 1) / r; /* r: most bits per round */
    s->nstage = s->v >= s->p ? 1 : s->nround + (s->v < s->rem ? 2 : 0);
    s->vmate = coll_vmate_of(args, tp->rank, args->root, s->n);
    if (s->vmate >= 0 && s->rem == 0 && s->nstage > 0) {
        rd_stage_t g = stage_of(s, s->nstage - 1);
        for (unsigned i = 0; i < npeers(g); i++)
            s->mate_last |= peer_of(g, i) == s->vmate;
    }
    s->status = UCFT_INPROGRESS;
    for (unsigned i = 0; i < RD_KMAX - 1; i++) {
        s->rreq[i].cb = s->sreq[i].cb = req_cb;
        s->rreq[i].arg = s->sreq[i].arg = s;
    }
    return UCFT_OK;
}

#define RD_INIT(name, nodata, r)                                               \
    static ucft_status_t name(void *state, tp_t *tp, const coll_args_t *args,  \
                              void *buf)                                       \
    {                                                                          \
        return rd_init_common(state, tp, args, buf, nodata, r);                \
    }
RD_INIT(rd_init, 0, 1)
RD_INIT(rd_barrier_init, 1, 1)
RD_INIT(rx_init, 0, 3)
RD_INIT(rx_barrier_init, 1, 3)

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
        for (unsigned j = 0; g.recv && j < npeers(g); j++) {
            if (peer_of(g, j) != v)
                continue;
            if (i > s->stage || !s->posted || (s->rbusy & (1u << j))) {
                fail(s, "a peer failed", v);
                step(s);
            }
            return;
        }
    }
}

static void rd_cleanup(void *state)
{
    recdbl_t *s = state;

    s->cleaned = 1;
    cancel_receives(s);
}

static int rd_idle(const void *state)
{
    const recdbl_t *s = state;
    return !s->rbusy && !s->sbusy;
}

#define RD_OPS(name, opname, algname, doc_, mult, init_)                       \
    const coll_op_ops_t name = {                                               \
        .op = opname,                                                          \
        .alg = algname,                                                        \
        .doc = doc_,                                                           \
        .state_size = sizeof(recdbl_t),                                        \
        .buf_mult = mult,                                                      \
        .init = init_,                                                         \
        .start = rd_start,                                                     \
        .test = rd_test,                                                       \
        .cleanup = rd_cleanup,                                                 \
        .idle = rd_idle,                                                       \
        .on_failure = rd_on_failure,                                           \
        .consistent = 1,                                                       \
        .direct = 1,                                                           \
    };

RD_OPS(coll_allreduce_recdbl_ops, "allreduce", "recdbl",
       "baseline recursive doubling (extra ranks fold into a partner), "
       "p log2 p + 2 (n - p) messages; fault-aware (ends with "
       "ERR_PROC_FAILED), not fault-tolerant",
       2, rd_init)
RD_OPS(coll_allreduce_recexch_ops, "allreduce", "recexch",
       "baseline recursive exchange, radix 8: groups of up to 8 ranks "
       "exchange all their values, log8 p rounds instead of log2 p; "
       "fault-aware, not fault-tolerant",
       8, rx_init)
/* Barrier: no data; the buffer is left alone. */
RD_OPS(coll_barrier_recdbl_ops, "barrier", "recdbl",
       "baseline recursive doubling of nothing; fault-aware, not "
       "fault-tolerant",
       1, rd_barrier_init)
RD_OPS(coll_barrier_recexch_ops, "barrier", "recexch",
       "baseline recursive exchange of nothing, radix 8; fault-aware, not "
       "fault-tolerant",
       1, rx_barrier_init)
