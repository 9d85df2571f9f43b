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
#include "collectives/coll_csum.h"
#include "comm/coll_inject.h"
#include "comm/coll_select.h"
#include "comm/repair.h"
#include "comm/variables.h"
#include "comm/view.h"
#include "collectives/agree.h"
#include "collectives/rbcast.h"
#include "placement/comm_map.h"
#include "runtime/context.h"

#include <stdint.h>

/* Context ids: a bitmap of the ones this rank uses (comm/create.c). A
 * communicator's tag context (ucft_comm.ctx_id) is its id in the low 10
 * bits and 4 bits of its uid above them; the world's is 0. A freed
 * communicator's id stays out of use here until CM_CTX_TOMBS later frees
 * (a tombstone), and the sweeper drops its late messages meanwhile. */
#define CM_CTX_WORDS   32 /* 1024 context ids (0: the world) */
#define CM_CTX_ID_BITS 10
#define CM_CTX_ID_MASK ((1u << CM_CTX_ID_BITS) - 1)
#define CM_CTX_TOMBS   256

struct ucft_comm {
    struct ucft_context *ctx;
    struct cm_layer *layer;
    struct ucft_comm *next; /* the layer's communicators, world first */
    unsigned ctx_id;        /* tag context id: no message of another matches */
    int rank;
    int size;
    /* The group: the job rank of each rank of the communicator ([size]), or
     * NULL for the identity (world); and the inverse ([job size], -1: no
     * member), NULL for the world. */
    const int *members;
    int *job_to_rank;
    /* The transport in this communicator's ranks: the context's for the
     * world, else the view (comm/view.h) behind it. */
    tp_t *tp;
    cm_view_t *view;
    uint32_t uid;      /* the same at every member (revoke messages) */
    uint32_t ncreated; /* communicators made from this one so far */
    uint8_t revoked;   /* ucft_comm_revoke here or at another member */
    uint8_t freed;     /* ucft_comm_free: kept until nothing names it */
    /* The algorithm of each operation on this communicator, chosen when it
     * is made (world: UCFT_<OP>_ALG), and its corrected barrier. */
    const coll_op_ops_t *alg[CM_COLL_NOPS];
    /* UCFT_<OP>_ALG as a table by payload size (alg[op] = its first). */
    cm_sel_t sel[CM_COLL_NOPS];
    const coll_op_ops_t *sync;
    const coll_op_ops_t *agree; /* agreement (collectives/agree.h) */
    /* Failures acknowledged (ucft_comm_failure_ack, ucft_comm_agree): comm
     * ranks in the order acknowledged, and as a bitmap of size bits. */
    int *acklist;
    uint8_t *ackmap;
    size_t nacked;
    int f;        /* failures a collective tolerates */
    uint32_t seq; /* next collective instance */
    /* Next agreement instance: agreements number themselves apart (their
     * message kinds are their own), since after a failure the ranks of a
     * communicator may have ended different numbers of collectives. */
    uint32_t agree_seq;
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
    /* Tree repair (comm/repair.h): the epochs of live members and the
     * background agreement; repair_off: freed or finalized, none more. */
    cm_repair_t repair;
    uint8_t repair_off;
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
    unsigned coll_post_tick;         /* posts: a progress call every 8th */
    uint64_t drained;                /* late collective messages dropped */
    cm_inject_t inject;              /* UCFT_INJECT (comm/coll_inject.h) */
    uint32_t ctx_used[CM_CTX_WORDS]; /* context ids in use here */
    /* Tombstones: the tag contexts of the last CM_CTX_TOMBS freed
     * communicators (a ring, oldest at tomb_head) and their ids' bits. */
    uint32_t tomb_ids[CM_CTX_WORDS];
    uint16_t tomb[CM_CTX_TOMBS];
    unsigned ntomb, tomb_head, tomb_sweep;
    rbcast_t revokes; /* revoke messages (comm/revoke.c) */
    coll_csum_t csum; /* UCFT_CHECKSUM (collectives/coll_csum.h) */
    /* Tree repair (comm/repair.c): a failure was learnt or an agreement
     * ended (look at the communicators); inside that look; finalize's
     * barrier is over (no more background agreements). */
    uint8_t repair_due, repair_busy, closing;
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
/* What the communicators' views and the checksum filter sit on: UCFT_INJECT's
 * filter when it is active (it passes through what it does not count),
 * else the context's transport. */
static inline tp_t *cm_layer_below(cm_layer_t *cl)
{
    return cm_inject_active(&cl->inject) ? &cl->inject.wrap.f.tp : cl->ctx->tp;
}

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
/* The rank, in the instance `c`'s numbering (its epoch's, or its
 * communicator's), of job rank `job`, or -1: none. */
static inline int cm_coll_peer(const cm_coll_t *c, uint32_t job)
{
    if (c->ep == NULL)
        return cm_comm_rank_of(c->comm, job);
    return job < (uint32_t)c->comm->ctx->boot.size ? c->ep->job_to_dense[job]
                                                   : -1;
}
/* Sets up the acknowledgement storage of `comm` (size known). */
ucft_status_t cm_comm_ack_init(struct ucft_comm *comm);
/* Acknowledges comm rank r as failed (no-op when it is already). */
void cm_comm_ack(struct ucft_comm *comm, int r);
/* 1 when a member that this context knows failed is not acknowledged. */
int cm_comm_unacked(const struct ucft_comm *comm);
/* Frees what a communicator owns (not the world's struct). */
void cm_comm_destroy(struct ucft_comm *comm);
/* Frees the freed communicators that nothing names any more (comm_in_use in
 * comm/comm.c); the others stay listed (closed) for a later call. Called
 * by ucft_comm_free and by every maker. */
void cm_comm_reap(cm_layer_t *cl);

/* ---- agreement and communicator creation (comm/agree_api.c, create.c) --- */

/* What an agreement's completion does with the decision: value words, the
 * header (err, |F|) and F as a bitmap of comm ranks (NULL: empty). Its
 * return is the request's status. */
typedef ucft_status_t (*cm_agree_fn_t)(struct ucft_comm *comm,
                                       const uint32_t *val,
                                       const coll_agree_hdr_t *hdr,
                                       const uint8_t *failed, void *arg);
/* Posts an agreement on `words` value words on `comm`; `fn(arg)` runs at
 * completion. Works on a revoked communicator. */
ucft_status_t cm_agree_post(struct ucft_comm *comm, int inject_op,
                            const uint32_t *in, size_t words, cm_agree_fn_t fn,
                            void *arg, ucft_request_h *req);

/* The same for a background agreement of tree repair (comm/repair.h): its
 * own tag sequence (CM_REPAIR_SEQ_BIT), kept running until the next one
 * completes, never counted by UCFT_INJECT. */
ucft_status_t cm_agree_post_bg(struct ucft_comm *comm, const uint32_t *in,
                               size_t words, cm_agree_fn_t fn, void *arg,
                               ucft_request_h *req);

/* ---- revoke (comm/revoke.c) ---------------------------------------------- */

/* Posts the layer's receive of revoke messages (after wire-up). */
ucft_status_t cm_revoke_start(cm_layer_t *cl);
/* Finalize: cancels it. */
void cm_revoke_stop(cm_layer_t *cl);
/* After the transport: frees what is still queued. */
void cm_revoke_destroy(cm_layer_t *cl);

/* ---- point-to-point (comm/p2p.c) ----------------------------------------- */

/* `rank` failed: pending receives from it end with UCFT_ERR_PROC_FAILED. */
void cm_p2p_failure(cm_layer_t *cl, int rank);
/* `comm` was revoked: its pending receives end with UCFT_ERR_REVOKED. */
void cm_p2p_revoke(cm_layer_t *cl, struct ucft_comm *comm);
/* Finalize: cancels every pending receive. */
void cm_p2p_cancel_all(cm_layer_t *cl);

/* ---- user-defined operations (comm/user_op.c) ---------------------------- */

/* The registered user-defined operation `op`, or NULL. */
const coll_user_op_t *cm_user_op(cm_layer_t *cl, int op);

#endif
