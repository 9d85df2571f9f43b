/*
 * The oracle of the simulator driver: what every rank's input is and
 * whether its output is right, per operation (bcast, reduce, allreduce,
 * ring; a barrier has no data). Kept out of libucft: the algorithms
 * never need it, only the drivers that check them (simrun, simseq, the
 * simulator tests).
 */
#ifndef UCFT_SIMRUN_ORACLE_H
#define UCFT_SIMRUN_ORACLE_H

#include "collectives/coll_op.h"

#include <stdint.h>

typedef struct coll_oracle {
    /* Writes rank's input into buf. NULL: no data. */
    void (*fill)(void *buf, const coll_args_t *args, int rank, int size);
    /* 1 when rank's output is correct. `dead` (size bytes, 1 = the rank
     * died at some point of the run) lets a check apply failure
     * semantics, e.g. "every live rank's value exactly once, a dead
     * rank's entirely or not at all". NULL: nothing to check. */
    int (*check)(const void *buf, const coll_args_t *args, int rank, int size,
                 const uint8_t *dead);
} coll_oracle_t;

/* The oracle of `op`'s operation (never NULL: an operation without data
 * has one with NULL fill and check). */
const coll_oracle_t *coll_oracle_of(const coll_op_ops_t *op);

/* Deterministic test payload byte i for a given rank and instance. */
static inline unsigned char coll_pattern(const coll_args_t *args, int rank,
                                         size_t i)
{
    return (unsigned char)((unsigned)rank * 131u + args->seq * 7u +
                           (unsigned)i * 31u + 1u);
}

/* The encoding of the reducing collectives (oracle_reduce.c). With an
 * integer sum of count >= size elements, rank r contributes 1 at element r
 * (and at size + r when count >= 2 size): the output counts how often each
 * rank's value was included, so a check sees duplicates and partial
 * inclusion. Otherwise rank r contributes a small deterministic value per
 * element and the check accepts exactly the reductions over "every live
 * rank plus any subset of the dead ones" (subsets enumerated up to 12
 * dead ranks; sums in closed form at any size, other operations up to
 * 4096 ranks). */
void rc_fill(void *buf, const coll_args_t *args, int rank, int size);
int rc_check_root(const void *buf, const coll_args_t *args, int rank, int size,
                  const uint8_t *dead);
int rc_check_all(const void *buf, const coll_args_t *args, int rank, int size,
                 const uint8_t *dead);

/* Allgather and reduce-scatter (oracle_gather.c). */
void ag_fill(void *buf, const coll_args_t *args, int rank, int size);
int ag_check(const void *buf, const coll_args_t *args, int rank, int size,
             const uint8_t *dead);
int rs_check(const void *buf, const coll_args_t *args, int rank, int size,
             const uint8_t *dead);
/* Agreement (oracle_agree.c): rank r clears bit r of the value words. */
void agree_fill(void *buf, const coll_args_t *args, int rank, int size);
int agree_check(const void *buf, const coll_args_t *args, int rank, int size,
                const uint8_t *dead);
/* The approximate allreduce (oracle_gossip.c): rank's input element e,
 * and the exact sum (mean if args->gossip->mean) over the ranks not
 * marked in dead (NULL: all). */
double gossip_oracle_input(const coll_args_t *args, int rank, size_t e);
double gossip_oracle_exact(const coll_args_t *args, int size,
                           const uint8_t *dead, size_t e);
extern const coll_oracle_t coll_oracle_gossip;

#endif
