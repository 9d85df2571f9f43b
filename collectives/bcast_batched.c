/*
 * Corrected broadcast with batched copies ("corrected-batched",
 * docs/bcast.md): the opportunistic correction of bcast_corrected.c
 * (interleaved binomial tree, then one copy per offset of the window
 * d = 2^f - 1: d - d/2 to the right, d/2 to the left, none to the root or
 * its children), whose copies travel over the communicator's copy channel
 * (copy_chan.h) instead of one message each: a rank appends its copies of
 * an instance to the links of its window and the channel sends them,
 * several instances per message, when a batch is full, when its rank
 * waits or learns of a failure; a copy whose receiver a known death cut
 * off from the tree goes at once.
 *
 * Why: on a node with fewer cores than ranks a loop of broadcasts costs
 * what its messages cost; one copy per rank and instance nearly doubles
 * that, a batch of 64 adds a sixty-fourth (docs/bench.md). What it changes:
 * a copy leaves its sender later, which the correction argument allows
 * (it holds for any timing, as long as every live sender's copies leave
 * eventually: see copy_chan.h for when they do).
 *
 * Per rank and instance (the lean state machine of the failure-free path
 * is that of the binomial baseline plus the appends):
 *  - the root sends to its tree children, appends its copies, is done;
 *  - another rank posts one exact receive for its parent's tree message;
 *    when it comes, it forwards to its children, appends its copies and is
 *    done. A copy can bring the data first: the output is final then
 *    (args->ready_cb), but the rank stays until its tree message arrives
 *    (it must forward) or is known never to come (a tree ancestor died:
 *    then it is done, and as in bcast_corrected.c, a rank reached only by
 *    a copy neither forwards nor copies).
 *  - Ending without the data, as bcast_corrected.c's window mode: the
 *    root known dead, or more than f failures known and none of the ranks
 *    whose window holds this one expected to send.
 * Payloads over CC_ENTRY_MAX bytes, f over CC_MAX_F, or no channel: the
 * instance runs corrected-opportunistic unchanged (the same decision at
 * every rank: it depends on the instance's arguments only).
 */
#include "bcast_corrected_impl.h"
#include "copy_chan.h"
#include "tree_binomial.h"

#include <stddef.h>
#include <string.h>

extern const coll_op_ops_t coll_bcast_corrected_opportunistic_ops;
#define BB_FALLBACK (&coll_bcast_corrected_opportunistic_ops)

enum { BB_R = 0, BB_L = 1 };

/* What a new instance starts with zeroed (one store, not a memset of
 * the whole state: the hot path of a loop of broadcasts). */
typedef struct bb_flags {
    uint8_t nchild;
    uint8_t has_data;
    uint8_t sender; /* got the tree message (or is the root) */
    uint8_t joined;
    uint8_t started;
    uint8_t recv_pending;
    uint8_t send_pending;
    uint8_t ready_told;
    uint8_t cleaned;
    uint8_t in_step;
    uint8_t mismatch;
    uint8_t overflow; /* a failure could not be remembered */
} bb_flags_t;

typedef struct bb {
    cc_member_t m; /* in the channel while the instance runs here */
    tp_t *tp;
    const coll_args_t *args;
    cc_chan_t *ch;
    unsigned char *buf;
    int n;
    int vrank;
    ucft_status_t status;
    uint8_t w[2]; /* window: offsets copied to on each side */
    uint8_t tol;  /* f */
    bb_flags_t fl;
    coll_rankset_t dead; /* vranks known dead */
    tp_req_t rreq;       /* the tree message */
    tp_req_t sreq;       /* tree sends, chained */
} bb_t;

typedef struct bb_state {
    uint8_t fallback;
    union {
        bb_t bb;
        bcast_corrected_t bc;
    } u;
} bb_state_t;

/* ---- knowledge of failures (as bcast_corrected.c's window mode) -------- */

static int bb_dead(const bb_t *s, int v)
{
    return s->dead.n > 0 && coll_rankset_has(&s->dead, v);
}

/* v and its tree ancestors are alive as far as I know. */
static int bb_expected(const bb_t *s, int v)
{
    if (s->dead.n == 0)
        return 1;
    if (s->fl.overflow)
        return 0;
    for (; v >= 0; v = coll_binomial_parent(v))
        if (bb_dead(s, v))
            return 0;
    return 1;
}

