/*
 * The public collective calls (include/ucft.h): argument checks that need
 * the caller's role, then comm/coll_post.c. The blocking forms are the
 * non-blocking ones followed by ucft_wait.
 */
#include "comm/comm.h"

/* A NULL output buffer where one is needed: logged. */
static ucft_status_t null_output(ucft_comm_h comm, const char *call,
                                 const char *what)
{
    if (comm == NULL)
        return rt_bad_arg(NULL, call, "NULL communicator");
    ucft_error(&comm->ctx->log, "%s: NULL %s with a count above 0", call, what);
    return UCFT_ERR_INVALID_PARAM;
}

/* The blocking calls post with CM_POST_BLOCKING (comm/coll.h): their
 * large operations may work in the caller's buffers (R4). */
static ucft_status_t bcast_post(ucft_comm_h comm, void *buf, size_t count,
                                ucft_datatype_t dtype, int root,
                                ucft_request_h *req, unsigned flags)
{
    int me = ucft_comm_rank(comm);
    if (count > 0 && buf == NULL)
        return null_output(comm, "ucft_ibcast", "buffer");
    return cm_coll_post(comm, CM_COLL_BCAST, root, me == root ? buf : NULL,
                        me == root ? NULL : buf, count, (int)dtype, 0, req,
                        flags);
}

ucft_status_t ucft_ibcast(ucft_comm_h comm, void *buf, size_t count,
                          ucft_datatype_t dtype, int root, ucft_request_h *req)
{
    return bcast_post(comm, buf, count, dtype, root, req, 0);
}

ucft_status_t ucft_ireduce(ucft_comm_h comm, const void *sendbuf, void *recvbuf,
                           size_t count, ucft_datatype_t dtype, ucft_op_t op,
                           int root, ucft_request_h *req)
{
    int me = ucft_comm_rank(comm);
    if (count > 0 && me == root && recvbuf == NULL)
        return null_output(comm, "ucft_ireduce", "receive buffer");
    return cm_coll_post(comm, CM_COLL_REDUCE, root, sendbuf,
                        me == root ? recvbuf : NULL, count, (int)dtype, (int)op,
                        req, 0);
}

static ucft_status_t allreduce_post(ucft_comm_h comm, const void *sendbuf,
                                    void *recvbuf, size_t count,
                                    ucft_datatype_t dtype, ucft_op_t op,
                                    ucft_request_h *req, unsigned flags)
{
    if (count > 0 && recvbuf == NULL)
        return null_output(comm, "ucft_iallreduce", "receive buffer");
    return cm_coll_post(comm, CM_COLL_ALLREDUCE, 0, sendbuf, recvbuf, count,
                        (int)dtype, (int)op, req, flags);
}

ucft_status_t ucft_iallreduce(ucft_comm_h comm, const void *sendbuf,
                              void *recvbuf, size_t count,
                              ucft_datatype_t dtype, ucft_op_t op,
                              ucft_request_h *req)
{
    return allreduce_post(comm, sendbuf, recvbuf, count, dtype, op, req, 0);
}

static ucft_status_t allgather_post(ucft_comm_h comm, const void *sendbuf,
                                    void *recvbuf, size_t count,
                                    ucft_datatype_t dtype, uint8_t *present,
                                    ucft_request_h *req, unsigned flags)
{
    if (count > 0 && recvbuf == NULL)
        return null_output(comm, "ucft_iallgather", "receive buffer");
    return cm_coll_post_blocks(comm, CM_COLL_ALLGATHER, sendbuf, recvbuf,
                               present, count, (int)dtype, 0, req, flags);
}

ucft_status_t ucft_iallgather(ucft_comm_h comm, const void *sendbuf,
                              void *recvbuf, size_t count,
                              ucft_datatype_t dtype, uint8_t *present,
                              ucft_request_h *req)
{
    return allgather_post(comm, sendbuf, recvbuf, count, dtype, present, req,
                          0);
}

ucft_status_t ucft_ireduce_scatter(ucft_comm_h comm, const void *sendbuf,
                                   void *recvbuf, size_t count,
                                   ucft_datatype_t dtype, ucft_op_t op,
                                   ucft_request_h *req)
{
    if (count > 0 && recvbuf == NULL)
        return null_output(comm, "ucft_ireduce_scatter", "receive buffer");
    return cm_coll_post_blocks(comm, CM_COLL_REDUCE_SCATTER, sendbuf, recvbuf,
                               NULL, count, (int)dtype, (int)op, req, 0);
}

