/*
 * Pure rank arithmetic of the gossip schedules (gossip.h): who sends to
 * whom in round r, computable by sender and receiver alike from (seed, r,
 * v) in O(1) (O(degree) for the in-set of the random schedule).
 *
 * Random permutations of [0, n) come from a keyed 4-round Feistel network
 * on the smallest even number of bits covering n, with cycle walking:
 * a bijection, and its inverse, without tables (a million simulated ranks
 * cannot each hold a permutation of a million entries).
 */
#ifndef UCFT_COLL_GOSSIP_SCHED_H
#define UCFT_COLL_GOSSIP_SCHED_H

#include <stdint.h>

static inline uint64_t gs_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t gs_hash3(uint64_t seed, uint64_t a, uint64_t b)
{
    return gs_mix(gs_mix(seed ^ gs_mix(a)) ^ b);
}

/* Half width in bits of the Feistel domain for n (2 * hb bits >= n). */
static inline unsigned gs_half_bits(uint32_t n)
{
    unsigned hb = 1;
    while ((1ull << (2 * hb)) < n)
        hb++;
    return hb;
}

static inline uint32_t gs_feistel(uint64_t key, unsigned hb, uint32_t x,
                                  int inverse)
{
    uint32_t m = (1u << hb) - 1, l = x >> hb, r = x & m;
    for (int i = 0; i < 4; i++) {
        int k = inverse ? 3 - i : i;
        uint32_t f;
        if (!inverse) {
            f = (uint32_t)gs_hash3(key, (uint64_t)k, r) & m;
            uint32_t t = r;
            r = l ^ f;
            l = t;
        } else {
            f = (uint32_t)gs_hash3(key, (uint64_t)k, l) & m;
            uint32_t t = l;
            l = r ^ f;
            r = t;
        }
    }
    return (l << hb) | r;
}

/* pi(x) (inverse 0) or pi^-1(x) (inverse 1) of a permutation of [0, n). */
static inline uint32_t gs_perm(uint64_t key, uint32_t n, uint32_t x,
                               int inverse)
{
    unsigned hb = gs_half_bits(n);
    do
        x = gs_feistel(key, hb, x, inverse);
    while (x >= n);
    return x;
}

/* A schedule: n ranks, a topology (gossip_topo_t), a partner schedule
 * (gossip_sched_t) and a seed. */
typedef struct gossip_plan {
    int n;
    int topo;
    int sched;
    uint64_t seed;
} gossip_plan_t;

/* Neighbours of v in the plan's topology, and neighbour k of v (k below
 * the degree). */
unsigned gossip_degree(const gossip_plan_t *p, int v);
int gossip_neighbour(const gossip_plan_t *p, int v, unsigned k);
/* The vrank v sends to in round r, or -1 (none: a fixed point, no
 * neighbour, a butterfly partner beyond n). */
int gossip_out(const gossip_plan_t *p, int v, unsigned r);
/* v's in-set of round r (the vranks whose gossip_out is v) into `in`
 * (room for gossip_degree(v) entries, at least 1); returns its size. */
unsigned gossip_in(const gossip_plan_t *p, int v, unsigned r, int *in);

#endif
