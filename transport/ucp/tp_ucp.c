/*
 * UCP backend of the transport interface (transport/transport.h).
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
 * - Completions caused by tp_cancel() are deferred to the next progress
 *   call (UCX would run them inside ucp_request_cancel).
 * - After each peer failure the worker's shared-memory FIFO is self-probed
 *   (fifo_probe.h); a blocked FIFO is reported through cut_off_cb.
 */
#include "transport/ucp/tp_ucp_diag.h"
#include "transport/ucp/fifo_probe.h"
#include "transport/ucp/kept.h"

#include "runtime/base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int deferring;        /* inside ucp_request_cancel */
    int posting;          /* inside ucp_tag_recv_nbx */
    int progressing;      /* inside ucp_worker_progress */
    tp_req_t *deferred;   /* completions to run at next progress (via priv) */
    void **closing;       /* endpoint close requests not yet complete */
    size_t nclosing, closing_cap;
    int *errors; /* ranks with an endpoint error to report */
    size_t nerrors, errors_cap;
    tp_kept_t kept;      /* messages of declared peers from before (kept.h) */
    tp_kept_t abandoned; /* their cancelled rendezvous receives: freed
                            once UCX has called back, or after the worker */
    fifo_probe_t probe;  /* of this worker's FIFO, after a death */
    ucft_timer_t probe_timer; /* its next verdict, for a sleeping owner */
    uint64_t probe_due;       /* when the next probe starts (0: none) */
    void (*cut_off_cb)(void *arg);
    void *cut_off_arg;
};

#define TP(t) ((tp_ucp_t *)(t))

static ucft_status_t from_ucs(ucs_status_t st)
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

static void complete(tp_ucp_t *tp, tp_req_t *req)
{
    if (tp->deferring) {
        req->priv = tp->deferred;
        tp->deferred = req;
        return;
    }
    req->priv = NULL;
    req->cb(req);
}

static int peer_is_failed(tp_ucp_t *tp, uint64_t tag)
{
    uint32_t src = ucft_tag_src(tag);
    return src < (uint32_t)tp->super.size &&
           tp->peers[src].state == PEER_FAILED;
}

/* ---- endpoints ---------------------------------------------------------- */

/* Queues `rank` for a peer_error_cb report from progress (once). */
static void report_peer_error(tp_ucp_t *tp, int rank)
{
    tp_ucp_peer_t *peer = &tp->peers[rank];
    if (peer->error_reported || peer->state == PEER_FAILED)
        return;
    if (tp->nerrors == tp->errors_cap) {
        size_t cap = tp->errors_cap ? 2 * tp->errors_cap : 8;
        int *e = realloc(tp->errors, cap * sizeof(*e));
        if (e == NULL)
            return; /* reported again by the next failing operation */
        tp->errors = e;
        tp->errors_cap = cap;
    }
    peer->error_reported = 1;
    tp->errors[tp->nerrors++] = rank;
}

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    tp_ucp_peer_t *peer = arg;
    tp_ucp_t *tp = peer->tp;
    int rank = (int)(peer - tp->peers);
    (void)ep;
    ucft_debug(tp->super.log, "endpoint to rank %d failed: %s", rank,
               ucs_status_string(status));
    report_peer_error(tp, rank);
}

static ucft_status_t ep_get(tp_ucp_t *tp, int rank, ucp_ep_h *ep_p)
{
    tp_ucp_peer_t *peer = &tp->peers[rank];
    void *addr = NULL;
    size_t len = 0;
    ucs_status_t us;
    ucft_status_t st;

    if (peer->state == PEER_UP) {
        *ep_p = peer->ep;
        return UCFT_OK;
    }
    if (peer->state == PEER_FAILED)
        return UCFT_ERR_PROC_FAILED;
    if (rank == tp->super.rank) {
        addr = tp->address;
    } else {
        st = tp->lookup(tp->lookup_arg, rank, &addr, &len);
        if (st == UCFT_ERR_PROC_FAILED) {
            report_peer_error(tp, rank); /* evidence, like unreachable */
            return st;
        }
        if (st != UCFT_OK) {
            ucft_error(tp->super.log, "no worker address for rank %d: %s", rank,
                       ucft_status_string(st));
            return st;
        }
    }
    ucp_ep_params_t ep_params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER,
        .address = addr,
        .err_mode = UCP_ERR_HANDLING_MODE_PEER,
        .err_handler = {.cb = ep_error_cb, .arg = peer},
    };
    us = ucp_ep_create(tp->worker, &ep_params, &peer->ep);
    if (addr != tp->address)
        free(addr);
    if (us != UCS_OK) {
        if (from_ucs(us) == UCFT_ERR_PROC_FAILED ||
            us == UCS_ERR_SHMEM_SEGMENT) { /* its segment is gone */
            /* The peer is gone already (timeout, unreachable): that is
             * failure evidence, not a local error. */
            ucft_info(tp->super.log, "rank %d unreachable: %s", rank,
                      ucs_status_string(us));
            report_peer_error(tp, rank);
            return UCFT_ERR_PROC_FAILED;
        }
        ucft_error(tp->super.log, "ucp_ep_create to rank %d failed: %s", rank,
                   ucs_status_string(us));
        return UCFT_ERR_TRANSPORT;
    }
    peer->state = PEER_UP;
    *ep_p = peer->ep;
    return UCFT_OK;
}

