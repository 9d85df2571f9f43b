/* Payload checksums for the collectives (coll_csum.h). */
#include "comm/coll_csum.h"
#include "collectives/coll_op.h"

#include <stdlib.h>
#include <string.h>

#define CSUM_LEN   8
#define CLASS_MASK ((uint64_t)3 << UCFT_TAG_CLASS_SHIFT)

uint64_t cm_csum_of(const void *buf, size_t len, uint64_t tag)
{
    const unsigned char *p = buf;
    uint64_t h = 0xcbf29ce484222325ull ^ tag ^ ((uint64_t)len << 1);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ (h >> 32);
}

/* One request through the filter: the inner request on the transport
 * below, the caller's request, and the bytes on the wire. */
typedef struct csum_req {
    tp_req_t inner;
    tp_req_t *outer;
    tp_t *real;
    cm_csum_t *c;
    void *ubuf; /* receive: the caller's buffer */
    size_t ulen;
    uint64_t tag, mask;
    int is_send;
    int lost_empty; /* a corrupted message completes as an empty one */
    unsigned char data[];
} csum_req_t;

static cm_csum_t *csum_of(tp_t *tp)
{
    return (cm_csum_t *)tp;
}

static void inner_cb(tp_req_t *req);

/* The fault-aware baselines (collectives/baseline.h: binomial reduce,
 * recursive doubling, linear) cannot do without a message, and would wait
 * for a dropped one for ever: their receive fails instead, so the rank
 * ends with an error and sends its peers the error messages that end
 * theirs. The corrected algorithms take a dropped message as lost and
 * correct it; the rings (whose kinds the corrected ring shares) and the
 * binomial broadcast keep waiting. */
static int fatal_if_lost(uint64_t tag)
{
    unsigned kind = ucft_tag_coll_kind(tag);
    return kind >= COLL_KIND_BASELINE_FIRST && kind <= COLL_KIND_LINEAR_ERR;
}

/* A receive's message is in sr->inner: 1 when the caller's request is now
 * complete (fields filled), 0 when the message was dropped and the
 * receive posted again (pending). */
static int take(csum_req_t *sr)
{
    tp_req_t *o = sr->outer;
    for (;;) {
        size_t l = sr->inner.length;
        o->tag = sr->inner.tag;
        if (sr->inner.status != UCFT_OK) {
            o->status = sr->inner.status;
            o->length = l > sr->ulen ? sr->ulen : l;
            if (o->length > 0)
                memcpy(sr->ubuf, sr->data, o->length);
            return 1;
        }
        if (l == 0) {
            o->status = UCFT_OK;
            o->length = 0;
            return 1;
        }
        uint64_t want;
        if (l > CSUM_LEN)
            memcpy(&want, sr->data + l - CSUM_LEN, CSUM_LEN);
        if (l > CSUM_LEN &&
            want == cm_csum_of(sr->data, l - CSUM_LEN, sr->inner.tag)) {
            size_t n = l - CSUM_LEN;
            o->status = n > sr->ulen ? UCFT_ERR_TRUNCATED : UCFT_OK;
            o->length = n > sr->ulen ? sr->ulen : n;
            if (o->length > 0)
                memcpy(sr->ubuf, sr->data, o->length);
            return 1;
        }
        sr->c->dropped++;
        ucft_warn(sr->c->f.tp.log,
                  "UCFT_CHECKSUM: corrupted message from rank %u dropped "
                  "(collective context %u, sequence %u, kind %u, %zu "
                  "bytes): counted as lost%s",
                  ucft_tag_src(sr->inner.tag), ucft_tag_ctx(sr->inner.tag),
                  ucft_tag_coll_seq(sr->inner.tag),
                  (unsigned)(sr->inner.tag & ((1u << UCFT_TAG_KIND_BITS) - 1)),
                  l,
                  sr->lost_empty ? " (delivered empty)"
                  : fatal_if_lost(sr->inner.tag)
                      ? " (the operation ends with an error)"
                      : "");
        if (sr->lost_empty) {
            o->status = UCFT_OK;
            o->length = 0;
            return 1;
        }
        if (fatal_if_lost(sr->inner.tag)) {
            o->status = UCFT_ERR_TRANSPORT;
            o->length = 0;
            return 1;
        }
        sr->inner.cb = inner_cb;
        sr->inner.arg = sr;
        ucft_status_t st = tp_recv(sr->real, sr->tag, sr->mask, sr->data,
                                   sr->ulen + CSUM_LEN, &sr->inner);
        if (st == UCFT_INPROGRESS)
            return 0;
        if (st != UCFT_OK) {
            sr->inner.status = st;
            sr->inner.length = 0;
        }
    }
}

