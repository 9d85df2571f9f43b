/*
 * A whole node dies under corrected allreduces. Run under
 *
 *   ucftrun -n 16 --nodes 4 --kill-node 1@S it_nodekill EXPECT ITERS
 *
 * or, the four ranks of node 1 killing themselves (UCFT_INJECT) in the
 * allreduce of iteration KILL_ITER (expect_nodekill.sh),
 *
 *   ucftrun -n 16 --nodes 4 it_nodekill EXPECT ITERS KILL_ITER
 *
 * with UCFT_F=1 and UCFT_PLACEMENT set. Every rank first checks the
 * placement of the world communicator (ucft_comm_query_placement) against
 * the pretend nodes (--map-by slot: rank r on node r / (n / K)) and the
 * policy; rank 0 prints it. Then ITERS allreduces of {rank + 1, 1 << rank}
 * (sum), 20 ms apart, while the launcher kills every rank of node 1.
 *
 * EXPECT = correct (interleave, locality... whatever must survive): every
 * allreduce succeeds at every survivor; every result is right (every live
 * rank's value exactly once, a dead rank's entirely or not at all: the
 * mask says who is in, and the sum must be theirs) and the same at every
 * survivor (compared at the end by allreduces of the per-iteration masks
 * with MIN and MAX); every iteration after the kill iteration excludes the
 * whole node.
 * EXPECT = failed (identity): what happens instead is asserted: an
 * allreduce either succeeds with a right result or ends with
 * UCFT_ERR_PROC_FAILED, at least one ends with UCFT_ERR_PROC_FAILED after
 * the kill, none hangs (ucftrun --timeout and the CTest timeout bound it).
 *
 * Rank 0 prints the counts and the time from the kill to the first right
 * result completed after it and to the first result without the node: the
 * kill's time from the launcher's injection log (UCFTRUN_INJECT_LOG), or
 * with KILL_ITER the start of that iteration's allreduce (the end of the
 * iteration before it plus the pause).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucft.h>

#include "it_check.h"

#define NODES      4
#define DEAD_NODE  1
#define MAX_ITERS  1000
#define MAX_RANKS  63 /* the membership mask is one int64 */
#define PAUSE_NS   (20 * 1000 * 1000)
#define NEWS_BOUND 2000 /* ms to learn a failure the result already shows */

int g_rank = -1;

typedef struct run {
    ucft_context_h ctx;
    ucft_comm_h w;
    int rank, n, iters, expect_ok;
    uint64_t all, node_mask; /* every rank; the ranks of DEAD_NODE */
    int64_t mask[MAX_ITERS]; /* who was in the result; -1: failed */
    uint64_t done_ns[MAX_ITERS];
    ucft_status_t st[MAX_ITERS];
} run_t;

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The placement against the pretend nodes and the policy. */
static void check_placement(run_t *R)
{
    ucft_placement_attr_t a;
    const char *want = getenv("UCFT_PLACEMENT");
    int per_node = R->n / NODES;

    CHECK_ST(ucft_comm_query_placement(R->w, &a), UCFT_OK);
    CHECK(a.size == R->n && a.nnodes == NODES, "%d ranks on %d nodes", a.size,
          a.nnodes);
    CHECK(strcmp(a.policy, want != NULL ? want : "interleave") == 0,
          "policy %s", a.policy);
    for (int r = 0; r < R->n; r++) {
        CHECK(a.loci[r].node == r / per_node, "rank %d on node %d", r,
              a.loci[r].node);
        CHECK(a.rank_at[a.pos_of[r]] == r, "map not a permutation at %d", r);
    }
    for (int p = 0; p < R->n; p++) {
        int node = a.loci[a.rank_at[p]].node;

        if (strcmp(a.policy, "interleave") == 0)
            CHECK(node == p % NODES, "position %d on node %d", p, node);
        else if (strcmp(a.policy, "identity") == 0)
            CHECK(a.rank_at[p] == p, "position %d holds rank %d", p,
                  a.rank_at[p]);
        else if (p > 0)
            CHECK(node >= a.loci[a.rank_at[p - 1]].node,
                  "locality: position %d goes back to node %d", p, node);
    }
    if (R->rank == 0) {
        printf("it_nodekill: placement %s, %d ranks on %d nodes, position: "
               "rank(node)",
               a.policy, a.size, a.nnodes);
        for (int p = 0; p < a.size; p++)
            printf(" %d(%d)", a.rank_at[p], a.loci[a.rank_at[p]].node);
        printf("\n");
        fflush(stdout);
    }
    R->node_mask = 0;
    for (int r = 0; r < R->n; r++)
        R->node_mask |= (uint64_t)(r / per_node == DEAD_NODE) << r;
}

