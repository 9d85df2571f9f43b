/*
 * The transport interface: everything the runtime above it (point-to-point,
 * detector, collectives) may ask of a network. Two backends implement it:
 *   ucp  real UCX workers and endpoints (transport/ucp)
 *   sim  a deterministic discrete-event network in one process (transport/sim)
 * Code above this line never includes a UCX header (the check.layers test,
 * scripts/check_layers.sh); it runs unchanged on both.
 *
 * A tp_t is one rank's view of the network. Ranks are job ranks; tags follow
 * transport/tag.h (the source field must be the sender's job rank).
 *
 * Contract (both backends):
 *  T1. Sends to one destination are delivered in the order posted (FIFO per
 *      sender-receiver pair); receives match in the order posted.
 *  T2. send/recv return UCFT_OK when the operation completed at once (the
 *      request's callback will NOT run; for recv, status/tag/length are
 *      filled), UCFT_INPROGRESS when req->cb will run later from progress,
 *      or an error (nothing runs later). A receive whose message is longer
 *      than the buffer completes with UCFT_ERR_TRUNCATED (as the request's
 *      status: for a receive done at once, the call returns UCFT_OK) and
 *      writes nothing past the buffer; length is then at most the buffer
 *      size. Cancelling a send may have no effect (it completes normally).
 *  T3. Callbacks (request completion, timers, peer errors) run only from the
 *      backend's progress (for sim: from the event loop; flush, T9,
 *      progresses too), never from the call that posted the operation.
 *  T4. A pending request may be cancelled; it then completes through its
 *      callback with UCFT_ERR_CANCELED (or normally if it had matched).
 *  T5. When the backend notices that a peer is unreachable it calls
 *      peer_error_cb once per peer. The owner decides what that means and
 *      calls peer_failed() when the peer is declared dead: pending sends to
 *      it complete with UCFT_ERR_PROC_FAILED, later sends return that at
 *      once, and messages from it that arrive afterwards are dropped: they
 *      never complete a receive (the receive stays pending; as in MPI, its
 *      buffer's contents are undefined until it completes, and the UCP
 *      backend may already have written the dropped bytes there).
 *      Receives are never completed by a peer failure: the owner cancels
 *      them (receives are not tied to a peer). Only peers the backend is
 *      watching (see watch) are noticed by the UCP backend; telling every
 *      survivor about every failure is the failure detector's job.
 *  T6. Time: now() is a monotonic clock in nanoseconds (simulated time in
 *      sim). Timers fire from progress at or after their deadline.
 *  T7. A send whose request has `buffered` set completes whether or not
 *      the receiver ever posts a matching receive (the corrected algorithms
 *      send copies that may never be received). Other sends of large
 *      messages may wait for their receive (UCX's rendezvous protocol, a
 *      single copy): for messages that are always received. A receive
 *      that truncates such a message (a drop into a small buffer) also
 *      completes its sender. The sim backend models this when asked
 *      (sim_params_t.rndv_min).
 *  T8. address() gives the bytes by which the peers reach this rank: what
 *      its owner publishes for them (UCP: the worker address, which the
 *      peers' lookup callback returns; sim: the rank's id, tp->rank's
 *      bytes, sizeof(int) of them, in host order). The bytes are owned by
 *      the backend and stay valid and unchanged until destroy.
 *  T9. flush(timeout_ns) progresses until every send posted so far no longer
 *      needs this rank's progress to reach its receiver, rendezvous sends
 *      still waiting for their receive (T7) aside, or until timeout_ns has
 *      passed on now()'s clock (T6): then UCFT_ERR_TIMED_OUT. It waits for
 *      messages, not for requests: the owner waits for its own requests (a
 *      rendezvous send may stay pending). UCP: the endpoint of each connected
 *      peer is flushed in turn (ucp_ep_flush_nbx; a peer declared failed or
 *      disconnected has none, an endpoint in error is skipped); over TCP that
 *      waits for the peer's acknowledgement, so the peers must progress
 *      meanwhile (as they do in their own processes). Sim: until every
 *      message this rank sent has arrived at its receiver (matched, queued or
 *      dropped there) and every send completion of this rank has been
 *      handled; called from inside the event loop, which it cannot enter
 *      again, it returns at once (UCFT_ERR_TIMED_OUT if anything is still in
 *      flight), and on a dead rank it returns UCFT_OK at once.
 */
