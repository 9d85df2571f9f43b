/*
 * Placement of the world communicator: the loci of all ranks (where they
 * run, runtime/locality.c) become, through UCFT_PLACEMENT, the map from
 * tree positions to ranks (collectives/placement.h) that every collective
 * of the communicator gets in coll_args_t.map. Computed once at init, after
 * the start-up fence, identically at every rank (same loci, deterministic
 * placement_compute).
 */
#include "runtime/context.h"

#include <stdlib.h>

/* rt_config's UCFT_PLACEMENT choices are the policies, in enum order. */
_Static_assert(PLACEMENT_INTERLEAVE == 0 && PLACEMENT_LOCALITY == 1 &&
                   PLACEMENT_IDENTITY == 2,
               "UCFT_PLACEMENT choices follow placement_policy_t");

static const char *source_name(rt_locality_source_t s)
{
    return s == RT_LOCALITY_NODEID     ? "PMIX_NODEID"
           : s == RT_LOCALITY_HOSTNAME ? "hostnames"
                                       : "singleton";
}

ucft_status_t rt_place_init(struct ucft_context *ctx)
{
    struct ucft_comm *w = &ctx->world;
    int n = w->size, bound = 0;
    rt_locality_source_t source;
    ucft_status_t st;

    w->policy = (placement_policy_t)ctx->cfg.placement;
    w->loci = calloc((size_t)n, sizeof(*w->loci));
    w->pub_loci = calloc((size_t)n, sizeof(*w->pub_loci));
    w->rank_at = calloc((size_t)n, sizeof(*w->rank_at));
    w->pos_of = calloc((size_t)n, sizeof(*w->pos_of));
    if (w->loci == NULL || w->pub_loci == NULL || w->rank_at == NULL ||
        w->pos_of == NULL)
        return UCFT_ERR_NO_MEMORY;
    st =
        rt_locality_gather(&ctx->boot, &ctx->log, w->loci, &w->nnodes, &source);
    if (st != UCFT_OK)
        return st;
    st = placement_compute(w->policy, w->loci, n, w->rank_at, w->pos_of);
    if (st != UCFT_OK) {
        ucft_error(&ctx->log, "placement '%s' of %d ranks failed: %s",
                   placement_policy_name(w->policy), n, ucft_status_string(st));
        return st;
    }
    for (int r = 0; r < n; r++) {
        w->pub_loci[r] = (ucft_locus_t){w->loci[r].node, w->loci[r].package,
                                        w->loci[r].numa, w->loci[r].core};
        bound += w->loci[r].core >= 0;
    }
    w->map = (coll_map_t){.n = n, .rank = w->rank_at, .pos = w->pos_of};
    w->mate = placement_core_mate(w->loci, n, w->rank);
    ucft_debug(&ctx->log,
               "placement %s: %d ranks on %d node(s) (ids from %s), %d "
               "bound to a core; this rank at position %d, core shared "
               "with rank %d (-1: none, several, or unbound)",
               placement_policy_name(w->policy), n, w->nnodes,
               source_name(source), bound, w->pos_of[w->rank], w->mate);
    return UCFT_OK;
}

void rt_place_cleanup(struct ucft_context *ctx)
{
    struct ucft_comm *w = &ctx->world;

    free(w->loci);
    free(w->pub_loci);
    free(w->rank_at);
    free(w->pos_of);
    w->loci = NULL;
    w->pub_loci = NULL;
    w->rank_at = w->pos_of = NULL;
    w->map = (coll_map_t){0};
}

ucft_status_t ucft_comm_query_placement(ucft_comm_h comm,
                                        ucft_placement_attr_t *attr)
{
    if (comm == NULL || attr == NULL || comm->pub_loci == NULL)
        return rt_bad_arg(comm ? comm->ctx : NULL, "ucft_comm_query_placement",
                          comm == NULL   ? "NULL communicator"
                          : attr == NULL ? "NULL attribute pointer"
                                         : "no placement (finalized?)");
    attr->policy = placement_policy_name(comm->policy);
    attr->size = comm->size;
    attr->nnodes = comm->nnodes;
    attr->loci = comm->pub_loci;
    attr->rank_at = comm->rank_at;
    attr->pos_of = comm->pos_of;
    return UCFT_OK;
}
