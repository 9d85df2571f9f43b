/*
 * Point-to-point on a communicator: isend / irecv / probe over the
 * transport interface, the requests' ops (runtime/request.h), and the
 * failure rules of the MPI process fault tolerance chapter in the minimal
 * form (an operation with a failed peer ends with UCFT_ERR_PROC_FAILED; a
 * pending ANY_SOURCE receive ends with UCFT_ERR_PROC_FAILED_PENDING).
 */
#include "comm/comm.h"
#include "transport/tag.h"

#include <stdlib.h>
#include <string.h>

/* ---- the requests' ops -----------------------------------------------------
 */

/* A send cannot be cancelled (UCX cancels receives only): it completes
 * when its receiver takes it (a large one waits for that), or fails with
 * its peer. */
static ucft_status_t send_cancel(struct ucft_request *r)
{
    ucft_error(&r->ctx->log,
               "ucft_cancel: a send cannot be cancelled; it completes "
               "once received (or fails with its peer): wait for it or "
               "free it with ucft_request_free");
    return UCFT_ERR_NOT_SUPPORTED;
}

/* An unmatched ANY_SOURCE receive while the communicator has a failure
 * the caller has not acknowledged. */
static ucft_status_t recv_blocked(const struct ucft_request *r)
{
    return !r->done && r->peer == UCFT_ANY_SOURCE && cm_comm_unacked(r->comm)
               ? UCFT_ERR_PROC_FAILED_PENDING
               : UCFT_INPROGRESS;
}

static const rt_req_ops_t send_ops = {.cancel = send_cancel};
/* An ANY_SOURCE receive can be blocked by a failure; one from a named rank
 * cannot, and its waits skip the check. */
static const rt_req_ops_t recv_any_ops = {.blocked = recv_blocked};
static const rt_req_ops_t recv_ops = {0};

static int is_recv(const struct ucft_request *r)
{
    return r->ops == &recv_ops || r->ops == &recv_any_ops;
}

/* ---- pending requests ---------------------------------------------------- */

static void pending_add(struct ucft_request *r)
{
    struct ucft_request *head = &r->comm->layer->pending;
    r->next = head;
    r->prev = head->prev;
    head->prev->next = r;
    head->prev = r;
}

