#include "simrun/simrun.h"
#include "simrun/oracle.h"

#include "runtime/base/clock.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

typedef struct simrun_ctx simrun_ctx_t;

/* Per rank: its failure notifications and its release timer. */
typedef struct simrun_rank_ref {
    simrun_ctx_t *ctx;
    int rank;
    uint8_t done;    /* its operation completed */
    uint8_t ready;   /* its output was final (ready_cb or completion) */
    uint8_t cleaned; /* its state was cleaned up (released) */
    ucft_timer_t release;
    tp_req_t drop;    /* the late-message sweeper's receive (drop_post) */
    uint64_t scratch; /* where dropped messages are truncated to */
    /* Staggered start (simrun_params_t.start_spread_ns): the start timer,
     * and the failures the rank heard of before it started, told to its
     * state after its start as comm/coll_post.c does. */
    uint8_t started;
    ucft_timer_t start_timer;
    ucft_timer_t cut, declare; /* the partition (p->partition_side) */
    int *known;
    size_t nknown, known_cap;
} simrun_rank_ref_t;

struct simrun_ctx {
    sim_world_t *world;
    const simrun_params_t *p;
    uint8_t *node_down;  /* per node: whole-node failure already applied */
    uint8_t *known_dead; /* per rank: p->known_dead names it (NULL: none) */
    uint32_t nnodes;
    uint64_t start;
    uint64_t last;
    uint64_t last_ready; /* the last rank's output final */
    const coll_op_ops_t *op;
    unsigned char *states;
    size_t ssize;
    unsigned char *cstates; /* op->comm: every rank's communicator state */
    size_t cssize;
    int release_at_done;
    simrun_rank_ref_t *refs;
    uint64_t optag, opmask; /* any message of the operation */
    int started_knowing;
    int cut_done;     /* the partition is in place */
    coll_gate_t gate; /* p->quorum_gate */
};

/* A failure heard of before the rank started its operation. Without the
 * memory the news is lost to the state: the transport still refuses sends
 * to the dead rank, the state is not told (the run may then report an
 * unfinished rank, never a wrong value). */
static void remember_failure(simrun_rank_ref_t *ref, int failed)
{
    if (ref->nknown == ref->known_cap) {
        size_t cap = ref->known_cap ? 2 * ref->known_cap : 4;
        int *k = realloc(ref->known, cap * sizeof(*k));
        if (k == NULL)
            return;
        ref->known = k;
        ref->known_cap = cap;
    }
    ref->known[ref->nknown++] = failed;
}

/* The rank's state is still told of failures: the runtime stops once the
 * caller has released a completed operation (unless the op keeps it). */
static int hears_failures(const simrun_ctx_t *c, const simrun_rank_ref_t *ref)
{
    return !ref->cleaned &&
           !(c->release_at_done && ref->done && !c->op->keep_after_done);
}

/* Rank r's communicator state (op->comm), or NULL. */
static void *cstate_of(const simrun_ctx_t *c, int r)
{
    return c->cstates != NULL ? c->cstates + (size_t)r * c->cssize : NULL;
}

/* A rank's notification that `failed` died, in the runtime's way
 * (runtime/failed_set.c): the rank declares the peer failed to its transport
 * (its sends to the peer end, T5), and the op state hears of it unless the
 * operation completed. */
static void peer_error(void *arg, int failed, ucft_status_t why)
{
    simrun_rank_ref_t *ref = arg;
    simrun_ctx_t *c = ref->ctx;
    (void)why;
    if (c->known_dead != NULL && c->known_dead[failed])
        return; /* known at the start already */
    tp_peer_failed(sim_world_tp(c->world, ref->rank), failed);
    if (c->cstates != NULL)
        c->op->comm->on_failure(cstate_of(c, ref->rank), failed);
    if (!ref->started) {
        remember_failure(ref, failed);
        return;
    }
    if (!hears_failures(c, ref))
        return;
    if (c->op->on_failure != NULL)
        c->op->on_failure(c->states + (size_t)ref->rank * c->ssize, failed);
}

/* The partition (simrun_params_t.partition_side): its cut, and each
 * side's declaration of the other a detection delay later. */
static int side_of(const simrun_ctx_t *c, int r)
{
    return (int)(c->p->partition_side >> r & 1);
}

