/*
 * Allgather and reduce-scatter on a real job (the algorithms UCFT_*_ALG
 * selects): it_gather ITERS [COUNT]
 *
 * ITERS rounds of: allgather of COUNT int32 per rank (default 5) with the
 * presence bytes, blocking and non-blocking; reduce-scatter of COUNT int64
 * per block (sum); allreduce of n COUNT int64 (sum). Every value is checked
 * at every rank. Then bad input: UCFT_ERR_INVALID_PARAM, no crash; then
 * two rounds of 1 element per block.
 *
 * it_gather kill|killring ITERS [COUNT]: rounds of allgather until ITERS
 * have run;
 * the launcher kills a rank meanwhile (--kill). Every call must succeed
 * (corrected algorithms, f = 1) with every live rank's block present and
 * right, and a block marked absent only for a rank that has failed
 * (ucft_context_get_failed_ranks after the call); a present block is
 * always its rank's data. killring (the ring baseline): a call may also
 * end with UCFT_ERR_PROC_FAILED once a rank has failed, never hang; a
 * call that succeeds has every block, right.
 */
#include "it_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int g_rank;

static int32_t ag_in(int r, size_t i, int it)
{
    return (int32_t)(r * 1000 + (int)(i % 97) * 3 + it);
}

static int64_t rs_in(int r, size_t i, int it)
{
    return (int64_t)(r + 1) * (int64_t)(i % 13 + 1) + it;
}

static int64_t rs_sum(int n, size_t i, int it)
{
    return (int64_t)n * (n + 1) / 2 * (int64_t)(i % 13 + 1) + (int64_t)n * it;
}

static void rounds(ucft_comm_h w, int iters, size_t count)
{
    int rank = ucft_comm_rank(w), n = ucft_comm_size(w);
    size_t nc = (size_t)n * count;
    int32_t *a = malloc((count + 1) * sizeof(*a));
    int32_t *g = malloc((nc + 1) * sizeof(*g));
    int64_t *v = malloc((nc + 1) * sizeof(*v)), *s = malloc((nc + 1) * 8);
    uint8_t *pr = malloc((size_t)n);
    CHECK(a && g && v && s && pr, "out of memory");
    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < count; i++)
            a[i] = ag_in(rank, i, it);
        memset(g, 0xff, nc * sizeof(*g));
        memset(pr, 7, (size_t)n);
        ucft_status_t st;
        if (it % 2) {
            ucft_request_h r;
            CHECK_ST(ucft_iallgather(w, a, g, count, UCFT_INT32, pr, &r),
                     UCFT_OK);
            st = ucft_wait(&r, NULL);
        } else {
            st = ucft_allgather(w, a, g, count, UCFT_INT32, pr);
        }
        CHECK(st == UCFT_OK, "allgather: %s", ucft_status_name(st));
        for (int q = 0; q < n; q++) {
            CHECK(pr[q] == 1, "it %d present[%d] = %d", it, q, pr[q]);
            for (size_t i = 0; i < count; i++)
                CHECK(g[(size_t)q * count + i] == ag_in(q, i, it),
                      "it %d allgather block %d [%zu]", it, q, i);
        }
        for (size_t i = 0; i < nc; i++)
            v[i] = rs_in(rank, i, it);
        for (size_t i = 0; i < count; i++)
            s[i] = -1;
        if (it % 2) {
            ucft_request_h r;
            CHECK_ST(
                ucft_ireduce_scatter(w, v, s, count, UCFT_INT64, UCFT_SUM, &r),
                UCFT_OK);
            st = ucft_wait(&r, NULL);
        } else {
            st = ucft_reduce_scatter(w, v, s, count, UCFT_INT64, UCFT_SUM);
        }
        CHECK(st == UCFT_OK, "reduce_scatter: %s", ucft_status_name(st));
        for (size_t i = 0; i < count; i++)
            CHECK(s[i] == rs_sum(n, (size_t)rank * count + i, it),
                  "it %d reduce_scatter [%zu] %lld", it, i, (long long)s[i]);
        st = ucft_allreduce(w, v, s, nc, UCFT_INT64, UCFT_SUM);
        CHECK(st == UCFT_OK, "allreduce: %s", ucft_status_name(st));
        for (size_t i = 0; i < nc; i++)
            CHECK(s[i] == rs_sum(n, i, it), "it %d allreduce [%zu]", it, i);
    }
    /* Bad input: an error, not a crash. */
    CHECK_ST(ucft_allgather(w, a, NULL, 1, UCFT_INT32, NULL),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_allgather(w, NULL, g, 1, UCFT_INT32, NULL),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_reduce_scatter(w, v, s, 1, UCFT_DOUBLE, UCFT_BAND),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_reduce_scatter(w, v, NULL, 1, UCFT_INT64, UCFT_SUM),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_iallgather(w, a, g, 1, UCFT_INT32, NULL, NULL),
             UCFT_ERR_INVALID_PARAM);
    free(a);
    free(g);
    free(v);
    free(s);
    free(pr);
    if (rank == 0)
        printf("it_gather: %d rounds of allgather, reduce_scatter, allreduce "
               "of %zu per block correct on %d ranks\n",
               iters, count, n);
}

