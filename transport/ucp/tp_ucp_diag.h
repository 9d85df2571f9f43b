/*
 * Diagnostics and settings of the UCP backend below the transport
 * interface, for tools and tests that work with UCX themselves (the raw-UCP
 * baselines, ucft-shmkill). It includes UCX; the library outside
 * transport/ucp/ never includes it (scripts/check_layers.sh).
 */
#ifndef UCFT_TP_UCP_DIAG_H
#define UCFT_TP_UCP_DIAG_H

#include "transport/ucp/tp_ucp.h"
#include "transport/ucp/fifo_probe.h"

#include <ucp/api/ucp.h>

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
/* 1 while a self-probe is due or waiting for its verdict; 0 after a
 * failure of a peer that never wrote to this worker (no probe). */
int tp_ucp_fifo_probe_pending(tp_t *tp);
/* Slots the last self-probe mended (fifo_probe.h); why it did not mend a
 * blocked FIFO (NULL: it did not try). */
int tp_ucp_fifo_mends(tp_t *tp);
const char *tp_ucp_fifo_unmended(tp_t *tp);

/* Name of the UCX transport(s) used to reach `rank` ("sysv/memory",
 * "tcp/lo", ...), or "" when not connected; for diagnostics and benches. */
void tp_ucp_peer_transport(tp_t *tp, int rank, char *buf, size_t len);

#endif