/* Each rank's own timers (a dead rank's never run, and it has nothing to
 * cut or declare then): at the cut, its links to the other side go; a
 * detection delay later it declares every rank there failed. */
static void declare_cb(ucft_timer_t *t)
{
    simrun_rank_ref_t *ref = t->arg;
    simrun_ctx_t *c = ref->ctx;
    for (int q = 0; q < c->p->sim.nranks; q++)
        if (side_of(c, ref->rank) != side_of(c, q))
            peer_error(ref, q, UCFT_ERR_PROC_FAILED);
}

/* Every message between a and b vanishes from now on, both ways. */
static void lose_link(simrun_ctx_t *c, int a, int b)
{
    (void)sim_world_lose(c->world, a, b, UINT32_MAX, 0, 0);
    (void)sim_world_lose(c->world, b, a, UINT32_MAX, 0, 0);
}

static void cut_cb(ucft_timer_t *t)
{
    simrun_rank_ref_t *ref = t->arg;
    simrun_ctx_t *c = ref->ctx;
    int r = ref->rank;
    c->cut_done = 1;
    for (int q = 0; q < c->p->sim.nranks; q++)
        if (side_of(c, r) != side_of(c, q))
            lose_link(c, r, q);
    ref->declare = (ucft_timer_t){.cb = declare_cb, .arg = ref};
    (void)tp_timer_start(sim_world_tp(c->world, r), &ref->declare,
                         sim_world_now(c->world) + c->p->sim.detect_delay_ns);
}

/* A link cut (simrun_params_t.cuts), one end's half: on this rank's own
 * timers, its link goes at the cut and it declares the peer a detection
 * delay later. */
typedef struct simrun_cut_ref {
    simrun_rank_ref_t *me;
    int peer;
    ucft_timer_t cut, declare;
} simrun_cut_ref_t;

static void link_declare_cb(ucft_timer_t *t)
{
    simrun_cut_ref_t *x = t->arg;
    peer_error(x->me, x->peer, UCFT_ERR_PROC_FAILED);
}

static void link_cut_cb(ucft_timer_t *t)
{
    simrun_cut_ref_t *x = t->arg;
    simrun_ctx_t *c = x->me->ctx;
    int r = x->me->rank;
    lose_link(c, r, x->peer);
    x->declare = (ucft_timer_t){.cb = link_declare_cb, .arg = x};
    (void)tp_timer_start(sim_world_tp(c->world, r), &x->declare,
                         sim_world_now(c->world) + c->p->sim.detect_delay_ns);
}

/* The majority rule over the world (coll_gate_t): the ranks that do not
 * hold the result cannot hold the quorum. */
static int world_covers(void *arg, const uint8_t *held, int n)
{
    int others = 0;
    (void)arg;
    for (int r = 0; r < n; r++)
        others += !held[r];
    return !(2 * others > n || (2 * others == n && !held[0]));
}

/* The runtime's sweeper of late messages (comm/drain.c) once a
 * rank has released its state: whatever of the operation still reaches
 * the rank is received and dropped, truncated into a scratch word (which
 * also completes a rendezvous sender, T7). */
static void drop_cb(tp_req_t *req);

static void drop_post(simrun_rank_ref_t *ref)
{
    simrun_ctx_t *c = ref->ctx;
    ref->drop = (tp_req_t){.cb = drop_cb, .arg = ref};
    /* Not the messages of communicator states (kind bit 7): those are
     * theirs, whatever their sequence field says. */
    (void)tp_recv(sim_world_tp(c->world, ref->rank), c->optag,
                  c->opmask | COLL_KIND_COMM_FIRST, &ref->scratch,
                  sizeof(ref->scratch), &ref->drop);
}

static void drop_cb(tp_req_t *req)
{
    if (req->status != UCFT_ERR_CANCELED)
        drop_post(req->arg);
}

static void release_cb(ucft_timer_t *t)
{
    simrun_rank_ref_t *ref = t->arg;
    simrun_ctx_t *c = ref->ctx;
    ref->cleaned = 1;
    c->op->cleanup(c->states + (size_t)ref->rank * c->ssize);
    drop_post(ref);
}

/* Starts rank r's operation, as comm/coll_post.c posts one: start, then the
 * failures the rank already knows of, while the state still runs. */
