/*
 * Allreduces across a partition (tests/integration/expect_netns.sh, mode
 * gate): every rank calls corrected allreduces of (rank + 1, its bit) with
 * f = 1 for SECS seconds, back to back, and prints one line per call:
 *
 *   op I ok SUM MASK     the result it handed over
 *   op I err STATUS      the call ended with an error
 *
 * then "done" at the end; a sum that is not the sum of the set of ranks
 * it names, or a set without this rank, fails the rank. The launcher
 * partitions the nodes meanwhile (or kills a rank);
 * under UCFT_QUORUM=y the minority fences (aborts) and the majority goes
 * on. The script checks that no two lines of one call I hold different
 * results, on either side: what the majority gate
 * (collectives/coll_gate.c) guarantees.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucft.h>

#include "it_check.h"

int g_rank = -1;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 6;
    ucft_context_h ctx;
    CHECK_ST(ucft_init(NULL, &ctx), UCFT_OK);
    ucft_comm_h w = ucft_comm_world(ctx);
    g_rank = ucft_comm_rank(w);
    CHECK(ucft_comm_size(w) <= 63, "at most 63 ranks");
    CHECK_ST(ucft_comm_set_f(w, 1), UCFT_OK);
    /* The third element says "my time is up": the loop ends at the first
     * result where any rank's is, the same call everywhere (a loop that
     * ended on each rank's own clock would leave ranks in different
     * calls). */
    int64_t in[3] = {g_rank + 1, (int64_t)1 << g_rank, 0}, out[3];
    double end = now_s() + secs;
    for (unsigned i = 0;; i++) {
        in[2] = now_s() >= end;
        ucft_status_t st = ucft_allreduce(w, in, out, 3, UCFT_INT64, UCFT_SUM);
        if (st == UCFT_OK) {
            int64_t want = 0;
            for (int r = 0; r < 63; r++)
                want += (out[1] >> r & 1) ? r + 1 : 0;
            CHECK(out[0] == want && (out[1] >> g_rank & 1),
                  "call %u: sum %lld for the set %llx", i, (long long)out[0],
                  (unsigned long long)out[1]);
            printf("op %u ok %lld %llx\n", i, (long long)out[0],
                   (unsigned long long)out[1]);
        } else
            printf("op %u err %s\n", i, ucft_status_name(st));
        fflush(stdout);
        if (st == UCFT_OK && out[2] > 0)
            break;
        CHECK(now_s() < end + 30, "no result for 30 s past the end");
    }
    printf("done\n");
    fflush(stdout);
    CHECK_ST(ucft_finalize(ctx), UCFT_OK);
    return 0;
}
