/*
 * Corrected broadcast (ALGORITHMS.md §1-2, docs/bcast.md): an interleaved
 * tree (binomial, k-ary or Lamé) followed by a correction phase on the ring
 * of virtual ranks (vrank = (rank - root) mod n, the root is 0). One
 * parameterized state machine; the registered algorithms differ only in a
 * bc_cfg_t.
 *
 * Roles. A rank that receives the tree message (the root from the start) is
 * a *sender*: it sends to its tree children, then corrections to its ring
 * neighbours (right = v+i, left = v-i, alternating R1 L1 R2 L2 ...). A rank
 * that only receives corrections never corrects and has no tree children to
 * serve (no forwarding); if its tree message arrives later while it is
 * still active, it becomes a sender after all.
 *
 * Correction modes.
 *  HEARD (checked: h = 1; failure-proof: h = f + 1): offsets 1..h on each
 *   side are sent unconditionally. After that a side stops as soon as h
 *   distinct ranks of that side have sent me a correction travelling
 *   towards me (a rank z at distance j that sent to me has sent to every
 *   rank between us before: sends go out in increasing offset), or once
 *   the two sides cover the ring. Before going past offset h the side
 *   waits for the ranks at offsets 1..h that are *expected* senders
 *   (neither they nor a tree ancestor is known dead): they will send to me
 *   in their unconditional prefix. on_failure re-evaluates the wait, so a
 *   wait never outlives the death that makes it pointless. Without
 *   failures every rank sends exactly min(2h, n-1) corrections (none at
 *   n = 2: see bc_covered).
 *  WINDOW (opportunistic, distance d = 2^f - 1): offsets 1..d - d/2 to the
 *   right and 1..d/2 to the left (f = 1: one copy, to the right), no
 *   waiting; offsets 2.. that a received correction already covers are
 *   skipped, and so are the root's tree children (bc__needless).
 *
 * Ending without the data. A rank without the data ends with
 * UCFT_ERR_PROC_FAILED when the root is known dead, or when more failures
 * are known than the mode tolerates at any time (HEARD: 2h, WINDOW: f) and
 * the known failures leave it without a guaranteed source (HEARD: fewer
 * than h dead ranks between it and the nearest expected sender on some
 * side; WINDOW: an expected sender within a window). Below the tolerance
 * it waits: the correction argument in docs/bcast.md shows the data
 * arrives. A rank whose tree ancestors are all alive waits for its tree
 * message (it comes). Nothing waits on a message of a dead rank.
 *
 * Tags: kind TREE from the parent, CORR_R (sent rightwards, the sender is
 * on my left) and CORR_L (sent leftwards, the sender is on my right). One
 * receive (any source, the three kinds) is kept posted while the rank is
 * active; into the output buffer until the data is there, into a scratch
 * copy after that. One send request, chained on completion. Nothing is
 * allocated without failures: the known-dead vranks are a coll_rankset_t
 * (rankset.h: 8 in place, more, e.g. a whole node, in an array grown when a
 * failure is learnt and freed by cleanup). Only when that
 * allocation fails does the rank forget (dead_overflow): it then expects
 * nothing of anybody, so it never waits on a dead sender, and ends with an
 * error unless the data reaches it.
 */
#include "bcast_corrected_impl.h"
#include "tree_binomial.h"
#include "tree_ft.h"
#include "tree_kary.h"
#include "tree_lame.h"

#include <string.h>

/* ---- tree ---------------------------------------------------------------- */

/* A given tree (coll_args_t.tree, UCFT_TREE_REPAIR=reroute|lookup: the
 * communicator's original binomial tree rerouted around its agreed-failed
 * members, in transport ranks) replaces the binomial arithmetic; the
 * correction ring stays the ring of virtual ranks. The checked correction
 * (HEARD) needs nothing of the tree but that the parent function is the
 * one every rank uses (docs/trees.md). Not the opportunistic one
 * (WINDOW): its window assumes the interleaved binomial tree over the
 * ring's own order, and on a rerouted tree a live rank can wait for ever
 * (tests/sim/test_repair.c). */
static int bc_given_parent(const bcast_corrected_t *s, int v)
{
    const coll_args_t *a = s->args;
    int p = coll_tree_parent_of(a->tree, coll_rank_of(a, v, a->root, s->n));
    return p < 0 ? -1 : coll_vrank_of(a, p, a->root, s->n);
}

