/*
 * ucft.h - the public API of ucft, a UCX-native fault-tolerant transport
 * runtime. This header is the contract: what each call does, who owns what,
 * which thread may call, when callbacks run and what an error leaves
 * behind. docs/api.md is the tour.
 *
 * Objects:
 *   ucft_context_h  one per participating process and job (handle; long-lived)
 *   ucft_comm_h     a communicator: a group of ranks with its own tag space
 *   ucft_request_h  one non-blocking operation (request; completes once)
 *
 * Rules R1-R12, numbered so that other documents can cite them; docs/api.md
 * has the same list, and the comment of each function names the rules it
 * relies on.
 *
 * R1. Threads. A context, and everything obtained from it (its communicators,
 *     requests and user-defined operations), is used by one thread at a time:
 *     ucft takes no lock on the caller's path, so an application that calls
 *     into one context from several threads serialises those calls itself. Two
 *     contexts share nothing and may be driven by two threads at once.
 *     ucft_status_string and ucft_status_name may be called from any thread at
 *     any time.
 *
 * R2. The library's thread, and the caller's. ucft_init starts one thread of
 *     ucft's own, the heartbeat thread ("ucft-hb"), which exchanges heartbeats
 *     on a UCX worker of its own and never runs application code; ucft_finalize
 *     joins it. UCFT_DETECTOR_THREAD=n runs the failure detector inside the
 *     calls that progress the context instead (R7), without a thread;
 *     UCFT_DETECTOR=n, or a job of one rank, runs no detector. The libraries
 *     ucft uses may run threads of their own (the PMIx client's progress thread
 *     delivers the launcher's death events). ucft_init asks a short time slice
 *     (UCFT_SLICE, default 100 us; Linux 6.12 and later, ignored elsewhere) for
 *     the thread that calls it, which threads created from that thread
 *     afterwards inherit; ucft_finalize gives the old slice back when it runs
 *     on that thread, and a failing ucft_init gives it back itself.
 *     UCFT_SLICE=0 leaves the thread alone. ucft installs no signal handler,
 *     registers no atexit handler and keeps no mutable global state.
 *
 * R3. Memory and file descriptors. The caller owns every buffer, array and
 *     structure it passes in: ucft reads or writes them only during the call
 *     and keeps no pointer to them, except the buffers of an operation that
 *     returns a request (R4) and the arg pointer registered with a callback,
 *     which it hands back to that callback untouched. What ucft returns stays
 *     ucft's: the strings and arrays of ucft_context_query and
 *     ucft_comm_query_placement belong to the context and stay valid until
 *     ucft_finalize; status strings are static; the context fd
 *     (ucft_context_get_fd) belongs to the context, and the caller may wait on
 *     it (poll, select, epoll) until ucft_finalize but never reads, writes or
 *     closes it. Every other fd that ucft opens is its own and is closed by
 *     ucft_finalize (or by a failing ucft_init).
 *
 * R4. Buffers of an operation. A call that returns a request borrows its
 *     buffers until the request is complete. A point-to-point send may read its
 *     buffer, and a receive may write its buffer, at any time until then: the
 *     caller neither changes the send buffer nor touches the receive buffer
 *     before ucft_test or ucft_wait reports the request complete (a send that
 *     returns a NULL request is done with its buffer already). A receive that
 *     ends with an error may have written part of its buffer, never beyond its
 *     length. Collectives copy their input when they start: the send buffer
 *     (and the root's buffer of a broadcast) may be reused as soon as the
 *     starting call returns, and may be the receive buffer as well; the output
 *     (the receive buffer, a non-root's broadcast buffer) is written once, when
 *     the operation completes, and only if it succeeds. Large blocking calls
 *     are the exception: a blocking broadcast, allreduce or allgather of at
 *     least UCFT_COLL_DIRECT_MIN bytes (64 KiB by default; 0: never) whose
 *     algorithm allows it (the baselines binomial, scatter-ring, ring, recdbl,
 *     recexch) works in the caller's buffers, with no copy of them: it writes
 *     its output in place while it runs, so a call that fails may have
 *     written part of its output buffer (never beyond its length), and a
 *     broadcast root's buffer may be rewritten with the bytes it holds. The
 *     input of an allreduce or allgather is read only (unless it is the
 *     output), and on success the outcome is the same. A request released by
 *     ucft_request_free still runs, and its buffers stay borrowed until it
 *     completes, which the caller can no longer see: they must stay valid until
 *     ucft_finalize returns. The blocking forms borrow nothing once they
 *     return.
 *
 * R5. Requests. Requests are allocated by the library, from a pool of the
 *     context (no allocation once the pool is warm). A request completes
 *     exactly once. A NULL request is a complete one, with status UCFT_OK: a
 *     send that completes in place (a short message) returns a NULL request.
 *     ucft_test, ucft_wait and ucft_waitall hand a complete request back: they
 *     return its final status, write its completion information, release it and
 *     set the caller's handle to NULL. ucft_request_free releases a request
 *     whose outcome the caller does not want; the operation still runs to
 *     completion (R4). A released handle is not used again: a copy of it is
 *     refused with UCFT_ERR_INVALID_PARAM and a log line as long as the pool
 *     has not handed the request out again, after which the copy names the new
 *     request, which no check can tell. One status is not a completion: an
 *     unmatched UCFT_ANY_SOURCE receive reports UCFT_ERR_PROC_FAILED_PENDING
 *     and stays pending (R10).
 *
 * R6. Progress and completion. There are no completion callbacks: completion is
 *     seen only through ucft_test, ucft_wait and ucft_waitall. Operations move
 *     only while the thread that drives the context is inside a ucft call on it
 *     (ucft_context_progress, a test, a wait or a blocking call; the weak
 *     progress rule of MPI): a rank that computes for long without calling ucft
 *     delays the peers that wait for it. The heartbeat thread keeps failure
 *     detection going meanwhile, not the application's operations. A request
 *     may already be complete when the call that started it returns (a send
 *     completed in place, a receive whose message had arrived, a collective of
 *     one rank). A call that fails to start an operation creates no request,
 *     and nothing of that operation completes later.
 *
 * R7. Callbacks. The failure callback (ucft_params_t,
 *     ucft_context_set_failure_cb) and user-defined reduction functions
 *     (ucft_op_create) run on the thread that drives the context, and only
 *     inside the calls that progress it: ucft_context_progress, ucft_test,
 *     ucft_wait, ucft_waitall, ucft_iprobe, ucft_probe, the blocking calls,
 *     ucft_comm_failure_ack, the calls that start a collective (they may
 *     progress the context first, and may wait: R12) and ucft_finalize. Never
 *     inside the call that registers them, never inside any other call, never
 *     on another thread, never two at once for one context. A failure callback
 *     calls only what neither progresses the context nor starts an operation:
 *     the queries (ucft_context_query, ucft_comm_world, ucft_comm_rank,
 *     ucft_comm_size, ucft_comm_get_f, ucft_comm_query_placement,
 *     ucft_context_get_failed_ranks, ucft_comm_failure_get_acked, the status
 *     strings) and ucft_context_set_failure_cb. A user-defined reduction calls
 *     no ucft function.
 *
 * R8. Errors and outputs. A call that can fail returns a ucft_status_t: UCFT_OK
 *     (0) on success, UCFT_INPROGRESS (positive) where its comment says so, a
 *     negative error otherwise, grouped by what breaks (UCFT_FOREACH_STATUS).
 *     Outputs (what pointer arguments point to, and handles) are written only
 *     when the call returns UCFT_OK; a call that fails leaves them as they
 *     were, unless its comment says otherwise: ucft_test, ucft_wait and
 *     ucft_waitall return the status of the operation and hand back a complete
 *     request whatever that status (R5), and a receive or a large blocking
 *     collective that fails may have written its buffer (R4). An invalid
 *     argument gives UCFT_ERR_INVALID_PARAM and a log line naming it
 *     (UCFT_LOG_LEVEL; on standard error when no context is known); the calls
 *     that return an int or a handle return -1 or NULL for a NULL argument
 *     instead.
 *
 * R9. Lifetimes. A context lives from a successful ucft_init to ucft_finalize.
 *     Its communicators (ucft_comm_world; the caller creates and destroys
 *     none), the strings, arrays and fd it returns (R3) and its user-defined
 *     operations live as long as it. A request lives from the call that returns
 *     it until ucft_test, ucft_wait, ucft_waitall or ucft_request_free releases
 *     it, or until ucft_finalize, which cancels and releases every outstanding
 *     request. After ucft_finalize every handle of the context is invalid:
 *     using one is undefined, not an error. Under a PMIx server a process holds
 *     one context at a time (a second ucft_init fails with
 *     UCFT_ERR_INVALID_PARAM; a new one after ucft_finalize works); processes
 *     started without a server (singletons) may hold several. A process that
 *     exits without ucft_finalize is a failed rank to the others (R10).
 *
 * R10. Failures. A rank fails when the job declares it failed: the heartbeat
 *     detector does so after a silence longer than UCFT_HB_TIMEOUT (every rank
 *     is watched by its ring successor; a rank other ranks can still reach,
 *     UCFT_HB_PROBES, is not declared), and at once on evidence (a launcher's
 *     death event, a UCX endpoint error, the end of a process of this node as
 *     the kernel reports it). The failed set of a context only grows: a failed
 *     rank is never readmitted (R11). A failure takes effect in a context from
 *     a call that progresses it (R7). From then on, an operation that needs a
 *     failed rank fails to start, or completes, with UCFT_ERR_PROC_FAILED (a
 *     receive whose message had already matched completes with its data); an
 *     unmatched UCFT_ANY_SOURCE receive reports UCFT_ERR_PROC_FAILED_PENDING to
 *     ucft_test and ucft_wait and stays pending while its communicator has a
 *     failure not acknowledged by ucft_comm_failure_ack; messages of a failed
 *     rank that arrive afterwards are dropped (those already here are
 *     delivered); operations between live ranks never see a failure error. The
 *     failure callback runs once per failed rank, after the state it reports is
 *     consistent. Corrected collectives complete at every survivor with up to f
 *     failures (ucft_comm_set_f) and end with UCFT_ERR_PROC_FAILED beyond that,
 *     never hanging. As in the MPI chapter, the outcome of a collective is not
 *     uniform: one that fails at some ranks may have completed at others (they
 *     had all they needed before the failure); only the agreement and the
 *     communicator makers end alike everywhere. A recovery that repeats work
 *     agrees on where to resume (examples/shrink).
 *
 * R11. Fail-stop: where ucft ends the process. ucft calls abort() in two cases
 *     only, each after an error line in the log. (a) Fencing: this rank learns
 *     that the job has declared it failed (its heartbeats stopped for longer
 *     than UCFT_HB_TIMEOUT: it was stopped, or starved of CPU), and going on
 *     would contradict every survivor's view. (b) The shared-memory FIFO
 *     self-probe (UCFT_SHM_PROBE, run after a failure) finds that this rank can
 *     no longer receive from the ranks of its node (a process killed inside a
 *     send to it blocked the FIFO; docs/transport.md) and cannot mend it
 *     (UCFT_SHM_MEND: needs UCX 1.13's FIFO layout and no stopped process that
 *     maps the FIFO). Either may happen at any
 *     time from ucft_init until ucft_finalize returns: on the heartbeat thread,
 *     or inside a call that progresses the context. The survivors then see one
 *     more failure and handle it as any other (R10). UCFT_SHM_PROBE=0 turns (b)
 *     off; (a) comes with the detector (UCFT_DETECTOR=n: neither heartbeats nor
 *     fencing).
 *
 * R12. Collectives. Every rank of a communicator calls the same collectives in
 *     the same order with matching arguments (count, datatype, operation,
 *     root); a rank that receives a payload of another size ends its call with
 *     UCFT_ERR_TRUNCATED. Collectives may synchronise, as in MPI: a program
 *     must not rely on one returning before the other ranks have called it. In
 *     particular, after every UCFT_REDUCE_WINDOW (64) reduces in a row on a
 *     communicator the runtime posts a barrier, and the reduce (blocking or
 *     not) that ends the next window waits for that barrier inside its starting
 *     call, so that loops of reduces cannot run ahead of the root without
 *     bound. The variables that choose how collectives run (UCFT_F,
 *     UCFT_PLACEMENT, UCFT_<OP>_ALG, UCFT_REDUCE_WINDOW, UCFT_CHECKSUM,
 *     UCFT_TREE_REPAIR) must be the same at every rank: ucft_init checks
 *     them across the job and fails at every rank alike with
 *     UCFT_ERR_INVALID_PARAM, naming the variable, where one differs.
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
 * visibility the library is built with). UCFT_DEPRECATED(msg) marks a name
 * kept for compatibility ("Deprecated names" below): a call to it compiles
 * with a warning that says what to use instead. */
