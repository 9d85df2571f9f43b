/*
 * Flow control of reduce loops (comm/coll_post.c). Rank 0, the root,
 * is slow (it sleeps SLEEP_US before every reduce); the others are leaves
 * or combiners that would otherwise run ahead without bound. Every rank
 * publishes the number of reduces it has completed in a file shared by
 * the job (mmap), and after each of its own reduces records how far it is
 * ahead of the root. The root checks every result. Prints one line per
 * rank: "flow: rank R lead L" (the largest lead seen). Then NB
 * non-blocking reduces from rotating roots, all in flight at once.
 *
 * Usage: it_flow FILE ITERS SLEEP_US   (FILE: at least 8 * N bytes, zeroed)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucft.h>
#include <unistd.h>

#include "it_check.h"

int g_rank = -1;

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    CHECK(argc == 4, "usage: it_flow FILE ITERS SLEEP_US");
    int iters = atoi(argv[2]);
    long sleep = atol(argv[3]);
    CHECK_ST(ucft_init(NULL, &ctx), UCFT_OK);
    ucft_comm_h w = ucft_comm_world(ctx);
    int me = ucft_comm_rank(w), n = ucft_comm_size(w);
    g_rank = me;

    int fd = open(argv[1], O_RDWR);
    CHECK(fd >= 0, "cannot open %s", argv[1]);
    int64_t *done = mmap(NULL, (size_t)n * sizeof(int64_t),
                         PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(done != MAP_FAILED, "cannot map %s", argv[1]);
    close(fd);

    int64_t lead = 0;
    for (int i = 0; i < iters; i++) {
        int64_t in = (int64_t)(me + 1) * (i + 1), out = -1;
        if (me == 0 && sleep > 0)
            sleep_us(sleep);
        CHECK_ST(ucft_reduce(w, &in, &out, 1, UCFT_INT64, UCFT_SUM, 0),
                 UCFT_OK);
        if (me == 0)
            CHECK(out == (int64_t)n * (n + 1) / 2 * (i + 1),
                  "reduce %d: got %lld", i, (long long)out);
        __atomic_store_n(&done[me], i + 1, __ATOMIC_RELEASE);
        int64_t d = i + 1 - __atomic_load_n(&done[0], __ATOMIC_ACQUIRE);
        if (d > lead)
            lead = d;
    }
    /* Non-blocking: NB reduces in flight at once, then one wait for all.
     * Posts that end a window wait for the barrier of the window before
     * (which every rank posts too): no deadlock, every result right. */
    enum { NB = 300 };
    static int64_t nin[NB], nout[NB];
    ucft_request_h reqs[NB];
    for (int i = 0; i < NB; i++) {
        nin[i] = (int64_t)(me + 1) * (i + 7);
        nout[i] = -1;
        CHECK_ST(ucft_ireduce(w, &nin[i], &nout[i], 1, UCFT_INT64, UCFT_SUM,
                              i % n, &reqs[i]),
                 UCFT_OK);
    }
    CHECK_ST(ucft_waitall(NB, reqs, NULL), UCFT_OK);
    for (int i = 0; i < NB; i++)
        if (me == i % n)
            CHECK(nout[i] == (int64_t)n * (n + 1) / 2 * (i + 7),
                  "ireduce %d: got %lld", i, (long long)nout[i]);
    printf("flow: rank %d lead %lld\n", me, (long long)lead);
    fflush(stdout);
    munmap(done, (size_t)n * sizeof(int64_t));
    CHECK_ST(ucft_finalize(ctx), UCFT_OK);
    return 0;
}
