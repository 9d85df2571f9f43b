/*
 * Late messages of finished collectives (comm/coll.h).
 *
 * Corrected algorithms keep sending after a rank is done (corrections,
 * down-phase copies), so a finished instance's messages keep arriving,
 * possibly long after: a broadcast root never waits, so in a loop of
 * broadcasts it runs ahead of its receivers by hundreds of instances, and
 * their corrections reach it that much later. Left alone, these messages
 * would sit in the transport's unexpected queue for ever (memory grows)
 * and every wildcard receive that finds no match would scan them (UCP
 * searches unexpected messages linearly for masked receives): the rank
 * would slow down with every operation.
 *
 * The sweeper removes them. It looks at the oldest unexpected collective
 * message (a probe on the tag class); if that message belongs to an
 * instance that this rank has started and that is no longer running here
 * (its sequence number is in the past of its communicator), it receives
 * it with its exact tag (a hash lookup in UCP) into a scratch buffer and
 * looks again; it stops at the first message that may still be wanted (a
 * running or future instance, an unknown communicator). Messages arrive
 * roughly in instance order, so late ones are found at the head. A sweep
 * is due whenever an instance ends and after every dropped message (and,
 * while finalizing, at every progress call: the other ranks' last late
 * messages arrive then, with no instance ending here any more); it
 * runs from cm_coll_progress and before a new instance starts, never
 * inside a transport callback, and nothing stays posted in between (no
 * wildcard receive slows down the matching of other messages).
 *
 * Running instances can also leave messages behind: a corrected
 * allreduce root hears one answer of its f + 1 subtrees, and an attempt
 * abandoned for the next root leaves its messages unreceived, while the
 * (kept) instance runs on. With large messages this is not only memory:
 * UCX's rendezvous protocol completes a send only once the receiver has
 * matched it, so the sender would wait for ever. Such instances name the
 * kinds they will never receive (ops->stale_kinds); every sweep looks
 * each of them up first and drops what it finds.
 *
 * Sequence numbers are 16 bits in the tag: an instance counts as past when
 * it is at most 32,767 instances older than the newest one started.
 */
#include "comm/comm.h"

#define SEQ_MASK    ((1u << UCFT_TAG_SEQ_BITS) - 1)
#define SWEEP_MAX   1024 /* messages dropped per sweep (then: next progress) */
#define STALE_MAX   64   /* stale kinds asked of one instance per sweep */
#define TOMB_PROBES 4    /* freed communicators looked up per sweep */

/* 1 when a message with this tag can only be late: its instance has
 * started here and is not running any more; or when it names no
 * communicator of this layer (the tag is malformed, logged). */
static int is_late(cm_layer_t *cl, uint64_t tag)
{
    unsigned cid = ucft_tag_ctx(tag);
    struct ucft_comm *comm = cm_comm_find(cl, cid);
    uint32_t s = ucft_tag_coll_seq(tag);

    unsigned id = cid & CM_CTX_ID_MASK;
    if ((comm == NULL || comm->freed) && id != 0)
        /* A freed communicator's while its tombstone stands (no other
         * takes its id meanwhile, comm/create.c); else one that this
         * rank is still making (the others made it first). */
        return (cl->tomb_ids[id / 32] >> (id % 32)) & 1;
    if (comm == NULL) {
        ucft_warn(&cl->ctx->log,
                  "collective message from rank %u names communicator %u, "
                  "which does not exist: dropped",
                  (unsigned)ucft_tag_src(tag), cid);
        return 1;
    }
    int owned = cm_coll_cs_kind(comm, ucft_tag_coll_kind(tag));
    if (owned != 0)
        return owned < 0; /* a communicator state's own messages */
    /* Agreements have a sequence of their own (comm.h, agree_seq). */
    unsigned kind = ucft_tag_coll_kind(tag);
    int agree = coll_kind_is_agree(kind);
    if (agree && (s & CM_REPAIR_SEQ_BIT) && cm_repair_future(comm, s))
        return comm->repair_off; /* not started here yet; never, once the
                                    communicator is freed or finalized */
    uint32_t next = agree ? comm->agree_seq : comm->seq;
    if (agree && (s & CM_REPAIR_SEQ_BIT))
        next = s + 1; /* started here: late unless running */
    if (next == 0)
        return 0;
    if (((next - 1 - s) & SEQ_MASK) >= (SEQ_MASK + 1) / 2)
        return 0; /* not started here yet */
    for (struct cm_coll *c = cl->colls.next; c != &cl->colls; c = c->next)
        if (c->args.ctx == cid && (c->args.seq & SEQ_MASK) == s &&
            (c->ops == comm->agree) == agree)
            return 0;
    return 1;
}

