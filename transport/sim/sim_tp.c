/*
 * The tp operations of a simulated rank: send, receive with matching and an
 * unexpected queue, probe, cancel, peer_failed, clock and timers. Every
 * completion is an event of the world loop (sim_world.c), never a call from
 * inside the posting function (contract T3).
 */
#include "sim_priv.h"

#include <stdlib.h>
#include <string.h>

#define SIM_PROGRESS_BATCH 64

uint64_t sim__bytes_ns(const sim_loggp_t *p, size_t len)
{
    if (len <= 1)
        return 0;
    return ((uint64_t)(len - 1) * p->G_ps + 999) / 1000;
}

static sim_rank_ext_t *rank_ext(sim_rank_t *r)
{
    if (r->ext == NULL) {
        r->ext = calloc(1, sizeof(*r->ext));
        if (r->ext != NULL)
            ucft__timerq_init(&r->ext->timers);
    }
    return r->ext;
}

int sim__rank_declared_failed(const sim_rank_t *r, int peer)
{
    if (r->ext == NULL || r->ext->nfailed == 0)
        return 0;
    size_t lo = 0, hi = r->ext->nfailed;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->ext->failed[mid] < peer)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->ext->nfailed && r->ext->failed[lo] == peer;
}

void sim__rank_release(sim_world_t *w, sim_rank_t *r, int disarm)
{
    while (r->unexp_head != NULL) {
        sim_msg_t *m = r->unexp_head;
        r->unexp_head = m->next;
        sim__msg_free(w, m);
    }
    r->unexp_tail = NULL;
    while (r->posted_head != NULL) {
        sim_recv_t *rec = r->posted_head;
        r->posted_head = rec->next;
        sim__pool_put(&w->recv_pool, rec);
    }
    r->posted_tail = NULL;
    if (r->ext != NULL) {
        if (disarm)
            ucft__timerq_cleanup(&r->ext->timers);
        else
            free(r->ext->timers.heap);
        free(r->ext->failed);
        free(r->ext->rndv);
        free(r->ext);
        r->ext = NULL;
    }
}

/* Writes a matched message into a receive request; the caller frees `m`. */
static void fill_recv(tp_req_t *req, void *buf, size_t len, const sim_msg_t *m)
{
    size_t n = m->len < len ? m->len : len;
    if (n > 0)
        memcpy(buf, m->data, n);
    req->tag = m->tag;
    req->length = n;
    req->status = m->len > len ? UCFT_ERR_TRUNCATED : UCFT_OK;
    req->priv = NULL;
}

/* Remembers a rendezvous send until its receiver matches it. */
static ucft_status_t rndv_add(sim_rank_t *r, tp_req_t *req, uint32_t dst)
{
    sim_rank_ext_t *x = rank_ext(r);
    if (x == NULL)
        return UCFT_ERR_NO_MEMORY;
    if (sim__grow((void **)&x->rndv, &x->rndv_cap, x->nrndv, sizeof(*x->rndv),
                  8) != 0)
        return UCFT_ERR_NO_MEMORY;
    x->rndv[x->nrndv++] = (sim_rndv_t){req, dst};
    return UCFT_OK;
}

/* Completes rendezvous sends of rank `src`: with `req`, that request's (a
 * receiver matched its message); with req NULL, every one to `dst` (src
 * declared dst failed; SEND_DONE then reports the failure). A send of a
 * sender that died since is gone with its extras. */
static void rndv_complete(sim_world_t *w, uint32_t src, const tp_req_t *req,
                          uint32_t dst)
{
    sim_rank_t *r = &w->ranks[src];
    sim_rank_ext_t *x = r->ext;
    if ((r->flags & SIM_RANK_DEAD) || x == NULL)
        return;
    for (size_t i = 0; i < x->nrndv;) {
        sim_rndv_t d = x->rndv[i];
        if (req != NULL ? d.req != req : d.dst != dst) {
            i++;
            continue;
        }
        x->rndv[i] = x->rndv[--x->nrndv];
        if (sim__push(w, w->now + w->params.loggp.o_ns, SIM_EV_SEND_DONE, src,
                      d.dst, d.req) != UCFT_OK)
            ucft_error(w->params.log,
                       "sim: no memory to complete a send of rank %u", src);
        else
            r->inflight++;
        if (req != NULL)
            return;
    }
}