ucft_status_t tp_ucp_connect(tp_t *t, int rank)
{
    ucp_ep_h ep;
    if (rank < 0 || rank >= t->size)
        return UCFT_ERR_INVALID_PARAM;
    return ep_get(TP(t), rank, &ep);
}

static void tp_ucp_watch(tp_t *t, int rank)
{
    ucp_ep_h ep;
    if (rank >= 0 && rank < t->size)
        ep_get(TP(t), rank, &ep);
}

/* Keeps a UCX request that must end before the worker goes (an endpoint
 * close, a flush that outlived its bound): later progress calls reap it,
 * destroy waits for the rest. */
static void keep_closing(tp_ucp_t *tp, void *r)
{
    if (tp->nclosing == tp->closing_cap) {
        size_t cap = tp->closing_cap ? 2 * tp->closing_cap : 8;
        void **c = realloc(tp->closing, cap * sizeof(*c));
        if (c == NULL) { /* cannot keep it: wait here, bounded */
            uint64_t end = ucft_clock_now_ns() + UCFT_NSEC_PER_SEC;
            while (ucp_request_check_status(r) == UCS_INPROGRESS &&
                   ucft_clock_now_ns() < end)
                ucp_worker_progress(tp->worker);
            ucp_request_free(r);
            return;
        }
        tp->closing = c;
        tp->closing_cap = cap;
    }
    tp->closing[tp->nclosing++] = r;
}

/* Force-closes an endpoint without waiting (closing a dead peer's
 * endpoint can take long, and the caller may be the heartbeat thread,
 * which must not stall). */
static void ep_close(tp_ucp_t *tp, ucp_ep_h ep)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *r = ucp_ep_close_nbx(ep, &p);
    if (r != NULL && !UCS_PTR_IS_ERR(r))
        keep_closing(tp, r);
}

/* Frees the close requests that have completed; returns how many. */
static unsigned reap_closing(tp_ucp_t *tp)
{
    unsigned n = 0;
    for (size_t i = 0; i < tp->nclosing;) {
        if (ucp_request_check_status(tp->closing[i]) == UCS_INPROGRESS) {
            i++;
            continue;
        }
        ucp_request_free(tp->closing[i]);
        tp->closing[i] = tp->closing[--tp->nclosing];
        n++;
    }
    return n;
}

/* ---- send / recv ----------------------------------------------------------
 */

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    tp_req_t *req = user_data;
    tp_ucp_t *tp = req->priv_owner;
    req->status = from_ucs(status);
    if (req->status != UCFT_OK &&
        tp->peers[req->priv_peer].state == PEER_FAILED)
        req->status = UCFT_ERR_PROC_FAILED;
    tp->outstanding--;
    ucp_request_free(request);
    complete(tp, req);
}

static ucft_status_t tp_ucp_send(tp_t *t, int dst, uint64_t tag,
                                 const void *buf, size_t len, tp_req_t *req)
{
    tp_ucp_t *tp = TP(t);
    ucp_ep_h ep;
    ucft_status_t st;

    if (dst < 0 || dst >= t->size)
        return UCFT_ERR_INVALID_PARAM;
    st = ep_get(tp, dst, &ep);
    if (st != UCFT_OK)
        return st;
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA,
                             .cb.send = send_cb,
                             .user_data = req};
    /* Buffered sends (T7): local completion selects UCX's eager protocols
     * up to RNDV_SEND_NBR_THRESH, which tp_ucp_config_apply lifts to inf. */
    if (req->buffered)
        p.op_attr_mask |= UCP_OP_ATTR_FLAG_FAST_CMPL;
    req->priv_owner = tp;
    req->priv_peer = dst;
    req->priv = NULL;
    tp->outstanding++;
    void *r = ucp_tag_send_nbx(ep, buf, len, tag, &p);
    if (r == NULL || UCS_PTR_IS_ERR(r))
        tp->outstanding--;
    if (r == NULL)
        return UCFT_OK;
    if (UCS_PTR_IS_ERR(r))
        return tp->peers[dst].state == PEER_FAILED
                   ? UCFT_ERR_PROC_FAILED
                   : from_ucs(UCS_PTR_STATUS(r));
    req->priv = r;
    return UCFT_INPROGRESS;
}

static void *post_recv(tp_ucp_t *tp, tp_req_t *req);

