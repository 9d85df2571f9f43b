/*
 * Early completion of the corrected broadcast: a rank that has the data
 * gets its result at once, while its part (corrections to send and to hear)
 * runs on. Rank SLOW joins every broadcast DELAY late; its ring neighbours
 * need to hear its correction to finish their part, but their ucft_bcast
 * must return well before SLOW joins, with the right data. Every rank
 * checks the data of every round; finalize must then end cleanly (the
 * parts still running finish first). Usage: it_bcast_early [ROUNDS]
 * (4 ranks or more; UCFT_BCAST_ALG unset or corrected).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucft.h>

#include "it_check.h"

int g_rank = -1;

static double it_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { SLOW = 2 };
#define DELAY_S 0.6 /* SLOW's lateness */
#define BOUND_S 0.3 /* the others' bound on one broadcast */

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = g_rank = ucft_comm_rank(w);
    int n = ucft_comm_size(w);
    CHECK(n >= 4, "needs 4 ranks or more, not %d", n);
    for (int it = 0; it < rounds; it++) {
        unsigned char b[64];
        for (int i = 0; i < 64; i++)
            b[i] = rank == 0 ? (unsigned char)(i * 5 + it) : 0;
        if (rank == SLOW) {
            struct timespec ts = {0, (long)(DELAY_S * 1e9)};
            nanosleep(&ts, NULL);
        }
        double t0 = it_now_s();
        ucft_status_t st = ucft_bcast(w, b, sizeof(b), UCFT_BYTE, 0);
        double el = it_now_s() - t0;
        CHECK(st == UCFT_OK, "round %d: bcast: %s", it, ucft_status_name(st));
        for (int i = 0; i < 64; i++)
            CHECK(b[i] == (unsigned char)(i * 5 + it),
                  "round %d: byte %d is %u", it, i, b[i]);
        printf("rank %d: round %d: bcast returned after %.3f s\n", rank, it,
               el);
        CHECK(rank == SLOW || el < BOUND_S,
              "round %d: bcast took %.3f s: it waited for rank %d", it, el,
              SLOW);
    }
    CHECK(ucft_finalize(ctx) == UCFT_OK, "finalize failed");
    return 0;
}
