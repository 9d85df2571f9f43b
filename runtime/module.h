/*
 * Modules attached to a context (runtime/module.c). The context knows
 * nothing of what runs on it: the communicator layer (comm/) attaches
 * itself at init with this table, and the context calls it back at the
 * fixed points of its life. A lower layer never calls up by name.
 *
 * Order of the calls, per context:
 *   attach (ucft_init, after the start-up fence)
 *   on_failure, progress, flush, any number of times, on the owner's
 *     thread, never inside one another
 *   cleanup (finalize, transport still up: cancel, let cancels complete)
 *   destroy (after the transport is destroyed; also after a failed init,
 *     where cleanup may not have run)
 */
#ifndef UCFT_RT_MODULE_H
#define UCFT_RT_MODULE_H

#include "ucft.h"

struct ucft_context;

typedef struct rt_module_ops {
    const char *name;
    /* `rank` was declared failed; the transport has already fenced it. */
    void (*on_failure)(void *state, int rank);
    /* From ucft_context_progress, after the transport and the failure
     * news: at every call where those did work or where the module's
     * last call did, at every RT_MODULES_IDLE_EVERY-th call otherwise,
     * and from ucft_context_arm before a sleep (progress.c). Returns the
     * work done. Housekeeping only: what must happen at once happens in
     * the transport's callbacks. */
    unsigned (*progress)(void *state);
    /* The rank is about to wait or sleep (a wait that has lasted 20 us,
     * ucft_context_arm, a ucft_test that finds its request pending): send
     * what is held back. Cheap when nothing is. */
    void (*flush)(void *state);
    void (*cleanup)(void *state);
    void (*destroy)(void *state);
} rt_module_ops_t;

#define RT_MODULES_MAX 4
/* A power of 2: the period of the modules' progress while nothing
 * happens (a spinning wait on a point-to-point message). */
#define RT_MODULES_IDLE_EVERY 16

typedef struct rt_module {
    const rt_module_ops_t *ops;
    void *state;
} rt_module_t;

typedef struct rt_modules {
    rt_module_t mod[RT_MODULES_MAX];
    int n;
    unsigned idle_calls; /* ucft_context_progress calls that skipped them */
    int busy;            /* their last progress did work */
} rt_modules_t;

/* Attaches `ops` with `state`: UCFT_ERR_NO_RESOURCE when the table is
 * full. The module's destroy runs when the context is torn down. */
ucft_status_t rt_module_attach(struct ucft_context *ctx,
                               const rt_module_ops_t *ops, void *state);
void rt_modules_on_failure(struct ucft_context *ctx, int rank);
unsigned rt_modules_progress(struct ucft_context *ctx);
void rt_modules_flush(struct ucft_context *ctx);
void rt_modules_cleanup(struct ucft_context *ctx);
/* Destroys every module, last attached first, and empties the table. */
void rt_modules_destroy(struct ucft_context *ctx);

#endif