int bc__parent(const bcast_corrected_t *s, int v)
{
    if (s->given_tree)
        return v <= 0 ? -1 : bc_given_parent(s, v);
    switch (s->cfg->tree) {
    case BC_TREE_KARY:
        return coll_kary_parent(v, s->cfg->k);
    case BC_TREE_LAME:
        return coll_lame_parent(v, s->cfg->k);
    default:
        return coll_binomial_parent(v);
    }
}

static int bc_child(const bcast_corrected_t *s, unsigned i)
{
    if (s->given_tree) {
        const coll_args_t *a = s->args;
        int c = coll_tree_kid(a->tree, s->tp->rank, (int)i);
        return c < 0 ? -1 : coll_vrank_of(a, c, a->root, s->n);
    }
    switch (s->cfg->tree) {
    case BC_TREE_KARY:
        return coll_kary_child(s->vrank, i, s->n, s->cfg->k);
    case BC_TREE_LAME:
        return coll_lame_child_m(s->vrank, s->lame_m, i, s->n, s->cfg->k);
    default:
        return coll_binomial_child(s->vrank, i, s->n);
    }
}

/* ---- knowledge of failures ---------------------------------------------- */

static int bc_is_dead(const bcast_corrected_t *s, int v)
{
    return coll_rankset_has(&s->dead, v);
}

/* v and all its tree ancestors are alive as far as I know: v gets the tree
 * message and becomes a sender, unless a death I learn of later intervenes.
 * With too many failures to remember, nothing is expected. */
static int bc_expected(const bcast_corrected_t *s, int v)
{
    if (s->dead.n == 0)
        return 1;
    if (s->dead_overflow)
        return 0;
    for (; v >= 0; v = bc__parent(s, v))
        if (bc_is_dead(s, v))
            return 0;
    return 1;
}

/* WINDOW: v needs no correction: a child of the root gets the data from
 * the tree unless the root died, and a dead root is not corrected (ranks
 * without the data then end with an error). The root has the data, but in
 * every BC_HOLD_EVERY-th instance it gets its left neighbour's copy all
 * the same: waiting for it (bc_copy_coming) is what keeps a root from
 * running ahead of its receivers without bound. HEARD sends to all: there
 * a copy also tells its receiver that the sender holds the data (the
 * receiver's stopping rule). */
int bc__needless(const bcast_corrected_t *s, int v)
{
    if (s->cfg->mode != BC_MODE_WINDOW)
        return 0;
    return v == 0 ? !bc_hold(s->args->seq) : bc__parent(s, v) == 0;
}

int bc__ring(const bcast_corrected_t *s, int side, int off)
{
    int64_t t =
        side == BC_R ? (int64_t)s->vrank + off : (int64_t)s->vrank - off;
    t %= s->n;
    return (int)(t < 0 ? t + s->n : t);
}

/* Known failures leave a source that surely delivers to me. */
static int bc_guaranteed(const bcast_corrected_t *s)
{
    if (s->dead_overflow)
        return 0;
    if (s->cfg->mode == BC_MODE_WINDOW) {
        /* An expected sender whose window holds me: on my left one that
         * sends rightwards that far, on my right one that sends leftwards
         * that far. */
        for (int side = 0; side < 2; side++)
            for (int j = 1; j <= s->w[side] && j < s->n; j++)
                if (bc_expected(s, bc__ring(s, side ^ 1, j)))
                    return 1;
        return 0;
    }
    /* HEARD: fewer than h known-dead ranks between me and the nearest
     * expected sender on some side (that sender stops only after h
     * distinct ranks between us have reached it, each of which covered
     * me unless it died). */
    for (int side = 0; side < 2; side++) {
        unsigned ndead = 0;
        for (int j = 1; j < s->n; j++) {
            int v = bc__ring(s, side, j);
            if (bc_expected(s, v))
                break;
            ndead += (unsigned)bc_is_dead(s, v);
        }
        if (ndead < s->h)
            return 1;
    }
    return 0;
}

/* ---- completion ---------------------------------------------------------- */

void bc__finish(bcast_corrected_t *s, ucft_status_t status, int in_cb)
{
    ucft_trace(s->tp->log, "bcast #%u: done (%s): data %d, sender %d, %u dead",
               (unsigned)s->args->seq, ucft_status_string(status), s->has_data,
               s->sender, (unsigned)s->dead.n);
    s->status = status;
    bc__recv_cancel(s);
    if (in_cb && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, status);
}

/* ---- correction schedule --------------------------------------------------
 */

enum { BC_SEND, BC_BLOCKED, BC_DONE };

/* The corrections sent so far cover the ring. Two ranks need none: the
 * only receiver is the root's child, and nobody is left whose copy could
 * differ from its own if the root dies. */
