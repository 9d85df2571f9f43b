#include "simrun/simseq.h"
#include "simrun/oracle.h"

#include <stdlib.h>
#include <string.h>

typedef struct seq_ctx seq_ctx_t;

/* Instance k: the arguments every rank's state of it shares. */
typedef struct seq_inst {
    seq_ctx_t *c;
    int k;
    coll_args_t args;
} seq_inst_t;

/* Rank r's state of instance k. */
typedef struct seq_slot {
    seq_ctx_t *c;
    int r, k;
    uint8_t started, ready, done, cleaned, delivered;
    ucft_status_t status;
    ucft_timer_t release; /* cleanup, from a later event */
} seq_slot_t;

typedef struct seq_rank {
    seq_ctx_t *c;
    int r;
    int cur;            /* the next instance to call */
    int outstanding;    /* called, output not delivered yet */
    uint8_t next_armed; /* the next call is scheduled */
    uint8_t finished;   /* through every instance */
    uint8_t flushing;   /* the flush timer is armed */
    ucft_timer_t next;
    ucft_timer_t flush;
    uint64_t rng;
    int *known; /* failures heard of */
    size_t nknown, known_cap;
} seq_rank_t;

struct seq_ctx {
    const simseq_params_t *p;
    const coll_op_ops_t *op;
    sim_world_t *w;
    int n, K;
    size_t ssize, bsize, cssize;
    unsigned char *states, *bufs, *cstates;
    seq_inst_t *inst;
    seq_slot_t *slots;
    seq_rank_t *ranks;
};

static seq_slot_t *slot_of(seq_ctx_t *c, int r, int k)
{
    return &c->slots[(size_t)r * (size_t)c->K + (size_t)k];
}

static void *state_of(seq_ctx_t *c, int r, int k)
{
    return c->states + ((size_t)r * (size_t)c->K + (size_t)k) * c->ssize;
}

static unsigned char *buf_of(seq_ctx_t *c, int r, int k)
{
    return c->bufs + ((size_t)r * (size_t)c->K + (size_t)k) * c->bsize;
}

static void *cs_of(seq_ctx_t *c, int r)
{
    return c->cstates + (size_t)r * c->cssize;
}

static tp_t *tp_of(seq_ctx_t *c, int r)
{
    return sim_world_tp(c->w, r);
}

static void call_next(seq_ctx_t *c, int r);

/* Every live rank is through its instances. */
static int all_through(seq_ctx_t *c)
{
    for (int r = 0; r < c->n; r++)
        if (!c->ranks[r].finished && !sim_world_is_dead(c->w, r))
            return 0;
    return 1;
}

/* A rank with calls outstanding flushes its communicator state now and then; so
 * does a finished one while others are not (finalize's barrier waits too). */
static void flush_cb(ucft_timer_t *t)
{
    seq_rank_t *rk = t->arg;
    seq_ctx_t *c = rk->c;
    rk->flushing = 0;
    if (rk->outstanding == 0 && !(rk->finished && !all_through(c)))
        return;
    c->op->comm->flush(cs_of(c, rk->r));
    rk->flushing = 1;
    tp_timer_start(tp_of(c, rk->r), &rk->flush,
                   sim_world_now(c->w) + c->p->wait_flush_ns);
}

static void flush_arm(seq_ctx_t *c, seq_rank_t *rk)
{
    if (rk->flushing || c->cstates == NULL)
        return;
    rk->flushing = 1;
    tp_timer_start(tp_of(c, rk->r), &rk->flush,
                   sim_world_now(c->w) + c->p->wait_flush_ns);
}

static void next_cb(ucft_timer_t *t)
{
    seq_rank_t *rk = t->arg;
    rk->next_armed = 0;
    call_next(rk->c, rk->r);
}

/* Instance k's output reached rank r's caller: after its compute time it
 * calls as many more as its window allows. */
static void delivered(seq_ctx_t *c, int r, int k)
{
    seq_rank_t *rk = &c->ranks[r];
    seq_slot_t *s = slot_of(c, r, k);
    if (s->delivered)
        return;
    s->delivered = 1;
    rk->outstanding--;
    if (rk->next_armed)
        return;
    uint64_t d = c->p->compute_max_ns == 0
                     ? 0
                     : sim_splitmix64(&rk->rng) % (c->p->compute_max_ns + 1);
    rk->next_armed = 1;
    tp_timer_start(tp_of(c, r), &rk->next, sim_world_now(c->w) + d);
}

