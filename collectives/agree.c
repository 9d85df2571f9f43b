/*
 * Agreement (agree.h): a fast path that costs a recursive-doubling
 * allreduce, and a coordinator protocol on a tree that takes over when a
 * failure gets in its way. The proof is in docs/comms.md; the rules it
 * rests on:
 *
 *  Fast path. Every rank runs recursive doubling (extra ranks fold into a
 *  partner) on the AND of the value words. A rank that receives a message
 *  in every stage holds the AND of every rank's contribution: it decides
 *  (value, F = {}, err = 0) and returns. Two fast deciders hold the same
 *  value.
 *
 *  Slow path. The coordinator of a rank is the lowest rank it does not
 *  know to have failed. A rank goes slow when it learns of any failure
 *  before it has decided (or a send fails). A coordinator runs one round
 *  when it is slow and undecided, or was asked for help. The round runs
 *  on a binomial tree over the ranks from the coordinator c up (below:
 *  "the round's tree"), each rank skipping the ranks it knows failed
 *  (their children are its own):
 *   - QUERY(c) goes down. A rank takes it only while c is its own
 *     coordinator; it then gives the fast path up for good, queries its
 *     children and, once each child reported or failed (a failed child's
 *     children are queried instead), sends its parent one merged REPORT:
 *     the decision if any rank of its subtree holds one, else the AND of
 *     their contributions and of their acknowledged sets; with G, the
 *     ranks whose reports it carries. Asked again (its parent failed), it
 *     answers the new asker with the same REPORT.
 *   - c decides when its children reported and G holds every rank it does
 *     not know failed (a subtree leaves out the ranks its root knew
 *     failed; c learns of them too): the first decision reported, if any,
 *     else value = AND, F = the ranks outside G, err = some rank of F was
 *     not acknowledged by every reporter.
 *   - DECIDE(c) goes down the same way. A rank takes a DECIDE only when c
 *     is its current coordinator; messages from a rank it knows failed are
 *     ignored (the transport drops them too, T5), so a rank that reported
 *     in c's round never decides by an earlier coordinator.
 *   - HELP goes up: a slow undecided rank, or one that owes a decision to
 *     a rank that asked it for help and does not hold the coordinator's,
 *     asks its nearest live ancestor in the coordinator's tree, once per
 *     ancestor (again when that one fails or the coordinator changes). A
 *     rank that holds the current coordinator's decision answers HELP with
 *     it; the coordinator answers, or runs its round. A collecting rank
 *     queries a helper its subtree does not cover (views that differ).
 *  No rank exchanges more than a few messages per tree level: log2 n
 *  steps where a star round took 3 (n - 1) messages at the coordinator.
 *
 * The state keeps running after it decided (keep_after_done): a later
 * coordinator may query it. Its receive for HELP and QUERY is posted only
 * once it knows of a failure (or goes slow): no round runs without one,
 * every live rank learns of every failure, and a kept instance is retired
 * only after every live rank finished it (except when this rank frees the
 * communicator first: docs/comms.md, Limits), so a query waits in the
 * queue at most until the news arrives; a failure-free agreement then costs the
 * recursive-doubling exchange alone (no receive posted and cancelled).
 * Slow-path storage is allocated only when a rank goes slow, so a failure-free
 * run needs nothing beyond the state and three copies of the value (the value,
 * a receive slot, the contribution).
 */
#include "agree_impl.h"

#include <stdlib.h>
#include <string.h>

/* A REPORT or DECIDE message: this header (with the round's
 * coordinator), the value words, bitmap A (undecided report: the AND of
 * its reporters' acknowledged failures; decision: F), bitmap G (a report:
 * its reporters); checked by coll_wire_agree_check. */
typedef coll_wire_agree_hdr_t ag_msg_t;

enum { AG_POST_NONE, AG_POST_COMBINE, AG_POST_COPY };

typedef struct ag_stage {
    int peer;
    uint8_t send, recv, post;
} ag_stage_t;

static int bm_get(const uint8_t *b, int r)
{
    return (b[r >> 3] >> (r & 7)) & 1;
}

static void bm_set(uint8_t *b, int r)
{
    b[r >> 3] |= (uint8_t)(1u << (r & 7));
}

static void bm_clear(uint8_t *b, int r)
{
    b[r >> 3] &= (uint8_t) ~(1u << (r & 7));
}

static int is_failed(const agree_t *s, int r)
{
    return s->lfail != NULL && bm_get(s->lfail, r);
}

static uint32_t *msg_val(unsigned char *m)
{
    return (uint32_t *)(m + sizeof(ag_msg_t));
}

static uint8_t *msg_bm(const agree_t *s, unsigned char *m)
{
    return m + sizeof(ag_msg_t) + s->words * sizeof(uint32_t);
}

/* A message's G bitmap (the reporters), after A. */
static uint8_t *msg_g(const agree_t *s, unsigned char *m)
{
    return msg_bm(s, m) + coll_agree_bm_bytes(s->n);
}

