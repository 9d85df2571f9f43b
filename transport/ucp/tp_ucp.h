/*
 * The UCP backend of the transport interface: one UCP context and worker per
 * tp_t, endpoints created lazily on first send (peer error handling mode),
 * tagged send/recv, wakeup through the worker's event fd.
 */
#ifndef UCFT_TP_UCP_H
#define UCFT_TP_UCP_H

#include "transport/transport.h"
#include "transport/ucp/fifo_probe.h"

#include <ucp/api/ucp.h>

/* Looks up the worker address of `rank`; on success *addr is a malloc'ed
 * copy that the backend frees. Called from the first send to `rank`.
 * UCFT_ERR_PROC_FAILED: the rank has no address (it is gone); reported
 * through peer_error_cb like an unreachable peer. Must not block. */
typedef ucft_status_t (*tp_ucp_lookup_cb_t)(void *arg, int rank, void **addr,
                                            size_t *len);

typedef struct tp_ucp_params {
    int rank;
    int size;
    const ucft_log_t *log;
    tp_ucp_lookup_cb_t lookup;
    void *lookup_arg;
    /* UCX keepalive interval for peer-failure checks (0: UCX's default),
     * applied unless UCX_KEEPALIVE_INTERVAL is set in the environment. */
    uint64_t keepalive_ns;
    /* The worker is driven by a thread other than the one that created
     * the context (the heartbeat thread): ask UCX for serialized mode, so
     * that it locks against its own async thread. */
    int serialized;
    /* The self-probe (fifo_probe.h): after each peer failure, check that
     * this worker's shared-memory FIFO still delivers, waiting this long
     * for the probe. 0, or shared memory off in UCX_TLS: never probe. */
    uint64_t probe_wait_ns;
    /* Called from progress when the probe finds the FIFO blocked: this
     * worker will never again receive from another process of its node.
     * NULL: the error is only logged. */
    void (*cut_off_cb)(void *arg);
    void *cut_off_arg;
} tp_ucp_params_t;

ucft_status_t tp_ucp_create(const tp_ucp_params_t *params, tp_t **tp_p);

/* Applies ucft's UCX settings to `cfg` (MM_ERROR_HANDLING when shared
 * memory is enabled, the keepalive interval, shared-memory receive
 * buffers grown by 16), unless the user set them in
 * the environment. Also used by baselines that must run UCX exactly as
 * ucft does. */
void tp_ucp_config_apply(ucp_config_t *cfg, uint64_t keepalive_ns);

/* Creates the endpoint to `rank` now instead of on first send. */
ucft_status_t tp_ucp_connect(tp_t *tp, int rank);

/* The state of the FIFO self-probe (fifo_probe.h): IDLE before any
 * failure, then WAITING, ARRIVED or BLOCKED. For diagnostics and tests. */
fifo_probe_state_t tp_ucp_fifo_state(tp_t *tp);

/* Name of the UCX transport(s) used to reach `rank` ("sysv/memory",
 * "tcp/lo", ...), or "" when not connected; for diagnostics and benches. */
void tp_ucp_peer_transport(tp_t *tp, int rank, char *buf, size_t len);

#endif