/* UCFT_CHECKSUM's accusation (coll_csum.h): the sender of a corrupted
 * message of a corrected algorithm becomes a failed rank for everybody,
 * as the runtime's detector makes it: it dies now, the world tells the
 * others. An event, not a death inside this receive's completion. */
static void csum_accuse(void *arg, int rank)
{
    simrun_ctx_t *c = arg;
    if (!sim_world_is_dead(c->world, rank))
        sim_world_kill_at(c->world, rank, sim_world_now(c->world));
}

static void start_rank(simrun_ctx_t *c, int r)
{
    simrun_rank_ref_t *ref = &c->refs[r];
    void *state = c->states + (size_t)r * c->ssize;

    ref->started = 1;
    if (sim_world_op_starting(c->world, r, c->optag))
        return;
    c->started_knowing += ref->nknown > 0;
    ucft_status_t st = c->op->start(state);
    if (st != UCFT_OK && st != UCFT_INPROGRESS)
        ucft_debug(c->p->sim.log, "rank %d: start: %s", r,
                   ucft_status_string(st));
    for (size_t i = 0; st == UCFT_INPROGRESS && i < ref->nknown; i++) {
        if (!hears_failures(c, ref))
            break;
        if (c->op->on_failure != NULL)
            c->op->on_failure(state, ref->known[i]);
    }
}

static void start_cb(ucft_timer_t *t)
{
    simrun_rank_ref_t *ref = t->arg;
    start_rank(ref->ctx, ref->rank);
}

/* Rank r's start delay in [0, spread], a function of the seed and r. */
static uint64_t start_delay(uint64_t seed, int r, uint64_t spread)
{
    uint64_t s = seed + 0x9e3779b97f4a7c15ull * (uint64_t)r;
    uint64_t z = sim_splitmix64(&s);
    return spread == UINT64_MAX ? z : z % (spread + 1);
}

/* Is `rank` named by a whole-node failure rule? */
static int whole_node_rule(const simrun_params_t *p, int rank)
{
    for (size_t i = 0; i < p->nfails; i++)
        if (p->fails[i].whole_node && p->fails[i].rank == rank)
            return 1;
    return 0;
}

/* A rank died: if a whole-node rule names it, its node goes down with it,
 * every rank at this same instant (each death notified as usual). Then the
 * caller's hook, if any. */
static void kill_hook(void *arg, sim_world_t *w, int rank, uint64_t time)
{
    simrun_ctx_t *c = arg;
    const simrun_params_t *p = c->p;
    const uint32_t *node = p->sim.domain;

    if (node != NULL && c->node_down != NULL && !c->node_down[node[rank]] &&
        whole_node_rule(p, rank)) {
        c->node_down[node[rank]] = 1;
        for (int r = 0; r < p->sim.nranks; r++)
            if (node[r] == node[rank] && !sim_world_is_dead(w, r))
                sim_world_kill(w, r);
    }
    if (p->sim.kill_hook != NULL)
        p->sim.kill_hook(p->sim.kill_hook_arg, w, rank, time);
}

/* A rank's output is final: at its ready_cb (an early completion, e.g. a
 * corrected broadcast rank that has the data but still has corrections to
 * send and hear) or else at its completion. */
static void ready_cb(void *arg, int rank, ucft_status_t status)
{
    simrun_ctx_t *c = arg;
    simrun_rank_ref_t *ref = &c->refs[rank];
    uint64_t now = sim_world_now(c->world);
    (void)status;
    if (ref->ready)
        return;
    ref->ready = 1;
    if (now > c->last_ready)
        c->last_ready = now;
}

static void done_cb(void *arg, int rank, ucft_status_t status)
{
    simrun_ctx_t *c = arg;
    uint64_t now = sim_world_now(c->world);
    if (now > c->last)
        c->last = now;
    ready_cb(arg, rank, status);
    simrun_rank_ref_t *ref = &c->refs[rank];
    ref->done = 1;
    /* Released from a later event, as the runtime's caller does after the
     * progress call that completed the operation. */
    if (c->release_at_done && !c->op->keep_after_done) {
        ref->release = (ucft_timer_t){.cb = release_cb, .arg = ref};
        tp_timer_start(sim_world_tp(c->world, rank), &ref->release, now);
    }
}