static uint64_t tag_of(const agree_t *s, int src, unsigned kind)
{
    return coll_tag(s->args, src, kind + s->kb);
}

/* A received message's kind, as AG_KIND_*. */
static unsigned kind_of(const agree_t *s, const tp_req_t *req)
{
    return ucft_tag_coll_kind(req->tag) - s->kb;
}

/* Receives of a kind pair (kind, kind | 1) from any source. */
static uint64_t pair_mask(void)
{
    return UCFT_TAG_FULL_MASK & ~UCFT_TAG_SRC_MASK & ~(uint64_t)1;
}

void ag_finish(agree_t *s, ucft_status_t st)
{
    if (s->done)
        return;
    s->done = 1;
    s->status = st;
    if (!s->in_start && s->args->done_cb != NULL)
        s->args->done_cb(s->args->done_arg, s->tp->rank, st);
}

static void pump(agree_t *s);
static void post_big(agree_t *s);
static void post_ctrl(agree_t *s);

/* Slow-path storage; 0 when there is no memory (the rank then ends with
 * UCFT_ERR_NO_MEMORY). */
static int ensure_slab(agree_t *s)
{
    if (s->slab != NULL)
        return 1;
    size_t bm = coll_agree_bm_bytes(s->n);
    size_t ml = (s->msg_len + 7) & ~(size_t)7; /* messages 8-aligned */
    size_t wl = s->words * sizeof(uint32_t);
    s->slab = calloc(1, 4 * ml + 8 * bm + wl + 8);
    if (s->slab == NULL) {
        ag_finish(s, UCFT_ERR_NO_MEMORY);
        return 0;
    }
    unsigned char *p = s->slab;
    s->acc = (uint32_t *)p; /* first: aligned */
    p += (wl + 7) & ~(size_t)7;
    s->rbig = p, p += ml;
    s->obuf = p, p += ml;
    s->dmsg = p, p += ml;
    s->abuf = p, p += ml;
    s->got = p, p += bm;
    s->ackand = p, p += bm;
    s->pend = p, p += bm;
    s->qowe = p, p += bm;
    s->askers = p, p += bm;
    s->rowe = p, p += bm;
    s->asked = p, p += bm;
    s->owe = p;
    ag_msg_t *o = (ag_msg_t *)s->obuf;
    o->n = (uint32_t)s->n;
    memcpy(msg_val(s->obuf), s->orig, wl);
    if (s->acked != NULL)
        memcpy(msg_bm(s, s->obuf), s->acked, bm);
    ag_msg_t *d = (ag_msg_t *)s->dmsg;
    d->n = (uint32_t)s->n;
    d->coord = (uint32_t)s->n;
    if (s->decided) { /* decided fast: value, F = {}, err 0 */
        d->decided = 1;
        memcpy(msg_val(s->dmsg), s->val, wl);
    }
    return 1;
}

/* The output: the decision in dmsg (slow) or the fast value in val. */
static void output(agree_t *s)
{
    if (s->fs_busy) { /* a fast send still reads val */
        s->out_pending = 1;
        return;
    }
    s->out_pending = 0;
    if (s->slab != NULL) {
        const ag_msg_t *d = (const ag_msg_t *)s->dmsg;
        memcpy(s->val, msg_val(s->dmsg), s->words * sizeof(uint32_t));
        const uint8_t *f = msg_bm(s, s->dmsg);
        uint32_t nf = 0;
        for (int r = 0; r < s->n; r++)
            nf += (uint32_t)bm_get(f, r);
        s->hdr->err = d->err;
        s->hdr->nfailed = nf;
    } else {
        s->hdr->err = 0;
        s->hdr->nfailed = 0;
    }
    if (s->args->gate != NULL && s->kb == 0)
        ag_confirm_start(s); /* UCFT_QUORUM: delivered once confirmed */
    else
        ag_finish(s, UCFT_OK);
}

static void decide(agree_t *s)
{
    if (s->decided)
        return;
    s->decided = 1;
    if (s->slab != NULL) { /* the fast decision as a message */
        ag_msg_t *d = (ag_msg_t *)s->dmsg;
        d->decided = 1;
        d->err = 0;
        memcpy(msg_val(s->dmsg), s->val, s->words * sizeof(uint32_t));
        memset(msg_bm(s, s->dmsg), 0, coll_agree_bm_bytes(s->n));
    }
    if (s->fr_busy)
        tp_cancel(s->tp, &s->fr);
    output(s);
}

/* ---- the round's tree ------------------------------------------------------
 *
 * Coordinator c's round runs on a binomial tree over ranks c..n-1 (every
 * lower rank is known failed wherever c is the coordinator): rank c + v's
 * parent is c + v without its highest bit, its children are c + v + 2^j
 * for 2^j > v. Each rank skips the ranks it knows failed: their children
 * are its own (recursively), and when a child fails while this rank
 * waits for it, its children are queried instead. QUERYs go down, the
 * reports come up merged (a decision if any rank of the subtree holds one,
 * else the AND of the values and of the acknowledged sets; G: whose
 * reports), the decision goes down again; HELP goes up, one per rank and
 * parent. So no rank talks to more than its tree neighbours: log2 n
 * messages of each kind where the coordinator used to exchange 3 (n - 1).
 */