#if defined(__GNUC__)
#define UCFT_API             __attribute__((visibility("default")))
#define UCFT_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define UCFT_API
#define UCFT_DEPRECATED(msg)
#endif

#define UCFT_VERSION_MAJOR 0
#define UCFT_VERSION_MINOR 1
#define UCFT_VERSION_PATCH 0

/*
 * Status codes (R8): one table, from which both the enum and
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
 * values give "unknown status"). Needs no context: any thread, at any
 * time, also before ucft_init. Rules: R1, R3. */
UCFT_API const char *ucft_status_string(ucft_status_t status);

/* Returns the static enum name without prefix, e.g. "ERR_PROC_FAILED"
 * ("UNKNOWN" for an unknown value). Any thread, at any time. Rules: R1,
 * R3. */
UCFT_API const char *ucft_status_name(ucft_status_t status);

typedef struct ucft_context *ucft_context_h;
typedef struct ucft_comm *ucft_comm_h;
typedef struct ucft_request *ucft_request_h;

/* Wildcards for receive and probe. */
#define UCFT_ANY_SOURCE (-1)
#define UCFT_ANY_TAG    (-1)
/* User tags are 0 .. UCFT_TAG_UB. */
#define UCFT_TAG_UB ((1 << 24) - 1)

/* The failure callback: called once for every rank newly known to have
 * failed, in the order the failures were learnt, with `reason`
 * UCFT_ERR_PROC_FAILED and the `arg` registered with it. `rank` is a job
 * (world) rank. It runs on the thread that drives the context, inside a
 * call that progresses it, never inside ucft_init or
 * ucft_context_set_failure_cb, and calls only the queries listed in R7. Rules:
 * R7, R10. */
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
    ucft_failure_cb_t failure_cb; /* NULL: no callback */
    void *failure_cb_arg;         /* handed to failure_cb, never touched */
} ucft_params_t;