static int bc_covered(const bcast_corrected_t *s)
{
    return s->n <= 2 || (s->next[BC_R] - 1) + (s->next[BC_L] - 1) >= s->n - 1;
}

/* What side `side` does next; *off is the offset to send to. */
static int bc_side(bcast_corrected_t *s, int side, int *off)
{
    int h = s->h;

    if (s->side_done[side])
        return BC_DONE;
    if (s->cfg->mode == BC_MODE_WINDOW) {
        /* Offsets up to a heard sender are covered by it (never skip
         * offset 1: keeps the failure-free count exact). */
        if (s->next[side] > 1 && s->next[side] <= s->heard_max[side])
            s->next[side] = s->heard_max[side] + 1;
        while (s->next[side] <= s->w[side] && !bc_covered(s) &&
               bc__needless(s, bc__ring(s, side, s->next[side])))
            s->next[side]++;
        if (s->next[side] > s->w[side] || bc_covered(s))
            goto done;
        *off = s->next[side];
        return BC_SEND;
    }
    if (bc_covered(s))
        goto done;
    if (s->next[side] <= h) {
        *off = s->next[side];
        return BC_SEND;
    }
    if (s->heard[side] >= h)
        goto done;
    for (int j = 1; j <= h && j <= 64; j++)
        if (!(s->heard_bits[side] >> (j - 1) & 1) &&
            bc_expected(s, bc__ring(s, side, j)))
            return BC_BLOCKED;
    /* Skip ranks that sent to me: they have the data. */
    while (s->next[side] <= 64 &&
           (s->heard_bits[side] >> (s->next[side] - 1) & 1)) {
        s->next[side]++;
        if (bc_covered(s))
            goto done;
    }
    *off = s->next[side];
    return BC_SEND;
done:
    s->side_done[side] = 1;
    return BC_DONE;
}

/* Next message of a sender: tree children first, then corrections.
 * Returns BC_SEND (dst, kind filled), BC_BLOCKED or BC_DONE. */
static int bc_next(bcast_corrected_t *s, int *dst, unsigned *kind)
{
    int c = bc_child(s, s->nchild);
    if (c >= 0) {
        s->nchild++;
        *dst = c;
        *kind = BC_KIND_TREE;
        return BC_SEND;
    }
    int first = s->turn, blocked = 0;
    for (int i = 0; i < 2; i++) {
        int side = first ^ i, off;
        int r = bc_side(s, side, &off);
        if (r == BC_SEND) {
            s->next[side]++;
            s->turn = (uint8_t)(side ^ 1);
            *dst = bc__ring(s, side, off);
            *kind = side == BC_R ? BC_KIND_CORR_R : BC_KIND_CORR_L;
            return BC_SEND;
        }
        blocked |= r == BC_BLOCKED;
    }
    return blocked ? BC_BLOCKED : BC_DONE;
}

/* WINDOW, done sending: an exact receive still waits for the copy of a
 * neighbour that is expected to send it. The rank stays (its caller has
 * the data already) until the copy comes or the neighbour is known dead:
 * taken by the posted receive, a copy costs less than one cancelled here
 * and dropped late by the sweeper. */
static int bc_copy_coming(const bcast_corrected_t *s)
{
    return s->cfg->mode == BC_MODE_WINDOW &&
           (((s->xpending >> BC_X_LEFT & 1) &&
             bc_expected(s, bc__ring(s, BC_L, 1))) ||
            ((s->xpending >> BC_X_RIGHT & 1) &&
             bc_expected(s, bc__ring(s, BC_R, 1))));
}

/* Drives the rank as far as it can go now. Returns the status (INPROGRESS
 * while active); done_cb runs only when in_cb. */