static void release_cb(ucft_timer_t *t)
{
    seq_slot_t *s = t->arg;
    if (s->cleaned)
        return;
    s->cleaned = 1;
    s->c->op->cleanup(state_of(s->c, s->r, s->k));
}

static void ready_cb(void *arg, int rank, ucft_status_t status)
{
    seq_inst_t *in = arg;
    seq_slot_t *s = slot_of(in->c, rank, in->k);
    (void)status;
    s->ready = 1;
    delivered(in->c, rank, in->k);
}

static void done_cb(void *arg, int rank, ucft_status_t status)
{
    seq_inst_t *in = arg;
    seq_ctx_t *c = in->c;
    seq_slot_t *s = slot_of(c, rank, in->k);
    s->done = 1;
    s->status = status;
    delivered(c, rank, in->k);
    s->release = (ucft_timer_t){.cb = release_cb, .arg = s};
    tp_timer_start(tp_of(c, rank), &s->release, sim_world_now(c->w));
}

/* Rank r calls instance rk->cur, as comm/coll_post.c posts one. */
static void call_one(seq_ctx_t *c, seq_rank_t *rk)
{
    int r = rk->r, k = rk->cur;
    seq_slot_t *s = slot_of(c, r, k);
    void *state = state_of(c, r, k);
    unsigned char *buf = buf_of(c, r, k);
    const coll_args_t *a = &c->inst[k].args;

    rk->cur++;
    rk->outstanding++;
    s->started = 1;
    const coll_oracle_t *orc = coll_oracle_of(c->op);
    if (orc->fill != NULL)
        orc->fill(buf, a, r, c->n);
    ucft_status_t st = c->op->init(state, tp_of(c, r), a, buf);
    if (st == UCFT_OK)
        st = c->op->start(state);
    for (size_t i = 0; st == UCFT_INPROGRESS && i < rk->nknown && !s->done; i++)
        if (c->op->on_failure != NULL)
            c->op->on_failure(state, rk->known[i]);
    if (st != UCFT_INPROGRESS && !s->done) {
        s->done = 1;
        s->status = st;
        s->cleaned = 1;
        c->op->cleanup(state);
        delivered(c, r, k);
    }
}

/* Rank r calls its next instances, up to its window; through them all,
 * it is finished (and flushes while others are not). */
static void call_next(seq_ctx_t *c, int r)
{
    seq_rank_t *rk = &c->ranks[r];
    int window = c->p->window > 0 ? c->p->window : 1;
    while (rk->cur < c->K && rk->outstanding < window)
        call_one(c, rk);
    if (rk->cur == c->K && rk->outstanding == 0 && !rk->finished) {
        rk->finished = 1;
        if (c->cstates != NULL)
            c->op->comm->flush(cs_of(c, r));
    }
    if (rk->outstanding > 0 || rk->finished)
        flush_arm(c, rk);
}

static void peer_error(void *arg, int failed, ucft_status_t why)
{
    seq_rank_t *rk = arg;
    seq_ctx_t *c = rk->c;
    (void)why;
    tp_peer_failed(tp_of(c, rk->r), failed);
    if (c->cstates != NULL)
        c->op->comm->on_failure(cs_of(c, rk->r), failed);
    if (rk->nknown == rk->known_cap) {
        size_t cap = rk->known_cap ? 2 * rk->known_cap : 4;
        int *kn = realloc(rk->known, cap * sizeof(*kn));
        if (kn != NULL) {
            rk->known = kn;
            rk->known_cap = cap;
        }
    }
    if (rk->nknown < rk->known_cap)
        rk->known[rk->nknown++] = failed;
    for (int k = 0; k < rk->cur && c->op->on_failure != NULL; k++) {
        seq_slot_t *s = slot_of(c, rk->r, k);
        if (s->started && !s->done && !s->cleaned)
            c->op->on_failure(state_of(c, rk->r, k), failed);
    }
}