/* Receives are posted with UCP_OP_ATTR_FLAG_NO_IMM_CMPL: UCX 1.13 does not
 * fill recv_info when a receive completes inside ucp_tag_recv_nbx, so we
 * let it run this callback there instead. A completion during the post is
 * recorded and reported as "done at once" by tp_ucp_recv (T2, T3). */
#define RECV_DONE_AT_POST ((void *)1)

static void recv_cb(void *request, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    tp_req_t *req = user_data;
    tp_ucp_t *tp = req->priv_owner;
    /* `info` lives inside the UCX request: read it before freeing that. */
    uint64_t sender_tag = info->sender_tag;
    size_t length = info->length;

    ucp_request_free(request);
    if ((status == UCS_OK || status == UCS_ERR_MESSAGE_TRUNCATED) &&
        peer_is_failed(tp, sender_tag)) {
        /* A message of a fenced rank: drop it and keep waiting. */
        ucft_debug(tp->super.log,
                   "dropped a message of fenced rank %u (tag 0x%016llx)",
                   ucft_tag_src(sender_tag), (unsigned long long)sender_tag);
        void *r = post_recv(tp, req);
        if (!UCS_PTR_IS_ERR(r)) {
            if (req->priv != RECV_DONE_AT_POST) {
                req->priv = r; /* still pending */
            } else if (!tp->posting) {
                req->priv = NULL; /* completed inside the repost */
                complete(tp, req);
            }
            return;
        }
        status = UCS_PTR_STATUS(r);
    } else {
        req->tag = sender_tag;
        req->length = status == UCS_OK ? length : 0; /* T2 */
    }
    req->status = from_ucs(status);
    tp->outstanding--;
    if (tp->posting) {
        req->priv = RECV_DONE_AT_POST;
        return;
    }
    complete(tp, req);
}

static void *post_recv(tp_ucp_t *tp, tp_req_t *req)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                             UCP_OP_ATTR_FIELD_USER_DATA |
                                             UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
                             .cb.recv = recv_cb,
                             .user_data = req};
    tp->posting++;
    void *r = ucp_tag_recv_nbx(tp->worker, req->priv_buf, req->priv_len,
                               req->priv_tag, req->priv_mask, &p);
    tp->posting--;
    return r;
}

static ucft_status_t tp_ucp_recv(tp_t *t, uint64_t tag, uint64_t mask,
                                 void *buf, size_t len, tp_req_t *req)
{
    tp_ucp_t *tp = TP(t);
    if (tp->kept.head != NULL) {
        tp_kept_msg_t *m = tp_kept_take(&tp->kept, tag, mask);
        if (m != NULL) { /* done at once (T2) */
            int fits = m->len <= len;
            if (fits && m->len > 0)
                memcpy(buf, m->data, m->len);
            req->tag = m->tag;
            req->length = fits ? m->len : 0;
            req->status = fits ? UCFT_OK : UCFT_ERR_TRUNCATED;
            req->priv = NULL;
            free(m);
            return UCFT_OK;
        }
    }
    req->priv_owner = tp;
    req->priv_buf = buf;
    req->priv_len = len;
    req->priv_tag = tag;
    req->priv_mask = mask;
    req->priv_peer = -1;
    req->priv = NULL;
    tp->outstanding++;
    void *r = post_recv(tp, req);
    if (req->priv == RECV_DONE_AT_POST) {
        req->priv = NULL; /* status, tag and length are set */
        return UCFT_OK;
    }
    if (UCS_PTR_IS_ERR(r)) {
        tp->outstanding--;
        return from_ucs(UCS_PTR_STATUS(r));
    }
    req->priv = r;
    return UCFT_INPROGRESS;
}

static ucft_status_t tp_ucp_probe(tp_t *t, uint64_t tag, uint64_t mask,
                                  tp_probe_info_t *info)
{
    tp_ucp_t *tp = TP(t);
    const tp_kept_msg_t *k = tp_kept_find(&tp->kept, tag, mask);
    if (k != NULL) {
        info->tag = k->tag;
        info->length = k->len;
        return UCFT_OK;
    }
    ucp_tag_recv_info_t ri;
    ucp_tag_message_h m = ucp_tag_probe_nb(tp->worker, tag, mask, 0, &ri);
    if (m == NULL)
        return UCFT_ERR_NO_MESSAGE;
    info->tag = ri.sender_tag;
    info->length = ri.length;
    return UCFT_OK;
}

static void tp_ucp_cancel(tp_t *t, tp_req_t *req)
{
    tp_ucp_t *tp = TP(t);
    if (req->priv == NULL)
        return;
    /* Already done, its callback waiting for our next progress (req->priv
     * links the deferred list then): it completes normally (T4). */
    for (const tp_req_t *d = tp->deferred; d != NULL; d = d->priv)
        if (d == req)
            return;
    tp->deferring++;
    ucp_request_cancel(tp->worker, req->priv);
    tp->deferring--;
}

enum { KEPT_PENDING = 0, KEPT_DONE = 1, KEPT_ABANDONED = 2 };

