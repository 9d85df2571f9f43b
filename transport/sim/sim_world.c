/*
 * The sim world: ranks, simulated clock, the event heap and its loop,
 * failure injection, statistics and the trace hash. The tp operations that
 * ranks call are in sim_tp.c.
 */
#include "sim_priv.h"

#include <stdlib.h>
#include <string.h>

#define SIM_SLAB_BYTES  (64u * 1024u)
#define SIM_TIMER_BATCH 1024u
#define SIM_FNV_PRIME   0x100000001b3ull
#define SIM_FNV_BASIS   0xcbf29ce484222325ull

/* ---- pools ------------------------------------------------------------ */

static void pool_init(sim_pool_t *p, size_t elem)
{
    memset(p, 0, sizeof(*p));
    p->elem = (elem + 15) & ~(size_t)15;
}

static void pool_cleanup(sim_pool_t *p)
{
    for (size_t i = 0; i < p->nslabs; i++)
        free(p->slabs[i]);
    free(p->slabs);
    memset(p, 0, sizeof(*p));
}

void *sim__pool_get(sim_pool_t *p)
{
    if (p->free == NULL) {
        if (p->nslabs == p->slab_cap) {
            size_t cap = p->slab_cap ? 2 * p->slab_cap : 16;
            void **s = realloc(p->slabs, cap * sizeof(*s));
            if (s == NULL)
                return NULL;
            p->slabs = s;
            p->slab_cap = cap;
        }
        size_t n = SIM_SLAB_BYTES / p->elem;
        char *slab = malloc(n * p->elem);
        if (slab == NULL)
            return NULL;
        p->slabs[p->nslabs++] = slab;
        for (size_t i = n; i-- > 0;) {
            *(void **)(slab + i * p->elem) = p->free;
            p->free = slab + i * p->elem;
        }
    }
    void *b = p->free;
    p->free = *(void **)b;
    return b;
}

void sim__pool_put(sim_pool_t *p, void *block)
{
    *(void **)block = p->free;
    p->free = block;
}

int sim__grow(void **arr, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    void *a = realloc(*arr, c * size);
    if (a == NULL)
        return -1;
    *arr = a;
    *cap = c;
    return 0;
}

void sim__msg_free(sim_world_t *w, sim_msg_t *m)
{
    if (m->data != m->inl)
        free(m->data);
    sim__pool_put(&w->msg_pool, m);
}

/* ---- parameters --------------------------------------------------------- */

void sim_params_default(sim_params_t *params, int nranks)
{
    memset(params, 0, sizeof(*params));
    params->nranks = nranks;
    params->loggp.L_ns = SIM_LOGGP_DEFAULT_L_NS;
    params->loggp.o_ns = SIM_LOGGP_DEFAULT_O_NS;
    params->loggp.g_ns = SIM_LOGGP_DEFAULT_G_NS;
    params->loggp.G_ps = SIM_LOGGP_DEFAULT_GB_PS;
    params->seed = 1;
    params->notify = SIM_NOTIFY_DELAY;
    params->detect_delay_ns = SIM_DEFAULT_DETECT_DELAY_NS;
}

int sim_loggp_parse(const char *text, sim_loggp_t *loggp)
{
    double v[4];
    const char *p = text;
    char *end;

    if (text == NULL)
        return -1;
    for (int i = 0; i < 4; i++) {
        v[i] = strtod(p, &end);
        if (end == p || !(v[i] >= 0 && v[i] <= 1e9)) /* NaN too */
            return -1;
        if (i < 3 && *end != ',')
            return -1;
        p = end + 1;
    }
    if (*end != '\0')
        return -1;
    loggp->L_ns = (uint64_t)(v[0] * 1000.0 + 0.5);
    loggp->o_ns = (uint64_t)(v[1] * 1000.0 + 0.5);
    loggp->g_ns = (uint64_t)(v[2] * 1000.0 + 0.5);
    loggp->G_ps = (uint64_t)(v[3] * 1000.0 + 0.5);
    return 0;
}

/* ---- event heap ---------------------------------------------------------- */

static inline int ev_before(const sim_event_t *a, const sim_event_t *b)
{
    return a->time < b->time || (a->time == b->time && a->key < b->key);
}

ucft_status_t sim__reserve(sim_world_t *w, size_t more)
{
    if (w->nev + more > w->ev_cap) {
        size_t cap = w->ev_cap ? 2 * w->ev_cap : 1024;
        while (cap < w->nev + more)
            cap *= 2;
        sim_event_t *h = realloc(w->heap, cap * sizeof(*h));
        if (h == NULL)
            return UCFT_ERR_NO_MEMORY;
        w->heap = h;
        w->ev_cap = cap;
    }
    return UCFT_OK;
}

