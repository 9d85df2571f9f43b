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
 *
 * With a second argument "shrink" (expect_netns.sh, mode gate_shrink) the
 * allreduces run on a communicator of world ranks 1, 2 and 4 only (the
 * others wait out the time), whose ranks a partition puts on both sides.
 * After an error a member shrinks it and goes on on the new one, printing
 *
 *   shrink G ok MASK     the G-th shrink made a communicator of MASK
 *   shrink G err STATUS
 *
 * and its allreduce lines carry G ("op G I ..."). The script checks that
 * no two ranks made different communicators in one shrink: the
 * agreement's gate (collectives/agree_gate.c). Without it, the member cut
 * off with the minority could shrink to itself before it fenced.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The world ranks of `c`'s members as a mask: an allgather of bits. */
static uint64_t members(ucft_comm_h c)
{
    int64_t in[2] = {(int64_t)1 << g_rank, 0}, out[2];
    ucft_status_t st = ucft_allreduce(c, in, out, 2, UCFT_INT64, UCFT_BOR);
    return st == UCFT_OK ? (uint64_t)out[0] : 0;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 6;
    int shrink = argc > 2 && strcmp(argv[2], "shrink") == 0;
    ucft_context_h ctx;
    CHECK_ST(ucft_init(NULL, &ctx), UCFT_OK);
    ucft_comm_h world = ucft_comm_world(ctx), w = world;
    g_rank = ucft_comm_rank(world);
    CHECK(ucft_comm_size(world) <= 63, "at most 63 ranks");
    CHECK_ST(ucft_comm_set_f(world, 1), UCFT_OK);
    unsigned gen = 0; /* shrinks done */
    if (shrink) {
        int in = g_rank == 1 || g_rank == 2 || g_rank == 4;
        CHECK_ST(ucft_comm_split(world, in ? 0 : UCFT_UNDEFINED, g_rank, &w),
                 UCFT_OK);
        if (!in) { /* wait the time out (the minority's ranks fence) */
            struct timespec ts = {(time_t)secs + 1, 0};
            nanosleep(&ts, NULL);
            printf("done\n");
            fflush(stdout);
            CHECK_ST(ucft_finalize(ctx), UCFT_OK);
            return 0;
        }
        CHECK_ST(ucft_comm_set_f(w, 1), UCFT_OK);
    }
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
            printf("op %u %u ok %lld %llx\n", gen, i, (long long)out[0],
                   (unsigned long long)out[1]);
        } else
            printf("op %u %u err %s\n", gen, i, ucft_status_name(st));
        fflush(stdout);
        while (shrink && st != UCFT_OK) { /* until a shrink succeeds */
            ucft_comm_h nc = NULL;
            ucft_status_t ss = ucft_comm_shrink(w, &nc);
            if (ss == UCFT_OK) {
                uint64_t m = members(nc);
                CHECK(m >> g_rank & 1, "shrink %u: not a member of %llx", gen,
                      (unsigned long long)m);
                printf("shrink %u ok %llx\n", gen, (unsigned long long)m);
                CHECK_ST(ucft_comm_set_f(nc, 1), UCFT_OK);
                if (w != world)
                    ucft_comm_free(&w);
                w = nc;
                i = 0;
                gen++;
                st = UCFT_OK;
            } else
                printf("shrink %u err %s\n", gen, ucft_status_name(ss));
            fflush(stdout);
            CHECK(now_s() < end + 30, "no shrink for 30 s past the end");
        }
        if (st == UCFT_OK && out[2] > 0)
            break;
        CHECK(now_s() < end + 30, "no result for 30 s past the end");
    }
    printf("done\n");
    fflush(stdout);
    if (w != world)
        ucft_comm_free(&w);
    CHECK_ST(ucft_finalize(ctx), UCFT_OK);
    return 0;
}
