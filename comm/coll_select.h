/*
 * Size-based algorithm selection (UCFT_<OP>_ALG): an operation's variable
 * names one algorithm ("corrected"), a table of payload sizes and
 * algorithms ("0:recdbl,16k:ring": from 0 bytes recursive doubling, from
 * 16 KiB the ring), or the preset "fast" (the table of the fastest
 * fault-aware baselines, cm_sel_fast). Sizes are the bytes of the whole
 * vector (allgather, reduce-scatter: all n blocks); suffixes k, m, g.
 */
#ifndef UCFT_COMM_COLL_SELECT_H
#define UCFT_COMM_COLL_SELECT_H

#include "collectives/coll_op.h"

#include <stddef.h>

#define CM_SEL_MAX 8

typedef struct cm_sel {
    unsigned n; /* entries, ascending `from`, the first from 0 */
    size_t from[CM_SEL_MAX];
    const coll_op_ops_t *ops[CM_SEL_MAX];
} cm_sel_t;

/* The preset "fast" of operation `op` ("bcast", ...), or NULL. */
const char *cm_sel_fast(const char *op);

/* Parses `spec` for operation `op` into *t. UCFT_OK, or
 * UCFT_ERR_INVALID_PARAM with the reason in err. */
ucft_status_t cm_sel_parse(const char *spec, const char *op, cm_sel_t *t,
                           char *err, size_t errlen);

/* The algorithm for a payload of `len` bytes. */
static inline const coll_op_ops_t *cm_sel_pick(const cm_sel_t *t, size_t len)
{
    unsigned i = t->n - 1;
    while (i > 0 && len < t->from[i])
        i--;
    return t->ops[i];
}

/* The largest state and buffer multiple of the table's algorithms. */
size_t cm_sel_state_size(const cm_sel_t *t);
unsigned cm_sel_buf_mult(const cm_sel_t *t);

#endif
