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
 * - A finished operation's state stays allocated ("zombie") for
 *   RT_COLL_LINGER_NS after the request is released: the transport requests
 *   it cancelled complete from later progress calls and still touch it.
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
 *   communicator being made in order) had finished the earlier one. At
 *   most one kept instance per communicator when calls do not overlap;
 *   the last one is cleaned up by finalize. Limit: with several
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
    ctx->world.f = ctx->cfg.f;
    return UCFT_OK;
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

static void coll_free(struct rt_coll *c)
{
    free(c->state);
    free(c->buf);
    free(c);
}

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

/* Completion, from a transport callback inside the algorithm. */
static void coll_done(void *arg, int rank, ucft_status_t status)
{
    struct rt_coll *c = arg;
    struct ucft_request *r = c->req;
    (void)rank;
    if (r == NULL || r->done)
        return; /* a kept instance: its caller has had its answer */
    if (status == UCFT_OK && c->out != NULL && c->args.len > 0)
        memcpy(c->out, c->buf, c->args.len);
    r->info.status = status;
    r->info.length = status == UCFT_OK ? c->args.len : 0;
    r->done = 1;
    if (status == UCFT_OK && c->ops->keep_after_done) {
        coll_keep(r->ctx, c);
    } else {
        list_del(c);
        rt_drain_finished(r->ctx, c->args.ctx, c->args.seq);
    }
    if (r->released)
        rt_coll_release(r);
}

void rt_coll_release(struct ucft_request *r)
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
    if (c->next != c) {
        list_del(c); /* still running: the caller gave it up */
        rt_drain_finished(ctx, c->args.ctx, c->args.seq);
    }
    c->ops->cleanup(c->state);
    c->free_at = ucft_clock_now_ns() + RT_COLL_LINGER_NS;
    list_add(&ctx->zombies, c);
    if (r->released)
        rt_req_put(r);
}

ucft_status_t rt_coll_post(ucft_comm_h comm, int op, int root, const void *in,
                           void *out, size_t count, int dtype, int redop,
                           ucft_request_h *req)
{
    struct ucft_context *ctx;
    ucft_status_t st;

    if (comm == NULL || req == NULL)
        return UCFT_ERR_INVALID_PARAM;
    ctx = comm->ctx;
    size_t esize = dtype_size(dtype);
    if (ctx->finalizing || esize == 0 ||
        (count > 0 && (in == NULL && op != 0)) ||
        (root < 0 || root >= comm->size) ||
        (op != 0 && op != RT_COLL_BARRIER &&
         dtype_validate(dtype, redop) != UCFT_OK) ||
        (count > 0 && esize > SIZE_MAX / count)) {
        ucft_error(&ctx->log,
                   "%s: invalid arguments (count %zu, datatype %d, op %d, "
                   "root %d of %d, buffers %p/%p)",
                   op_names[op], count, dtype, redop, root, comm->size, in,
                   out);
        return UCFT_ERR_INVALID_PARAM;
    }
    const coll_op_ops_t *ops =
        op == RT_COLL_SYNC ? ctx->coll_sync : ctx->coll_alg[op];
    size_t len = count * esize;
    if (ctx->drain.pending)
        rt_drain_sweep(ctx); /* before this instance posts its receives */
    struct rt_coll *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return UCFT_ERR_NO_MEMORY;
    c->next = c->prev = c;
    c->ops = ops;
    c->state = calloc(1, ops->state_size);
    c->buf = len ? malloc(len * ops->buf_mult) : NULL;
    struct ucft_request *r = rt_req_get(ctx);
    if (c->state == NULL || (len && c->buf == NULL) || r == NULL) {
        if (r != NULL)
            rt_req_put(r);
        coll_free(c);
        return UCFT_ERR_NO_MEMORY;
    }
    if (len > 0 && in != NULL)
        memcpy(c->buf, in, len);
    c->out = out;
    c->req = r;
    c->comm = comm;
    c->gen = comm->kept_gen;
    c->args = (coll_args_t){.root = root,
                            .len = len,
                            .ctx = comm->ctx_id,
                            .seq = comm->seq++,
                            .f = comm->f,
                            .count = count,
                            .dtype = dtype,
                            .redop = redop,
                            .done_cb = coll_done,
                            .done_arg = c};
    r->kind = RT_REQ_COLL;
    r->comm = comm;
    r->coll = c;
    /* UCFT_INJECT: a call it names runs on a filter that may kill us. */
    tp_t *tp = ctx->tp;
    if (rt_inject_active(&ctx->inject))
        tp = rt_inject_call(&ctx->inject, op, comm->ctx_id, c->args.seq);
    st = ops->init(c->state, tp, &c->args, c->buf);
    if (st == UCFT_OK) {
        list_add(&ctx->colls, c);
        st = ops->start(c->state);
    }
    /* Failures known before this operation began are news to it too (the
     * algorithm must not wait for a rank this context knows is dead). */
    for (size_t i = 0; st == UCFT_INPROGRESS && i < ctx->nfailed; i++) {
        if (ops->on_failure != NULL)
            ops->on_failure(c->state, ctx->failed_list[i]);
        if (r->done)
            return *req = r, UCFT_OK; /* completed by that news */
    }
    if (st == UCFT_OK) {
        /* Done at once (e.g. one rank): done_cb did not run. */
        coll_done(c, comm->rank, ops->test(c->state));
    } else if (st != UCFT_INPROGRESS) {
        list_del(c);
        rt_drain_finished(ctx, c->args.ctx, c->args.seq);
        ops->cleanup(c->state);
        c->free_at = ucft_clock_now_ns() + RT_COLL_LINGER_NS;
        list_add(&ctx->zombies, c);
        r->coll = NULL;
        rt_req_put(r);
        return st;
    }
    *req = r;
    return UCFT_OK;
}