ucft_status_t sim__push(sim_world_t *w, uint64_t time, sim_ev_type_t type,
                        uint32_t rank, uint32_t aux, void *ptr)
{
    if (sim__reserve(w, 1) != UCFT_OK)
        return UCFT_ERR_NO_MEMORY;
    sim_event_t ev = {.time = time < w->now ? w->now : time,
                      .key = (w->seq++ << 4) | (uint64_t)type,
                      .ptr = ptr,
                      .rank = rank,
                      .aux = aux};
    size_t i = w->nev++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_before(&ev, &w->heap[p]))
            break;
        w->heap[i] = w->heap[p];
        i = p;
    }
    w->heap[i] = ev;
    return UCFT_OK;
}

static void pop(sim_world_t *w, sim_event_t *out)
{
    *out = w->heap[0];
    sim_event_t last = w->heap[--w->nev];
    size_t i = 0, n = w->nev;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ev_before(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!ev_before(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n > 0)
        w->heap[i] = last;
}

static inline void fold(sim_world_t *w, uint64_t v)
{
    w->hash = (w->hash ^ v) * SIM_FNV_PRIME;
}

/* ---- world ----------------------------------------------------------------
 */

ucft_status_t sim_world_create(const sim_params_t *params,
                               sim_world_t **world_p)
{
    sim_world_t *w;
    int n = params->nranks;

    if (n < 1 || (uint64_t)n > UCFT_TAG_MAX_RANKS)
        return UCFT_ERR_INVALID_PARAM;
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return UCFT_ERR_NO_MEMORY;
    w->params = *params;
    w->in_timers = -1;
    w->block = calloc(1, sizeof(*w->block) + (size_t)n * sizeof(sim_rank_t));
    if (w->block == NULL)
        goto err_world;
    w->block->world = w;
    w->ranks = w->block->ranks;
    for (int r = 0; r < n; r++) {
        tp_t *tp = &w->ranks[r].tp;
        tp->ops = &sim_tp_ops;
        tp->rank = r;
        tp->size = n;
        tp->log = params->log;
    }
    pool_init(&w->msg_pool, sizeof(sim_msg_t));
    pool_init(&w->recv_pool, sizeof(sim_recv_t));
    w->hash = SIM_FNV_BASIS;
    w->rng = params->seed;
    *world_p = w;
    return UCFT_OK;

err_world:
    free(w);
    return UCFT_ERR_NO_MEMORY;
}

void sim_world_destroy(sim_world_t *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; i < w->nev; i++) {
        sim_event_t *e = &w->heap[i];
        unsigned type = (unsigned)(e->key & 15);
        if (type == SIM_EV_ARRIVE || type == SIM_EV_DELIVER)
            sim__msg_free(w, e->ptr);
    }
    for (int r = 0; r < w->params.nranks; r++)
        sim__rank_release(w, &w->ranks[r], 0);
    free(w->heap);
    pool_cleanup(&w->msg_pool);
    pool_cleanup(&w->recv_pool);
    free(w->rules);
    free(w->deaths);
    free(w->block);
    free(w);
}

sim_world_t *sim__world_of(tp_t *tp)
{
    sim_rank_t *r0 = sim_rank_of(tp) - tp->rank;
    sim_rank_block_t *b =
        (sim_rank_block_t *)((char *)r0 - offsetof(sim_rank_block_t, ranks));
    return b->world;
}

int sim_world_size(const sim_world_t *w)
{
    return w->params.nranks;
}

tp_t *sim_world_tp(sim_world_t *w, int rank)
{
    if (rank < 0 || rank >= w->params.nranks)
        return NULL;
    return &w->ranks[rank].tp;
}

uint64_t sim_world_now(const sim_world_t *w)
{
    return w->now;
}

int sim_world_quiescent(const sim_world_t *w)
{
    return w->nev == 0;
}

int sim_world_is_dead(const sim_world_t *w, int rank)
{
    if (rank < 0 || rank >= w->params.nranks)
        return 0;
    return (w->ranks[rank].flags & SIM_RANK_DEAD) != 0;
}

uint64_t sim_world_death_time(const sim_world_t *w, int rank)
{
    if (!sim_world_is_dead(w, rank))
        return UINT64_MAX;
    for (size_t i = 0; i < w->ndeaths; i++)
        if (w->deaths[i].rank == (uint32_t)rank)
            return w->deaths[i].time;
    return UINT64_MAX;
}

