/*
 * The context's failed set: the monotonic set of job ranks declared failed
 * (by the monitor, runtime/monitor.c, from heartbeats and evidence; or at
 * once from evidence when the detector is off). A newly failed rank is
 * fenced in the transport, the modules are told (comm/: the operations
 * that depend on it end), and the failure callback runs from
 * ucft_context_progress(). The detector's own view of membership is
 * runtime/detector/membership.c.
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
    rt_modules_on_failure(ctx, rank);
}

/* Transport upcall, from tp progress: an endpoint error is evidence for
 * the detector (or a failure at once when the detector is off). */
void rt_peer_error_cb(void *arg, int rank, ucft_status_t why)
{
    rt_monitor_report_transport(arg, rank, why);
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
                if (ext[i] == RT_INBOX_SUSPECT)
                    rt_monitor_suspect(ctx, ranks[i]); /* INLINE detector */
                else if (ext[i])
                    rt_monitor_declare(ctx, ranks[i]); /* INLINE detector */
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
