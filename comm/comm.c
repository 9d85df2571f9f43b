/*
 * The communicator object (comm/comm.h) and its public queries: rank,
 * size, f, placement, and the acknowledgement of failures (the MPI
 * chapter's failure_ack / get_acked).
 */
#include "comm/comm.h"

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
    for (int r = 0; r < comm->size; r++)
        if ((uint32_t)comm->members[r] == job)
            return r;
    return -1;
}

struct ucft_comm *cm_comm_find(cm_layer_t *cl, unsigned ctx_id)
{
    for (struct ucft_comm *c = cl->comms; c != NULL; c = c->next)
        if (c->ctx_id == ctx_id)
            return c;
    return NULL;
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
    comm->acked = comm->ctx->nfailed;
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
    for (size_t i = 0; i < max && i < comm->acked; i++)
        ranks[i] = comm->ctx->failed_list[i]; /* world comm: identity */
    *count = comm->acked;
    return UCFT_OK;
}