uint64_t sim_world_trace_hash(const sim_world_t *w)
{
    return w->hash;
}

void sim_world_stats(const sim_world_t *w, sim_stats_t *stats)
{
    *stats = w->st;
    stats->now = w->now;
    stats->pending_events = w->nev;
}

/* ---- the event loop --------------------------------------------------------
 */

static void notify_one(sim_world_t *w, int r, uint32_t dead)
{
    sim_rank_t *rk = &w->ranks[r];
    if ((uint32_t)r == dead || (rk->flags & SIM_RANK_DEAD))
        return;
    if (rk->tp.peer_error_cb != NULL)
        rk->tp.peer_error_cb(rk->tp.peer_error_arg, (int)dead,
                             UCFT_ERR_PROC_FAILED);
}

static void notify_all(sim_world_t *w, uint32_t dead)
{
    for (int r = 0; r < w->params.nranks; r++)
        notify_one(w, r, dead);
}

static int lost_on_wire(sim_world_t *w, const sim_msg_t *m);

/* At ta + o: the message is at the receiver. It is lost if the receiver is
 * dead, the sender died before the send started or a loss rule takes it;
 * otherwise it is
 * delivered now if the receive port was free at ta, or queued behind the
 * messages that hold the port. */
static void handle_arrive(sim_world_t *w, sim_msg_t *m)
{
    sim_rank_t *dst = &w->ranks[m->dst];
    uint64_t o = w->params.loggp.o_ns, g = w->params.loggp.g_ns;
    uint64_t busy = g > o ? g : o;
    uint64_t ta = w->now - o;

    if ((dst->flags & SIM_RANK_DEAD) ||
        ((w->ranks[m->src].flags & SIM_RANK_DEAD) &&
         sim_world_death_time(w, (int)m->src) < m->start) ||
        (w->nlose > 0 && lost_on_wire(w, m))) {
        w->st.dropped++;
        sim__msg_free(w, m);
        return;
    }
    if (dst->recv_free <= ta) {
        dst->recv_free = ta + busy;
        sim__deliver(w, m);
        return;
    }
    uint64_t tr = dst->recv_free;
    dst->recv_free = tr + busy;
    if (sim__push(w, tr + o, SIM_EV_DELIVER, m->dst, m->src, m) != UCFT_OK) {
        w->st.dropped++;
        sim__msg_free(w, m);
    }
}

static void handle(sim_world_t *w, const sim_event_t *e)
{
    unsigned type = (unsigned)(e->key & 15);
    sim_rank_t *rk = &w->ranks[e->rank];
    tp_req_t *req;

    fold(w, e->time);
    fold(w, ((uint64_t)type << 48) ^ ((uint64_t)e->rank << 24) ^ e->aux);
    switch (type) {
    case SIM_EV_SEND_DONE:
        rk->inflight--;
        if (rk->flags & SIM_RANK_DEAD)
            return;
        req = e->ptr;
        req->priv = NULL;
        req->status = sim__rank_declared_failed(rk, (int)e->aux)
                          ? UCFT_ERR_PROC_FAILED
                          : UCFT_OK;
        req->cb(req);
        return;
    case SIM_EV_ARRIVE:
    case SIM_EV_DELIVER: {
        sim_msg_t *m = e->ptr;
        fold(w, m->tag);
        fold(w, m->len);
        if (type == SIM_EV_ARRIVE) {
            w->ranks[m->src].inflight--; /* at its receiver now (flush) */
            handle_arrive(w, m);
        } else {
            sim__deliver(w, m);
        }
        return;
    }
    case SIM_EV_RECV_DONE:
        if (rk->flags & SIM_RANK_DEAD)
            return;
        req = e->ptr;
        req->cb(req);
        return;
    case SIM_EV_TIMER:
        if ((rk->flags & SIM_RANK_DEAD) || rk->ext == NULL)
            return;
        /* One timer at a time: a callback may kill this very rank, after
         * which none of its timers may fire. */
        w->in_timers = (int64_t)e->rank;
        for (unsigned i = 0; i < SIM_TIMER_BATCH; i++) {
            if ((rk->flags & SIM_RANK_DEAD) ||
                ucft__timerq_expire(&rk->ext->timers, w->now, 1) == 0)
                break;
        }
        w->in_timers = -1;
        if (rk->flags & SIM_RANK_DEAD) {
            sim__rank_release(w, rk, 1); /* deferred by sim__kill_now */
            return;
        }
        if (ucft__timerq_next(&rk->ext->timers) <= w->now)
            sim__push(w, w->now, SIM_EV_TIMER, e->rank, 0, NULL);
        return;
    case SIM_EV_KILL:
        sim__kill_now(w, (int)e->rank);
        return;
    case SIM_EV_NOTIFY:
        notify_all(w, e->aux);
        return;
    case SIM_EV_NOTIFY_ONE:
        notify_one(w, (int)e->rank, e->aux);
        return;
    }
}

