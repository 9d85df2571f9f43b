/* The majority rule: see quorum.h. */
#include "runtime/quorum.h"

#include <stdlib.h>
#include <string.h>

ucft_status_t rt_quorum_init(rt_quorum_t *q, int size, uint64_t settle_ns,
                             uint64_t now)
{
    if (size < 1)
        return UCFT_ERR_INVALID_PARAM;
    q->failed = calloc(2 * (size_t)size, 1);
    if (q->failed == NULL)
        return UCFT_ERR_NO_MEMORY;
    q->member = q->failed + size;
    memset(q->member, 1, (size_t)size);
    q->size = size;
    q->settle_ns = settle_ns;
    q->live = q->base = size;
    q->lowest = 0;
    q->changed_ns = now;
    q->lost = 0;
    return UCFT_OK;
}

void rt_quorum_cleanup(rt_quorum_t *q)
{
    free(q->failed);
    q->failed = q->member = NULL;
}

void rt_quorum_agree(rt_quorum_t *q, uint64_t now)
{
    if (q->lost)
        return;
    q->base = q->live;
    for (int r = 0; r < q->size; r++)
        q->member[r] = !q->failed[r];
    q->lowest = 0;
    while (q->lowest < q->size && q->failed[q->lowest])
        q->lowest++;
    q->changed_ns = now;
}

int rt_quorum_on_failed(rt_quorum_t *q, int rank, uint64_t now)
{
    if (q->lost)
        return 0;
    if (rank < 0 || rank >= q->size || q->failed[rank])
        return 1; /* nothing new */
    if (q->settle_ns > 0 && now - q->changed_ns >= q->settle_ns)
        rt_quorum_agree(q, now); /* the view before this failure stood */
    q->failed[rank] = 1;
    q->live--;
    q->changed_ns = now;
    /* Strict majority, or exactly half with the tie holder alive. */
    if (2 * q->live > q->base ||
        (2 * q->live == q->base && !q->failed[q->lowest]))
        return 1;
    q->lost = 1;
    return 0;
}

int rt_quorum_covers(const rt_quorum_t *q, const unsigned char *held)
{
    int others = 0;
    for (int r = 0; r < q->size; r++)
        others += q->member[r] && !held[r];
    int tie_holder_out =
        q->lowest < q->size && q->member[q->lowest] && !held[q->lowest];
    return !(2 * others > q->base || (2 * others == q->base && tie_holder_out));
}
