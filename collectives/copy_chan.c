/*
 * Copy channel of the batched corrected broadcast (copy_chan.h has the
 * protocol, the wire format and the delivery rules).
 */
#include "copy_chan.h"
#include "coll_wire.h"

#include <stdlib.h>
#include <string.h>

struct cc_outbuf {
    cc_outbuf_t *next;     /* spare list */
    cc_outbuf_t *all_next; /* every buffer, for cc_destroy */
    cc_chan_t *ch;
    tp_req_t req;
    size_t len;
    unsigned char data[]; /* ch->msg_max bytes */
};

/* A received message, kept while an entry of it may be needed. */
struct cc_inbuf {
    cc_inbuf_t *next;     /* kept list of its link, or spare list */
    cc_inbuf_t *all_next; /* every buffer, for cc_destroy */
    uint32_t lo, hi;      /* smallest and largest sequence of its entries */
    size_t len;           /* bytes of checked entries */
    unsigned char data[]; /* ch->msg_max bytes */
};

static uint64_t cc_tag(const cc_chan_t *ch, int src, uint16_t bseq, int link)
{
    return ucft_tag_make(
        UCFT_TAG_CLASS_COLL, ch->ctx, (uint32_t)src,
        ucft_tag_coll_payload(bseq, (unsigned)(COLL_KIND_BCAST_BATCH + link)));
}

/* Serial comparison of instance sequences: a is after b. */
static int cc_after(uint32_t a, uint32_t b)
{
    return coll_wire_after(a, b);
}

static size_t cc_pad8(size_t len)
{
    return (len + 7) & ~(size_t)7;
}

/* ---- kept messages ------------------------------------------------------- */

/* Every entry of a sequence before this one is not needed any more: its
 * instance started here and is no longer running (0 when none is). */
static int cc_floor(const cc_chan_t *ch, uint32_t *floor)
{
    if (!ch->any_started)
        return 0;
    uint32_t f = ch->last_seq + 1;
    for (const cc_member_t *m = ch->members; m != NULL; m = m->next)
        if (cc_after(f, m->seq))
            f = m->seq;
    *floor = f;
    return 1;
}

static void cc_inbuf_put(cc_chan_t *ch, cc_inbuf_t *b)
{
    b->next = ch->in_spare;
    ch->in_spare = b;
}

/* Drops the kept messages of every link whose entries are all past. */
static void cc_purge(cc_chan_t *ch)
{
    uint32_t floor;
    if (ch->nkept == 0 || !cc_floor(ch, &floor))
        return;
    for (unsigned m = ch->in_mask; m != 0; m &= m - 1) {
        cc_link_in_t *l = &ch->in[__builtin_ctz(m)];
        while (l->kept != NULL && cc_after(floor, l->kept->hi)) {
            cc_inbuf_t *b = l->kept;
            l->kept = b->next;
            if (l->kept == NULL)
                l->kept_tail = &l->kept;
            ch->nkept--;
            cc_inbuf_put(ch, b);
        }
    }
}

static const void *cc_find_in(const cc_inbuf_t *b, uint32_t seq, size_t *len)
{
    if (cc_after(b->lo, seq) || cc_after(seq, b->hi))
        return NULL;
    return coll_wire_batch_find(b->data, b->len, seq, len);
}

/* The kept messages of a link are in the order they came; while their
 * sequence ranges also rise (a sender whose instances end in order: every
 * loop of blocking calls), the search stops at the first one that starts
 * after `seq`: the copy an instance asks for is then found in the first
 * message or two, however far ahead the sender is. */
const void *cc_find(cc_chan_t *ch, uint32_t seq, size_t *len)
{
    for (unsigned m = ch->in_mask; m != 0; m &= m - 1) {
        const cc_link_in_t *l = &ch->in[__builtin_ctz(m)];
        for (const cc_inbuf_t *b = l->kept; b != NULL; b = b->next) {
            if (!l->unordered && cc_after(b->lo, seq))
                break;
            const void *d = cc_find_in(b, seq, len);
            if (d != NULL)
                return d;
        }
    }
    return NULL;
}

/* Offers the members that lack the data (all of them, or the urgent ones)
 * a copy found in `b` (NULL: in any kept message). A member that looked
 * through every kept message in vain looks again only once another
 * message is kept (m->looked): a waiting rank flushes again and again. */
static void cc_offer(cc_chan_t *ch, const cc_inbuf_t *b, int urgent_only)
{
    for (cc_member_t *m = ch->members, *nx; m != NULL && ch->lacking > 0;
         m = nx) {
        nx = m->next; /* the callback may end the instance (cc_leave) */
        if (!m->lacks || (urgent_only && !m->urgent) ||
            (b == NULL && m->looked == ch->kept_gen))
            continue;
        size_t len;
        const void *d =
            b != NULL ? cc_find_in(b, m->seq, &len) : cc_find(ch, m->seq, &len);
        if (d == NULL) {
            if (b == NULL)
                m->looked = ch->kept_gen;
            continue;
        }
        ch->stats.offered++;
        m->cb(m, d, len);
    }
}

