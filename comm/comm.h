/*
 * The communicator layer (comm/): communicators, point-to-point on them,
 * and the collectives driver that runs the algorithms of collectives/ on
 * a communicator. It sits on the context (runtime/), which it attaches to
 * as a module (runtime/module.h): the context tells it of failures, lets
 * it progress and flush, and cleans it up, without naming it.
 *
 * Objects:
 * - cm_layer_t: one per context, the layer's state (the module's state):
 *   collective instances (running, finishing, lingering, free lists), the
 *   sweeper of late messages, the pending point-to-point requests,
 *   UCFT_INJECT, user-defined operations, and the list of communicators,
 *   world first.
 * - struct ucft_comm: a communicator, a value made from its layer: a group
 *   of job ranks (world: all of them, rank i = job rank i), its own
 *   context id in the tag, its own f, placement map, algorithm choices and
 *   collective sequence, and per-operation algorithm states. What the
 *   layer does for "the communicators" (flush, failures, late messages,
 *   finalize) walks that list.
 */
#ifndef UCFT_COMM_H
#define UCFT_COMM_H

#include "ucft.h"
#include "collectives/coll_op.h"
#include "comm/coll.h"
#include "comm/coll_csum.h"
#include "comm/coll_inject.h"
#include "comm/variables.h"
#include "placement/comm_map.h"
#include "runtime/context.h"

#include <stdint.h>

struct ucft_comm {
    struct ucft_context *ctx;
    struct cm_layer *layer;
    struct ucft_comm *next; /* the layer's communicators, world first */
    unsigned ctx_id;        /* tag context id: no message of another matches */
    int rank;
    int size;
    /* The group: the job rank of each rank of the communicator ([size]), or
     * NULL for the identity (world). */
    const int *members;
    /* The algorithm of each operation on this communicator, chosen when it
     * is made (world: UCFT_<OP>_ALG), and its corrected barrier. */
    const coll_op_ops_t *alg[CM_COLL_NOPS];
    const coll_op_ops_t *sync;
    size_t acked; /* failures acknowledged (ucft_comm_failure_ack) */
    int f;        /* failures a collective tolerates */
    uint32_t seq; /* next collective instance */
    /* Placement (placement/comm_map.h): computed once, passed to every
     * collective of this communicator (coll_args_t.map). */
    place_map_t place;
    uint64_t kept_gen; /* completions of keep_after_done collectives */
    /* Flow control of reduce loops (comm/coll_post.c). */
    unsigned flow_run;             /* reduces since the last synchronising op */
    struct ucft_request *flow_req; /* the window's barrier, or NULL */
    /* Per operation: the state of its algorithm on this communicator
     * (coll_op_ops_t.comm, e.g. corrected-batched's copy channel), or NULL;
     * closed once finalize has cleaned them up. */
    void *coll_cs[CM_COLL_NOPS];
    uint8_t coll_cs_closed;
};

/* A user-defined reduction (comm/user_op.c): the application's function
 * behind the collectives' callback. */
#define CM_USER_OPS (UCFT_OP_USER_LAST - UCFT_OP_USER_FIRST + 1)
typedef struct cm_user_op {
    ucft_user_op_fn fn;
    void *arg;
    coll_user_op_t op; /* cb: calls fn; arg: this entry */
    int used;
} cm_user_op_t;

/* The sweeper of late messages of finished collectives (comm/drain.c):
 * one receive at a time. */
typedef struct cm_drain {
    tp_req_t req;
    struct cm_layer *layer;
    int posted;  /* a receive is in flight (a large message) */
    int pending; /* a sweep is due */
    int stopped; /* finalize: no more sweeps */
    unsigned char buf[64];
} cm_drain_t;

typedef struct cm_layer {
    struct ucft_context *ctx;
    cm_config_t cfg; /* the layer's UCFT_* variables (comm/variables.c) */
    struct ucft_comm world;
    /* Point-to-point requests still pending (sentinel of a circular
     * list): told of failures, cancelled at finalize. */
    struct ucft_request pending;
    struct ucft_comm *comms; /* every communicator of the layer */
    /* Collectives. */
    cm_user_op_t user_ops[CM_USER_OPS]; /* ucft_op_create */
    /* Sentinels: running; finishing (cleaned up, a cancelled request still
     * to complete: recycled once ops->idle says so); lingering (no idle:
     * freed after CM_COLL_LINGER_NS). */
    cm_coll_t colls, finishing, zombies;
    cm_coll_t *coll_free[CM_COLL_NSLOTS]; /* per operation, for reuse */
    cm_coll_stats_t coll_stats;
    unsigned coll_early; /* running states whose request already completed */
    int coll_retire;     /* some kept collective is retired */
    cm_drain_t drain;
    unsigned coll_tick;
    unsigned coll_post_tick; /* posts: a progress call every 8th */
    uint64_t drained;        /* late collective messages dropped */
    cm_inject_t inject;      /* UCFT_INJECT (comm/coll_inject.h) */
    cm_csum_t csum;          /* UCFT_CHECKSUM (comm/coll_csum.h) */
} cm_layer_t;

/* ---- the layer (comm/layer.c; ucft_init and ucft_finalize: comm/lib.c) --- */

/* Makes the layer of `ctx` (after the start-up fence): the world
 * communicator, its placement, the algorithms, UCFT_INJECT; attaches it to
 * the context, whose teardown destroys it. */
ucft_status_t cm_layer_create(struct ucft_context *ctx);
/* Finalize, before the monitor stops: every collective that runs on for
 * the others finishes, then the corrected barrier. */
void cm_layer_quiesce(cm_layer_t *cl);
/* Finalize, after the last barrier: pending point-to-point receives are
 * cancelled and every pending request is waited for (bounded). */
void cm_layer_drain_requests(cm_layer_t *cl);
/* The layer of `ctx` (its world communicator's). */
static inline cm_layer_t *cm_layer_of(struct ucft_context *ctx)
{
    return ctx->world->layer;
}

/* ---- communicators (comm/comm.c) ----------------------------------------- */

/* Adds `comm` to its layer's list (its fields set by its maker). */
void cm_comm_attach(cm_layer_t *cl, struct ucft_comm *comm);
/* The communicator with context id `ctx_id`, or NULL. */
struct ucft_comm *cm_comm_find(cm_layer_t *cl, unsigned ctx_id);
/* The job rank of rank `r` of `comm`. */
static inline int cm_comm_job_rank(const struct ucft_comm *comm, int r)
{
    return comm->members != NULL ? comm->members[r] : r;
}
/* The rank in `comm` of job rank `job`, or -1 when it is no member. */
int cm_comm_rank_of(const struct ucft_comm *comm, uint32_t job);

/* ---- point-to-point (comm/p2p.c) ----------------------------------------- */

/* `rank` failed: pending receives from it end with UCFT_ERR_PROC_FAILED. */
void cm_p2p_failure(cm_layer_t *cl, int rank);
/* Finalize: cancels every pending receive. */
void cm_p2p_cancel_all(cm_layer_t *cl);

/* ---- user-defined operations (comm/user_op.c) ---------------------------- */

/* The registered user-defined operation `op`, or NULL. */
const coll_user_op_t *cm_user_op(cm_layer_t *cl, int op);

#endif