/* Creates a context: reads the UCFT_* configuration, connects to the PMIx
 * server (or runs as a singleton, rank 0 of 1, when none is reachable),
 * creates the UCX worker, exchanges worker addresses and wires up.
 * Collective over the job: it returns once every rank has joined, or with
 * an error after UCFT_INIT_TIMEOUT (60 s).
 *
 * `params` may be NULL; it is read during the call only. Side effects on
 * the process (R2): it starts the heartbeat thread (none with
 * UCFT_DETECTOR_THREAD=n, UCFT_DETECTOR=n or one rank); it asks a short
 * time slice for the calling thread (UCFT_SLICE, given back by
 * ucft_finalize on the same thread); from inside this call on, the process
 * may stop itself with abort() in the two cases of R11 (fencing, and the
 * shared-memory FIFO self-probe). The failure callback does not run
 * inside this call: failures learnt during start-up are reported from the
 * first call that progresses the context.
 *
 * Any thread; the context is then driven by one thread at a time (R1).
 * On UCFT_OK, *ctx_p holds the new context. On an error *ctx_p is not
 * written and nothing is left behind: no thread, no fd, the time slice
 * given back. Errors include UCFT_ERR_INVALID_PARAM (NULL ctx_p, a bad
 * UCFT_* value, a second context of this process under PMIx: R9),
 * UCFT_ERR_BOOTSTRAP, UCFT_ERR_TIMED_OUT, UCFT_ERR_PROC_FAILED (a rank
 * died before the address exchange completed), UCFT_ERR_TRANSPORT and
 * UCFT_ERR_NO_MEMORY. Rules: R1, R2, R3, R7, R8, R9, R11. */
UCFT_API ucft_status_t ucft_init(const ucft_params_t *params,
                                 ucft_context_h *ctx_p);

/* Ends a context: lets the collectives that completed early finish their
 * part, synchronises with the other live ranks (a corrected barrier, so
 * dead ranks do not stop it), stops the heartbeat detector, cancels the
 * outstanding receives, waits for the outstanding sends, flushes, fences
 * through PMIx and releases everything: every request, the heartbeat
 * thread (joined), the context fd (closed). Collective over the live
 * ranks. The waits for requests, the flush and the fence are bounded
 * (UCFT_FINALIZE_TIMEOUT, 30 s; the fence by UCFT_FINALIZE_FAILED_TIMEOUT,
 * 3 s, once failures are known). Gives the calling thread its old time
 * slice back when it is the thread that called ucft_init (R2).
 *
 * Called by the thread that drives the context, once; `ctx` may be NULL
 * (UCFT_OK, nothing done). The failure callback may still run during the
 * first, synchronising part (R7). The context is released whatever the
 * result: every handle of it is invalid afterwards, and the buffers of
 * released or outstanding requests are no longer borrowed (R4, R9). A
 * non-OK result reports that the final synchronisation failed
 * (UCFT_ERR_TIMED_OUT, UCFT_ERR_BOOTSTRAP); failures already known are
 * not an error. Rules: R1, R2, R4, R7, R9. */
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

/* Fills *attr (caller's memory). The strings inside belong to the context
 * and stay valid until ucft_finalize(). Does not progress the context.
 * On an error (NULL argument: UCFT_ERR_INVALID_PARAM) *attr is not
 * written. Rules: R1, R3, R8. */
UCFT_API ucft_status_t ucft_context_query(ucft_context_h ctx,
                                          ucft_context_attr_t *attr);

/* The world communicator (all ranks of the job; comm rank = job rank). It
 * belongs to the context, lives until ucft_finalize and is never
 * destroyed by the caller. NULL for a NULL ctx. Rules: R1, R9. */
UCFT_API ucft_comm_h ucft_comm_world(ucft_context_h ctx);
/* This rank's rank in `comm`, and the number of ranks of `comm` (failed
 * ones included); -1 for a NULL comm. Rules: R1, R8. */
UCFT_API int ucft_comm_rank(ucft_comm_h comm);
UCFT_API int ucft_comm_size(ucft_comm_h comm);

/* Runs one round of progress: transport, timers, failure handling and
 * callbacks (the failure callback, user-defined reductions: R7). Never
 * sleeps. Returns the number of events processed (0 = nothing to do, also
 * for a NULL ctx). The thread that drives the context calls it, or any
 * call that waits, often enough for operations to move (R6). Inside it a
 * fencing or FIFO self-probe abort may happen (R11). Rules: R1, R6, R7,
 * R10, R11. */
UCFT_API int ucft_context_progress(ucft_context_h ctx);

/* For an external event loop: *fd is a file descriptor (an epoll fd) that
 * becomes readable when ucft has work (a transport event or failure
 * news). It belongs to the context (R3): poll it, or add it to another
 * epoll set, until ucft_finalize; never read, write or close it. *fd is
 * written only on UCFT_OK. The loop is:
 *
 *     for (;;) {
 *         while (ucft_context_progress(ctx) > 0) {}
 *         if (ucft_context_arm(ctx, &ms) == UCFT_OK)
 *             poll the fd for at most ms milliseconds;
 *     }
 *
 * Rules: R1, R3, R6, R8, R9. */
