/*
 * UCP backend: endpoints. Made on first use from the owner's lookup (peer
 * error handling mode); an endpoint error is queued for peer_error_cb from
 * progress; closed by force without waiting (the close requests are reaped
 * by progress and destroy). Also watch, which makes one (peer_failed and
 * disconnect, which close one: tp_ucp_peer.c).
 */
#include "transport/ucp/tp_ucp_priv.h"

#include "runtime/base/clock.h"

#include <stdlib.h>

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

ucft_status_t tp_ucp__ep_get(tp_ucp_t *tp, int rank, ucp_ep_h *ep_p)
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
    peer->ep_tried = 1;
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
            if (us == UCS_ERR_SHMEM_SEGMENT && !tp->shm_gone_told) {
                /* UCX has just logged its own errors (`shmat(...)
                 * failed`, `mm ep failed to connect to remote FIFO`):
                 * say once what they mean. */
                tp->shm_gone_told = 1;
                ucft_warn(tp->super.log,
                          "rank %d's shared memory is gone (its process "
                          "ended): UCX's errors about attaching it just "
                          "before (shmat, remote FIFO) are expected after "
                          "a death, nothing else is wrong; said once",
                          rank);
            }
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

void tp_ucp_watch(tp_t *t, int rank)
{
    ucp_ep_h ep;
    if (rank >= 0 && rank < t->size)
        tp_ucp__ep_get(TP(t), rank, &ep);
}

/* Keeps a UCX request that must end before the worker goes (an endpoint
 * close, a flush that outlived its bound): later progress calls reap it,
 * destroy waits for the rest. */
void tp_ucp__keep_closing(tp_ucp_t *tp, void *r)
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
void tp_ucp__ep_close(tp_ucp_t *tp, ucp_ep_h ep)
{
    ucp_request_param_t p = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                             .flags = UCP_EP_CLOSE_FLAG_FORCE};
    void *r = ucp_ep_close_nbx(ep, &p);
    if (r != NULL && !UCS_PTR_IS_ERR(r))
        tp_ucp__keep_closing(tp, r);
}

/* Frees the close requests that have completed; returns how many. */
unsigned tp_ucp__reap_closing(tp_ucp_t *tp)
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