void rt_coll_failure(struct ucft_context *ctx, int rank)
{
    for (struct rt_coll *c = ctx->colls.next, *n; c != &ctx->colls; c = n) {
        n = c->next; /* on_failure may complete (and unlink) c */
        if (c->ops->on_failure != NULL)
            c->ops->on_failure(c->state, rank);
    }
}

/* Cleans up the retired kept instances whose requests are released. */
static unsigned coll_retire(struct ucft_context *ctx)
{
    unsigned n = 0;
    ctx->coll_retire = 0;
    for (struct rt_coll *c = ctx->colls.next, *nx; c != &ctx->colls; c = nx) {
        nx = c->next;
        if (!c->retired || c->req != NULL)
            continue; /* the release sets coll_retire again */
        list_del(c);
        rt_drain_finished(ctx, c->args.ctx, c->args.seq);
        c->ops->cleanup(c->state);
        c->free_at = ucft_clock_now_ns() + RT_COLL_LINGER_NS;
        list_add(&ctx->zombies, c);
        n++;
    }
    return n;
}

unsigned rt_coll_progress(struct ucft_context *ctx)
{
    unsigned n = 0;
    if (ctx->coll_retire)
        n += coll_retire(ctx);
    if (ctx->drain.pending)
        rt_drain_sweep(ctx);
    /* Lingering states are freed in bulk now and then: a clock read on
     * every progress call would tax the point-to-point hot path. */
    if (ctx->zombies.next == &ctx->zombies || (++ctx->coll_tick & 63) != 0)
        return n;
    uint64_t now = ucft_clock_now_ns();
    while (ctx->zombies.next != &ctx->zombies &&
           ctx->zombies.next->free_at <= now) {
        struct rt_coll *c = ctx->zombies.next;
        list_del(c);
        coll_free(c);
        n++;
    }
    return n;
}

void rt_coll_cleanup(struct ucft_context *ctx)
{
    while (ctx->colls.next != &ctx->colls) {
        struct rt_coll *c = ctx->colls.next;
        list_del(c);
        c->ops->cleanup(c->state);
        list_add(&ctx->zombies, c);
    }
    rt_drain_cancel_all(ctx);
    /* Let the cancellations complete (their callbacks touch the states):
     * progress until the transport is quiet for a few rounds, bounded. */
    uint64_t end = ucft_clock_now_ns() + 200 * UCFT_NSEC_PER_MSEC;
    for (int quiet = 0; quiet < 3 && ucft_clock_now_ns() < end;)
        quiet = tp_progress(ctx->tp) ? 0 : quiet + 1;
}

void rt_coll_free_all(struct ucft_context *ctx)
{
    /* After the transport is gone: nothing can touch the states now. */
    while (ctx->zombies.next != &ctx->zombies) {
        struct rt_coll *c = ctx->zombies.next;
        list_del(c);
        coll_free(c);
    }
}

/* ---- public calls ------------------------------------------------------ */

ucft_status_t ucft_comm_set_f(ucft_comm_h comm, int f)
{
    if (comm == NULL || f < 1 || f > 64)
        return UCFT_ERR_INVALID_PARAM;
    comm->f = f;
    return UCFT_OK;
}

int ucft_comm_get_f(ucft_comm_h comm)
{
    return comm ? comm->f : -1;
}

ucft_status_t ucft_ibcast(ucft_comm_h comm, void *buf, size_t count,
                          ucft_datatype_t dtype, int root, ucft_request_h *req)
{
    int me = ucft_comm_rank(comm);
    if (count > 0 && buf == NULL)
        return UCFT_ERR_INVALID_PARAM;
    return rt_coll_post(comm, RT_COLL_BCAST, root, me == root ? buf : NULL,
                        me == root ? NULL : buf, count, (int)dtype, 0, req);
}

ucft_status_t ucft_ireduce(ucft_comm_h comm, const void *sendbuf, void *recvbuf,
                           size_t count, ucft_datatype_t dtype, ucft_op_t op,
                           int root, ucft_request_h *req)
{
    int me = ucft_comm_rank(comm);
    if (count > 0 && me == root && recvbuf == NULL)
        return UCFT_ERR_INVALID_PARAM;
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
        return UCFT_ERR_INVALID_PARAM;
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