/* ---- receiving ----------------------------------------------------------- */

static void cc_bad(cc_chan_t *ch, const cc_link_in_t *l, const tp_req_t *req,
                   size_t off, const char *why)
{
    ch->stats.bad++;
    ucft_warn(ch->tp->log,
              "bcast: batch #%u of copies from rank %d (%zu bytes, %s): %s "
              "at byte %zu: the rest of it dropped",
              (unsigned)(uint16_t)(l->bseq - 1), l->from, req->length,
              ucft_status_string(req->status), why, off);
}

/* Checks the entries of a received message (coll_wire.h); sets b->len to
 * the bytes of the good ones and b->lo, b->hi. Returns the number of good
 * entries. */
static unsigned cc_check(cc_chan_t *ch, const cc_link_in_t *l,
                         const tp_req_t *req, cc_inbuf_t *b)
{
    coll_wire_batch_t scan;

    b->len = 0;
    if (req->status != UCFT_OK) {
        cc_bad(ch, l, req, 0, "longer than a batch can be");
        return 0;
    }
    coll_wire_batch_scan(b->data, req->length, CC_ENTRY_MAX, &scan);
    if (scan.why != NULL)
        cc_bad(ch, l, req, scan.bad_off, scan.why);
    b->len = scan.len;
    b->lo = scan.lo;
    b->hi = scan.hi;
    return scan.n;
}

/* A message of link l arrived in l->cur: keep it if it may be needed. */
static void cc_take_msg(cc_chan_t *ch, cc_link_in_t *l, const tp_req_t *req)
{
    cc_inbuf_t *b = l->cur;
    uint32_t floor;
    l->cur = NULL;
    l->bseq++;
    ch->stats.received++;
    cc_purge(ch); /* what is kept is bounded here, not at every leave */
    if (cc_check(ch, l, req, b) == 0 ||
        (cc_floor(ch, &floor) && cc_after(floor, b->hi))) {
        cc_inbuf_put(ch, b);
        return;
    }
    if (l->kept != NULL && !cc_after(b->lo, l->kept_hi))
        l->unordered = 1; /* ranges overlap: cc_find scans them all */
    if (l->kept == NULL || cc_after(b->hi, l->kept_hi))
        l->kept_hi = b->hi;
    b->next = NULL;
    *l->kept_tail = b;
    l->kept_tail = &b->next;
    ch->nkept++;
    ch->kept_gen++;
    if (ch->nkept > ch->stats.max_kept)
        ch->stats.max_kept = ch->nkept;
    if (ch->lacking > 0)
        cc_offer(ch, b, ch->flushes);
}

static cc_inbuf_t *cc_inbuf_get(cc_chan_t *ch)
{
    cc_inbuf_t *b = ch->in_spare;
    if (b != NULL) {
        ch->in_spare = b->next;
        return b;
    }
    b = malloc(sizeof(*b) + ch->msg_max);
    if (b != NULL) {
        b->all_next = ch->in_all;
        ch->in_all = b;
    }
    return b;
}

static void cc_in_cb(tp_req_t *req);

/* Keeps link l's standing receive posted, taking what completes at once. */
static void cc_post(cc_chan_t *ch, cc_link_in_t *l)
{
    while (!ch->closed && !l->posted) {
        if (l->cur == NULL && (l->cur = cc_inbuf_get(ch)) == NULL) {
            ucft_error(ch->tp->log,
                       "bcast: no memory to receive copies from rank %d (the "
                       "broadcasts rely on their tree messages from now on)",
                       l->from);
            return;
        }
        l->req = (tp_req_t){.cb = cc_in_cb, .arg = l};
        ucft_status_t st =
            tp_recv(ch->tp, cc_tag(ch, l->from, l->bseq, (int)(l - ch->in)),
                    UCFT_TAG_FULL_MASK, l->cur->data, ch->msg_max, &l->req);
        if (st == UCFT_INPROGRESS) {
            l->posted = 1;
            return;
        }
        if (st != UCFT_OK) {
            ucft_error(ch->tp->log,
                       "bcast: cannot receive copies from rank %d: %s (the "
                       "broadcasts rely on their tree messages from now on)",
                       l->from, ucft_status_string(st));
            return;
        }
        cc_take_msg(ch, l, &l->req);
    }
}

