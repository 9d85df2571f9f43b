/*
 * The oracle of the approximate allreduce (collectives/gossip.h): rank r's
 * element e is uniform in [0, 1) (the paper's initial data), drawn from
 * (r, e, seq, the gossip seed); a rank's output is right when every element is
 * within the instance's eps (relative) of the exact sum or mean over the ranks
 * that survived (the push-flow family's limit under crashes). float outputs are
 * allowed their rounding besides (2^-22 relative).
 */
#include "simrun/oracle.h"

#include "collectives/gossip.h"
#include "collectives/gossip_sched.h"

#include <math.h>
#include <string.h>

double gossip_oracle_input(const coll_args_t *args, int rank, size_t e)
{
    uint64_t seed = args->gossip != NULL ? args->gossip->seed : 0;
    uint64_t h = gs_hash3(0x6f7261636c65ull ^ args->seq ^ gs_mix(seed),
                          (uint64_t)rank, e);
    double x = (double)(h >> 11) * 0x1.0p-53;
    if (args->dtype == COLL_DTYPE_FLOAT)
        x = (float)x;
    return x;
}

double gossip_oracle_exact(const coll_args_t *args, int size,
                           const uint8_t *dead, size_t e)
{
    double sum = 0;
    int live = 0;
    for (int r = 0; r < size; r++) {
        if (dead != NULL && dead[r])
            continue;
        sum += gossip_oracle_input(args, r, e);
        live++;
    }
    return args->gossip != NULL && args->gossip->mean ? sum / live : sum;
}

static void fill(void *buf, const coll_args_t *args, int rank, int size)
{
    (void)size;
    for (size_t e = 0; e < args->count; e++) {
        double x = gossip_oracle_input(args, rank, e);
        if (args->dtype == COLL_DTYPE_FLOAT) {
            float f = (float)x;
            memcpy((char *)buf + e * sizeof(f), &f, sizeof(f));
        } else {
            memcpy((char *)buf + e * sizeof(x), &x, sizeof(x));
        }
    }
}

static int check(const void *buf, const coll_args_t *args, int rank, int size,
                 const uint8_t *dead)
{
    const coll_gossip_params_t *g = args->gossip;
    double eps = g != NULL && g->eps > 0 ? g->eps : 1e-8;
    int anydead = 0;
    (void)rank;
    if (args->dtype == COLL_DTYPE_FLOAT && eps < 0x1.0p-22)
        eps = 0x1.0p-22;
    /* Once per rank: memchr, not a byte loop (2^20 ranks scanning 2^20
     * bytes each took most of a million-rank run). */
    if (dead != NULL && size > 0)
        anydead = memchr(dead, 1, (size_t)size) != NULL;
    for (size_t e = 0; e < args->count; e++) {
        double y, ref;
        if (args->dtype == COLL_DTYPE_FLOAT) {
            float f;
            memcpy(&f, (const char *)buf + e * sizeof(f), sizeof(f));
            y = f;
        } else {
            memcpy(&y, (const char *)buf + e * sizeof(y), sizeof(y));
        }
        /* The driver's precomputed value when nobody died (O(1) per rank
         * at a million ranks), else the survivors' (O(size)). */
        if (!anydead && g != NULL && g->ref != NULL)
            ref = g->ref[e];
        else
            ref = gossip_oracle_exact(args, size, dead, e);
        if (!(fabs(y - ref) <= eps * fabs(ref)))
            return 0;
    }
    return 1;
}

const coll_oracle_t coll_oracle_gossip = {fill, check};