static void kept_cb(void *request, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    tp_kept_msg_t *m = user_data;
    (void)info;
    ucp_request_free(request);
    if (m->state == KEPT_ABANDONED) {
        m->state = KEPT_DONE; /* on tp->abandoned: freed from there */
        return;
    }
    m->state = KEPT_DONE;
    m->status = status;
}

/* Lets UCX read what already sits in its transports (a shared-memory FIFO
 * is read only by progress; an eager message may have fragments there),
 * with every completion deferred to our next progress call: no owner
 * callback runs inside tp_peer_failed. Bounded; not from inside UCX. */
static void pull_arrived(tp_ucp_t *tp, int max)
{
    if (tp->progressing)
        return;
    tp->deferring++;
    for (int i = 0; i < max && ucp_worker_progress(tp->worker) > 0; i++)
        ;
    tp->deferring--;
}

/* Takes `rank`'s messages out of UCX's unexpected queue into tp->kept
 * before the rank is declared (kept.h): first what already sits in the
 * transports, then every message of the rank. An eager message's data is
 * here (at most a few progress turns for its fragments); a rendezvous
 * message would need its dead sender: that receive is cancelled and the
 * message dropped. */
static void keep_unexpected(tp_ucp_t *tp, int rank)
{
    const uint64_t tag = (uint64_t)(uint32_t)rank << UCFT_TAG_SRC_SHIFT;
    size_t kept = 0, lost = 0;
    tp_kept_free_state(&tp->abandoned, KEPT_DONE);
    pull_arrived(tp, 64);
    for (;;) {
        ucp_tag_recv_info_t ri;
        ucp_tag_message_h h =
            ucp_tag_probe_nb(tp->worker, tag, UCFT_TAG_SRC_MASK, 1, &ri);
        if (h == NULL)
            break;
        tp_kept_msg_t *m = tp_kept_alloc(ri.sender_tag, ri.length);
        if (m == NULL) { /* receive it into nothing: dropped */
            static char none;
            ucp_request_param_t q = {.op_attr_mask = 0};
            void *r = ucp_tag_msg_recv_nbx(tp->worker, &none, 0, h, &q);
            if (r != NULL && !UCS_PTR_IS_ERR(r))
                keep_closing(tp, r);
            lost++;
            continue;
        }
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                 UCP_OP_ATTR_FIELD_USER_DATA,
                                 .cb.recv = kept_cb,
                                 .user_data = m};
        void *r = ucp_tag_msg_recv_nbx(tp->worker, m->data, ri.length, h, &p);
        if (UCS_PTR_IS_ERR(r)) {
            free(m);
            lost++;
            continue;
        }
        if (r != NULL) { /* fragments to read, or a rendezvous */
            for (int i = 0; i < 16 && m->state == KEPT_PENDING; i++)
                pull_arrived(tp, 4);
            if (m->state == KEPT_PENDING) {
                /* UCX may never call back a cancelled rendezvous receive
                 * of a dead sender: listed, so that destroy frees it. */
                m->state = KEPT_ABANDONED;
                tp_kept_push(&tp->abandoned, m);
                ucp_request_cancel(tp->worker, r);
                lost++;
                continue;
            }
            if (m->status != UCS_OK) {
                free(m);
                lost++;
                continue;
            }
        }
        tp_kept_push(&tp->kept, m);
        kept++;
    }
    if (kept + lost > 0)
        ucft_debug(tp->super.log,
                   "rank %d declared failed: %zu of its message(s) already "
                   "here kept, %zu dropped (rendezvous or no memory)",
                   rank, kept, lost);
}

/* ---- the FIFO self-probe (fifo_probe.h) --------------------------------
 */

/* How long after a death the probe starts. Making the private worker
 * costs a few milliseconds of CPU (10 ms and more when all the survivors
 * of a crowded node do it at once): kept out of the collectives that
 * correct the failure. A blocked FIFO is for ever, so waiting costs only
 * a later verdict. */
#define PROBE_DELAY_NS (50 * UCFT_NSEC_PER_MSEC)

fifo_probe_state_t tp_ucp_fifo_state(tp_t *t)
{
    return TP(t)->probe.state;
}

/* The probe's timer: at the next start or verdict, for a sleeping owner. */
static void probe_arm(tp_ucp_t *tp)
{
    uint64_t next = fifo_probe_deadline(&tp->probe);
    if (tp->probe_due != 0 && tp->probe.state != FIFO_PROBE_WAITING)
        next = tp->probe_due;
    if (next == UINT64_MAX)
        ucft_timerq_remove(&tp->timers, &tp->probe_timer);
    else if (!ucft_timer_armed(&tp->probe_timer) ||
             tp->probe_timer.deadline != next)
        ucft_timerq_add(&tp->timers, &tp->probe_timer, next);
}

/* A peer died: if it was inside a send to us, our FIFO may be blocked. A
 * death while a probe is under way may have come after it: one more. */
