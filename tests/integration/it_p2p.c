/*
 * Point-to-point integration checks, run as a real job (ucftrun, mpirun).
 * Usage: it_p2p MODE [args]. Every rank checks its own outcomes and exits
 * non-zero on the first violation, naming it; the launcher's exit status
 * is the test's verdict.
 *
 * Modes:
 *   pairs     every rank sends a distinct payload to every rank (itself
 *             included) with isend/irecv; contents and info checked
 *   ring      a token goes around the ring twice; sum checked at rank 0
 *   anysource rank 0 receives one message from every other rank with
 *             ANY_SOURCE / ANY_TAG (after probing); senders, tags, lengths
 *   truncate  a 64-byte message into a 16-byte buffer: UCFT_ERR_TRUNCATED,
 *             nothing written past the buffer
 *   cancel    a receive that never matches, cancelled: UCFT_ERR_CANCELED
 *   misuse    invalid arguments: UCFT_ERR_INVALID_PARAM, no crash
 *   reinit    finalize and init again twice, an allreduce each time
 *   killwait  every survivor waits for a message from the last rank, which
 *             the launcher kills (--kill): UCFT_ERR_PROC_FAILED within the
 *             bound given as argument (seconds); rank 0 also has a pending
 *             ANY_SOURCE receive that must end with PROC_FAILED_PENDING,
 *             and a blocking one that must end with PROC_FAILED
 *   wait      every rank but the last waits for a message from the last
 *             rank, forever (for --stop + --timeout)
 *   master N  the chapter's master-worker example: rank 0 hands out N work
 *             items over ANY_SOURCE; the launcher kills the last rank
 *             mid-run; the master acknowledges, requeues the lost item and
 *             must still collect the exact total
 *   idle S F  every rank but 0 blocks in a receive from rank 0, which
 *             sleeps S seconds first: each waiting rank must use less than
 *             a fraction F of one core meanwhile (ranks sleep on the event
 *             fd; 8 ranks on 2 cores must not saturate them)
 *
 * Every mode also checks UCFT_SLICE's contract on the calling thread: its
 * time slice is 100 us between ucft_init and ucft_finalize (unless
 * UCFT_SLICE is set, or the kernel has no per-thread slices) and is what
 * it was before once ucft_finalize has returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <ucft.h>

#include "it_check.h"
#include "tests/thread_slice.h"

int g_rank = -1; /* for messages only */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void mode_pairs(ucft_comm_h w, int rank, int size)
{
    long *out = calloc((size_t)size, sizeof(long));
    long *in = calloc((size_t)size, sizeof(long));
    ucft_request_h *reqs = calloc(2 * (size_t)size, sizeof(*reqs));
    ucft_info_t *infos = calloc(2 * (size_t)size, sizeof(*infos));
    CHECK(out && in && reqs && infos, "out of memory");
    for (int p = 0; p < size; p++) {
        CHECK_ST(ucft_irecv(w, &in[p], sizeof(long), p, 100 + p, &reqs[p]),
                 UCFT_OK);
    }
    for (int p = 0; p < size; p++) {
        out[p] = (long)rank * 1000 + p;
        CHECK_ST(ucft_isend(w, &out[p], sizeof(long), p, 100 + rank,
                            &reqs[size + p]),
                 UCFT_OK);
    }
    CHECK_ST(ucft_waitall(2 * (size_t)size, reqs, infos), UCFT_OK);
    for (int p = 0; p < size; p++) {
        CHECK(reqs[p] == NULL, "request not released");
        CHECK(in[p] == (long)p * 1000 + rank, "from %d: got %ld", p, in[p]);
        CHECK(infos[p].source == p && infos[p].tag == 100 + p &&
                  infos[p].length == sizeof(long),
              "info from %d: source %d tag %d length %zu", p, infos[p].source,
              infos[p].tag, infos[p].length);
    }
    free(out);
    free(in);
    free(reqs);
    free(infos);
}

