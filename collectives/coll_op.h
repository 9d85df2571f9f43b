/*
 * The uniform interface of a collective algorithm, so that a driver (the
 * runtime, ucft-sim, the sim tests) can run any of them the same way.
 *
 * An algorithm is one table of coll_op_ops_t: a per-rank state of fixed
 * size that the driver allocates (for a million simulated ranks: one array),
 * then init (allocates scratch if any; no messages), start (posts the first
 * receives and sends), and completion through args->done_cb, called once
 * from a transport callback. test() reads the outcome at any time; cleanup()
 * cancels what is still pending. Algorithms talk to the network only
 * through transport.h, so they run unchanged on the UCP and sim backends.
 * Nothing is allocated per message on the failure-free path.
 *
 * Lifetime: init -> start -> (done_cb) -> cleanup. If start returns UCFT_OK
 * the rank completed at once and done_cb will not run; UCFT_INPROGRESS means
 * done_cb will run later; an error means nothing runs later. After cleanup
 * the transport must be progressed until the cancelled requests have
 * completed (their callbacks touch the state) before the state is freed or
 * reused: idle() says when (1: no transport request of the state is
 * pending); on sim, running the world until it is quiescent makes every
 * live rank's state idle. A state that is idle after cleanup may be passed
 * to init again (the runtime keeps a free list of them).
 *
 * Tags: class UCFT_TAG_CLASS_COLL, context args->ctx, the sender's job
 * rank, payload = ucft_tag_coll_payload(args->seq, kind) with a kind from
 * enum coll_kind. A new algorithm takes a new kind.
 *
 * Registering an algorithm: define its table in its own file and add it to
 * the list in coll_op.c.
 */
#ifndef UCFT_COLL_OP_H
#define UCFT_COLL_OP_H

#include "collectives/coll_wire.h"
#include "collectives/dtype.h"
#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

/* Message kinds (tag payload, low 8 bits). */
enum coll_kind {
    COLL_KIND_RING_EXCHANGE = 2,
    /* 4, 5: the binomial broadcast (bcast_binomial.c), data and error
     * (baseline.h: they differ in bit 0). */
    COLL_KIND_BCAST_BINOMIAL = 4,
    COLL_KIND_BCAST_BINOMIAL_ERR = 5,
    /* 8..15: agreement (agree.h). */
    COLL_KIND_AGREE_FIRST = 8,
    COLL_KIND_AGREE_LAST = 15,
    /* 16..23: corrected broadcast (tree and correction messages). */
    COLL_KIND_BCAST_CORRECTED_FIRST = 16,
    COLL_KIND_BCAST_CORRECTED_LAST = 23,
    /* 24..31: an agreement's confirmation under the majority gate (agree.h:
     * the agreement's kinds + 16). Numbered with the agreements. 32..47
     * are free. */
    COLL_KIND_AGREE_CONFIRM_FIRST = 24,
    COLL_KIND_AGREE_CONFIRM_LAST = 31,
    /* 48..95: corrected reduce / allreduce / barrier. */
    COLL_KIND_REDUCE_CORRECTED_FIRST = 48,
    COLL_KIND_REDUCE_CORRECTED_LAST = 95,
    /* 96..127: baselines (reduce, recursive doubling). Each baseline
     * takes an even data kind and the odd kind after it for "I failed"
     * messages (no payload), so that one receive (mask without kind bit
     * 0) takes either from a peer. */
    COLL_KIND_BASELINE_FIRST = 96,
    COLL_KIND_REDUCE_BINOMIAL = 96,
    COLL_KIND_REDUCE_BINOMIAL_ERR = 97,
    COLL_KIND_RECDBL = 98,
    COLL_KIND_RECDBL_ERR = 99,
    COLL_KIND_LINEAR = 100,
    COLL_KIND_LINEAR_ERR = 101,
    /* 102..109: the rings (ring_bw.c), lane l: data 102 + 2l, error
     * 103 + 2l. */
    COLL_KIND_RING_BW = 102,
    COLL_KIND_RING_BW_LAST = 109,
    /* 112..119: the gossip family (gossip.h): 112 flows and values, 113
     * PFCC's answers; 114..119 free for it. */
    COLL_KIND_GOSSIP_FIRST = 112,
    COLL_KIND_GOSSIP = 112,
    COLL_KIND_GOSSIP_REPLY = 113,
    COLL_KIND_GOSSIP_LAST = 119,
    /* 120..123: the binomial barrier (barrier_binomial.c): up, its error,
     * down, its error. */
    COLL_KIND_BARRIER_BINOMIAL = 120,
    COLL_KIND_BASELINE_LAST = 127,
    /* 128..255: messages of communicator states (coll_comm_ops_t), which
     * outlive instances: their tag's sequence field is theirs, not an
     * instance's, so a driver that drops the late messages of finished
     * instances must leave these kinds alone (kind bit 7 set). */
    COLL_KIND_COMM_FIRST = 128,
    /* 128..134: the copy channel of bcast corrected-batched, one kind per
     * link (copy_chan.h). */
    COLL_KIND_BCAST_BATCH = 128,
    COLL_KIND_BCAST_BATCH_LAST = 134,
};