static void pending_del(struct ucft_request *r)
{
    r->prev->next = r->next;
    r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

void cm_p2p_cancel_all(cm_layer_t *cl)
{
    for (struct ucft_request *r = cl->pending.next; r != &cl->pending;
         r = r->next) {
        if (is_recv(r) && r->cancel_status == UCFT_OK)
            tp_cancel(cl->ctx->tp, &r->tp);
    }
}

/* Ends the pending receives from `rank`: they can no longer complete
 * normally. A cancelled receive that had already matched still completes
 * with its data: nothing that arrived is lost. ANY_SOURCE receives stay
 * pending (test/wait report UCFT_ERR_PROC_FAILED_PENDING until the failure
 * is acknowledged, as the MPI chapter specifies). */
void cm_p2p_failure(cm_layer_t *cl, int rank)
{
    for (struct ucft_request *r = cl->pending.next; r != &cl->pending;
         r = r->next) {
        if (!is_recv(r) || r->done || r->cancel_status != UCFT_OK)
            continue;
        if (r->peer_world != rank)
            continue;
        r->cancel_status = UCFT_ERR_PROC_FAILED;
        tp_cancel(cl->ctx->tp, &r->tp);
    }
}

void cm_p2p_revoke(cm_layer_t *cl, struct ucft_comm *comm)
{
    for (struct ucft_request *r = cl->pending.next; r != &cl->pending;
         r = r->next) {
        if (!is_recv(r) || r->done || r->comm != comm ||
            r->cancel_status != UCFT_OK)
            continue;
        r->cancel_status = UCFT_ERR_REVOKED;
        tp_cancel(cl->ctx->tp, &r->tp);
    }
}

/* The sender named by a matched tag (which carries its job rank) as a rank
 * of the communicator, or -1 when it is no member: a malformed message,
 * logged. */
static int tag_source(struct ucft_comm *comm, uint64_t tag, size_t length)
{
    uint32_t src = ucft_tag_src(tag);
    int r = cm_comm_rank_of(comm, src);
    if (r >= 0)
        return r;
    ucft_warn(&comm->ctx->log,
              "a message (tag %u, %zu bytes) names sender %u, which is no "
              "rank of the communicator (size %d): reported as "
              "UCFT_ERR_TRANSPORT",
              (unsigned)ucft_tag_payload(tag), length, (unsigned)src,
              comm->size);
    return -1;
}

/* Fills the receive part of info from the matched tag. A receive from a
 * named rank matched that rank's job rank in the tag: its source is the
 * rank it named. */
static void set_recv_info(struct ucft_request *r)
{
    r->info.source = r->peer != UCFT_ANY_SOURCE
                         ? r->peer
                         : tag_source(r->comm, r->tp.tag, r->tp.length);
    r->info.tag = (int)ucft_tag_payload(r->tp.tag);
    r->info.length = r->tp.length;
    if (r->info.source < 0)
        r->info.status = UCFT_ERR_TRANSPORT;
}

static void req_tp_done(tp_req_t *t)
{
    struct ucft_request *r = (struct ucft_request *)t;
    ucft_status_t st = t->status;

    if (st == UCFT_ERR_CANCELED && r->cancel_status != UCFT_OK)
        st = r->cancel_status;
    r->info.status = st;
    if (is_recv(r) && (st == UCFT_OK || st == UCFT_ERR_TRUNCATED))
        set_recv_info(r);
    r->done = 1;
    pending_del(r);
    if (r->released)
        rt_req_put(r);
}

/* ---- argument checks --------------------------------------------------- */

static ucft_status_t check_common(ucft_comm_h comm, const void *buf,
                                  size_t length, ucft_request_h *req,
                                  const char *call)
{
    if (comm == NULL || req == NULL)
        return rt_bad_arg(comm ? comm->ctx : NULL, call,
                          comm ? "NULL request pointer" : "NULL communicator");
    if (buf == NULL && length > 0) {
        ucft_error(&comm->ctx->log, "%s: NULL buffer with length %zu", call,
                   length);
        return UCFT_ERR_INVALID_PARAM;
    }
    if (comm->ctx->finalizing) {
        ucft_error(&comm->ctx->log, "communication after ucft_finalize");
        return UCFT_ERR_INVALID_PARAM;
    }
    return UCFT_OK;
}

static ucft_status_t check_peer_tag(ucft_comm_h comm, int peer, int tag,
                                    int wildcards, const char *what)
{
    int peer_ok = (peer >= 0 && peer < comm->size) ||
                  (wildcards && peer == UCFT_ANY_SOURCE);
    int tag_ok =
        (tag >= 0 && tag <= UCFT_TAG_UB) || (wildcards && tag == UCFT_ANY_TAG);
    if (!peer_ok) {
        ucft_error(&comm->ctx->log, "%s: rank %d out of range [0, %d)%s", what,
                   peer, comm->size, wildcards ? " or UCFT_ANY_SOURCE" : "");
        return UCFT_ERR_INVALID_PARAM;
    }
    if (!tag_ok) {
        ucft_error(&comm->ctx->log, "%s: tag %d out of range [0, %d]%s", what,
                   tag, UCFT_TAG_UB, wildcards ? " or UCFT_ANY_TAG" : "");
        return UCFT_ERR_INVALID_PARAM;
    }
    return UCFT_OK;
}

/* ---- operations ---------------------------------------------------------- */

/* The tag and mask that select messages of `comm` from `source` with `tag`
 * (either may be a wildcard). */
static void p2p_match(ucft_comm_h comm, int source, int tag, uint64_t *t,
                      uint64_t *mask)
{
    int any_src = source == UCFT_ANY_SOURCE, any_tag = tag == UCFT_ANY_TAG;
    *t = ucft_tag_make(UCFT_TAG_CLASS_P2P, comm->ctx_id,
                       any_src ? 0 : (uint32_t)cm_comm_job_rank(comm, source),
                       any_tag ? 0 : (uint32_t)tag);
    *mask = ucft_tag_mask(any_src, any_tag);
}

ucft_status_t ucft_isend(ucft_comm_h comm, const void *buf, size_t length,
                         int dest, int tag, ucft_request_h *req)
{
    ucft_status_t st = check_common(comm, buf, length, req, "ucft_isend");
    if (st == UCFT_OK)
        st = check_peer_tag(comm, dest, tag, 0, "ucft_isend");
    if (st != UCFT_OK)
        return st;
    if (comm->revoked)
        return UCFT_ERR_REVOKED;
    struct ucft_context *ctx = comm->ctx;
    int job = cm_comm_job_rank(comm, dest);
    if (rt_is_failed(ctx, job))
        return UCFT_ERR_PROC_FAILED;
    struct ucft_request *r = rt_req_get(ctx, &send_ops);
    if (r == NULL)
        return UCFT_ERR_NO_MEMORY;
    r->comm = comm;
    r->peer = dest;
    r->peer_world = job;
    r->tp.cb = req_tp_done;
    uint64_t t = ucft_tag_make(UCFT_TAG_CLASS_P2P, comm->ctx_id,
                               (uint32_t)ctx->boot.rank, (uint32_t)tag);
    st = tp_send(ctx->tp, job, t, buf, length, &r->tp);
    if (st == UCFT_OK) {
        /* Completed in place (short or eager send): nothing to wait for,
         * and a NULL request is complete with UCFT_OK (ucft_test). */
        rt_req_put(r);
        *req = NULL;
        return UCFT_OK;
    } else if (st == UCFT_INPROGRESS) {
        pending_add(r);
    } else {
        rt_req_put(r);
        return st;
    }
    *req = r;
    return UCFT_OK;
}

ucft_status_t ucft_irecv(ucft_comm_h comm, void *buf, size_t length, int source,
                         int tag, ucft_request_h *req)
{
    ucft_status_t st = check_common(comm, buf, length, req, "ucft_irecv");
    if (st == UCFT_OK)
        st = check_peer_tag(comm, source, tag, 1, "ucft_irecv");
    if (st != UCFT_OK)
        return st;
    if (comm->revoked)
        return UCFT_ERR_REVOKED;
    struct ucft_context *ctx = comm->ctx;
    int job = source == UCFT_ANY_SOURCE ? UCFT_ANY_SOURCE
                                        : cm_comm_job_rank(comm, source);
    if (job != UCFT_ANY_SOURCE && rt_is_failed(ctx, job))
        return UCFT_ERR_PROC_FAILED;
    struct ucft_request *r =
        rt_req_get(ctx, job == UCFT_ANY_SOURCE ? &recv_any_ops : &recv_ops);
    if (r == NULL)
        return UCFT_ERR_NO_MEMORY;
    if (job != UCFT_ANY_SOURCE && !ctx->watched[job]) {
        ctx->watched[job] = 1;
        tp_watch(ctx->tp, job);
    }
    r->comm = comm;
    r->peer = source;
    r->peer_world = job;
    r->tp.cb = req_tp_done;
    uint64_t t, mask;
    p2p_match(comm, source, tag, &t, &mask);
    st = tp_recv(ctx->tp, t, mask, buf, length, &r->tp);
    if (st == UCFT_OK) {
        r->info.status = r->tp.status;
        set_recv_info(r);
        r->done = 1;
    } else if (st == UCFT_INPROGRESS) {
        pending_add(r);
    } else {
        rt_req_put(r);
        return st;
    }
    *req = r;
    return UCFT_OK;
}

ucft_status_t ucft_iprobe(ucft_comm_h comm, int source, int tag, int *flag,
                          ucft_info_t *info)
{
    if (comm == NULL || flag == NULL)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_iprobe",
                          comm ? "NULL flag pointer" : "NULL communicator");
    ucft_status_t st = check_peer_tag(comm, source, tag, 1, "ucft_iprobe");
    if (st != UCFT_OK)
        return st;
    struct ucft_context *ctx = comm->ctx;
    uint64_t t, mask;
    p2p_match(comm, source, tag, &t, &mask);
    tp_probe_info_t pi;
    st = tp_probe(ctx->tp, t, mask, &pi);
    if (st == UCFT_ERR_NO_MESSAGE) {
        ucft_context_progress(ctx);
        st = tp_probe(ctx->tp, t, mask, &pi);
    }
    if (st == UCFT_ERR_NO_MESSAGE) {
        *flag = 0;
        if (source != UCFT_ANY_SOURCE &&
            rt_is_failed(ctx, cm_comm_job_rank(comm, source)))
            return UCFT_ERR_PROC_FAILED;
        return UCFT_OK;
    }
    if (st != UCFT_OK)
        return st;
    *flag = 1;
    if (info != NULL) {
        info->source = tag_source(comm, pi.tag, pi.length);
        info->status = info->source < 0 ? UCFT_ERR_TRANSPORT : UCFT_OK;
        info->tag = (int)ucft_tag_payload(pi.tag);
        info->length = pi.length;
    }
    return UCFT_OK;
}

