#include "simrun/simnodes.h"

#include <stdlib.h>
#include <string.h>

ucft_status_t simnodes_by_parse(const char *text, simnodes_by_t *by)
{
    if (text != NULL && strcmp(text, "slot") == 0)
        *by = SIMNODES_BY_SLOT;
    else if (text != NULL && strcmp(text, "node") == 0)
        *by = SIMNODES_BY_NODE;
    else
        return UCFT_ERR_INVALID_PARAM;
    return UCFT_OK;
}

ucft_status_t simnodes_init(simnodes_t *s, int n, int nodes, simnodes_by_t by)
{
    memset(s, 0, sizeof(*s));
    if (n < 1 || nodes < 1 || nodes > n)
        return UCFT_ERR_INVALID_PARAM;
    s->n = n;
    s->nodes = nodes;
    s->node_of = malloc((size_t)n * sizeof(*s->node_of));
    if (s->node_of == NULL)
        return UCFT_ERR_NO_MEMORY;
    for (int r = 0; r < n; r++)
        s->node_of[r] = by == SIMNODES_BY_NODE
                            ? (uint32_t)(r % nodes)
                            : (uint32_t)((int64_t)r * nodes / n);
    return UCFT_OK;
}

ucft_status_t simnodes_place(simnodes_t *s, placement_policy_t policy)
{
    placement_locus_t *loci = malloc((size_t)s->n * sizeof(*loci));
    int *next = calloc((size_t)s->nodes, sizeof(*next));
    ucft_status_t st = UCFT_ERR_NO_MEMORY;

    if (s->rank_at == NULL)
        s->rank_at = malloc((size_t)s->n * sizeof(*s->rank_at));
    if (s->pos_of == NULL)
        s->pos_of = malloc((size_t)s->n * sizeof(*s->pos_of));
    if (loci == NULL || next == NULL || s->rank_at == NULL || s->pos_of == NULL)
        goto out;
    for (int r = 0; r < s->n; r++) {
        uint32_t d = s->node_of[r];
        loci[r] = (placement_locus_t){(int32_t)d, 0, 0, next[d]++};
    }
    st = placement_compute(policy, loci, s->n, s->rank_at, s->pos_of);
    if (st == UCFT_OK)
        s->map = (coll_map_t){s->n, s->rank_at, s->pos_of};
out:
    free(loci);
    free(next);
    return st;
}

void simnodes_cleanup(simnodes_t *s)
{
    free(s->node_of);
    free(s->rank_at);
    free(s->pos_of);
    memset(s, 0, sizeof(*s));
}

int simnodes_first_rank(const simnodes_t *s, int node)
{
    for (int r = 0; r < s->n; r++)
        if (s->node_of[r] == (uint32_t)node)
            return r;
    return -1;
}
