/* The table of modules attached to a context (runtime/module.h). */
#include "runtime/context.h"

ucft_status_t rt_module_attach(struct ucft_context *ctx,
                               const rt_module_ops_t *ops, void *state)
{
    rt_modules_t *m = &ctx->modules;
    if (m->n == RT_MODULES_MAX) {
        ucft_error(&ctx->log, "cannot attach module '%s': %d attached already",
                   ops->name, m->n);
        return UCFT_ERR_NO_RESOURCE;
    }
    m->mod[m->n++] = (rt_module_t){.ops = ops, .state = state};
    return UCFT_OK;
}

void rt_modules_on_failure(struct ucft_context *ctx, int rank)
{
    rt_modules_t *m = &ctx->modules;
    for (int i = 0; i < m->n; i++)
        m->mod[i].ops->on_failure(m->mod[i].state, rank);
}

unsigned rt_modules_progress(struct ucft_context *ctx)
{
    rt_modules_t *m = &ctx->modules;
    unsigned n = 0;
    for (int i = 0; i < m->n; i++)
        n += m->mod[i].ops->progress(m->mod[i].state);
    return n;
}

void rt_modules_flush(struct ucft_context *ctx)
{
    rt_modules_t *m = &ctx->modules;
    for (int i = 0; i < m->n; i++)
        m->mod[i].ops->flush(m->mod[i].state);
}

void rt_modules_cleanup(struct ucft_context *ctx)
{
    rt_modules_t *m = &ctx->modules;
    for (int i = m->n - 1; i >= 0; i--)
        m->mod[i].ops->cleanup(m->mod[i].state);
}

void rt_modules_destroy(struct ucft_context *ctx)
{
    rt_modules_t *m = &ctx->modules;
    while (m->n > 0) {
        rt_module_t *mod = &m->mod[--m->n];
        mod->ops->destroy(mod->state);
    }
}
