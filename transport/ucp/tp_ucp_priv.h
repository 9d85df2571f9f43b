/*
 * UCP backend of the transport interface (transport/transport.h): the state
 * its files share. Private to transport/ucp/.
 *
 * - One UCP context and worker per tp_t (UCS_THREAD_MODE_SINGLE: the owner
 *   serialises all calls).
 * - Endpoints are created on first use from the address the owner's lookup
 *   callback returns, with UCP_ERR_HANDLING_MODE_PEER; an endpoint error is
 *   queued and reported through peer_error_cb after ucp_worker_progress
 *   returns, never from inside UCX.
 * - Per-operation state lives in the caller's tp_req_t (passed to UCX as
 *   user_data at post time), so the failure-free path allocates nothing.
 * - Messages from a rank declared failed (peer_failed) that arrive later
 *   are dropped and the receive is posted again. Those already here at the
 *   declaration are kept and still received (T5; kept.h).
 * - No owner callback runs inside UCX: completions that UCX reports from
 *   ucp_worker_progress are queued and run, in order, once it has
 *   returned; those caused by tp_cancel() (UCX would run them inside
 *   ucp_request_cancel) or by peer_failed wait for the next progress call.
 *   An owner's send from a callback thus never runs inside UCX's TCP event
 *   dispatch (the UCX 1.13 TCP crash, docs/transport.md).
 * - After each peer failure the worker's shared-memory FIFO is self-probed
 *   (fifo_probe.h); a blocked FIFO is reported through cut_off_cb.
 *
 * Files:
 *   tp_ucp_ep.c        endpoints: made on first use, errors queued for
 *                      progress, closed without waiting; watch
 *   tp_ucp_msg.c       send, recv, probe, cancel
 *   tp_ucp_ctrl.c      control messages (tag class CTRL) as active
 *                      messages, matched here: no ANY_SOURCE receive in
 *                      UCX's wildcard queue
 *   tp_ucp_peer.c      peer_failed (the messages of a declared peer taken
 *                      out of UCX, kept.h), disconnect
 *   fifo_probe.c       the FIFO self-probe, and when the backend runs it
 *   tp_ucp_progress.c  progress, wakeup, timers, flush
 *   tp_ucp_create.c    create, destroy, the ops table, ucft's UCX settings
 *   tp_ucp_diag.c      the diagnostics of tp_ucp_diag.h
 *   kept.c             the list of kept messages
 * tp_ucp_<op> functions implement the tp_ops_t entries (the table is in
 * tp_ucp_create.c); tp_ucp__* functions are shared between these files.
 */
#ifndef UCFT_TRANSPORT_UCP_PRIV_H
#define UCFT_TRANSPORT_UCP_PRIV_H

#include "transport/ucp/tp_ucp.h"
#include "transport/ucp/fifo_probe.h"
#include "transport/ucp/kept.h"

#include <ucp/api/ucp.h>

enum {
    PEER_NONE = 0,   /* no endpoint yet */
    PEER_UP = 1,     /* endpoint exists */
    PEER_FAILED = 2, /* declared failed: endpoint closed, traffic dropped */
};

typedef struct tp_ucp tp_ucp_t;

typedef struct tp_ucp_peer {
    ucp_ep_h ep;
    tp_ucp_t *tp;
    uint8_t state;
    uint8_t error_reported;
    /* A message of this peer reached this worker: it has written into
     * our shared-memory FIFO, so its death may have blocked it (the
     * self-probe runs only then: fifo_probe.h). */
    uint8_t heard;
    /* ucp_ep_create was called for this peer (whatever it returned): UCP
     * then pairs no endpoint it made for the peer's connection with a
     * later one of ours (tp_ucp_peer.c, adopt_ucx_ep). */
    uint8_t ep_tried;
} tp_ucp_peer_t;

