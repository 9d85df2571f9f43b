/*
 * The rings of ring_bw.c (private to collectives/): the per-lane and
 * per-operation states, and the entry points a composite algorithm
 * (allreduce_ring_corrected.c) runs them through.
 */
#ifndef UCFT_COLL_RING_BW_H
#define UCFT_COLL_RING_BW_H

#include "baseline.h"

#include <stddef.h>
#include <stdint.h>

enum { RB_ALLGATHER, RB_REDUCE_SCATTER, RB_ALLREDUCE, RB_BCAST };

/* Lanes: a vector whose blocks are larger than RB_SEG bytes is split into
 * up to RB_LANES lanes, each an independent ring (its own requests, its
 * own message kinds) over its part of every block, so that the parts
 * move concurrently: a lane's step k + 1 starts as soon as that lane's
 * step k is done, while the other lanes' are still in flight (pipelining
 * across steps), and a lane's combine overlaps the others' transfers. */
#define RB_LANES 4
#define RB_SEG   (32u << 10)

struct ring_op;

typedef struct ring_bw {
    struct ring_op *op; /* the operation this lane is part of */
    unsigned kind;      /* data kind (error: kind + 1) */
    size_t base;        /* block b: base + b stride + min(b, r) es bytes */
    size_t stride;
    size_t vend; /* broadcast: the end of the lane's bytes */
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf;  /* the n blocks (allgather: then presence bytes) */
    unsigned char *rbuf; /* reduce-scatter phase: one block's receive slot */
    tp_req_t rreq, sreq;
    size_t es, q, r; /* element size; block b: q + (b < r) elements */
    int v, n, left, right, root;
    int parent;     /* broadcast: the scatter parent (job rank), or -1 */
    unsigned cmask; /* broadcast: scatter children v + m, m in cmask, still
                       to send (largest first) */
    unsigned nsteps, rs_steps; /* steps; the first rs_steps combine */
    unsigned step, nsent;      /* current step; data sends posted */
    ucft_status_t status;      /* INPROGRESS until done */
    uint8_t mode, posted, got, mismatch;
    uint8_t rbusy, sbusy, failed, err_sent, done, cleaned;
    uint8_t rdead;      /* a send to the right neighbour failed: it is dead */
    uint8_t scattering; /* broadcast: in the scatter phase */
    uint8_t scat_got;   /* broadcast: the parent's blocks are in */
} ring_bw_t;

/* The operation: its lanes. */
typedef struct ring_op {
    tp_t *tp;
    const coll_args_t *args;
    unsigned char *buf;
    size_t vbytes; /* the n blocks' bytes (allgather: presence bytes after) */
    unsigned nlanes, ndone;
    ucft_status_t status; /* INPROGRESS until every lane is done */
    uint8_t mode, in_start;
    /* Last: init clears the fields above (a recycled state keeps nothing
     * of its last run) and each lane it uses. */
    ring_bw_t lane[RB_LANES];
} ring_op_t;

/* rb_init for one of the modes above; the others are the coll_op_ops_t
 * entries of the rings. */
ucft_status_t rb_init(void *state, tp_t *tp, const coll_args_t *a, void *buf,
                      int mode);
ucft_status_t rb_start(void *state);
ucft_status_t rb_test(const void *state);
void rb_on_failure(void *state, int rank);
void rb_cleanup(void *state);
int rb_idle(const void *state);

#endif