/* 1 for the kinds of agreements (their sequence numbers are their own). */
static inline int coll_kind_is_agree(unsigned kind)
{
    return (kind >= COLL_KIND_AGREE_FIRST && kind <= COLL_KIND_AGREE_LAST) ||
           (kind >= COLL_KIND_AGREE_CONFIRM_FIRST &&
            kind <= COLL_KIND_AGREE_CONFIRM_LAST);
}

/* Placement (placement/placement.h): which rank holds which tree
 * position. Position 0 is the start of the order; an operation rooted at
 * `root` rotates the order so that the root is virtual rank 0:
 * vrank(rank) = (pos[rank] - pos[root]) mod n. NULL map = identity
 * (pos[rank] = rank). Every algorithm, baseline included, maps ranks only
 * through coll_vrank_of / coll_rank_of, so a policy applies everywhere. */
typedef struct coll_map {
    int n;
    const int *rank; /* rank[pos], n entries */
    const int *pos;  /* pos[rank], n entries */
} coll_map_t;

/* How a driver sets up a communicator state (coll_comm_ops_t.init). */
typedef struct coll_comm_params {
    unsigned ctx;          /* communicator context id */
    const coll_map_t *map; /* its placement (NULL: identity) */
    /* 1: the driver calls flush whenever its rank waits (the runtime:
     * comm/coll.h, cm_coll_flush); 0: never (then nothing may be held
     * back). */
    int flushes;
    /* Messages the state may merge into one before it sends (the copy
     * channel: copies per message), at least 1 (1: none merged). */
    unsigned batch;
} coll_comm_params_t;

/* Optional per-communicator state of an algorithm: one per rank and
 * communicator, made by the driver before the first instance of the
 * algorithm and kept until the driver ends (finalize), handed to every
 * instance in coll_args_t.comm_state. It may keep receives posted and
 * hold messages back between instances (corrected-batched's copy channel,
 * copy_chan.h). */
typedef struct coll_comm_ops {
    size_t size;
    /* Sets the state up for rank tp->rank. UCFT_OK or an error (then only
     * destroy may follow). */
    ucft_status_t (*init)(void *cs, tp_t *tp, const coll_comm_params_t *p);
    /* The rank waits: send what is held. */
    void (*flush)(void *cs);
    /* The driver learnt that `rank` failed (as ops->on_failure). */
    void (*on_failure)(void *cs, int rank);
    /* Sends what is held and cancels what is posted; no instance runs. */
    void (*cleanup)(void *cs);
    /* 1 when none of its transport requests is pending. */
    int (*idle)(const void *cs);
    /* Frees it; no callback can run any more. */
    void (*destroy)(void *cs);
    /* The message kinds it receives itself: a driver that drops late
     * messages of finished instances leaves these alone while the state
     * runs. */
    unsigned kind_first, kind_last;
} coll_comm_ops_t;

/* Called from a transport callback when `rank` has finished its part. */
typedef void (*coll_done_cb_t)(void *arg, int rank, ucft_status_t status);

/* The majority gate (collectives/coll_gate.c; docs/detector.md,
 * "No split brain"): whether a set of ranks that hold a result covers the
 * quorum, i.e. every side of a partition that may go on holds one of them.
 * `held` has one byte per rank of the instance's transport (1: holds it).
 * The driver answers for the membership it fences by (the runtime:
 * UCFT_QUORUM; the simulator: the world). */
typedef struct coll_gate {
    int (*covers)(void *arg, const uint8_t *held, int n);
    void *arg;
} coll_gate_t;