struct tp_ucp {
    tp_t super;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
    int efd;
    tp_ucp_peer_t *peers;
    tp_ucp_lookup_cb_t lookup;
    void *lookup_arg;
    ucft_timerq_t timers;
    unsigned outstanding; /* live UCX requests */
    int deferring;        /* completions queued, not run (complete()) */
    int posting;          /* inside ucp_tag_recv_nbx */
    int progressing;      /* inside ucp_worker_progress */
    tp_req_t *deferred;   /* completions to run at next progress (via priv) */
    tp_req_t *deferred_last; /* the last of them: run in completion order */
    void **closing;          /* endpoint close requests not yet complete */
    size_t nclosing, closing_cap;
    int *errors; /* ranks with an endpoint error to report */
    size_t nerrors, errors_cap;
    int shm_gone_told; /* UCX's lines about a dead peer's segment explained */
    tp_kept_t kept;    /* messages of declared peers from before (kept.h) */
    /* Control messages (tp_ucp_ctrl.c): those no receive has taken yet,
     * in arrival order; the posted control receives, in post order,
     * linked through their priv_owner. */
    tp_kept_t ctrl_unexp;
    void *ctrl_posted;
    void **ctrl_tail;
    tp_kept_t abandoned;      /* their cancelled rendezvous receives: freed
                                 once UCX has called back, or after the worker */
    fifo_probe_t probe;       /* of this worker's FIFO, after a death */
    ucft_timer_t probe_timer; /* its next verdict, for a sleeping owner */
    uint64_t probe_due;       /* when the next probe starts (0: none) */
    void (*cut_off_cb)(void *arg);
    void *cut_off_arg;
};

#define TP(t) ((tp_ucp_t *)(t))

static inline ucft_status_t from_ucs(ucs_status_t st)
{
    switch (st) {
    case UCS_OK:
        return UCFT_OK;
    case UCS_INPROGRESS:
        return UCFT_INPROGRESS;
    case UCS_ERR_CANCELED:
        return UCFT_ERR_CANCELED;
    case UCS_ERR_MESSAGE_TRUNCATED:
        return UCFT_ERR_TRUNCATED;
    case UCS_ERR_NO_MEMORY:
        return UCFT_ERR_NO_MEMORY;
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
        return UCFT_ERR_PROC_FAILED;
    case UCS_ERR_TIMED_OUT:
        return UCFT_ERR_TIMED_OUT;
    default:
        return UCFT_ERR_TRANSPORT;
    }
}

/* ---- tp_ucp_ep.c --------------------------------------------------------- */

/* The endpoint to `rank`, created on first use. UCFT_ERR_PROC_FAILED when
 * the rank is declared failed or unreachable (then reported as a peer
 * error from progress). */
ucft_status_t tp_ucp__ep_get(tp_ucp_t *tp, int rank, ucp_ep_h *ep_p);
/* Keeps a UCX request that must end before the worker goes. */
void tp_ucp__keep_closing(tp_ucp_t *tp, void *r);
/* Force-closes an endpoint without waiting. */
void tp_ucp__ep_close(tp_ucp_t *tp, ucp_ep_h ep);
/* Frees the close requests that have completed; returns how many. */
unsigned tp_ucp__reap_closing(tp_ucp_t *tp);
void tp_ucp_watch(tp_t *t, int rank);

/* ---- tp_ucp_peer.c ------------------------------------------------------- */

void tp_ucp_peer_failed(tp_t *t, int rank);
void tp_ucp_disconnect(tp_t *t, int rank);

/* ---- tp_ucp_msg.c -------------------------------------------------------- */

ucft_status_t tp_ucp_send(tp_t *t, int dst, uint64_t tag, const void *buf,
                          size_t len, tp_req_t *req);
ucft_status_t tp_ucp_recv(tp_t *t, uint64_t tag, uint64_t mask, void *buf,
                          size_t len, tp_req_t *req);
ucft_status_t tp_ucp_probe(tp_t *t, uint64_t tag, uint64_t mask,
                           tp_probe_info_t *info);
void tp_ucp_cancel(tp_t *t, tp_req_t *req);