UCFT_API ucft_status_t ucft_context_get_fd(ucft_context_h ctx, int *fd);

/* Prepares the context fd for a sleep. UCFT_OK: nothing is pending, the
 * caller may sleep on the fd for at most *timeout_ms milliseconds (never
 * -1: a bound, UCFT_POLL_TIMEOUT or the next timer; `timeout_ms` may be
 * NULL), then call ucft_context_progress(). UCFT_INPROGRESS: work is
 * pending (*timeout_ms not written): call ucft_context_progress() at once
 * instead of sleeping. Also sends what the collectives hold back (batched
 * broadcast copies), as any wait does. Runs no callback. Rules: R1, R6,
 * R8. */
UCFT_API ucft_status_t ucft_context_arm(ucft_context_h ctx, int *timeout_ms);

/* Completion information of a request. */
typedef struct ucft_info {
    ucft_status_t status; /* the final status of the operation */
    int source;           /* receive: the sender's rank in the comm */
    int tag;              /* receive: the message tag */
    size_t length;        /* receive: bytes delivered into the buffer */
} ucft_info_t;

/* ---- Point-to-point -------------------------------------------------------
 * Non-blocking send and receive. Messages between one pair of ranks arrive
 * in order. Sending to or receiving from a failed rank fails with
 * UCFT_ERR_PROC_FAILED: at once (no request), or later when the failure
 * is learnt while the operation is pending (R10). While the communicator
 * has a failure that the caller has not acknowledged
 * (ucft_comm_failure_ack), ucft_test/ucft_wait on an unmatched
 * ANY_SOURCE receive return UCFT_ERR_PROC_FAILED_PENDING and leave the
 * request pending (*req is kept: acknowledge, then wait again, or cancel
 * it). A message longer than the receive buffer completes the receive
 * with UCFT_ERR_TRUNCATED and writes nothing past the buffer. */

/* Sends `length` bytes of `buf` to rank `dest` of `comm` with tag `tag`
 * (0 .. UCFT_TAG_UB). On UCFT_OK *req is the request, or NULL when the
 * send completed in place: then `buf` may be reused at once; otherwise
 * `buf` is borrowed, unchanged by the caller, until ucft_test or
 * ucft_wait reports the request complete (R4). A send completes once its
 * data has left `buf` (large messages: once the receiver takes them),
 * or with UCFT_ERR_PROC_FAILED when `dest` fails; it cannot be cancelled.
 * Does not progress the context and runs no callback. On an error no
 * request exists and *req is not written: UCFT_ERR_INVALID_PARAM (NULL
 * comm or req, NULL buf with length > 0, dest or tag out of range, after
 * ucft_finalize began), UCFT_ERR_PROC_FAILED (dest known failed),
 * UCFT_ERR_NO_MEMORY, UCFT_ERR_TRANSPORT. Rules: R1, R4, R5, R6, R8,
 * R10. */
UCFT_API ucft_status_t ucft_isend(ucft_comm_h comm, const void *buf,
                                  size_t length, int dest, int tag,
                                  ucft_request_h *req);

/* Receives into `buf` (at most `length` bytes) a message from `source`
 * (or UCFT_ANY_SOURCE) with tag `tag` (or UCFT_ANY_TAG). On UCFT_OK *req
 * is the request (never NULL; it may be complete already: R6), and `buf`
 * is borrowed until ucft_test or ucft_wait reports it complete (R4): the
 * library writes it at any time until then, and the completion
 * information says who sent how much. A receive that ends with an error
 * may have written part of `buf`, never past `length`. Does not progress
 * the context and runs no callback. On an error no request exists and
 * *req is not written: UCFT_ERR_INVALID_PARAM (as ucft_isend, wildcards
 * allowed), UCFT_ERR_PROC_FAILED (source known failed), UCFT_ERR_NO_MEMORY,
 * UCFT_ERR_TRANSPORT. Rules: R1, R4, R5, R6, R8, R10. */
UCFT_API ucft_status_t ucft_irecv(ucft_comm_h comm, void *buf, size_t length,
                                  int source, int tag, ucft_request_h *req);

/* Tests a request without waiting (when it is not complete yet, it
 * progresses the context once: R7). Complete: *done = 1, *info (if `info`
 * is not NULL) gets the completion information, the request is released
 * and *req set to NULL (R5); the return value is the operation's final
 * status, an error included. Not
 * complete: *done = 0 and *req kept; returns UCFT_INPROGRESS, or
 * UCFT_ERR_PROC_FAILED_PENDING for an unmatched ANY_SOURCE receive while
 * a failure is unacknowledged (R10). A NULL *req is complete with
 * UCFT_OK (*info then has status UCFT_OK, source UCFT_ANY_SOURCE, tag
 * UCFT_ANY_TAG, length 0). UCFT_ERR_INVALID_PARAM (NULL req or done, a
 * released handle) writes nothing. Rules: R1, R4, R5, R7, R8, R10. */
UCFT_API ucft_status_t ucft_test(ucft_request_h *req, int *done,
                                 ucft_info_t *info);

/* Waits for a request (UCFT_WAIT: polling, yielding the core, then
 * sleeping on the context fd; no time limit), then behaves as ucft_test()
 * on a completed request: the final status is returned, *info written,
 * the request released and *req set to NULL. The one exception is
 * UCFT_ERR_PROC_FAILED_PENDING: the ANY_SOURCE receive stays pending and
 * *req is kept (R10). Callbacks run inside it (R7). Rules: R1, R4, R5,
 * R6, R7, R8, R10. */
UCFT_API ucft_status_t ucft_wait(ucft_request_h *req, ucft_info_t *info);

/* Waits for `count` requests in array order, each as ucft_wait(); `infos`
 * (NULL, or `count` entries) gets each one's completion information.
 * Returns UCFT_OK when all succeeded, else the first non-OK status in
 * array order. Every request is released and its handle set to NULL,
 * whatever its status, except an ANY_SOURCE receive that reports
 * UCFT_ERR_PROC_FAILED_PENDING: it stays pending in reqs[] (its infos[]
 * entry not written). Callbacks run inside it (R7). Rules: R1, R4, R5,
 * R7, R8, R10. */
UCFT_API ucft_status_t ucft_waitall(size_t count, ucft_request_h reqs[],
                                    ucft_info_t infos[]);