/* The vrank at offset off (0 < off < n) on one side. */
static int bb_ring(const bb_t *s, int side, int off)
{
    int t = side == BB_R ? s->vrank + off : s->vrank - off;
    return t >= s->n ? t - s->n : t < 0 ? t + s->n : t;
}

/* An expected sender whose window holds me. */
static int bb_guaranteed(const bb_t *s)
{
    if (s->fl.overflow)
        return 0;
    for (int side = 0; side < 2; side++)
        for (int j = 1; j <= s->w[side] && j < s->n; j++)
            if (bb_expected(s, bb_ring(s, side ^ 1, j)))
                return 1;
    return 0;
}

/* v needs no copy: the root has the data; its children get it from the
 * tree unless the root died, and a dead root is not corrected. Two ranks
 * need none at all. */
static int bb_needless(const bb_t *s, int v)
{
    return s->n <= 2 || v == 0 || coll_binomial_parent(v) == 0;
}

/* ---- completion ---------------------------------------------------------- */

static void bb_ready(bb_t *s)
{
    if (!s->fl.ready_told && s->args->ready_cb != NULL &&
        s->status == UCFT_INPROGRESS) {
        s->fl.ready_told = 1;
        s->args->ready_cb(s->args->done_arg, s->tp->rank, UCFT_OK);
    }
}

static void bb_leave(bb_t *s)
{
    if (s->fl.joined) {
        cc_leave(s->ch, &s->m);
        s->fl.joined = 0;
    }
}

static void bb_finish(bb_t *s, ucft_status_t status, int in_cb)
{
    s->status = status;
    if (s->fl.recv_pending)
        tp_cancel(s->tp, &s->rreq);
    bb_leave(s);
    if (in_cb && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, status);
}

/* ---- the sender's part --------------------------------------------------- */

/* The copies of a sender: offsets R1 L1 R2 L2 ... of its window, until
 * the offsets taken cover the ring (as bcast_corrected.c: no rank twice),
 * none to a rank that needs none or is known dead. */
static void bb_copies(bb_t *s)
{
    const coll_args_t *a = s->args;
    int taken = 0;
    for (int j = 1; j <= s->w[BB_R] || j <= s->w[BB_L]; j++)
        for (int side = 0; side < 2; side++) {
            if (j > s->w[side] || taken >= s->n - 1)
                continue;
            taken++;
            int v = bb_ring(s, side, j);
            if (bb_needless(s, v) || bb_dead(s, v))
                continue;
            /* A receiver that a known death cut off from the tree needs
             * this copy: it goes at once, the others wait for a batch. */
            cc_append(s->ch, side == BB_R ? cc_link_right(j) : cc_link_left(j),
                      a->seq, s->buf, a->len, !bb_expected(s, v));
        }
}

/* Sends to the tree children not served yet; 1 when all are. */
static int bb_forward(bb_t *s)
{
    const coll_args_t *a = s->args;
    while (!s->fl.send_pending) {
        int c = coll_binomial_child(s->vrank, s->fl.nchild, s->n);
        if (c < 0)
            return 1;
        s->fl.nchild++;
        if (bb_dead(s, c))
            continue;
        int to = coll_rank_of(a, c, a->root, s->n);
        ucft_status_t st =
            tp_send(s->tp, to, coll_tag(a, s->tp->rank, BC_KIND_TREE), s->buf,
                    a->len, &s->sreq);
        if (st == UCFT_INPROGRESS)
            s->fl.send_pending = 1;
        else if (st != UCFT_OK)
            ucft_debug(s->tp->log, "bcast: send to rank %d failed: %s", to,
                       ucft_status_string(st));
    }
    return 0;
}

/* A copy of this instance's payload (from the channel). */
static int bb_take_copy(bb_t *s, const void *data, size_t len)
{
    if (s->fl.has_data)
        return 0;
    if (len != s->args->len) {
        ucft_warn(s->tp->log,
                  "collective #%u: a copy of %zu bytes where this rank "
                  "broadcasts %zu: the ranks called the operation with "
                  "different counts or datatypes; this rank's part ends "
                  "with an error",
                  (unsigned)s->args->seq, len, s->args->len);
        s->fl.mismatch = 1;
        return 1;
    }
    if (len > 0)
        memcpy(s->buf, data, len);
    s->fl.has_data = 1;
    cc_has_data(s->ch, &s->m);
    return 1;
}