uint64_t sim_world_run(sim_world_t *w, uint64_t until, uint64_t max_events)
{
    uint64_t n = 0;
    sim_event_t e;

    if (w->running)
        return 0;
    w->running = 1;
    while (n < max_events && w->nev > 0 && w->heap[0].time <= until) {
        pop(w, &e);
        w->now = e.time;
        w->st.events++;
        n++;
        handle(w, &e);
    }
    if (until != UINT64_MAX && n < max_events && until > w->now)
        w->now = until;
    w->running = 0;
    return n;
}

/* ---- failure injection -------------------------------------------------- */

void sim__kill_now(sim_world_t *w, int rank)
{
    sim_rank_t *rk = &w->ranks[rank];

    if (rk->flags & SIM_RANK_DEAD)
        return;
    rk->flags |= SIM_RANK_DEAD;
    if (w->ndeaths == w->deaths_cap) {
        size_t cap = w->deaths_cap ? 2 * w->deaths_cap : 16;
        sim_death_t *d = realloc(w->deaths, cap * sizeof(*d));
        if (d != NULL) {
            w->deaths = d;
            w->deaths_cap = cap;
        }
    }
    if (w->ndeaths < w->deaths_cap)
        w->deaths[w->ndeaths++] = (sim_death_t){(uint32_t)rank, w->now};
    w->st.deaths++;
    fold(w, 0xdead0000ull ^ (uint64_t)rank);
    if (w->in_timers != (int64_t)rank)
        sim__rank_release(w, rk, 1);
    ucft_debug(w->params.log, "sim: rank %d dies at %llu ns", rank,
               (unsigned long long)w->now);
    if (w->params.kill_hook != NULL)
        w->params.kill_hook(w->params.kill_hook_arg, w, rank, w->now);
    if (w->params.notify == SIM_NOTIFY_DELAY && w->params.nranks > 1 &&
        w->params.notify_skew_ns != NULL) {
        for (int q = 0; q < w->params.nranks; q++)
            sim__push(w,
                      w->now + w->params.detect_delay_ns +
                          w->params.notify_skew_ns[q],
                      SIM_EV_NOTIFY_ONE, (uint32_t)q, (uint32_t)rank, NULL);
    } else if (w->params.notify == SIM_NOTIFY_DELAY && w->params.nranks > 1) {
        sim__push(w, w->now + w->params.detect_delay_ns, SIM_EV_NOTIFY, 0,
                  (uint32_t)rank, NULL);
    }
}

ucft_status_t sim_world_kill(sim_world_t *w, int rank)
{
    if (rank < 0 || rank >= w->params.nranks)
        return UCFT_ERR_INVALID_PARAM;
    sim__kill_now(w, rank);
    return UCFT_OK;
}

ucft_status_t sim_world_kill_at(sim_world_t *w, int rank, uint64_t time)
{
    if (rank < 0 || rank >= w->params.nranks)
        return UCFT_ERR_INVALID_PARAM;
    return sim__push(w, time, SIM_EV_KILL, (uint32_t)rank, 0, NULL);
}

static ucft_status_t add_rule(sim_world_t *w, const sim_rule_t *rule)
{
    if (sim__grow((void **)&w->rules, &w->rules_cap, w->nrules,
                  sizeof(*w->rules), 16) != 0)
        return UCFT_ERR_NO_MEMORY;
    w->rules[w->nrules++] = *rule;
    return UCFT_OK;
}

ucft_status_t sim_world_kill_before_send(sim_world_t *w, int rank, unsigned k,
                                         uint64_t match, uint64_t mask)
{
    if (rank < 0 || rank >= w->params.nranks || k == 0)
        return UCFT_ERR_INVALID_PARAM;
    sim_rule_t rule = {
        .rank = (uint32_t)rank, .k = k, .match = match & mask, .mask = mask};
    ucft_status_t st = add_rule(w, &rule);
    if (st == UCFT_OK)
        w->ranks[rank].flags |= SIM_RANK_SEND_RULES;
    return st;
}

