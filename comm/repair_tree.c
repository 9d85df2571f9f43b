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

static int rank_at(const coll_map_t *m, int pos)
{
    return m != NULL ? m->rank[pos] : pos;
}

static int pos_of(const coll_map_t *m, int rank)
{
    return m != NULL ? m->pos[rank] : rank;
}

/* Builds into `out` (dense indices); 0, or -1 without memory. */
static int build(const struct ucft_comm *comm, const cm_epoch_t *ep, int root,
                 coll_tree_t *out)
{
    int n = comm->size, m = ep->n;
    const coll_map_t *map = comm->place.map.n > 0 ? &comm->place.map : NULL;
    uint8_t *dead = malloc((size_t)n);
    coll_tree_t full = {0};
    *out = (coll_tree_t){.n = m};
    out->parent = malloc((size_t)m * sizeof(int));
    out->first = malloc(((size_t)m + 1) * sizeof(int));
    out->child = malloc((size_t)m * sizeof(int));
    if (dead == NULL || !out->parent || !out->first || !out->child)
        goto fail;
    for (int p = 0; p < n; p++)
        dead[p] = ep->dense[rank_at(map, p)] < 0;
    /* The barrier's tree is rooted at comm rank 0, as without failures
     * (barrier_binomial.c); if it failed, at the lowest live position. */
    if (coll_tree_build(&full, n, dead, pos_of(map, root < 0 ? 0 : root),
                        COLL_TREE_REROUTE) != 0)
        goto fail;
    out->root = ep->dense[rank_at(map, full.root)];
    int k = 0;
    for (int d = 0; d < m; d++) {
        int p = pos_of(map, ep->live[d]);
        int pp = full.parent[p];
        out->parent[d] = pp < 0 ? -1 : ep->dense[rank_at(map, pp)];
        out->first[d] = k;
        for (int i = full.first[p]; i < full.first[p + 1]; i++)
            out->child[k++] = ep->dense[rank_at(map, full.child[i])];
    }
    out->first[m] = k;
    coll_tree_free(&full);
    free(dead);
    return 0;
fail:
    coll_tree_free(&full);
    coll_tree_free(out);
    free(dead);
    return -1;
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

void cm_repair_trees_free(cm_epoch_t *ep)
{
    for (int i = 0; i < ep->nlookup; i++)
        coll_tree_free(&ep->lookup[i].tree);
    ep->nlookup = 0;
}
