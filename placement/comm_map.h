/* The placement map of a communicator (placement/comm_map.c). */
#ifndef UCFT_PLACEMENT_COMM_MAP_H
#define UCFT_PLACEMENT_COMM_MAP_H

#include "ucft.h"
#include "bootstrap/bootstrap.h"
#include "collectives/coll_op.h"
#include "placement/locality.h"
#include "placement/placement.h"

typedef struct place_map {
    placement_policy_t policy;
    int nnodes;
    placement_locus_t *loci; /* [size] */
    ucft_locus_t *pub_loci;  /* [size]: the same, for the public query */
    int *rank_at, *pos_of;   /* [size] */
    coll_map_t map;          /* points at rank_at and pos_of */
    int mate; /* placement_core_mate of this rank, or -1 (coll_args_t) */
} place_map_t;

/* Gathers the loci of the `size` ranks of the job from what the start-up
 * fence collected, and computes the map under `policy` (UCFT_PLACEMENT).
 * On error the map may be partly filled: place_map_cleanup frees it. */
ucft_status_t place_map_init(place_map_t *pm, boot_t *boot,
                             const ucft_log_t *log, int policy, int rank,
                             int size);
void place_map_cleanup(place_map_t *pm);
/* The map of n of `parent`'s ranks (idx[r]: rank r's index in parent):
 * parent's policy over their loci, or the identity where parent has none;
 * mate -1, no public loci (the caller's). On error: partly filled, as
 * above. */
ucft_status_t place_map_subset(place_map_t *pm, const place_map_t *parent,
                               const int *idx, int n);

#endif
