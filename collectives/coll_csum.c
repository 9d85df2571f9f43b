/* Payload checksums for the collectives (coll_csum.h). */
#include "coll_csum.h"
#include "coll_op.h"

#include <stdlib.h>
#include <string.h>

#define CSUM_LEN   8
#define CLASS_MASK ((uint64_t)3 << UCFT_TAG_CLASS_SHIFT)

uint64_t coll_csum_of(const void *buf, size_t len, uint64_t tag)
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
    struct csum_req *prev, *next; /* the filter's outstanding requests */
    tp_req_t *outer;
    tp_t *real;
    coll_csum_t *c;
    void *ubuf; /* receive: the caller's buffer */
    size_t ulen;
    uint64_t tag, mask;
    int is_send;
    unsigned char data[];
} csum_req_t;

static coll_csum_t *csum_of(tp_t *tp)
{
    return (coll_csum_t *)tp;
}

static void inner_cb(tp_req_t *req);

/* A request's scratch, linked into the filter's outstanding list. */
static csum_req_t *req_new(coll_csum_t *c, size_t len)
{
    csum_req_t *sr = malloc(sizeof(*sr) + len + CSUM_LEN);
    if (sr == NULL)
        return NULL;
    sr->c = c;
    sr->prev = NULL;
    sr->next = c->live;
    if (c->live != NULL)
        ((csum_req_t *)c->live)->prev = sr;
    c->live = sr;
    return sr;
}

static void req_free(csum_req_t *sr)
{
    coll_csum_t *c = sr->c;
    if (sr->prev != NULL)
        sr->prev->next = sr->next;
    else
        c->live = sr->next;
    if (sr->next != NULL)
        sr->next->prev = sr->prev;
    free(sr);
}

enum coll_csum_lost coll_csum_on_lost(unsigned kind)
{
    if (kind >= COLL_KIND_GOSSIP_FIRST && kind <= COLL_KIND_GOSSIP_LAST)
        return COLL_CSUM_EMPTY;
    if ((kind >= COLL_KIND_AGREE_FIRST &&
         kind <= COLL_KIND_REDUCE_CORRECTED_LAST) ||
        (kind >= COLL_KIND_BCAST_BATCH && kind <= COLL_KIND_BCAST_BATCH_LAST))
        return COLL_CSUM_DROP;
    return COLL_CSUM_FAIL;
}

static const char *const lost_what[] = {
    [COLL_CSUM_DROP] = " (dropped)",
    [COLL_CSUM_EMPTY] = " (delivered empty)",
    [COLL_CSUM_FAIL] = " (the receive fails)",
};

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
            want == coll_csum_of(sr->data, l - CSUM_LEN, sr->inner.tag)) {
            size_t n = l - CSUM_LEN;
            o->status = n > sr->ulen ? UCFT_ERR_TRUNCATED : UCFT_OK;
            o->length = n > sr->ulen ? sr->ulen : n;
            if (o->length > 0)
                memcpy(sr->ubuf, sr->data, o->length);
            return 1;
        }
        unsigned kind = ucft_tag_coll_kind(sr->inner.tag);
        enum coll_csum_lost what = coll_csum_on_lost(kind);
        sr->c->dropped++;
        ucft_warn(sr->c->f.tp.log,
                  "UCFT_CHECKSUM: corrupted message from rank %u "
                  "(collective context %u, sequence %u, kind %u, %zu "
                  "bytes): counted as lost%s",
                  ucft_tag_src(sr->inner.tag), ucft_tag_ctx(sr->inner.tag),
                  ucft_tag_coll_seq(sr->inner.tag), kind, l, lost_what[what]);
        if (what == COLL_CSUM_DROP && sr->c->accuse != NULL &&
            ucft_tag_src(sr->inner.tag) != (uint32_t)sr->c->f.tp.rank)
            sr->c->accuse(sr->c->accuse_arg, (int)ucft_tag_src(sr->inner.tag));
        if (what == COLL_CSUM_EMPTY) {
            o->status = UCFT_OK;
            o->length = 0;
            return 1;
        }
        if (what == COLL_CSUM_FAIL) {
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
    req_free(sr);
    o->cb(o);
}

static ucft_status_t c_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                            size_t len, tp_req_t *req)
{
    coll_csum_t *c = csum_of(tp);
    if (ucft_tag_class(tag) != UCFT_TAG_CLASS_COLL || len == 0) {
        req->priv_owner = NULL; /* not ours (c_cancel) */
        return tp_send(c->f.below, dst, tag, buf, len, req);
    }
    csum_req_t *sr = req_new(c, len);
    if (sr == NULL)
        return UCFT_ERR_NO_MEMORY;
    memcpy(sr->data, buf, len);
    uint64_t h = coll_csum_of(buf, len, tag);
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
        req_free(sr);
    return st;
}

static ucft_status_t c_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                            size_t len, tp_req_t *req)
{
    coll_csum_t *c = csum_of(tp);
    if (ucft_tag_class(tag) != UCFT_TAG_CLASS_COLL ||
        (mask & CLASS_MASK) != CLASS_MASK) {
        req->priv_owner = NULL;
        return tp_recv(c->f.below, tag, mask, buf, len, req);
    }
    csum_req_t *sr = req_new(c, len);
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
    req->priv = sr;
    req->priv_owner = c;
    ucft_status_t st =
        tp_recv(c->f.below, tag, mask, sr->data, len + CSUM_LEN, &sr->inner);
    if (st == UCFT_INPROGRESS)
        return st;
    if (st == UCFT_OK && !take(sr))
        return UCFT_INPROGRESS; /* dropped, posted again */
    req_free(sr);
    return st;
}

static void c_cancel(tp_t *tp, tp_req_t *req)
{
    coll_csum_t *c = csum_of(tp);
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

void coll_csum_init(coll_csum_t *c, tp_t *below)
{
    memset(c, 0, sizeof(*c));
    c->f.below = below;
    c->f.tp = (tp_t){.ops = &csum_tp_ops,
                     .rank = below->rank,
                     .size = below->size,
                     .log = below->log};
}

void coll_csum_on_corrupt(coll_csum_t *c, coll_csum_accuse_t accuse, void *arg)
{
    c->accuse = accuse;
    c->accuse_arg = arg;
}

void coll_csum_cleanup(coll_csum_t *c)
{
    while (c->live != NULL)
        req_free(c->live);
}

tp_t *coll_csum_tp(coll_csum_t *c, tp_t *below)
{
    c->f.below = below;
    return &c->f.tp;
}
