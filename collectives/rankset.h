/*
 * A sorted set of ranks (or vranks) that lives inside a per-rank collective
 * state: up to COLL_RANKSET_INLINE members in place, more in an array grown
 * on insertion (allocation happens only when members are added, i.e. when
 * failures are learnt) and released by coll_rankset_free. Membership by
 * binary search. Zero-initialized = empty. Private to collectives/.
 */
#ifndef UCFT_COLL_RANKSET_H
#define UCFT_COLL_RANKSET_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define COLL_RANKSET_INLINE 8

typedef struct coll_rankset {
    int inl[COLL_RANKSET_INLINE];
    int *heap; /* NULL while the members fit inline */
    uint32_t n, cap;
} coll_rankset_t;

static inline const int *coll_rankset_items(const coll_rankset_t *s)
{
    return s->heap != NULL ? s->heap : s->inl;
}

/* Index of the first member >= v. */
static inline uint32_t coll_rankset_lower(const coll_rankset_t *s, int v)
{
    const int *d = coll_rankset_items(s);
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (d[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline int coll_rankset_has(const coll_rankset_t *s, int v)
{
    uint32_t i = coll_rankset_lower(s, v);
    return i < s->n && coll_rankset_items(s)[i] == v;
}

/* Adds v (already a member: nothing). 0, or -1 when the set could not
 * grow (unchanged). */
static inline int coll_rankset_add(coll_rankset_t *s, int v)
{
    uint32_t i = coll_rankset_lower(s, v);
    if (i < s->n && coll_rankset_items(s)[i] == v)
        return 0;
    uint32_t cap = s->heap != NULL ? s->cap : COLL_RANKSET_INLINE;
    if (s->n == cap) {
        int *d = malloc((size_t)cap * 2 * sizeof(*d));
        if (d == NULL)
            return -1;
        memcpy(d, coll_rankset_items(s), (size_t)s->n * sizeof(*d));
        free(s->heap);
        s->heap = d;
        s->cap = cap * 2;
    }
    int *d = s->heap != NULL ? s->heap : s->inl;
    memmove(d + i + 1, d + i, (size_t)(s->n - i) * sizeof(*d));
    d[i] = v;
    s->n++;
    return 0;
}

static inline void coll_rankset_free(coll_rankset_t *s)
{
    free(s->heap);
    memset(s, 0, sizeof(*s));
}

#endif