static void mode_ring(ucft_comm_h w, int rank, int size)
{
    long token = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int lap = 0; lap < 2; lap++) {
        if (rank == 0) {
            CHECK_ST(ucft_send(w, &token, sizeof(token), right, 1), UCFT_OK);
            CHECK_ST(ucft_recv(w, &token, sizeof(token), left, 1, NULL),
                     UCFT_OK);
        } else {
            CHECK_ST(ucft_recv(w, &token, sizeof(token), left, 1, NULL),
                     UCFT_OK);
            token += rank;
            CHECK_ST(ucft_send(w, &token, sizeof(token), right, 1), UCFT_OK);
        }
    }
    if (rank == 0) {
        long want = (long)size * (size - 1); /* two laps */
        CHECK(token == want, "token %ld, expected %ld", token, want);
    }
}

static void mode_anysource(ucft_comm_h w, int rank, int size)
{
    if (rank != 0) {
        char msg[32];
        int len = snprintf(msg, sizeof(msg), "from %d", rank) + 1;
        CHECK_ST(ucft_send(w, msg, (size_t)len, 0, 500 + rank), UCFT_OK);
        return;
    }
    int *seen = calloc((size_t)size, sizeof(int));
    for (int i = 1; i < size; i++) {
        ucft_info_t pinfo, info;
        char msg[32];
        CHECK_ST(ucft_probe(w, UCFT_ANY_SOURCE, UCFT_ANY_TAG, &pinfo), UCFT_OK);
        CHECK(pinfo.source > 0 && pinfo.source < size, "probe source %d",
              pinfo.source);
        CHECK_ST(ucft_recv(w, msg, sizeof(msg), UCFT_ANY_SOURCE, UCFT_ANY_TAG,
                           &info),
                 UCFT_OK);
        CHECK(info.source > 0 && info.source < size && !seen[info.source],
              "source %d", info.source);
        seen[info.source] = 1;
        CHECK(info.tag == 500 + info.source, "tag %d from %d", info.tag,
              info.source);
        char want[32];
        int len = snprintf(want, sizeof(want), "from %d", info.source) + 1;
        CHECK(info.length == (size_t)len && strcmp(msg, want) == 0,
              "payload '%s' length %zu", msg, info.length);
    }
    int flag = 1;
    CHECK_ST(ucft_iprobe(w, UCFT_ANY_SOURCE, UCFT_ANY_TAG, &flag, NULL),
             UCFT_OK);
    CHECK(flag == 0, "unexpected extra message");
    free(seen);
}

static void mode_truncate(ucft_comm_h w, int rank, int size)
{
    CHECK(size >= 2, "needs 2 ranks");
    if (rank == 0) {
        char big[64];
        memset(big, 'x', sizeof(big));
        CHECK_ST(ucft_send(w, big, sizeof(big), 1, 9), UCFT_OK);
    } else if (rank == 1) {
        char buf[16 + 16];
        ucft_info_t info, pinfo;
        memset(buf, 'g', sizeof(buf));
        CHECK_ST(ucft_probe(w, 0, 9, &pinfo), UCFT_OK);
        CHECK(pinfo.length == 64, "probe length %zu", pinfo.length);
        ucft_status_t st = ucft_recv(w, buf, 16, 0, 9, &info);
        CHECK_ST(st, UCFT_ERR_TRUNCATED);
        CHECK_ST(info.status, UCFT_ERR_TRUNCATED);
        for (int i = 16; i < 32; i++)
            CHECK(buf[i] == 'g', "byte %d past the buffer overwritten", i);
    }
}