static void cc_in_cb(tp_req_t *req)
{
    cc_link_in_t *l = req->arg;
    cc_chan_t *ch = l->ch;

    l->posted = 0;
    if (ch->closed ||
        (req->status != UCFT_OK && req->status != UCFT_ERR_TRUNCATED))
        return; /* cancelled (cleanup) */
    cc_take_msg(ch, l, req);
    cc_post(ch, l);
}

/* ---- sending ------------------------------------------------------------- */

static cc_outbuf_t *cc_buf_get(cc_chan_t *ch)
{
    cc_outbuf_t *b = ch->spare;
    if (b != NULL) {
        ch->spare = b->next;
    } else {
        b = malloc(sizeof(*b) + ch->msg_max);
        if (b == NULL)
            return NULL;
        b->ch = ch;
        b->all_next = ch->all;
        ch->all = b;
    }
    b->len = 0;
    return b;
}

static void cc_out_cb(tp_req_t *req)
{
    cc_outbuf_t *b = req->arg;
    cc_chan_t *ch = b->ch;
    ch->inflight--;
    b->next = ch->spare;
    ch->spare = b;
}

static void cc_send(cc_chan_t *ch, int link)
{
    cc_link_out_t *l = &ch->out[link];
    cc_outbuf_t *b = l->cur;
    if (b == NULL || l->count == 0)
        return;
    ch->held -= l->count;
    l->count = 0;
    ch->stats.messages++;
    b->req = (tp_req_t){.cb = cc_out_cb, .arg = b, .buffered = 1};
    ucft_status_t st =
        tp_send(ch->tp, l->to, cc_tag(ch, ch->tp->rank, l->bseq, link), b->data,
                b->len, &b->req);
    l->bseq++;
    if (st == UCFT_INPROGRESS) {
        ch->inflight++;
        l->cur = NULL;
        return;
    }
    if (st != UCFT_OK)
        ucft_debug(ch->tp->log, "bcast: copies to rank %d: %s", l->to,
                   ucft_status_string(st));
    b->len = 0;
}

void cc_append(cc_chan_t *ch, int link, uint32_t seq, const void *data,
               size_t len, int now)
{
    cc_link_out_t *l = &ch->out[link];
    if (ch->closed || l->to < 0 || len > CC_ENTRY_MAX)
        return;
    if (l->cur == NULL && (l->cur = cc_buf_get(ch)) == NULL) {
        ucft_error(ch->tp->log,
                   "bcast: no memory for a copy to rank %d (instance #%u): "
                   "not sent",
                   l->to, (unsigned)seq);
        return;
    }
    unsigned char *p = l->cur->data + l->cur->len;
    uint32_t s32 = seq, l32 = (uint32_t)len;
    memcpy(p, &s32, 4);
    memcpy(p + 4, &l32, 4);
    if (len > 0)
        memcpy(p + CC_ENTRY_HDR, data, len);
    memset(p + CC_ENTRY_HDR + len, 0, cc_pad8(len) - len);
    l->cur->len += CC_ENTRY_HDR + cc_pad8(len);
    l->count++;
    ch->held++;
    ch->stats.entries++;
    if (now || l->count >= ch->batch)
        cc_send(ch, link);
}

void cc_flush(cc_chan_t *ch)
{
    if (ch->held > 0)
        for (int i = 0; i < CC_NLINKS; i++)
            cc_send(ch, i);
    if (ch->lacking > 0)
        cc_offer(ch, NULL, 0);
}

/* ---- membership of running instances ------------------------------------ */

void cc_join(cc_chan_t *ch, cc_member_t *m)
{
    if (!ch->any_started || cc_after(m->seq, ch->last_seq))
        ch->last_seq = m->seq;
    ch->any_started = 1;
    m->next = ch->members;
    m->looked = ch->kept_gen - 1; /* not looked yet */
    ch->members = m;
    ch->lacking += m->lacks != 0;
}

void cc_leave(cc_chan_t *ch, cc_member_t *m)
{
    cc_has_data(ch, m);
    for (cc_member_t **p = &ch->members; *p != NULL; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            m->next = NULL;
            break;
        }
}

/* ---- lifetime ------------------------------------------------------------ */

