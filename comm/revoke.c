/*
 * Revoke (include/ucft.h: ucft_comm_revoke): the fact "communicator
 * (context id, uid) is revoked" goes to its members by the reliable
 * broadcast of collectives/rbcast.h (proven on the simulator). The first
 * time a rank learns it (its own call, or a message), it marks the
 * communicator revoked, ends its pending receives and its running
 * collectives other than agreements with UCFT_ERR_REVOKED, and passes the
 * fact on to every other member; so the revoker may die right after its
 * call (which returns once its messages are on their way). A revoke names
 * the communicator by (context id, uid): a late one never hits a
 * communicator that reuses a freed one's id. Messages: control kind
 * UCFT_CTRL_REVOKE. docs/comms.md.
 */
#include "comm/comm.h"
#include "transport/ctrl_kinds.h"

/* How long ucft_comm_revoke waits for its messages to leave. */
#define RV_TELL_NS (500ull * 1000 * 1000)

/* The news is here now: act on it. */
static void revoked_here(cm_layer_t *cl, struct ucft_comm *comm)
{
    comm->revoked = 1;
    ucft_debug(&cl->ctx->log, "communicator %u (uid %u) revoked", comm->ctx_id,
               (unsigned)comm->uid);
    cm_p2p_revoke(cl, comm);
    cm_coll_revoke(cl, comm);
}

/* rbcast's deliver: a revoke arrived. */
static int rv_deliver(void *arg, const uint32_t fact[2], const int **to, int *n)
{
    cm_layer_t *cl = arg;
    struct ucft_comm *c = cl->comms;
    while (c != NULL && (c->freed || c->ctx_id != fact[0] || c->uid != fact[1]))
        c = c->next;
    if (c == NULL) {
        ucft_debug(&cl->ctx->log,
                   "revoke of communicator %u (uid %u), not one of this "
                   "rank's: ignored",
                   (unsigned)fact[0], (unsigned)fact[1]);
        return 0;
    }
    if (c->revoked)
        return 0;
    revoked_here(cl, c);
    *to = c->members;
    *n = c->size;
    return 1;
}

ucft_status_t cm_revoke_start(cm_layer_t *cl)
{
    rbc_init(&cl->revokes, cl->ctx->tp, UCFT_CTRL_REVOKE, rv_deliver, cl);
    rbc_start(&cl->revokes);
    return UCFT_OK;
}

void cm_revoke_stop(cm_layer_t *cl)
{
    rbc_stop(&cl->revokes);
}

void cm_revoke_destroy(cm_layer_t *cl)
{
    rbc_destroy(&cl->revokes);
}

static int all_told(void *arg)
{
    return rbc_sent(arg);
}

ucft_status_t ucft_comm_revoke(ucft_comm_h comm)
{
    if (comm == NULL || comm->freed)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_revoke",
                          comm ? "freed communicator" : "NULL communicator");
    cm_layer_t *cl = comm->layer;
    struct ucft_context *ctx = comm->ctx;
    if (!comm->revoked) {
        uint32_t fact[2] = {comm->ctx_id, comm->uid};
        revoked_here(cl, comm);
        if (rbc_publish(&cl->revokes, fact, comm->members, comm->size) !=
            UCFT_OK)
            return UCFT_ERR_NO_MEMORY;
    }
    if (rt_wait_until(ctx, all_told, &cl->revokes, RV_TELL_NS) != UCFT_OK ||
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
