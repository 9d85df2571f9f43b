/* Configuration of the communicator layer (UCFT_* variables; `ucft-info
 * -c`), read when the layer is made. */
#ifndef UCFT_COMM_VARIABLES_H
#define UCFT_COMM_VARIABLES_H

#include "runtime/base/config.h"

#include <stddef.h>

typedef struct cm_config {
    int f;                  /* failures tolerated by collectives */
    size_t coll_rndv_min;   /* lazy copies from this payload size (0: off) */
    size_t coll_direct_min; /* blocking calls in the caller's buffers from
                               this payload size (0: off) */
    unsigned coll_batch;    /* corrected-batched: copies per message */
    unsigned reduce_window; /* reduces between flow-control barriers (0: off) */
    int placement;          /* placement_policy_t (UCFT_PLACEMENT) */
    /* bcast, reduce, allreduce, barrier, allgather, reduce_scatter */
    const char *alg[6];
    const char *inject;   /* UCFT_INJECT specs (comm/coll_inject.h) */
    int checksum;         /* UCFT_CHECKSUM (collectives/coll_csum.h) */
    int tree_repair;      /* UCFT_TREE_REPAIR (comm/repair.h) */
    unsigned tree_window; /* UCFT_TREE_REPAIR_WINDOW */
} cm_config_t;

extern const ucft_config_table_t cm_config_table;

/* The variables every rank must set alike, as NAME=value lines (the
 * environment's value or the default; malloc'ed, the caller frees; NULL:
 * no memory), for ucft_init's check across the job (runtime/jobwide.h). */
char *cm_config_jobwide(void);

#endif
