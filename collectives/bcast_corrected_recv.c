/*
 * Receives of the corrected broadcast (bcast_corrected.c has the protocol).
 *
 * Two ways to receive:
 *  exact  (h = 1: checked correction, or opportunistic with f = 1)
 *         Without known failures a rank hears only from its tree parent and
 *         its ring neighbours at offset 1: a sender goes past offset h only
 *         once it knows of a failure (heard-h waits for the expected
 *         senders at 1..h; a window of 1 never goes past 1). So the rank
 *         posts up to three one-shot receives with full tags (BC_X_*:
 *         opportunistic with f = 1 corrects only rightwards, and never the
 *         root's children, bc__needless). Their
 *         matching costs the transport a hash lookup, where a receive from
 *         any source is compared with every unexpected message: a
 *         broadcast root runs ahead of its receivers, whose queues then
 *         hold the messages of hundreds of later instances, and a masked
 *         receive scanned them all at every post (its cost grew with the
 *         backlog, and the backlog with its cost).
 *  any    One receive from any source (kinds 16..19), kept posted: from the
 *         start when h > 1, and from the first failure the rank learns of
 *         when h = 1 (a correction from farther away is possible from
 *         then on; one sent before the news sits in the unexpected queue
 *         until then). Into the output buffer until the data is there,
 *         into the scratch half (buf_mult = 2) afterwards.
 * Exact receives go to the output buffer unless the data is already there:
 * every message of an instance carries the same payload (the root's), so
 * a second copy landing on the first leaves it unchanged.
 *
 * Lazy copies (s->lazy: a payload of at least args->rndv_min bytes). The
 * copies are rendezvous sends: the payload moves only when a receive
 * takes it. A rank that holds the data receives further copies into an
 * empty buffer; the truncated receive still tells who sent what (tag)
 * and completes the sender, without moving the payload. Receives posted
 * before the data arrived ask for all of it; when it arrives they are
 * cancelled and reposted empty. So without failures a rank takes the
 * payload once, and a correction costs its handshake, not a copy.
 */
#include "bcast_corrected_impl.h"

static unsigned char *bc_dst(const bcast_corrected_t *s)
{
    if (s->has_data && s->buf != NULL)
        return s->buf + s->args->len; /* scratch: only the tag matters now */
    return s->buf;
}

/* Bytes a receive posted now asks for: none once the data is here and
 * copies are lazy. */
static size_t bc_rlen(const bcast_corrected_t *s)
{
    return s->has_data && s->lazy ? 0 : s->args->len;
}

/* A receive that completed with a message (bc_take decides what it is
 * worth), not cancelled or failed. */
static int bc_took(const tp_req_t *req)
{
    return req->status == UCFT_OK || req->status == UCFT_ERR_TRUNCATED;
}

/* The data just arrived: the receives still posted for a whole copy are
 * cancelled, to be reposted empty by their callbacks. */
static void bc_shrink(bcast_corrected_t *s)
{
    if (!s->lazy)
        return;
    for (int i = 0; i < BC_NX; i++)
        if (s->xpending >> i & 1) {
            s->xshrink |= (uint8_t)(1u << i);
            tp_cancel(s->tp, &s->xreq[i]);
        }
    if (s->recv_pending) {
        s->rshrink = 1;
        tp_cancel(s->tp, &s->rreq);
    }
}

/* A message arrived (tree or correction) from virtual rank src. */
static void bc_on_msg(bcast_corrected_t *s, const tp_req_t *req, unsigned kind,
                      int src)
{
    ucft_trace(s->tp->log, "bcast #%u: kind %u from rank %u",
               (unsigned)s->args->seq, kind, (unsigned)ucft_tag_src(req->tag));
    if (!s->has_data) {
        s->has_data = 1;
        bc_shrink(s);
        bc__ready(s);
    }
    if (kind == BC_KIND_TREE) {
        s->sender = 1;
        return;
    }
    /* CORR_R comes from my left, CORR_L from my right. */
    int side = kind == BC_KIND_CORR_R ? BC_L : BC_R;
    int dist = side == BC_R ? (src - s->vrank + s->n) % s->n
                            : (s->vrank - src + s->n) % s->n;
    if (dist <= 0)
        return;
    if (dist <= 64) {
        if (s->heard_bits[side] >> (dist - 1) & 1)
            return;
        s->heard_bits[side] |= (uint64_t)1 << (dist - 1);
    }
    if (s->heard[side] < UINT16_MAX)
        s->heard[side]++;
    if (dist > s->heard_max[side])
        s->heard_max[side] = dist;
}

/* A completed receive (bc_took). Returns 1 when it counted as a message;
 * 0 when it did not: a malformed message (another kind, a sender that is
 * no rank: dropped, the caller receives again), or a payload of another
 * size than this rank's while it has no data, which means the ranks
 * called the broadcast with different sizes: s->mismatch, the rank's part
 * ends with UCFT_ERR_TRUNCATED (bc__step). Once the data is here only the
 * tag matters: a copy taken into an empty or scratch buffer counts. */
static int bc_take(bcast_corrected_t *s, const tp_req_t *req)
{
    unsigned kind = ucft_tag_coll_kind(req->tag);
    if (kind != BC_KIND_TREE && kind != BC_KIND_CORR_R &&
        kind != BC_KIND_CORR_L) {
        coll_log_bad(s->tp, s->args, req,
                     "not a message of this broadcast: dropped");
        return 0;
    }
    int src = coll_src_vrank(s->tp, s->args, req, s->args->root, s->n);
    if (src < 0)
        return 0;
    if (!s->has_data &&
        (req->status != UCFT_OK || req->length != s->args->len)) {
        coll_log_mismatch(s->tp, s->args, req);
        s->mismatch = 1;
        return 0;
    }
    bc_on_msg(s, req, kind, src);
    return 1;
}

