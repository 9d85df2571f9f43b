/*
 * The communicator layer of a context (comm/comm.h): made by ucft_init
 * once the context is open, attached to it as a module (runtime/module.h),
 * taken down by finalize through the module's cleanup and destroy.
 */
#include "comm/comm.h"

#include "transport/ucp/tp_ucp.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void layer_on_failure(void *state, int rank)
{
    cm_layer_t *cl = state;
    cm_p2p_failure(cl, rank);
    cm_coll_failure(cl, rank);
    cm_repair_failure(cl);
}

/* UCFT_CHECKSUM: `rank` sent a corrupted message of a corrected algorithm;
 * it becomes a failed rank for everybody (coll_csum.h). */
static void layer_accuse(void *arg, int rank)
{
    struct ucft_context *ctx = arg;
    ucft_error(&ctx->log,
               "declaring rank %d failed: it sent a corrupted message to a "
               "corrected collective (UCFT_CHECKSUM)",
               rank);
    rt_monitor_accuse(ctx, rank, UCFT_ERR_PROC_FAILED);
}

/* UCFT_INJECT's death (coll_inject.h), the library's one deliberate
 * self-kill; with hold=1 the UCP backend first claims a slot of every
 * local peer's FIFO, as a process killed inside a send does. */
static void layer_die(void *arg, const cm_inject_spec_t *spec)
{
    struct ucft_context *ctx = arg;
    if (spec->hold)
        ucft_warn(&ctx->log,
                  "UCFT_INJECT: holding a slot of %d shared-memory FIFOs of "
                  "this node's other processes",
                  tp_ucp_hold_fifo_slots());
    kill(getpid(), SIGKILL);
}

static unsigned layer_progress(void *state)
{
    unsigned n = cm_coll_progress(state);
    cm_repair_progress(state);
    return n;
}

static void layer_flush(void *state)
{
    cm_coll_flush(state);
}

static void layer_cleanup(void *state)
{
    cm_revoke_stop(state);
    cm_coll_cleanup(state);
}

/* After the transport is destroyed: nothing can touch the states now. */
static void layer_destroy(void *state)
{
    cm_layer_t *cl = state;
    cm_coll_free_all(cl);
    cm_revoke_destroy(cl);
    cm_inject_cleanup(&cl->inject); /* corrupted copies (flip=) */
    for (struct ucft_comm *c = cl->comms, *n; c != NULL; c = n) {
        n = c->next;
        place_map_cleanup(&c->place); /* the collectives used its map */
        cm_comm_destroy(c);
        if (c != &cl->world)
            free(c);
    }
    cl->ctx->world = NULL;
    free(cl);
}

static const rt_module_ops_t layer_ops = {.name = "communicators",
                                          .on_failure = layer_on_failure,
                                          .progress = layer_progress,
                                          .flush = layer_flush,
                                          .cleanup = layer_cleanup,
                                          .destroy = layer_destroy};

static void sentinel(cm_coll_t *head)
{
    head->next = head->prev = head;
}

ucft_status_t cm_layer_create(struct ucft_context *ctx)
{
    char err[256];
    cm_layer_t *cl = calloc(1, sizeof(*cl));
    if (cl == NULL)
        return UCFT_ERR_NO_MEMORY;
    cl->ctx = ctx;
    cl->pending.next = cl->pending.prev = &cl->pending;
    sentinel(&cl->colls);
    sentinel(&cl->finishing);
    sentinel(&cl->zombies);
    struct ucft_comm *w = &cl->world;
    w->ctx = ctx;
    w->layer = cl;
    w->ctx_id = 0;
    w->rank = ctx->boot.rank;
    w->size = ctx->boot.size;
    w->tp = ctx->tp;
    w->place.mate = -1;
    cl->ctx_used[0] = 1; /* context id 0: the world */
    cm_comm_attach(cl, w);
    ctx->world = w;
    ucft_status_t st = rt_module_attach(ctx, &layer_ops, cl);
    if (st != UCFT_OK) {
        ctx->world = NULL;
        free(cl);
        return st;
    }
    /* From here on the context's teardown destroys the layer. */
    st = ucft__config_read(&cm_config_table, &cl->cfg, NULL, NULL, err,
                           sizeof(err));
    if (st != UCFT_OK) {
        ucft_error(&ctx->log, "bad configuration: %s", err);
        return st;
    }
    coll_csum_init(&cl->csum, ctx->tp);
    coll_csum_on_corrupt(&cl->csum, layer_accuse, ctx);
    st = cm_inject_parse(cl->cfg.inject, &cl->inject, err, sizeof(err));
    if (st == UCFT_OK)
        st = cm_inject_setup(&cl->inject, w->rank, w->size, ctx->tp, &ctx->log,
                             layer_die, ctx, err, sizeof(err));
    if (st != UCFT_OK) {
        ucft_error(&ctx->log, "UCFT_INJECT='%s': %s", cl->cfg.inject, err);
        return st;
    }
    coll_csum_tp(&cl->csum, cm_layer_below(cl)); /* the views sit on it */
    st = cm_comm_ack_init(w);
    if (st == UCFT_OK)
        st = place_map_init(&w->place, &ctx->boot, &ctx->log, cl->cfg.placement,
                            w->rank, w->size);
    if (st == UCFT_OK)
        st = cm_coll_init(cl, w);
    if (st == UCFT_OK)
        st = cm_revoke_start(cl);
    return st;
}

void cm_layer_quiesce(cm_layer_t *cl)
{
    struct ucft_context *ctx = cl->ctx;
    cm_coll_flow_end(&cl->world);
    cm_coll_flush(cl);
    cm_coll_quiesce(cl, ctx->cfg.finalize_timeout_ns);
    if (ctx->boot.size > 1) {
        ucft_status_t st = cm_coll_sync(&cl->world);
        if (st != UCFT_OK)
            ucft_debug(&ctx->log, "finalize barrier: %s",
                       ucft_status_string(st));
    }
    /* No background agreement after the barrier (the others may be gone). */
    cl->closing = 1;
    for (struct ucft_comm *c = cl->comms; c != NULL; c = c->next)
        cm_repair_stop(c);
}

static int no_pending(void *arg)
{
    const cm_layer_t *cl = arg;
    return cl->pending.next == &cl->pending;
}

void cm_layer_drain_requests(cm_layer_t *cl)
{
    struct ucft_context *ctx = cl->ctx;
    cm_p2p_cancel_all(cl);
    if (rt_wait_until(ctx, no_pending, cl, ctx->cfg.finalize_timeout_ns) !=
        UCFT_OK)
        ucft_warn(&ctx->log,
                  "finalize: requests still pending after "
                  "UCFT_FINALIZE_TIMEOUT (%llu ms; sends nobody received?): "
                  "abandoned",
                  (unsigned long long)(ctx->cfg.finalize_timeout_ns / 1000000));
}