/* Arguments shared by all ranks of one instance (the driver keeps them
 * alive until every rank's cleanup). */
typedef struct coll_args {
    int root;     /* for rooted operations */
    size_t len;   /* payload bytes */
    unsigned ctx; /* context id (communicator), 0 = world */
    uint32_t seq; /* instance number on this communicator */
    int f;        /* failures tolerated (corrected algorithms) */
    /* Reductions: `count` elements of `dtype` combined with `redop` (enums
     * of collectives/dtype.h); len = count * element size. */
    size_t count;
    int dtype;
    int redop;
    const coll_map_t *map; /* NULL: identity placement */
    /* Reductions: a user-defined operation that replaces redop (NULL:
     * redop). coll_combine applies whichever it is. */
    const coll_user_op_t *user_op;
    /* 0: every copy is sent buffered (transport T7). Otherwise, for
     * payloads of at least rndv_min bytes, an algorithm may send the copies
     * whose receiver may already hold the payload unbuffered (UCX's
     * rendezvous: the payload moves only when the receive takes it) and
     * receive such a copy into an empty buffer once it holds the payload
     * (the truncated receive completes the send without moving it). Every
     * such copy must then be received: by the algorithm, or as a late
     * message by the runtime's sweeper. */
    size_t rndv_min;
    /* The communicator's states of this algorithm (coll_op_ops_t.comm):
     * rank r's is at comm_state + r * comm_stride (coll_comm_state). The
     * runtime has one rank, stride 0; the simulator an array. NULL: none
     * was made (an algorithm that has comm ops must then run without). */
    void *comm_state;
    size_t comm_stride;
    coll_done_cb_t done_cb; /* may be NULL */
    void *done_arg;
    /* May be NULL. Called (with done_arg, status UCFT_OK) at most once, by
     * an algorithm whose rank's output is final before the rank has
     * finished its part (a broadcast rank that has the data but still has
     * corrections to send and to hear): the driver may hand the output
     * over then and let the rank run on until done_cb. May be called from
     * start() and from on_failure(), as well as from callbacks. */
    coll_done_cb_t ready_cb;
    /* May be NULL. Where an algorithm that supports it keeps saying
     * whether nothing its rank now waits for needs work that `mate` (the
     * one other rank bound to this rank's core, placement_core_mate) has
     * yet to do, directly or through other ranks (1), or it may (0, also
     * the value before the first write). While 1, the runtime's wait
     * polls instead of yielding the core to `mate` (runtime/progress.c). A
     * hint: it changes when ranks run, never what they compute; an
     * algorithm gives it only where that was measured to pay (with 1 where
     * the mate could help, ranks would hold the core it needs for up to
     * UCFT_MATE_SPIN_TIME per wait). */
    uint8_t *remote_wait;
    int mate; /* comm rank; read only when remote_wait is not NULL */
    /* The approximate allreduce family only (collectives/gossip.h): eps,
     * tau, seed, topology, rounds. NULL: the defaults. */
    const struct coll_gossip_params *gossip;
    /* The algorithms with takes_tree only (the binomial broadcast, reduce
     * and barrier; collectives/tree_ft.h): their tree around failed ranks,
     * in the transport's ranks. NULL: the binomial tree of
     * all tp->size ranks through `map`. */
    const struct coll_tree *tree;
    /* The algorithms with takes_frame only (the corrected reduce,
     * allreduce and barrier): NULL, or the communicator's original
     * placement order with holes (UCFT_TREE_REPAIR=reroute|lookup,
     * comm/repair_tree.c): frame->n original positions, rank[pos] the
     * transport rank holding position pos or -1 (an excluded member),
     * pos[rank] the original position of each of the tp->size ranks. The
     * algorithm then builds its structures over the original positions
     * and routes around the holes (reduce_corrected.c). */
    const coll_map_t *frame;
    /* The corrected allreduce family: NULL, or a rank hands its result
     * over only once the gate's allreduce shows that the ranks holding
     * that same result cover the quorum (else it ends with
     * UCFT_ERR_PROC_FAILED). The agreement: non-NULL runs its
     * confirmation (agree_gate.c; it does not call `covers`: its rule is
     * a majority of its own ranks). */
    const coll_gate_t *gate;
    /* NULL, or where the per-rank buffer's bytes from tail_off on live: a
     * driver that lends the caller's own buffer as the first tail_off bytes
     * (coll_op_ops_t.direct) keeps the rest (receive slots, presence
     * bytes) apart. Algorithms reach those bytes through coll_buf_at. */
    unsigned char *tail;
    size_t tail_off;
    /* NULL, or the caller's input (the rank's own bytes: the vector, an
     * allgather's own block, a broadcast root's data), unchanged until the
     * rank's done_cb (a blocking call): an algorithm that keeps a copy of
     * its input for a fallback it can only start before done_cb may read
     * it there instead of copying it (allreduce_ring_corrected.c). */
    const void *input;
} coll_args_t;

