/*
 * UCP backend: progress (deferred completions, queued peer errors, close
 * requests, timers, the FIFO probe), wakeup through the worker's event fd,
 * the clock and timers, and flush (T9).
 */
#include "transport/ucp/tp_ucp_priv.h"

#include "runtime/base/clock.h"

/*
 * Every completion UCX reports while the worker progresses is queued and
 * run after ucp_worker_progress has returned, never inside it. An owner's
 * callback sends (a collective forwards what it received), and inside
 * UCX 1.13's TCP transport that send would run in the middle of the
 * dispatch of one batch of socket events: if it goes to a peer that has
 * just died, send() fails, UCX marks the peer's TCP endpoint CLOSED and
 * takes it out of the event set, but the peer's own event (its hang-up)
 * is still in the batch, and dispatching it to the CLOSED endpoint aborts
 * the process (tcp_iface.c:307) or, once the endpoint is freed, crashes
 * it (docs/transport.md, "A kill can crash a survivor (TCP)").
 */
static unsigned progress(tp_ucp_t *tp, unsigned turns)
{
    tp_t *t = &tp->super;
    tp->progressing++;
    tp->deferring++;
    unsigned n = ucp_worker_progress(tp->worker);
    /* Spinning: poll again while nothing happened, and nothing waits for
     * the rest of this function (an endpoint error reported inside
     * ucp_worker_progress counts no event). */
    while (n == 0 && --turns > 0 && tp->deferred == NULL && tp->nerrors == 0)
        n = ucp_worker_progress(tp->worker);
    tp->deferring--;
    if (tp->probe.state == FIFO_PROBE_WAITING)
        tp_ucp__probe_tick(tp);
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
        n += tp_ucp__reap_closing(tp);
    if (tp->timers.count > 0)
        n += ucft__timerq_expire(&tp->timers, ucft_clock_now_ns(), 64);
    return n;
}

unsigned tp_ucp_progress(tp_t *t)
{
    return progress(TP(t), 1);
}

unsigned tp_ucp_progress_spin(tp_t *t, unsigned turns)
{
    return progress(TP(t), turns > 0 ? turns : 1);
}

int tp_ucp_fd(tp_t *t)
{
    return TP(t)->efd;
}

ucft_status_t tp_ucp_arm(tp_t *t)
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

uint64_t tp_ucp_now(tp_t *t)
{
    (void)t;
    return ucft_clock_now_ns();
}

ucft_status_t tp_ucp_timer_start(tp_t *t, ucft_timer_t *timer,
                                 uint64_t deadline)
{
    return ucft__timerq_add(&TP(t)->timers, timer, deadline);
}

void tp_ucp_timer_stop(tp_t *t, ucft_timer_t *timer)
{
    ucft__timerq_remove(&TP(t)->timers, timer);
}

uint64_t tp_ucp_timer_next(tp_t *t)
{
    return ucft__timerq_next(&TP(t)->timers);
}

/* Flushes the endpoints of the live peers one by one, not the worker: a
 * worker flush also waits for endpoints that UCX made on its own (wire-up
 * replies) to peers that have died since, and those never complete. Each
 * request still open at the deadline is handed to the closing list, where
 * progress and destroy reap it (a flush request cannot be cancelled). */
ucft_status_t tp_ucp_flush(tp_t *t, uint64_t timeout_ns)
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
            tp_ucp__keep_closing(tp, r);
            continue;
        }
        if (us != UCS_OK)
            ucft_debug(t->log, "flush of the endpoint to rank %d: %s", rank,
                       ucs_status_string(us));
        ucp_request_free(r);
    }
    return st;
}
