/*
 * ucft.h - the public API of ucft, a UCX-native fault-tolerant transport
 * runtime.
 *
 * Objects:
 *   ucft_context_h  one per participating process and job (handle; long-lived)
 *   ucft_comm_h     a communicator: a group of ranks with its own tag space
 *   ucft_request_h  one non-blocking operation (request; completes once)
 *
 * Rules (numbered so that other documents can cite them):
 *   1. A context is used by one thread at a time. Nothing in ucft is global:
 *      two contexts in one process are independent.
 *   2. Requests are allocated by the library. A request completes exactly
 *      once. (One status is not a completion: an ANY_SOURCE receive reports
 *      UCFT_ERR_PROC_FAILED_PENDING while a failure is unacknowledged and
 *      stays pending; see ucft_comm_failure_ack.) A NULL request is a complete
 * one (status UCFT_OK): a send that completes in place (short messages) returns
 * *req == NULL. ucft_test() and ucft_wait() return its final status and release
 *      it, setting the caller's handle to NULL; ucft_request_free() releases
 *      a request the caller no longer wants to observe (the operation still
 *      runs to completion). A copy of a released handle is refused
 *      (UCFT_ERR_INVALID_PARAM) until the library reuses the request.
 *   3. If a call that starts an operation fails, no request is created and
 *      nothing completes later.
 *   4. Callbacks (failure callback) run only from inside ucft_progress() or a
 *      call that waits (ucft_wait, blocking send/recv), never from the call
 *      that registered them.
 *   5. Outputs are written only when the call returns UCFT_OK.
 *   6. Statuses: UCFT_OK is 0, "in progress" values are positive, errors are
 *      negative and grouped by blast radius (see UCFT_FOREACH_STATUS).
 */
#ifndef UCFT_H
#define UCFT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* UCFT_API marks the functions of this header, and only them, as the
 * interface that libucft exports (default visibility, whatever the
 * visibility the library is built with). */
#if defined(__GNUC__)
#define UCFT_API __attribute__((visibility("default")))
#else
#define UCFT_API
#endif

#define UCFT_VERSION_MAJOR 0
#define UCFT_VERSION_MINOR 1
#define UCFT_VERSION_PATCH 0

/*
 * Status codes: one table, from which both the enum and
 * ucft_status_string() are generated. Groups (by what breaks):
 *   0, >0        success / still running
 *   -1 .. -9     this operation only (cancelled, truncated, timed out)
 *   -10 .. -19   one peer failed
 *   -20 .. -29   the whole communicator is broken
 *   -30 .. -39   bad input from the caller
 *   -40 .. -49   resources
 *   -50 .. -59   the runtime or its platform
 */
#define UCFT_FOREACH_STATUS(X)                                                 \
    X(OK, 0, "success")                                                        \
    X(INPROGRESS, 1, "operation in progress")                                  \
    X(ERR_CANCELED, -1, "operation was cancelled")                             \
    X(ERR_TRUNCATED, -2, "message truncated: receive buffer too small")        \
    X(ERR_TIMED_OUT, -3, "operation timed out")                                \
    X(ERR_NO_MESSAGE, -4, "no matching message")                               \
    X(ERR_PROC_FAILED, -10, "a peer process failed")                           \
    X(ERR_PROC_FAILED_PENDING, -11,                                            \
      "a potential sender failed; acknowledge failures to go on")              \
    X(ERR_REVOKED, -20, "communicator was revoked")                            \
    X(ERR_SELF_FAILED, -21, "this process was declared failed by the job")     \
    X(ERR_INVALID_PARAM, -30, "invalid parameter")                             \
    X(ERR_NOT_SUPPORTED, -31, "operation not supported")                       \
    X(ERR_NO_MEMORY, -40, "out of memory")                                     \
    X(ERR_NO_RESOURCE, -41, "out of resources")                                \
    X(ERR_BOOTSTRAP, -50, "bootstrap (PMIx) failure")                          \
    X(ERR_TRANSPORT, -51, "transport (UCX) failure")                           \
    X(ERR_IO, -52, "input/output error")                                       \
    X(ERR_INTERNAL, -53, "internal error")

