/*
 * ucft-bench coll --failed LIST|RANDOM:k|FIRST:k --tree-repair
 * keep|rebalance|reroute|lookup|fresh (coll.h, docs/trees.md): the
 * operation timed on a
 * communicator that has already lost k ranks. The named ranks kill
 * themselves (SIGKILL) right after ucft_init; every survivor waits until
 * it knows of all of them, then
 *   keep       times on the world, failed ranks in the trees (the runtime
 *              started with UCFT_TREE_REPAIR=keep), f raised to k;
 *   rebalance  times on the world after the switch to the survivors'
 *              trees (the warm-up runs past it: at least 4 windows);
 *   reroute, lookup  the same switch, the binomial algorithms and the
 *              corrected broadcast on the original tree routed around the
 *              failed ranks (built at every operation, or once), the
 *              corrected reduce, allreduce and barrier on their original
 *              structures around the holes (UCFT_TREE_REPAIR=
 *              reroute|lookup);
 *   fresh      times on ucft_comm_shrink(world): a new communicator of
 *              the N - k survivors, the baseline.
 */
#include "tools/bench/coll.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const designs[] = {"keep", "rebalance", "fresh", "reroute",
                                      "lookup"};
#define NDESIGNS ((int)(sizeof(designs) / sizeof(designs[0])))

int coll_failed_design(const char *name)
{
    for (int i = 0; i < NDESIGNS; i++)
        if (strcmp(name, designs[i]) == 0)
            return i;
    return -1;
}

const char *coll_failed_design_name(int d)
{
    return d >= 0 && d < NDESIGNS ? designs[d] : "?";
}

const char *coll_failed_repair_var(int d)
{
    return d == 0   ? "keep"
           : d == 3 ? "reroute"
           : d == 4 ? "lookup"
                    : "rebalance";
}

int coll_failed_set(const char *spec, int n, unsigned char *dead)
{
    int k = 0;
    memset(dead, 0, (size_t)n);
    if (strncmp(spec, "FIRST:", 6) == 0 || strncmp(spec, "RANDOM:", 7) == 0) {
        int random = spec[0] == 'R';
        char *end;
        long want = strtol(spec + (random ? 7 : 6), &end, 10);
        if (*end != '\0' || want < 0 || want >= n)
            return -1;
        uint64_t x = 0x9e3779b97f4a7c15ull;
        while (k < want) {
            int r;
            if (random) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                r = (int)((x >> 33) % (uint64_t)n);
            } else {
                r = k + 1;
            }
            if (r == 0 || dead[r])
                continue;
            dead[r] = 1;
            k++;
        }
        return k;
    }
    for (const char *p = spec; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || r <= 0 || r >= n || (*end != ',' && *end != '\0'))
            return -1; /* rank 0 reports: it must live */
        k += !dead[r];
        dead[r] = 1;
        p = *end == ',' ? end + 1 : end;
    }
    return k;
}

int coll_failed_setup(ucft_context_h ctx, const coll_opts_t *o,
                      ucft_comm_h *comm, int *nfailed)
{
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    unsigned char *dead = calloc((size_t)size, 1);
    if (dead == NULL)
        return -1;
    int k = coll_failed_set(o->failed, size, dead);
    if (k < 0) {
        if (rank == 0)
            bench_err("coll",
                      "--failed '%s': want r,r,... (ranks 1..%d), "
                      "RANDOM:k or FIRST:k (k < %d)",
                      o->failed, size - 1, size);
        free(dead);
        return -1;
    }
    if (dead[rank]) {
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    free(dead);
    *nfailed = k;
    /* Every survivor knows of every failed rank (bounded). */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        size_t known = 0;
        ucft_context_progress(ctx);
        if (ucft_comm_get_failed(w, NULL, 0, &known) == UCFT_OK &&
            (int)known >= k)
            break;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 30) {
            bench_err("coll",
                      "rank %d: knows of %zu of the %d failed ranks "
                      "after 30 s",
                      rank, known, k);
            return -1;
        }
    }
    *comm = w;
    if (o->tree_repair == 2) { /* fresh */
        ucft_status_t st = ucft_comm_shrink(w, comm);
        if (st != UCFT_OK) {
            bench_err("coll", "rank %d: ucft_comm_shrink: %s", rank,
                      ucft_status_string(st));
            return -1;
        }
    }
    return 0;
}
