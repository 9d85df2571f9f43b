/*
 * Collectives in a context: the public calls post one algorithm of the
 * collective table (collectives/coll_op.h) on the context's transport.
 *
 * - The algorithm of each operation is chosen once, at init, from
 *   UCFT_<OP>_ALG; f and the sequence number belong to the communicator.
 * - The op buffer holds buf_mult * len bytes; its first len bytes are the
 *   input on entry and the output on exit (every algorithm's convention).
 * - Failures learnt by the context (rt_failure_declare) are passed to every
 *   running collective (on_failure).
 * - States and buffers are reused: a steady loop of operations allocates
 *   nothing. When the request is released the algorithm's cleanup cancels
 *   what is pending; the cancelled transport requests complete from a later
 *   progress call and still touch the state, so the state waits in the
 *   "finishing" list until ops->idle says none is pending (usually the next
 *   progress call), then goes to its operation's free list (at most
 *   RT_COLL_FREE_MAX kept; the others are freed). An algorithm without
 *   idle cannot tell: its state lingers ("zombie") for RT_COLL_LINGER_NS.
 * - Early completion: an algorithm whose output is final before the rank
 *   has finished its part (args.ready_cb: a corrected broadcast rank that
 *   has the data but has corrections to send and hear) completes the
 *   request at once; the state runs on in the running list (failures,
 *   progress) and is retired at its done_cb, even if the caller has let go
 *   of the request ("detached"). At most RT_COLL_EARLY_MAX states run on
 *   this way; beyond that a request completes at done_cb as before, which
 *   is also the flow control of a root that runs ahead.
 * - Late messages of finished operations (corrections keep coming after a
 *   rank is done) are swept out of the transport's unexpected queue
 *   (runtime/coll_drain.c): they cannot match a later instance (the tag
 *   carries the sequence) and must not pile up there, where every masked
 *   receive would have to scan them.
 * - Kept instances (ops->keep_after_done: corrected allreduce, barrier):
 *   one that completes with its result stays running after its request
 *   is done, told of failures, its messages neither swept nor lost,
 *   because a candidate root that dies during its broadcast sends the
 *   ranks without the result to the next attempt, and that attempt waits
 *   for this rank (which joins it with the value it delivered). It is
 *   retired when a later kept instance of the communicator, posted after
 *   it completed, completes here: that one needed every live rank's
 *   contribution, so every live rank had posted it, and (calls on a
 *   communicator being made in order) had finished the earlier one; the
 *   retired ones are cleaned up by progress and by the next post. At
 *   most one kept instance per communicator when calls do not overlap;
 *   the last one is cleaned up by finalize, or when a later instance
 *   reuses its tag sequence (coll_retire_aliased). Limit: with several
 *   allreduces in flight at once on a communicator, a rank may still be
 *   in an instance that this rank has retired.
 */
#include "runtime/coll.h"
#include "runtime/context.h"
#include "runtime/base/clock.h"
#include "collectives/coll_op.h"
#include "collectives/dtype.h"

#include <stdlib.h>
#include <string.h>

#define RT_COLL_LINGER_NS (2 * UCFT_NSEC_PER_SEC)
#define RT_COLL_FREE_MAX  (RT_COLL_EARLY_MAX + 4) /* kept for reuse per op */
#define RT_COLL_EARLY_MAX 16 /* states running on after their request */

static const char *const op_names[RT_COLL_NOPS + 1] = {
    "bcast", "reduce", "allreduce", "barrier", "barrier"};