/* The first rank from `from` on whose bit is set in b (n bits), or n. */
static int next_set(const uint8_t *b, int from, int n)
{
    while (from < n) {
        if ((from & 63) == 0 && from + 64 <= n) {
            uint64_t w;
            memcpy(&w, b + (from >> 3), sizeof(w));
            if (w == 0) {
                from += 64;
                continue;
            }
        }
        if (bm_get(b, from))
            return from;
        from++;
    }
    return n;
}

static int high_bit(int v)
{
    int b = 1;
    while (b <= v / 2)
        b <<= 1;
    return b;
}

/* r's nearest ancestor in c's tree that this rank does not know failed. */
static int tree_parent(const agree_t *s, int c, int r)
{
    do
        r = r == c ? c : c + (r - c - high_bit(r - c));
    while (r != c && is_failed(s, r));
    return r;
}

/* Marks r's children in c's tree (a failed child: its children) that are
 * not in `skip` (NULL: none) in `mark`, and those newly marked in `also`
 * too (NULL: none); returns how many were newly marked. */
static int tree_children(const agree_t *s, int c, int r, uint8_t *mark,
                         const uint8_t *skip, uint8_t *also)
{
    int v = r - c, added = 0;
    for (long b = v == 0 ? 1 : 2L * high_bit(v); (long)c + v + b < s->n;
         b <<= 1) {
        int u = c + v + (int)b;
        if (is_failed(s, u))
            added += tree_children(s, c, u, mark, skip, also);
        else if ((skip == NULL || !bm_get(skip, u)) && !bm_get(mark, u)) {
            bm_set(mark, u);
            if (also != NULL)
                bm_set(also, u);
            added++;
        }
    }
    return added;
}

/* ---- collecting the reports of a subtree -------------------------------- */

static void give_up_fast(agree_t *s)
{
    if (!s->decided && !s->slow) { /* for good */
        s->slow = 1;
        if (s->fr_busy)
            tp_cancel(s->tp, &s->fr);
    }
}

/* A report (this rank's own: G = {me}) enters the collection. */
static void merge(agree_t *s, unsigned char *m, int own)
{
    const ag_msg_t *h = (const ag_msg_t *)m;
    size_t bl = coll_agree_bm_bytes(s->n);
    if (own) {
        bm_set(s->got, s->me);
    } else {
        const uint8_t *g = msg_g(s, m);
        for (size_t i = 0; i < bl; i++)
            s->got[i] |= g[i];
    }
    if (h->decided) {
        if (!s->have_dec) { /* the first decision: every other is equal */
            ag_msg_t *a = (ag_msg_t *)s->abuf;
            a->decided = 1;
            a->err = h->err;
            memcpy(msg_val(s->abuf), msg_val(m), s->words * sizeof(uint32_t));
            memcpy(msg_bm(s, s->abuf), msg_bm(s, m), bl);
            s->have_dec = 1;
        }
        return;
    }
    const uint32_t *v = msg_val(m);
    for (size_t i = 0; i < s->words; i++)
        s->acc[i] &= v[i];
    const uint8_t *a = msg_bm(s, m);
    for (size_t i = 0; i < bl; i++)
        s->ackand[i] &= a[i];
}

static void round_decide(agree_t *s)
{
    ag_msg_t *d = (ag_msg_t *)s->dmsg;
    uint8_t *f = msg_bm(s, s->dmsg);
    size_t bl = coll_agree_bm_bytes(s->n);
    d->decided = 1;
    d->n = (uint32_t)s->n;
    d->coord = (uint32_t)s->me;
    if (s->have_dec) {
        d->err = ((ag_msg_t *)s->abuf)->err;
        memcpy(msg_val(s->dmsg), msg_val(s->abuf), s->words * sizeof(uint32_t));
        memcpy(f, msg_bm(s, s->abuf), bl);
    } else {
        d->err = 0;
        memcpy(msg_val(s->dmsg), s->acc, s->words * sizeof(uint32_t));
        memset(f, 0, bl);
        for (int r = 0; r < s->n; r++) {
            if (bm_get(s->got, r))
                continue;
            bm_set(f, r);
            if (!bm_get(s->ackand, r))
                d->err = 1;
        }
    }
    memset(msg_g(s, s->dmsg), 0, bl);
    s->dcoord = s->me;
    ucft_debug(s->tp->log, "agree %u: coordinator %d decided (%s)",
               (unsigned)s->args->seq, s->me, d->err ? "err" : "ok");
    if (!s->decided) {
        s->decided = 1;
        output(s);
    }
}

/* The decision of the current coordinator's round is here: down the tree
 * (once per round) and to every rank that asked for help. */
