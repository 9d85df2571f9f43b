/*
 * Requests: a pool owned by the context, and test / wait / cancel / free,
 * which ask the request's own ops (runtime/request.h) where the kind of
 * operation matters.
 */
#include "runtime/context.h"

#include <stdlib.h>

/* ---- pool ---------------------------------------------------------------- */

struct ucft_request *rt_req_get(struct ucft_context *ctx,
                                const rt_req_ops_t *ops)
{
    rt_req_pool_t *p = &ctx->reqs;
    struct ucft_request *r = p->free;
    if (r == NULL) {
        rt_req_chunk_t *c = calloc(1, sizeof(*c));
        if (c == NULL)
            return NULL;
        c->next = p->chunks;
        p->chunks = c;
        for (size_t i = 0; i < 64; i++) {
            c->reqs[i].next = p->free;
            p->free = &c->reqs[i];
        }
        r = p->free;
    }
    p->free = r->next;
    r->in_pool = 0;
    r->ctx = ctx;
    r->ops = ops;
    r->done = 0;
    r->released = 0;
    r->cancel_status = UCFT_OK;
    r->owner = NULL;
    r->info.status = UCFT_INPROGRESS;
    r->info.source = UCFT_ANY_SOURCE;
    r->info.tag = UCFT_ANY_TAG;
    r->info.length = 0;
    r->prev = r->next = NULL;
    return r;
}

void rt_req_put(struct ucft_request *r)
{
    rt_req_pool_t *p = &r->ctx->reqs;
    r->in_pool = 1;
    r->next = p->free;
    p->free = r;
}

void rt_requests_cleanup(struct ucft_context *ctx)
{
    rt_req_pool_t *p = &ctx->reqs;
    while (p->chunks != NULL) {
        rt_req_chunk_t *c = p->chunks;
        p->chunks = c->next;
        free(c);
    }
    p->free = NULL;
}

/* ---- test / wait / cancel / free ----------------------------------------- */

/* A handle whose request was already released: completed by ucft_test /
 * ucft_wait, or given to ucft_request_free (a copy of a handle outlives
 * it). Its memory stays the context's, so the flags can be read; once the
 * request is handed out again the stale handle names the new one, which
 * no check can see. */
static int req_stale(const struct ucft_request *r, const char *call)
{
    if (!r->in_pool && !r->released)
        return 0;
    rt_bad_arg(r->ctx, call,
               "the request was already released (completed by ucft_test "
               "or ucft_wait, or freed): a handle is used once");
    return 1;
}

/* What test and wait report for a request that is not done. */
static ucft_status_t pending_status(const struct ucft_request *r)
{
    return r->ops->blocked != NULL ? r->ops->blocked(r) : UCFT_INPROGRESS;
}

static void release(struct ucft_request *r)
{
    if (r->ops->release != NULL)
        r->ops->release(r);
    rt_req_put(r);
}

ucft_status_t ucft_test(ucft_request_h *req, int *done, ucft_info_t *info)
{
    if (req == NULL || done == NULL)
        return rt_bad_arg(req && *req ? (*req)->ctx : NULL, "ucft_test",
                          req ? "NULL done pointer" : "NULL request pointer");
    struct ucft_request *r = *req;
    if (r != NULL && req_stale(r, "ucft_test"))
        return UCFT_ERR_INVALID_PARAM;
    if (r == NULL) {
        *done = 1;
        if (info != NULL)
            *info = (ucft_info_t){UCFT_OK, UCFT_ANY_SOURCE, UCFT_ANY_TAG, 0};
        return UCFT_OK;
    }
    if (!r->done) {
        ucft_context_progress(r->ctx);
        if (!r->done) {
            rt_modules_flush(r->ctx); /* the caller polls: hold nothing back */
            *done = 0;
            return pending_status(r);
        }
    }
    ucft_status_t st = r->info.status;
    if (info != NULL)
        *info = r->info;
    *done = 1;
    release(r);
    *req = NULL;
    return st;
}

static int req_is_done(void *arg)
{
    struct ucft_request *r = arg;
    return r->done || pending_status(r) != UCFT_INPROGRESS;
}

/* Busy polls done in line before the generic wait: a completion that comes
 * within a few microseconds (a ping-pong on shared memory) then costs no
 * indirect call and no clock read per poll. */
#define WAIT_INLINE_POLLS 64

ucft_status_t ucft_wait(ucft_request_h *req, ucft_info_t *info)
{
    int done;
    if (req == NULL)
        return rt_bad_arg(NULL, "ucft_wait", "NULL request pointer");
    struct ucft_request *r = *req;
    if (r != NULL && req_stale(r, "ucft_wait"))
        return UCFT_ERR_INVALID_PARAM;
    if (r != NULL && !r->done) {
        struct ucft_context *ctx = r->ctx;
        unsigned n = ctx->cfg.wait_mode == RT_WAIT_SLEEP ||
                             (ctx->cfg.wait_mode == RT_WAIT_HYBRID &&
                              ctx->cfg.spin_ns == 0)
                         ? 0
                         : WAIT_INLINE_POLLS;
        for (; n > 0 && !r->done; n -= RT_SPIN_TURNS)
            rt_progress_spin(ctx, RT_SPIN_TURNS);
        if (!req_is_done(r))
            rt_wait_hinted(ctx, req_is_done, r->ops->spin, r, UINT64_MAX);
    }
    return ucft_test(req, &done, info);
}

ucft_status_t ucft_waitall(size_t count, ucft_request_h reqs[],
                           ucft_info_t infos[])
{
    ucft_status_t first = UCFT_OK;
    if (count > 0 && reqs == NULL)
        return rt_bad_arg(NULL, "ucft_waitall",
                          "NULL request array with count > 0");
    for (size_t i = 0; i < count; i++) {
        ucft_status_t st = ucft_wait(&reqs[i], infos ? &infos[i] : NULL);
        if (st != UCFT_OK && first == UCFT_OK)
            first = st;
    }
    return first;
}

ucft_status_t ucft_cancel(ucft_request_h r)
{
    if (r == NULL)
        return UCFT_OK; /* a NULL request is complete: nothing to cancel */
    if (req_stale(r, "ucft_cancel"))
        return UCFT_ERR_INVALID_PARAM;
    if (r->done)
        return UCFT_OK;
    if (r->ops->cancel != NULL)
        return r->ops->cancel(r);
    if (r->cancel_status == UCFT_OK) {
        r->cancel_status = UCFT_ERR_CANCELED;
        tp_cancel(r->ctx->tp, &r->tp);
    }
    return UCFT_OK;
}

ucft_status_t ucft_request_free(ucft_request_h *req)
{
    if (req == NULL)
        return rt_bad_arg(NULL, "ucft_request_free", "NULL request pointer");
    struct ucft_request *r = *req;
    if (r == NULL)
        return UCFT_OK;
    if (req_stale(r, "ucft_request_free"))
        return UCFT_ERR_INVALID_PARAM;
    if (r->done)
        release(r);
    else
        r->released = 1;
    *req = NULL;
    return UCFT_OK;
}