typedef struct coll_op_ops {
    const char *op;    /* "bcast", "ring", ... */
    const char *alg;   /* "binomial", "exchange", ... */
    const char *doc;   /* one line */
    size_t state_size; /* per rank */
    /* The per-rank buffer holds buf_mult * args->len bytes. */
    unsigned buf_mult;
    ucft_status_t (*init)(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf);
    ucft_status_t (*start)(void *state);
    /* UCFT_INPROGRESS until done, then the rank's final status. */
    ucft_status_t (*test)(const void *state);
    void (*cleanup)(void *state);
    /* Optional: frees what cleanup had to keep because a transport request
     * still used it. The driver calls it once no callback can run any
     * more (transport gone), just before freeing the state. */
    void (*destroy)(void *state);
    /* Optional (NULL: the algorithm ignores failures): the owner learnt
     * that `rank` failed (sim: the transport's failure notification; the
     * runtime: its membership). Called from progress, never inside another
     * of these calls. */
    void (*on_failure)(void *state, int rank);
    /* 1 when none of the state's transport requests is pending (every
     * callback it expects has run), 0 otherwise. Valid at any time after
     * init; after cleanup, 1 means the state may be freed or reused at
     * once. Every registered algorithm has it (a driver treats NULL as
     * "unknown": the runtime then keeps the state for a grace period). */
    int (*idle)(const void *state);
    /* 1: every rank that completes must hold the same output (allreduce);
     * the driver compares them. */
    int consistent;
    /* 1: the other ranks may still need a rank whose operation completed:
     * corrected allreduce and barrier, where a candidate root that dies
     * during its broadcast leaves some ranks with the result and sends
     * the others to the next attempt, which the first ones join with the
     * value they delivered. A driver keeps such a state running after
     * completion (told of failures, its messages delivered, never
     * cleaned up) for as long as another rank may still be in it. */
    int keep_after_done;
    /* Optional: message kinds (coll_tag) addressed to this running state
     * that it will never receive again, from any source: an abandoned
     * attempt, the answers a root no longer needs. Writes up to `max`
     * kinds, returns how many. A message nobody receives can hold its
     * sender's request for ever (UCX's rendezvous protocol completes a
     * large send only once the receiver has matched it), so the runtime
     * receives and drops these (comm/drain.c). NULL: the state
     * receives every message sent to it while it runs. */
    unsigned (*stale_kinds)(const void *state, unsigned *kinds, unsigned max);
    /* Optional: the per-communicator state the algorithm uses (NULL:
     * none). */
    const coll_comm_ops_t *comm;
    /* 1: the algorithm runs on args->tree when given (a binomial tree
     * rerouted around failed ranks, comm/repair_tree.c). */
    int takes_tree;
    /* 1: the algorithm runs on args->frame when given (its structures
     * over the original positions, rerouted around the holes). */
    int takes_frame;
    /* 1: the algorithm may work in the caller's own buffer (the driver's
     * direct mode, include/ucft.h R4): it reaches every byte past
     * args->tail_off through coll_buf_at, calls done_cb only once none of
     * its transport requests is pending, never calls ready_cb, has no
     * keep_after_done, and, at a broadcast root, writes only the bytes
     * already there into the buffer. */
    int direct;
} coll_op_ops_t;

/* Every registered algorithm, NULL-terminated. */
extern const coll_op_ops_t *const coll_op_table[];

/* The algorithm `alg` of operation `op` (alg NULL: the first one listed for
 * op), or NULL. */
const coll_op_ops_t *coll_op_find(const char *op, const char *alg);