static void mode_cancel(ucft_comm_h w, int rank)
{
    long v;
    ucft_request_h r;
    ucft_info_t info;
    CHECK_ST(ucft_irecv(w, &v, sizeof(v), UCFT_ANY_SOURCE, 4242, &r), UCFT_OK);
    CHECK_ST(ucft_cancel(r), UCFT_OK);
    CHECK_ST(ucft_wait(&r, &info), UCFT_ERR_CANCELED);
    CHECK(r == NULL, "request not released");
    /* A large send nobody has received yet cannot be cancelled (it would
     * wait for ever): refused; it completes once received. */
    size_t big = 4u << 20;
    char *b = malloc(big), *c = malloc(big);
    CHECK(b != NULL && c != NULL, "out of memory");
    memset(b, 7, big);
    ucft_request_h s, q;
    CHECK_ST(ucft_isend(w, b, big, rank, 4343, &s), UCFT_OK);
    CHECK_ST(ucft_cancel(s), UCFT_ERR_NOT_SUPPORTED);
    CHECK_ST(ucft_irecv(w, c, big, rank, 4343, &q), UCFT_OK);
    CHECK_ST(ucft_wait(&q, &info), UCFT_OK);
    CHECK_ST(ucft_wait(&s, NULL), UCFT_OK);
    CHECK(memcmp(b, c, big) == 0, "large self-send corrupted");
    free(b);
    free(c);
}

