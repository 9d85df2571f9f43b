/* Collectives inside a context (runtime/coll.c). */
#ifndef UCFT_RT_COLL_H
#define UCFT_RT_COLL_H

#include "ucft.h"
#include "collectives/coll_op.h"

#include <stddef.h>
#include <stdint.h>

struct ucft_context;
struct ucft_request;

/* A collective instance: its state, its buffer and its arguments. The
 * context keeps circular lists of them (running, finishing, lingering) with
 * sentinels of this type, and a free list per operation of the ones ready
 * for reuse (singly linked through next). */
typedef struct rt_coll {
    struct rt_coll *prev, *next;
    struct ucft_context *ctx;
    struct ucft_request *req; /* NULL once the caller let go of it */
    struct ucft_comm *comm;
    const coll_op_ops_t *ops;
    coll_args_t args;
    void *state; /* ops->state_size bytes */
    unsigned char *buf;
    size_t bufcap;    /* bytes allocated at buf */
    void *out;        /* where the first len bytes go on success, or NULL */
    uint64_t free_at; /* lingering (no ops->idle): when to free */
    int slot;         /* the operation (RT_COLL_*): its free list */
    int ready;        /* the request completed before the state finished */
    /* ops->keep_after_done: while running, the communicator's count of
     * kept completions when this instance was posted; once completed
     * ("kept": still running, request done), its own number in that
     * count. */
    uint64_t gen;
    uint8_t kept;        /* completed, still running for the others */
    uint8_t retired;     /* kept and no longer needed: to be cleaned up */
    uint8_t remote_wait; /* args.remote_wait points here (or is NULL) */
} rt_coll_t;

enum {
    RT_COLL_BCAST = 0,
    RT_COLL_REDUCE,
    RT_COLL_ALLREDUCE,
    RT_COLL_BARRIER,
    RT_COLL_NOPS,
    /* Not an operation of its own: the corrected barrier whatever
     * UCFT_BARRIER_ALG says (finalize's synchronisation must tolerate the
     * dead ranks; a baseline barrier would only report them). */
    RT_COLL_SYNC = RT_COLL_NOPS
};

/* Counters of collective states (for the finalize log line and tests). */
typedef struct rt_coll_stats {
    uint64_t ops;    /* instances posted */
    uint64_t allocs; /* states allocated (the others were reused) */
    unsigned live;   /* states allocated now (free lists included) */
    unsigned peak;   /* the most at once */
    unsigned nfree[RT_COLL_NOPS + 1]; /* per free list */
} rt_coll_stats_t;

ucft_status_t rt_coll_init(struct ucft_context *ctx);
/* Posts operation `op` (RT_COLL_*): `in` is copied into the op buffer,
 * the result is copied to `out` (NULL: not wanted) on success. */
ucft_status_t rt_coll_post(ucft_comm_h comm, int op, int root, const void *in,
                           void *out, size_t count, int dtype, int redop,
                           ucft_request_h *req);
/* The corrected barrier (RT_COLL_SYNC) of flow control (coll_flow.c):
 * like rt_coll_post, but UCFT_INJECT does not count it (its "finalize"
 * calls are finalize's barriers only). */
ucft_status_t rt_coll_post_flow(ucft_comm_h comm, ucft_request_h *req);
/* Finalize: progress until the states that run on after their request
 * completed (early completion) have finished, at most timeout_ns. */
void rt_coll_quiesce(struct ucft_context *ctx, uint64_t timeout_ns);
/* The corrected barrier on `comm` (RT_COLL_SYNC), blocking. */
ucft_status_t rt_coll_sync(ucft_comm_h comm);
/* coll_flow.c: flow control of reduce loops (UCFT_REDUCE_WINDOW). Called
 * by rt_coll_post for every valid call before it takes a sequence number. */
void rt_coll_flow(struct ucft_comm *comm, int op);
/* Finalize: wait for the last flow-control barrier. */
void rt_coll_flow_end(struct ucft_comm *comm);
/* `rank` failed: tell every running collective. */
void rt_coll_failure(struct ucft_context *ctx, int rank);
/* The rank waits (runtime/wait.c: a wait that has lasted 20 us, or that
 * goes to sleep; ucft_context_arm; a ucft_test that finds its request
 * pending): the communicator states send what they hold back
 * (corrected-batched's copies). Cheap when nothing is held. */
void rt_coll_flush(struct ucft_context *ctx);
/* 1 when `kind` is received by a communicator state of `comm` that still
 * runs (the sweeper of late messages leaves those alone); -1 when such a
 * state owned it but is closed (finalize: the message is late); 0 when no
 * state owns it. */
int rt_coll_cs_kind(const struct ucft_comm *comm, unsigned kind);
/* coll_comm.c: the communicator states (coll_op_ops_t.comm) of the
 * world's algorithms: made by rt_coll_init, told of failures by
 * rt_coll_failure; finalize cleans them up (rt_coll_cleanup) and frees them
 * after the transport (also after an init that failed). */
ucft_status_t rt_coll_cs_init(struct ucft_context *ctx, struct ucft_comm *comm);
void rt_coll_cs_failure(struct ucft_context *ctx, int rank);
void rt_coll_cs_cleanup(struct ucft_context *ctx);
int rt_coll_cs_idle(const struct ucft_context *ctx);
void rt_coll_cs_free(struct ucft_context *ctx);
/* Recycles finished states whose requests have completed, frees lingering
 * ones, drops late messages; the work done. */
unsigned rt_coll_progress(struct ucft_context *ctx);
/* Whether the collective of request `req` (a struct ucft_request *) now
 * waits only for ranks off this rank's core (coll_args_t.remote_wait):
 * the `spin` of rt_wait_hinted. */
int rt_coll_remote_wait(void *req);
/* The request of a collective is released by the caller. */
void rt_coll_release(struct ucft_request *r);
/* Finalize: cancel every collective and let the cancellations complete;
 * then, after the transport is destroyed, free their states. */
void rt_coll_cleanup(struct ucft_context *ctx);
void rt_coll_free_all(struct ucft_context *ctx);

/* coll_drain.c: an instance is over at this rank (completed, given up,
 * or failed to start): a sweep of late messages is due. */
void rt_drain_finished(struct ucft_context *ctx);
/* Drops the late messages now waiting (when a sweep is due). */
void rt_drain_sweep(struct ucft_context *ctx);
/* Finalize: stop sweeping. */
void rt_drain_cancel_all(struct ucft_context *ctx);

#endif
