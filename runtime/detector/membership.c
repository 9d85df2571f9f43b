/* The monotonic failed set: see membership.h. */
#include "runtime/detector/membership.h"

#include <stdlib.h>
#include <string.h>

void mb_init(mb_t *mb, int size)
{
    memset(mb, 0, sizeof(*mb));
    mb->size = size;
}

void mb_cleanup(mb_t *mb)
{
    free(mb->sorted);
    free(mb->order);
    mb_init(mb, mb->size);
}

/* Index of the first entry >= rank. */
static size_t mb_lower_bound(const mb_t *mb, int rank)
{
    size_t lo = 0, hi = mb->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mb->sorted[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mb_is_failed(const mb_t *mb, int rank)
{
    size_t i = mb_lower_bound(mb, rank);
    return i < mb->count && mb->sorted[i] == rank;
}

static int mb_grow(mb_t *mb)
{
    size_t cap = mb->capacity ? mb->capacity * 2 : 8;
    int *s = realloc(mb->sorted, cap * sizeof(*s));
    if (s == NULL)
        return UCFT_ERR_NO_MEMORY;
    mb->sorted = s;
    int *o = realloc(mb->order, cap * sizeof(*o));
    if (o == NULL)
        return UCFT_ERR_NO_MEMORY;
    mb->order = o;
    mb->capacity = cap;
    return UCFT_OK;
}

int mb_add(mb_t *mb, int rank)
{
    if (rank < 0 || rank >= mb->size)
        return UCFT_ERR_INVALID_PARAM;
    size_t i = mb_lower_bound(mb, rank);
    if (i < mb->count && mb->sorted[i] == rank)
        return 0;
    if (mb->count == mb->capacity) {
        int st = mb_grow(mb);
        if (st != UCFT_OK)
            return st;
    }
    memmove(&mb->sorted[i + 1], &mb->sorted[i],
            (mb->count - i) * sizeof(*mb->sorted));
    mb->sorted[i] = rank;
    mb->order[mb->count] = rank;
    mb->count++;
    mb->epoch++;
    mb->digest += mb_mix((uint32_t)rank);
    return 1;
}

int mb_live_step(const mb_t *mb, int rank, int dir)
{
    int r = rank;
    /* At most size-1 steps; each is O(log failures). A long run of failed
     * ranks is walked one by one, which is fine: it only happens on the
     * failure path and the runs are as long as the failures are many. */
    for (int i = 1; i < mb->size; i++) {
        r += dir;
        if (r < 0)
            r += mb->size;
        else if (r >= mb->size)
            r -= mb->size;
        if (!mb_is_failed(mb, r))
            return r;
    }
    return -1;
}

int mb_live_pred(const mb_t *mb, int rank)
{
    return mb_live_step(mb, rank, -1);
}

int mb_live_succ(const mb_t *mb, int rank)
{
    return mb_live_step(mb, rank, +1);
}

int mb_live_count(const mb_t *mb)
{
    return mb->size - (int)mb->count;
}