typedef enum ucft_status {
#define UCFT_STATUS_ENUM_(name, value, text) UCFT_##name = (value),
    UCFT_FOREACH_STATUS(UCFT_STATUS_ENUM_)
#undef UCFT_STATUS_ENUM_
} ucft_status_t;

/* Returns a static, human-readable string for any status value (unknown
 * values give "unknown status"). Thread-safe. */
UCFT_API const char *ucft_status_string(ucft_status_t status);

/* Returns the enum name without prefix, e.g. "ERR_PROC_FAILED". */
UCFT_API const char *ucft_status_name(ucft_status_t status);

typedef struct ucft_context *ucft_context_h;
typedef struct ucft_comm *ucft_comm_h;
typedef struct ucft_request *ucft_request_h;

/* Wildcards for receive and probe. */
#define UCFT_ANY_SOURCE (-1)
#define UCFT_ANY_TAG    (-1)
/* User tags are 0 .. UCFT_TAG_UB. */
#define UCFT_TAG_UB ((1 << 24) - 1)

/* Called from ucft_progress() once for every rank newly known to have
 * failed. `rank` is a job (world) rank. */
typedef void (*ucft_failure_cb_t)(ucft_context_h ctx, int rank,
                                  ucft_status_t reason, void *arg);

enum ucft_params_field {
    UCFT_PARAM_FIELD_FAILURE_CB = 1u << 0,
};

/* Parameters of ucft_init(); unset fields (field_mask) take defaults. The
 * rest of the configuration comes from UCFT_* environment variables
 * (`ucft-info -c` lists them). */
typedef struct ucft_params {
    uint64_t field_mask;
    ucft_failure_cb_t failure_cb;
    void *failure_cb_arg;
} ucft_params_t;

/* Creates a context: connects to the PMIx server (or runs as a singleton,
 * rank 0 of 1, when none is reachable), creates the UCX worker, exchanges
 * worker addresses and wires up. Collective over the job. `params` may be
 * NULL. On success *ctx_p holds the new context. */
UCFT_API ucft_status_t ucft_init(const ucft_params_t *params,
                                 ucft_context_h *ctx_p);

/* Flushes outstanding sends, synchronises with the other live ranks and
 * releases everything. Collective over the live ranks. Outstanding
 * requests are cancelled and released. `ctx` may be NULL. */
UCFT_API ucft_status_t ucft_finalize(ucft_context_h ctx);

typedef struct ucft_context_attr {
    int rank;             /* job rank */
    int size;             /* job size */
    int local_rank;       /* rank among the processes of this node */
    int local_size;       /* processes of this job on this node */
    int node_id;          /* node index as the launcher reports it */
    int singleton;        /* 1 when started without a PMIx server */
    const char *hostname; /* owned by the context */
    const char *nspace;   /* PMIx namespace; owned by the context */
} ucft_context_attr_t;

/* Fills *attr. Pointers inside stay valid until ucft_finalize(). */
UCFT_API ucft_status_t ucft_context_query(ucft_context_h ctx,
                                          ucft_context_attr_t *attr);

/* The world communicator (all ranks of the job). Owned by the context. */
UCFT_API ucft_comm_h ucft_comm_world(ucft_context_h ctx);
UCFT_API int ucft_comm_rank(ucft_comm_h comm);
UCFT_API int ucft_comm_size(ucft_comm_h comm);

/* Runs one round of progress: transport, timers, failure handling,
 * callbacks. Returns the number of events processed (0 = nothing to do). */
UCFT_API int ucft_progress(ucft_context_h ctx);

/* A file descriptor that becomes readable when ucft has work. For an
 * external event loop: call ucft_context_arm(); if it returns UCFT_OK,
 * poll the fd for at most *timeout_ms milliseconds (-1 = no limit), then
 * call ucft_progress(). If it returns UCFT_INPROGRESS, call ucft_progress()
 * at once. */
UCFT_API ucft_status_t ucft_context_fd(ucft_context_h ctx, int *fd);
UCFT_API ucft_status_t ucft_context_arm(ucft_context_h ctx, int *timeout_ms);

/* Completion information of a request. */
typedef struct ucft_info {
    ucft_status_t status; /* the final status of the operation */
    int source;           /* receive: the sender's rank in the comm */
    int tag;              /* receive: the message tag */
    size_t length;        /* receive: bytes delivered into the buffer */
} ucft_info_t;