ucft_status_t bc__step(bcast_corrected_t *s, int in_cb)
{
    const coll_args_t *a = s->args;

    if (s->status != UCFT_INPROGRESS || s->cleaned || s->in_step)
        return s->status;
    s->in_step = 1;
    if (s->mismatch) {
        bc__finish(s, UCFT_ERR_TRUNCATED, in_cb);
        goto out;
    }
    if (!s->has_data) {
        if (bc_is_dead(s, 0) ||
            (s->dead.n > s->tol && !bc_expected(s, s->vrank) &&
             !bc_guaranteed(s)))
            bc__finish(s, UCFT_ERR_PROC_FAILED, in_cb);
        goto out;
    }
    if (!s->sender) {
        /* Reached by a correction: done unless the tree message is still
         * to come. */
        if (!bc_expected(s, s->vrank))
            bc__finish(s, UCFT_OK, in_cb);
        goto out;
    }
    while (!s->send_pending) {
        int dst;
        unsigned kind;
        int r = bc_next(s, &dst, &kind);
        if (r == BC_BLOCKED) {
            ucft_trace(s->tp->log, "bcast #%u: waiting (sent R%d L%d)",
                       (unsigned)a->seq, s->next[BC_R] - 1, s->next[BC_L] - 1);
            break;
        }
        if (r == BC_DONE) {
            if (!bc_copy_coming(s))
                bc__finish(s, UCFT_OK, in_cb);
            break;
        }
        /* Lazy copies only while no failure is known: after one, a
         * receiver may stop before taking a copy (a farther rank covered
         * it), and a rendezvous copy left to the sweeper would hold this
         * rank's chain of sends (docs/bcast.md). */
        s->sreq.buffered = !s->lazy || s->dead.n > 0 || s->dead_overflow;
        int to = coll_rank_of(a, dst, a->root, s->n);
        ucft_status_t st = tp_send(s->tp, to, coll_tag(a, s->tp->rank, kind),
                                   s->buf, a->len, &s->sreq);
        ucft_trace(s->tp->log, "bcast #%u: kind %u to rank %d: %s",
                   (unsigned)a->seq, kind, to, ucft_status_string(st));
        if (st == UCFT_INPROGRESS)
            s->send_pending = 1;
        else if (st != UCFT_OK)
            ucft_debug(s->tp->log, "bcast: send to rank %d failed: %s", to,
                       ucft_status_string(st));
    }
out:
    s->in_step = 0;
    return s->status;
}

/* ---- callbacks ------------------------------------------------------------
 */

static void bc_send_cb(tp_req_t *req)
{
    bcast_corrected_t *s = req->arg;

    s->send_pending = 0;
    bc__step(s, 1);
}

/* ---- ops ------------------------------------------------------------------
 */

static ucft_status_t bc_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf, const bc_cfg_t *cfg)
{
    bcast_corrected_t *s = state;
    int f = args->f > 0 ? args->f : 1;

    if (args->root < 0 || args->root >= tp->size || f > BC_MAX_F)
        return UCFT_ERR_INVALID_PARAM;
    /* A given tree must span this transport's ranks from the root. */
    if (cfg->takes_tree && args->tree != NULL &&
        (args->tree->n != tp->size || args->tree->root != args->root))
        return UCFT_ERR_INVALID_PARAM;
    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->cfg = cfg;
    s->given_tree = cfg->takes_tree && args->tree != NULL;
    s->buf = buf;
    s->n = tp->size;
    s->vrank = coll_vrank_of(args, tp->rank, args->root, tp->size);
    s->lame_m =
        cfg->tree == BC_TREE_LAME ? coll_lame_block(s->vrank, cfg->k) : 0;
    s->next[BC_R] = s->next[BC_L] = 1;
    if (cfg->mode == BC_MODE_WINDOW) {
        unsigned d = (1u << f) - 1;
        s->w[BC_R] = (uint8_t)(d - d / 2);
        s->w[BC_L] = (uint8_t)(d / 2);
        s->tol = (uint8_t)f;
    } else {
        /* Checked: h = 1 tolerates 2 failures at any time (2h); for
         * f >= 3, h = ceil(f / 2), so that 2h >= f (docs/bcast.md: a
         * rank that knows of more than 2h failures may give up). */
        s->h = (uint8_t)(cfg->h_is_f1 ? f + 1 : (f <= 2 ? 1 : (f + 1) / 2));
        s->w[BC_R] = s->w[BC_L] = s->h; /* the unconditional prefix */
        s->tol = (uint8_t)(2 * s->h);
    }
    s->status = UCFT_INPROGRESS;
    s->sreq.cb = bc_send_cb;
    s->sreq.arg = s;
    /* Corrections may go unreceived (transport T7): buffered (set per send
     * in bc__step), unless the payload is large enough for rendezvous
     * copies that a rank holding the data takes into an empty buffer
     * (bcast_corrected_recv.c). Not below 4 ranks: there a rank may finish
     * before its neighbours' corrections arrive (bc_covered), and each
     * would wait to be swept. */
    s->lazy = args->rndv_min > 0 && args->len >= args->rndv_min && s->n >= 4;
    return UCFT_OK;
}