/* Without the data, and the tree message will not come: a copy that has
 * arrived gives it; otherwise copies are wanted as soon as they come. */
static void bb_want_copy(bb_t *s)
{
    size_t len;
    const void *d = cc_find(s->ch, s->args->seq, &len);
    if (d != NULL)
        bb_take_copy(s, d, len);
    else
        s->m.urgent = 1;
}

/* Drives the rank as far as it can go now; done_cb only when in_cb. */
static ucft_status_t bb_step(bb_t *s, int in_cb)
{
    if (s->status != UCFT_INPROGRESS || s->fl.cleaned || s->fl.in_step)
        return s->status;
    s->fl.in_step = 1;
    if (!s->fl.has_data && s->dead.n > 0 && !bb_expected(s, s->vrank))
        bb_want_copy(s);
    if (s->fl.mismatch) {
        bb_finish(s, UCFT_ERR_TRUNCATED, in_cb);
    } else if (!s->fl.has_data) {
        if (bb_dead(s, 0) || (s->dead.n > s->tol && !bb_expected(s, s->vrank) &&
                              !bb_guaranteed(s)))
            bb_finish(s, UCFT_ERR_PROC_FAILED, in_cb);
    } else if (!s->fl.sender) {
        /* Reached by a copy: done unless the tree message is to come. */
        if (!bb_expected(s, s->vrank))
            bb_finish(s, UCFT_OK, in_cb);
    } else if (bb_forward(s)) {
        bb_copies(s);
        bb_finish(s, UCFT_OK, in_cb);
    }
    /* Early completion only for a rank that has a copy and waits for its
     * tree message: one whose sends are pending completes when they do, as
     * the binomial tree's ranks (a root let go with its sends queued runs
     * ahead of its receivers). */
    if (s->status == UCFT_INPROGRESS && s->fl.has_data && !s->fl.sender)
        bb_ready(s);
    s->fl.in_step = 0;
    return s->status;
}

/* ---- messages ------------------------------------------------------------ */

/* The tree message completed (req): UCFT_OK (a payload of another size
 * sets s->fl.mismatch), or the error that ends the rank. */
static ucft_status_t bb_tree_msg(bb_t *s, const tp_req_t *req)
{
    ucft_status_t st = coll_recv_status(s->tp, s->args, req, s->args->len);
    if (st == UCFT_ERR_TRUNCATED) {
        s->fl.mismatch = 1;
        return UCFT_OK;
    }
    if (st == UCFT_OK) {
        s->fl.has_data = s->fl.sender = 1;
        cc_has_data(s->ch, &s->m);
    }
    return st;
}

static void bb_recv_cb(tp_req_t *req)
{
    bb_t *s = req->arg;
    s->fl.recv_pending = 0;
    if (s->fl.cleaned || s->status != UCFT_INPROGRESS ||
        req->status == UCFT_ERR_CANCELED)
        return;
    ucft_status_t st = bb_tree_msg(s, req);
    if (st != UCFT_OK)
        bb_finish(s, st, 1);
    else
        bb_step(s, 1);
}

static void bb_send_cb(tp_req_t *req)
{
    bb_t *s = req->arg;
    s->fl.send_pending = 0;
    bb_step(s, 1);
}

static void bb_copy_cb(cc_member_t *m, const void *data, size_t len)
{
    bb_t *s = (bb_t *)((char *)m - offsetof(bb_t, m));
    if (s->fl.cleaned || s->status != UCFT_INPROGRESS)
        return;
    if (bb_take_copy(s, data, len))
        bb_step(s, 1);
}

/* ---- ops ----------------------------------------------------------------- */