/* Non-blocking point-to-point. Sending to or receiving from a failed rank
 * fails with UCFT_ERR_PROC_FAILED (at once, or later when the failure is
 * learnt while the operation is pending). While the communicator has a
 * failure that the caller has not acknowledged (ucft_comm_failure_ack),
 * ucft_test/ucft_wait on an unmatched ANY_SOURCE receive return
 * UCFT_ERR_PROC_FAILED_PENDING and leave the request pending (*req is kept:
 * acknowledge, then wait again, or cancel it). A message longer than the
 * receive buffer completes the receive with UCFT_ERR_TRUNCATED and writes
 * nothing past the buffer. */
UCFT_API ucft_status_t ucft_isend(ucft_comm_h comm, const void *buf,
                                  size_t length, int dest, int tag,
                                  ucft_request_h *req);
UCFT_API ucft_status_t ucft_irecv(ucft_comm_h comm, void *buf, size_t length,
                                  int source, int tag, ucft_request_h *req);

/* Tests a request. If it is complete, *done is set to 1, `info` (may be
 * NULL) receives its completion information, the request is released and
 * *req set to NULL; the return value is its final status. Otherwise *done
 * is 0 and UCFT_INPROGRESS is returned. A NULL *req is complete with OK. */
UCFT_API ucft_status_t ucft_test(ucft_request_h *req, int *done,
                                 ucft_info_t *info);

/* Waits for a request (spinning, then sleeping; UCFT_WAIT), then behaves as
 * ucft_test() on a completed request. */
UCFT_API ucft_status_t ucft_wait(ucft_request_h *req, ucft_info_t *info);

/* Waits for all requests. `infos` may be NULL. Returns UCFT_OK when all
 * succeeded, else the status of the first failed request (in array order);
 * every request is released either way. */
UCFT_API ucft_status_t ucft_waitall(size_t count, ucft_request_h reqs[],
                                    ucft_info_t infos[]);

/* Asks for cancellation of a receive or a collective. The request still
 * completes (with UCFT_ERR_CANCELED, or normally if it already matched)
 * and must be waited for or freed. A pending send cannot be cancelled
 * (UCFT_ERR_NOT_SUPPORTED, logged): it completes once received, or fails
 * with its peer. A NULL request is complete: UCFT_OK, no effect. */
UCFT_API ucft_status_t ucft_cancel(ucft_request_h req);

/* Releases a request the caller will not wait for; *req becomes NULL. */
UCFT_API ucft_status_t ucft_request_free(ucft_request_h *req);

/* Probe for a matching message without receiving it. ucft_iprobe sets
 * *flag to 0 or 1; ucft_probe waits until a message matches or the source
 * fails. On a match `info` gets source, tag and length. */
UCFT_API ucft_status_t ucft_iprobe(ucft_comm_h comm, int source, int tag,
                                   int *flag, ucft_info_t *info);
UCFT_API ucft_status_t ucft_probe(ucft_comm_h comm, int source, int tag,
                                  ucft_info_t *info);

/* Blocking forms (post + wait). */
UCFT_API ucft_status_t ucft_send(ucft_comm_h comm, const void *buf,
                                 size_t length, int dest, int tag);
UCFT_API ucft_status_t ucft_recv(ucft_comm_h comm, void *buf, size_t length,
                                 int source, int tag, ucft_info_t *info);

/* ---- Collectives ---------------------------------------------------------
 * Fault-tolerant ("corrected") broadcast, reduce, allreduce and barrier:
 * with up to f failures (ucft_comm_set_f, UCFT_F, default 1) before or
 * during the operation they complete at every survivor with the right
 * result (reduce and allreduce: every live rank's value exactly once, a
 * failed rank's value entirely or not at all; allreduce: the same result
 * at every survivor), with no recovery step. With more failures an
 * operation ends with UCFT_ERR_PROC_FAILED, never hangs. The algorithm of
 * each operation comes from UCFT_BCAST_ALG, UCFT_REDUCE_ALG,
 * UCFT_ALLREDUCE_ALG, UCFT_BARRIER_ALG (`ucft-sim --list` shows them);
 * the baselines among them (UCFT_REDUCE_ALG=binomial,
 * UCFT_ALLREDUCE_ALG=recdbl, UCFT_BARRIER_ALG=recdbl) are not
 * fault-tolerant: any failure they depend on ends them with
 * UCFT_ERR_PROC_FAILED (docs/baselines.md).
 * Every rank of the communicator must call the same collectives in the
 * same order with matching arguments. A rank that receives a payload of
 * another size than its own (counts or datatypes differ between ranks)
 * does not use it: its call ends with UCFT_ERR_TRUNCATED and a log line
 * (docs/wire.md). */
