/*
 * Per-communicator states of the collective algorithms
 * (coll_op_ops_t.comm): today corrected-batched's copy channel
 * (collectives/copy_chan.h). The state of each operation's algorithm is
 * made when the communicator is (cm_coll_init, before wire-up; the copy
 * channel posts its receives when its first instance starts), handed to
 * every instance of that algorithm (coll_args_t.comm_state), told of
 * every failure, flushed whenever the rank waits (runtime/progress.c: after
 * 20 us, and before it sleeps; ucft_context_arm; a ucft_test that finds
 * its request pending) and at finalize, cleaned up by finalize and freed
 * after the transport.
 */
#include "comm/comm.h"

#include <stdlib.h>

static const coll_comm_ops_t *cs_ops(const struct ucft_comm *comm, int op)
{
    return comm->alg[op] != NULL ? comm->alg[op]->comm : NULL;
}

ucft_status_t cm_coll_cs_init(cm_layer_t *cl, struct ucft_comm *comm)
{
    for (int op = 0; op < CM_COLL_NOPS; op++) {
        const coll_comm_ops_t *co = cs_ops(comm, op);
        if (co == NULL)
            continue;
        comm->coll_cs[op] = calloc(1, co->size);
        if (comm->coll_cs[op] == NULL)
            return UCFT_ERR_NO_MEMORY;
        coll_comm_params_t p = {.ctx = comm->ctx_id,
                                .map = comm->place.map.n > 0 ? &comm->place.map
                                                             : NULL,
                                .flushes = 1,
                                .batch = cl->cfg.coll_batch};
        ucft_status_t st = co->init(comm->coll_cs[op], comm->tp, &p);
        if (st != UCFT_OK) {
            ucft_error(&cl->ctx->log,
                       "%s algorithm '%s': cannot set up its state on the "
                       "communicator: %s",
                       comm->alg[op]->op, comm->alg[op]->alg,
                       ucft_status_string(st));
            return st;
        }
    }
    return UCFT_OK;
}

void cm_coll_flush(cm_layer_t *cl)
{
    for (struct ucft_comm *comm = cl->comms; comm != NULL; comm = comm->next)
        for (int op = 0; op < CM_COLL_NOPS; op++)
            if (comm->coll_cs[op] != NULL && !comm->coll_cs_closed)
                cs_ops(comm, op)->flush(comm->coll_cs[op]);
}

void cm_coll_cs_failure(cm_layer_t *cl, int rank)
{
    for (struct ucft_comm *comm = cl->comms; comm != NULL; comm = comm->next) {
        int r = cm_comm_rank_of(comm, (uint32_t)rank);
        for (int op = 0; op < CM_COLL_NOPS && r >= 0; op++)
            if (comm->coll_cs[op] != NULL && !comm->coll_cs_closed)
                cs_ops(comm, op)->on_failure(comm->coll_cs[op], r);
    }
}

int cm_coll_cs_kind(const struct ucft_comm *comm, unsigned kind)
{
    for (int op = 0; op < CM_COLL_NOPS; op++) {
        const coll_comm_ops_t *co = cs_ops(comm, op);
        if (comm->coll_cs[op] != NULL && kind >= co->kind_first &&
            kind <= co->kind_last)
            return comm->coll_cs_closed ? -1 : 1;
    }
    return 0;
}

void cm_coll_cs_close(struct ucft_comm *comm)
{
    if (comm->coll_cs_closed)
        return;
    for (int op = 0; op < CM_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL)
            cs_ops(comm, op)->cleanup(comm->coll_cs[op]);
    comm->coll_cs_closed = 1;
}

int cm_coll_cs_comm_idle(const struct ucft_comm *comm)
{
    for (int op = 0; op < CM_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL &&
            !cs_ops(comm, op)->idle(comm->coll_cs[op]))
            return 0;
    return 1;
}

void cm_coll_cs_destroy(struct ucft_comm *comm)
{
    for (int op = 0; op < CM_COLL_NOPS; op++) {
        if (comm->coll_cs[op] == NULL)
            continue;
        cs_ops(comm, op)->destroy(comm->coll_cs[op]);
        free(comm->coll_cs[op]);
        comm->coll_cs[op] = NULL;
    }
    comm->coll_cs_closed = 1;
}

void cm_coll_cs_cleanup(cm_layer_t *cl)
{
    for (struct ucft_comm *comm = cl->comms; comm != NULL; comm = comm->next)
        cm_coll_cs_close(comm);
}

int cm_coll_cs_idle(const cm_layer_t *cl)
{
    for (const struct ucft_comm *comm = cl->comms; comm != NULL;
         comm = comm->next)
        if (!cm_coll_cs_comm_idle(comm))
            return 0;
    return 1;
}

void cm_coll_cs_free(cm_layer_t *cl)
{
    for (struct ucft_comm *comm = cl->comms; comm != NULL; comm = comm->next)
        cm_coll_cs_destroy(comm);
}

void cm_coll_cs_failure_one(struct ucft_comm *comm, int rank)
{
    for (int op = 0; op < CM_COLL_NOPS; op++)
        if (comm->coll_cs[op] != NULL && !comm->coll_cs_closed)
            cs_ops(comm, op)->on_failure(comm->coll_cs[op], rank);
}