static void probe_fifo(tp_ucp_t *tp)
{
    if (tp->probe.wait_ns == 0 || tp->probe_due != 0 ||
        tp->probe.state == FIFO_PROBE_BLOCKED)
        return;
    tp->probe_due = ucft_clock_now_ns() + PROBE_DELAY_NS;
    probe_arm(tp);
}

static void probe_start(tp_ucp_t *tp, uint64_t now)
{
    tp->probe_due = 0;
    ucs_status_t st =
        fifo_probe_start(&tp->probe, tp->context, tp->address, now);
    if (st != UCS_OK)
        ucft_warn(tp->super.log,
                  "shared-memory FIFO self-probe not started: %s",
                  ucs_status_string(st));
    else
        ucft_debug(tp->super.log,
                   "shared-memory FIFO self-probe sent (%.3f ms to send it)",
                   (double)(ucft_clock_now_ns() - now) / 1e6);
}

static void probe_verdict(tp_ucp_t *tp, uint64_t now)
{
    fifo_probe_state_t s = fifo_probe_poll(&tp->probe, now);
    if (s == FIFO_PROBE_ARRIVED) {
        ucft_debug(tp->super.log,
                   "shared-memory FIFO self-probe arrived after %.3f ms",
                   (double)(now - tp->probe.start_ns) / 1e6);
    } else if (s == FIFO_PROBE_BLOCKED) {
        tp->probe_due = 0;
        ucft_error(tp->super.log,
                   "this rank's shared-memory receive FIFO is blocked: a "
                   "probe sent to it from this process did not arrive in "
                   "%.0f ms. A process of this node died (or stopped) inside "
                   "a send to it, and UCX reports nothing; no message from "
                   "this node reaches this rank any more (docs/transport.md)",
                   (double)(now - tp->probe.start_ns) / 1e6);
        if (tp->cut_off_cb != NULL)
            tp->cut_off_cb(tp->cut_off_arg);
    }
}

/* From progress and the probe's timer: a verdict, a start, the timer. */
static void probe_tick(tp_ucp_t *tp)
{
    uint64_t now = ucft_clock_now_ns();
    if (tp->probe.state == FIFO_PROBE_WAITING)
        probe_verdict(tp, now);
    if (tp->probe_due != 0 && tp->probe_due <= now &&
        tp->probe.state != FIFO_PROBE_WAITING)
        probe_start(tp, now);
    probe_arm(tp);
}

static void probe_timer_cb(ucft_timer_t *timer)
{
    probe_tick(timer->arg);
}

static void tp_ucp_peer_failed(tp_t *t, int rank)
{
    tp_ucp_t *tp = TP(t);
    tp_ucp_peer_t *peer;
    if (rank < 0 || rank >= t->size)
        return;
    peer = &tp->peers[rank];
    if (peer->state == PEER_FAILED)
        return;
    if (rank != t->rank) {
        keep_unexpected(tp, rank);
        probe_fifo(tp);
    }
    int had_ep = peer->state == PEER_UP;
    peer->state = PEER_FAILED; /* before close: completions see it */
    if (had_ep) {
        ep_close(tp, peer->ep);
        peer->ep = NULL;
    }
}

static void tp_ucp_disconnect(tp_t *t, int rank)
{
    tp_ucp_t *tp = TP(t);
    if (rank < 0 || rank >= t->size || rank == t->rank)
        return;
    probe_fifo(tp); /* the owner fences the rank: it is gone */
    tp_ucp_peer_t *peer = &tp->peers[rank];
    if (peer->state != PEER_UP)
        return;
    peer->state = PEER_NONE; /* the next send creates a new endpoint */
    ep_close(tp, peer->ep);
    peer->ep = NULL;
}

/* ---- progress, wakeup, timers ---------------------------------------------
 */

static unsigned tp_ucp_progress(tp_t *t)
{
    tp_ucp_t *tp = TP(t);
    tp->progressing++;
    unsigned n = ucp_worker_progress(tp->worker);
    if (tp->probe.state == FIFO_PROBE_WAITING)
        probe_tick(tp);
    tp->progressing--;

    while (tp->deferred != NULL) {
        tp_req_t *req = tp->deferred;
        tp->deferred = req->priv;
        req->priv = NULL;
        req->cb(req);
        n++;
    }
    for (size_t i = 0; i < tp->nerrors; i++) {
        int rank = tp->errors[i];
        if (t->peer_error_cb != NULL && tp->peers[rank].state != PEER_FAILED)
            t->peer_error_cb(t->peer_error_arg, rank, UCFT_ERR_PROC_FAILED);
        n++;
    }
    tp->nerrors = 0;
    if (tp->nclosing > 0)
        n += reap_closing(tp);
    if (tp->timers.count > 0)
        n += ucft_timerq_expire(&tp->timers, ucft_clock_now_ns(), 64);
    return n;
}