/* NULL where the call writes its answer: INVALID_PARAM (and a log line). */
static void misuse_pointers(ucft_context_h ctx, ucft_comm_h w)
{
    ucft_request_h r = NULL;
    int done = 0, flag = 0;
    size_t n = 0;
    CHECK_ST(ucft_test(NULL, &done, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_test(&r, NULL, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_waitall(2, NULL, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_waitall(0, NULL, NULL), UCFT_OK);
    CHECK_ST(ucft_request_free(NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_context_get_fd(ctx, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_context_arm(NULL, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_context_get_failed_ranks(ctx, NULL, 0, NULL),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_context_get_failed_ranks(ctx, NULL, 4, &n),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_iprobe(w, 0, 0, NULL, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_iprobe(NULL, 0, 0, &flag, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_comm_failure_ack(NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_barrier(NULL), UCFT_ERR_INVALID_PARAM);
}

/* A copy of a handle used after the request was released: refused, and
 * the request pool stays sound (later requests work). */
static void misuse_stale(ucft_comm_h w)
{
    int me = ucft_comm_rank(w), done = 0;
    long v = 5, got = 0;
    ucft_request_h r = NULL, copy;

    /* Completed and released by ucft_wait (a receive posted first: a send
     * that completes at once gives no request at all). */
    CHECK_ST(ucft_irecv(w, &got, sizeof(got), me, 8, &r), UCFT_OK);
    CHECK(r != NULL, "a receive with no message yet completed at once");
    copy = r;
    CHECK_ST(ucft_send(w, &v, sizeof(v), me, 8), UCFT_OK);
    CHECK_ST(ucft_wait(&r, NULL), UCFT_OK);
    CHECK_ST(ucft_wait(&copy, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_test(&copy, &done, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_cancel(copy), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_request_free(&copy), UCFT_ERR_INVALID_PARAM);
    /* Freed while pending: waiting on the copy would never end. */
    CHECK_ST(ucft_irecv(w, &got, sizeof(got), me, 9, &r), UCFT_OK);
    copy = r;
    CHECK_ST(ucft_request_free(&r), UCFT_OK);
    CHECK(r == NULL, "ucft_request_free left the handle set");
    CHECK_ST(ucft_wait(&copy, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_send(w, &v, sizeof(v), me, 9), UCFT_OK);
    /* The pool still hands out working requests. */
    for (int i = 0; i < 100; i++) {
        got = 0;
        CHECK_ST(ucft_isend(w, &v, sizeof(v), me, 10, &r), UCFT_OK);
        CHECK_ST(ucft_recv(w, &got, sizeof(got), me, 10, NULL), UCFT_OK);
        CHECK_ST(ucft_wait(&r, NULL), UCFT_OK);
        CHECK(got == v, "value %ld after stale handles", got);
    }
}

static void mode_misuse(ucft_context_h ctx, ucft_comm_h w, int size)
{
    long v = 0;
    ucft_request_h r = NULL;
    CHECK_ST(ucft_isend(w, &v, sizeof(v), size, 0, &r), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_isend(w, &v, sizeof(v), -1, 0, &r), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_isend(w, &v, sizeof(v), 0, UCFT_ANY_TAG, &r),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_isend(w, &v, sizeof(v), 0, UCFT_TAG_UB + 1, &r),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_isend(w, NULL, 8, 0, 0, &r), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_isend(NULL, &v, 8, 0, 0, &r), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_isend(w, &v, 8, 0, 0, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_irecv(w, &v, sizeof(v), size + 3, 0, &r),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_irecv(w, &v, sizeof(v), 0, -7, &r), UCFT_ERR_INVALID_PARAM);
    CHECK(r == NULL, "request written on error");
    CHECK_ST(ucft_wait(NULL, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_cancel(NULL), UCFT_OK); /* a NULL request is complete */
    CHECK_ST(ucft_context_query(ctx, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_context_query(NULL, NULL), UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_finalize(NULL), UCFT_OK);
    /* A NULL request is complete. */
    int done = 0;
    CHECK_ST(ucft_test(&r, &done, NULL), UCFT_OK);
    CHECK(done == 1, "NULL request not done");
    /* Zero-length messages are fine. */
    CHECK_ST(ucft_isend(w, NULL, 0, ucft_comm_rank(w), 3, &r), UCFT_OK);
    CHECK_ST(ucft_recv(w, NULL, 0, ucft_comm_rank(w), 3, NULL), UCFT_OK);
    CHECK_ST(ucft_wait(&r, NULL), UCFT_OK);
    misuse_pointers(ctx, w);
    misuse_stale(w);
    /* A second context while this one runs: refused at once (a PMIx job's
     * start-up fence would wait for peers that never join it). */
    ucft_context_h second = NULL;
    double t0 = now_s();
    CHECK_ST(ucft_init(NULL, &second), UCFT_ERR_INVALID_PARAM);
    CHECK(second == NULL, "a refused ucft_init wrote a context");
    CHECK(now_s() - t0 < 5.0, "second ucft_init refused after %.1f s",
          now_s() - t0);
}

/* Finalize, then init again in the same process: a new context that
 * works (the refusal above is for two live contexts only). */
static ucft_context_h mode_reinit(ucft_context_h ctx)
{
    for (int i = 0; i < 2; i++) {
        CHECK_ST(ucft_barrier(ucft_comm_world(ctx)), UCFT_OK);
        CHECK_ST(ucft_finalize(ctx), UCFT_OK);
        ctx = NULL;
        CHECK_ST(ucft_init(NULL, &ctx), UCFT_OK);
        if (ctx == NULL)
            exit(1);
        ucft_comm_h w = ucft_comm_world(ctx);
        long v = ucft_comm_rank(w) + 1, sum = 0;
        CHECK_ST(ucft_allreduce(w, &v, &sum, 1, UCFT_INT64, UCFT_SUM), UCFT_OK);
        long n = ucft_comm_size(w);
        CHECK(sum == n * (n + 1) / 2, "sum %ld after re-init %d", sum, i);
    }
    return ctx;
}

static void mode_killwait(ucft_comm_h w, int rank, int size, double bound)
{
    int victim = size - 1;
    long v = 0, any = 0;
    ucft_request_h any_req = NULL;
    ucft_info_t info;
    if (rank == victim) {
        for (;;) /* the launcher kills us */
            nanosleep(&(struct timespec){1, 0}, NULL);
    }
    if (rank == 0)
        CHECK_ST(
            ucft_irecv(w, &any, sizeof(any), UCFT_ANY_SOURCE, 77, &any_req),
            UCFT_OK);
    double t0 = now_s();
    ucft_status_t st = ucft_recv(w, &v, sizeof(v), victim, 1, &info);
    double dt = now_s() - t0;
    CHECK_ST(st, UCFT_ERR_PROC_FAILED);
    CHECK(dt <= bound, "took %.3f s, bound %.1f s", dt, bound);
    size_t n = 0;
    int failed[4];
    CHECK_ST(ucft_context_get_failed_ranks(NULL, failed, 4, &n),
             UCFT_ERR_INVALID_PARAM);
    if (rank == 0) {
        /* The chapter's rules: the ANY_SOURCE receive reports PENDING and
         * stays pending until the failure is acknowledged. */
        CHECK_ST(ucft_wait(&any_req, NULL), UCFT_ERR_PROC_FAILED_PENDING);
        CHECK(any_req != NULL, "a PENDING request must stay valid");
        /* A blocking ANY_SOURCE receive completes instead (PENDING is for
         * nonblocking receives only): UCFT_ERR_PROC_FAILED, its receive
         * cancelled, its buffer untouched and the caller's again. */
        long blk = -7;
        CHECK_ST(
            ucft_recv(w, &blk, sizeof(blk), UCFT_ANY_SOURCE, 78, &info),
            UCFT_ERR_PROC_FAILED);
        CHECK(blk == -7, "the failed blocking receive wrote its buffer");
        CHECK(info.status == UCFT_ERR_PROC_FAILED, "info.status %s",
              ucft_status_name(info.status));
        int acked[4];
        size_t na = 9;
        CHECK_ST(ucft_comm_failure_get_acked(w, acked, 4, &na), UCFT_OK);
        CHECK(na == 0, "nothing acknowledged yet, got %zu", na);
        CHECK_ST(ucft_comm_failure_ack(w), UCFT_OK);
        CHECK_ST(ucft_comm_failure_get_acked(w, acked, 4, &na), UCFT_OK);
        CHECK(na == 1 && acked[0] == victim, "acked %zu ranks", na);
        int done = 1;
        CHECK_ST(ucft_test(&any_req, &done, NULL), UCFT_INPROGRESS);
        CHECK(done == 0, "acknowledged: still waiting, not failing");
        CHECK_ST(ucft_cancel(any_req), UCFT_OK);
        CHECK_ST(ucft_wait(&any_req, NULL), UCFT_ERR_CANCELED);
    }
    /* Later operations with the dead rank fail at once. */
    ucft_request_h r;
    CHECK_ST(ucft_isend(w, &v, sizeof(v), victim, 1, &r), UCFT_ERR_PROC_FAILED);
    CHECK_ST(ucft_irecv(w, &v, sizeof(v), victim, 1, &r), UCFT_ERR_PROC_FAILED);
    printf("rank %d: receive from the killed rank %d ended with %s after "
           "%.3f s\n",
           rank, victim, ucft_status_name(st), dt);
}

enum { TAG_WORK = 20, TAG_RESULT = 21 };

/* 1 when this context knows `rank` has failed. */
static int known_dead(ucft_context_h ctx, int rank)
{
    int failed[64];
    size_t nf = 0;
    int dead = 0;
    ucft_context_get_failed_ranks(ctx, failed, 64, &nf);
    for (size_t j = 0; j < nf && j < 64; j++)
        dead |= failed[j] == rank;
    return dead;
}

/* Gives the requeued item (if any) to an idle worker not known dead. */
static void hand_out(ucft_context_h ctx, ucft_comm_h w, long *held, int size,
                     long *requeued, int *active)
{
    for (int q = 1; q < size && *requeued >= 0; q++) {
        if (held[q] != -1 || known_dead(ctx, q))
            continue;
        if (ucft_send(w, requeued, sizeof(long), q, TAG_WORK) != UCFT_OK)
            continue; /* q just died: the next failure report covers it */
        held[q] = *requeued;
        *requeued = -1;
        (*active)++;
    }
}

static void mode_master(ucft_context_h ctx, ucft_comm_h w, int rank, int size,
                        long nitems)
{
    long item;
    if (rank != 0) { /* worker: result = 2 * item + 1; -1 ends */
        for (;;) {
            ucft_status_t st =
                ucft_recv(w, &item, sizeof(item), 0, TAG_WORK, NULL);
            CHECK_ST(st, UCFT_OK);
            if (item < 0)
                return;
            nanosleep(&(struct timespec){0, 2000000}, NULL); /* "compute" */
            long res[2] = {item, 2 * item + 1};
            CHECK_ST(ucft_send(w, res, sizeof(res), 0, TAG_RESULT), UCFT_OK);
        }
    }
    long *held = malloc((size_t)size * sizeof(long)); /* item per worker */
    long next = 0, sum = 0, want = 0, got = 0, requeued = -1;
    int active = 0;
    for (long i = 0; i < nitems; i++)
        want += 2 * i + 1;
    for (int p = 1; p < size; p++) {
        held[p] = next++;
        CHECK_ST(ucft_send(w, &held[p], sizeof(long), p, TAG_WORK), UCFT_OK);
        active++;
    }
    long res[2];
    ucft_request_h req;
    ucft_info_t info;
    CHECK_ST(ucft_irecv(w, res, sizeof(res), UCFT_ANY_SOURCE, TAG_RESULT, &req),
             UCFT_OK);
    while (got < nitems) {
        ucft_status_t st = ucft_wait(&req, &info);
        if (st == UCFT_ERR_PROC_FAILED_PENDING || st == UCFT_ERR_PROC_FAILED) {
            int failed[64];
            size_t nf = 0;
            CHECK_ST(ucft_comm_failure_ack(w), UCFT_OK);
            CHECK_ST(ucft_comm_failure_get_acked(w, failed, 64, &nf), UCFT_OK);
            for (size_t i = 0; i < nf; i++) {
                int p = failed[i];
                if (held[p] >= 0) { /* the lost work goes to a live worker */
                    requeued = held[p];
                    held[p] = -1;
                    active--;
                    hand_out(ctx, w, held, size, &requeued, &active);
                }
            }
            if (st == UCFT_ERR_PROC_FAILED_PENDING)
                continue; /* the request is still pending */
            CHECK_ST(ucft_irecv(w, res, sizeof(res), UCFT_ANY_SOURCE,
                                TAG_RESULT, &req),
                     UCFT_OK);
            continue;
        }
        CHECK_ST(st, UCFT_OK);
        int p = info.source;
        CHECK(res[0] == held[p] && res[1] == 2 * res[0] + 1,
              "worker %d returned %ld for item %ld", p, res[1], held[p]);
        sum += res[1];
        got++;
        held[p] = -1;
        long give = requeued >= 0 ? requeued : next < nitems ? next++ : -1;
        if (give == requeued)
            requeued = -1;
        if (give >= 0) {
            held[p] = give;
            /* p may die right after its result: its item goes back. */
            st = ucft_send(w, &give, sizeof(give), p, TAG_WORK);
            if (st == UCFT_ERR_PROC_FAILED) {
                held[p] = -1;
                requeued = give;
                active--;
                hand_out(ctx, w, held, size, &requeued, &active);
            } else {
                CHECK_ST(st, UCFT_OK);
            }
        } else {
            active--;
        }
        if (got < nitems)
            CHECK_ST(ucft_irecv(w, res, sizeof(res), UCFT_ANY_SOURCE,
                                TAG_RESULT, &req),
                     UCFT_OK);
    }
    CHECK(sum == want, "sum %ld, expected %ld", sum, want);
    size_t nf = 0;
    ucft_context_get_failed_ranks(ctx, NULL, 0, &nf);
    long stop = -1;
    for (int p = 1; p < size; p++)
        if (!known_dead(ctx, p))
            ucft_send(w, &stop, sizeof(stop), p, TAG_WORK);
    printf("master: %ld items, sum %ld correct, %zu worker(s) lost\n", nitems,
           sum, nf);
    free(held);
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void mode_idle(ucft_comm_h w, int rank, int size, double secs,
                      double max_frac)
{
    long v = 0;
    if (rank == 0) {
        struct timespec ts = {(time_t)secs,
                              (long)((secs - (double)(time_t)secs) * 1e9)};
        nanosleep(&ts, NULL);
        for (int p = 1; p < size; p++)
            CHECK_ST(ucft_send(w, &v, sizeof(v), p, 11), UCFT_OK);
        return;
    }
    double c0 = cpu_s(), t0 = now_s();
    CHECK_ST(ucft_recv(w, &v, sizeof(v), 0, 11, NULL), UCFT_OK);
    double cpu = cpu_s() - c0, wall = now_s() - t0;
    printf("rank %d: waited %.2f s using %.3f s of CPU (%.1f%% of a core)\n",
           rank, wall, cpu, 100.0 * cpu / wall);
    CHECK(cpu <= max_frac * wall, "used %.3f s of CPU in %.2f s", cpu, wall);
}

/* The calling thread's time slice (0 where the kernel reports none). */
static uint64_t my_slice(void)
{
    uint64_t v = test_thread_slice();
    CHECK(v != UINT64_MAX, "sched_getattr failed");
    return v;
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    ucft_context_attr_t attr;
    if (argc < 2) {
        fprintf(stderr, "usage: it_p2p MODE [args]\n");
        return 2;
    }
    uint64_t slice0 = my_slice();
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_context_query(ctx, &attr);
    g_rank = attr.rank;
    uint64_t slice1 = my_slice();
    if (getenv("UCFT_SLICE") == NULL)
        CHECK(slice1 == 100000 || (slice1 == 0 && slice0 == 0),
              "time slice after ucft_init: %llu ns (before: %llu)",
              (unsigned long long)slice1, (unsigned long long)slice0);
    ucft_comm_h w = ucft_comm_world(ctx);
    const char *mode = argv[1];
    if (strcmp(mode, "pairs") == 0) {
        mode_pairs(w, attr.rank, attr.size);
    } else if (strcmp(mode, "ring") == 0) {
        mode_ring(w, attr.rank, attr.size);
    } else if (strcmp(mode, "anysource") == 0) {
        mode_anysource(w, attr.rank, attr.size);
    } else if (strcmp(mode, "truncate") == 0) {
        mode_truncate(w, attr.rank, attr.size);
    } else if (strcmp(mode, "cancel") == 0) {
        mode_cancel(w, attr.rank);
    } else if (strcmp(mode, "misuse") == 0) {
        mode_misuse(ctx, w, attr.size);
    } else if (strcmp(mode, "reinit") == 0) {
        ctx = mode_reinit(ctx);
    } else if (strcmp(mode, "killwait") == 0) {
        mode_killwait(w, attr.rank, attr.size, argc > 2 ? atof(argv[2]) : 5.0);
        size_t n = 0;
        int failed[4];
        CHECK_ST(ucft_context_get_failed_ranks(ctx, failed, 4, &n), UCFT_OK);
        CHECK(n == 1 && failed[0] == attr.size - 1, "failed set: n=%zu", n);
    } else if (strcmp(mode, "master") == 0) {
        mode_master(ctx, w, attr.rank, attr.size,
                    argc > 2 ? atol(argv[2]) : 400);
    } else if (strcmp(mode, "idle") == 0) {
        mode_idle(w, attr.rank, attr.size, argc > 2 ? atof(argv[2]) : 3.0,
                  argc > 3 ? atof(argv[3]) : 0.1);
    } else if (strcmp(mode, "wait") == 0) {
        long v;
        if (attr.rank != attr.size - 1)
            ucft_recv(w, &v, sizeof(v), attr.size - 1, 1, NULL);
    } else {
        fprintf(stderr, "it_p2p: unknown mode '%s'\n", mode);
        ucft_finalize(ctx);
        return 2;
    }
    st = ucft_finalize(ctx);
    CHECK_ST(st, UCFT_OK);
    CHECK(my_slice() == slice0,
          "time slice after ucft_finalize: %llu ns, "
          "before ucft_init: %llu",
          (unsigned long long)my_slice(), (unsigned long long)slice0);
    return 0;
}
