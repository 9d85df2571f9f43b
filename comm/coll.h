/*
 * The collectives driver of the communicator layer: posting
 * (comm/coll_post.c), the life of instances (comm/coll_life.c), the
 * per-communicator algorithm states (comm/coll_cs.c), the sweeper of late
 * messages (comm/drain.c), the public calls (comm/coll_api.c).
 */
#ifndef UCFT_COMM_COLL_H
#define UCFT_COMM_COLL_H

#include "ucft.h"
#include "collectives/agree.h"
#include "collectives/coll_op.h"
#include "collectives/gossip.h"
#include "collectives/tree_ft.h"
#include "runtime/request.h"

#include <stddef.h>
#include <stdint.h>

struct ucft_context;
struct cm_layer;
struct ucft_request;

/* A collective instance: its state, its buffer and its arguments. The
 * layer keeps circular lists of them (running, finishing, lingering) with
 * sentinels of this type, and a free list per operation of the ones ready
 * for reuse (singly linked through next). */
typedef struct cm_coll {
    struct cm_coll *prev, *next;
    struct cm_layer *cl;
    struct ucft_request *req; /* NULL once the caller let go of it */
    struct ucft_comm *comm;
    const coll_op_ops_t *ops;
    coll_args_t args;
    void *state; /* state_cap >= ops->state_size bytes */
    size_t state_cap;
    unsigned char *buf;
    size_t bufcap; /* bytes allocated at buf */
    /* The algorithm's buffer: buf, or in direct mode (include/ucft.h R4)
     * the caller's output, with args.tail = buf. */
    unsigned char *work;
    void *out; /* where out_len bytes from buf + out_off go on
                  success, or NULL */
    size_t out_off, out_len;
    uint8_t *present; /* allgather: where the n presence bytes go, or NULL */
    /* An allgather in an epoch (ep below): its n' blocks of blk bytes and
     * presence bytes are spread over the communicator's n on success. */
    uint8_t spread;
    size_t blk;
    uint64_t free_at; /* lingering (no ops->idle): when to free */
    int slot;         /* the operation (CM_COLL_*): its free list */
    int ready;        /* the request completed before the state finished */
    /* ops->keep_after_done: while running, the communicator's count of
     * kept completions when this instance was posted; once completed
     * ("kept": still running, request done), its own number in that
     * count. */
    uint64_t gen;
    uint8_t kept;        /* completed, still running for the others */
    uint8_t retired;     /* kept and no longer needed: to be cleaned up */
    uint8_t remote_wait; /* args.remote_wait points here (or is NULL) */
    uint8_t bg;          /* a background agreement (comm/repair.h) */
    /* The epoch it runs in (comm/repair.h): ranks are its indices; NULL:
     * the communicator's ranks. */
    struct cm_epoch *ep;
    /* An agreement's completion (comm/comm.h, cm_agree_fn_t), or NULL. */
    ucft_status_t (*agree_fn)(struct ucft_comm *, const uint32_t *,
                              const coll_agree_hdr_t *, const uint8_t *,
                              void *);
    void *agree_arg;
    coll_gossip_params_t gossip; /* args.gossip points here (APPROX) */
    coll_gate_t gate;            /* args.gate points here (UCFT_QUORUM) */
    /* UCFT_TREE_REPAIR=reroute: this instance's rerouted tree (args.tree
     * points here; comm/repair_tree.c), rebuilt at every post. */
    coll_tree_t rtree;
} cm_coll_t;

enum {
    CM_COLL_BCAST = 0,
    CM_COLL_REDUCE,
    CM_COLL_ALLREDUCE,
    CM_COLL_BARRIER,
    CM_COLL_ALLGATHER,
    CM_COLL_REDUCE_SCATTER,
    CM_COLL_NOPS,
    /* Not an operation of its own: the corrected barrier whatever
     * UCFT_BARRIER_ALG says (finalize's synchronisation must tolerate the
     * dead ranks; a baseline barrier would only report them). */
    CM_COLL_SYNC = CM_COLL_NOPS,
    /* Agreement (comm/agree_api.c): its own free list too. */
    CM_COLL_AGREE,
    /* The approximate allreduce (ucft_allreduce_approx): its algorithm
     * comes with each call, not from a variable. */
    CM_COLL_APPROX,
    CM_COLL_NSLOTS /* free lists: the operations, SYNC, AGREE, APPROX */
};