/* ---- from any source ----------------------------------------------------- */

/* Keeps the receive from any source posted, handling the ones that complete
 * at once. Returns UCFT_OK or the error that ends the rank. */
static ucft_status_t bc_any_loop(bcast_corrected_t *s)
{
    const coll_args_t *a = s->args;

    while (!s->recv_pending && !s->mismatch) {
        ucft_status_t st =
            tp_recv(s->tp, coll_tag(a, 0, BC_KIND_TREE), BC_RECV_MASK,
                    bc_dst(s), bc_rlen(s), &s->rreq);
        if (st == UCFT_INPROGRESS) {
            s->recv_pending = 1;
            break;
        }
        if (st != UCFT_OK)
            return st;
        if (bc_took(&s->rreq))
            bc_take(s, &s->rreq);
    }
    return UCFT_OK;
}

static void bc_any_cb(tp_req_t *req)
{
    bcast_corrected_t *s = req->arg;

    int shrunk = s->rshrink;
    s->recv_pending = 0;
    s->rshrink = 0;
    if (s->cleaned || s->status != UCFT_INPROGRESS)
        return;
    /* Cancelled to be reposted empty: the loop below does that. */
    if (!(shrunk && req->status == UCFT_ERR_CANCELED) && bc_took(req))
        bc_take(s, req);
    ucft_status_t st = bc_any_loop(s);
    if (st != UCFT_OK) {
        bc__finish(s, st, 1);
        return;
    }
    bc__step(s, 1);
}

ucft_status_t bc__recv_any(bcast_corrected_t *s)
{
    if (s->wild)
        return UCFT_OK;
    ucft_trace(s->tp->log, "bcast #%u: receiving from any source",
               (unsigned)s->args->seq);
    s->wild = 1;
    s->rreq.cb = bc_any_cb;
    s->rreq.arg = s;
    return bc_any_loop(s);
}

/* ---- exact --------------------------------------------------------------- */

static ucft_status_t bc_exact_post(bcast_corrected_t *s, int i);

static void bc_exact_cb(tp_req_t *req)
{
    bcast_corrected_t *s = req->arg;
    int i = (int)(req - s->xreq);
    int shrunk = s->xshrink >> i & 1;

    s->xpending &= (uint8_t) ~(1u << i);
    s->xshrink &= (uint8_t) ~(1u << i);
    if (s->cleaned || s->status != UCFT_INPROGRESS)
        return;
    /* Cancelled to be reposted empty, or a malformed message dropped:
     * receive again. */
    if ((shrunk && req->status == UCFT_ERR_CANCELED) ||
        (bc_took(req) && !bc_take(s, req) && !s->mismatch)) {
        ucft_status_t st = bc_exact_post(s, i);
        if (st != UCFT_OK) {
            bc__finish(s, st, 1);
            return;
        }
    }
    bc__step(s, 1);
}

/* Exact receive i: the tree message from the parent, or the correction of
 * a ring neighbour at offset 1 (the left one sends rightwards, the right
 * one leftwards). */
static ucft_status_t bc_exact_post(bcast_corrected_t *s, int i)
{
    const coll_args_t *a = s->args;
    tp_req_t *r = &s->xreq[i];
    int v = i == BC_X_TREE   ? bc__parent(s, s->vrank)
            : i == BC_X_LEFT ? bc__ring(s, BC_L, 1)
                             : bc__ring(s, BC_R, 1);
    unsigned kind = i == BC_X_TREE   ? BC_KIND_TREE
                    : i == BC_X_LEFT ? BC_KIND_CORR_R
                                     : BC_KIND_CORR_L;
    int src = coll_rank_of(a, v, a->root, s->n);

    for (;;) {
        r->cb = bc_exact_cb;
        r->arg = s;
        ucft_status_t st =
            tp_recv(s->tp, coll_tag(a, src, kind), UCFT_TAG_FULL_MASK,
                    bc_dst(s), bc_rlen(s), r);
        if (st == UCFT_INPROGRESS) {
            s->xpending |= (uint8_t)(1u << i);
            return UCFT_OK;
        }
        if (st != UCFT_OK || !bc_took(r) || bc_take(s, r) || s->mismatch)
            return st;
        /* A malformed message, dropped: receive again. */
    }
}

ucft_status_t bc__recv_start(bcast_corrected_t *s)
{
    if (s->w[BC_R] > 1 || s->w[BC_L] > 1 || s->dead.n > 0 || s->dead_overflow)
        return bc__recv_any(s);
    ucft_status_t st = UCFT_OK;
    int needless = bc__needless(s, s->vrank);
    if (s->vrank != 0)
        st = bc_exact_post(s, BC_X_TREE);
    /* The left neighbour sends rightwards (w[BC_R]), the right one
     * leftwards; with n = 2 nobody corrects (bc_covered). */
    if (st == UCFT_OK && s->w[BC_R] == 1 && !needless && s->n > 2)
        st = bc_exact_post(s, BC_X_LEFT);
    if (st == UCFT_OK && s->w[BC_L] == 1 && !needless && s->n > 2)
        st = bc_exact_post(s, BC_X_RIGHT);
    return st;
}

void bc__recv_cancel(bcast_corrected_t *s)
{
    if (s->recv_pending)
        tp_cancel(s->tp, &s->rreq);
    for (int i = 0; i < BC_NX; i++)
        if (s->xpending >> i & 1)
            tp_cancel(s->tp, &s->xreq[i]);
}

int bc__recv_idle(const bcast_corrected_t *s)
{
    return !s->recv_pending && !s->xpending;
}
