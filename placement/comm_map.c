/*
 * The placement map of a communicator: the loci of its ranks (where they
 * run, placement/locality.c) become, through UCFT_PLACEMENT, the map from
 * tree positions to ranks (placement/placement.h) that every collective
 * of the communicator gets in coll_args_t.map. Computed once when the
 * communicator is made (world: at init, after the start-up fence),
 * identically at every rank (same loci, deterministic placement_compute).
 */
#include "placement/comm_map.h"

#include <stdlib.h>

/* UCFT_PLACEMENT's choices are the policies, in enum order. */
_Static_assert(PLACEMENT_INTERLEAVE == 0 && PLACEMENT_LOCALITY == 1 &&
                   PLACEMENT_IDENTITY == 2,
               "UCFT_PLACEMENT choices follow placement_policy_t");

static const char *source_name(locality_source_t s)
{
    return s == RT_LOCALITY_NODEID     ? "PMIX_NODEID"
           : s == RT_LOCALITY_HOSTNAME ? "hostnames"
                                       : "singleton";
}

ucft_status_t place_map_init(place_map_t *pm, boot_t *boot,
                             const ucft_log_t *log, int policy, int rank, int n)
{
    int bound = 0;
    locality_source_t source;
    ucft_status_t st;

    pm->policy = (placement_policy_t)policy;
    pm->loci = calloc((size_t)n, sizeof(*pm->loci));
    pm->pub_loci = calloc((size_t)n, sizeof(*pm->pub_loci));
    pm->rank_at = calloc((size_t)n, sizeof(*pm->rank_at));
    pm->pos_of = calloc((size_t)n, sizeof(*pm->pos_of));
    if (pm->loci == NULL || pm->pub_loci == NULL || pm->rank_at == NULL ||
        pm->pos_of == NULL)
        return UCFT_ERR_NO_MEMORY;
    st = locality_gather(boot, log, pm->loci, &pm->nnodes, &source);
    if (st != UCFT_OK)
        return st;
    st = placement_compute(pm->policy, pm->loci, n, pm->rank_at, pm->pos_of);
    if (st != UCFT_OK) {
        ucft_error(log, "placement '%s' of %d ranks failed: %s",
                   placement_policy_name(pm->policy), n,
                   ucft_status_string(st));
        return st;
    }
    for (int r = 0; r < n; r++) {
        pm->pub_loci[r] = (ucft_locus_t){pm->loci[r].node, pm->loci[r].package,
                                         pm->loci[r].numa, pm->loci[r].core};
        bound += pm->loci[r].core >= 0;
    }
    pm->map = (coll_map_t){.n = n, .rank = pm->rank_at, .pos = pm->pos_of};
    pm->mate = placement_core_mate(pm->loci, n, rank);
    ucft_debug(log,
               "placement %s: %d ranks on %d node(s) (ids from %s), %d "
               "bound to a core; this rank at position %d, core shared "
               "with rank %d (-1: none, several, or unbound)",
               placement_policy_name(pm->policy), n, pm->nnodes,
               source_name(source), bound, pm->pos_of[rank], pm->mate);
    return UCFT_OK;
}

void place_map_cleanup(place_map_t *pm)
{
    free(pm->loci);
    free(pm->pub_loci);
    free(pm->rank_at);
    free(pm->pos_of);
    pm->loci = NULL;
    pm->pub_loci = NULL;
    pm->rank_at = pm->pos_of = NULL;
    pm->map = (coll_map_t){0};
}

ucft_status_t place_map_subset(place_map_t *pm, const place_map_t *parent,
                               const int *idx, int n)
{
    pm->policy = parent->policy;
    pm->mate = -1;
    pm->loci = calloc((size_t)n, sizeof(*pm->loci));
    pm->rank_at = calloc((size_t)n, sizeof(int));
    pm->pos_of = calloc((size_t)n, sizeof(int));
    if (!pm->loci || !pm->rank_at || !pm->pos_of)
        return UCFT_ERR_NO_MEMORY;
    if (parent->loci == NULL || parent->map.n == 0) { /* none: identity */
        for (int r = 0; r < n; r++)
            pm->rank_at[r] = pm->pos_of[r] = r;
    } else {
        for (int r = 0; r < n; r++)
            pm->loci[r] = parent->loci[idx[r]];
        ucft_status_t st =
            placement_compute(pm->policy, pm->loci, n, pm->rank_at, pm->pos_of);
        if (st != UCFT_OK)
            return st;
    }
    pm->map = (coll_map_t){.n = n, .rank = pm->rank_at, .pos = pm->pos_of};
    return UCFT_OK;
}