/* Counters of collective states (for the finalize log line and tests). */
typedef struct cm_coll_stats {
    uint64_t ops;    /* instances posted */
    uint64_t allocs; /* states allocated (the others were reused) */
    unsigned live;   /* states allocated now (free lists included) */
    unsigned peak;   /* the most at once */
    unsigned nfree[CM_COLL_NSLOTS]; /* per free list */
} cm_coll_stats_t;

/* Chooses `comm`'s algorithms (UCFT_<OP>_ALG) and f (UCFT_F), and makes
 * its per-operation algorithm states. */
ucft_status_t cm_coll_init(struct cm_layer *cl, struct ucft_comm *comm);
/* cm_coll_post's flags. CM_POST_BLOCKING: the caller waits for the
 * request before it returns (the blocking API), so a large operation on
 * an algorithm that allows it may work in the caller's buffers (direct
 * mode, UCFT_COLL_DIRECT_MIN, include/ucft.h R4). */
enum { CM_POST_BLOCKING = 1u };
/* Posts operation `op` (CM_COLL_*): `in` is copied into the op buffer,
 * the result is copied to `out` (NULL: not wanted) on success (or, in
 * direct mode, the operation works in `out`). */
ucft_status_t cm_coll_post(ucft_comm_h comm, int op, int root, const void *in,
                           void *out, size_t count, int dtype, int redop,
                           ucft_request_h *req, unsigned flags);
/* Posts allgather or reduce-scatter (CM_COLL_ALLGATHER, _REDUCE_SCATTER):
 * `count` elements per block, one block per rank. Allgather: `in` (one
 * block) goes to the rank's block, the n blocks to `out` and the presence
 * bytes to `present` (NULL: not wanted) on success. Reduce-scatter: `in`
 * holds the n blocks; the rank's block goes to `out`. */
ucft_status_t cm_coll_post_blocks(ucft_comm_h comm, int op, const void *in,
                                  void *out, uint8_t *present, size_t count,
                                  int dtype, int redop, ucft_request_h *req,
                                  unsigned flags);
/* Posts an approximate allreduce (CM_COLL_APPROX) with algorithm `ops`
 * and parameters `gp` (copied). */
ucft_status_t cm_coll_post_approx(ucft_comm_h comm, const coll_op_ops_t *ops,
                                  const coll_gossip_params_t *gp,
                                  const void *in, void *out, size_t count,
                                  int dtype, ucft_request_h *req);
/* Finalize: progress until the states that run on after their request
 * completed (early completion) have finished, at most timeout_ns. */
void cm_coll_quiesce(struct cm_layer *cl, uint64_t timeout_ns);
/* The corrected barrier on `comm` (CM_COLL_SYNC), blocking. */
ucft_status_t cm_coll_sync(ucft_comm_h comm);
/* Finalize: wait for the last flow-control barrier of reduce loops
 * (UCFT_REDUCE_WINDOW, comm/coll_post.c). */
void cm_coll_flow_end(struct ucft_comm *comm);
/* `rank` failed: tell every running collective. */
void cm_coll_failure(struct cm_layer *cl, int rank);
/* The rank waits (runtime/progress.c: a wait that has lasted 20 us, or that
 * goes to sleep; ucft_context_arm; a ucft_test that finds its request
 * pending): the communicator states send what they hold back
 * (corrected-batched's copies). Cheap when nothing is held. */
void cm_coll_flush(struct cm_layer *cl);
/* 1 when `kind` is received by a communicator state of `comm` that still
 * runs (the sweeper of late messages leaves those alone); -1 when such a
 * state owned it but is closed (finalize: the message is late); 0 when no
 * state owns it. */
