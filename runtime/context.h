/* Private definitions of the runtime objects behind the public handles. */
#ifndef UCFT_RT_CONTEXT_H
#define UCFT_RT_CONTEXT_H

#include "ucft.h"
#include "runtime/base/log.h"
#include "runtime/bootstrap.h"
#include "runtime/coll.h"
#include "runtime/locality.h"
#include "transport/ctrl_kinds.h"
#include "runtime/detect.h"
#include "runtime/inject.h"
#include "runtime/rt_config.h"
#include "runtime/sched_slice.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

enum rt_req_kind { RT_REQ_SEND = 1, RT_REQ_RECV = 2, RT_REQ_COLL = 3 };

struct ucft_request {
    tp_req_t tp; /* first: the transport hands it back in callbacks */
    struct ucft_context *ctx;
    struct ucft_comm *comm;
    struct ucft_request *prev, *next; /* pending list; freelist uses next */
    ucft_info_t info;
    int peer;       /* comm rank, or UCFT_ANY_SOURCE */
    int peer_world; /* job rank, or -1 for ANY_SOURCE */
    uint8_t kind;
    uint8_t done;
    uint8_t released;            /* the user let go; recycle on completion */
    uint8_t in_pool;             /* on the free list: a stale handle */
    ucft_status_t cancel_status; /* reported instead of CANCELED */
    struct rt_coll *coll;        /* RT_REQ_COLL: the running collective */
};

struct ucft_comm {
    struct ucft_context *ctx;
    unsigned ctx_id; /* tag context id */
    int rank;
    int size;
    size_t acked; /* failures acknowledged (ucft_comm_failure_ack) */
    int f;        /* failures a collective tolerates */
    uint32_t seq; /* next collective instance */
    /* Placement (runtime/place.c): computed once, passed to every
     * collective of this communicator (coll_args_t.map). */
    placement_policy_t policy;
    int nnodes;
    placement_locus_t *loci; /* [size] */
    ucft_locus_t *pub_loci;  /* [size]: the same, for the public query */
    int *rank_at, *pos_of;   /* [size] */
    coll_map_t map;          /* points at rank_at and pos_of */
    int mate; /* placement_core_mate of this rank, or -1 (coll_args_t) */
    uint64_t kept_gen; /* completions of keep_after_done collectives */
    /* Flow control of reduce loops (runtime/coll_flow.c). */
    unsigned flow_run;             /* reduces since the last synchronising op */
    struct ucft_request *flow_req; /* the window's barrier, or NULL */
    /* Per operation: the state of its algorithm on this communicator
     * (coll_op_ops_t.comm, e.g. corrected-batched's copy channel), or NULL;
     * closed once finalize has cleaned them up. */
    void *coll_cs[RT_COLL_NOPS];
    uint8_t coll_cs_closed;
};

typedef struct rt_req_chunk {
    struct rt_req_chunk *next;
    struct ucft_request reqs[64];
} rt_req_chunk_t;

/* News handed over to the owner of the context by other threads (the PMIx
 * thread, the heartbeat thread) or by callbacks that must not act at once.
 * An entry is either external (a death event or endpoint error: evidence
 * for the detector) or decided (the detector, or the only source when the
 * detector is off, declared the rank failed: apply it). */
typedef struct rt_inbox {
    pthread_mutex_t lock;
    int *ranks;
    ucft_status_t *why;
    uint8_t *external;
    size_t count, cap;
    atomic_int pending;    /* deaths waiting in ranks[] */
    atomic_int fence_done; /* finalize fence: 0 running, 1 ok, -1 error */
    int evfd;              /* written to wake the owner */
} rt_inbox_t;

/* The sweeper of late messages of finished collectives
 * (runtime/coll_drain.c): one receive at a time. */
typedef struct rt_drain {
    tp_req_t req;
    struct ucft_context *ctx;
    int posted;  /* a receive is in flight (a large message) */
    int pending; /* a sweep is due */
    int stopped; /* finalize: no more sweeps */
    unsigned char buf[64];
} rt_drain_t;

/* A user-defined reduction (runtime/user_op.c): the application's function
 * behind the collectives' callback. */
#define RT_USER_OPS (UCFT_OP_USER_LAST - UCFT_OP_USER_FIRST + 1)
typedef struct rt_user_op {
    ucft_user_op_fn fn;
    void *arg;
    coll_user_op_t op; /* cb: calls fn; arg: this entry */
    int used;
} rt_user_op_t;

struct ucft_context {
    ucft_log_t log;
    rt_config_t cfg;
    rt_slice_t slice; /* UCFT_SLICE, given back at finalize */
    rt_boot_t boot;
    tp_t *tp;
    int epfd;
    struct ucft_comm world;
    rt_inbox_t inbox;
    rt_detect_t detect;
    int ready; /* ucft_init has succeeded: callbacks may run */
    int finalizing;

