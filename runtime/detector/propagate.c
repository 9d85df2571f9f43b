/* Failure news over the binomial graph: see propagate.h. */
#include "runtime/detector/propagate.h"
#include "runtime/detector/ctrl_wire.h"
#include "transport/ctrl_kinds.h"

#include <stdlib.h>
#include <string.h>

static int prop_levels(int n)
{
    int levels = 0;
    for (long d = 1; d <= n / 2; d *= 2)
        levels++;
    return levels;
}

static void prop_take(void *arg, const standing_t *s);

ucft_status_t prop_init(prop_t *p, tp_t *tp, mb_t *mb, int window,
                        const prop_ops_t *ops)
{
    memset(p, 0, sizeof(*p));
    p->tp = tp;
    p->mb = mb;
    p->me = tp->rank;
    p->ops = *ops;
    p->nlinks = 2 * prop_levels(mb->size);
    standing_init(&p->recv, tp, UCFT_CTRL_FAILED, p->rbuf, sizeof(p->rbuf), 0,
                  prop_take, p);
    p->window = window > 0 ? window : PROP_DEFAULT_WINDOW;
    p->sends = calloc((size_t)p->window + 1, sizeof(*p->sends));
    p->upto = calloc((size_t)p->nlinks + 1, sizeof(*p->upto));
    if (p->sends == NULL || p->upto == NULL) {
        prop_cleanup(p);
        return UCFT_ERR_NO_MEMORY;
    }
    for (int i = 0; i <= p->window; i++)
        p->sends[i].p = p;
    return UCFT_OK;
}

void prop_cleanup(prop_t *p)
{
    free(p->sends);
    free(p->upto);
    p->sends = NULL;
    p->upto = NULL;
}

/* The ring neighbour at distance 1 of link 0 (+1) or 1 (-1). */
static int prop_neighbour(const prop_t *p, int link)
{
    const int n = p->mb->size;
    return (p->me + ((link & 1) ? -1 : +1) + n) % n;
}

int prop_link_target(const prop_t *p, int link)
{
    const int n = p->mb->size;
    long dist = 1L << (link / 2);
    int dir = (link & 1) ? -1 : +1;

    if (dist == 1) {
        int t = mb_live_step(p->mb, p->me, dir);
        /* For N = 2, +1 and -1 are the same rank: send once. */
        if (dir < 0 && n == 2)
            return -1;
        return t == p->me ? -1 : t;
    }
    /* me - N/2 == me + N/2 when N = 2^(i+1): send once. */
    if (dir < 0 && 2 * dist == n)
        return -1;
    int t = (int)(((long)p->me + dir * dist % n + n) % n);
    if (t == p->me || mb_is_failed(p->mb, t))
        return -1;
    return t;
}

static void prop_send_cb(tp_req_t *req)
{
    prop_send_t *s = (prop_send_t *)req;
    s->busy = 0;
    if (s != &s->p->sends[s->p->window])
        prop_pump(s->p);
}

/* Sends facts[0..n) (n >= 1) to dst on slot s. */
static void prop_post(prop_t *p, prop_send_t *s, int dst, const int *facts,
                      size_t n)
{
    s->body[0] = (uint32_t)facts[0];
    s->body[1] = (uint32_t)mb_epoch(p->mb);
    for (size_t i = 1; i < n; i++)
        s->body[i + 1] = (uint32_t)facts[i];
    s->req.cb = prop_send_cb;
    s->req.arg = p;
    ucft_status_t st =
        tp_send(p->tp, dst, ucft_ctrl_tag((uint32_t)p->me, UCFT_CTRL_FAILED),
                s->body, (n + 1) * sizeof(uint32_t), &s->req);
    if (st == UCFT_INPROGRESS)
        s->busy = 1;
    if (st == UCFT_OK || st == UCFT_INPROGRESS) {
        p->stats.sent++;
        p->stats.facts_sent += n;
    }
}

static prop_send_t *prop_free_slot(prop_t *p)
{
    for (int i = 0; i < p->window; i++)
        if (!p->sends[i].busy)
            return &p->sends[i];
    return NULL;
}

/* The next message of link `l`: the facts after its cursor (at most a
 * batch) that its target does not learn by itself; moves the cursor past
 * them. Returns the count (0: nothing to send now) and the target. */
