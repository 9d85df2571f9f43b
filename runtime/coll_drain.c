/*
 * Late messages of finished collectives (runtime/coll.h).
 *
 * Corrected algorithms keep sending after a rank is done (corrections,
 * down-phase copies), so a finished instance's messages keep arriving,
 * possibly long after: a broadcast root never waits, so in a loop of
 * broadcasts it runs ahead of its receivers by any number of instances,
 * and their corrections reach it that much later. Left alone, these
 * messages would sit in the transport's unexpected queue for ever (memory
 * grows), and every wildcard receive that finds no match scans that whole
 * queue (UCP searches unexpected messages linearly for masked receives):
 * the rank slows down with every operation.
 *
 * So finished instances are drained by aligned blocks of sequence numbers
 * of one communicator, at three levels: 16, 256 and 4096 instances. Once
 * every instance of a level-0 block has finished here, one receive masked
 * on the low 4 sequence bits, the kind and the sender swallows all their
 * messages, those already waiting and those still to come (re-posted
 * after each match); once 16 level-0 blocks of a level-1 block are
 * complete, a receive masked on 8 sequence bits covers the whole 256, and
 * so on. Each level keeps its last RT_DRAIN_SLOTS blocks posted, so
 * messages up to about 12,000 instances late are swallowed, with 9
 * wildcard receives posted in all. A receive that finds nothing costs one
 * scan of the unexpected queue: about one per 16 instances, not one per
 * instance. Messages of an instance whose level-0 block is not complete
 * yet wait in the unexpected queue until it is (at most 16 instances).
 *
 * An instance counts as finished once: on completion, when its request is
 * given up while it runs, or when it fails to start.
 */
#include "runtime/context.h"

static void drain_post(rt_drain_t *d);

static void drain_cb(tp_req_t *t)
{
    rt_drain_t *d = t->arg;
    d->posted = 0;
    if (t->status != UCFT_ERR_CANCELED && !d->retiring) {
        d->ctx->drained++; /* a late message (possibly truncated): again */
        drain_post(d);
        return;
    }
    if (t->status != UCFT_ERR_CANCELED)
        d->ctx->drained++;
    d->retiring = 0;
    if (d->has_next) {
        d->has_next = 0;
        d->ctx_id = d->next_ctx_id;
        d->block = d->next_block;
        drain_post(d);
    }
}

static unsigned level_bits(unsigned level)
{
    return RT_DRAIN_LEVEL_BITS * (level + 1);
}

static void drain_post(rt_drain_t *d)
{
    unsigned low = UCFT_TAG_KIND_BITS + level_bits(d->level);
    uint64_t tag = ucft_tag_make(
        UCFT_TAG_CLASS_COLL, d->ctx_id, 0,
        ucft_tag_coll_payload(d->block << level_bits(d->level), 0));
    uint64_t mask = ~(UCFT_TAG_SRC_MASK | (((uint64_t)1 << low) - 1));
    for (int i = 0; i < 4096; i++) {
        d->req = (tp_req_t){.cb = drain_cb, .arg = d};
        ucft_status_t st =
            tp_recv(d->ctx->tp, tag, mask, d->buf, sizeof(d->buf), &d->req);
        if (st == UCFT_INPROGRESS) {
            d->posted = 1;
            return;
        }
        if (st != UCFT_OK)
            return;
        d->ctx->drained++; /* one that was already waiting: look again */
    }
}

/* Every instance of block `block` of `level` has finished: drain it from
 * now on, in the slot of the oldest of that level. */
static void drain_block(struct ucft_context *ctx, unsigned level, unsigned cid,
                        uint32_t block)
{
    rt_drain_t *d =
        &ctx->drain[level][ctx->drain_next[level]++ % RT_DRAIN_SLOTS];
    d->ctx = ctx;
    d->level = level;
    if (d->posted || d->retiring) {
        d->next_ctx_id = cid;
        d->next_block = block;
        d->has_next = 1;
        if (d->posted && !d->retiring) {
            d->retiring = 1;
            tp_cancel(ctx->tp, &d->req); /* drain_cb reposts for block */
        }
        return;
    }
    d->ctx_id = cid;
    d->block = block;
    drain_post(d);
}

/* One more sub-block (level 0: instance) of `block` of `level` is done. */
static void drain_count(struct ucft_context *ctx, unsigned level, unsigned cid,
                        uint32_t block)
{
    rt_drain_count_t *cs = ctx->drain_count[level], *c = NULL, *oldest = cs;

    for (int i = 0; i < RT_DRAIN_COUNTS; i++) {
        if (cs[i].n > 0 && cs[i].ctx_id == cid && cs[i].block == block) {
            c = &cs[i];
            break;
        }
        if (cs[i].n == 0 || (oldest->n > 0 && cs[i].stamp < oldest->stamp))
            oldest = &cs[i];
    }
    if (c == NULL) {
        /* Nothing of this block finished yet. Replacing a partial block (an
         * instance still running while RT_DRAIN_COUNTS newer blocks began
         * to finish) gives up draining that block at this level. */
        c = oldest;
        c->ctx_id = cid;
        c->block = block;
        c->n = 0;
    }
    c->stamp = ++ctx->drain_stamp;
    if (++c->n < (1u << RT_DRAIN_LEVEL_BITS))
        return;
    c->n = 0;
    drain_block(ctx, level, cid, block);
    if (level + 1 < RT_DRAIN_LEVELS)
        drain_count(ctx, level + 1, cid, block >> RT_DRAIN_LEVEL_BITS);
}

void rt_drain_finished(struct ucft_context *ctx, unsigned cid, uint32_t seq)
{
    uint32_t s = seq & ((1u << UCFT_TAG_SEQ_BITS) - 1);
    drain_count(ctx, 0, cid, s >> level_bits(0));
}

void rt_drain_cancel_all(struct ucft_context *ctx)
{
    for (int l = 0; l < RT_DRAIN_LEVELS; l++)
        for (int i = 0; i < RT_DRAIN_SLOTS; i++) {
            rt_drain_t *d = &ctx->drain[l][i];
            d->has_next = 0;
            if (d->posted && !d->retiring) {
                d->retiring = 1;
                tp_cancel(ctx->tp, &d->req);
            }
        }
}