static void inner_cb(tp_req_t *req)
{
    csum_req_t *sr = req->arg;
    tp_req_t *o = sr->outer;
    if (sr->is_send) {
        o->status = req->status;
    } else if (!take(sr)) {
        return;
    }
    free(sr);
    o->cb(o);
}

static ucft_status_t c_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                            size_t len, tp_req_t *req)
{
    cm_csum_t *c = csum_of(tp);
    if (ucft_tag_class(tag) != UCFT_TAG_CLASS_COLL || len == 0) {
        req->priv_owner = NULL; /* not ours (c_cancel) */
        return tp_send(c->f.below, dst, tag, buf, len, req);
    }
    csum_req_t *sr = malloc(sizeof(*sr) + len + CSUM_LEN);
    if (sr == NULL)
        return UCFT_ERR_NO_MEMORY;
    memcpy(sr->data, buf, len);
    uint64_t h = cm_csum_of(buf, len, tag);
    memcpy(sr->data + len, &h, CSUM_LEN);
    sr->inner =
        (tp_req_t){.cb = inner_cb, .arg = sr, .buffered = req->buffered};
    sr->outer = req;
    sr->real = c->f.below;
    sr->c = c;
    sr->is_send = 1;
    req->priv = sr;
    req->priv_owner = c;
    ucft_status_t st =
        tp_send(c->f.below, dst, tag, sr->data, len + CSUM_LEN, &sr->inner);
    if (st != UCFT_INPROGRESS)
        free(sr);
    return st;
}

static ucft_status_t c_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                            size_t len, tp_req_t *req)
{
    cm_csum_t *c = csum_of(tp);
    if (ucft_tag_class(tag) != UCFT_TAG_CLASS_COLL ||
        (mask & CLASS_MASK) != CLASS_MASK) {
        req->priv_owner = NULL;
        return tp_recv(c->f.below, tag, mask, buf, len, req);
    }
    csum_req_t *sr = malloc(sizeof(*sr) + len + CSUM_LEN);
    if (sr == NULL)
        return UCFT_ERR_NO_MEMORY;
    sr->inner = (tp_req_t){.cb = inner_cb, .arg = sr};
    sr->outer = req;
    sr->real = c->f.below;
    sr->c = c;
    sr->ubuf = buf;
    sr->ulen = len;
    sr->tag = tag;
    sr->mask = mask;
    sr->is_send = 0;
    sr->lost_empty = c->lost_empty;
    req->priv = sr;
    req->priv_owner = c;
    ucft_status_t st =
        tp_recv(c->f.below, tag, mask, sr->data, len + CSUM_LEN, &sr->inner);
    if (st == UCFT_INPROGRESS)
        return st;
    if (st == UCFT_OK && !take(sr))
        return UCFT_INPROGRESS; /* dropped, posted again */
    free(sr);
    return st;
}

static void c_cancel(tp_t *tp, tp_req_t *req)
{
    cm_csum_t *c = csum_of(tp);
    /* Requests this filter did not wrap went straight to the transport
     * below (priv_owner cleared before, maybe set by it, never to c). */
    if (req->priv_owner == c) {
        csum_req_t *sr = req->priv;
        tp_cancel(sr->real, &sr->inner);
    } else
        tp_cancel(c->f.below, req);
}

static const tp_ops_t csum_tp_ops = {
    .name = "checksum",
    .send = c_send,
    .recv = c_recv,
    .probe = tp_filter_probe,
    .cancel = c_cancel,
    .peer_failed = tp_filter_peer_failed,
    .watch = tp_filter_watch,
    TP_FILTER_PASS_OPS,
};

void cm_csum_init(cm_csum_t *c, tp_t *real)
{
    memset(c, 0, sizeof(*c));
    c->f.below = real;
    c->f.tp = (tp_t){.ops = &csum_tp_ops,
                     .rank = real->rank,
                     .size = real->size,
                     .log = real->log};
}

tp_t *cm_csum_tp(cm_csum_t *c, tp_t *real, int lost_empty)
{
    c->f.below = real;
    c->lost_empty = lost_empty;
    return &c->f.tp;
}