static int tp_ucp_fd(tp_t *t)
{
    return TP(t)->efd;
}

static ucft_status_t tp_ucp_arm(tp_t *t)
{
    tp_ucp_t *tp = TP(t);
    if (tp->deferred != NULL || tp->nerrors > 0)
        return UCFT_INPROGRESS;
    ucs_status_t st = ucp_worker_arm(tp->worker);
    if (st == UCS_OK)
        return UCFT_OK;
    if (st == UCS_ERR_BUSY)
        return UCFT_INPROGRESS;
    return from_ucs(st);
}

static uint64_t tp_ucp_now(tp_t *t)
{
    (void)t;
    return ucft_clock_now_ns();
}

static ucft_status_t tp_ucp_timer_start(tp_t *t, ucft_timer_t *timer,
                                        uint64_t deadline)
{
    return ucft_timerq_add(&TP(t)->timers, timer, deadline);
}

static void tp_ucp_timer_stop(tp_t *t, ucft_timer_t *timer)
{
    ucft_timerq_remove(&TP(t)->timers, timer);
}

static uint64_t tp_ucp_timer_next(tp_t *t)
{
    return ucft_timerq_next(&TP(t)->timers);
}

/* Flushes the endpoints of the live peers one by one, not the worker: a
 * worker flush also waits for endpoints that UCX made on its own (wire-up
 * replies) to peers that have died since, and those never complete. Each
 * request still open at the deadline is handed to the closing list, where
 * progress and destroy reap it (a flush request cannot be cancelled). */
static ucft_status_t tp_ucp_flush(tp_t *t, uint64_t timeout_ns)
{
    tp_ucp_t *tp = TP(t);
    ucft_status_t st = UCFT_OK;
    uint64_t deadline = ucft_clock_now_ns() + timeout_ns;

    for (int rank = 0; rank < t->size; rank++) {
        if (tp->peers[rank].state != PEER_UP)
            continue;
        ucp_request_param_t p = {0};
        void *r = ucp_ep_flush_nbx(tp->peers[rank].ep, &p);
        if (r == NULL)
            continue;
        if (UCS_PTR_IS_ERR(r)) {
            ucft_debug(t->log, "flush of the endpoint to rank %d: %s", rank,
                       ucs_status_string(UCS_PTR_STATUS(r)));
            continue; /* an endpoint in error: nothing to wait for */
        }
        while (ucp_request_check_status(r) == UCS_INPROGRESS &&
               ucft_clock_now_ns() <= deadline)
            tp_ucp_progress(t);
        ucs_status_t us = ucp_request_check_status(r);
        if (us == UCS_INPROGRESS) {
            st = UCFT_ERR_TIMED_OUT;
            keep_closing(tp, r);
            continue;
        }
        if (us != UCS_OK)
            ucft_debug(t->log, "flush of the endpoint to rank %d: %s", rank,
                       ucs_status_string(us));
        ucp_request_free(r);
    }
    return st;
}

void tp_ucp_peer_transport(tp_t *t, int rank, char *buf, size_t len)
{
    tp_ucp_t *tp = TP(t);
    char *text = NULL;
    size_t tlen = 0;
    FILE *f;

    snprintf(buf, len, "%s", "");
    if (rank < 0 || rank >= t->size || tp->peers[rank].state != PEER_UP)
        return;
    f = open_memstream(&text, &tlen);
    if (f == NULL)
        return;
    ucp_ep_print_info(tp->peers[rank].ep, f);
    fclose(f);
    /* Lines look like "#   lane[0]:  3:sysv/memory.0 md[2] ... am am_bw".
     * Report the transport of the first lane carrying active messages. */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *lane = strstr(line, "lane[");
        char *colon = lane ? strchr(lane, ':') : NULL;
        if (colon == NULL || strstr(line, " am") == NULL)
            continue;
        char *name = strchr(colon + 1, ':');
        if (name == NULL)
            continue;
        name++;
        size_t n = strcspn(name, " \t");
        snprintf(buf, len, "%.*s", (int)n, name);
        break;
    }
    free(text);
}

/* ---- create / destroy -----------------------------------------------------
 */

static int shm_enabled(void)
{
    const char *tls = getenv("UCX_TLS");
    if (tls == NULL || *tls == '\0' || strstr(tls, "all") != NULL)
        return 1;
    return strstr(tls, "shm") || strstr(tls, "sm") || strstr(tls, "posix") ||
           strstr(tls, "sysv") || strstr(tls, "mm");
}

