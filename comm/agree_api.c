/*
 * Agreement on a communicator (include/ucft.h: ucft_comm_agree, _iagree)
 * and the failed-process queries of the MPI chapter (ucft_comm_get_failed,
 * ucft_comm_ack_failed). The algorithm is collectives/agree.h; here: its
 * input (the caller's flag, its acknowledged failures) and what its
 * decision does (the flag written, F acknowledged, the uniform error).
 */
#include "comm/comm.h"

static ucft_status_t agreed(struct ucft_comm *comm, const uint32_t *val,
                            const coll_agree_hdr_t *hdr, const uint8_t *failed,
                            void *arg)
{
    int *flag = arg;
    *flag = (int)val[0];
    for (int r = 0; failed != NULL && r < comm->size; r++)
        if ((failed[r >> 3] >> (r & 7)) & 1)
            cm_comm_ack(comm, r);
    return hdr->err ? UCFT_ERR_PROC_FAILED : UCFT_OK;
}

ucft_status_t ucft_comm_iagree(ucft_comm_h comm, int *flag, ucft_request_h *req)
{
    if (comm == NULL || flag == NULL || req == NULL || comm->freed)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_iagree",
                          comm == NULL   ? "NULL communicator"
                          : flag == NULL ? "NULL flag pointer"
                          : req == NULL  ? "NULL request pointer"
                                         : "freed communicator");
    uint32_t v = (uint32_t)*flag;
    return cm_agree_post(comm, CM_INJECT_AGREE, &v, 1, agreed, flag, req);
}

ucft_status_t ucft_comm_agree(ucft_comm_h comm, int *flag)
{
    ucft_request_h r;
    ucft_status_t st = ucft_comm_iagree(comm, flag, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_comm_get_failed(ucft_comm_h comm, int *ranks, size_t max,
                                   size_t *count)
{
    if (comm == NULL || count == NULL || (max > 0 && ranks == NULL))
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_get_failed",
                          comm == NULL    ? "NULL communicator"
                          : count == NULL ? "NULL count pointer"
                                          : "NULL ranks array with max > 0");
    struct ucft_context *ctx = comm->ctx;
    size_t n = 0;
    ucft_context_progress(ctx);
    for (size_t i = 0; i < ctx->nfailed; i++) {
        int r = cm_comm_rank_of(comm, (uint32_t)ctx->failed_list[i]);
        if (r < 0)
            continue;
        if (n < max)
            ranks[n] = r;
        n++;
    }
    *count = n;
    return UCFT_OK;
}

ucft_status_t ucft_comm_ack_failed(ucft_comm_h comm, size_t num_to_ack,
                                   size_t *num_acked)
{
    if (comm == NULL || num_acked == NULL)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_ack_failed",
                          comm == NULL ? "NULL communicator"
                                       : "NULL num_acked pointer");
    struct ucft_context *ctx = comm->ctx;
    size_t n = 0;
    for (size_t i = 0; i < ctx->nfailed && n < num_to_ack; i++) {
        int r = cm_comm_rank_of(comm, (uint32_t)ctx->failed_list[i]);
        if (r < 0)
            continue;
        cm_comm_ack(comm, r);
        n++;
    }
    *num_acked = comm->nacked;
    return UCFT_OK;
}