typedef struct probe_wait {
    ucft_comm_h comm;
    int source, tag, flag;
    ucft_status_t st;
    ucft_info_t *info;
} probe_wait_t;

static int probe_ready(void *arg)
{
    probe_wait_t *w = arg;
    w->st = ucft_iprobe(w->comm, w->source, w->tag, &w->flag, w->info);
    return w->flag || w->st != UCFT_OK;
}

ucft_status_t ucft_probe(ucft_comm_h comm, int source, int tag,
                         ucft_info_t *info)
{
    probe_wait_t w = {comm, source, tag, 0, UCFT_OK, info};
    if (comm == NULL)
        return rt_bad_arg(NULL, "ucft_probe", "NULL communicator");
    if (!probe_ready(&w))
        rt_wait_until(comm->ctx, probe_ready, &w, UINT64_MAX);
    return w.st;
}

ucft_status_t ucft_send(ucft_comm_h comm, const void *buf, size_t length,
                        int dest, int tag)
{
    ucft_request_h r;
    ucft_status_t st = ucft_isend(comm, buf, length, dest, tag, &r);
    return st == UCFT_OK ? ucft_wait(&r, NULL) : st;
}

static int req_done(void *arg)
{
    return ((const struct ucft_request *)arg)->done;
}

ucft_status_t ucft_recv(ucft_comm_h comm, void *buf, size_t length, int source,
                        int tag, ucft_info_t *info)
{
    ucft_request_h r;
    ucft_status_t st = ucft_irecv(comm, buf, length, source, tag, &r);
    if (st != UCFT_OK)
        return st;
    st = ucft_wait(&r, info);
    if (st != UCFT_ERR_PROC_FAILED_PENDING)
        return st;
    /* UCFT_ERR_PROC_FAILED_PENDING is for nonblocking receives only (the
     * MPI chapter, 15.2.2): a blocking ANY_SOURCE receive that a failure
     * interrupts completes with UCFT_ERR_PROC_FAILED, unless a message
     * matched before its cancellation took effect (then it completes with
     * that message). Either way its buffer is the caller's again. */
    if (r->cancel_status == UCFT_OK) {
        r->cancel_status = UCFT_ERR_PROC_FAILED;
        tp_cancel(r->ctx->tp, &r->tp);
    }
    rt_wait_until(r->ctx, req_done, r, UINT64_MAX);
    int done;
    return ucft_test(&r, &done, info);
}
