/*
 * The UCP backend of the transport interface: one UCP context and worker per
 * tp_t, endpoints created lazily on first send (peer error handling mode),
 * tagged send/recv, wakeup through the worker's event fd.
 *
 * This header is all that creating the backend needs, and it includes no
 * UCX header: everything else is asked through the tp_t's operations
 * (transport/transport.h). UCX-level diagnostics, for tools and tests that
 * work with UCX themselves, are in tp_ucp_diag.h.
 */
#ifndef UCFT_TP_UCP_H
#define UCFT_TP_UCP_H

#include "transport/transport.h"

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
    /* Mend a blocked FIFO (fifo_probe.h) instead of reporting it. */
    int shm_mend;
    /* Called from progress when the probe finds the FIFO blocked (and
     * could not mend it): this
     * worker will never again receive from another process of its node.
     * NULL: the error is only logged. */
    void (*cut_off_cb)(void *arg);
    void *cut_off_arg;
} tp_ucp_params_t;

ucft_status_t tp_ucp_create(const tp_ucp_params_t *params, tp_t **tp_p);

/* Fault injection (UCFT_INJECT hold=1, docs/launcher.md): claims one slot
 * of the shared-memory receive FIFO of every other process mapped into
 * this one, and writes none, as a process killed between claiming a slot
 * and writing it does (docs/transport.md). The caller dies next. Returns
 * the number of FIFOs held (a full one is retried for up to 1 s). */
int tp_ucp_hold_fifo_slots(void);

#endif