ucft_status_t cc_init(cc_chan_t *ch, tp_t *tp, const coll_comm_params_t *p)
{
    const coll_map_t *map = p->map;
    int n = tp->size, me = tp->rank;
    int pos = map != NULL ? map->pos[me] : me;

    memset(ch, 0, sizeof(*ch));
    ch->tp = tp;
    ch->ctx = p->ctx;
    ch->flushes = p->flushes != 0;
    ch->batch = !ch->flushes || p->batch < 1 ? 1
                : p->batch > CC_BATCH_MAX    ? CC_BATCH_MAX
                                             : (uint16_t)p->batch;
    /* Receivers take what any sender of this driver may send: a driver
     * that never flushes never holds, so its messages are single copies. */
    ch->msg_max = (size_t)(ch->flushes ? CC_BATCH_MAX : 1) * CC_ENTRY_SIZE;
    for (int i = 0; i < CC_NLINKS; i++) {
        int right = i < CC_MAX_R;
        int off = right ? i + 1 : i - CC_MAX_R + 1;
        int to = right ? pos + off : pos - off;
        int from = right ? pos - off : pos + off;
        to = ((to % n) + n) % n;
        from = ((from % n) + n) % n;
        ch->out[i].to = -1;
        ch->in[i].from = -1;
        ch->in[i].ch = ch;
        if (off >= n)
            continue;
        ch->out[i].to = map != NULL ? map->rank[to] : to;
        ch->in[i].from = map != NULL ? map->rank[from] : from;
    }
    for (int i = 0; i < CC_NLINKS; i++)
        ch->in[i].kept_tail = &ch->in[i].kept;
    return UCFT_OK;
}

/* Posts link i's standing receive (once). */
static void cc_open(cc_chan_t *ch, int i)
{
    if (ch->in[i].from < 0 || (ch->in_mask >> i & 1))
        return;
    ch->in_mask |= 1u << i;
    cc_post(ch, &ch->in[i]);
}

void cc_need(cc_chan_t *ch, int f)
{
    if (f > CC_MAX_F)
        f = CC_MAX_F;
    if (f <= ch->need_f || ch->closed)
        return;
    ch->need_f = f;
    /* A copy sent rightwards to offset j comes from my left neighbour at
     * offset j, on link right j; likewise leftwards. */
    unsigned d = (1u << f) - 1;
    for (unsigned j = 1; j <= d - d / 2; j++)
        cc_open(ch, cc_link_right((int)j));
    for (unsigned j = 1; j <= d / 2; j++)
        cc_open(ch, cc_link_left((int)j));
}

void cc_on_failure(cc_chan_t *ch, int rank)
{
    (void)rank;
    cc_flush(ch);
}

void cc_cleanup(cc_chan_t *ch)
{
    if (ch->closed)
        return;
    cc_flush(ch);
    ucft_info(ch->tp->log,
              "bcast copy channel: %llu copies sent in %llu messages; "
              "%llu messages received (at most %llu kept), %llu copies "
              "used, %llu malformed",
              (unsigned long long)ch->stats.entries,
              (unsigned long long)ch->stats.messages,
              (unsigned long long)ch->stats.received,
              (unsigned long long)ch->stats.max_kept,
              (unsigned long long)ch->stats.offered,
              (unsigned long long)ch->stats.bad);
    ch->closed = 1;
    for (int i = 0; i < CC_NLINKS; i++)
        if (ch->in[i].posted)
            tp_cancel(ch->tp, &ch->in[i].req);
}

int cc_idle(const cc_chan_t *ch)
{
    if (ch->inflight > 0)
        return 0;
    for (int i = 0; i < CC_NLINKS; i++)
        if (ch->in[i].posted)
            return 0;
    return 1;
}

void cc_destroy(cc_chan_t *ch)
{
    while (ch->all != NULL) {
        cc_outbuf_t *b = ch->all;
        ch->all = b->all_next;
        free(b);
    }
    while (ch->in_all != NULL) {
        cc_inbuf_t *b = ch->in_all;
        ch->in_all = b->all_next;
        free(b);
    }
    for (int i = 0; i < CC_NLINKS; i++) {
        ch->out[i].cur = NULL;
        ch->in[i].cur = ch->in[i].kept = NULL;
        ch->in[i].kept_tail = &ch->in[i].kept;
    }
    ch->spare = NULL;
    ch->in_spare = NULL;
    ch->nkept = 0;
}

/* ---- the driver's view --------------------------------------------------- */

static ucft_status_t cc_ops_init(void *cs, tp_t *tp,
                                 const coll_comm_params_t *p)
{
    return cc_init(cs, tp, p);
}

static void cc_ops_flush(void *cs)
{
    cc_flush(cs);
}

static void cc_ops_on_failure(void *cs, int rank)
{
    cc_on_failure(cs, rank);
}

static void cc_ops_cleanup(void *cs)
{
    cc_cleanup(cs);
}

static int cc_ops_idle(const void *cs)
{
    return cc_idle(cs);
}

static void cc_ops_destroy(void *cs)
{
    cc_destroy(cs);
}

const coll_comm_ops_t cc_comm_ops = {
    .size = sizeof(cc_chan_t),
    .init = cc_ops_init,
    .flush = cc_ops_flush,
    .on_failure = cc_ops_on_failure,
    .cleanup = cc_ops_cleanup,
    .idle = cc_ops_idle,
    .destroy = cc_ops_destroy,
    .kind_first = COLL_KIND_BCAST_BATCH,
    .kind_last = COLL_KIND_BCAST_BATCH_LAST,
};
