/*
 * The raw UCP baseline of `ucft-bench pt2pt`: a UCP context, worker and
 * endpoint of the bench's own, set up exactly as ucft's UCP transport sets
 * up its own (transport/ucp/tp_ucp_create.c, endpoints in tp_ucp_ep.c),
 * with the worker address exchanged through PMIx, and waiting the way
 * UCFT_WAIT asks.
 */
#ifndef UCFT_TOOLS_BENCH_RAW_UCP_H
#define UCFT_TOOLS_BENCH_RAW_UCP_H

#include "tools/bench/pt2pt.h"

typedef struct raw_ucp raw_ucp_t;

/* Collective over the 2 ranks (PMIx fence). `max_window` bounds the stream
 * window. Returns 0, or -1 after printing why. */
int raw_ucp_create(int rank, int size, const bench_wait_cfg_t *wait,
                   int max_window, raw_ucp_t **out);

/* Closes the endpoint (flushing, while the peer does the same), fences
 * through PMIx while progressing, releases everything. Collective. */
void raw_ucp_destroy(raw_ucp_t *u);

/* Fills `path` with the pingpong/stream entry points of the baseline. */
void raw_ucp_path(raw_ucp_t *u, pt2pt_path_t *path);

/* The UCX transport of the endpoint's first active-message lane, e.g.
 * "sysv/memory" or "tcp/lo" ("?" when unknown). */
void raw_ucp_transport(raw_ucp_t *u, char *buf, size_t len);

#endif