/* A receive took `m`: its sender, if it waits for that, may go on. */
static void matched(sim_world_t *w, const sim_msg_t *m)
{
    if (m->sreq != NULL)
        rndv_complete(w, m->src, m->sreq, 0);
}

void sim__deliver(sim_world_t *w, sim_msg_t *m)
{
    sim_rank_t *dst = &w->ranks[m->dst];

    if ((dst->flags & SIM_RANK_DEAD) ||
        sim__rank_declared_failed(dst, (int)m->src)) {
        w->st.dropped++;
        sim__msg_free(w, m);
        return;
    }
    w->st.delivered++;
    for (sim_recv_t *rec = dst->posted_head; rec != NULL; rec = rec->next) {
        if (((m->tag ^ rec->tag) & rec->mask) != 0)
            continue;
        if (rec->prev != NULL)
            rec->prev->next = rec->next;
        else
            dst->posted_head = rec->next;
        if (rec->next != NULL)
            rec->next->prev = rec->prev;
        else
            dst->posted_tail = rec->prev;
        tp_req_t *req = rec->req;
        fill_recv(req, rec->buf, rec->len, m);
        sim__pool_put(&w->recv_pool, rec);
        matched(w, m);
        sim__msg_free(w, m);
        req->cb(req);
        return;
    }
    m->next = NULL;
    if (dst->unexp_tail != NULL)
        dst->unexp_tail->next = m;
    else
        dst->unexp_head = m;
    dst->unexp_tail = m;
}

static ucft_status_t sim_send(tp_t *tp, int dst, uint64_t tag, const void *buf,
                              size_t len, tp_req_t *req)
{
    sim_rank_t *r = sim_rank_of(tp);
    sim_world_t *w = sim__world_of(tp);
    const sim_loggp_t *p = &w->params.loggp;

    if (req == NULL || req->cb == NULL || dst < 0 || dst >= tp->size ||
        (len > 0 && buf == NULL))
        return UCFT_ERR_INVALID_PARAM;
    req->priv = NULL;
    if (r->flags & SIM_RANK_DEAD)
        return UCFT_INPROGRESS; /* swallowed: never completes */
    if (sim__rank_declared_failed(r, dst))
        return UCFT_ERR_PROC_FAILED;
    if ((r->flags & SIM_RANK_SEND_RULES) && sim__send_rules(w, tp->rank, tag))
        return UCFT_INPROGRESS; /* died just before this send */
    if (sim__reserve(w, 2) != UCFT_OK)
        return UCFT_ERR_NO_MEMORY;
    sim_msg_t *m = sim__pool_get(&w->msg_pool);
    if (m == NULL)
        return UCFT_ERR_NO_MEMORY;
    m->data = m->inl;
    if (len > SIM_MSG_INLINE) {
        m->data = malloc(len);
        if (m->data == NULL) {
            m->data = m->inl;
            sim__msg_free(w, m);
            return UCFT_ERR_NO_MEMORY;
        }
    }
    int rndv =
        w->params.rndv_min > 0 && len >= w->params.rndv_min && !req->buffered;
    if (rndv && rndv_add(r, req, (uint32_t)dst) != UCFT_OK) {
        sim__msg_free(w, m);
        return UCFT_ERR_NO_MEMORY;
    }
    if (len > 0)
        memcpy(m->data, buf, len);
    m->next = NULL;
    m->tag = tag;
    m->len = len;
    m->src = (uint32_t)tp->rank;
    m->dst = (uint32_t)dst;
    m->sreq = rndv ? req : NULL;

    uint64_t bytes = sim__bytes_ns(p, len);
    uint64_t ts = w->now > r->send_free ? w->now : r->send_free;
    uint64_t busy = p->o_ns + bytes;
    r->send_free = ts + (busy > p->g_ns ? busy : p->g_ns);
    m->start = ts;
    uint64_t ta = ts + p->o_ns + bytes + p->L_ns;
    sim__push(w, ta + p->o_ns, SIM_EV_ARRIVE, (uint32_t)dst, (uint32_t)tp->rank,
              m);
    r->inflight++;
    if (!rndv) {
        sim__push(w, ts + p->o_ns, SIM_EV_SEND_DONE, (uint32_t)tp->rank,
                  (uint32_t)dst, req);
        r->inflight++;
    }
    w->st.messages++;
    w->st.bytes += len;
    if (w->params.domain != NULL &&
        w->params.domain[tp->rank] != w->params.domain[dst])
        w->st.cross_domain++;
    return UCFT_INPROGRESS;
}