void simrun_params_default(simrun_params_t *p, const coll_op_ops_t *op,
                           int nranks)
{
    memset(p, 0, sizeof(*p));
    p->op = op;
    sim_params_default(&p->sim, nranks);
    p->len = 8;
}

double simrun_peak_rss_mb(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

static ucft_status_t inject(const simrun_params_t *p, sim_world_t *w,
                            uint64_t optag, uint64_t opmask)
{
    ucft_status_t st = UCFT_OK;

    for (size_t i = 0; i < p->nfails && st == UCFT_OK; i++) {
        const simrun_fail_t *f = &p->fails[i];
        switch (f->kind) {
        case SIMRUN_FAIL_BEFORE_SEND:
            /* Every collective message of the communicator counts: the
             * world runs this one instance, and the messages of a
             * communicator state (coll_comm_ops_t) carry no instance
             * sequence. */
            st = sim_world_kill_before_send(w, f->rank, f->k, optag,
                                            ucft_tag_mask(1, 1));
            break;
        case SIMRUN_FAIL_AT_TIME:
            st = sim_world_kill_at(w, f->rank, f->time);
            break;
        case SIMRUN_FAIL_BEFORE_OP:
            /* A whole node: every rank of it, so that none starts. */
            for (int r = 0; r < p->sim.nranks && st == UCFT_OK; r++)
                if (r == f->rank ||
                    (f->whole_node &&
                     p->sim.domain[r] == p->sim.domain[f->rank]))
                    st = sim_world_kill_before_op(w, r, optag, opmask);
            break;
        }
    }
    for (size_t i = 0; i < p->nknown_dead && st == UCFT_OK; i++)
        st = sim_world_kill_before_op(w, p->known_dead[i], optag, opmask);
    if (st == UCFT_OK && p->fail_random > 0)
        st = sim_world_kill_random(w, p->fail_random, p->root, NULL);
    return st;
}

ucft_status_t simrun_run(const simrun_params_t *p, simrun_result_t *res,
                         uint8_t *rank_ok)
{
    const coll_op_ops_t *op = p->op;
    const coll_oracle_t *orc = p->oracle ? p->oracle : coll_oracle_of(op);
    int n = p->sim.nranks;
    size_t ssize = (op->state_size + 15) & ~(size_t)15;
    size_t bsize = p->len * op->buf_mult;
    uint64_t t0 = ucft_clock_now_ns();
    simrun_ctx_t ctx = {.op = op,
                        .ssize = ssize,
                        .p = p,
                        .release_at_done = p->release_at_done};
    sim_params_t sp = p->sim;
    simrun_rank_ref_t *refs = NULL;
    simrun_cut_ref_t *cuts = NULL;
    uint8_t *dead = NULL;
    uint8_t pview[64]; /* a rank's view of the dead after a partition */
    coll_args_t args = p->args;
    args.root = p->root;
    args.len = p->len;
    args.seq = p->seq;
    args.done_cb = done_cb;
    args.ready_cb = ready_cb;
    args.done_arg = &ctx;
    /* The op's messages: class COLL, context 0, this sequence (any kind,
     * any source). */
    uint64_t optag = coll_tag(&args, 0, 0);
    uint64_t opmask = ~(UCFT_TAG_SRC_MASK | ((1u << UCFT_TAG_KIND_BITS) - 1));
    ctx.optag = optag;
    ctx.opmask = opmask;
    unsigned char *states = NULL, *bufs = NULL;
    coll_flip_t *flips = NULL;
    coll_csum_t *csums = NULL;
    ucft_status_t st;

    memset(res, 0, sizeof(*res));
    if (op == NULL || p->root < 0 || p->root >= n ||
        (p->partition_side != 0 && n > 64))
        return UCFT_ERR_INVALID_PARAM;
    if (p->quorum_gate) {
        ctx.gate = (coll_gate_t){.covers = world_covers};
        args.gate = &ctx.gate;
    }
    for (size_t i = 0; i < p->nfails; i++) {
        if (!p->fails[i].whole_node)
            continue;
        if (p->sim.domain == NULL)
            return UCFT_ERR_INVALID_PARAM; /* a node needs nodes */
        sp.kill_hook = kill_hook;
        sp.kill_hook_arg = &ctx;
    }
    if (sp.kill_hook == kill_hook) {
        for (int r = 0; r < n; r++)
            if (p->sim.domain[r] >= ctx.nnodes)
                ctx.nnodes = p->sim.domain[r] + 1;
        ctx.node_down = calloc(ctx.nnodes, 1);
        if (ctx.node_down == NULL)
            return UCFT_ERR_NO_MEMORY;
    }
    if (p->nknown_dead > 0) {
        ctx.known_dead = calloc((size_t)n, 1);
        if (ctx.known_dead == NULL) {
            free(ctx.node_down);
            return UCFT_ERR_NO_MEMORY;
        }
        for (size_t i = 0; i < p->nknown_dead; i++) {
            int d = p->known_dead[i];
            if (d < 0 || d >= n || d == p->root) {
                free(ctx.node_down);
                free(ctx.known_dead);
                return UCFT_ERR_INVALID_PARAM;
            }
            ctx.known_dead[d] = 1;
        }
    }
    st = sim_world_create(&sp, &ctx.world);
    if (st != UCFT_OK) {
        free(ctx.node_down);
        free(ctx.known_dead);
        return st;
    }
    states = calloc((size_t)n, ssize);
    /* As the runtime's recycled states: init must not rely on zeroes. */
    if (states != NULL && p->dirty_states)
        memset(states, 0xa5, (size_t)n * ssize);
    bufs = bsize ? malloc((size_t)n * bsize) : NULL;
    dead = calloc((size_t)n, 1);
    refs = calloc((size_t)n, sizeof(*refs));
    cuts = p->ncuts ? calloc(2 * p->ncuts, sizeof(*cuts)) : NULL;
    if (states == NULL || dead == NULL || (bsize && bufs == NULL) ||
        refs == NULL || (p->ncuts && cuts == NULL)) {
        st = UCFT_ERR_NO_MEMORY;
        goto out;
    }
    ctx.states = states;
    ctx.refs = refs;
    if (p->checksum) {
        csums = calloc((size_t)n, sizeof(*csums));
        if (csums == NULL) {
            st = UCFT_ERR_NO_MEMORY;
            goto out;
        }
        for (int r = 0; r < n; r++) {
            coll_csum_init(&csums[r], sim_world_tp(ctx.world, r));
            coll_csum_on_corrupt(&csums[r], csum_accuse, &ctx);
        }
    }
    if (op->comm != NULL) {
        /* The communicator states: nothing held back (no flush here), as
         * the simulated instance is the only one on its world. */
        coll_comm_params_t cp = {.map = args.map, .batch = 1};
        ctx.cssize = (op->comm->size + 15) & ~(size_t)15;
        ctx.cstates = calloc((size_t)n, ctx.cssize);
        if (ctx.cstates == NULL) {
            st = UCFT_ERR_NO_MEMORY;
            goto out;
        }
        for (int r = 0; r < n && st == UCFT_OK; r++)
            st = op->comm->init(cstate_of(&ctx, r),
                                csums != NULL ? &csums[r].f.tp
                                              : sim_world_tp(ctx.world, r),
                                &cp);
        if (st != UCFT_OK)
            goto out;
        args.comm_state = ctx.cstates;
        args.comm_stride = ctx.cssize;
    }
    for (int r = 0; r < n; r++) {
        tp_t *tp = sim_world_tp(ctx.world, r);
        refs[r] = (simrun_rank_ref_t){.ctx = &ctx, .rank = r};
        tp->peer_error_cb = peer_error;
        tp->peer_error_arg = &refs[r];
    }
    st = inject(p, ctx.world, optag, opmask);
    if (st != UCFT_OK)
        goto out;
    for (int r = 0; p->partition_side != 0 && r < n; r++) {
        refs[r].cut = (ucft_timer_t){.cb = cut_cb, .arg = &refs[r]};
        st = tp_timer_start(sim_world_tp(ctx.world, r), &refs[r].cut,
                            sim_world_now(ctx.world) + p->partition_at_ns);
        if (st != UCFT_OK)
            goto out;
    }
    for (size_t i = 0; i < 2 * p->ncuts; i++) {
        const simrun_cut_t *k = &p->cuts[i / 2];
        int me = i % 2 ? k->b : k->a, peer = i % 2 ? k->a : k->b;
        if (me < 0 || me >= n || peer < 0 || peer >= n || me == peer) {
            st = UCFT_ERR_INVALID_PARAM;
            goto out;
        }
        cuts[i] = (simrun_cut_ref_t){.me = &refs[me], .peer = peer};
        cuts[i].cut = (ucft_timer_t){.cb = link_cut_cb, .arg = &cuts[i]};
        st = tp_timer_start(sim_world_tp(ctx.world, me), &cuts[i].cut,
                            sim_world_now(ctx.world) + k->at_ns);
        if (st != UCFT_OK)
            goto out;
    }
    if (p->flip != NULL) {
        st = coll_flip_check(p->flip, NULL, 0);
        if (st == UCFT_OK && p->flip_rank >= n)
            st = UCFT_ERR_INVALID_PARAM;
        if (st != UCFT_OK)
            goto out;
        flips = calloc(p->flip_rank < 0 ? (size_t)n : 1, sizeof(*flips));
        if (flips == NULL) {
            st = UCFT_ERR_NO_MEMORY;
            goto out;
        }
        for (int r = 0; r < n; r++)
            if (p->flip_rank < 0 || r == p->flip_rank)
                coll_flip_init(&flips[p->flip_rank < 0 ? r : 0],
                               sim_world_tp(ctx.world, r), p->flip);
    }

    ctx.start = ctx.last = ctx.last_ready = sim_world_now(ctx.world);
    for (int r = 0; r < n; r++) {
        void *buf = bufs ? bufs + (size_t)r * bsize : NULL;
        if (orc->fill != NULL && buf != NULL)
            orc->fill(buf, &args, r, n);
        tp_t *tp = sim_world_tp(ctx.world, r);
        if (flips != NULL && p->flip_rank < 0)
            tp = coll_flip_tp(&flips[r]);
        else if (flips != NULL && r == p->flip_rank)
            tp = coll_flip_tp(&flips[0]);
        if (csums != NULL)
            tp = coll_csum_tp(&csums[r], tp);
        st = op->init(states + (size_t)r * ssize, tp, &args, buf);
        if (st != UCFT_OK)
            goto out;
        if (p->prepare != NULL)
            p->prepare(p->hook_arg, r, states + (size_t)r * ssize);
    }
    /* Failures every rank knows at its start (known_dead): its transport
     * refuses them, its state hears of them right after its start. */
    for (size_t i = 0; i < p->nknown_dead; i++)
        for (int r = 0; r < n; r++)
            if (!ctx.known_dead[r]) {
                tp_peer_failed(sim_world_tp(ctx.world, r), p->known_dead[i]);
                remember_failure(&refs[r], p->known_dead[i]);
            }
    for (int r = 0; r < n; r++) {
        if (p->start_spread_ns == 0) {
            start_rank(&ctx, r);
            continue;
        }
        refs[r].start_timer = (ucft_timer_t){.cb = start_cb, .arg = &refs[r]};
        st = tp_timer_start(
            sim_world_tp(ctx.world, r), &refs[r].start_timer,
            ctx.start + start_delay(p->sim.seed, r, p->start_spread_ns));
        if (st != UCFT_OK)
            goto out;
    }
    uint64_t bound = p->max_events ? p->max_events : UINT64_MAX;
    sim_world_run(ctx.world, UINT64_MAX, bound);
    res->bounded = !sim_world_quiescent(ctx.world);
    res->end_time_ns = sim_world_now(ctx.world) - ctx.start;

    for (int r = 0; r < n; r++)
        dead[r] = (uint8_t)sim_world_is_dead(ctx.world, r);
    int first_ok = -1;
    for (int r = 0; r < n; r++) {
        void *s = states + (size_t)r * ssize;
        ucft_status_t rs = op->test(s);
        int ok = rs == UCFT_OK && !dead[r];
        if (!dead[r])
            res->live++;
        if (ok) {
            res->completed++;
            /* After a partition, the other side may be left out as the
             * dead may: this rank's side took it for failed. */
            const uint8_t *gone = dead;
            if (p->partition_side != 0 && ctx.cut_done) {
                for (int q = 0; q < n; q++)
                    pview[q] = dead[q] || side_of(&ctx, q) != side_of(&ctx, r);
                gone = pview;
            }
            if (orc->check != NULL && bufs != NULL &&
                !orc->check(bufs + (size_t)r * bsize, &args, r, n, gone))
                res->data_errors++;
            else if (p->inspect != NULL &&
                     !p->inspect(p->hook_arg, r, s,
                                 bufs ? bufs + (size_t)r * bsize : NULL, dead))
                res->data_errors++;
            /* Results that must be identical at every survivor: the
             * first len bytes (the rest of the buffer is scratch). */
            if (op->consistent && bufs != NULL && first_ok >= 0 &&
                memcmp(bufs + (size_t)r * bsize,
                       bufs + (size_t)first_ok * bsize, p->len) != 0)
                res->inconsistent++;
            if (first_ok < 0)
                first_ok = r;
        } else if (rs != UCFT_INPROGRESS && !dead[r]) {
            res->failed_ops++;
        } else if (rs == UCFT_INPROGRESS && !dead[r]) {
            res->unfinished++;
        }
        if (rank_ok != NULL)
            rank_ok[r] = (uint8_t)ok;
    }
    for (int r = 0; op->consistent && bufs != NULL && first_ok >= 0 && r < n;
         r++)
        if (dead[r] && op->test(states + (size_t)r * ssize) == UCFT_OK &&
            memcmp(bufs + (size_t)r * bsize, bufs + (size_t)first_ok * bsize,
                   p->len) != 0)
            res->dead_disagree++;
    res->ranks = n;
    res->started_knowing = ctx.started_knowing;
    res->sim_latency_ns = ctx.last - ctx.start;
    res->ready_ns = ctx.last_ready - ctx.start;
    sim_world_stats(ctx.world, &res->stats);
    res->trace_hash = sim_world_trace_hash(ctx.world);

    for (int r = 0; p->observe != NULL && r < n; r++)
        p->observe(p->observe_arg, states + (size_t)r * ssize,
                   bufs ? bufs + (size_t)r * bsize : NULL, r, dead[r]);

    /* Cancel what is left (receives of ranks that were cut off) and let
     * the cancellations complete before the states go away. After a bounded
     * run the world is destroyed with work pending: no callback runs after
     * sim_world_destroy(). */
    for (int r = 0; r < n; r++)
        if (!refs[r].cleaned)
            op->cleanup(states + (size_t)r * ssize);
    for (int r = 0; ctx.cstates != NULL && r < n; r++)
        op->comm->cleanup(cstate_of(&ctx, r));
    if (!res->bounded) {
        sim_world_run(ctx.world, UINT64_MAX, UINT64_MAX);
        for (int r = 0; op->idle != NULL && r < n; r++)
            if (!dead[r] && !sim_world_is_dead(ctx.world, r) &&
                (!op->idle(states + (size_t)r * ssize) ||
                 (ctx.cstates != NULL && !op->comm->idle(cstate_of(&ctx, r)))))
                res->not_idle++;
    }
    st = UCFT_OK;

out:
    sim_world_destroy(ctx.world);
    for (int r = 0; flips != NULL && r < (p->flip_rank < 0 ? n : 1); r++) {
        res->flips += flips[r].flipped;
        coll_flip_cleanup(&flips[r]);
    }
    free(flips);
    for (int r = 0; csums != NULL && r < n; r++)
        res->csum_dropped += csums[r].dropped;
    for (int r = 0; csums != NULL && r < n; r++)
        coll_csum_cleanup(&csums[r]); /* the dead ranks' requests */
    free(csums);
    for (int r = 0; op->destroy != NULL && states != NULL && r < n; r++)
        op->destroy(states + (size_t)r * ssize);
    for (int r = 0; ctx.cstates != NULL && r < n; r++)
        op->comm->destroy(cstate_of(&ctx, r));
    free(ctx.cstates);
    free(states);
    free(bufs);
    free(dead);
    for (int r = 0; refs != NULL && r < n; r++)
        free(refs[r].known);
    free(refs);
    free(cuts);
    free(ctx.node_down);
    free(ctx.known_dead);
    res->wall_s = (double)(ucft_clock_now_ns() - t0) / 1e9;
    return st;
}