ucft_status_t ucft_ibarrier(ucft_comm_h comm, ucft_request_h *req)
{
    return cm_coll_post(comm, CM_COLL_BARRIER, 0, NULL, NULL, 0, UCFT_UINT8, 0,
                        req, 0);
}

ucft_status_t ucft_bcast(ucft_comm_h comm, void *buf, size_t count,
                         ucft_datatype_t dtype, int root)
{
    ucft_request_h r;
    ucft_status_t st =
        bcast_post(comm, buf, count, dtype, root, &r, CM_POST_BLOCKING);
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
    ucft_status_t st = allreduce_post(comm, sendbuf, recvbuf, count, dtype, op,
                                      &r, CM_POST_BLOCKING);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_allgather(ucft_comm_h comm, const void *sendbuf,
                             void *recvbuf, size_t count, ucft_datatype_t dtype,
                             uint8_t *present)
{
    ucft_request_h r;
    ucft_status_t st = allgather_post(comm, sendbuf, recvbuf, count, dtype,
                                      present, &r, CM_POST_BLOCKING);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_reduce_scatter(ucft_comm_h comm, const void *sendbuf,
                                  void *recvbuf, size_t count,
                                  ucft_datatype_t dtype, ucft_op_t op)
{
    ucft_request_h r;
    ucft_status_t st =
        ucft_ireduce_scatter(comm, sendbuf, recvbuf, count, dtype, op, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

ucft_status_t ucft_barrier(ucft_comm_h comm)
{
    ucft_request_h r;
    ucft_status_t st = ucft_ibarrier(comm, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

/* ---- the approximate allreduce (include/ucft.h, docs/gossip.md) ---- */

ucft_status_t ucft_iallreduce_approx(ucft_comm_h comm, const void *sendbuf,
                                     void *recvbuf, size_t count,
                                     ucft_datatype_t dtype,
                                     const ucft_approx_params_t *params,
                                     ucft_request_h *req)
{
    static const ucft_approx_params_t none = {0};
    const ucft_approx_params_t *p = params != NULL ? params : &none;
    uint64_t m = p->field_mask;
    const char *alg = m & UCFT_APPROX_FIELD_ALG ? p->alg : "pflc";
    coll_gossip_params_t gp = {
        .eps = m & UCFT_APPROX_FIELD_EPS ? p->eps : 1e-8,
        .tau = m & UCFT_APPROX_FIELD_TAU ? p->tau : 0,
        .seed = m & UCFT_APPROX_FIELD_SEED ? p->seed : 0,
        .topo = m & UCFT_APPROX_FIELD_TOPOLOGY ? p->topology : GOSSIP_TOPO_FULL,
        .rounds = m & UCFT_APPROX_FIELD_ROUNDS ? p->rounds : 0,
        .mean = m & UCFT_APPROX_FIELD_MEAN ? p->mean != 0 : 0};

    if (comm == NULL)
        return rt_bad_arg(NULL, "ucft_iallreduce_approx", "NULL communicator");
    if (count > 0 && recvbuf == NULL)
        return null_output(comm, "ucft_iallreduce_approx", "receive buffer");
    const coll_op_ops_t *ops =
        alg != NULL ? coll_op_find("allreduce_approx", alg) : NULL;
    const char *bad =
        ops == NULL ? "unknown algorithm (ps, pf, pflc, pfcc, hps, hpflc, "
                      "ardb)"
        : !(gp.eps > 0 && gp.eps < 1) ? "eps must be in (0, 1)"
        : !(gp.tau >= 0)              ? "tau must be 0 (default) or more"
        : gp.topo < GOSSIP_TOPO_FULL || gp.topo > GOSSIP_TOPO_HYPERCUBE
            ? "unknown topology"
        : dtype != UCFT_FLOAT && dtype != UCFT_DOUBLE
            ? "datatype must be UCFT_FLOAT or UCFT_DOUBLE"
        : count == 0 ? "count must be 1 or more"
                     : NULL;
    if (bad != NULL) {
        ucft_error(&comm->ctx->log, "ucft_iallreduce_approx: %s (alg '%s')",
                   bad, alg != NULL ? alg : "(null)");
        return UCFT_ERR_INVALID_PARAM;
    }
    return cm_coll_post_approx(comm, ops, &gp, sendbuf, recvbuf, count,
                               (int)dtype, req);
}

ucft_status_t ucft_allreduce_approx(ucft_comm_h comm, const void *sendbuf,
                                    void *recvbuf, size_t count,
                                    ucft_datatype_t dtype,
                                    const ucft_approx_params_t *params)
{
    ucft_request_h r;
    ucft_status_t st = ucft_iallreduce_approx(comm, sendbuf, recvbuf, count,
                                              dtype, params, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}