typedef enum ucft_datatype {
    UCFT_INT8 = 0,
    UCFT_INT16,
    UCFT_INT32,
    UCFT_INT64,
    UCFT_UINT8,
    UCFT_UINT16,
    UCFT_UINT32,
    UCFT_UINT64,
    UCFT_FLOAT,
    UCFT_DOUBLE,
} ucft_datatype_t;
#define UCFT_BYTE UCFT_UINT8

typedef enum ucft_op {
    UCFT_SUM = 0,
    UCFT_PROD,
    UCFT_MIN,
    UCFT_MAX,
    UCFT_BAND, /* bitwise ops: integer types only */
    UCFT_BOR,
    UCFT_BXOR,
    /* Handles of user-defined operations (ucft_op_create) lie in
     * [UCFT_OP_USER_FIRST, UCFT_OP_USER_LAST]. */
    UCFT_OP_USER_FIRST = 64,
    UCFT_OP_USER_LAST = 64 + 63,
} ucft_op_t;

/* A user-defined reduction: inout[i] = in[i] op inout[i] for the `count`
 * elements of `dtype` (the datatype the collective was called with). It
 * must be commutative and associative: the corrected algorithms combine
 * values in an order that depends on the tree and on failures (an
 * allreduce still gives every survivor the same bits when the operation
 * is exactly commutative). It must work element by element: one
 * combination may call it several times, on consecutive parts of the
 * vectors (whole elements, aligned for dtype). It runs inside ucft calls
 * on the thread that drives the context, never twice at once for one
 * context, and must not call ucft. */
typedef void (*ucft_user_op_fn)(const void *in, void *inout, size_t count,
                                ucft_datatype_t dtype, void *arg);

/* Registers `fn` (with `arg`) and returns its handle in *op, for ucft_reduce
 * and ucft_allreduce of this context. The handle is local: each rank
 * creates its own and passes it to the same calls as the other ranks pass
 * theirs. UCFT_ERR_NO_RESOURCE when 64 operations are registered. */
UCFT_API ucft_status_t ucft_op_create(ucft_context_h ctx, ucft_user_op_fn fn,
                                      void *arg, ucft_op_t *op);
/* Unregisters a user-defined operation; later calls with it fail with
 * UCFT_ERR_INVALID_PARAM. Free it only once no collective that uses it is
 * running at this rank (a corrected allreduce may still combine values
 * for a failed root's successor after its request completed: free it
 * after the next collective of the communicator, or at finalize). */
UCFT_API ucft_status_t ucft_op_free(ucft_context_h ctx, ucft_op_t op);

/* ---- Placement ------------------------------------------------------------
 * Which rank holds which position in the trees and rings of a
 * communicator's collectives, computed once at ucft_init by every rank
 * alike from where the ranks run (UCFT_PLACEMENT: interleave, the default,
 * spreads consecutive positions over different nodes so that a whole-node
 * failure stays correctable; locality keeps neighbours on one node;
 * identity is position = rank). */

/* Where a rank runs, as found at ucft_init: its node (the launcher's
 * PMIX_NODEID, or its hostname numbered in rank order when the launcher
 * gives no node ids; 0 for a singleton) and the package, NUMA node and
 * core of its binding (hwloc logical indexes from PMIX_LOCALITY_STRING; -1
 * when the rank is unbound or bound to several of them). */
typedef struct ucft_locus {
    int node;
    int package;
    int numa;
    int core;
} ucft_locus_t;

