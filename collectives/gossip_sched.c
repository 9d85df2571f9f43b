/*
 * The partner schedules of the gossip family (gossip_sched.h): the
 * topologies' neighbours, who sends to whom in round r, and the default
 * number of rounds. Pure functions of the plan, the same at every rank.
 */
#include "gossip_sched.h"

#include "gossip.h"

static unsigned lg_ceil(int n)
{
    unsigned l = 0;
    while ((1l << l) < n)
        l++;
    return l;
}

unsigned gossip_degree(const gossip_plan_t *s, int v)
{
    int n = s->n;
    if (n <= 1)
        return 0;
    switch (s->topo) {
    case GOSSIP_TOPO_RING:
        return n == 2 ? 1 : 2;
    case GOSSIP_TOPO_HYPERCUBE: {
        unsigned d = 0;
        for (unsigned b = 0; b < lg_ceil(n); b++)
            d += (v ^ (1 << b)) < n;
        return d;
    }
    default:
        return (unsigned)n - 1;
    }
}

int gossip_neighbour(const gossip_plan_t *s, int v, unsigned k)
{
    int n = s->n;
    switch (s->topo) {
    case GOSSIP_TOPO_RING:
        return k == 0 ? (v + 1) % n : (v - 1 + n) % n;
    case GOSSIP_TOPO_HYPERCUBE:
        for (unsigned b = 0;; b++)
            if ((v ^ (1 << b)) < n && k-- == 0)
                return v ^ (1 << b);
    default:
        return (int)k < v ? (int)k : (int)k + 1;
    }
}

static uint64_t round_key(const gossip_plan_t *s, unsigned r)
{
    return gs_hash3(s->seed, 0x676f73736970ull, r);
}

int gossip_out(const gossip_plan_t *s, int v, unsigned r)
{
    uint64_t key = round_key(s, r);
    uint32_t n = (uint32_t)s->n;
    switch (s->sched) {
    case GOSSIP_SCHED_RANDOM: {
        unsigned d = gossip_degree(s, v);
        if (d == 0)
            return -1;
        return gossip_neighbour(s, v,
                                (unsigned)(gs_hash3(key, 1, (uint64_t)v) % d));
    }
    case GOSSIP_SCHED_PERM: {
        int t = (int)gs_perm(key, n, (uint32_t)v, 0);
        return t == v ? -1 : t;
    }
    case GOSSIP_SCHED_CYCLE: {
        if (n < 2)
            return -1;
        uint32_t pos = gs_perm(key, n, (uint32_t)v, 1);
        return (int)gs_perm(key, n, (pos + 1) % n, 0);
    }
    default: {
        unsigned l = lg_ceil(s->n);
        if (l == 0)
            return -1;
        int t = v ^ (1 << (r % l));
        return t < s->n ? t : -1;
    }
    }
}

unsigned gossip_in(const gossip_plan_t *s, int v, unsigned r, int *in)
{
    unsigned k = 0;
    uint64_t key = round_key(s, r);
    uint32_t n = (uint32_t)s->n;
    switch (s->sched) {
    case GOSSIP_SCHED_RANDOM: {
        unsigned d = gossip_degree(s, v);
        for (unsigned i = 0; i < d; i++) {
            int j = gossip_neighbour(s, v, i);
            if (gossip_out(s, j, r) == v)
                in[k++] = j;
        }
        return k;
    }
    case GOSSIP_SCHED_PERM: {
        int j = (int)gs_perm(key, n, (uint32_t)v, 1);
        if (j != v)
            in[k++] = j;
        return k;
    }
    case GOSSIP_SCHED_CYCLE: {
        if (n < 2)
            return 0;
        uint32_t pos = gs_perm(key, n, (uint32_t)v, 1);
        in[k++] = (int)gs_perm(key, n, (pos + n - 1) % n, 0);
        return k;
    }
    default: {
        int j = gossip_out(s, v, r);
        if (j >= 0)
            in[k++] = j;
        return k;
    }
    }
}

unsigned gossip_default_rounds(int n, double eps, int topo,
                               gossip_sched_t sched)
{
    unsigned l = lg_ceil(n);
    double x = eps > 0 && eps < 1 ? eps : 1e-8, le = 0, r;

    while (x < 1) { /* le = ceil(log2(1 / eps)), without libm */
        x *= 2;
        le++;
    }

    if (n <= 1)
        return 0;
    if (sched == GOSSIP_SCHED_BUTTERFLY && (n & (n - 1)) == 0)
        return l; /* exact after log2 n rounds; else it cycles on */
    /* Calibrated on the simulator (docs/gossip.md): on the full topology
     * push-sum reaches eps in about 1.7 log2(1/eps) + log2 n rounds, at
     * most 2 log2(1/eps) + log2 n over 20 seeds at n = 32 and 1024 (eps
     * 1e-3 .. 1e-14); 10 rounds more cover the tail. The hypercube took
     * 1.8 times as many at n = 32 (the spectral gap shrinks as 1/log2
     * n), the ring O(n^2). */
    r = 2.0 * le + (double)l + 10;
    if (topo == GOSSIP_TOPO_HYPERCUBE)
        r *= 1.0 + (double)l / 5.0;
    else if (topo == GOSSIP_TOPO_RING)
        r *= (double)n * (double)n / 4.0 + 1.0;
    return (unsigned)r + 1;
}
