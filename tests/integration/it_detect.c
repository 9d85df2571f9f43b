/*
 * Failure-detector checks, run as real jobs under ucftrun. Each rank checks
 * its own outcomes and exits non-zero naming the first violation.
 *
 *   told BOUND   the last rank is killed or stopped by the launcher; every
 *                other rank must learn it (failure callback exactly once,
 *                failed set = {last}, a receive from it fails with
 *                UCFT_ERR_PROC_FAILED) within BOUND seconds of waiting
 *   busy SECS    the odd ranks compute SECS seconds without calling ucft
 *                (the even ones wait in a receive meanwhile), then a token
 *                goes around the ring: nobody may have been declared failed
 *                (the heartbeat threads kept the busy ranks alive)
 *   fence        the last rank prints its pid and then waits; the others
 *                wait until it is declared failed (the test stops it with
 *                SIGSTOP and later continues it: it must abort itself) and
 *                print "survivor R saw rank L fail"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucft.h>

#include "it_check.h"
#include <unistd.h>

int g_rank = -1; /* for messages only */

typedef struct seen {
    int count[64];
    int total;
} seen_t;

static void on_failure(ucft_context_h ctx, int rank, ucft_status_t why,
                       void *arg)
{
    seen_t *s = arg;
    (void)ctx;
    (void)why;
    if (rank >= 0 && rank < 64)
        s->count[rank]++;
    s->total++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Progresses (sleeping on the context fd in between) until `rank` is in
 * the failed set or `bound` seconds pass. Returns the seconds waited. */
static double wait_failed(ucft_context_h ctx, int rank, double bound)
{
    double t0 = now_s();
    for (;;) {
        int ranks[64];
        size_t n = 0;
        ucft_context_progress(ctx);
        ucft_context_get_failed_ranks(ctx, ranks, 64, &n);
        for (size_t i = 0; i < n && i < 64; i++)
            if (ranks[i] == rank)
                return now_s() - t0;
        if (now_s() - t0 > bound)
            return -1.0;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static void mode_told(ucft_context_h ctx, seen_t *seen, int rank, int size,
                      double bound)
{
    int victim = size - 1;
    if (rank == victim) {
        for (;;)
            pause(); /* the launcher kills or stops us */
    }
    double t = wait_failed(ctx, victim, bound);
    CHECK(t >= 0, "rank %d not declared failed within %.1f s", victim, bound);
    ucft_context_progress(ctx); /* the callback runs from progress */
    CHECK(seen->count[victim] == 1 && seen->total == 1,
          "callbacks: %d for rank %d, %d in all", seen->count[victim], victim,
          seen->total);
    size_t n = 0;
    int ranks[4];
    CHECK(ucft_context_get_failed_ranks(ctx, ranks, 4, &n) == UCFT_OK &&
              n == 1 && ranks[0] == victim,
          "failed set has %zu ranks", n);
    long v;
    ucft_status_t st =
        ucft_recv(ucft_comm_world(ctx), &v, sizeof(v), victim, 1, NULL);
    CHECK(st == UCFT_ERR_PROC_FAILED, "receive from the victim: %s",
          ucft_status_name(st));
    printf("rank %d: told that rank %d failed after %.3f s of waiting\n", rank,
           victim, t);
}

/* told, then `linger` seconds before finalizing: the heartbeat thread
 * goes on (a pidfd fires only once the dead process is torn down, which
 * a large process, under a sanitizer say, may finish after the news). */
static void mode_told_linger(ucft_context_h ctx, seen_t *seen, int rank,
                             int size, double bound, double linger)
{
    mode_told(ctx, seen, rank, size, bound);
    if (linger > 0)
        nanosleep(
            &(struct timespec){(time_t)linger,
                               (long)((linger - (double)(time_t)linger) * 1e9)},
            NULL);
}

static void mode_busy(ucft_context_h ctx, seen_t *seen, int rank, int size,
                      double secs)
{
    volatile unsigned long x = 0;
    double t0 = now_s();
    while (rank % 2 == 1 && now_s() - t0 < secs) /* compute, no ucft call */
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
    ucft_comm_h w = ucft_comm_world(ctx);
    long token = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    ucft_status_t st;
    if (rank == 0) {
        st = ucft_send(w, &token, sizeof(token), right, 2);
        CHECK(st == UCFT_OK, "send: %s", ucft_status_name(st));
        st = ucft_recv(w, &token, sizeof(token), left, 2, NULL);
    } else {
        st = ucft_recv(w, &token, sizeof(token), left, 2, NULL);
        CHECK(st == UCFT_OK, "recv: %s", ucft_status_name(st));
        token += rank;
        st = ucft_send(w, &token, sizeof(token), right, 2);
    }
    CHECK(st == UCFT_OK, "ring: %s", ucft_status_name(st));
    size_t n = 0;
    ucft_context_get_failed_ranks(ctx, NULL, 0, &n);
    CHECK(n == 0 && seen->total == 0, "%zu ranks declared failed", n);
    printf("rank %d: %s %.1f s; nobody suspected\n", rank,
           rank % 2 ? "computed without calling ucft for" : "waited", secs);
}

static void mode_fence(ucft_context_h ctx, int rank, int size)
{
    int victim = size - 1;
    if (rank == victim) {
        printf("victim pid %ld\n", (long)getpid());
        fflush(stdout);
        /* Keep using ucft: once continued, the detector finds out that
         * this rank was declared failed and aborts it. */
        for (;;) {
            ucft_context_progress(ctx);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
    }
    double t = wait_failed(ctx, victim, 30.0);
    CHECK(t >= 0, "rank %d not declared failed", victim);
    printf("survivor %d saw rank %d fail\n", rank, victim);
    fflush(stdout);
    /* Stay alive a little so the victim's abort can be observed. */
    sleep(3);
}

int main(int argc, char **argv)
{
    seen_t seen = {{0}, 0};
    ucft_params_t p = {.field_mask = UCFT_PARAM_FIELD_FAILURE_CB,
                       .failure_cb = on_failure,
                       .failure_cb_arg = &seen};
    ucft_context_h ctx;
    ucft_context_attr_t attr;
    if (argc < 2) {
        fprintf(stderr,
                "usage: it_detect told BOUND [LINGER] | busy SECS | fence\n");
        return 2;
    }
    ucft_status_t st = ucft_init(&p, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_context_query(ctx, &attr);
    g_rank = attr.rank;
    CHECK(attr.size <= 64, "at most 64 ranks");
    if (strcmp(argv[1], "told") == 0)
        mode_told_linger(ctx, &seen, attr.rank, attr.size,
                         argc > 2 ? atof(argv[2]) : 5.0,
                         argc > 3 ? atof(argv[3]) : 0.0);
    else if (strcmp(argv[1], "busy") == 0)
        mode_busy(ctx, &seen, attr.rank, attr.size,
                  argc > 2 ? atof(argv[2]) : 5.0);
    else if (strcmp(argv[1], "fence") == 0)
        mode_fence(ctx, attr.rank, attr.size);
    else {
        fprintf(stderr, "it_detect: unknown mode '%s'\n", argv[1]);
        return 2;
    }
    st = ucft_finalize(ctx);
    CHECK(st == UCFT_OK, "finalize: %s", ucft_status_name(st));
    return 0;
}
