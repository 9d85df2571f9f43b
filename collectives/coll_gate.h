/*
 * The majority gate (coll_args_t.gate; collectives/coll_gate.c): a rank
 * hands its result over only once the ranks holding the same result cover
 * the quorum. Used by the corrected allreduce family (reduce_corrected.c).
 * Private to collectives/.
 */
#ifndef UCFT_COLL_GATE_H
#define UCFT_COLL_GATE_H

#include "coll_op.h"

#include <stddef.h>

typedef struct coll_gate_run coll_gate_run_t;

/* Called once with the verdict: UCFT_OK (hand the result over), or the
 * status to end with; may run inside coll_gate_join. */
typedef void (*coll_gate_done_t)(void *arg, ucft_status_t st);

/* This rank's part of an instance with a->gate != NULL ended with `st`:
 * joins the gate with the result's bytes (res, len) when st is UCFT_OK,
 * with nothing otherwise (a live rank must join: the others wait for it).
 * The gate's corrected allreduce uses attempt numbers kind_base on (of
 * the corrected-reduce kinds, under a->seq); dead[ndead]: the failures
 * this rank knows. *slot receives the gate, and is cleared when the gate
 * frees itself (idle after coll_gate_cleanup). On an error nothing runs
 * and `done` is not called (logged when the kinds do not suffice:
 * UCFT_ERR_NOT_SUPPORTED). */
ucft_status_t coll_gate_join(coll_gate_run_t **slot, tp_t *tp,
                             const coll_args_t *a, unsigned kind_base,
                             const void *res, size_t len, ucft_status_t st,
                             const int *dead, unsigned ndead,
                             coll_gate_done_t done, void *arg);
void coll_gate_failure(coll_gate_run_t *g, int rank);
void coll_gate_cleanup(coll_gate_run_t *g);
int coll_gate_idle(const coll_gate_run_t *g);
unsigned coll_gate_stale(const coll_gate_run_t *g, unsigned *kinds,
                         unsigned max);
void coll_gate_destroy(coll_gate_run_t *g);
/* For reduce_corrected.c: the gate's own instance went idle after its
 * cleanup (rc_state_t.gate_self). */
void coll_gate_release(coll_gate_run_t *g);

#endif