void tp_ucp_config_apply(ucp_config_t *cfg, uint64_t keepalive_ns)
{
    /* Peer error handling rules shared memory out unless MM_ERROR_HANDLING
     * is on (UCX 1.13): without it every local peer would go over tcp. */
    if (shm_enabled() && getenv("UCX_MM_ERROR_HANDLING") == NULL)
        ucp_config_modify(cfg, "MM_ERROR_HANDLING", "y");
    if (keepalive_ns != 0 && getenv("UCX_KEEPALIVE_INTERVAL") == NULL) {
        char v[32];
        snprintf(v, sizeof(v), "%llums",
                 (unsigned long long)(keepalive_ns / UCFT_NSEC_PER_MSEC));
        ucp_config_modify(cfg, "KEEPALIVE_INTERVAL", v);
    }
    /* Buffered sends must not wait for their receiver (T7): a corrected
     * algorithm sends copies that nobody may ever receive, and a
     * rendezvous send of one would never complete. Those sends ask for
     * local completion, whose rendezvous threshold this is; other sends
     * keep UCX's own choice. Not left to the environment: it is part of
     * the transport's contract. */
    ucp_config_modify(cfg, "RNDV_SEND_NBR_THRESH", "inf");
    /* Shared-memory receive buffers grow in steps of 16 instead of 512:
     * UCX's step puts 4 MB behind every shared-memory interface at start,
     * whose unmapping and freeing is most of a killed rank's exit, while
     * the survivors that must be told wait for a core (docs/detector.md).
     * The pool still grows as traffic needs it. Only with shared memory
     * on: UCX warns about an mm setting otherwise. */
    if (shm_enabled() && getenv("UCX_MM_RX_BUFS_GROW") == NULL &&
        getenv("UCX_POSIX_RX_BUFS_GROW") == NULL &&
        getenv("UCX_SYSV_RX_BUFS_GROW") == NULL)
        ucp_config_modify(cfg, "MM_RX_BUFS_GROW", "16");
}

static void drain_cb(void *request, ucs_status_t status,
                     const ucp_tag_recv_info_t *info, void *user_data)
{
    (void)request;
    (void)status;
    (void)info;
    (void)user_data;
}

/* Receives and discards the messages nobody will match any more (late
 * heartbeats, corrections of finished operations), so that destroying the
 * worker leaves nothing in UCX's unexpected queue. Bounded. */
static void drain_unexpected(tp_ucp_t *tp)
{
    char scratch[256];
    int i;
    for (i = 0; i < 4096; i++) {
        ucp_tag_recv_info_t info;
        ucp_tag_message_h m = ucp_tag_probe_nb(tp->worker, 0, 0, 1, &info);
        if (m == NULL)
            break;
        void *buf =
            info.length <= sizeof(scratch) ? scratch : malloc(info.length);
        ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                                 .cb.recv = drain_cb};
        void *r =
            ucp_tag_msg_recv_nbx(tp->worker, buf ? buf : scratch,
                                 buf ? info.length : sizeof(scratch), m, &p);
        if (r != NULL && !UCS_PTR_IS_ERR(r)) {
            while (ucp_request_check_status(r) == UCS_INPROGRESS)
                ucp_worker_progress(tp->worker);
            ucp_request_free(r);
        }
        if (buf != scratch)
            free(buf);
    }
    if (i > 0)
        ucft_info(tp->super.log,
                  "discarded %d unmatched message(s) at destroy%s", i,
                  i == 4096 ? " (stopped there: more remain)" : "");
}

static void tp_ucp_destroy(tp_t *t)
{
    tp_ucp_t *tp = TP(t);
    ucft_timerq_remove(&tp->timers, &tp->probe_timer);
    fifo_probe_cleanup(&tp->probe);
    drain_unexpected(tp);
    for (int r = 0; r < t->size; r++) {
        if (tp->peers[r].state == PEER_UP)
            ep_close(tp, tp->peers[r].ep);
    }
    /* Every close request must end before the worker goes (bounded). */
    uint64_t end = ucft_clock_now_ns() + 2 * UCFT_NSEC_PER_SEC;
    while (tp->nclosing > 0 && ucft_clock_now_ns() < end) {
        ucp_worker_progress(tp->worker);
        reap_closing(tp);
    }
    /* Run completions still queued so that owners see every request end. */
    tp_ucp_progress(t);
    drain_unexpected(tp); /* what arrived while the endpoints closed */
    tp->outstanding += (unsigned)tp->nclosing;
    if (tp->outstanding != 0)
        ucft_warn(t->log,
                  "%u transport requests still pending at destroy; "
                  "keeping the UCX worker alive to stay safe",
                  tp->outstanding);
    if (tp->address != NULL)
        ucp_worker_release_address(tp->worker, tp->address);
    if (tp->outstanding == 0) {
        ucp_worker_destroy(tp->worker);
        ucp_cleanup(tp->context);
        tp_kept_free_all(&tp->abandoned); /* nothing can call back now */
    }
    ucft_timerq_cleanup(&tp->timers);
    free(tp->closing);
    free(tp->errors);
    free(tp->peers);
    tp_kept_free_all(&tp->kept);
    free(tp);
}

/* T8: the worker address, made at create. */
static void tp_ucp_address(tp_t *t, const void **addr, size_t *len)
{
    *addr = TP(t)->address;
    *len = TP(t)->address_len;
}

