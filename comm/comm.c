/*
 * The communicator object (comm/comm.h) and its public queries: rank,
 * size, f, placement, and the acknowledgement of failures (the MPI
 * chapter's failure_ack / get_acked).
 */
#include "comm/comm.h"

#include <stdlib.h>

void cm_comm_attach(cm_layer_t *cl, struct ucft_comm *comm)
{
    struct ucft_comm **tail = &cl->comms;
    while (*tail != NULL)
        tail = &(*tail)->next;
    comm->next = NULL;
    *tail = comm;
}

int cm_comm_rank_of(const struct ucft_comm *comm, uint32_t job)
{
    if (comm->members == NULL)
        return job < (uint32_t)comm->size ? (int)job : -1;
    if (job >= (uint32_t)comm->ctx->boot.size)
        return -1;
    return comm->job_to_rank[job];
}

ucft_status_t cm_comm_ack_init(struct ucft_comm *comm)
{
    comm->acklist = calloc((size_t)comm->size, sizeof(int));
    comm->ackmap = calloc(coll_agree_bm_bytes(comm->size), 1);
    comm->nacked = 0;
    return comm->acklist && comm->ackmap ? UCFT_OK : UCFT_ERR_NO_MEMORY;
}

void cm_comm_ack(struct ucft_comm *comm, int r)
{
    if (r < 0 || r >= comm->size || (comm->ackmap[r >> 3] >> (r & 7)) & 1)
        return;
    comm->ackmap[r >> 3] |= (uint8_t)(1u << (r & 7));
    comm->acklist[comm->nacked++] = r;
}

int cm_comm_unacked(const struct ucft_comm *comm)
{
    const struct ucft_context *ctx = comm->ctx;
    for (size_t i = 0; i < ctx->nfailed; i++) {
        int r = cm_comm_rank_of(comm, (uint32_t)ctx->failed_list[i]);
        if (r >= 0 && !((comm->ackmap[r >> 3] >> (r & 7)) & 1))
            return 1;
    }
    return 0;
}

void cm_comm_destroy(struct ucft_comm *comm)
{
    cm_repair_destroy(comm);
    free(comm->acklist);
    free(comm->ackmap);
    comm->acklist = NULL;
    comm->ackmap = NULL;
    if (comm->view != NULL) {
        free(comm->view);
        free((int *)comm->members);
        free(comm->job_to_rank);
        comm->view = NULL;
    }
}

struct ucft_comm *cm_comm_find(cm_layer_t *cl, unsigned ctx_id)
{
    struct ucft_comm *freed = NULL;
    for (struct ucft_comm *c = cl->comms; c != NULL; c = c->next)
        if (c->ctx_id == ctx_id && !c->freed)
            return c;
        else if (c->ctx_id == ctx_id && freed == NULL)
            freed = c;
    return freed;
}

ucft_comm_h ucft_comm_world(ucft_context_h ctx)
{
    return ctx ? ctx->world : NULL;
}

int ucft_comm_rank(ucft_comm_h comm)
{
    return comm ? comm->rank : -1;
}

int ucft_comm_size(ucft_comm_h comm)
{
    return comm ? comm->size : -1;
}

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

ucft_status_t ucft_comm_query_placement(ucft_comm_h comm,
                                        ucft_placement_attr_t *attr)
{
    if (comm == NULL || attr == NULL || comm->place.pub_loci == NULL)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_query_placement",
                          comm == NULL   ? "NULL communicator"
                          : attr == NULL ? "NULL attribute pointer"
                                         : "no placement (finalized?)");
    attr->policy = placement_policy_name(comm->place.policy);
    attr->size = comm->size;
    attr->nnodes = comm->place.nnodes;
    attr->loci = comm->place.pub_loci;
    attr->rank_at = comm->place.rank_at;
    attr->pos_of = comm->place.pos_of;
    return UCFT_OK;
}

ucft_status_t ucft_comm_failure_ack(ucft_comm_h comm)
{
    if (comm == NULL)
        return rt_bad_arg(NULL, "ucft_comm_failure_ack", "NULL communicator");
    ucft_context_progress(comm->ctx); /* take in what is known right now */
    for (size_t i = 0; i < comm->ctx->nfailed; i++)
        cm_comm_ack(comm,
                    cm_comm_rank_of(comm, (uint32_t)comm->ctx->failed_list[i]));
    return UCFT_OK;
}

ucft_status_t ucft_comm_failure_get_acked(ucft_comm_h comm, int *ranks,
                                          size_t max, size_t *count)
{
    if (comm == NULL || count == NULL || (max > 0 && ranks == NULL))
        return rt_bad_arg(comm ? comm->ctx : NULL,
                          "ucft_comm_failure_get_acked",
                          comm == NULL    ? "NULL communicator"
                          : count == NULL ? "NULL count pointer"
                                          : "NULL ranks array with max > 0");
    for (size_t i = 0; i < max && i < comm->nacked; i++)
        ranks[i] = comm->acklist[i];
    *count = comm->nacked;
    return UCFT_OK;
}