    /* Membership: the monotonic set of failed job ranks. */
    uint8_t *failed_map;
    uint8_t *watched; /* receives from this rank were posted: tp_watch done */
    int *failed_list;
    size_t nfailed, failed_cap;
    size_t nfailed_reported; /* failure callbacks delivered so far */
    ucft_failure_cb_t failure_cb;
    void *failure_arg;

    /* Requests: a pool and the list of those still pending. */
    rt_req_chunk_t *chunks;
    struct ucft_request *free_reqs;
    struct ucft_request pending; /* sentinel of a circular list */

    /* Collectives (runtime/coll.c). */
    const coll_op_ops_t *coll_alg[RT_COLL_NOPS];
    rt_user_op_t user_ops[RT_USER_OPS]; /* ucft_op_create */
    const coll_op_ops_t *coll_sync;     /* corrected barrier (finalize) */
    /* Sentinels: running; finishing (cleaned up, a cancelled request still
     * to complete: recycled once ops->idle says so); lingering (no idle:
     * freed after RT_COLL_LINGER_NS). */
    rt_coll_t colls, finishing, zombies;
    rt_coll_t *coll_free[RT_COLL_NOPS + 1]; /* per operation, for reuse */
    rt_coll_stats_t coll_stats;
    unsigned coll_early; /* running states whose request already completed */
    int coll_retire;     /* some kept collective is retired */
    rt_drain_t drain;
    unsigned coll_tick;
    unsigned coll_post_tick; /* posts: a progress call every 8th */
    uint64_t drained;        /* late collective messages dropped */
    rt_inject_t inject;      /* UCFT_INJECT (runtime/inject.h) */
};

/* failure.c */
ucft_status_t rt_failure_init(struct ucft_context *ctx);
void rt_failure_cleanup(struct ucft_context *ctx);
void rt_failure_declare(struct ucft_context *ctx, int rank, ucft_status_t why);
static inline int rt_is_failed(const struct ucft_context *ctx, int rank)
{
    return ctx->failed_map[rank] != 0;
}
void rt_peer_error_cb(void *arg, int rank, ucft_status_t why);
/* cut_off_cb of the context's transports (tp_ucp.h): fail-stop. */
void rt_failure_cut_off(void *ctx);
unsigned rt_failure_progress(struct ucft_context *ctx);

/* place.c: the world communicator's loci (rt_locality_gather) and map
 * (UCFT_PLACEMENT); cleanup frees them and may run after a failed or
 * partial init. */
ucft_status_t rt_place_init(struct ucft_context *ctx);
void rt_place_cleanup(struct ucft_context *ctx);

/* inbox.c (any thread may push) */
ucft_status_t rt_inbox_init(rt_inbox_t *in);
void rt_inbox_cleanup(rt_inbox_t *in);
void rt_inbox_wake(rt_inbox_t *in);
void rt_inbox_drain_fd(rt_inbox_t *in);
void rt_inbox_push(rt_inbox_t *in, int rank, ucft_status_t why, int external);

/* p2p.c */
/* API misuse: logs "call: what" as an error with the caller's file and
 * line (to stderr when ctx is NULL, where no context log exists) and
 * returns UCFT_ERR_INVALID_PARAM. */
ucft_status_t rt_bad_arg_at(const struct ucft_context *ctx, const char *call,
                            const char *what, const char *file, int line);
#define rt_bad_arg(ctx, call, what)                                            \
    rt_bad_arg_at((ctx), (call), (what), __FILE__, __LINE__)

struct ucft_request *rt_req_get(struct ucft_context *ctx);
void rt_req_put(struct ucft_request *r);
void rt_requests_cleanup(struct ucft_context *ctx);
void rt_requests_cancel_all(struct ucft_context *ctx);

/* wait.c: progress until cond(arg) holds or timeout_ns passes. Returns
 * UCFT_OK or UCFT_ERR_TIMED_OUT. */
ucft_status_t rt_wait_until(struct ucft_context *ctx, int (*cond)(void *),
                            void *arg, uint64_t timeout_ns);
/* The same; while spin(arg) holds (no yield can help: the collective
 * waits only for ranks off this core), a hybrid wait polls without
 * yielding for up to UCFT_MATE_SPIN_TIME after the last progress. */
ucft_status_t rt_wait_hinted(struct ucft_context *ctx, int (*cond)(void *),
                             int (*spin)(void *), void *arg,
                             uint64_t timeout_ns);

/* The registered user-defined operation `op`, or NULL (runtime/user_op.c). */
const coll_user_op_t *rt_user_op(struct ucft_context *ctx, int op);

#endif