void simseq_params_default(simseq_params_t *p, const coll_op_ops_t *op,
                           int nranks, int instances)
{
    memset(p, 0, sizeof(*p));
    p->op = op;
    sim_params_default(&p->sim, nranks);
    p->len = 8;
    p->instances = instances;
    p->f = 1;
    p->batch = 8;
    p->compute_max_ns = 2000;
    p->wait_flush_ns = 2000;
}

static ucft_status_t seq_alloc(seq_ctx_t *c)
{
    const coll_op_ops_t *op = c->op;
    size_t nk = (size_t)c->n * (size_t)c->K;
    c->ssize = (op->state_size + 15) & ~(size_t)15;
    c->bsize = (c->p->len * op->buf_mult + 15) & ~(size_t)15;
    c->states = calloc(nk, c->ssize);
    c->bufs = calloc(nk, c->bsize ? c->bsize : 1);
    c->slots = calloc(nk, sizeof(*c->slots));
    c->inst = calloc((size_t)c->K, sizeof(*c->inst));
    c->ranks = calloc((size_t)c->n, sizeof(*c->ranks));
    if (op->comm != NULL) {
        c->cssize = (op->comm->size + 15) & ~(size_t)15;
        c->cstates = calloc((size_t)c->n, c->cssize);
    }
    if (c->states == NULL || c->bufs == NULL || c->slots == NULL ||
        c->inst == NULL || c->ranks == NULL ||
        (op->comm != NULL && c->cstates == NULL))
        return UCFT_ERR_NO_MEMORY;
    return UCFT_OK;
}

static ucft_status_t seq_setup(seq_ctx_t *c)
{
    const simseq_params_t *p = c->p;
    ucft_status_t st = UCFT_OK;

    for (int k = 0; k < c->K; k++) {
        seq_inst_t *in = &c->inst[k];
        in->c = c;
        in->k = k;
        in->args = (coll_args_t){.root = p->root < 0 ? k % c->n : p->root,
                                 .len = p->len,
                                 .seq = (uint32_t)k,
                                 .f = p->f,
                                 .comm_state = c->cstates,
                                 .comm_stride = c->cssize,
                                 .done_cb = done_cb,
                                 .ready_cb = ready_cb,
                                 .done_arg = in};
    }
    for (int r = 0; r < c->n; r++)
        for (int k = 0; k < c->K; k++)
            *slot_of(c, r, k) = (seq_slot_t){.c = c, .r = r, .k = k};
    coll_comm_params_t cp = {.flushes = 1, .batch = p->batch};
    for (int r = 0; r < c->n && st == UCFT_OK; r++) {
        seq_rank_t *rk = &c->ranks[r];
        *rk = (seq_rank_t){.c = c, .r = r};
        rk->rng = p->sim.seed * 0x9e3779b97f4a7c15ull + (uint64_t)r;
        rk->next = (ucft_timer_t){.cb = next_cb, .arg = rk};
        rk->next_armed = 1;
        rk->flush = (ucft_timer_t){.cb = flush_cb, .arg = rk};
        tp_t *tp = tp_of(c, r);
        tp->peer_error_cb = peer_error;
        tp->peer_error_arg = rk;
        if (c->cstates != NULL)
            st = c->op->comm->init(cs_of(c, r), tp, &cp);
    }
    /* Failures: a send boundary counts every collective message. */
    uint64_t tag = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 0, 0);
    uint64_t mask = ucft_tag_mask(1, 1); /* class and communicator */
    for (size_t i = 0; i < p->nfails && st == UCFT_OK; i++) {
        const simrun_fail_t *f = &p->fails[i];
        if (f->kind == SIMRUN_FAIL_BEFORE_SEND)
            st = sim_world_kill_before_send(c->w, f->rank, f->k, tag, mask);
        else if (f->kind == SIMRUN_FAIL_AT_TIME)
            st = sim_world_kill_at(c->w, f->rank, f->time);
        else
            st = UCFT_ERR_INVALID_PARAM;
    }
    /* Every rank computes a while before its first call. */
    for (int r = 0; r < c->n && st == UCFT_OK; r++) {
        seq_rank_t *rk = &c->ranks[r];
        uint64_t d = p->compute_max_ns == 0
                         ? 0
                         : sim_splitmix64(&rk->rng) % (p->compute_max_ns + 1);
        st = tp_timer_start(tp_of(c, r), &rk->next, d);
    }
    return st;
}

