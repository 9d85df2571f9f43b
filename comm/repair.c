/* Tree repair: the epochs of live members, and what a background
 * agreement's decision makes of them (comm/repair.h, docs/trees.md). The
 * agreement itself is comm/repair_bg.c's. */
#include "comm/comm.h"
#include "collectives/repair_rule.h"

#include <stdlib.h>
#include <string.h>

/* Serial-number order of 32-bit sequence numbers: a at or after b. */
static int seq_ge(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) >= 0;
}

static int bit(const uint8_t *bm, int r)
{
    return coll_repair_bit(bm, r);
}

int cm_repair_op(int op)
{
    return op == CM_COLL_BCAST || op == CM_COLL_REDUCE ||
           op == CM_COLL_ALLREDUCE || op == CM_COLL_BARRIER ||
           op == CM_COLL_SYNC || op == CM_COLL_ALLGATHER ||
           op == CM_COLL_REDUCE_SCATTER;
}

static void epoch_free(cm_epoch_t *ep)
{
    cm_repair_trees_free(ep);
    place_map_cleanup(&ep->place);
    free(ep->live);
    free(ep->dense);
    free(ep->jobs);
    free(ep->job_to_dense);
    free(ep->gone);
    free(ep);
}

/* The placement of the live members: the communicator's policy over
 * their loci (the same at every member: the loci are the start-up
 * fence's), so an interleaved order stays interleaved over the failure
 * domains that remain. */
static ucft_status_t epoch_place(const struct ucft_comm *comm, cm_epoch_t *ep)
{
    const place_map_t *cp = &comm->place;
    ucft_status_t st = place_map_subset(&ep->place, cp, ep->live, ep->n);
    ep->place.mate = cp->mate >= 0 ? ep->dense[cp->mate] : -1;
    return st;
}

/* The epoch of the members of `comm` outside `gone` (owned by it from
 * here), used from operation `from` on. NULL: no memory, or this rank is
 * in `gone` (it was declared failed: it runs no more collectives here). */
static cm_epoch_t *epoch_make(struct ucft_comm *comm, uint8_t *gone, int ngone,
                              uint32_t from)
{
    cm_layer_t *cl = comm->layer;
    int jobs = comm->ctx->boot.size;
    cm_epoch_t *ep = calloc(1, sizeof(*ep));
    if (ep == NULL || bit(gone, comm->rank)) {
        free(ep);
        free(gone);
        return NULL;
    }
    ep->from = from;
    ep->gone = gone;
    ep->ngone = ngone;
    ep->n = comm->size - ngone;
    ep->live = malloc((size_t)ep->n * sizeof(int));
    ep->jobs = malloc((size_t)ep->n * sizeof(int));
    ep->dense = malloc((size_t)comm->size * sizeof(int));
    ep->job_to_dense = malloc((size_t)jobs * sizeof(int));
    if (!ep->live || !ep->jobs || !ep->dense || !ep->job_to_dense) {
        epoch_free(ep);
        return NULL;
    }
    for (int j = 0; j < jobs; j++)
        ep->job_to_dense[j] = -1;
    int k = 0;
    for (int r = 0; r < comm->size; r++) {
        ep->dense[r] = bit(gone, r) ? -1 : k;
        if (ep->dense[r] < 0)
            continue;
        ep->live[k] = r;
        ep->jobs[k] = cm_comm_job_rank(comm, r);
        ep->job_to_dense[ep->jobs[k]] = k;
        k++;
    }
    ep->rank = ep->dense[comm->rank];
    if (epoch_place(comm, ep) != UCFT_OK) {
        epoch_free(ep);
        return NULL;
    }
    tp_t *base = cl->cfg.checksum ? &cl->csum.f.tp : cm_layer_below(cl);
    cm_view_init(&ep->view, base, ep->rank, ep->n, ep->jobs, ep->job_to_dense);
    return ep;
}

/* The background agreement's decision (cm_agree_fn_t): the next epoch by
 * collectives/repair_rule.h. */