/* The placement of a communicator. Arrays of `size` entries owned by the
 * context, valid until ucft_finalize(), the same at every rank. A
 * collective rooted at rank r gives rank x the virtual rank
 * (pos_of[x] - pos_of[r]) mod size (the root is virtual rank 0). */
typedef struct ucft_placement_attr {
    const char *policy;       /* "interleave", "locality" or "identity" */
    int size;                 /* ranks in the communicator */
    int nnodes;               /* distinct nodes among loci */
    const ucft_locus_t *loci; /* loci[rank] */
    const int *rank_at;       /* rank_at[pos]: the rank at position pos */
    const int *pos_of;        /* pos_of[rank]: the position of rank */
} ucft_placement_attr_t;

/* Fills *attr (for tools such as `ucft-topo`). Any thread that may use
 * the communicator. */
UCFT_API ucft_status_t ucft_comm_query_placement(ucft_comm_h comm,
                                                 ucft_placement_attr_t *attr);

/* Failures each collective of `comm` tolerates (f >= 1). Collective: every
 * rank must set the same value before its next collective. */
UCFT_API ucft_status_t ucft_comm_set_f(ucft_comm_h comm, int f);
UCFT_API int ucft_comm_get_f(ucft_comm_h comm);

/* `count` elements of `dtype` from `root` to every rank (in place). */
UCFT_API ucft_status_t ucft_ibcast(ucft_comm_h comm, void *buf, size_t count,
                                   ucft_datatype_t dtype, int root,
                                   ucft_request_h *req);
/* recvbuf (significant at root only) = op over every rank's sendbuf. */
UCFT_API ucft_status_t ucft_ireduce(ucft_comm_h comm, const void *sendbuf,
                                    void *recvbuf, size_t count,
                                    ucft_datatype_t dtype, ucft_op_t op,
                                    int root, ucft_request_h *req);
/* recvbuf at every rank = op over every rank's sendbuf. */
UCFT_API ucft_status_t ucft_iallreduce(ucft_comm_h comm, const void *sendbuf,
                                       void *recvbuf, size_t count,
                                       ucft_datatype_t dtype, ucft_op_t op,
                                       ucft_request_h *req);
UCFT_API ucft_status_t ucft_ibarrier(ucft_comm_h comm, ucft_request_h *req);

UCFT_API ucft_status_t ucft_bcast(ucft_comm_h comm, void *buf, size_t count,
                                  ucft_datatype_t dtype, int root);
UCFT_API ucft_status_t ucft_reduce(ucft_comm_h comm, const void *sendbuf,
                                   void *recvbuf, size_t count,
                                   ucft_datatype_t dtype, ucft_op_t op,
                                   int root);
UCFT_API ucft_status_t ucft_allreduce(ucft_comm_h comm, const void *sendbuf,
                                      void *recvbuf, size_t count,
                                      ucft_datatype_t dtype, ucft_op_t op);
UCFT_API ucft_status_t ucft_barrier(ucft_comm_h comm);

/* Failure knowledge. ucft_failed_ranks copies up to `max` job ranks known
 * to have failed, in the order they were learnt, into `ranks` and sets
 * *count to the total known. */
UCFT_API ucft_status_t ucft_failed_ranks(ucft_context_h ctx, int *ranks,
                                         size_t max, size_t *count);

/* Acknowledges every failure of a member of `comm` known locally now:
 * ANY_SOURCE receives stop reporting UCFT_ERR_PROC_FAILED_PENDING for them.
 * Local; as MPI_Comm_failure_ack. */
UCFT_API ucft_status_t ucft_comm_failure_ack(ucft_comm_h comm);

/* Copies up to `max` acknowledged failed ranks (comm ranks, in the order
 * they were learnt) into `ranks` and sets *count to how many were
 * acknowledged by the last ucft_comm_failure_ack. Repeated calls without an
 * ack in between return the same set. As MPI_Comm_failure_get_acked. */
UCFT_API ucft_status_t ucft_comm_failure_get_acked(ucft_comm_h comm, int *ranks,
                                                   size_t max, size_t *count);

/* Replaces the failure callback (NULL removes it). */
UCFT_API ucft_status_t ucft_set_failure_cb(ucft_context_h ctx,
                                           ucft_failure_cb_t cb, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* UCFT_H */