ucft_status_t rt_coll_init(struct ucft_context *ctx)
{
    for (int i = 0; i < RT_COLL_NOPS; i++) {
        ctx->coll_alg[i] = coll_op_find(op_names[i], ctx->cfg.alg[i]);
        if (ctx->coll_alg[i] == NULL) {
            ucft_error(&ctx->log,
                       "UCFT_%s_ALG='%s': no such %s algorithm (ucft-sim "
                       "--list shows them)",
                       i == 0   ? "BCAST"
                       : i == 1 ? "REDUCE"
                       : i == 2 ? "ALLREDUCE"
                                : "BARRIER",
                       ctx->cfg.alg[i], op_names[i]);
            return UCFT_ERR_INVALID_PARAM;
        }
    }
    ctx->coll_sync = coll_op_find("barrier", "corrected");
    if (ctx->coll_sync == NULL)
        return UCFT_ERR_INTERNAL;
    if (ctx->cfg.f < 1 || ctx->cfg.f > 64) {
        ucft_error(&ctx->log, "UCFT_F=%d: must be 1..64", ctx->cfg.f);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (ctx->cfg.coll_batch < 1 || ctx->cfg.coll_batch > 64) {
        ucft_error(&ctx->log, "UCFT_COLL_BATCH=%u: must be 1..64",
                   ctx->cfg.coll_batch);
        return UCFT_ERR_INVALID_PARAM;
    }
    ctx->world.f = ctx->cfg.f;
    return rt_coll_cs_init(ctx, &ctx->world);
}

static void list_add(struct rt_coll *head, struct rt_coll *c)
{
    c->next = head;
    c->prev = head->prev;
    head->prev->next = c;
    head->prev = c;
}

static void list_del(struct rt_coll *c)
{
    c->prev->next = c->next;
    c->next->prev = c->prev;
    c->next = c->prev = c;
}

static void coll_free(struct ucft_context *ctx, struct rt_coll *c)
{
    ctx->coll_stats.live--;
    if (c->ops->destroy != NULL)
        c->ops->destroy(c->state);
    free(c->state);
    free(c->buf);
    free(c);
}

/* A state from the operation's free list, or a new one. */
static struct rt_coll *coll_get(struct ucft_context *ctx, int slot,
                                const coll_op_ops_t *ops)
{
    rt_coll_stats_t *cs = &ctx->coll_stats;
    struct rt_coll *c = ctx->coll_free[slot];
    if (c != NULL) {
        ctx->coll_free[slot] = c->next;
        cs->nfree[slot]--;
    } else {
        c = calloc(1, sizeof(*c));
        if (c == NULL)
            return NULL;
        c->state = calloc(1, ops->state_size);
        if (c->state == NULL) {
            free(c);
            return NULL;
        }
        c->slot = slot;
        cs->allocs++;
        if (++cs->live > cs->peak)
            cs->peak = cs->live;
    }
    c->next = c->prev = c;
    return c;
}

/* The state's requests have all completed: reuse it, or free it. */
static void coll_recycle(struct ucft_context *ctx, struct rt_coll *c)
{
    if (ctx->coll_stats.nfree[c->slot] >= RT_COLL_FREE_MAX) {
        coll_free(ctx, c);
        return;
    }
    c->req = NULL;
    c->out = NULL;
    c->next = ctx->coll_free[c->slot];
    c->prev = NULL;
    ctx->coll_free[c->slot] = c;
    ctx->coll_stats.nfree[c->slot]++;
}

/* After ops->cleanup: recycle at once when nothing is pending, else wait
 * (for idle, or for the linger time). Inside an algorithm's callback
 * (in_cb) the state is still in use up the stack: it waits for the next
 * progress call. */
static void coll_retire(struct ucft_context *ctx, struct rt_coll *c, int in_cb)
{
    if (c->ops->idle != NULL) {
        if (!in_cb && c->ops->idle(c->state))
            coll_recycle(ctx, c);
        else
            list_add(&ctx->finishing, c);
        return;
    }
    c->free_at = ucft_clock_now_ns() + RT_COLL_LINGER_NS;
    list_add(&ctx->zombies, c);
}

static void coll_release(struct ucft_request *r, int in_cb);

/* `c` completed with its result and stays running for the others (see
 * the top of this file). The kept instances that completed before `c` was
 * posted are no longer needed: marked, and cleaned up from progress (this
 * runs inside a transport callback, possibly inside rt_coll_failure's walk
 * of the list). */
static void coll_keep(struct ucft_context *ctx, struct rt_coll *c)
{
    uint64_t posted = c->gen;
    c->kept = 1;
    c->gen = ++c->comm->kept_gen;
    for (struct rt_coll *d = ctx->colls.next; d != &ctx->colls; d = d->next)
        if (d != c && d->kept && !d->retired && d->comm == c->comm &&
            d->gen <= posted) {
            d->retired = 1;
            ctx->coll_retire = 1;
        }
}

/* The request's outcome: OK with the output copied out, or the error. */
static void coll_complete(struct rt_coll *c, ucft_status_t status)
{
    struct ucft_request *r = c->req;
    if (status == UCFT_OK && c->out != NULL && c->args.len > 0)
        memcpy(c->out, c->buf, c->args.len);
    c->out = NULL;
    r->info.status = status;
    r->info.length = status == UCFT_OK ? c->args.len : 0;
    r->done = 1;
}

/* The rank's output is final (args.ready_cb), maybe before the state has
 * finished: complete the request now, unless too many states run on. */
static void coll_ready(void *arg, int rank, ucft_status_t status)
{
    struct rt_coll *c = arg;
    struct ucft_request *r = c->req;
    (void)rank;
    if (r == NULL || r->done || c->ready || status != UCFT_OK ||
        c->ctx->coll_early >= RT_COLL_EARLY_MAX)
        return;
    c->ready = 1;
    c->ctx->coll_early++;
    coll_complete(c, UCFT_OK);
    if (r->released) { /* nobody waits for it: detach at once */
        r->coll = NULL;
        c->req = NULL;
        rt_req_put(r);
    }
}

/* The rank has finished its part (done_cb), from a transport callback
 * inside the algorithm (or from rt_coll_post). */
static void coll_done(void *arg, int rank, ucft_status_t status)
{
    struct rt_coll *c = arg;
    struct ucft_context *ctx = c->ctx;
    struct ucft_request *r = c->req;
    (void)rank;
    if (c->kept)
        return; /* its caller has had its answer; it runs on, retired later */
    if (status == UCFT_OK && c->ops->keep_after_done && !c->ready) {
        coll_complete(c, status);
        coll_keep(ctx, c);
        if (r->released)
            coll_release(r, 1);
        return;
    }
    list_del(c);
    rt_drain_finished(ctx);
    if (c->ready) {
        /* The request completed at ready_cb; the caller has its output. */
        ctx->coll_early--;
        if (status != UCFT_OK)
            ucft_debug(&ctx->log,
                       "collective %u: finished its part with %s after "
                       "its output was delivered",
                       (unsigned)c->args.seq, ucft_status_string(status));
        if (r == NULL) { /* detached */
            c->ops->cleanup(c->state);
            coll_retire(ctx, c, 1);
        }
        return;
    }
    coll_complete(c, status);
    if (r->released)
        coll_release(r, 1);
}

void rt_coll_release(struct ucft_request *r)
{
    coll_release(r, 0);
}

static void coll_release(struct ucft_request *r, int in_cb)
{
    struct rt_coll *c = r->coll;
    struct ucft_context *ctx = r->ctx;
    if (c == NULL)
        return;
    r->coll = NULL;
    if (c->kept) {
        c->req = NULL; /* still running; cleaned up once retired */
        ctx->coll_retire |= c->retired;
        if (r->released)
            rt_req_put(r);
        return;
    }
    if (c->next != c && c->ready) {
        c->req = NULL; /* detached: runs on until its done_cb */
        if (r->released)
            rt_req_put(r);
        return;
    }
    if (c->next != c) {
        list_del(c); /* still running: the caller gave it up */
        rt_drain_finished(ctx);
    }
    c->ops->cleanup(c->state);
    coll_retire(ctx, c, in_cb);
    if (r->released)
        rt_req_put(r);
}

static unsigned coll_retire_kept(struct ucft_context *ctx);

/* A kept instance whose 16-bit tag sequence the next instance of its
 * communicator would reuse (65,536 instances later) is retired now, before
 * the new one posts anything: otherwise its pending receives could take
 * the new instance's messages (same tag when the kinds match), and the
 * sweeper, which counts a message of a running instance as wanted, stops
 * at the first late message of the new one and never drops anything again
 * (a barrier followed by only broadcasts, after a failure: 0.35 s for 40k
 * broadcasts, over 120 s for 200k). By then every rank that needed it has
 * had 65,535 further collectives' time to finish it. A caller still
 * holding its completed request keeps the request, not the instance.
 * The instance is cleaned up as every retired one is (coll_retire_kept). */
static void coll_retire_aliased(struct ucft_context *ctx,
                                struct ucft_comm *comm)
{
    const uint32_t mask = (1u << UCFT_TAG_SEQ_BITS) - 1;
    int any = 0;
    for (struct rt_coll *c = ctx->colls.next; c != &ctx->colls; c = c->next) {
        if (!c->kept || c->comm != comm ||
            ((c->args.seq ^ comm->seq) & mask) != 0)
            continue;
        ucft_debug(&ctx->log,
                   "collective %u: kept instance retired, instance %u "
                   "reuses its tag sequence",
                   (unsigned)c->args.seq, (unsigned)comm->seq);
        if (c->req != NULL) {
            c->req->coll = NULL;
            c->req = NULL;
        }
        c->retired = any = 1;
    }
    if (any)
        coll_retire_kept(ctx);
}

/* Whether the collectives of `comm` tell the wait when a yield cannot help
 * (coll_args_t.remote_wait): a hybrid wait with a mate to spin for. */
static int mate_spin(const struct ucft_context *ctx,
                     const struct ucft_comm *comm)
{
    return comm->mate >= 0 && ctx->cfg.wait_mode == RT_WAIT_HYBRID &&
           ctx->cfg.mate_spin_ns > 0;
}

int rt_coll_remote_wait(void *req)
{
    const struct ucft_request *r = req;
    return r->kind == RT_REQ_COLL && r->coll != NULL && r->coll->remote_wait;
}

/* rt_coll_post; `inject_op` is the operation UCFT_INJECT counts the call
 * as (-1: none). */
static ucft_status_t coll_post(ucft_comm_h comm, int op, int inject_op,
                               int root, const void *in, void *out,
                               size_t count, int dtype, int redop,
                               ucft_request_h *req)
{
    struct ucft_context *ctx;
    ucft_status_t st;

    if (comm == NULL)
        return rt_bad_arg(NULL, op_names[op], "NULL communicator");
    ctx = comm->ctx;
    size_t esize = dtype_size(dtype);
    int reduces =
        op != RT_COLL_BCAST && op != RT_COLL_BARRIER && op != RT_COLL_SYNC;
    const coll_user_op_t *uop = reduces ? rt_user_op(ctx, redop) : NULL;
    const coll_op_ops_t *ops =
        op == RT_COLL_SYNC ? ctx->coll_sync : ctx->coll_alg[op];
    const char *bad =
        req == NULL                      ? "NULL request pointer"
        : ctx->finalizing                ? "called after ucft_finalize"
        : esize == 0                     ? "unknown datatype"
        : root < 0 || root >= comm->size ? "root out of range"
        : count > 0 && in == NULL && op != RT_COLL_BCAST ? "NULL send buffer"
        : reduces && uop == NULL && dtype_validate(dtype, redop) != UCFT_OK
            ? "unknown operation, or one the datatype does not "
              "support"
        : count > 0 && esize * ops->buf_mult > SIZE_MAX / count
            ? "count too large"
            : NULL;
    if (bad != NULL) {
        ucft_error(&ctx->log,
                   "%s: %s (count %zu, datatype %d, op %d, root %d of %d, "
                   "buffers %p/%p)",
                   op_names[op], bad, count, dtype, redop, root, comm->size, in,
                   out);
        return UCFT_ERR_INVALID_PARAM;
    }
    rt_coll_flow(comm, op); /* may post and wait for a barrier first */
    size_t len = count * esize;
    /* A rank whose operations complete at once (a broadcast root) never
     * waits, so nothing else progresses it: without this, the late messages
     * of its finished instances would stay in the transport until the next
     * wait (thousands of them), and the cancellations of its finished
     * instances would not complete (their states could not be reused). */
    if ((ctx->coll_free[op] == NULL &&
         ctx->finishing.next != &ctx->finishing) ||
        (ctx->drain.pending && (++ctx->coll_post_tick & 7) == 0))
        ucft_context_progress(ctx);
    /* Retired kept instances are cleaned up from progress; a rank whose
     * operations all complete inside their post (a job of one rank)
     * never progresses, and would keep one per operation. */
    if (ctx->coll_retire)
        coll_retire_kept(ctx);
    coll_retire_aliased(ctx, comm);
    if (ctx->drain.pending)
        rt_drain_sweep(ctx); /* before this instance posts its receives */
    struct rt_coll *c = coll_get(ctx, op, ops);
    if (c == NULL)
        return UCFT_ERR_NO_MEMORY;
    c->ops = ops;
    size_t need = len * ops->buf_mult;
    if (need > c->bufcap) {
        free(c->buf);
        c->buf = malloc(need);
        c->bufcap = c->buf != NULL ? need : 0;
    }
    struct ucft_request *r = rt_req_get(ctx);
    if ((need && c->buf == NULL) || r == NULL) {
        if (r != NULL)
            rt_req_put(r);
        coll_recycle(ctx, c); /* nothing was posted */
        return UCFT_ERR_NO_MEMORY;
    }
    ctx->coll_stats.ops++;
    if (len > 0 && in != NULL)
        memcpy(c->buf, in, len);
    c->out = out;
    c->req = r;
    c->ctx = ctx;
    c->ready = 0;
    c->comm = comm;
    c->gen = comm->kept_gen;
    c->kept = c->retired = 0;
    c->args = (coll_args_t){
        .root = root,
        .len = len,
        .ctx = comm->ctx_id,
        .seq = comm->seq++,
        .f = comm->f,
        .count = count,
        .dtype = dtype,
        .redop = redop,
        .user_op = uop,
        .map = comm->map.n > 0 ? &comm->map : NULL,
        .rndv_min = ctx->cfg.coll_rndv_min,
        .comm_state = op < RT_COLL_NOPS && ops == ctx->coll_alg[op]
                          ? comm->coll_cs[op]
                          : NULL,
        .done_cb = coll_done,
        .done_arg = c,
        .ready_cb = coll_ready,
        .remote_wait = mate_spin(ctx, comm) ? &c->remote_wait : NULL,
        .mate = comm->mate};
    c->remote_wait = 0;
    r->kind = RT_REQ_COLL;
    r->comm = comm;
    r->coll = c;
    /* UCFT_INJECT: a call it names runs on a filter that may kill us. */
    tp_t *tp = ctx->tp;
    if (rt_inject_active(&ctx->inject))
        tp = rt_inject_call(&ctx->inject, inject_op, comm->ctx_id, c->args.seq);
    st = ops->init(c->state, tp, &c->args, c->buf);
    if (st == UCFT_OK) {
        list_add(&ctx->colls, c);
        st = ops->start(c->state);
    }
    /* Failures known before this operation began are news to it too (the
     * algorithm must not wait for a rank this context knows is dead), all
     * of them while the state runs: also when the request has completed
     * already (ready_cb, or a kept instance), as the state then runs on
     * and still waits for its peers. */
    for (size_t i = 0; st == UCFT_INPROGRESS && i < ctx->nfailed; i++) {
        if (ops->on_failure != NULL)
            ops->on_failure(c->state, ctx->failed_list[i]);
        if (c->next == c)
            return *req = r, UCFT_OK; /* finished by that news */
    }
    if (st == UCFT_OK) {
        /* Done at once (e.g. one rank): done_cb did not run. */
        coll_done(c, comm->rank, ops->test(c->state));
    } else if (st != UCFT_INPROGRESS) {
        if (c->ready)
            ctx->coll_early--;
        list_del(c);
        rt_drain_finished(ctx);
        ops->cleanup(c->state);
        coll_retire(ctx, c, 0);
        r->coll = NULL;
        rt_req_put(r);
        return st;
    }
    *req = r;
    return UCFT_OK;
}

ucft_status_t rt_coll_post(ucft_comm_h comm, int op, int root, const void *in,
                           void *out, size_t count, int dtype, int redop,
                           ucft_request_h *req)
{
    return coll_post(comm, op, op, root, in, out, count, dtype, redop, req);
}

ucft_status_t rt_coll_post_flow(ucft_comm_h comm, ucft_request_h *req)
{
    return coll_post(comm, RT_COLL_SYNC, -1, 0, NULL, NULL, 0, UCFT_UINT8, 0,
                     req);
}

static int no_early(void *arg)
{
    return ((struct ucft_context *)arg)->coll_early == 0;
}

void rt_coll_quiesce(struct ucft_context *ctx, uint64_t timeout_ns)
{
    if (ctx->coll_early > 0 &&
        rt_wait_until(ctx, no_early, ctx, timeout_ns) != UCFT_OK)
        ucft_warn(&ctx->log,
                  "finalize: %u collectives still running their part after "
                  "their result was delivered",
                  ctx->coll_early);
}

void rt_coll_failure(struct ucft_context *ctx, int rank)
{
    rt_coll_cs_failure(ctx, rank);
    for (struct rt_coll *c = ctx->colls.next, *n; c != &ctx->colls; c = n) {
        n = c->next; /* on_failure may complete (and unlink) c */
        if (c->ops->on_failure != NULL)
            c->ops->on_failure(c->state, rank);
    }
}

/* Cleans up the retired kept instances whose requests are released. */
static unsigned coll_retire_kept(struct ucft_context *ctx)
{
    unsigned n = 0;
    ctx->coll_retire = 0;
    for (struct rt_coll *c = ctx->colls.next, *nx; c != &ctx->colls; c = nx) {
        nx = c->next;
        if (!c->retired || c->req != NULL)
            continue; /* the release sets coll_retire again */
        list_del(c);
        rt_drain_finished(ctx);
        c->ops->cleanup(c->state);
        coll_retire(ctx, c, 0);
        n++;
    }
    return n;
}

unsigned rt_coll_progress(struct ucft_context *ctx)
{
    unsigned n = 0;
    if (ctx->coll_retire)
        n += coll_retire_kept(ctx);
    /* Late messages also arrive while no instance ends here (a rank far
     * ahead waits for the others): sweep every 64th call too, and at every
     * call while finalizing. */
    if (ctx->finalizing ||
        ((++ctx->coll_tick & 63) == 0 && ctx->coll_stats.ops > 0))
        ctx->drain.pending = 1;
    if (ctx->drain.pending)
        rt_drain_sweep(ctx);
    /* Finished states whose cancelled requests have completed by now. */
    for (struct rt_coll *c = ctx->finishing.next, *nx; c != &ctx->finishing;
         c = nx) {
        nx = c->next;
        if (c->ops->idle(c->state)) {
            list_del(c);
            coll_recycle(ctx, c);
        }
    }
    /* Lingering states are freed in bulk now and then: a clock read on
     * every progress call would tax the point-to-point hot path. */
    if (ctx->zombies.next == &ctx->zombies || (ctx->coll_tick & 63) != 0)
        return 0;
    uint64_t now = ucft_clock_now_ns();
    while (ctx->zombies.next != &ctx->zombies &&
           ctx->zombies.next->free_at <= now) {
        struct rt_coll *c = ctx->zombies.next;
        list_del(c);
        coll_free(ctx, c);
        n++;
    }
    return n;
}

void rt_coll_cleanup(struct ucft_context *ctx)
{
    rt_coll_cs_cleanup(ctx);
    while (ctx->colls.next != &ctx->colls) {
        struct rt_coll *c = ctx->colls.next;
        list_del(c);
        c->ops->cleanup(c->state);
        list_add(&ctx->zombies, c);
    }
    /* Drop the late messages still queued: a rank that ran far ahead of
     * the others gets thousands of them at the end, more than one sweep
     * takes (bounded, like the wait below). */
    uint64_t until = ucft_clock_now_ns() + 200 * UCFT_NSEC_PER_MSEC;
    uint64_t before = ctx->drained;
    do {
        ctx->drain.pending = 1;
        rt_drain_sweep(ctx);
        tp_progress(ctx->tp);
    } while ((ctx->drain.pending || ctx->drain.posted) &&
             ucft_clock_now_ns() < until);
    if (ctx->drained > before)
        ucft_info(&ctx->log, "finalize: %llu late collective messages dropped",
                  (unsigned long long)(ctx->drained - before));
    rt_drain_cancel_all(ctx);
    /* Let the cancellations complete (their callbacks touch the states):
     * progress until the transport is quiet for a few rounds, bounded. */
    uint64_t end = ucft_clock_now_ns() + 200 * UCFT_NSEC_PER_MSEC;
    for (int quiet = 0;
         (quiet < 3 || !rt_coll_cs_idle(ctx)) && ucft_clock_now_ns() < end;)
        quiet = tp_progress(ctx->tp) ? 0 : quiet + 1;
}

void rt_coll_free_all(struct ucft_context *ctx)
{
    rt_coll_stats_t *cs = &ctx->coll_stats;
    rt_coll_cs_free(ctx);
    if (cs->ops > 0)
        ucft_info(&ctx->log,
                  "collectives: %llu operations, %llu states allocated, at "
                  "most %u at once; %llu late messages dropped",
                  (unsigned long long)cs->ops, (unsigned long long)cs->allocs,
                  cs->peak, (unsigned long long)ctx->drained);
    /* After the transport is gone: nothing can touch the states now. */
    rt_coll_t *heads[2] = {&ctx->finishing, &ctx->zombies};
    for (int i = 0; i < 2; i++)
        while (heads[i]->next != heads[i]) {
            struct rt_coll *c = heads[i]->next;
            list_del(c);
            coll_free(ctx, c);
        }
    for (int i = 0; i <= RT_COLL_NOPS; i++)
        while (ctx->coll_free[i] != NULL) {
            struct rt_coll *c = ctx->coll_free[i];
            ctx->coll_free[i] = c->next;
            coll_free(ctx, c);
        }
}

/* ---- public calls ------------------------------------------------------ */

ucft_status_t ucft_comm_set_f(ucft_comm_h comm, int f)
{
    if (comm == NULL)
        return rt_bad_arg(NULL, "ucft_comm_set_f", "NULL communicator");
    if (f < 1 || f > 64) {
        ucft_error(&comm->ctx->log, "ucft_comm_set_f: f = %d, expected 1 to 64",
                   f);
        return UCFT_ERR_INVALID_PARAM;
    }
    comm->f = f;
    return UCFT_OK;
}

int ucft_comm_get_f(ucft_comm_h comm)
{
    return comm ? comm->f : -1;
}

/* A NULL output buffer where one is needed: logged. */
static ucft_status_t null_output(ucft_comm_h comm, const char *call,
                                 const char *what)
{
    if (comm == NULL)
        return rt_bad_arg(NULL, call, "NULL communicator");
    ucft_error(&comm->ctx->log, "%s: NULL %s with a count above 0", call, what);
    return UCFT_ERR_INVALID_PARAM;
}

ucft_status_t ucft_ibcast(ucft_comm_h comm, void *buf, size_t count,
                          ucft_datatype_t dtype, int root, ucft_request_h *req)
{
    int me = ucft_comm_rank(comm);
    if (count > 0 && buf == NULL)
        return null_output(comm, "ucft_ibcast", "buffer");
    return rt_coll_post(comm, RT_COLL_BCAST, root, me == root ? buf : NULL,
                        me == root ? NULL : buf, count, (int)dtype, 0, req);
}

ucft_status_t ucft_ireduce(ucft_comm_h comm, const void *sendbuf, void *recvbuf,
                           size_t count, ucft_datatype_t dtype, ucft_op_t op,
                           int root, ucft_request_h *req)
{
    int me = ucft_comm_rank(comm);
    if (count > 0 && me == root && recvbuf == NULL)
        return null_output(comm, "ucft_ireduce", "receive buffer");
    return rt_coll_post(comm, RT_COLL_REDUCE, root, sendbuf,
                        me == root ? recvbuf : NULL, count, (int)dtype, (int)op,
                        req);
}

ucft_status_t ucft_iallreduce(ucft_comm_h comm, const void *sendbuf,
                              void *recvbuf, size_t count,
                              ucft_datatype_t dtype, ucft_op_t op,
                              ucft_request_h *req)
{
    if (count > 0 && recvbuf == NULL)
        return null_output(comm, "ucft_iallreduce", "receive buffer");
    return rt_coll_post(comm, RT_COLL_ALLREDUCE, 0, sendbuf, recvbuf, count,
                        (int)dtype, (int)op, req);
}

ucft_status_t ucft_ibarrier(ucft_comm_h comm, ucft_request_h *req)
{
    return rt_coll_post(comm, RT_COLL_BARRIER, 0, NULL, NULL, 0, UCFT_UINT8, 0,
                        req);
}

ucft_status_t ucft_bcast(ucft_comm_h comm, void *buf, size_t count,
                         ucft_datatype_t dtype, int root)
{
    ucft_request_h r;
    ucft_status_t st = ucft_ibcast(comm, buf, count, dtype, root, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_reduce(ucft_comm_h comm, const void *sendbuf, void *recvbuf,
                          size_t count, ucft_datatype_t dtype, ucft_op_t op,
                          int root)
{
    ucft_request_h r;
    ucft_status_t st =
        ucft_ireduce(comm, sendbuf, recvbuf, count, dtype, op, root, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_allreduce(ucft_comm_h comm, const void *sendbuf,
                             void *recvbuf, size_t count, ucft_datatype_t dtype,
                             ucft_op_t op)
{
    ucft_request_h r;
    ucft_status_t st =
        ucft_iallreduce(comm, sendbuf, recvbuf, count, dtype, op, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t rt_coll_sync(ucft_comm_h comm)
{
    ucft_request_h r;
    ucft_status_t st =
        rt_coll_post(comm, RT_COLL_SYNC, 0, NULL, NULL, 0, UCFT_UINT8, 0, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_barrier(ucft_comm_h comm)
{
    ucft_request_h r;
    ucft_status_t st = ucft_ibarrier(comm, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}