static void forward_decision(agree_t *s)
{
    if (s->dcoord != s->coord || s->fwd == s->coord)
        return;
    s->fwd = s->coord;
    tree_children(s, s->coord, s->me, s->owe, NULL, NULL);
    s->dnext = 0;
}

/* The collection is complete when no child is awaited; the coordinator's
 * also needs a report of every rank it does not know failed (a subtree
 * leaves out the ranks its root knew failed, which the coordinator will
 * learn of too). */
static void collect_check(agree_t *s)
{
    if (s->acoord < 0 || s->asent || s->npend > 0 || s->cleaned)
        return;
    if (s->aparent < 0) {
        for (int r = 0; r < s->n; r++)
            if (!bm_get(s->got, r) && !is_failed(s, r))
                return;
        s->asent = 1;
        round_decide(s);
        forward_decision(s);
        return;
    }
    ag_msg_t *a = (ag_msg_t *)s->abuf;
    size_t bl = coll_agree_bm_bytes(s->n);
    a->n = (uint32_t)s->n;
    a->coord = (uint32_t)s->acoord;
    if (!s->have_dec) {
        a->decided = 0;
        a->err = 0;
        memcpy(msg_val(s->abuf), s->acc, s->words * sizeof(uint32_t));
        memcpy(msg_bm(s, s->abuf), s->ackand, bl);
    }
    memcpy(msg_g(s, s->abuf), s->got, bl);
    s->asent = 1;
    for (size_t i = 0; i < bl; i++) /* every rank that asked for it */
        s->rowe[i] |= s->askers[i];
    s->rnext = 0;
    ucft_debug(s->tp->log, "agree %u: rank %d reports to %d for round %d (%s)",
               (unsigned)s->args->seq, s->me, s->aparent, s->acoord,
               s->have_dec ? "decided" : "undecided");
}

/* This rank's part in coordinator c's round: its own report, then QUERYs
 * to its children; `parent` gets the merged report (-1: this rank is c). */
static void collect_start(agree_t *s, int c, int parent)
{
    if (!ensure_slab(s))
        return;
    give_up_fast(s);
    post_big(s);
    size_t bl = coll_agree_bm_bytes(s->n);
    s->acoord = c;
    s->aparent = parent;
    s->asent = 0;
    s->have_dec = 0;
    memset(s->got, 0, bl);
    memset(s->ackand, 0xff, bl);
    memset(s->pend, 0, bl);
    memset(s->qowe, 0, bl);
    memset(s->askers, 0, bl);
    memset(s->rowe, 0, bl);
    if (parent >= 0)
        bm_set(s->askers, parent);
    for (size_t i = 0; i < s->words; i++)
        s->acc[i] = UINT32_MAX;
    merge(s, s->decided ? s->dmsg : s->obuf, 1);
    s->npend = tree_children(s, c, s->me, s->pend, NULL, s->qowe);
    s->qnext = 0;
    collect_check(s);
}

static void start_round(agree_t *s)
{
    s->round = 1;
    ucft_debug(s->tp->log, "agree %u: rank %d runs a round",
               (unsigned)s->args->seq, s->me);
    collect_start(s, s->me, -1);
    pump(s);
}

static void maybe_round(agree_t *s)
{
    if (s->coord == s->me && !s->round && !s->cleaned &&
        (s->helped || (s->slow && !s->decided)))
        start_round(s);
}

/* ---- the slow path --------------------------------------------------------
 */

/* Takes the QUERY received last once its round is the current
 * coordinator's. */
static void try_answer(agree_t *s)
{
    if (s->qcoord < 0 || s->qcoord != s->coord || s->coord == s->me)
        return;
    int from = s->qfrom;
    s->qcoord = -1;
    if (s->acoord == s->coord) { /* asked again (its asker failed) */
        bm_set(s->askers, from);
        if (s->asent) {
            bm_set(s->rowe, from);
            if (from < s->rnext)
                s->rnext = from;
        }
    } else {
        collect_start(s, s->coord, from);
    }
    pump(s);
}

/* This rank waits for a decision (its own, or for a rank that asked it
 * for help) that it cannot give. */
static int needs_help(const agree_t *s)
{
    if (s->coord == s->me)
        return 0;
    if (s->slow && !s->decided)
        return 1;
    if (s->slab == NULL || s->dcoord == s->coord)
        return 0;
    for (size_t i = 0; i < coll_agree_bm_bytes(s->n); i++)
        if (s->owe[i])
            return 1;
    return 0;
}

/* HELP to the nearest live ancestor in the coordinator's tree, once per
 * ancestor. */
static void help_up(agree_t *s)
{
    if (!needs_help(s))
        return;
    int p = tree_parent(s, s->coord, s->me);
    if (p != s->hsent) {
        s->hsent = p;
        s->help_to = p;
    }
}

