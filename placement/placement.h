/*
 * Placement: which rank holds which tree position (coll_map_t in
 * coll_op.h), computed once per communicator, identically at every rank,
 * from data every rank has (the locus of every rank).
 *
 * A locus is where a rank runs: its node (the failure domain: a crashed
 * host takes all its ranks) and, inside the node, the package, NUMA node
 * and core of its binding (locality only). Ids are small integers that are
 * comparable between ranks of one node (hwloc logical indexes); -1 means
 * unknown or unbound (an unbound rank shares one domain with the other
 * unbound ranks of its node below the node level).
 *
 * Policies (UCFT_PLACEMENT):
 *  interleave  (default) recursive round robin: position p goes to node
 *              p mod D (D nodes), and inside each node the ranks it
 *              receives are themselves interleaved over packages, NUMA
 *              nodes and cores. With nodes of equal size, ring
 *              neighbours, up-correction group members and allreduce
 *              candidate roots sit on different nodes (D >= f + 1); when
 *              D is a power of two the deep levels of binomial trees stay
 *              inside a node (otherwise every binomial edge crosses
 *              nodes).
 *  locality    contiguous blocks: ranks sorted by (node, package, numa,
 *              core, rank). Most tree edges and ring neighbours are local;
 *              one node crash can take a whole up-correction group.
 *  identity    position = rank (what ucft did before placement).
 * The guarantees each policy gives are stated next to placement_compute()
 * in placement.c and in docs/placement.md.
 */
#ifndef UCFT_PLACEMENT_PLACEMENT_H
#define UCFT_PLACEMENT_PLACEMENT_H

#include "ucft.h"

#include <stdint.h>

typedef struct placement_locus {
    int32_t node;    /* node id (PMIx PMIX_NODEID); -1 unknown */
    int32_t package; /* hwloc logical index; -1 unbound / unknown */
    int32_t numa;
    int32_t core;
} placement_locus_t;

typedef enum placement_policy {
    PLACEMENT_INTERLEAVE = 0,
    PLACEMENT_LOCALITY = 1,
    PLACEMENT_IDENTITY = 2,
} placement_policy_t;

/* "interleave" | "locality" | "identity" -> policy; UCFT_ERR_INVALID_PARAM
 * for anything else. */
ucft_status_t placement_policy_parse(const char *name,
                                     placement_policy_t *policy);
const char *placement_policy_name(placement_policy_t policy);

/* Fill rank_at[pos] and pos_of[rank] (n entries each) for `policy` from
 * the loci of ranks 0..n-1. Deterministic: equal inputs give equal maps
 * at every rank. UCFT_ERR_INVALID_PARAM on n < 1 or NULL arrays. */
ucft_status_t placement_compute(placement_policy_t policy,
                                const placement_locus_t *loci, int n,
                                int *rank_at, int *pos_of);

/* The one other rank bound to the core of `rank` (same known node, same
 * known core), or -1: `rank` is unbound, alone on its core, shares it with
 * two or more ranks, or the arguments are bad. Two such ranks take turns
 * on one core (runtime/progress.c). O(n). */
int placement_core_mate(const placement_locus_t *loci, int n, int rank);

/* Package / NUMA / core of a PMIx locality string
 * ("SK0:L30:L20:L10:CR0:HT0:NM0", the fields are hwloc bitmap lists; a
 * field naming several objects, e.g. "CR0-3", gives -1 for that level and
 * below). NULL or "" = unbound: package, numa and core become -1. The node
 * field is left alone. UCFT_ERR_INVALID_PARAM on a malformed string (locus
 * untouched). Implemented with hwloc (placement/topo_hwloc.c). */
ucft_status_t placement_locus_parse(const char *locality,
                                    placement_locus_t *locus);

#endif