#ifndef UCFT_TRANSPORT_H
#define UCFT_TRANSPORT_H

#include "ucft.h"
#include "runtime/base/log.h"
#include "runtime/base/timerq.h"
#include "transport/tag.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tp tp_t;
typedef struct tp_req tp_req_t;
typedef struct tp_ops tp_ops_t;

typedef void (*tp_req_cb_t)(tp_req_t *req);

/* A transport request, allocated by the caller (usually embedded in its own
 * operation object) and untouched by it until completion. */
struct tp_req {
    tp_req_cb_t cb;       /* in: completion callback */
    void *arg;            /* in: for the caller */
    ucft_status_t status; /* out: final status */
    uint64_t tag;         /* out (recv): the matched message's tag */
    size_t length;        /* out (recv): bytes written into the buffer */
    uint8_t buffered;     /* in (send): a buffered send (T7) */
    /* Backend-private scratch, set at post time (never after: a backend may
     * complete the operation before its post call returns to it). */
    void *priv;
    void *priv_owner;
    void *priv_buf;
    size_t priv_len;
    uint64_t priv_tag;
    uint64_t priv_mask;
    int priv_peer;
    /* Owned by a transport view above the backend (comm/view.h): the
     * caller's callback while the view's own runs first. */
    tp_req_cb_t view_cb;
    void *view;
};

typedef struct tp_probe_info {
    uint64_t tag;
    size_t length;
} tp_probe_info_t;

/* Called from progress when the backend sees `rank` as unreachable. */
typedef void (*tp_peer_error_cb_t)(void *arg, int rank, ucft_status_t why);

struct tp_ops {
    const char *name;
    ucft_status_t (*send)(tp_t *tp, int dst, uint64_t tag, const void *buf,
                          size_t len, tp_req_t *req);
    ucft_status_t (*recv)(tp_t *tp, uint64_t tag, uint64_t mask, void *buf,
                          size_t len, tp_req_t *req);
    /* UCFT_OK and *info filled when a message matches, else
     * UCFT_ERR_NO_MESSAGE. Does not remove the message. */
    ucft_status_t (*probe)(tp_t *tp, uint64_t tag, uint64_t mask,
                           tp_probe_info_t *info);
    void (*cancel)(tp_t *tp, tp_req_t *req);
    void (*peer_failed)(tp_t *tp, int rank);
    /* Optional (may be NULL): make sure a failure of `rank` will be noticed
     * (the UCP backend creates the endpoint, so that UCX checks the peer).
     * Called when a receive from `rank` is posted. */
    void (*watch)(tp_t *tp, int rank);
    /* Optional (may be NULL): free what connects us to `rank` (the UCP
     * backend closes the endpoint, unmapping a dead peer's shared memory)
     * WITHOUT fencing it: its messages are still delivered and a later
     * send connects again. For a transport whose owner does its own
     * fencing (the failure detector's) and must still be able to tell a
     * falsely declared rank that it was declared. */
    void (*disconnect)(tp_t *tp, int rank);
    /* This rank's address for its peers (T8). */
    void (*address)(tp_t *tp, const void **addr, size_t *len);
    /* Waits until this rank's messages are on their way (T9). UCFT_OK, or
     * UCFT_ERR_TIMED_OUT when timeout_ns passed first. */
    ucft_status_t (*flush)(tp_t *tp, uint64_t timeout_ns);
    /* Returns the number of events handled. */
    unsigned (*progress)(tp_t *tp);
    /* Optional (may be NULL: progress once): progress, and while that
     * finds nothing, again, `turns` polls at most in all. For spinning
     * waits: a poll that finds nothing costs the backend's own poll and
     * no more. Returns the number of events handled. */
    unsigned (*progress_spin)(tp_t *tp, unsigned turns);
    /* A file descriptor that is readable when progress has work, or -1
     * (sim). */
    int (*fd)(tp_t *tp);
    /* UCFT_OK: nothing pending, safe to sleep on fd. UCFT_INPROGRESS: call
     * progress first. */
    ucft_status_t (*arm)(tp_t *tp);
    uint64_t (*now)(tp_t *tp);
    ucft_status_t (*timer_start)(tp_t *tp, ucft_timer_t *t, uint64_t deadline);
    void (*timer_stop)(tp_t *tp, ucft_timer_t *t);
    /* Earliest armed timer deadline, or UINT64_MAX. */
    uint64_t (*timer_next)(tp_t *tp);
    void (*destroy)(tp_t *tp);
};