/* A receive's fields, as both matching paths (UCX's tags, the control
 * class's active messages) set them before they post or match it. */
static inline void tp_ucp__recv_fields(tp_ucp_t *tp, tp_req_t *req, void *buf,
                                       size_t len, uint64_t tag, uint64_t mask)
{
    req->priv_owner = tp;
    req->priv_buf = buf;
    req->priv_len = len;
    req->priv_tag = tag;
    req->priv_mask = mask;
    req->priv_peer = -1;
}

/* Runs the owner's callback, or queues it (in completion order) for the
 * end of the current or next progress call when UCX is running us: every
 * completion inside ucp_worker_progress is queued (tp_ucp_progress.c says
 * why), and so are those caused by a cancel or a peer's declaration. */
static inline void tp_ucp__complete(tp_ucp_t *tp, tp_req_t *req)
{
    req->priv = NULL;
    if (tp->deferring) {
        if (tp->deferred == NULL)
            tp->deferred = req;
        else
            tp->deferred_last->priv = req;
        tp->deferred_last = req;
        return;
    }
    req->cb(req);
}

/* ---- tp_ucp_ctrl.c ------------------------------------------------------- */

/* Registers the control messages' handler on the worker. */
ucs_status_t tp_ucp__ctrl_init(tp_ucp_t *tp);
/* A receive or probe of control messages (the class in the mask). */
int tp_ucp__is_ctrl(uint64_t tag, uint64_t mask);
/* Sends a control message; `p` is the send's parameters, req->priv_tag the
 * tag. Returns what ucp_am_send_nbx returns. */
void *tp_ucp__ctrl_send(tp_ucp_t *tp, ucp_ep_h ep, const void *buf, size_t len,
                        tp_req_t *req, ucp_request_param_t *p);
ucft_status_t tp_ucp__ctrl_recv(tp_ucp_t *tp, uint64_t tag, uint64_t mask,
                                void *buf, size_t len, tp_req_t *req);
/* The first control message waiting that matches, or NULL. */
const tp_kept_msg_t *tp_ucp__ctrl_find(const tp_ucp_t *tp, uint64_t tag,
                                       uint64_t mask);
/* 1 when `req` is a control receive (cancelled if still posted). */
int tp_ucp__ctrl_cancel(tp_ucp_t *tp, tp_req_t *req);
/* Destroy: frees the waiting messages, forgets the posted receives. */
void tp_ucp__ctrl_cleanup(tp_ucp_t *tp);

/* ---- fifo_probe.c -------------------------------------------------------- */

/* A peer died: schedules a probe of this worker's FIFO. */
void tp_ucp__probe_fifo(tp_ucp_t *tp);
/* This worker's shared-memory FIFO has a slot claimed by a sender and not
 * written (now: a live sender is inside a send, or a dead one died
 * there); 0 as well when the FIFO cannot be read (mm_fifo.h). */
int tp_ucp__fifo_claim_open(tp_ucp_t *tp);
/* From progress and the probe's timer: a verdict, a start, the timer. */
void tp_ucp__probe_tick(tp_ucp_t *tp);
/* The probe timer's callback (arg: the tp_ucp_t). */
void tp_ucp__probe_timer_cb(ucft_timer_t *timer);

/* ---- tp_ucp_progress.c --------------------------------------------------- */

unsigned tp_ucp_progress(tp_t *t);
unsigned tp_ucp_progress_spin(tp_t *t, unsigned turns);
int tp_ucp_fd(tp_t *t);
ucft_status_t tp_ucp_arm(tp_t *t);
uint64_t tp_ucp_now(tp_t *t);
ucft_status_t tp_ucp_timer_start(tp_t *t, ucft_timer_t *timer,
                                 uint64_t deadline);
void tp_ucp_timer_stop(tp_t *t, ucft_timer_t *timer);
uint64_t tp_ucp_timer_next(tp_t *t);
ucft_status_t tp_ucp_flush(tp_t *t, uint64_t timeout_ns);

#endif