static size_t prop_batch(prop_t *p, int l, size_t count, int *facts, int *dst)
{
    int t = prop_link_target(p, l);
    size_t n = 0;
    *dst = t;
    if (t < 0) {
        p->upto[l] = count; /* skipped: failed, self or a duplicate */
        return 0;
    }
    if (l < 2 && t != prop_neighbour(p, l))
        p->stats.walked++; /* past failed neighbours */
    while (p->upto[l] < count && n < CTRL_WIRE_MAX_BATCH) {
        int fact = mb_nth(p->mb, p->upto[l]++);
        if (p->ops.learns_alone_cb != NULL &&
            p->ops.learns_alone_cb(p->ops.arg, t, fact)) {
            p->stats.skipped_alone++;
            continue;
        }
        facts[n++] = fact;
    }
    return n;
}

void prop_pump(prop_t *p)
{
    int facts[CTRL_WIRE_MAX_BATCH];
    if (p->held > 0)
        return; /* prop_release pumps */
    for (int idle = 0; p->running && idle < p->nlinks;
         p->link = (p->link + 1) % p->nlinks) {
        size_t count = mb_count(p->mb);
        int l = p->link;
        if (p->upto[l] >= count) {
            idle++;
            continue;
        }
        prop_send_t *s = prop_free_slot(p);
        if (s == NULL)
            return; /* resumed by a send completion, at this link */
        int dst;
        size_t n = prop_batch(p, l, count, facts, &dst);
        if (n > 0)
            prop_post(p, s, dst, facts, n);
        idle = 0;
    }
}

void prop_notify(prop_t *p, int rank)
{
    prop_send_t *s = &p->sends[p->window];
    if (!p->running || rank == p->me)
        return;
    if (s->busy) {
        p->stats.notices_skipped++;
        return;
    }
    prop_post(p, s, rank, &rank, 1);
}

static void prop_on_msg(prop_t *p, int src, const void *body, size_t len)
{
    size_t n = ctrl_wire_nfacts(len);

    p->stats.received++;
    if (n == 0)
        return; /* not a failure message's length: dropped */
    if (mb_is_failed(p->mb, src)) {
        p->stats.fenced++;
        return;
    }
    /* Every fact of the message learnt before any is forwarded: they
     * leave together, one message per link. */
    prop_hold(p);
    for (size_t i = 0; i < n; i++) {
        ctrl_fact_kind_t kind;
        int fact = -1;
        (void)ctrl_wire_fact(body, len, i, p->mb->size, p->me, &kind, &fact);
        if (kind == CTRL_FACT_SELF) {
            p->held--; /* stopped: nothing to forward */
            p->ops.self_cb(p->ops.arg, src);
            return;
        }
        if (kind == CTRL_FACT_NONE)
            continue;
        if (mb_is_failed(p->mb, fact)) {
            p->stats.dups++;
            continue;
        }
        p->ops.news_cb(p->ops.arg, fact, src);
        if (!p->running || mb_is_failed(p->mb, src))
            break; /* stopped, or the news made the sender failed */
    }
    prop_release(p);
}

void prop_hold(prop_t *p)
{
    p->held++;
}

void prop_release(prop_t *p)
{
    if (p->held > 0 && --p->held == 0)
        prop_pump(p);
}

static void prop_take(void *arg, const standing_t *s)
{
    prop_t *p = arg;
    prop_on_msg(p, (int)ucft_tag_src(s->req.tag), p->rbuf, s->req.length);
}

/* tp_watch on every live link. */
static void prop_connect(prop_t *p)
{
    for (int l = 0; l < p->nlinks; l++) {
        int t = prop_link_target(p, l);
        if (t >= 0)
            tp_watch(p->tp, t);
    }
}

ucft_status_t prop_start(prop_t *p)
{
    p->running = 1;
    prop_connect(p);
    ucft_status_t st = standing_start(&p->recv);
    if (st != UCFT_OK)
        p->running = 0;
    return st;
}

void prop_stop(prop_t *p)
{
    if (!p->running)
        return;
    p->running = 0;
    standing_stop(&p->recv);
}

int prop_idle(const prop_t *p)
{
    if (standing_posted(&p->recv))
        return 0;
    for (int i = 0; i <= p->window; i++)
        if (p->sends[i].busy)
            return 0;
    return 1;
}
