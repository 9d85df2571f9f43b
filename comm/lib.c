/*
 * The library's entry points: ucft_init opens a context (runtime/), makes
 * its communicator layer and world communicator on it (comm/layer.c), and
 * starts it; ucft_finalize takes them down in the reverse order. Each
 * phase is its layer's; this file only orders them.
 */
#include "comm/comm.h"
#include "comm/variables.h"

#include <stdlib.h>

ucft_status_t ucft_init(const ucft_params_t *params, ucft_context_h *ctx_p)
{
    struct ucft_context *ctx;

    if (ctx_p == NULL)
        return rt_bad_arg(NULL, "ucft_init", "NULL context pointer");
    char *jobwide = cm_config_jobwide();
    if (jobwide == NULL)
        return UCFT_ERR_NO_MEMORY;
    ucft_status_t st = rt_context_open(params, jobwide, &ctx);
    free(jobwide);
    if (st != UCFT_OK)
        return st;
    st = cm_layer_create(ctx);
    if (st != UCFT_OK)
        goto err_open; /* the context's abort destroys what the layer made */
    st = rt_context_start(ctx);
    if (st != UCFT_OK)
        goto err_open;
    *ctx_p = ctx;
    return UCFT_OK;

err_open:
    rt_context_abort(ctx);
    return st;
}

ucft_status_t ucft_finalize(ucft_context_h ctx)
{
    if (ctx == NULL)
        return UCFT_OK;
    cm_layer_t *cl = cm_layer_of(ctx);
    /* Every live rank reaches finalize before anyone closes a connection:
     * a peer that closed while this rank was still working would look
     * failed (an endpoint error is failure evidence). The corrected barrier
     * (whatever UCFT_BARRIER_ALG says) tolerates the dead ranks that the
     * PMIx fence may not. Collectives that completed early for the caller
     * first finish their part (their last messages go to ranks that may
     * leave once the barrier is done). */
    cm_layer_quiesce(cl);
    /* Then stop heartbeats (the observer is told not to watch us), so a
     * rank that leaves is never reported as failed, and wait until every
     * rank has: only then may heartbeat workers go away (a detector still
     * connecting to a destroyed worker trips UCX's TCP transport). */
    rt_context_stop_monitor(ctx);
    if (ctx->boot.size > 1 && ctx->monitor.mode == RT_MONITOR_THREAD) {
        ucft_status_t st = cm_coll_sync(&cl->world);
        if (st != UCFT_OK)
            ucft_debug(&ctx->log, "finalize barrier (detectors stopped): %s",
                       ucft_status_string(st));
    }
    ctx->finalizing = 1; /* from here on, calls are refused */
    cm_layer_drain_requests(cl);
    return rt_context_close(ctx);
}