/* Asks for cancellation of a pending receive. The request still completes
 * (with UCFT_ERR_CANCELED, or normally if it had already matched) and must
 * be waited for or freed; its buffer stays borrowed until then (R4). A
 * pending send cannot be cancelled (UCFT_ERR_NOT_SUPPORTED, logged): it
 * completes once received, or fails with its peer. A collective is not
 * interrupted: UCFT_OK, and it completes as it would have. A NULL or
 * completed request: UCFT_OK, no effect; a released handle:
 * UCFT_ERR_INVALID_PARAM. Does not progress the context. Rules: R1, R4,
 * R5, R8. */
UCFT_API ucft_status_t ucft_cancel(ucft_request_h req);

/* Releases a request the caller will not test or wait for; on UCFT_OK
 * *req becomes NULL (a NULL *req: UCFT_OK, nothing done). The operation
 * runs on: its buffers stay borrowed until it completes, unseen, so they
 * must live until ucft_finalize returns (R4). UCFT_ERR_INVALID_PARAM (NULL
 * req, a released handle) writes nothing. Rules: R1, R4, R5, R8. */
UCFT_API ucft_status_t ucft_request_free(ucft_request_h *req);

/* Looks for a message that a receive from `source` with `tag` (wildcards
 * allowed) would match, without receiving it; progresses the context once
 * if none is there yet (R7). On UCFT_OK *flag is 1 (a match: *info, if
 * `info` is not NULL, gets its source, tag and length, and status
 * UCFT_OK, or UCFT_ERR_TRANSPORT for a message that names no rank of the
 * communicator) or 0 (none; *info not written). When no message matches
 * and `source` is a failed rank it returns UCFT_ERR_PROC_FAILED and sets
 * *flag to 0 (an exception to R8); other errors write nothing. Rules: R1,
 * R7, R8, R10. */
UCFT_API ucft_status_t ucft_iprobe(ucft_comm_h comm, int source, int tag,
                                   int *flag, ucft_info_t *info);

/* As ucft_iprobe, waiting (UCFT_WAIT) until a message matches (UCFT_OK,
 * *info written) or `source` is known failed with no message from it
 * pending (UCFT_ERR_PROC_FAILED, *info not written). A probe from
 * UCFT_ANY_SOURCE waits for a message, whoever fails. Callbacks run
 * inside it (R7). Rules: R1, R7, R8, R10. */
UCFT_API ucft_status_t ucft_probe(ucft_comm_h comm, int source, int tag,
                                  ucft_info_t *info);

/* Blocking send: ucft_isend, then ucft_wait. `buf` is the caller's again
 * when it returns. Errors are those of ucft_isend, or the send's final
 * status (UCFT_ERR_PROC_FAILED when `dest` fails meanwhile). Callbacks run
 * inside it (R7). Rules: R1, R4, R7, R8, R10. */
UCFT_API ucft_status_t ucft_send(ucft_comm_h comm, const void *buf,
                                 size_t length, int dest, int tag);