static void seq_collect(seq_ctx_t *c, simseq_result_t *res)
{
    uint8_t *dead = calloc((size_t)c->n, 1);
    for (int r = 0; dead != NULL && r < c->n; r++)
        dead[r] = (uint8_t)sim_world_is_dead(c->w, r);
    for (int r = 0; dead != NULL && r < c->n; r++) {
        if (dead[r])
            continue;
        res->live++;
        if (!c->ranks[r].finished)
            res->unfinished_ranks++;
        for (int k = 0; k < c->K; k++) {
            seq_slot_t *s = slot_of(c, r, k);
            const coll_args_t *a = &c->inst[k].args;
            if (!s->started || (!s->done && !s->ready))
                continue; /* counted in unfinished_ranks */
            if (!s->done)
                res->running_states++;
            ucft_status_t st = s->done ? s->status : UCFT_OK;
            if (st != UCFT_OK) {
                res->errors++;
                res->errors_root_alive += !dead[a->root];
            } else if (coll_oracle_of(c->op)->check != NULL &&
                       !coll_oracle_of(c->op)->check(buf_of(c, r, k), a, r,
                                                     c->n, dead)) {
                res->data_errors++;
            } else {
                res->ok++;
            }
        }
    }
    free(dead);
}

static void seq_free(seq_ctx_t *c)
{
    if (c->w != NULL)
        sim_world_destroy(c->w);
    for (int r = 0; c->states != NULL && r < c->n; r++)
        for (int k = 0; c->op->destroy != NULL && k < c->K; k++)
            if (slot_of(c, r, k)->started)
                c->op->destroy(state_of(c, r, k));
    for (int r = 0; c->cstates != NULL && r < c->n; r++)
        c->op->comm->destroy(cs_of(c, r));
    for (int r = 0; c->ranks != NULL && r < c->n; r++)
        free(c->ranks[r].known);
    free(c->states);
    free(c->bufs);
    free(c->cstates);
    free(c->slots);
    free(c->inst);
    free(c->ranks);
}

ucft_status_t simseq_run(const simseq_params_t *p, simseq_result_t *res)
{
    seq_ctx_t c = {.p = p, .op = p->op, .n = p->sim.nranks, .K = p->instances};
    memset(res, 0, sizeof(*res));
    if (p->op == NULL || c.K < 1 || p->wait_flush_ns == 0 || p->root >= c.n ||
        p->len > SIZE_MAX / 4)
        return UCFT_ERR_INVALID_PARAM;
    ucft_status_t st = sim_world_create(&p->sim, &c.w);
    if (st == UCFT_OK)
        st = seq_alloc(&c);
    if (st == UCFT_OK)
        st = seq_setup(&c);
    if (st != UCFT_OK) {
        seq_free(&c);
        return st;
    }
    sim_world_run(c.w, UINT64_MAX, p->max_events ? p->max_events : UINT64_MAX);
    res->bounded = !sim_world_quiescent(c.w);
    seq_collect(&c, res);
    sim_world_stats(c.w, &res->stats);
    /* Cancel what is left, let the cancellations complete. */
    for (int r = 0; r < c.n; r++)
        for (int k = 0; k < c.K; k++) {
            seq_slot_t *s = slot_of(&c, r, k);
            if (s->started && !s->cleaned) {
                s->cleaned = 1;
                c.op->cleanup(state_of(&c, r, k));
            }
        }
    for (int r = 0; c.cstates != NULL && r < c.n; r++)
        c.op->comm->cleanup(cs_of(&c, r));
    if (!res->bounded) {
        sim_world_run(c.w, UINT64_MAX, UINT64_MAX);
        for (int r = 0; r < c.n; r++) {
            if (sim_world_is_dead(c.w, r))
                continue;
            int idle = c.cstates == NULL || c.op->comm->idle(cs_of(&c, r));
            for (int k = 0; idle && c.op->idle != NULL && k < c.K; k++)
                idle = !slot_of(&c, r, k)->started ||
                       c.op->idle(state_of(&c, r, k));
            res->not_idle += !idle;
        }
    }
    seq_free(&c);
    return UCFT_OK;
}