static ucft_status_t sim_recv(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                              size_t len, tp_req_t *req)
{
    sim_rank_t *r = sim_rank_of(tp);
    sim_world_t *w = sim__world_of(tp);

    if (req == NULL || req->cb == NULL || (len > 0 && buf == NULL))
        return UCFT_ERR_INVALID_PARAM;
    req->priv = NULL;
    if (r->flags & SIM_RANK_DEAD)
        return UCFT_INPROGRESS;

    sim_msg_t *prev = NULL;
    for (sim_msg_t *m = r->unexp_head; m != NULL; prev = m, m = m->next) {
        if (((m->tag ^ tag) & mask) != 0)
            continue;
        if (sim__reserve(w, 1) != UCFT_OK)
            return UCFT_ERR_NO_MEMORY;
        if (prev != NULL)
            prev->next = m->next;
        else
            r->unexp_head = m->next;
        if (r->unexp_tail == m)
            r->unexp_tail = prev;
        fill_recv(req, buf, len, m);
        matched(w, m);
        sim__msg_free(w, m);
        sim__push(w, w->now, SIM_EV_RECV_DONE, (uint32_t)tp->rank, 0, req);
        return UCFT_INPROGRESS;
    }

    sim_recv_t *rec = sim__pool_get(&w->recv_pool);
    if (rec == NULL)
        return UCFT_ERR_NO_MEMORY;
    rec->tag = tag;
    rec->mask = mask;
    rec->buf = buf;
    rec->len = len;
    rec->req = req;
    rec->next = NULL;
    rec->prev = r->posted_tail;
    if (r->posted_tail != NULL)
        r->posted_tail->next = rec;
    else
        r->posted_head = rec;
    r->posted_tail = rec;
    req->priv = rec;
    return UCFT_INPROGRESS;
}

static ucft_status_t sim_probe(tp_t *tp, uint64_t tag, uint64_t mask,
                               tp_probe_info_t *info)
{
    sim_rank_t *r = sim_rank_of(tp);

    if (r->flags & SIM_RANK_DEAD)
        return UCFT_ERR_NO_MESSAGE;
    for (sim_msg_t *m = r->unexp_head; m != NULL; m = m->next) {
        if (((m->tag ^ tag) & mask) == 0) {
            info->tag = m->tag;
            info->length = m->len;
            return UCFT_OK;
        }
    }
    return UCFT_ERR_NO_MESSAGE;
}

static void sim_cancel(tp_t *tp, tp_req_t *req)
{
    sim_rank_t *r = sim_rank_of(tp);
    sim_world_t *w = sim__world_of(tp);
    sim_recv_t *rec = req->priv;

    if ((r->flags & SIM_RANK_DEAD) || rec == NULL || rec->req != req)
        return;
    if (sim__reserve(w, 1) != UCFT_OK)
        return; /* not cancelled: it may still match */
    if (rec->prev != NULL)
        rec->prev->next = rec->next;
    else
        r->posted_head = rec->next;
    if (rec->next != NULL)
        rec->next->prev = rec->prev;
    else
        r->posted_tail = rec->prev;
    sim__pool_put(&w->recv_pool, rec);
    req->priv = NULL;
    req->status = UCFT_ERR_CANCELED;
    req->length = 0;
    sim__push(w, w->now, SIM_EV_RECV_DONE, (uint32_t)tp->rank, 0, req);
}

