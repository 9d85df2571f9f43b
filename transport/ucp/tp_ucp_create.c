/*
 * UCP backend: create and destroy, the table of operations, and ucft's UCX
 * settings (tp_ucp_config_apply, also used by the raw-UCP baselines).
 */
#include "transport/ucp/tp_ucp_diag.h"
#include "transport/ucp/tp_ucp_priv.h"

#include "runtime/base/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int shm_enabled(void)
{
    const char *tls = getenv("UCX_TLS");
    if (tls == NULL || *tls == '\0' || strstr(tls, "all") != NULL)
        return 1;
    return strstr(tls, "shm") || strstr(tls, "sm") || strstr(tls, "posix") ||
           strstr(tls, "sysv") || strstr(tls, "mm");
}

/* Whether UCX_TLS lets UCX use TCP (UCX warns about a TCP setting that no
 * interface uses). */
static int tcp_enabled(void)
{
    const char *tls = getenv("UCX_TLS");
    if (tls == NULL || *tls == '\0' || strstr(tls, "all") != NULL)
        return 1;
    if (*tls == '^') /* a list of transports to leave out */
        return strstr(tls, "tcp") == NULL;
    return strstr(tls, "tcp") != NULL;
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
    /* UCX 1.13's TCP transport handles one socket event per epoll_wait
     * instead of up to 16. Handling one event can close another peer's TCP
     * endpoint (a send to it, made by UCX itself inside the handler, fails
     * because that peer just died), and a later event of the same batch
     * for that endpoint then aborts the process (docs/transport.md, "A
     * kill can crash a survivor (TCP)"). With one event per batch nothing
     * is stale. Costs one epoll_wait per ready socket. */
    if (tcp_enabled() && getenv("UCX_TCP_MAX_POLL") == NULL)
        ucp_config_modify(cfg, "MAX_POLL", "1"); /* the TCP iface's key */
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
    ucft__timerq_remove(&tp->timers, &tp->probe_timer);
    fifo_probe_cleanup(&tp->probe);
    drain_unexpected(tp);
    for (int r = 0; r < t->size; r++) {
        if (tp->peers[r].state == PEER_UP)
            tp_ucp__ep_close(tp, tp->peers[r].ep);
    }
    /* Every close request must end before the worker goes (bounded). */
    uint64_t end = ucft_clock_now_ns() + 2 * UCFT_NSEC_PER_SEC;
    while (tp->nclosing > 0 && ucft_clock_now_ns() < end) {
        ucp_worker_progress(tp->worker);
        tp_ucp__reap_closing(tp);
    }
    /* Run completions still queued so that owners see every request end. */
    tp_ucp_progress(t);
    drain_unexpected(tp); /* what arrived while the endpoints closed */
    tp_ucp__ctrl_cleanup(tp);
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
    ucft__timerq_cleanup(&tp->timers);
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
    .progress_spin = tp_ucp_progress_spin,
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
    tp_kept_init(&tp->ctrl_unexp);
    tp->ctrl_tail = &tp->ctrl_posted;
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
    ucft__timerq_init(&tp->timers);

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
        /* AM: control messages (tp_ucp_ctrl.c). */
        .features = UCP_FEATURE_TAG | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
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
    us = tp_ucp__ctrl_init(tp);
    if (us != UCS_OK) {
        ucft_error(log, "ucp_worker_set_am_recv_handler: %s",
                   ucs_status_string(us));
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
        shm_enabled() ? params->probe_wait_ns : 0, params->shm_mend);
    tp->probe_timer.cb = tp_ucp__probe_timer_cb;
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
