/*
 * Per-communicator states of the collective algorithms
 * (coll_op_ops_t.comm): today corrected-batched's copy channel
 * (collectives/copy_chan.h). The state of each operation's algorithm is
 * made when the communicator is (rt_coll_init, before wire-up; the copy
 * channel posts its receives when its first instance starts), handed to
 * every instance of that algorithm (coll_args_t.comm_state), told of
 * every failure, flushed whenever the rank waits (runtime/wait.c: after
 * 20 us, and before it sleeps; ucft_context_arm; a ucft_test that finds
 * its request pending) and at finalize, cleaned up by finalize and freed
 * after the transport.
 */
#include "runtime/coll.h"
#include "runtime/context.h"

#include <stdlib.h>

static const coll_comm_ops_t *cs_ops(const struct ucft_context *ctx, int op)
{
    return ctx->coll_alg[op] != NULL ? ctx->coll_alg[op]->comm : NULL;
}

ucft_status_t rt_coll_cs_init(struct ucft_context *ctx, struct ucft_comm *comm)
{
    for (int op = 0; op < RT_COLL_NOPS; op++) {
        const coll_comm_ops_t *co = cs_ops(ctx, op);
        if (co == NULL)
            continue;
        comm->coll_cs[op] = calloc(1, co->size);
        if (comm->coll_cs[op] == NULL)
            return UCFT_ERR_NO_MEMORY;
        coll_comm_params_t p = {.ctx = comm->ctx_id,
                                .map = comm->map.n > 0 ? &comm->map : NULL,
                                .flushes = 1,
                                .batch = ctx->cfg.coll_batch};
        ucft_status_t st = co->init(comm->coll_cs[op], ctx->tp, &p);
        if (st != UCFT_OK) {
            ucft_error(&ctx->log,
                       "%s algorithm '%s': cannot set up its state on the "
                       "communicator: %s",
                       ctx->coll_alg[op]->op, ctx->coll_alg[op]->alg,
                       ucft_status_string(st));
            return st;
        }
    }
    return UCFT_OK;
}

void rt_coll_flush(struct ucft_context *ctx)
{
    struct ucft_comm *comm = &ctx->world;
    for (int op = 0; op < RT_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL && !comm->coll_cs_closed)
            cs_ops(ctx, op)->flush(comm->coll_cs[op]);
}

void rt_coll_cs_failure(struct ucft_context *ctx, int rank)
{
    struct ucft_comm *comm = &ctx->world;
    for (int op = 0; op < RT_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL && !comm->coll_cs_closed)
            cs_ops(ctx, op)->on_failure(comm->coll_cs[op], rank);
}

int rt_coll_cs_kind(const struct ucft_comm *comm, unsigned kind)
{
    const struct ucft_context *ctx = comm->ctx;
    for (int op = 0; op < RT_COLL_NOPS; op++) {
        const coll_comm_ops_t *co = cs_ops(ctx, op);
        if (comm->coll_cs[op] != NULL && kind >= co->kind_first &&
            kind <= co->kind_last)
            return comm->coll_cs_closed ? -1 : 1;
    }
    return 0;
}

void rt_coll_cs_cleanup(struct ucft_context *ctx)
{
    struct ucft_comm *comm = &ctx->world;
    if (comm->coll_cs_closed)
        return;
    for (int op = 0; op < RT_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL)
            cs_ops(ctx, op)->cleanup(comm->coll_cs[op]);
    comm->coll_cs_closed = 1;
}

int rt_coll_cs_idle(const struct ucft_context *ctx)
{
    const struct ucft_comm *comm = &ctx->world;
    for (int op = 0; op < RT_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL &&
            !cs_ops(ctx, op)->idle(comm->coll_cs[op]))
            return 0;
    return 1;
}

void rt_coll_cs_free(struct ucft_context *ctx)
{
    struct ucft_comm *comm = &ctx->world;
    for (int op = 0; op < RT_COLL_NOPS; op++) {
        if (comm->coll_cs[op] == NULL)
            continue;
        cs_ops(ctx, op)->destroy(comm->coll_cs[op]);
        free(comm->coll_cs[op]);
        comm->coll_cs[op] = NULL;
    }
    comm->coll_cs_closed = 1;
}