static ucft_status_t bb_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf)
{
    bb_state_t *u = state;
    int f = args->f > 0 ? args->f : 1;
    cc_chan_t *ch = coll_comm_state(args, tp->rank);

    u->fallback = ch == NULL || args->len > CC_ENTRY_MAX || f > CC_MAX_F;
    if (u->fallback)
        return BB_FALLBACK->init(&u->u.bc, tp, args, buf);
    if (args->root < 0 || args->root >= tp->size)
        return UCFT_ERR_INVALID_PARAM;
    bb_t *s = &u->u.bb;
    s->fl = (bb_flags_t){0};
    s->dead.n = 0;
    s->dead.heap = NULL;
    s->tp = tp;
    s->args = args;
    s->ch = ch;
    s->buf = buf;
    s->n = tp->size;
    s->vrank = coll_vrank_of(args, tp->rank, args->root, tp->size);
    unsigned d = (1u << f) - 1;
    s->w[BB_R] = (uint8_t)(d - d / 2);
    s->w[BB_L] = (uint8_t)(d / 2);
    s->tol = (uint8_t)f;
    s->status = UCFT_INPROGRESS;
    s->rreq.cb = bb_recv_cb;
    s->rreq.arg = s;
    s->sreq.cb = bb_send_cb;
    s->sreq.arg = s;
    s->sreq.buffered = 0; /* the state may last have held the fallback's */
    s->m = (cc_member_t){
        .seq = args->seq, .cb = bb_copy_cb, .lacks = s->vrank != 0};
    return UCFT_OK;
}

static ucft_status_t bb_start_rank(bb_t *s)
{
    const coll_args_t *a = s->args;

    s->fl.started = 1;
    if (s->n == 1)
        return s->status = UCFT_OK;
    if (s->vrank == 0) {
        s->fl.has_data = s->fl.sender = 1;
        return bb_step(s, 0);
    }
    int parent = coll_rank_of(a, coll_binomial_parent(s->vrank), a->root, s->n);
    cc_need(s->ch, s->tol);
    cc_join(s->ch, &s->m);
    s->fl.joined = 1;
    ucft_status_t st = tp_recv(s->tp, coll_tag(a, parent, BC_KIND_TREE),
                               UCFT_TAG_FULL_MASK, s->buf, a->len, &s->rreq);
    if (st == UCFT_INPROGRESS)
        s->fl.recv_pending = 1;
    else if (st == UCFT_OK)
        st = bb_tree_msg(s, &s->rreq);
    if (st != UCFT_OK && st != UCFT_INPROGRESS) {
        bb_finish(s, st, 0);
        return st;
    }
    return bb_step(s, 0);
}

static ucft_status_t bb_start(void *state)
{
    bb_state_t *u = state;
    if (u->fallback)
        return BB_FALLBACK->start(&u->u.bc);
    return bb_start_rank(&u->u.bb);
}

static ucft_status_t bb_test(const void *state)
{
    const bb_state_t *u = state;
    if (u->fallback)
        return BB_FALLBACK->test(&u->u.bc);
    return u->u.bb.status;
}

static void bb_cleanup(void *state)
{
    bb_state_t *u = state;
    if (u->fallback) {
        BB_FALLBACK->cleanup(&u->u.bc);
        return;
    }
    bb_t *s = &u->u.bb;
    s->fl.cleaned = 1;
    if (s->fl.recv_pending)
        tp_cancel(s->tp, &s->rreq);
    bb_leave(s);
    coll_rankset_free(&s->dead);
}

static void bb_on_failure(void *state, int rank)
{
    bb_state_t *u = state;
    if (u->fallback) {
        BB_FALLBACK->on_failure(&u->u.bc, rank);
        return;
    }
    bb_t *s = &u->u.bb;
    if (s->fl.cleaned ||
        !bc_note_dead(s->tp, s->args, s->n, rank, &s->dead, &s->fl.overflow))
        return;
    if (s->fl.started)
        bb_step(s, 1);
}

static int bb_idle(const void *state)
{
    const bb_state_t *u = state;
    if (u->fallback)
        return BB_FALLBACK->idle(&u->u.bc);
    return !u->u.bb.fl.recv_pending && !u->u.bb.fl.send_pending;
}

const coll_op_ops_t coll_bcast_corrected_batched_ops = {
    .op = "bcast",
    .alg = "corrected-batched",
    .doc = "interleaved binomial tree + opportunistic correction, distance "
           "2^f-1, copies batched across consecutive broadcasts",
    .state_size = sizeof(bb_state_t),
    .buf_mult = 2,
    .init = bb_init,
    .start = bb_start,
    .test = bb_test,
    .cleanup = bb_cleanup,
    .on_failure = bb_on_failure,
    .idle = bb_idle,
    .comm = &cc_comm_ops,
};
