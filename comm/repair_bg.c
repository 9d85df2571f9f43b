/* Tree repair: the background agreements on a communicator's failed
 * members (comm/repair.h, docs/trees.md), started from progress. Their
 * decisions are comm/repair.c's (cm_repair_decided). */
#include "comm/comm.h"
#include "collectives/repair_rule.h"

static int bit(const uint8_t *bm, int r)
{
    return coll_repair_bit(bm, r);
}

/* 1 when this rank knows a failed member of `comm` outside its newest
 * epoch. */
static int due(const struct ucft_comm *comm)
{
    const struct ucft_context *ctx = comm->ctx;
    const uint8_t *gone =
        comm->repair.epochs != NULL ? comm->repair.epochs->gone : NULL;
    for (size_t i = 0; i < ctx->nfailed; i++) {
        int r = cm_comm_rank_of(comm, (uint32_t)ctx->failed_list[i]);
        if (r >= 0 && !bit(gone, r))
            return 1;
    }
    return 0;
}

static void start(struct ucft_comm *comm)
{
    cm_repair_t *rp = &comm->repair;
    uint32_t w = comm->layer->cfg.tree_window;
    uint32_t v[COLL_REPAIR_WORDS];
    coll_repair_contrib(comm->seq, w, v);
    ucft_status_t st = cm_agree_post_bg(comm, v, COLL_REPAIR_WORDS,
                                        cm_repair_decided, NULL, &rp->req);
    if (st != UCFT_OK) {
        ucft_warn(&comm->ctx->log,
                  "tree repair: background agreement on communicator %u not "
                  "posted: %s",
                  comm->ctx_id, ucft_status_string(st));
        rp->req = NULL;
        return;
    }
    rp->limit = comm->seq + w;
    rp->started_nfailed = comm->ctx->nfailed;
}

void cm_repair_progress(cm_layer_t *cl)
{
    if (!cl->repair_due || cl->repair_busy)
        return;
    cl->repair_busy = 1;
    cl->repair_due = 0;
    for (struct ucft_comm *c = cl->comms; c != NULL; c = c->next) {
        cm_repair_t *rp = &c->repair;
        if (rp->req != NULL && rp->req->done) {
            cm_repair_ended(c, rp->req->info.status);
            ucft_request_free(&rp->req);
            rp->req = NULL;
        }
        if (rp->req != NULL) {
            cl->repair_due = 1; /* look again once it is done */
            continue;
        }
        if (cl->cfg.tree_repair == CM_REPAIR_KEEP || c->freed ||
            c->revoked || c->repair_off || c->size < 2 || cl->closing ||
            c->ctx->nfailed <= rp->stuck_nfailed || !due(c))
            continue;
        start(c);
        if (rp->req != NULL)
            cl->repair_due = 1;
    }
    cl->repair_busy = 0;
}

void cm_repair_failure(cm_layer_t *cl)
{
    cl->repair_due = 1;
}

void cm_repair_stop(struct ucft_comm *comm)
{
    comm->repair_off = 1;
    if (comm->repair.req != NULL)
        ucft_request_free(&comm->repair.req);
    comm->repair.req = NULL;
}
