/*
 * Pretend nodes for the simulator: ranks split into K nodes (failure
 * domains) the way a launcher would map them, and the placement map
 * (placement/placement.h) computed from those loci. Used by ucft-sim and
 * the sim tests; a driver helper, not algorithm code.
 *
 *  map-by slot: blocks, ranks 0..ppn-1 on node 0 (node = r * K / N, so
 *               block sizes differ by at most one when K does not divide N)
 *  map-by node: round robin, rank r on node r mod K
 *
 * Every rank's locus is {node, package 0, NUMA 0, core = its index among
 * the ranks of its node} (one rank per core).
 */
#ifndef UCFT_SIMRUN_SIMNODES_H
#define UCFT_SIMRUN_SIMNODES_H

#include "collectives/coll_op.h"
#include "placement/placement.h"

#include <stdint.h>

typedef enum simnodes_by {
    SIMNODES_BY_SLOT = 0,
    SIMNODES_BY_NODE = 1,
} simnodes_by_t;

typedef struct simnodes {
    int n, nodes;
    uint32_t *node_of; /* n entries: give to sim_params_t.domain */
    int *rank_at;      /* placement, n entries (after simnodes_place) */
    int *pos_of;
    coll_map_t map; /* give &map to coll_args_t.map (after _place) */
} simnodes_t;

/* "slot" | "node" -> by; UCFT_ERR_INVALID_PARAM otherwise. */
ucft_status_t simnodes_by_parse(const char *text, simnodes_by_t *by);

/* Splits n ranks into `nodes` nodes (1 <= nodes <= n), no placement yet.
 * UCFT_ERR_INVALID_PARAM for bad counts. */
ucft_status_t simnodes_init(simnodes_t *s, int n, int nodes, simnodes_by_t by);
/* Computes the placement of `policy` from the loci (placement_compute). */
ucft_status_t simnodes_place(simnodes_t *s, placement_policy_t policy);
void simnodes_cleanup(simnodes_t *s);

/* The lowest rank on `node`, or -1 (no such node). */
int simnodes_first_rank(const simnodes_t *s, int node);

#endif
