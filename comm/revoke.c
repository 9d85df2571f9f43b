/*
 * Revoke (include/ucft.h: ucft_comm_revoke): a reliable broadcast of
 * "communicator (context id, uid) is revoked" to its members. The first
 * time a rank learns it (its own call, or a message), it marks the
 * communicator revoked, ends its pending receives and its running
 * collectives other than agreements with UCFT_ERR_REVOKED, and tells
 * every other live member itself. Every member that learns it tells all
 * the others, so the news reaches every live member as long as one rank
 * that had it lives long enough to send it once (the revoker may die
 * right after its call: ucft_comm_revoke returns once its messages are on
 * their way, and a member it told passes it on). n (n - 1)
 * messages of 8 bytes per revoke; docs/comms.md. Messages: control kind
 * UCFT_CTRL_REVOKE, body (context id, uid).
 */
#include "comm/comm.h"
#include "transport/ctrl_kinds.h"

/* How long ucft_comm_revoke waits for its messages to leave. */
#define RV_TELL_NS (500ull * 1000 * 1000)

static void rv_pump(cm_layer_t *cl);
static void rv_post(cm_layer_t *cl);

/* The news is here now: act on it, then spread it. */
static void revoked_here(cm_layer_t *cl, struct ucft_comm *comm)
{
    if (comm->revoked)
        return;
    comm->revoked = 1;
    comm->revoke_next = 0;
    ucft_debug(&cl->ctx->log, "communicator %u (uid %u) revoked", comm->ctx_id,
               (unsigned)comm->uid);
    cm_p2p_revoke(cl, comm);
    cm_coll_revoke(cl, comm);
    rv_pump(cl);
}

/* One message at a time, over every revoked communicator's members. */
static void rv_pump(cm_layer_t *cl)
{
    struct ucft_context *ctx = cl->ctx;
    while (!cl->rv_sbusy && !cl->rv_stopped) {
        struct ucft_comm *c = cl->comms;
        while (c != NULL && !(c->revoked && c->revoke_next < c->size))
            c = c->next;
        if (c == NULL)
            return;
        int r = c->revoke_next++;
        int job = cm_comm_job_rank(c, r);
        if (r == c->rank || rt_is_failed(ctx, job))
            continue;
        cl->rv_sbuf[0] = c->ctx_id;
        cl->rv_sbuf[1] = c->uid;
        cl->rv_sreq.buffered = 1;
        ucft_status_t st =
            tp_send(ctx->tp, job,
                    ucft_ctrl_tag((uint32_t)ctx->boot.rank, UCFT_CTRL_REVOKE),
                    cl->rv_sbuf, sizeof(cl->rv_sbuf), &cl->rv_sreq);
        cl->rv_sbusy = st == UCFT_INPROGRESS;
    }
}

static void rv_sent(tp_req_t *req)
{
    cm_layer_t *cl = req->arg;
    cl->rv_sbusy = 0;
    rv_pump(cl);
}

static void rv_got(tp_req_t *req)
{
    cm_layer_t *cl = req->arg;
    cl->rv_rbusy = 0;
    if (req->status == UCFT_ERR_CANCELED || cl->rv_stopped)
        return;
    if (req->status != UCFT_OK || req->length != sizeof(cl->rv_rbuf)) {
        ucft_warn(&cl->ctx->log,
                  "revoke message from rank %u: %zu bytes, expected %zu "
                  "(%s): dropped",
                  (unsigned)ucft_tag_src(req->tag), req->length,
                  sizeof(cl->rv_rbuf), ucft_status_string(req->status));
    } else {
        struct ucft_comm *c = cl->comms;
        while (c != NULL && (c->freed || c->ctx_id != cl->rv_rbuf[0] ||
                             c->uid != cl->rv_rbuf[1]))
            c = c->next;
        if (c != NULL)
            revoked_here(cl, c);
        else
            ucft_debug(&cl->ctx->log,
                       "revoke of communicator %u (uid %u), not one of "
                       "this rank's: ignored",
                       (unsigned)cl->rv_rbuf[0], (unsigned)cl->rv_rbuf[1]);
    }
    rv_post(cl);
}

static void rv_post(cm_layer_t *cl)
{
    while (!cl->rv_rbusy && !cl->rv_stopped) {
        cl->rv_rreq = (tp_req_t){.cb = rv_got, .arg = cl};
        ucft_status_t st =
            tp_recv(cl->ctx->tp, ucft_ctrl_tag(0, UCFT_CTRL_REVOKE),
                    ucft_ctrl_mask_any_source(), cl->rv_rbuf,
                    sizeof(cl->rv_rbuf), &cl->rv_rreq);
        if (st == UCFT_INPROGRESS)
            cl->rv_rbusy = 1;
        else if (st == UCFT_OK)
            rv_got(&cl->rv_rreq);
        else
            return;
    }
}

ucft_status_t cm_revoke_start(cm_layer_t *cl)
{
    cl->rv_sreq = (tp_req_t){.cb = rv_sent, .arg = cl};
    rv_post(cl);
    return UCFT_OK;
}

void cm_revoke_stop(cm_layer_t *cl)
{
    cl->rv_stopped = 1;
    if (cl->rv_rbusy)
        tp_cancel(cl->ctx->tp, &cl->rv_rreq);
}

static int all_told(void *arg)
{
    const struct ucft_comm *comm = arg;
    return !comm->layer->rv_sbusy && comm->revoke_next >= comm->size;
}

/* The caller may die right after: its messages are on their way before it
 * returns (every member told, the transport flushed; bounded). */
ucft_status_t ucft_comm_revoke(ucft_comm_h comm)
{
    if (comm == NULL || comm->freed)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_revoke",
                          comm ? "freed communicator" : "NULL communicator");
    struct ucft_context *ctx = comm->ctx;
    revoked_here(comm->layer, comm);
    if (rt_wait_until(ctx, all_told, comm, RV_TELL_NS) != UCFT_OK ||
        tp_flush(ctx->tp, RV_TELL_NS) != UCFT_OK)
        ucft_debug(&ctx->log,
                   "ucft_comm_revoke: not every member told within %d ms "
                   "(the others pass it on)",
                   (int)(RV_TELL_NS / 1000000));
    return UCFT_OK;
}

int ucft_comm_is_revoked(ucft_comm_h comm)
{
    return comm != NULL && comm->revoked;
}