/* A failure stops the fast path: ask for a round. */
static void go_slow(agree_t *s, const char *why, int peer)
{
    if (s->slow || s->decided || s->cleaned)
        return;
    ucft_debug(s->tp->log, "agree %u: %s (rank %d): slow path",
               (unsigned)s->args->seq, why, peer);
    if (!ensure_slab(s))
        return;
    s->slow = 1;
    if (s->fr_busy)
        tp_cancel(s->tp, &s->fr);
    post_ctrl(s);
    post_big(s);
    help_up(s);
    maybe_round(s);
    try_answer(s);
    pump(s);
}

/* One message at a time: HELP, REPORT, the QUERYs owed, the decisions
 * owed. Every one is buffered (T7): its receiver may have moved on. */
static void pump(agree_t *s)
{
    while (!s->sr_busy && !s->cleaned) {
        int dst = -1;
        unsigned kind = 0;
        const void *b = NULL;
        size_t l = 0;
        if (s->help_to >= 0) {
            dst = s->help_to, kind = AG_KIND_HELP;
            s->help_to = -1;
        } else if (s->acoord >= 0 && s->asent &&
                   (s->rnext = next_set(s->rowe, s->rnext, s->n)) < s->n) {
            dst = s->rnext++, kind = AG_KIND_REPORT;
            bm_clear(s->rowe, dst);
            b = s->abuf, l = s->msg_len;
        } else if (s->acoord >= 0 && !s->asent &&
                   (s->qnext = next_set(s->qowe, s->qnext, s->n)) < s->n) {
            dst = s->qnext++, kind = AG_KIND_QUERY;
            bm_clear(s->qowe, dst);
            s->qsend = (uint32_t)s->acoord;
            b = &s->qsend, l = sizeof(s->qsend);
        } else if (s->slab != NULL && s->dcoord == s->coord &&
                   (s->dnext = next_set(s->owe, s->dnext, s->n)) < s->n) {
            dst = s->dnext++, kind = AG_KIND_DECIDE;
            bm_clear(s->owe, dst);
            b = s->dmsg, l = s->msg_len;
        } else {
            return;
        }
        if (is_failed(s, dst) || dst == s->me)
            continue;
        s->sr.buffered = 1;
        ucft_status_t st =
            tp_send(s->tp, dst, tag_of(s, s->me, kind), b, l, &s->sr);
        if (st == UCFT_INPROGRESS)
            s->sr_busy = 1;
        /* An error: dst is failing; its failure news will follow. */
    }
}

/* ---- the fast path ---------------------------------------------------------
 */

static ag_stage_t stage_of(const agree_t *s, unsigned i)
{
    int v = s->me;
    if (v >= s->p)
        return (ag_stage_t){v - s->p, 1, 1, AG_POST_COPY};
    int fold = v < s->rem;
    if (fold && i == 0)
        return (ag_stage_t){v + s->p, 0, 1, AG_POST_COMBINE};
    if (fold && i == s->nstage - 1)
        return (ag_stage_t){v + s->p, 1, 0, AG_POST_NONE};
    unsigned j = i - (unsigned)fold;
    return (ag_stage_t){v ^ (1 << j), 1, 1, AG_POST_COMBINE};
}

static void fast_step(agree_t *s)
{
    size_t wl = s->words * sizeof(uint32_t);
    while (!s->slow && !s->decided && !s->cleaned && !s->done) {
        if (s->stage == s->nstage) {
            decide(s);
            return;
        }
        ag_stage_t g = stage_of(s, s->stage);
        if (!s->fposted) {
            s->fposted = 1;
            if (is_failed(s, g.peer)) {
                go_slow(s, "a peer failed", g.peer);
                return;
            }
            if (g.recv) {
                ucft_status_t st =
                    tp_recv(s->tp, tag_of(s, g.peer, AG_KIND_FAST),
                            UCFT_TAG_FULL_MASK, s->rslot, wl, &s->fr);
                if (st == UCFT_INPROGRESS)
                    s->fr_busy = 1;
                else if (st != UCFT_OK || s->fr.status != UCFT_OK ||
                         s->fr.length != wl) {
                    go_slow(s, "receive failed", g.peer);
                    return;
                }
            }
            if (g.send) {
                s->fs.buffered = 1;
                ucft_status_t st =
                    tp_send(s->tp, g.peer, tag_of(s, s->me, AG_KIND_FAST),
                            s->val, wl, &s->fs);
                if (st == UCFT_INPROGRESS)
                    s->fs_busy = 1;
                else if (st != UCFT_OK) {
                    go_slow(s, "send failed", g.peer);
                    return;
                }
            }
            continue;
        }
        if (s->fr_busy || s->fs_busy)
            return;
        if (g.post == AG_POST_COMBINE)
            for (size_t i = 0; i < s->words; i++)
                s->val[i] &= s->rslot[i];
        else if (g.post == AG_POST_COPY)
            memcpy(s->val, s->rslot, wl);
        s->stage++;
        s->fposted = 0;
    }
}

/* ---- receives
 * ---------------------------------------------------------------- */