static void drain_cb(tp_req_t *t)
{
    cm_drain_t *d = t->arg;
    d->posted = 0;
    if (t->status != UCFT_ERR_CANCELED) {
        d->layer->drained++; /* possibly truncated: it is dropped anyway */
        d->pending = 1;
    }
}

void cm_drain_finished(cm_layer_t *cl)
{
    cl->drain.pending = 1;
}

/* Receives and drops the message with this exact tag. 0: dropped, go on;
 * 1: a large message is on its way (drain_cb asks for the next sweep). */
static int drop_one(cm_layer_t *cl, cm_drain_t *d, uint64_t tag)
{
    ucft_trace(&cl->ctx->log,
               "late message dropped: instance #%u, kind %u, rank %u",
               (unsigned)ucft_tag_coll_seq(tag), ucft_tag_coll_kind(tag),
               (unsigned)ucft_tag_src(tag));
    d->req = (tp_req_t){.cb = drain_cb, .arg = d};
    ucft_status_t st = tp_recv(cl->ctx->tp, tag, UCFT_TAG_FULL_MASK, d->buf,
                               sizeof(d->buf), &d->req);
    if (st == UCFT_INPROGRESS) {
        d->posted = 1;
        return 1;
    }
    cl->drained++;
    return 0;
}

/* Messages that running instances will never receive (ops->stale_kinds:
 * an abandoned attempt, answers a root no longer needs). They are not at
 * the head of the queue, and their senders may wait on them (a large
 * message's send completes only once it is received), so each such kind
 * is looked up. Returns 1 when the sweep must stop (a drop in flight, or
 * the budget is spent). */
static int sweep_stale(cm_layer_t *cl, cm_drain_t *d, int *budget)
{
    for (struct cm_coll *c = cl->colls.next; c != &cl->colls; c = c->next) {
        unsigned kinds[STALE_MAX];
        unsigned nk = c->ops->stale_kinds == NULL
                          ? 0
                          : c->ops->stale_kinds(c->state, kinds, STALE_MAX);
        for (unsigned k = 0; k < nk; k++) {
            tp_probe_info_t info;
            uint64_t tag = coll_tag(&c->args, 0, kinds[k]);
            while (tp_probe(cl->ctx->tp, tag, ~UCFT_TAG_SRC_MASK, &info) ==
                   UCFT_OK) {
                if (drop_one(cl, d, info.tag) || --*budget <= 0)
                    return 1;
            }
        }
    }
    return 0;
}

/* Messages of freed communicators, wherever they sit in the queue (behind
 * a message still wanted, the head-of-queue sweep stops): a few tombstones
 * (comm/create.c) are looked up per sweep, in turn. Nothing live has a
 * tombstone's tag context here, so all its messages are late. */
static int sweep_tombs(cm_layer_t *cl, cm_drain_t *d, int *budget)
{
    const uint64_t mask = ((uint64_t)3 << UCFT_TAG_CLASS_SHIFT) |
                          ((uint64_t)UCFT_TAG_MAX_CTX << UCFT_TAG_CTX_SHIFT);
    unsigned n = cl->ntomb < TOMB_PROBES ? cl->ntomb : TOMB_PROBES;
    for (unsigned k = 0; k < n; k++) {
        unsigned i =
            (cl->tomb_head + cl->tomb_sweep++ % cl->ntomb) % CM_CTX_TOMBS;
        uint64_t tag = ucft_tag_make(UCFT_TAG_CLASS_COLL, cl->tomb[i], 0, 0);
        tp_probe_info_t info;
        while (tp_probe(cl->ctx->tp, tag, mask, &info) == UCFT_OK) {
            if (drop_one(cl, d, info.tag) || --*budget <= 0)
                return 1;
        }
    }
    return 0;
}

void cm_drain_sweep(cm_layer_t *cl)
{
    cm_drain_t *d = &cl->drain;
    const uint64_t ctag = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 0, 0);
    const uint64_t cmask = (uint64_t)3 << UCFT_TAG_CLASS_SHIFT;
    int budget = SWEEP_MAX;

    if (!d->pending || d->posted || d->stopped)
        return;
    d->pending = 0;
    d->layer = cl;
    if (sweep_stale(cl, d, &budget) || sweep_tombs(cl, d, &budget)) {
        d->pending = !d->posted;
        return;
    }
    while (budget-- > 0) {
        tp_probe_info_t info;
        if (tp_probe(cl->ctx->tp, ctag, cmask, &info) != UCFT_OK ||
            !is_late(cl, info.tag))
            return;
        if (drop_one(cl, d, info.tag))
            return;
    }
    d->pending = 1;
}

void cm_drain_cancel_all(cm_layer_t *cl)
{
    cl->drain.stopped = 1;
    cl->drain.pending = 0;
    if (cl->drain.posted)
        tp_cancel(cl->ctx->tp, &cl->drain.req);
}