/* Blocking receive: ucft_irecv, then ucft_wait. Once the receive is posted
 * *info (if `info` is not NULL) gets its completion information whatever
 * its final status, which is returned (an exception to R8). `buf` is the
 * caller's again when it returns. From UCFT_ANY_SOURCE, while a failure is
 * unacknowledged (R10), the receive does not stay pending as a nonblocking
 * one would (UCFT_ERR_PROC_FAILED_PENDING is for nonblocking receives, as
 * in the MPI chapter): it is cancelled and returns UCFT_ERR_PROC_FAILED,
 * or the message that matched before the cancellation took effect.
 * Callbacks run inside it (R7). Rules: R1, R4, R7, R8, R10. */
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
 *
 * Every rank of the communicator must call the same collectives in the
 * same order with matching arguments (R12). A rank that receives a
 * payload of another size than its own (counts or datatypes differ
 * between ranks) does not use it: its call ends with UCFT_ERR_TRUNCATED
 * and a log line (docs/wire.md).
 *
 * Buffers (R4): the input is copied when the operation starts, so a send
 * buffer (and the root's broadcast buffer) is the caller's again when the
 * starting call returns, and a send buffer may also be the receive
 * buffer; the output is written once, at completion, and only when the
 * operation succeeds (except large blocking calls, R4: from
 * UCFT_COLL_DIRECT_MIN bytes on, a failed blocking broadcast, allreduce or
 * allgather on a baseline algorithm may have written part of its output).
 * The starting calls may progress the context, so callbacks may run inside them
 * (R7), and a reduce that ends a flow-control window waits inside its starting
 * call (R12). A starting call that fails creates no request and writes nothing,
 * e.g. UCFT_ERR_INVALID_PARAM (NULL comm or req, unknown datatype or operation,
 * root out of range, NULL buffer with count > 0, count too large, after
 * ucft_finalize began) or UCFT_ERR_NO_MEMORY. Failures of peers show in the
 * completion status (R10). */
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
 * vectors (whole elements, aligned for dtype). `in` and `inout` are the
 * library's scratch, valid during the call only. It runs inside ucft calls
 * that progress the context, on the thread that drives the context, never
 * twice at once for one context, and must not call ucft. Rules: R7. */
typedef void (*ucft_user_op_fn)(const void *in, void *inout, size_t count,
                                ucft_datatype_t dtype, void *arg);

/* Registers `fn` (with `arg`, handed to it untouched) and returns its
 * handle in *op, for ucft_reduce and ucft_allreduce of this context. The
 * handle is local: each rank creates its own and passes it to the same
 * calls as the other ranks pass theirs. `fn` does not run inside this
 * call. On an error *op is not written: UCFT_ERR_INVALID_PARAM (NULL
 * ctx, fn or op), UCFT_ERR_NO_RESOURCE when 64 operations are registered.
 * Rules: R1, R3, R7, R8. */
UCFT_API ucft_status_t ucft_op_create(ucft_context_h ctx, ucft_user_op_fn fn,
                                      void *arg, ucft_op_t *op);

/* Unregisters a user-defined operation; later calls with it fail with
 * UCFT_ERR_INVALID_PARAM. Free it only once no collective that uses it is
 * running at this rank (a corrected allreduce may still combine values
 * for a failed root's successor after its request completed: free it
 * after the next collective of the communicator, or at finalize); `fn`
 * and `arg` must stay usable until then. UCFT_ERR_INVALID_PARAM for a
 * NULL ctx or an op that is not registered. Rules: R1, R7, R9. */
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

/* Fills *attr (for tools such as `ucft-topo`); the arrays it points to
 * belong to the context (R3). Does not progress the context. On an error
 * (NULL comm or attr: UCFT_ERR_INVALID_PARAM) *attr is not written.
 * Rules: R1, R3, R8, R9. */
UCFT_API ucft_status_t ucft_comm_query_placement(ucft_comm_h comm,
                                                 ucft_placement_attr_t *attr);

/* Sets the failures each collective of `comm` tolerates (f = 1 .. 64;
 * default UCFT_F), for the collectives started afterwards. Local, no
 * message; but every rank must set the same value before its next
 * collective (R12). UCFT_ERR_INVALID_PARAM (NULL comm, f out of range)
 * changes nothing. Rules: R1, R8, R12. */
UCFT_API ucft_status_t ucft_comm_set_f(ucft_comm_h comm, int f);
/* The f of `comm`; -1 for a NULL comm. Rules: R1, R8. */
UCFT_API int ucft_comm_get_f(ucft_comm_h comm);

/* Non-blocking collectives: on UCFT_OK *req is the request (R5), complete
 * when ucft_test or ucft_wait says so; buffers and errors as above. */

/* `count` elements of `dtype` from `root` to every rank (in place): the
 * root's `buf` is read when the call starts, the others' written at
 * completion, on success only. Rules: R1, R4, R5, R6, R7, R8, R10, R12. */
UCFT_API ucft_status_t ucft_ibcast(ucft_comm_h comm, void *buf, size_t count,
                                   ucft_datatype_t dtype, int root,
                                   ucft_request_h *req);
/* recvbuf (significant at root only: elsewhere never touched, may be NULL)
 * = op over every rank's sendbuf. sendbuf is read when the call starts.
 * Rules: R1, R4, R5, R6, R7, R8, R10, R12. */
UCFT_API ucft_status_t ucft_ireduce(ucft_comm_h comm, const void *sendbuf,
                                    void *recvbuf, size_t count,
                                    ucft_datatype_t dtype, ucft_op_t op,
                                    int root, ucft_request_h *req);
/* recvbuf at every rank = op over every rank's sendbuf. sendbuf is read
 * when the call starts. Rules: R1, R4, R5, R6, R7, R8, R10, R12. */
UCFT_API ucft_status_t ucft_iallreduce(ucft_comm_h comm, const void *sendbuf,
                                       void *recvbuf, size_t count,
                                       ucft_datatype_t dtype, ucft_op_t op,
                                       ucft_request_h *req);
/* Completes at a rank once every live rank has started it. Rules: R1, R5,
 * R6, R7, R8, R10, R12. */
UCFT_API ucft_status_t ucft_ibarrier(ucft_comm_h comm, ucft_request_h *req);
/* Allgather: rank r's sendbuf (`count` elements of `dtype`) becomes block
 * r of recvbuf at every rank; recvbuf holds n = ucft_comm_size(comm)
 * blocks of `count` elements in rank order. `present` (NULL, or n bytes of
 * the caller's) receives present[r] = 1 when block r holds rank r's data
 * and 0 when it is absent (then block r is zero). With the corrected
 * algorithm (UCFT_ALLGATHER_ALG=corrected, the default) and at most f
 * failures (ucft_comm_set_f) every surviving rank completes with UCFT_OK
 * and the same blocks and presence bytes: every live rank's block is
 * present; a failed rank's block is its data in full or absent. With the
 * ring baseline any failure the operation depends on ends it with
 * UCFT_ERR_PROC_FAILED (every present[r] is 1 on success). With tree
 * repair (UCFT_TREE_REPAIR=rebalance, the default), once the survivors
 * have agreed on failed members (docs/trees.md) the operation runs over
 * the live members only: an agreed-failed member's block is absent, and
 * those failures no longer count against f. sendbuf is
 * read when the call starts; recvbuf and present are written at
 * completion, on success only. count 0: only the presence bytes. Rules:
 * R1, R4, R5, R6, R7, R8, R10, R12. */
UCFT_API ucft_status_t ucft_iallgather(ucft_comm_h comm, const void *sendbuf,
                                       void *recvbuf, size_t count,
                                       ucft_datatype_t dtype, uint8_t *present,
                                       ucft_request_h *req);
/* Reduce-scatter (block form): sendbuf holds n blocks of `count` elements
 * (n = ucft_comm_size(comm)); rank r's recvbuf (`count` elements) = op over
 * every rank's block r. With the corrected algorithm
 * (UCFT_REDUCE_SCATTER_ALG=corrected, the default) and at most f failures
 * every survivor completes with UCFT_OK, and every block is the reduction
 * over every live rank and one subset of the failed ranks, the same subset
 * for every block at every survivor (as ucft_allreduce). With the ring
 * baseline any failure the operation depends on ends it with
 * UCFT_ERR_PROC_FAILED. With tree repair (the default), once failed
 * members are agreed, the operation runs over the live members only: an
 * agreed-failed member's blocks are left out of every reduction (nobody
 * receives its own block r), and those failures no longer count against
 * f. sendbuf is read when the call starts; recvbuf is
 * written at completion, on success only. Rules: R1, R4, R5, R6, R7, R8,
 * R10, R12. */
UCFT_API ucft_status_t ucft_ireduce_scatter(ucft_comm_h comm,
                                            const void *sendbuf, void *recvbuf,
                                            size_t count, ucft_datatype_t dtype,
                                            ucft_op_t op, ucft_request_h *req);

/* Blocking forms: the non-blocking call, then ucft_wait. They return the
 * operation's final status; the output is written only when that is
 * UCFT_OK, and every buffer is the caller's again when they return. Rules:
 * R1, R4, R7, R8, R10, R12. */
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
UCFT_API ucft_status_t ucft_allgather(ucft_comm_h comm, const void *sendbuf,
                                      void *recvbuf, size_t count,
                                      ucft_datatype_t dtype, uint8_t *present);
UCFT_API ucft_status_t ucft_reduce_scatter(ucft_comm_h comm,
                                           const void *sendbuf, void *recvbuf,
                                           size_t count, ucft_datatype_t dtype,
                                           ucft_op_t op);

/* ---- Approximate allreduce ------------------------------------------------
 * The gossip family of Casas, Gansterer and Wimmer (docs/gossip.md): every
 * rank gets an estimate of the sum (or the mean) of every rank's float or
 * double vector, each element within a relative error eps of the exact
 * value with high probability (the default number of rounds was
 * calibrated on the simulator: docs/gossip.md), not the exact, bit-equal
 * result of ucft_allreduce. They are a separate entry point on purpose:
 * an exact request (ucft_allreduce, any UCFT_ALLREDUCE_ALG) is never
 * served by one of them, and these calls never return an exact-looking
 * value that is not within eps. What they offer over ucft_allreduce:
 * accuracy traded for rounds, and (pflc, pfcc, hpflc) results within eps
 * despite silent data corruption of messages, which no exact algorithm
 * survives. Crash faults: the push-flow algorithms (pf, pflc, pfcc,
 * hpflc) converge to the sum or mean over the survivors (a dead rank's
 * input is dropped entirely); push-sum ones (ps, hps, ardb) lose the mass
 * a dead rank held and may deliver a value outside eps; when the
 * survivors cannot converge together (a ring cut in two places) the call
 * ends with UCFT_ERR_PROC_FAILED, never hangs. Every rank must pass the
 * same parameters (alg, eps, tau, seed, topology, rounds, mean): they fix
 * the message schedule. */
typedef enum ucft_approx_topology {
    UCFT_APPROX_FULL = 0,  /* any rank may talk to any rank */
    UCFT_APPROX_RING,      /* rank +- 1 */
    UCFT_APPROX_HYPERCUBE, /* rank ^ 2^b */
} ucft_approx_topology_t;

/* Which fields of ucft_approx_params_t are set; the others take their
 * defaults (a zeroed struct with field_mask 0 = every default). */
enum {
    UCFT_APPROX_FIELD_ALG = 1u << 0,
    UCFT_APPROX_FIELD_EPS = 1u << 1,
    UCFT_APPROX_FIELD_TAU = 1u << 2,
    UCFT_APPROX_FIELD_SEED = 1u << 3,
    UCFT_APPROX_FIELD_TOPOLOGY = 1u << 4,
    UCFT_APPROX_FIELD_ROUNDS = 1u << 5,
    UCFT_APPROX_FIELD_MEAN = 1u << 6,
};

typedef struct ucft_approx_params {
    uint64_t field_mask;
    /* ps, pf, pflc, pfcc, hps, hpflc, ardb (`ucft-sim --list`, op
     * allreduce_approx); default "pflc". */
    const char *alg;
    double eps;      /* target relative accuracy in (0, 1); default 1e-8 */
    double tau;      /* checksum threshold (pflc, pfcc, hpflc) */
    uint64_t seed;   /* of the message schedule; default 0 */
    int topology;    /* ucft_approx_topology_t; default FULL (hps, hpflc,
                        ardb: FULL only) */
    unsigned rounds; /* default: from the size, eps and topology */
    int mean;        /* 1: the mean; default 0: the sum */
} ucft_approx_params_t;

/* recvbuf at every rank ~ the sum (mean) of every rank's sendbuf, `count`
 * elements of UCFT_FLOAT or UCFT_DOUBLE, as described above. params may be
 * NULL (every default). UCFT_ERR_INVALID_PARAM (and a log line naming
 * what) for another datatype, an unknown algorithm, eps outside (0, 1),
 * a negative tau, an unknown topology or one the algorithm does not run
 * on. Rules: R1, R4, R5, R6, R7, R8, R10, R12. */
UCFT_API ucft_status_t
ucft_iallreduce_approx(ucft_comm_h comm, const void *sendbuf, void *recvbuf,
                       size_t count, ucft_datatype_t dtype,
                       const ucft_approx_params_t *params, ucft_request_h *req);
/* The blocking form. */
UCFT_API ucft_status_t ucft_allreduce_approx(
    ucft_comm_h comm, const void *sendbuf, void *recvbuf, size_t count,
    ucft_datatype_t dtype, const ucft_approx_params_t *params);

/* ---- Failure knowledge (R10) --------------------------------------------- */

/* Copies up to `max` job ranks known to have failed, in the order they
 * were learnt, into `ranks` (caller's memory; may be NULL when max is 0)
 * and sets *count to the total known, which may exceed `max`. Known means
 * applied by a call that progressed the context; this call does not
 * progress it. On an error (NULL ctx or count, NULL ranks with max > 0:
 * UCFT_ERR_INVALID_PARAM) nothing is written. May be called from the
 * failure callback. Rules: R1, R3, R7, R8, R10. */
UCFT_API ucft_status_t ucft_context_get_failed_ranks(ucft_context_h ctx,
                                                     int *ranks, size_t max,
                                                     size_t *count);

/* Acknowledges every failure of a member of `comm` known locally now (it
 * progresses the context once first: R7): ANY_SOURCE receives stop
 * reporting UCFT_ERR_PROC_FAILED_PENDING for them. Local, no message; as
 * MPI_Comm_failure_ack. UCFT_ERR_INVALID_PARAM for a NULL comm. Rules:
 * R1, R7, R8, R10. */
UCFT_API ucft_status_t ucft_comm_failure_ack(ucft_comm_h comm);

/* Copies up to `max` acknowledged failed ranks (comm ranks, in the order
 * they were learnt) into `ranks` (caller's memory; may be NULL when max
 * is 0) and sets *count to how many were acknowledged by the last
 * ucft_comm_failure_ack. Repeated calls without an ack in between return
 * the same set. As MPI_Comm_failure_get_acked. Does not progress the
 * context. On an error (NULL comm or count, NULL ranks with max > 0:
 * UCFT_ERR_INVALID_PARAM) nothing is written. Rules: R1, R3, R8, R10. */
UCFT_API ucft_status_t ucft_comm_failure_get_acked(ucft_comm_h comm, int *ranks,
                                                   size_t max, size_t *count);

/* ---- communicators that outlive failures (docs/comms.md) ---------------- */

/* A split color that gives this rank no communicator. */
#define UCFT_UNDEFINED (-32766)

/* Agreement: every live rank of `comm` ends with the same *flag, the
 * bitwise AND of the flags of the ranks that contributed, and the same set
 * F of ranks that did not (they failed), which this rank then counts as
 * acknowledged. UCFT_ERR_PROC_FAILED, at every rank alike, when F holds a
 * rank that some contributor had not acknowledged (ucft_comm_failure_ack,
 * ucft_comm_ack_failed) before the call; *flag is the agreed value then
 * too. Any number of failures before or during the call while one rank
 * lives; works on a revoked communicator. Under UCFT_QUORUM=y also
 * UCFT_ERR_PROC_FAILED (and a warning, *flag not written) when the ranks
 * holding the decision are no majority of comm's members (more than half,
 * or half with its rank 0): at most one side of a partition agrees, and
 * so shrinks (R10). As MPIX_Comm_agree. The
 * non-blocking form writes *flag at completion (keep it valid until then).
 * UCFT_ERR_INVALID_PARAM: NULL comm, flag or req, a freed comm. Rules: R1,
 * R2, R8, R12. */
UCFT_API ucft_status_t ucft_comm_agree(ucft_comm_h comm, int *flag);
UCFT_API ucft_status_t ucft_comm_iagree(ucft_comm_h comm, int *flag,
                                        ucft_request_h *req);

/* Revokes `comm` at every live member: their pending and later operations
 * on it (point-to-point, collectives; not agree, shrink, free) end with
 * UCFT_ERR_REVOKED, also when this rank dies right after the call.
 * Communicators made from `comm` are not revoked. Not collective. As
 * MPIX_Comm_revoke. Rules: R1, R8. */
UCFT_API ucft_status_t ucft_comm_revoke(ucft_comm_h comm);
/* 1 when `comm` is revoked, 0 otherwise (also for NULL). Rules: R1, R8. */
UCFT_API int ucft_comm_is_revoked(ucft_comm_h comm);

/* Collective communicator makers on `comm` (every member calls, in the
 * same order as its other collectives). Uniform through failures: every
 * survivor gets a communicator of the same members with the same numbering,
 * or every survivor gets the same error. The new communicator has its own
 * context id, f (UCFT_F), algorithms (UCFT_<OP>_ALG) and placement
 * (UCFT_PLACEMENT over its members).
 * - dup: the same group (failed members stay in it, failed).
 * - split: the ranks of the same color >= 0, numbered by (key, rank in
 *   comm); UCFT_UNDEFINED gives *newcomm = NULL. A rank that failed
 *   before contributing is in no new communicator.
 * - shrink: the members that did not fail before contributing, in their
 *   old order: failures known before the call are gone from its f budget.
 *   Works on a revoked communicator. As MPIX_Comm_shrink.
 * UCFT_ERR_INVALID_PARAM: NULL comm or newcomm, a freed comm, a color
 * below 0 other than UCFT_UNDEFINED; UCFT_ERR_REVOKED (dup, split) on a
 * revoked comm; UCFT_ERR_NO_RESOURCE when no context id is free at every
 * rank (1,023 communicators at once, fewer by the ids of recently
 * freed ones, docs/comms.md). The non-blocking forms write *newcomm
 * at completion. Rules: R1, R2, R8, R12. */
UCFT_API ucft_status_t ucft_comm_dup(ucft_comm_h comm, ucft_comm_h *newcomm);
UCFT_API ucft_status_t ucft_comm_idup(ucft_comm_h comm, ucft_comm_h *newcomm,
                                      ucft_request_h *req);
UCFT_API ucft_status_t ucft_comm_split(ucft_comm_h comm, int color, int key,
                                       ucft_comm_h *newcomm);
UCFT_API ucft_status_t ucft_comm_isplit(ucft_comm_h comm, int color, int key,
                                        ucft_comm_h *newcomm,
                                        ucft_request_h *req);
/* The ranks[0..n) of `comm` (distinct), numbered in that order, minus
 * those that failed before contributing. Collective over all of `comm`
 * (as MPI_Comm_create, not MPI_Comm_create_group: every rank calls with
 * the same group; a rank outside it gets *newcomm = NULL). A group given
 * differently by some rank: UCFT_ERR_INVALID_PARAM at every rank alike.
 * UCFT_ERR_INVALID_PARAM also for n out of 1..size, NULL ranks, a rank out
 * of range or given twice. */
UCFT_API ucft_status_t ucft_comm_create_group(ucft_comm_h comm, int n,
                                              const int *ranks,
                                              ucft_comm_h *newcomm);
UCFT_API ucft_status_t ucft_comm_shrink(ucft_comm_h comm, ucft_comm_h *newcomm);
UCFT_API ucft_status_t ucft_comm_ishrink(ucft_comm_h comm, ucft_comm_h *newcomm,
                                         ucft_request_h *req);
/* Frees a communicator made by the calls above (*comm = NULL); not the
 * world. Local: its operations must have completed. Rules: R1, R8. */
UCFT_API ucft_status_t ucft_comm_free(ucft_comm_h *comm);

/* The failed members of `comm` known here now (comm ranks, in the order
 * learnt): up to `max` of them in ranks, their number in *count. As
 * MPI_Comm_get_failed. Rules: R1, R3, R8, R10. */
UCFT_API ucft_status_t ucft_comm_get_failed(ucft_comm_h comm, int *ranks,
                                            size_t max, size_t *count);
/* Acknowledges the first num_to_ack failed members in the order of
 * ucft_comm_get_failed; *num_acked = how many are acknowledged in all. As
 * MPI_Comm_ack_failed. Rules: R1, R8. */
UCFT_API ucft_status_t ucft_comm_ack_failed(ucft_comm_h comm, size_t num_to_ack,
                                            size_t *num_acked);

/* Replaces the failure callback and its `arg` (cb NULL removes it). The
 * new callback gets every failure not reported yet; it never runs inside
 * this call (R7). `arg` is handed to it untouched (R3). May be called
 * from the failure callback. UCFT_ERR_INVALID_PARAM for a NULL ctx.
 * Rules: R1, R3, R7, R8. */
UCFT_API ucft_status_t ucft_context_set_failure_cb(ucft_context_h ctx,
                                                   ucft_failure_cb_t cb,
                                                   void *arg);

/* ---- Deprecated names ---------------------------------------------------
 * The four functions renamed to ucft_<object>_<verb> keep their old names
 * for one release, so that programs built against them still link (each
 * is an exported function that calls its new name, with exactly its
 * contract and rules) and their sources still compile, with a warning
 * naming the new call. Define UCFT_NO_DEPRECATED before including this
 * header to hide them. docs/api.md lists them. */
#ifndef UCFT_NO_DEPRECATED
UCFT_API int ucft_progress(ucft_context_h ctx)
    UCFT_DEPRECATED("use ucft_context_progress");
UCFT_API ucft_status_t ucft_context_fd(ucft_context_h ctx, int *fd)
    UCFT_DEPRECATED("use ucft_context_get_fd");
UCFT_API ucft_status_t ucft_failed_ranks(ucft_context_h ctx, int *ranks,
                                         size_t max, size_t *count)
    UCFT_DEPRECATED("use ucft_context_get_failed_ranks");
UCFT_API ucft_status_t ucft_set_failure_cb(ucft_context_h ctx,
                                           ucft_failure_cb_t cb, void *arg)
    UCFT_DEPRECATED("use ucft_context_set_failure_cb");
#endif /* UCFT_NO_DEPRECATED */

#ifdef __cplusplus
}
#endif

#endif /* UCFT_H */