ucft_status_t cm_repair_decided(struct ucft_comm *comm, const uint32_t *val,
                                const coll_agree_hdr_t *hdr,
                                const uint8_t *failed, void *arg)
{
    cm_repair_t *rp = &comm->repair;
    const cm_epoch_t *head = rp->epochs;
    (void)hdr;
    (void)arg;
    uint8_t *gone = calloc(1, coll_agree_bm_bytes(comm->size));
    if (gone == NULL)
        return UCFT_OK; /* a later agreement tries again */
    uint32_t from = 0;
    int ngone = coll_repair_decide(comm->size, val, failed,
                                   head != NULL ? head->gone : NULL,
                                   head != NULL ? head->ngone : 0,
                                   head != NULL ? head->from : 0, gone, &from);
    if (ngone < 0) {
        free(gone); /* nothing new (a rank that died after contributing) */
        return UCFT_OK;
    }
    cm_epoch_t *ep = epoch_make(comm, gone, ngone, from);
    if (ep == NULL) {
        ucft_warn(&comm->ctx->log,
                  "tree repair: no epoch for %d failed members of "
                  "communicator %u (no memory, or this rank was declared "
                  "failed)",
                  ngone, comm->ctx_id);
        return UCFT_OK;
    }
    ep->next = rp->epochs;
    rp->epochs = ep;
    rp->switches++;
    ucft_debug(&comm->ctx->log,
               "tree repair: communicator %u runs operations from #%u on %d "
               "of its %d ranks",
               comm->ctx_id, (unsigned)from, ep->n, comm->size);
    return UCFT_OK;
}

void cm_repair_ended(struct ucft_comm *comm, ucft_status_t st)
{
    cm_repair_t *rp = &comm->repair;
    if (st == UCFT_OK)
        return;
    rp->stuck_nfailed = rp->started_nfailed;
    ucft_debug(&comm->ctx->log,
               "tree repair: background agreement on communicator %u: %s; "
               "the next waits for news of another failure",
               comm->ctx_id, ucft_status_string(st));
}

cm_epoch_t *cm_repair_epoch(struct ucft_comm *comm, uint32_t seq)
{
    cm_repair_t *rp = &comm->repair;
    if (rp->req != NULL && seq_ge(seq, rp->limit)) {
        /* The promise made with our contribution: no operation from the
         * bound on before the decision is known. */
        ucft_status_t st = ucft_wait(&rp->req, NULL);
        cm_repair_ended(comm, st);
        if (st != UCFT_OK)
            ucft_warn(&comm->ctx->log,
                      "tree repair: background agreement on communicator "
                      "%u: %s",
                      comm->ctx_id, ucft_status_string(st));
        comm->layer->repair_due = 1;
    }
    for (cm_epoch_t *ep = rp->epochs; ep != NULL; ep = ep->next)
        if (seq_ge(seq, ep->from))
            return ep;
    return NULL;
}

void cm_repair_destroy(struct ucft_comm *comm)
{
    for (cm_epoch_t *ep = comm->repair.epochs, *n; ep != NULL; ep = n) {
        n = ep->next;
        epoch_free(ep);
    }
    comm->repair.epochs = NULL;
}

int cm_repair_future(const struct ucft_comm *comm, uint32_t s)
{
    uint32_t idx = s & (CM_REPAIR_SEQ_BIT - 1);
    uint32_t n = comm->repair.nbg;
    return n == 0 ||
           ((n - 1 - idx) & (CM_REPAIR_SEQ_BIT - 1)) >= CM_REPAIR_SEQ_BIT / 2;
}

int cm_repair_members(const struct ucft_comm *comm, uint32_t seq, int *out)
{
    for (const cm_epoch_t *ep = comm->repair.epochs; ep != NULL; ep = ep->next)
        if (seq_ge(seq, ep->from)) {
            memcpy(out, ep->live, (size_t)ep->n * sizeof(int));
            return ep->n;
        }
    for (int r = 0; r < comm->size; r++)
        out[r] = r;
    return comm->size;
}
