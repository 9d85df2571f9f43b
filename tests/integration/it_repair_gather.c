/* Allgather and reduce-scatter through spaced kills with f = 1 and tree
 * repair (docs/trees.md): once the survivors have agreed on a failure,
 * both run over the live members only, so a communicator keeps them
 * working after more failures than f. Every iteration, every rank:
 *
 *   allgather      its block {rank, iteration}; every block present in
 *                  the output is its member's, and the survivors' presence
 *                  sets are equal;
 *   reduce_scatter n blocks of one uint64, bit `rank` set in each; its own
 *                  block's bits are the members included, the same set at
 *                  every survivor.
 *
 * Every call must succeed. At the end every member that was ever absent
 * or left out must be among the failed ranks (a live member always
 * takes part), and, when FAILURES is given, exactly that many ranks have
 * failed. Exit 0 when every check held.
 *
 *   it_repair_gather [ITERATIONS [MS_BETWEEN [FAILURES]]]   (at most 64 ranks)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucft.h>

#include "it_check.h"

int g_rank;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The survivors' values of x must all be equal. */
static void check_same(ucft_comm_h w, uint64_t x, const char *what, int it)
{
    uint64_t lo, hi;
    CHECK_ST(ucft_allreduce(w, &x, &lo, 1, UCFT_UINT64, UCFT_MIN), UCFT_OK);
    CHECK_ST(ucft_allreduce(w, &x, &hi, 1, UCFT_UINT64, UCFT_MAX), UCFT_OK);
    CHECK(lo == hi, "iteration %d: %s differs between survivors: %#llx..%#llx",
          it, what, (unsigned long long)lo, (unsigned long long)hi);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int pause = argc > 2 ? atoi(argv[2]) : 20;
    int want_failed = argc > 3 ? atoi(argv[3]) : -1;
    ucft_context_h ctx;
    if (ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    ucft_comm_h w = ucft_comm_world(ctx);
    int n = ucft_comm_size(w);
    g_rank = ucft_comm_rank(w);
    CHECK(n <= 64, "%d ranks: at most 64", n);
    int64_t mine[2], *all = calloc((size_t)n * 2, sizeof(*all));
    uint64_t *rs_in = calloc((size_t)n, sizeof(*rs_in)), rs_out;
    uint8_t present[64];
    uint64_t ever_out = 0, full = n == 64 ? ~0ull : (1ull << n) - 1;
    CHECK(all != NULL && rs_in != NULL, "out of memory");
    for (int b = 0; b < n; b++)
        rs_in[b] = 1ull << g_rank;

    for (int it = 0; it < iters; it++) {
        mine[0] = g_rank;
        mine[1] = (int64_t)it * 1000 + g_rank;
        CHECK_ST(ucft_allgather(w, mine, all, 2, UCFT_INT64, present), UCFT_OK);
        uint64_t in = 0;
        for (int m = 0; m < n; m++) {
            if (!present[m])
                continue;
            in |= 1ull << m;
            CHECK(all[2 * m] == m && all[2 * m + 1] == (int64_t)it * 1000 + m,
                  "iteration %d: block %d is {%lld, %lld}", it, m,
                  (long long)all[2 * m], (long long)all[2 * m + 1]);
        }
        CHECK(in >> g_rank & 1, "iteration %d: own block absent", it);
        ever_out |= full & ~in;
        check_same(w, in, "the allgather's presence set", it);

        CHECK_ST(
            ucft_reduce_scatter(w, rs_in, &rs_out, 1, UCFT_UINT64, UCFT_SUM),
            UCFT_OK);
        CHECK((rs_out & ~full) == 0 && (rs_out >> g_rank & 1),
              "iteration %d: reduce-scatter set %#llx", it,
              (unsigned long long)rs_out);
        ever_out |= full & ~rs_out;
        check_same(w, rs_out, "the reduce-scatter's members", it);
        sleep_ms(pause);
    }
    CHECK_ST(ucft_barrier(w), UCFT_OK);
    int failed[64];
    size_t nf = 0;
    CHECK_ST(ucft_context_get_failed_ranks(ctx, failed, 64, &nf), UCFT_OK);
    uint64_t dead = 0;
    for (size_t i = 0; i < nf && i < 64; i++)
        dead |= 1ull << failed[i];
    CHECK(want_failed < 0 || nf == (size_t)want_failed,
          "%zu ranks failed, expected %d", nf, want_failed);
    CHECK((ever_out & ~dead) == 0,
          "members left out that did not fail: %#llx (failed %#llx)",
          (unsigned long long)(ever_out & ~dead), (unsigned long long)dead);
    printf("rank %d: %d iterations, %zu failed, all allgathers and "
           "reduce-scatters right\n",
           g_rank, iters, nf);
    free(all);
    free(rs_in);
    return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
}