static void post_ctrl(agree_t *s)
{
    if (s->cr_busy || s->cr_posting || s->cleaned)
        return;
    s->cr_posting = 1;
    while (!s->cleaned && !s->cr_busy) {
        ucft_status_t st =
            tp_recv(s->tp, tag_of(s, 0, AG_KIND_HELP), pair_mask(), &s->qslot,
                    sizeof(s->qslot), &s->cr);
        if (st == UCFT_INPROGRESS)
            s->cr_busy = 1;
        else if (st == UCFT_OK)
            s->cr.cb(&s->cr); /* completed at once: handle, post again */
        else
            break;
    }
    s->cr_posting = 0;
}

static void post_big(agree_t *s)
{
    if (s->br_busy || s->br_posting || s->cleaned || s->slab == NULL)
        return;
    s->br_posting = 1;
    while (!s->cleaned && !s->br_busy) {
        ucft_status_t st = tp_recv(s->tp, tag_of(s, 0, AG_KIND_REPORT),
                                   pair_mask(), s->rbig, s->msg_len, &s->br);
        if (st == UCFT_INPROGRESS)
            s->br_busy = 1;
        else if (st == UCFT_OK)
            s->br.cb(&s->br);
        else
            break;
    }
    s->br_posting = 0;
}

/* The sender of a completed receive, or -1 (logged) when it names no
 * rank. */
static int sender(agree_t *s, const tp_req_t *req)
{
    uint32_t src = ucft_tag_src(req->tag);
    if (src >= (uint32_t)s->n || (int)src == s->me) {
        coll_log_bad(s->tp, s->args, req, "no other rank has that number");
        return -1;
    }
    return (int)src;
}

/* HELP from `src`: the coordinator runs its round, or answers once it
 * has decided; another rank answers if it holds the coordinator's
 * decision, else asks its own parent. */
static void on_help(agree_t *s, int src)
{
    if (!ensure_slab(s))
        return;
    bm_set(s->owe, src);
    bm_set(s->asked, src);
    if (src < s->dnext)
        s->dnext = src;
    /* A rank this rank's collection does not cover (its parent failed in
     * its view only): queried directly. */
    if (s->acoord >= 0 && s->acoord == s->coord && !s->asent &&
        !bm_get(s->got, src) && !bm_get(s->pend, src)) {
        bm_set(s->pend, src);
        bm_set(s->qowe, src);
        s->npend++;
        s->qnext = 0;
    }
    s->helped = 1; /* a round if this rank becomes the coordinator */
    maybe_round(s);
    help_up(s);
}

static void on_query(agree_t *s, int src, uint32_t c)
{
    if (c >= (uint32_t)s->n || (int)c == s->me || (int)c < s->coord)
        return; /* not a round this rank can take part in (any more) */
    s->qcoord = (int)c;
    s->qfrom = src;
    try_answer(s);
}

static void ctrl_cb(tp_req_t *req)
{
    agree_t *s = req->arg;
    s->cr_busy = 0;
    if (s->cleaned || req->status == UCFT_ERR_CANCELED)
        return;
    int src = sender(s, req);
    unsigned kind = kind_of(s, req);
    size_t want = kind == AG_KIND_HELP ? 0 : sizeof(uint32_t);
    if (src >= 0 && (req->status != UCFT_OK || req->length != want)) {
        coll_log_bad(s->tp, s->args, req,
                     kind == AG_KIND_HELP ? "a HELP with a payload"
                                          : "a QUERY without its round");
    } else if (src >= 0 && kind != AG_KIND_HELP && s->qslot >= (uint32_t)s->n) {
        coll_log_bad(s->tp, s->args, req, "a QUERY naming no rank");
    } else if (src >= 0 && !is_failed(s, src)) {
        if (kind == AG_KIND_HELP)
            on_help(s, src);
        else
            on_query(s, src, s->qslot);
        pump(s);
    }
    post_ctrl(s);
}

/* A merged report of a child this rank waits for. */
static void on_report(agree_t *s, int src)
{
    const ag_msg_t *h = (const ag_msg_t *)s->rbig;
    if (s->acoord < 0 || s->asent || h->coord != (uint32_t)s->acoord ||
        !bm_get(s->pend, src))
        return;
    bm_clear(s->pend, src);
    s->npend--;
    merge(s, s->rbig, 0);
    collect_check(s);
}

/* The current coordinator's decision (from it, or relayed). */
static void on_decide(agree_t *s)
{
    const ag_msg_t *h = (const ag_msg_t *)s->rbig;
    if (h->coord != (uint32_t)s->coord || s->coord == s->me)
        return;
    if (!s->decided) {
        memcpy(s->dmsg, s->rbig, s->msg_len);
        s->decided = 1;
        s->dcoord = s->coord;
        output(s);
    } else if (s->dcoord != s->coord) {
        /* Decided before (fast, or by an earlier round): the same
         * decision, now relayable as this round's. */
        s->dcoord = s->coord;
        ((ag_msg_t *)s->dmsg)->coord = (uint32_t)s->coord;
    }
    forward_decision(s);
}