static ucft_status_t bc_start(void *state)
{
    bcast_corrected_t *s = state;

    s->started = 1;
    ucft_trace(s->tp->log, "bcast #%u: start, root %d, %u failure(s) known",
               (unsigned)s->args->seq, s->args->root, (unsigned)s->dead.n);
    if (s->vrank == 0) {
        s->has_data = s->sender = 1;
        /* HEARD: the root hears only to count corrections, so it posts its
         * receives once it turns out to need them (not at all when it
         * finishes at once, e.g. n = 2; what it did not receive is dropped
         * late). WINDOW: it posts first, and its left neighbour's copy
         * holds it back (bc__needless). */
        if (s->cfg->mode == BC_MODE_HEARD) {
            if (bc__step(s, 0) != UCFT_INPROGRESS || s->n == 1)
                return s->status;
            bc__ready(s);
        }
    }
    if (s->n > 1) {
        ucft_status_t st = bc__recv_start(s);
        if (st != UCFT_OK) {
            bc__recv_cancel(s);
            s->status = st;
            return st;
        }
    }
    ucft_status_t st = bc__step(s, 0);
    if (st == UCFT_INPROGRESS && s->vrank == 0)
        bc__ready(s);
    return st;
}

static ucft_status_t bc_test(const void *state)
{
    return ((const bcast_corrected_t *)state)->status;
}

static void bc_cleanup(void *state)
{
    bcast_corrected_t *s = state;

    s->cleaned = 1;
    bc__recv_cancel(s);
    coll_rankset_free(&s->dead);
}

static void bc_on_failure(void *state, int rank)
{
    bcast_corrected_t *s = state;
    if (s->cleaned ||
        !bc_note_dead(s->tp, s->args, s->n, rank, &s->dead, &s->dead_overflow))
        return;
    if (!s->started || s->status != UCFT_INPROGRESS)
        return;
    ucft_status_t st = bc__recv_any(s);
    if (st != UCFT_OK) {
        bc__finish(s, st, 1);
        return;
    }
    bc__step(s, 1);
}

static int bc_idle(const void *state)
{
    const bcast_corrected_t *s = state;
    return bc__recv_idle(s) && !s->send_pending;
}

/* ---- registered variants --------------------------------------------------
 */

/* tt: 1 when the variant runs on a given (rerouted) tree, coll_op.h. */
#define BC_VARIANT(name, alg_name, doc_line, tt, ...)                          \
    static const bc_cfg_t bc_cfg_##name = {.takes_tree = tt, __VA_ARGS__};     \
    static ucft_status_t bc_init_##name(void *state, tp_t *tp,                 \
                                        const coll_args_t *args, void *buf)    \
    {                                                                          \
        return bc_init(state, tp, args, buf, &bc_cfg_##name);                  \
    }                                                                          \
    const coll_op_ops_t coll_bcast_##name##_ops = {                            \
        .op = "bcast",                                                         \
        .alg = alg_name,                                                       \
        .doc = doc_line,                                                       \
        .state_size = sizeof(bcast_corrected_t),                               \
        .buf_mult = 2,                                                         \
        .init = bc_init_##name,                                                \
        .start = bc_start,                                                     \
        .test = bc_test,                                                       \
        .cleanup = bc_cleanup,                                                 \
        .on_failure = bc_on_failure,                                           \
        .idle = bc_idle,                                                       \
        .takes_tree = tt,                                                      \
    }

BC_VARIANT(corrected, "corrected",
           "interleaved binomial tree + checked correction (h = 1; "
           "ceil(f/2) from f = 3)",
           1, .tree = BC_TREE_BINOMIAL, .mode = BC_MODE_HEARD);
BC_VARIANT(corrected_opportunistic, "corrected-opportunistic",
           "interleaved binomial tree + opportunistic correction, "
           "distance 2^f-1 (f = 1: one copy, to the right)",
           0, .tree = BC_TREE_BINOMIAL, .mode = BC_MODE_WINDOW);
BC_VARIANT(corrected_failproof, "corrected-failproof",
           "interleaved binomial tree + correction until f+1 ranks heard "
           "per side",
           1, .tree = BC_TREE_BINOMIAL, .mode = BC_MODE_HEARD, .h_is_f1 = 1);
BC_VARIANT(corrected_kary, "corrected-kary",
           "interleaved 4-ary tree + checked correction", 0,
           .tree = BC_TREE_KARY, .k = 4, .mode = BC_MODE_HEARD);
BC_VARIANT(corrected_lame, "corrected-lame",
           "interleaved Lame tree of order 2 + checked correction", 0,
           .tree = BC_TREE_LAME, .k = 2, .mode = BC_MODE_HEARD);