static const tp_ops_t tp_ucp_ops = {
    .name = "ucp",
    .send = tp_ucp_send,
    .recv = tp_ucp_recv,
    .probe = tp_ucp_probe,
    .cancel = tp_ucp_cancel,
    .peer_failed = tp_ucp_peer_failed,
    .disconnect = tp_ucp_disconnect,
    .watch = tp_ucp_watch,
    .address = tp_ucp_address,
    .flush = tp_ucp_flush,
    .progress = tp_ucp_progress,
    .fd = tp_ucp_fd,
    .arm = tp_ucp_arm,
    .now = tp_ucp_now,
    .timer_start = tp_ucp_timer_start,
    .timer_stop = tp_ucp_timer_stop,
    .timer_next = tp_ucp_timer_next,
    .destroy = tp_ucp_destroy,
};

ucft_status_t tp_ucp_create(const tp_ucp_params_t *params, tp_t **tp_p)
{
    const ucft_log_t *log = params->log;
    ucp_config_t *cfg = NULL;
    ucs_status_t us;
    tp_ucp_t *tp;

    if (params->size < 1 || params->rank < 0 || params->rank >= params->size ||
        (uint64_t)params->size > UCFT_TAG_MAX_RANKS || params->lookup == NULL)
        return UCFT_ERR_INVALID_PARAM;
    tp = calloc(1, sizeof(*tp));
    if (tp == NULL)
        return UCFT_ERR_NO_MEMORY;
    tp_kept_init(&tp->kept);
    tp_kept_init(&tp->abandoned);
    tp->peers = calloc((size_t)params->size, sizeof(*tp->peers));
    if (tp->peers == NULL)
        goto err_free;
    for (int r = 0; r < params->size; r++)
        tp->peers[r].tp = tp;
    tp->super.ops = &tp_ucp_ops;
    tp->super.rank = params->rank;
    tp->super.size = params->size;
    tp->super.log = log;
    tp->lookup = params->lookup;
    tp->lookup_arg = params->lookup_arg;
    ucft_timerq_init(&tp->timers);

    us = ucp_config_read(NULL, NULL, &cfg);
    if (us != UCS_OK) {
        ucft_error(log, "ucp_config_read: %s", ucs_status_string(us));
        goto err_free;
    }
    tp_ucp_config_apply(cfg, params->keepalive_ns);
    if (getenv("UCX_RNDV_SEND_NBR_THRESH") != NULL)
        ucft_warn(log, "UCX_RNDV_SEND_NBR_THRESH is ignored: the corrected "
                       "collectives' messages are always sent eagerly");
    ucp_params_t pp = {
        .field_mask = UCP_PARAM_FIELD_FEATURES |
                      UCP_PARAM_FIELD_TAG_SENDER_MASK |
                      UCP_PARAM_FIELD_ESTIMATED_NUM_EPS,
        .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP,
        .tag_sender_mask = UCFT_TAG_SRC_MASK,
        .estimated_num_eps = (size_t)params->size,
    };
    us = ucp_init(&pp, cfg, &tp->context);
    ucp_config_release(cfg);
    if (us != UCS_OK) {
        ucft_error(log, "ucp_init: %s", ucs_status_string(us));
        goto err_free;
    }
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = params->serialized
                                                 ? UCS_THREAD_MODE_SERIALIZED
                                                 : UCS_THREAD_MODE_SINGLE};
    us = ucp_worker_create(tp->context, &wp, &tp->worker);
    if (us != UCS_OK) {
        ucft_error(log, "ucp_worker_create: %s", ucs_status_string(us));
        goto err_cleanup;
    }
    us = ucp_worker_get_efd(tp->worker, &tp->efd);
    if (us != UCS_OK) {
        ucft_error(log, "ucp_worker_get_efd: %s", ucs_status_string(us));
        goto err_worker;
    }
    us = ucp_worker_get_address(tp->worker, &tp->address, &tp->address_len);
    if (us != UCS_OK) {
        ucft_error(log, "ucp_worker_get_address: %s", ucs_status_string(us));
        goto err_worker;
    }
    /* A class of its own (tag.h): no receive of the owner matches it. */
    fifo_probe_init(
        &tp->probe, tp->worker,
        ucft_tag_make(UCFT_TAG_CLASS_PROBE, 0, (uint32_t)params->rank, 0),
        shm_enabled() ? params->probe_wait_ns : 0);
    tp->probe_timer.cb = probe_timer_cb;
    tp->probe_timer.arg = tp;
    tp->cut_off_cb = params->cut_off_cb;
    tp->cut_off_arg = params->cut_off_arg;
    *tp_p = &tp->super;
    return UCFT_OK;

err_worker:
    ucp_worker_destroy(tp->worker);
err_cleanup:
    ucp_cleanup(tp->context);
err_free:
    free(tp->peers);
    free(tp);
    return UCFT_ERR_TRANSPORT;
}