/* The communicator state (coll_comm_ops_t) of `rank`, or NULL. */
/* Byte `off` of the per-rank buffer `buf` (coll_args_t.tail). */
static inline unsigned char *coll_buf_at(const coll_args_t *a, void *buf,
                                         size_t off)
{
    if (a->tail != NULL && off >= a->tail_off)
        return a->tail + (off - a->tail_off);
    return (unsigned char *)buf + off;
}

static inline void *coll_comm_state(const coll_args_t *a, int rank)
{
    if (a->comm_state == NULL)
        return NULL;
    return (char *)a->comm_state + (size_t)rank * a->comm_stride;
}

/* Virtual rank of `rank` in a tree rooted at `root` (root -> 0). */
static inline int coll_vrank_of(const coll_args_t *a, int rank, int root, int n)
{
    if (a->map == NULL)
        return (rank - root + n) % n;
    return (a->map->pos[rank] - a->map->pos[root] + n) % n;
}

/* The virtual rank of a->mate (tree rooted at `root`) for an algorithm
 * that keeps a->remote_wait, or -1: no hint asked, or no mate other than
 * `rank` itself. */
static inline int coll_vmate_of(const coll_args_t *a, int rank, int root, int n)
{
    if (a->remote_wait == NULL || a->mate < 0 || a->mate >= n ||
        a->mate == rank)
        return -1;
    return coll_vrank_of(a, a->mate, root, n);
}

/* Logs (warning) a received message of this instance that is malformed
 * or shows that its sender called the operation with other arguments (a
 * different size), and what is done about it (`why`). */
void coll_log_bad(tp_t *tp, const coll_args_t *a, const tp_req_t *req,
                  const char *why);

/* Logs (warning) a received message whose size no peer calling with this
 * rank's arguments sends: the caller's part ends with UCFT_ERR_TRUNCATED. */
void coll_log_mismatch(tp_t *tp, const coll_args_t *a, const tp_req_t *req);

/* The virtual rank of the sender of a received message (its tag's
 * source), or -1 when the source is no rank of the job: a malformed
 * message, logged here, that the caller drops. */
static inline int coll_src_vrank(tp_t *tp, const coll_args_t *a,
                                 const tp_req_t *req, int root, int n)
{
    int src = coll_wire_src(req->tag, n);
    if (src < 0) {
        coll_log_bad(tp, a, req, "no rank of the job has that number: dropped");
        return -1;
    }
    return coll_vrank_of(a, src, root, n);
}

/* The status of a completed receive of exactly `len` payload bytes: a
 * message of another size means that its sender called the operation
 * with other arguments; the receive then counts as UCFT_ERR_TRUNCATED
 * (also when it was shorter), logged here. */
static inline ucft_status_t coll_recv_status(tp_t *tp, const coll_args_t *a,
                                             const tp_req_t *req, size_t len)
{
    if (req->status == UCFT_OK && req->length == len)
        return UCFT_OK;
    if (req->status == UCFT_OK || req->status == UCFT_ERR_TRUNCATED) {
        coll_log_mismatch(tp, a, req);
        return UCFT_ERR_TRUNCATED;
    }
    return req->status;
}

/* The instance's reduction applies to its datatype: a user-defined one
 * (which takes any), or a built-in one that dtype_validate accepts. */
static inline int coll_redop_valid(const coll_args_t *a)
{
    return a->user_op != NULL || dtype_validate(a->dtype, a->redop) == UCFT_OK;
}

/* dst = dst op src over `count` elements of the instance's datatype, with
 * its user-defined operation or its built-in one (validated by the
 * driver). */
static inline void coll_combine(const coll_args_t *a, void *dst,
                                const void *src, size_t count)
{
    if (a->user_op != NULL)
        dtype_reduce_user(dst, src, count, a->dtype, a->user_op);
    else
        dtype_reduce(dst, src, count, a->dtype, a->redop);
}

/* The rank holding virtual rank `v` of a tree rooted at `root`. */
static inline int coll_rank_of(const coll_args_t *a, int v, int root, int n)
{
    if (a->map == NULL)
        return (v + root) % n;
    return a->map->rank[(v + a->map->pos[root]) % n];
}

/* The tag of a message of this instance sent by `src`. */
static inline uint64_t coll_tag(const coll_args_t *args, int src, unsigned kind)
{
    return ucft_tag_make(UCFT_TAG_CLASS_COLL, args->ctx, (uint32_t)src,
                         ucft_tag_coll_payload(args->seq, kind));
}

#endif
