/*
 * The deprecated names of public functions (include/ucft.h, "Deprecated
 * names"), kept for one release: each is an exported function that calls
 * its new name, so that programs built against the old names still link
 * and behave as before.
 */
#include "ucft.h"

int ucft_progress(ucft_context_h ctx)
{
    return ucft_context_progress(ctx);
}

ucft_status_t ucft_context_fd(ucft_context_h ctx, int *fd)
{
    return ucft_context_get_fd(ctx, fd);
}

ucft_status_t ucft_failed_ranks(ucft_context_h ctx, int *ranks, size_t max,
                                size_t *count)
{
    return ucft_context_get_failed_ranks(ctx, ranks, max, count);
}

ucft_status_t ucft_set_failure_cb(ucft_context_h ctx, ucft_failure_cb_t cb,
                                  void *arg)
{
    return ucft_context_set_failure_cb(ctx, cb, arg);
}
