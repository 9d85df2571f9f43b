/*
 * Rerouted trees for an epoch (UCFT_TREE_REPAIR=reroute|lookup,
 * comm/repair.h, docs/trees.md): the communicator's original binomial
 * tree over its placement positions, the epoch's excluded members taken
 * out and their children adopted by the nearest live ancestor
 * (collectives/tree_ft.h), projected onto the epoch's dense indices (the
 * ranks of its view, which the algorithm sees).
 */
#include "comm/comm.h"

#include <stdlib.h>

/* Builds into `out` (dense indices); 0, or -1 without memory. */
static int build(const struct ucft_comm *comm, const cm_epoch_t *ep, int root,
                 coll_tree_t *out)
{
    int n = comm->size, st = -1;
    const coll_map_t *map = comm->place.map.n > 0 ? &comm->place.map : NULL;
    uint8_t *dead = malloc((size_t)n);
    coll_tree_t full = {0};
    if (dead != NULL) {
        for (int r = 0; r < n; r++)
            dead[r] = ep->dense[r] < 0;
        /* The barrier's tree is rooted at comm rank 0, as without
         * failures (barrier_binomial.c); if it failed, at the lowest live
         * position. */
        if (coll_tree_build_placed(&full, n, dead, root < 0 ? 0 : root,
                                   COLL_TREE_REROUTE, map ? map->rank : NULL,
                                   map ? map->pos : NULL) == 0)
            st = coll_tree_project(&full, ep->n, ep->live, ep->dense, out);
    }
    coll_tree_free(&full);
    free(dead);
    return st;
}

/* Says once per epoch and root (debug) where this rank sits in a tree. */
static void told(const struct ucft_comm *comm, const cm_epoch_t *ep,
                 const coll_tree_t *t, int design)
{
    int me = ep->rank, p = t->parent[me];
    ucft_debug(&comm->ctx->log,
               "tree repair: communicator %u, operations from #%u: %s "
               "binomial tree rooted at %d around %d failed members: parent "
               "%d, %d children",
               comm->ctx_id, (unsigned)ep->from,
               design == CM_REPAIR_REROUTE ? "rerouted" : "looked-up",
               ep->live[t->root], ep->ngone, p < 0 ? -1 : ep->live[p],
               coll_tree_nkids(t, me));
}

ucft_status_t cm_repair_tree(const struct ucft_comm *comm, cm_epoch_t *ep,
                             int root, coll_tree_t *scratch,
                             const coll_tree_t **tree)
{
    int design = comm->layer->cfg.tree_repair;
    *tree = NULL;
    if (design != CM_REPAIR_REROUTE && design != CM_REPAIR_LOOKUP)
        return UCFT_OK;
    if (design == CM_REPAIR_LOOKUP) {
        for (int i = 0; i < ep->nlookup; i++)
            if (ep->lookup[i].root == root) {
                *tree = &ep->lookup[i].tree;
                return UCFT_OK;
            }
        if (ep->nlookup < CM_LOOKUP_ROOTS) {
            cm_lookup_t *l = &ep->lookup[ep->nlookup];
            if (build(comm, ep, root, &l->tree) != 0)
                return UCFT_ERR_NO_MEMORY;
            l->root = root;
            ep->nlookup++;
            told(comm, ep, &l->tree, design);
            *tree = &l->tree;
            return UCFT_OK;
        }
        /* More roots than the epoch keeps trees for: built for this
         * operation, as reroute does (memory stays bounded). */
    }
    coll_tree_free(scratch);
    if (build(comm, ep, root, scratch) != 0)
        return UCFT_ERR_NO_MEMORY;
    if (design == CM_REPAIR_REROUTE && !ep->rerouted_told) {
        ep->rerouted_told = 1;
        told(comm, ep, scratch, design);
    }
    *tree = scratch;
    return UCFT_OK;
}

ucft_status_t cm_repair_frame(const struct ucft_comm *comm, cm_epoch_t *ep,
                              const coll_map_t **frame,
                              const coll_map_t **order)
{
    int design = comm->layer->cfg.tree_repair, n = comm->size;
    *frame = *order = NULL;
    if (design != CM_REPAIR_REROUTE && design != CM_REPAIR_LOOKUP)
        return UCFT_OK;
    if (ep->frame_rank == NULL) {
        const coll_map_t *map = comm->place.map.n > 0 ? &comm->place.map : NULL;
        size_t m = (size_t)(ep->n > 0 ? ep->n : 1);
        int *fr = malloc((size_t)n * sizeof(*fr));
        int *fp = malloc(m * sizeof(*fp));
        int *orank = malloc(m * sizeof(*orank));
        int *opos = malloc(m * sizeof(*opos));
        if (fr == NULL || fp == NULL || orank == NULL || opos == NULL) {
            free(fr);
            free(fp);
            free(orank);
            free(opos);
            return UCFT_ERR_NO_MEMORY;
        }
        for (int p = 0, i = 0; p < n; p++) {
            fr[p] = ep->dense[map != NULL ? map->rank[p] : p];
            if (fr[p] < 0)
                continue;
            fp[fr[p]] = p;
            orank[i] = fr[p];
            opos[fr[p]] = i++;
        }
        ep->frame_rank = fr;
        ep->frame_pos = fp;
        ep->order_rank = orank;
        ep->order_pos = opos;
        ep->frame = (coll_map_t){.n = n, .rank = fr, .pos = fp};
        ep->order = (coll_map_t){.n = ep->n, .rank = orank, .pos = opos};
        ucft_debug(&comm->ctx->log,
                   "tree repair: communicator %u, operations from #%u: "
                   "corrected structures over the original %d positions "
                   "around %d failed members",
                   comm->ctx_id, (unsigned)ep->from, n, ep->ngone);
    }
    *frame = &ep->frame;
    *order = &ep->order;
    return UCFT_OK;
}

void cm_repair_trees_free(cm_epoch_t *ep)
{
    for (int i = 0; i < ep->nlookup; i++)
        coll_tree_free(&ep->lookup[i].tree);
    ep->nlookup = 0;
    free(ep->frame_rank);
    free(ep->frame_pos);
    free(ep->order_rank);
    free(ep->order_pos);
    ep->frame_rank = ep->frame_pos = ep->order_rank = ep->order_pos = NULL;
}