/* The failed ranks this rank knows of, as a mask; waits up to NEWS_BOUND
 * ms until they explain every rank missing from `mask` (this rank may
 * learn of a death a moment after the result left it out). */
static uint64_t known_dead(run_t *R, uint64_t mask)
{
    uint64_t dead = 0;

    for (int ms = 0; ms <= NEWS_BOUND; ms++) {
        int failed[64];
        size_t nfailed = 0;

        ucft_context_progress(R->ctx);
        ucft_context_get_failed_ranks(R->ctx, failed, 64, &nfailed);
        dead = 0;
        for (size_t i = 0; i < nfailed && i < 64; i++)
            dead |= (uint64_t)1 << failed[i];
        if ((mask | dead) == R->all)
            break;
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    return dead;
}

static void one_iteration(run_t *R, int it)
{
    int64_t in[2] = {R->rank + 1, (int64_t)1 << R->rank}, out[2] = {0, 0};
    ucft_status_t st = ucft_allreduce(R->w, in, out, 2, UCFT_INT64, UCFT_SUM);

    R->done_ns[it] = now_ns();
    R->st[it] = st;
    R->mask[it] = -1;
    if (st != UCFT_OK) {
        CHECK(!R->expect_ok, "iteration %d: allreduce %s", it,
              ucft_status_name(st));
        CHECK_ST(st, UCFT_ERR_PROC_FAILED);
        return;
    }
    uint64_t mask = (uint64_t)out[1], dead = known_dead(R, mask);
    int64_t sum = 0;

    for (int r = 0; r < R->n; r++)
        sum += (mask >> r & 1) ? r + 1 : 0;
    /* Every live rank exactly once (a bit per rank: a rank counted twice
     * would carry into the next bit and break the sum below), nobody
     * else, and a missing rank must have failed. */
    CHECK((mask & ~R->all) == 0 && (mask | dead) == R->all,
          "iteration %d: members %llx, known dead %llx", it,
          (unsigned long long)mask, (unsigned long long)dead);
    CHECK(out[0] == sum, "iteration %d: sum %lld, members' sum %lld", it,
          (long long)out[0], (long long)sum);
    CHECK((~mask & R->all & ~R->node_mask) == 0,
          "iteration %d: members %llx: a rank off node %d is missing", it,
          (unsigned long long)mask, DEAD_NODE);
    R->mask[it] = (int64_t)mask;
}

/* After the loop: the survivors compare their results. */
static void check_identical(run_t *R)
{
    static int64_t lo[MAX_ITERS], hi[MAX_ITERS];
    ucft_status_t st;

    st = ucft_allreduce(R->w, R->mask, lo, (size_t)R->iters, UCFT_INT64,
                        UCFT_MIN);
    CHECK_ST(st, UCFT_OK);
    st = ucft_allreduce(R->w, R->mask, hi, (size_t)R->iters, UCFT_INT64,
                        UCFT_MAX);
    CHECK_ST(st, UCFT_OK);
    for (int it = 0; it < R->iters; it++)
        CHECK(lo[it] == hi[it] && lo[it] == R->mask[it],
              "iteration %d: survivors disagree (%llx..%llx)", it,
              (unsigned long long)lo[it], (unsigned long long)hi[it]);
}

/* The earliest kill in the injection log (ns, CLOCK_MONOTONIC), or 0. */
static uint64_t kill_time(void)
{
    const char *path = getenv("UCFTRUN_INJECT_LOG");
    FILE *f = path != NULL ? fopen(path, "r") : NULL;
    unsigned long long ns, first = 0;
    int r;

    while (f != NULL && fscanf(f, "kill %d %llu\n", &r, &ns) == 2)
        first = first == 0 || ns < first ? ns : first;
    if (f != NULL)
        fclose(f);
    return first;
}

static void report(const run_t *R, uint64_t t_kill)
{
    int before = 0, after = 0, failed = 0, first_after = -1, first_without = -1;
    int first_failed = -1;

    for (int it = 0; it < R->iters; it++) {
        if (R->st[it] != UCFT_OK) {
            failed++;
            first_failed = first_failed < 0 ? it : first_failed;
            continue;
        }
        if ((uint64_t)R->mask[it] == R->all)
            before++;
        else
            after++;
        if (t_kill > 0 && R->done_ns[it] > t_kill && first_after < 0)
            first_after = it;
        if (first_without < 0 && ((uint64_t)R->mask[it] & R->node_mask) == 0)
            first_without = it;
    }
    printf("it_nodekill: rank %d: %d iterations: %d with all %d ranks, %d "
           "without node %d, %d ended with ERR_PROC_FAILED\n",
           R->rank, R->iters, before, R->n, after, DEAD_NODE, failed);
    if (t_kill > 0 && first_failed >= 0)
        printf("it_nodekill: rank %d: kill -> first ERR_PROC_FAILED %.1f ms "
               "(iteration %d)\n",
               R->rank, (double)(R->done_ns[first_failed] - t_kill) / 1e6,
               first_failed);
    if (t_kill > 0 && first_after >= 0)
        printf("it_nodekill: kill -> first right result %.1f ms (iteration "
               "%d)\n",
               (double)(R->done_ns[first_after] - t_kill) / 1e6, first_after);
    if (t_kill > 0 && first_without >= 0)
        printf("it_nodekill: kill -> first result without node %d %.1f ms "
               "(iteration %d)\n",
               DEAD_NODE, (double)(R->done_ns[first_without] - t_kill) / 1e6,
               first_without);
}

int main(int argc, char **argv)
{
    static run_t R;
    int saw_kill = 0, saw_failed = 0;

    if (argc < 3 || (strcmp(argv[1], "correct") && strcmp(argv[1], "failed")))
        return fprintf(stderr, "usage: it_nodekill correct|failed ITERS "
                               "[KILL_ITER]\n"),
               2;
    R.expect_ok = strcmp(argv[1], "correct") == 0;
    R.iters = atoi(argv[2]);
    if (R.iters < 1 || R.iters > MAX_ITERS)
        return fprintf(stderr, "ITERS must be 1..%d\n", MAX_ITERS), 2;
    int kill_iter = argc > 3 ? atoi(argv[3]) : -1;
    if (argc > 3 && (kill_iter < 1 || kill_iter >= R.iters))
        return fprintf(stderr, "KILL_ITER must be 1..ITERS-1\n"), 2;
    CHECK_ST(ucft_init(NULL, &R.ctx), UCFT_OK);
    R.w = ucft_comm_world(R.ctx);
    R.rank = g_rank = ucft_comm_rank(R.w);
    R.n = ucft_comm_size(R.w);
    CHECK(R.n % NODES == 0 && R.n <= MAX_RANKS && ucft_comm_get_f(R.w) == 1,
          "needs a multiple of %d ranks up to %d and UCFT_F=1 (n %d, f %d)",
          NODES, MAX_RANKS, R.n, ucft_comm_get_f(R.w));
    R.all = ((uint64_t)1 << R.n) - 1;
    check_placement(&R);

    for (int it = 0; it < R.iters; it++) {
        one_iteration(&R, it);
        if (R.st[it] == UCFT_OK && (uint64_t)R.mask[it] != R.all) {
            /* Once a result has left the node out, all later ones must. */
            CHECK(!saw_kill || ((uint64_t)R.mask[it] & R.node_mask) == 0 ||
                      !R.expect_ok,
                  "iteration %d includes node %d again", it, DEAD_NODE);
            saw_kill = 1;
        }
        saw_failed |= R.st[it] != UCFT_OK;
        nanosleep(&(struct timespec){0, PAUSE_NS}, NULL);
    }
    if (R.expect_ok) {
        CHECK(saw_kill, "node %d was not killed during the loop", DEAD_NODE);
        CHECK((uint64_t)R.mask[R.iters - 1] == (R.all & ~R.node_mask),
              "last result %llx is not the survivors'",
              (unsigned long long)R.mask[R.iters - 1]);
        check_identical(&R);
    } else {
        CHECK(saw_failed, "no allreduce failed after node %d died", DEAD_NODE);
    }
    /* Nothing went missing or failed before the kill. */
    uint64_t t_kill =
        kill_iter > 0 ? R.done_ns[kill_iter - 1] + PAUSE_NS : kill_time();
    CHECK(t_kill > 0, "no kill in the injection log");
    for (int it = 0; it < R.iters; it++)
        CHECK(R.done_ns[it] > t_kill ||
                  (R.st[it] == UCFT_OK && (uint64_t)R.mask[it] == R.all),
              "iteration %d lost ranks before the kill", it);
    /* Rank 0 speaks for all when they agree (checked above); when
     * operations fail they cannot compare, so each one reports. */
    if (R.rank == 0 || !R.expect_ok)
        report(&R, t_kill);
    ucft_status_t st = ucft_finalize(R.ctx);
    CHECK(st == UCFT_OK || !R.expect_ok, "finalize: %s", ucft_status_name(st));
    return 0;
}