static void big_cb(tp_req_t *req)
{
    agree_t *s = req->arg;
    s->br_busy = 0;
    if (s->cleaned) {
        if (s->slab != NULL && !s->sr_busy) {
            free(s->slab);
            s->slab = NULL;
        }
        return;
    }
    if (req->status == UCFT_ERR_CANCELED)
        return;
    int src = sender(s, req);
    unsigned kind = kind_of(s, req);
    const char *bad =
        req->status != UCFT_OK
            ? "receive failed"
            : coll_wire_agree_check(s->rbig, req->length, s->words, s->n,
                                    kind == AG_KIND_DECIDE);
    if (src >= 0 && bad != NULL)
        coll_log_bad(s->tp, s->args, req, bad);
    else if (src >= 0 && !is_failed(s, src) && kind == AG_KIND_REPORT)
        on_report(s, src);
    else if (src >= 0 && !is_failed(s, src))
        on_decide(s);
    pump(s);
    post_big(s);
}

static void fast_cb(tp_req_t *req)
{
    agree_t *s = req->arg;
    size_t wl = s->words * sizeof(uint32_t);
    if (req == &s->fs) {
        s->fs_busy = 0;
        if (s->out_pending && !s->cleaned)
            output(s);
        else if (req->status != UCFT_OK && !s->cleaned)
            go_slow(s, "send failed", stage_of(s, s->stage).peer);
    } else {
        s->fr_busy = 0;
        if (s->slow || s->decided || s->cleaned)
            return;
        if (req->status != UCFT_OK || req->length != wl) {
            go_slow(s, "receive failed", stage_of(s, s->stage).peer);
            return;
        }
    }
    fast_step(s);
}

static void send_cb(tp_req_t *req)
{
    agree_t *s = req->arg;
    s->sr_busy = 0;
    if (s->cleaned) {
        if (s->slab != NULL && !s->br_busy) {
            free(s->slab);
            s->slab = NULL;
        }
        return;
    }
    pump(s);
}

/* ---- the ops
 * ----------------------------------------------------------------- */

ucft_status_t ag_era_init(agree_t *s, tp_t *tp, const coll_args_t *args,
                          void *buf)
{
    size_t hl = sizeof(coll_agree_hdr_t);
    if (args->len <= hl || (args->len - hl) % sizeof(uint32_t) != 0 ||
        buf == NULL || tp->size < 1)
        return UCFT_ERR_INVALID_PARAM;
    memset(s, 0, sizeof(*s));
    s->tp = tp;
    s->args = args;
    s->words = (args->len - hl) / sizeof(uint32_t);
    s->val = buf;
    s->hdr = (coll_agree_hdr_t *)(s->val + s->words);
    s->rslot = (uint32_t *)((unsigned char *)buf + args->len);
    s->orig = (uint32_t *)((unsigned char *)buf + 2 * args->len);
    s->n = tp->size;
    s->me = tp->rank;
    s->msg_len = coll_wire_agree_len(s->words, s->n);
    while (s->lg < 30 && (2 << s->lg) <= s->n)
        s->lg++;
    s->p = 1 << s->lg;
    s->rem = s->n - s->p;
    s->nstage = s->me >= s->p ? 1 : (unsigned)s->lg + (s->me < s->rem ? 2 : 0);
    s->acoord = s->aparent = s->qcoord = s->qfrom = s->hsent = -1;
    s->help_to = s->fwd = -1;
    s->dcoord = s->n;
    s->qnext = s->dnext = s->rnext = s->n;
    s->status = UCFT_INPROGRESS;
    s->fr.cb = s->fs.cb = fast_cb;
    s->cr.cb = ctrl_cb;
    s->br.cb = big_cb;
    s->sr.cb = send_cb;
    s->fr.arg = s->fs.arg = s->cr.arg = s->br.arg = s->sr.arg = s;
    return UCFT_OK;
}

void coll_agree_set_acked(void *state, const uint8_t *acked)
{
    ((agree_t *)state)->acked = acked;
}

const uint8_t *coll_agree_failed(const void *state)
{
    const agree_t *s = state;
    if (s->slab == NULL || !s->decided || s->hdr->nfailed == 0)
        return NULL;
    return msg_bm(s, s->dmsg);
}

ucft_status_t ag_era_start(agree_t *s)
{
    memcpy(s->orig, s->val, s->words * sizeof(uint32_t));
    s->in_start = 1;
    fast_step(s);
    s->in_start = 0;
    return s->status;
}

static ucft_status_t ag_test(const void *state)
{
    return ((const agree_t *)state)->status;
}

