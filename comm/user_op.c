/* User-defined reductions (ucft_op_create): a table of the context's
 * registered functions; the collectives see each one as a coll_user_op_t
 * whose callback puts the arguments in the public order. */
#include "comm/comm.h"

static void user_op_call(void *dst, const void *src, size_t count, int dtype,
                         void *arg)
{
    const cm_user_op_t *u = arg;
    u->fn(src, dst, count, (ucft_datatype_t)dtype, u->arg);
}

ucft_status_t ucft_op_create(ucft_context_h ctx, ucft_user_op_fn fn, void *arg,
                             ucft_op_t *op)
{
    if (ctx == NULL)
        return rt_bad_arg(NULL, "ucft_op_create", "NULL context");
    if (fn == NULL || op == NULL) {
        ucft_error(&ctx->log, "ucft_op_create: NULL %s",
                   fn == NULL ? "function" : "handle pointer");
        return UCFT_ERR_INVALID_PARAM;
    }
    cm_layer_t *cl = cm_layer_of(ctx);
    for (int i = 0; i < CM_USER_OPS; i++) {
        cm_user_op_t *u = &cl->user_ops[i];
        if (u->used)
            continue;
        *u = (cm_user_op_t){.fn = fn, .arg = arg, .used = 1};
        u->op = (coll_user_op_t){.cb = user_op_call, .arg = u};
        *op = (ucft_op_t)(UCFT_OP_USER_FIRST + i);
        return UCFT_OK;
    }
    ucft_error(&ctx->log,
               "ucft_op_create: %d user-defined operations are registered "
               "already (the most a context holds)",
               CM_USER_OPS);
    return UCFT_ERR_NO_RESOURCE;
}

const coll_user_op_t *cm_user_op(cm_layer_t *cl, int op)
{
    if (op < UCFT_OP_USER_FIRST || op > UCFT_OP_USER_LAST)
        return NULL;
    const cm_user_op_t *u = &cl->user_ops[op - UCFT_OP_USER_FIRST];
    return u->used ? &u->op : NULL;
}

ucft_status_t ucft_op_free(ucft_context_h ctx, ucft_op_t op)
{
    if (ctx == NULL)
        return rt_bad_arg(NULL, "ucft_op_free", "NULL context");
    cm_layer_t *cl = cm_layer_of(ctx);
    if (cm_user_op(cl, (int)op) == NULL) {
        ucft_error(&ctx->log,
                   "ucft_op_free: %d is no registered user-defined operation",
                   (int)op);
        return UCFT_ERR_INVALID_PARAM;
    }
    /* The function stays in place for a running collective that still
     * holds it; only new calls refuse the handle. */
    cl->user_ops[op - UCFT_OP_USER_FIRST].used = 0;
    return UCFT_OK;
}