struct tp {
    const tp_ops_t *ops;
    int rank;
    int size;
    tp_peer_error_cb_t peer_error_cb; /* set by the owner */
    void *peer_error_arg;
    const ucft_log_t *log; /* the owner's logger (may be NULL) */
};

static inline ucft_status_t tp_send(tp_t *tp, int dst, uint64_t tag,
                                    const void *buf, size_t len, tp_req_t *req)
{
    return tp->ops->send(tp, dst, tag, buf, len, req);
}

static inline ucft_status_t tp_recv(tp_t *tp, uint64_t tag, uint64_t mask,
                                    void *buf, size_t len, tp_req_t *req)
{
    return tp->ops->recv(tp, tag, mask, buf, len, req);
}

static inline ucft_status_t tp_probe(tp_t *tp, uint64_t tag, uint64_t mask,
                                     tp_probe_info_t *info)
{
    return tp->ops->probe(tp, tag, mask, info);
}

static inline void tp_cancel(tp_t *tp, tp_req_t *req)
{
    tp->ops->cancel(tp, req);
}

static inline void tp_peer_failed(tp_t *tp, int rank)
{
    tp->ops->peer_failed(tp, rank);
}

static inline void tp_watch(tp_t *tp, int rank)
{
    if (tp->ops->watch != NULL)
        tp->ops->watch(tp, rank);
}

static inline void tp_disconnect(tp_t *tp, int rank)
{
    if (tp->ops->disconnect != NULL)
        tp->ops->disconnect(tp, rank);
}

static inline void tp_address(tp_t *tp, const void **addr, size_t *len)
{
    tp->ops->address(tp, addr, len);
}

static inline ucft_status_t tp_flush(tp_t *tp, uint64_t timeout_ns)
{
    return tp->ops->flush(tp, timeout_ns);
}

static inline uint64_t tp_timer_next(tp_t *tp)
{
    return tp->ops->timer_next(tp);
}

static inline unsigned tp_progress(tp_t *tp)
{
    return tp->ops->progress(tp);
}

static inline unsigned tp_progress_spin(tp_t *tp, unsigned turns)
{
    return tp->ops->progress_spin != NULL ? tp->ops->progress_spin(tp, turns)
                                          : tp->ops->progress(tp);
}

static inline uint64_t tp_now(tp_t *tp)
{
    return tp->ops->now(tp);
}

static inline ucft_status_t tp_timer_start(tp_t *tp, ucft_timer_t *t,
                                           uint64_t deadline)
{
    return tp->ops->timer_start(tp, t, deadline);
}

static inline void tp_timer_stop(tp_t *tp, ucft_timer_t *t)
{
    tp->ops->timer_stop(tp, t);
}

static inline void tp_destroy(tp_t *tp)
{
    if (tp != NULL)
        tp->ops->destroy(tp);
}

#endif
