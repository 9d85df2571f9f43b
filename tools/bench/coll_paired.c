/*
 * ucft-bench coll --failed ... --tree-repair rebalance|reroute|lookup
 * --paired R (coll.h): the design's communicator (the world after its
 * switch) against a fresh one (a shrink of the world: the survivors'
 * own communicator) in the same job, R rounds. Each round times one
 * block of --iters back-to-back operations on each, in alternating order
 * (design first in even rounds), each block after an untimed barrier on
 * its communicator; the rank keeps the ratio of the two blocks' times.
 * Both blocks of a round run on the same processes, cores and caches a
 * moment apart, so the machine's drift between separate jobs (which
 * hides a few per cent on two cores shared by 16 ranks) cancels. Per
 * rank: the median ratio over the rounds and its distribution-free 95 %
 * interval (order statistics of the rounds' ratios), and the median
 * block means of either communicator.
 */
#include "tools/bench/coll.h"

#include <math.h>
#include <stdlib.h>

/* One block on `c`: its mean per operation in µs; *errors grows. */
static double block(ucft_comm_h c, const coll_opts_t *o, void *a, void *b,
                    size_t n64, size_t blk, int *errors)
{
    *errors += ucft_barrier(c) != UCFT_OK;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < o->iters; i++)
        *errors += coll_run_one(c, o, a, b, n64, blk) != UCFT_OK;
    return (double)(bench_now_ns() - t0) / 1e3 / o->iters;
}

int coll_paired_run(ucft_comm_h design, ucft_comm_h fresh, const coll_opts_t *o,
                    void *a, void *b, size_t n64, size_t blk,
                    coll_paired_t *out)
{
    int rounds = o->paired, errors = 0;
    double *ratio = calloc((size_t)rounds, sizeof(double));
    double *dus = calloc((size_t)rounds, sizeof(double));
    double *fus = calloc((size_t)rounds, sizeof(double));
    if (ratio == NULL || dus == NULL || fus == NULL) {
        free(ratio);
        free(dus);
        free(fus);
        return -1;
    }
    /* The fresh communicator's own warm-up (the design's ran before). */
    for (int i = 0; i < o->warmup; i++)
        errors += coll_run_one(fresh, o, a, b, n64, blk) != UCFT_OK;
    for (int r = 0; r < rounds; r++) {
        if (r % 2 == 0) {
            dus[r] = block(design, o, a, b, n64, blk, &errors);
            fus[r] = block(fresh, o, a, b, n64, blk, &errors);
        } else {
            fus[r] = block(fresh, o, a, b, n64, blk, &errors);
            dus[r] = block(design, o, a, b, n64, blk, &errors);
        }
        ratio[r] = dus[r] / fus[r];
    }
    /* The median's 95 % interval: the order statistics n/2 -+ 0.98 sqrt(n)
     * (normal approximation of the binomial count below the median). */
    double h = 0.98 * sqrt((double)rounds);
    double qlo = floor(rounds / 2.0 - h), qhi = ceil(rounds / 2.0 + h);
    out->ratio = bench_quantile_sort(ratio, (size_t)rounds, 0.5);
    out->lo = ratio[qlo < 0 ? 0 : (size_t)qlo];
    out->hi = ratio[qhi > rounds - 1 ? (size_t)rounds - 1 : (size_t)qhi];
    out->design_us = bench_quantile_sort(dus, (size_t)rounds, 0.5);
    out->fresh_us = bench_quantile_sort(fus, (size_t)rounds, 0.5);
    free(ratio);
    free(dus);
    free(fus);
    return errors;
}