ucft_status_t sim_world_kill_before_op(sim_world_t *w, int rank, uint64_t match,
                                       uint64_t mask)
{
    if (rank < 0 || rank >= w->params.nranks)
        return UCFT_ERR_INVALID_PARAM;
    sim_rule_t rule = {.rank = (uint32_t)rank,
                       .is_op = 1,
                       .match = match & mask,
                       .mask = mask};
    return add_rule(w, &rule);
}

ucft_status_t sim_world_lose(sim_world_t *w, int src, int dst, unsigned count,
                             uint64_t match, uint64_t mask)
{
    const int n = w->params.nranks;
    if (src < SIM_ANY_RANK || src >= n || dst < SIM_ANY_RANK || dst >= n ||
        count == 0)
        return UCFT_ERR_INVALID_PARAM;
    sim_rule_t rule = {.rank = (uint32_t)src,
                       .dst = (uint32_t)dst,
                       .k = count,
                       .lose = 1,
                       .match = match & mask,
                       .mask = mask};
    ucft_status_t st = add_rule(w, &rule);
    if (st == UCFT_OK)
        w->nlose++;
    return st;
}

/* 1 when a loss rule takes message `m` (counted against the rule). */
static int lost_on_wire(sim_world_t *w, const sim_msg_t *m)
{
    for (size_t i = 0; i < w->nrules; i++) {
        sim_rule_t *rule = &w->rules[i];
        if (!rule->lose || rule->count >= rule->k ||
            (rule->rank != (uint32_t)SIM_ANY_RANK && rule->rank != m->src) ||
            (rule->dst != (uint32_t)SIM_ANY_RANK && rule->dst != m->dst) ||
            (m->tag & rule->mask) != rule->match)
            continue;
        rule->count++;
        return 1;
    }
    return 0;
}

int sim__send_rules(sim_world_t *w, int rank, uint64_t tag)
{
    for (size_t i = 0; i < w->nrules; i++) {
        sim_rule_t *rule = &w->rules[i];
        if (rule->is_op || rule->lose || rule->rank != (uint32_t)rank ||
            (tag & rule->mask) != rule->match || rule->count >= rule->k)
            continue;
        if (++rule->count == rule->k) {
            sim__kill_now(w, rank);
            return 1;
        }
    }
    return 0;
}

int sim_world_op_starting(sim_world_t *w, int rank, uint64_t optag)
{
    if (rank < 0 || rank >= w->params.nranks)
        return 0;
    for (size_t i = 0; i < w->nrules; i++) {
        sim_rule_t *rule = &w->rules[i];
        if (rule->is_op && rule->rank == (uint32_t)rank &&
            (optag & rule->mask) == rule->match)
            sim__kill_now(w, rank);
    }
    return sim_world_is_dead(w, rank);
}

uint64_t sim_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

ucft_status_t sim_plan_random(int n, int k, int exclude, uint64_t seed,
                              int *out)
{
    int avail = n - (exclude >= 0 && exclude < n ? 1 : 0);
    uint8_t *taken;

    if (n < 1 || k < 0 || k > avail)
        return UCFT_ERR_INVALID_PARAM;
    taken = calloc((size_t)n / 8 + 1, 1);
    if (taken == NULL)
        return UCFT_ERR_NO_MEMORY;
    if (exclude >= 0 && exclude < n)
        taken[exclude / 8] |= (uint8_t)(1u << (exclude % 8));
    uint64_t s = seed;
    for (int i = 0; i < k;) {
        int r = (int)(sim_splitmix64(&s) % (uint64_t)n);
        if (taken[r / 8] & (1u << (r % 8)))
            continue;
        taken[r / 8] |= (uint8_t)(1u << (r % 8));
        out[i++] = r;
    }
    free(taken);
    return UCFT_OK;
}

ucft_status_t sim_world_kill_random(sim_world_t *w, int k, int exclude,
                                    int *out)
{
    int *plan = malloc(((size_t)k + 1) * sizeof(*plan));
    ucft_status_t st;

    if (plan == NULL)
        return UCFT_ERR_NO_MEMORY;
    st = sim_plan_random(w->params.nranks, k, exclude, sim_splitmix64(&w->rng),
                         plan);
    if (st == UCFT_OK) {
        for (int i = 0; i < k; i++) {
            sim__kill_now(w, plan[i]);
            if (out != NULL)
                out[i] = plan[i];
        }
    }
    free(plan);
    return st;
}
