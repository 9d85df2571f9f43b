/*
 * Membership, minimal form: a monotonic set of failed job ranks fed by the
 * transport (endpoint errors) and the launcher (PMIx death events). A newly
 * failed rank is fenced in the transport, the operations that depend on it
 * are ended, and the failure callback runs from ucft_context_progress().
 */
#include "runtime/context.h"

#include <stdlib.h>

ucft_status_t rt_failure_init(struct ucft_context *ctx)
{
    ctx->failed_map = calloc((size_t)ctx->boot.size, 1);
    ctx->watched = calloc((size_t)ctx->boot.size, 1);
    if (ctx->failed_map == NULL || ctx->watched == NULL) {
        free(ctx->failed_map);
        free(ctx->watched);
        return UCFT_ERR_NO_MEMORY;
    }
    ctx->failed_list = NULL;
    ctx->nfailed = ctx->failed_cap = ctx->nfailed_reported = 0;
    return UCFT_OK;
}

void rt_failure_cleanup(struct ucft_context *ctx)
{
    free(ctx->failed_map);
    free(ctx->failed_list);
    free(ctx->watched);
    ctx->watched = NULL;
    ctx->failed_map = NULL;
    ctx->failed_list = NULL;
}

/* Ends the pending receives from `rank`: they can no longer complete
 * normally. A cancelled receive that had already matched still completes
 * with its data: nothing that arrived is lost. ANY_SOURCE receives stay
 * pending (test/wait report UCFT_ERR_PROC_FAILED_PENDING until the failure
 * is acknowledged, as the MPI chapter specifies). */
static void sweep_receives(struct ucft_context *ctx, int rank)
{
    for (struct ucft_request *r = ctx->pending.next; r != &ctx->pending;
         r = r->next) {
        if (r->kind != RT_REQ_RECV || r->done || r->cancel_status != UCFT_OK)
            continue;
        if (r->peer_world != rank)
            continue;
        r->cancel_status = UCFT_ERR_PROC_FAILED;
        tp_cancel(ctx->tp, &r->tp);
    }
}

/* A transport found its shared-memory FIFO blocked (it logged how): this
 * rank can no longer hear its node, and a rank that cannot receive would
 * hang every collective that needs it. Stopping turns that into one more
 * failure, which the survivors detect and correct. The library's second
 * documented abort, beside fencing (runtime/detect.c). */
void rt_failure_cut_off(void *arg)
{
    struct ucft_context *ctx = arg;
    ucft_error(&ctx->log, "stopping this rank (fail-stop): it can no "
                          "longer receive from the ranks of its node");
    abort();
}

void rt_failure_declare(struct ucft_context *ctx, int rank, ucft_status_t why)
{
    if (rank < 0 || rank >= ctx->boot.size || ctx->failed_map[rank])
        return;
    if (rank == ctx->boot.rank) {
        ucft_warn(&ctx->log,
                  "told that this rank itself failed (%s); "
                  "ignoring",
                  ucft_status_string(why));
        return;
    }
    if (ctx->nfailed == ctx->failed_cap) {
        size_t cap = ctx->failed_cap ? 2 * ctx->failed_cap : 8;
        int *l = realloc(ctx->failed_list, cap * sizeof(*l));
        if (l == NULL) {
            ucft_error(&ctx->log, "out of memory recording failure of rank %d",
                       rank);
            return;
        }
        ctx->failed_list = l;
        ctx->failed_cap = cap;
    }
    ctx->failed_map[rank] = 1;
    ctx->failed_list[ctx->nfailed++] = rank;
    if (ctx->finalizing) {
        ucft_debug(&ctx->log, "rank %d gone during finalize", rank);
    } else {
        ucft_info(&ctx->log, "rank %d failed (%s)", rank,
                  ucft_status_string(why));
    }
    tp_peer_failed(ctx->tp, rank);
    sweep_receives(ctx, rank);
    rt_coll_failure(ctx, rank);
}

/* Transport upcall, from tp progress: an endpoint error is evidence for
 * the detector (or a failure at once when the detector is off). */
void rt_peer_error_cb(void *arg, int rank, ucft_status_t why)
{
    rt_detect_report(arg, rank, why);
}

unsigned rt_failure_progress(struct ucft_context *ctx)
{
    unsigned n = 0;
    rt_inbox_t *in = &ctx->inbox;

    if (atomic_load_explicit(&in->pending, memory_order_acquire)) {
        int ranks[64];
        ucft_status_t why[64];
        uint8_t ext[64];
        size_t k;
        rt_inbox_drain_fd(in);
        do {
            pthread_mutex_lock(&in->lock);
            k = in->count < 64 ? in->count : 64;
            for (size_t i = 0; i < k; i++) {
                ranks[i] = in->ranks[i];
                why[i] = in->why[i];
                ext[i] = in->external[i];
            }
            for (size_t i = k; i < in->count; i++) {
                in->ranks[i - k] = in->ranks[i];
                in->why[i - k] = in->why[i];
                in->external[i - k] = in->external[i];
            }
            in->count -= k;
            atomic_store(&in->pending, in->count > 0);
            pthread_mutex_unlock(&in->lock);
            for (size_t i = 0; i < k; i++) {
                if (ext[i])
                    rt_detect_declare(ctx, ranks[i]); /* INLINE detector */
                else
                    rt_failure_declare(ctx, ranks[i], why[i]);
            }
            n += (unsigned)k;
        } while (k == 64);
    }
    /* Callbacks last, after the state they report is consistent; none
     * before ucft_init has handed the context to the user. */
    while (ctx->ready && ctx->nfailed_reported < ctx->nfailed) {
        int rank = ctx->failed_list[ctx->nfailed_reported++];
        if (ctx->failure_cb != NULL && !ctx->finalizing)
            ctx->failure_cb(ctx, rank, UCFT_ERR_PROC_FAILED, ctx->failure_arg);
        n++;
    }
    return n;
}