static void sim_peer_failed(tp_t *tp, int rank)
{
    sim_rank_t *r = sim_rank_of(tp);
    sim_rank_ext_t *x;

    if ((r->flags & SIM_RANK_DEAD) || rank < 0 || rank >= tp->size ||
        sim__rank_declared_failed(r, rank))
        return;
    x = rank_ext(r);
    if (x == NULL)
        return;
    if (sim__grow((void **)&x->failed, &x->failed_cap, x->nfailed,
                  sizeof(*x->failed), 4) != 0)
        return;
    size_t i = x->nfailed++;
    while (i > 0 && x->failed[i - 1] > rank) {
        x->failed[i] = x->failed[i - 1];
        i--;
    }
    x->failed[i] = rank;
    ucft_debug(tp->log, "sim: rank %d declares rank %d failed", tp->rank, rank);
    /* Its rendezvous sends to the dead rank end now (T5). */
    rndv_complete(sim__world_of(tp), (uint32_t)tp->rank, NULL, (uint32_t)rank);
}

static void sim_address(tp_t *tp, const void **addr, size_t *len)
{
    *addr = &tp->rank;
    *len = sizeof(tp->rank);
}

/* Runs world events until this rank's messages have arrived and its send
 * completions have run (T9; sim.h). */
static ucft_status_t sim_flush(tp_t *tp, uint64_t timeout_ns)
{
    sim_rank_t *r = sim_rank_of(tp);
    sim_world_t *w = sim__world_of(tp);
    uint64_t now = sim_world_now(w);
    /* UINT64_MAX would not move the clock: the deadline stops below it. */
    uint64_t deadline =
        timeout_ns < UINT64_MAX - 1 - now ? now + timeout_ns : UINT64_MAX - 1;

    if (r->flags & SIM_RANK_DEAD)
        return UCFT_OK;
    /* One event at a time: a run that handles fewer events than it may
     * moves the clock on to its bound. 0 events: inside the event loop, or
     * nothing due before the deadline (the clock is at the deadline now). */
    while (r->inflight > 0 && sim_world_run(w, deadline, 1) > 0)
        ;
    return r->inflight > 0 ? UCFT_ERR_TIMED_OUT : UCFT_OK;
}

static unsigned sim_progress(tp_t *tp)
{
    return (unsigned)sim_world_run(sim__world_of(tp), UINT64_MAX,
                                   SIM_PROGRESS_BATCH);
}

static int sim_fd(tp_t *tp)
{
    return -1;
}

static ucft_status_t sim_arm(tp_t *tp)
{
    return UCFT_OK;
}

static uint64_t sim_now(tp_t *tp)
{
    return sim_world_now(sim__world_of(tp));
}

static ucft_status_t sim_timer_start(tp_t *tp, ucft_timer_t *t,
                                     uint64_t deadline)
{
    sim_rank_t *r = sim_rank_of(tp);
    sim_world_t *w = sim__world_of(tp);
    sim_rank_ext_t *x;
    ucft_status_t st;

    if (r->flags & SIM_RANK_DEAD)
        return UCFT_OK; /* never fires */
    x = rank_ext(r);
    if (x == NULL || sim__reserve(w, 1) != UCFT_OK)
        return UCFT_ERR_NO_MEMORY;
    st = ucft__timerq_add(&x->timers, t, deadline);
    if (st != UCFT_OK)
        return st;
    return sim__push(w, deadline, SIM_EV_TIMER, (uint32_t)tp->rank, 0, NULL);
}

static void sim_timer_stop(tp_t *tp, ucft_timer_t *t)
{
    sim_rank_t *r = sim_rank_of(tp);

    if (r->ext != NULL)
        ucft__timerq_remove(&r->ext->timers, t);
}

static uint64_t sim_timer_next(tp_t *tp)
{
    sim_rank_t *r = sim_rank_of(tp);

    if (r->ext == NULL || (r->flags & SIM_RANK_DEAD))
        return UINT64_MAX;
    return ucft__timerq_next(&r->ext->timers);
}

static void sim_destroy(tp_t *tp)
{
    /* Ranks belong to the world: sim_world_destroy() frees them. */
}

const tp_ops_t sim_tp_ops = {
    .name = "sim",
    .send = sim_send,
    .recv = sim_recv,
    .probe = sim_probe,
    .cancel = sim_cancel,
    .peer_failed = sim_peer_failed,
    .address = sim_address,
    .flush = sim_flush,
    .progress = sim_progress,
    .fd = sim_fd,
    .arm = sim_arm,
    .now = sim_now,
    .timer_start = sim_timer_start,
    .timer_stop = sim_timer_stop,
    .timer_next = sim_timer_next,
    .destroy = sim_destroy,
};