int cm_coll_cs_kind(const struct ucft_comm *comm, unsigned kind);
/* coll_cs.c: the communicator states (coll_op_ops_t.comm) of every
 * communicator's algorithms: made by cm_coll_init, told of failures by
 * cm_coll_failure; finalize cleans them up (cm_coll_cleanup) and frees them
 * after the transport (also after an init that failed). */
ucft_status_t cm_coll_cs_init(struct cm_layer *cl, struct ucft_comm *comm);
void cm_coll_cs_failure(struct cm_layer *cl, int rank);
/* Comm rank `rank` of `comm` failed: its communicator states only. */
void cm_coll_cs_failure_one(struct ucft_comm *comm, int rank);
/* `comm` was revoked: its running collectives but agreements end with
 * UCFT_ERR_REVOKED. */
void cm_coll_revoke(struct cm_layer *cl, struct ucft_comm *comm);
/* ucft_comm_free: its kept instances are retired. */
void cm_coll_retire_comm(struct cm_layer *cl, struct ucft_comm *comm);
void cm_coll_cs_cleanup(struct cm_layer *cl);
/* The same for one communicator (a freed one, comm/create.c): close its
 * states (cancel their receives); whether they are idle; free them. */
void cm_coll_cs_close(struct ucft_comm *comm);
int cm_coll_cs_comm_idle(const struct ucft_comm *comm);
void cm_coll_cs_destroy(struct ucft_comm *comm);
int cm_coll_cs_idle(const struct cm_layer *cl);
void cm_coll_cs_free(struct cm_layer *cl);
/* Recycles finished states whose requests have completed, frees lingering
 * ones, drops late messages; the work done. */
unsigned cm_coll_progress(struct cm_layer *cl);
/* The ops of a collective's request (runtime/request.h): release when the
 * caller lets go, the wait's spin hint. */
extern const rt_req_ops_t cm_coll_req_ops;
/* Finalize: cancel every collective and let the cancellations complete;
 * then, after the transport is destroyed, free their states. */
void cm_coll_cleanup(struct cm_layer *cl);
void cm_coll_free_all(struct cm_layer *cl);

/* coll_life.c, for coll_post.c: the lists, the free lists, and the
 * callbacks an instance's algorithm calls (done_cb, ready_cb). */
void cm_coll_list_add(struct cm_coll *head, struct cm_coll *c);
void cm_coll_list_del(struct cm_coll *c);
/* A state from the operation's free list, or a new one (NULL: no memory). */
struct cm_coll *cm_coll_get(struct cm_layer *cl, int slot,
                            const coll_op_ops_t *ops);
/* The state's requests have all completed: reuse it, or free it. */
void cm_coll_recycle(struct cm_layer *cl, struct cm_coll *c);
/* After ops->cleanup: recycle now or once idle (in_cb: from inside the
 * algorithm's callback, where the state is still in use). */
void cm_coll_retire(struct cm_layer *cl, struct cm_coll *c, int in_cb);
void cm_coll_done(void *arg, int rank, ucft_status_t status);
void cm_coll_ready(void *arg, int rank, ucft_status_t status);
/* Cleans up the retired kept instances whose requests are released. */
unsigned cm_coll_retire_kept(struct cm_layer *cl);
/* Retires the kept instance whose tag sequence the next instance of
 * `comm` would reuse. */
void cm_coll_retire_aliased(struct cm_layer *cl, struct ucft_comm *comm);

/* drain.c: an instance is over at this rank (completed, given up,
 * or failed to start): a sweep of late messages is due. */
void cm_drain_finished(struct cm_layer *cl);
/* Drops the late messages now waiting (when a sweep is due). */
void cm_drain_sweep(struct cm_layer *cl);
/* Finalize: stop sweeping. */
void cm_drain_cancel_all(struct cm_layer *cl);

/* UCFT_QUORUM: gives the instance the majority gate (comm/coll_gate.c). */
void cm_coll_gate(cm_coll_t *c);

#endif