static int failed(ucft_context_h ctx, int q)
{
    int fl[64];
    size_t nf = 0;
    if (ucft_context_get_failed_ranks(ctx, fl, 64, &nf) != UCFT_OK)
        return 0;
    for (size_t i = 0; i < nf && i < 64; i++)
        if (fl[i] == q)
            return 1;
    return 0;
}

/* An absent block's rank must be failed: this rank may hold the others'
 * result before its own news of the failure has arrived, so it waits for
 * that news (bounded: a live rank is never reported failed). */
static int failed_soon(ucft_context_h ctx, int q)
{
    for (int i = 0; i < 5000; i++) {
        if (failed(ctx, q))
            return 1;
        ucft_context_progress(ctx);
        usleep(1000);
    }
    return 0;
}

static void kill_rounds(ucft_context_h ctx, ucft_comm_h w, int iters,
                        size_t count, int ring)
{
    int rank = ucft_comm_rank(w), n = ucft_comm_size(w);
    size_t nc = (size_t)n * count;
    int32_t *a = malloc(count * sizeof(*a) + 1), *g = malloc(nc * 4 + 4);
    uint8_t *pr = malloc((size_t)n);
    int absent = 0, errors = 0;
    CHECK(a && g && pr, "out of memory");
    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < count; i++)
            a[i] = ag_in(rank, i, it);
        ucft_status_t st = ucft_allgather(w, a, g, count, UCFT_INT32, pr);
        if (ring && st == UCFT_ERR_PROC_FAILED) {
            errors++;
            continue;
        }
        CHECK(st == UCFT_OK, "it %d allgather: %s", it, ucft_status_name(st));
        for (int q = 0; q < n; q++) {
            CHECK(pr[q] <= 1, "it %d present[%d] = %d", it, q, pr[q]);
            CHECK(pr[q] == 1 || failed_soon(ctx, q),
                  "it %d block %d absent, rank alive", it, q);
            absent += !pr[q];
            for (size_t i = 0; i < count; i++)
                CHECK(g[(size_t)q * count + i] == (pr[q] ? ag_in(q, i, it) : 0),
                      "it %d block %d [%zu]", it, q, i);
        }
        usleep(2000);
    }
    free(a);
    free(g);
    free(pr);
    if (rank == 0)
        printf("it_gather kill: %d allgathers, %d absent blocks, %d ended "
               "with UCFT_ERR_PROC_FAILED\n",
               iters, absent, errors);
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    int ring = argc > 1 && strcmp(argv[1], "killring") == 0;
    int kill = ring || (argc > 1 && strcmp(argv[1], "kill") == 0);
    int iters = argc > 1 + kill ? atoi(argv[1 + kill]) : 20;
    size_t count = argc > 2 + kill ? strtoul(argv[2 + kill], NULL, 10) : 5;
    if (ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    ucft_comm_h w = ucft_comm_world(ctx);
    g_rank = ucft_comm_rank(w);
    if (kill)
        kill_rounds(ctx, w, iters, count, ring);
    else {
        rounds(w, iters, count);
        /* A small size after a large one: with a UCFT_*_ALG table, the
         * other algorithm in the same recycled states. */
        rounds(w, 2, 1);
    }
    return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
}