void ag_era_failure(agree_t *s, int rank)
{
    if (s->cleaned || rank < 0 || rank >= s->n || rank == s->me)
        return;
    if (s->lfail == NULL) {
        s->lfail = calloc(1, coll_agree_bm_bytes(s->n));
        if (s->lfail == NULL) {
            ag_finish(s, UCFT_ERR_NO_MEMORY);
            return;
        }
    }
    if (bm_get(s->lfail, rank))
        return;
    bm_set(s->lfail, rank);
    post_ctrl(s);
    /* Any failure known before this rank decides sends it to the slow
     * path: a fast decision would put F = {} although this rank knew of a
     * failure before it contributed, and shrink must leave such ranks
     * out (the MPI chapter). */
    if (!s->slow && !s->decided)
        go_slow(s, "a rank failed", rank);
    int c = 0;
    while (c < s->me && is_failed(s, c))
        c++;
    if (c != s->coord) {
        s->coord = c;
        if (s->acoord >= 0 && s->acoord != c)
            s->acoord = -1; /* that round is over for this rank */
        s->hsent = -1;      /* another tree */
        /* A decision sent in answer to HELP named the old coordinator,
         * which a helper that knew of its failure ignored: every helper
         * is owed the new coordinator's. */
        if (s->slab != NULL) {
            for (size_t i = 0; i < coll_agree_bm_bytes(s->n); i++)
                s->owe[i] |= s->asked[i];
            s->dnext = 0;
        }
    } else if (s->acoord >= 0 && !s->asent && bm_get(s->pend, rank)) {
        /* A child this rank waits for: its children instead. */
        bm_clear(s->pend, rank);
        s->npend--;
        s->npend += tree_children(s, s->acoord, rank, s->pend, s->got, s->qowe);
        s->qnext = 0;
    }
    if (s->acoord >= 0)
        collect_check(s);
    /* The decision goes down to a failed child's children too. */
    if (s->slab != NULL && s->fwd == s->coord && s->dcoord == s->coord &&
        tree_parent(s, s->coord, rank) == s->me) {
        tree_children(s, s->coord, rank, s->owe, NULL, NULL);
        s->dnext = 0;
    }
    help_up(s); /* a new nearest live ancestor if hsent failed */
    try_answer(s);
    maybe_round(s);
    pump(s);
    if (s->conf != NULL) /* last: it may end this agreement */
        ag_era_failure(s->conf, rank);
}

void ag_era_cleanup(agree_t *s)
{
    s->cleaned = 1;
    if (s->conf != NULL)
        ag_era_cleanup(s->conf);
    if (s->fr_busy)
        tp_cancel(s->tp, &s->fr);
    if (s->cr_busy)
        tp_cancel(s->tp, &s->cr);
    if (s->br_busy)
        tp_cancel(s->tp, &s->br);
    free(s->lfail);
    s->lfail = NULL;
    if (!s->br_busy && !s->sr_busy) {
        free(s->slab);
        s->slab = NULL;
    }
}

void ag_era_destroy(agree_t *s)
{
    if (s->conf != NULL)
        ag_era_destroy(s->conf);
    free(s->slab);
    free(s->lfail);
    s->slab = NULL;
    s->lfail = NULL;
}

int ag_era_idle(const agree_t *s)
{
    return !s->fr_busy && !s->fs_busy && !s->cr_busy && !s->br_busy &&
           !s->sr_busy && (s->conf == NULL || ag_era_idle(s->conf));
}

static unsigned era_stale(const agree_t *s, unsigned *kinds, unsigned max)
{
    unsigned k = 0;
    if ((s->slow || s->decided) && k < max)
        kinds[k++] = AG_KIND_FAST + s->kb;
    if (s->conf != NULL)
        k += era_stale(s->conf, kinds + k, max - k);
    return k;
}

/* ---- the table: the state is an agree_pair_t (agree_impl.h) ---------------
 */

static ucft_status_t ag_init(void *state, tp_t *tp, const coll_args_t *args,
                             void *buf)
{
    return ag_era_init(state, tp, args, buf);
}

static ucft_status_t ag_start(void *state)
{
    return ag_era_start(state);
}

static void ag_on_failure(void *state, int rank)
{
    ag_era_failure(state, rank);
}

static void ag_cleanup(void *state)
{
    ag_era_cleanup(state);
}

static void ag_destroy(void *state)
{
    ag_era_destroy(state);
}

static int ag_idle(const void *state)
{
    return ag_era_idle(state);
}

static unsigned ag_stale(const void *state, unsigned *kinds, unsigned max)
{
    return era_stale(state, kinds, max);
}

const coll_op_ops_t coll_agree_era_ops = {
    .op = "agree",
    .alg = "era",
    .doc = "early-returning agreement: recursive doubling of the AND when "
           "no failure interferes (p log2 p + 2 (n - p) messages), else a "
           "coordinator round (lowest live rank) on a binomial tree: queries "
           "down, merged reports up, the decision down",
    .state_size = sizeof(agree_pair_t),
    .buf_mult = 3,
    .init = ag_init,
    .start = ag_start,
    .test = ag_test,
    .cleanup = ag_cleanup,
    .destroy = ag_destroy,
    .on_failure = ag_on_failure,
    .idle = ag_idle,
    .consistent = 1,
    .keep_after_done = 1,
    .stale_kinds = ag_stale,
};
