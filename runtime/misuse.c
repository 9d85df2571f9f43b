/* API misuse: one log line naming the call and what was wrong, and
 * UCFT_ERR_INVALID_PARAM (runtime/context.h, rt_bad_arg). */
#include "runtime/context.h"

#include <stdio.h>
#include <string.h>

ucft_status_t rt_bad_arg_at(const struct ucft_context *ctx, const char *call,
                            const char *what, const char *file, int line)
{
    const char *base = strrchr(file, '/');

    if (ctx == NULL)
        fprintf(stderr, "[ucft] error: %s: %s (%s:%d)\n", call, what,
                base ? base + 1 : file, line);
    else if (ucft_log_enabled(&ctx->log, UCFT_LOG_ERROR))
        ucft__log_emit(&ctx->log, UCFT_LOG_ERROR, file, line, "%s: %s", call,
                       what);
    return UCFT_ERR_INVALID_PARAM;
}
