/* Real jobs for the approximate allreduce and silent data corruption
 * (docs/gossip.md). Every rank contributes COUNT doubles, x[e] = 0.25 +
 * 0.5 (r + 1) / (e + 2); call 1 is the operation under test (UCFT_INJECT
 * may flip a bit of it or kill a rank in it), then a corrected allreduce
 * (exact) counts the ranks whose result is outside eps of the exact sum
 * over the survivors, and every rank checks that count:
 *   it_gossip approx ALG EPS ROUNDS none|some   ucft_allreduce_approx
 *   it_gossip exact none|some                   ucft_allreduce (double sum;
 *                                               UCFT_ALLREDUCE_ALG picks)
 *   it_gossip bcast none|some|error             ucft_bcast of rank 0's
 *                                               inputs (UCFT_BCAST_ALG
 *                                               picks)
 * "none": no rank may be wrong; "some": at least one must be (the flip
 * shows); "error" (exact, bcast): the operation must end at every rank, with
 * an error at one rank at least and the exact result at every other (a
 * fault-aware baseline under UCFT_CHECKSUM=y whose message was
 * corrupted); "accused" (exact, bcast): the corrupted message's sender is
 * declared failed and fenced (UCFT_CHECKSUM, corrected algorithms), and
 * every survivor holds the corrected result: the root's data, or the sum
 * over all ranks or over the survivors, the same at every survivor. Exit 0 when
 * the count is as wanted at every rank.
 *   it_gossip badparams                         bad arguments of
 *                                               ucft_allreduce_approx give
 *                                               UCFT_ERR_INVALID_PARAM, and
 *                                               defaults (NULL) work */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ucft.h>

#include "it_check.h"

#define COUNT 4

int g_rank;

static double input(int r, int e)
{
    return 0.25 + 0.5 * (r + 1) / (e + 2);
}

static int bad_params(ucft_comm_h w)
{
    double x[2] = {1, 2}, y[2];
    int ix[2] = {1, 2}, iy[2];
    ucft_approx_params_t p = {.field_mask = UCFT_APPROX_FIELD_ALG,
                              .alg = "nope"};
    CHECK_ST(ucft_allreduce_approx(w, x, y, 2, UCFT_DOUBLE, &p),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_allreduce_approx(w, ix, iy, 2, UCFT_INT32, NULL),
             UCFT_ERR_INVALID_PARAM);
    p = (ucft_approx_params_t){.field_mask = UCFT_APPROX_FIELD_EPS, .eps = 2};
    CHECK_ST(ucft_allreduce_approx(w, x, y, 2, UCFT_DOUBLE, &p),
             UCFT_ERR_INVALID_PARAM);
    p = (ucft_approx_params_t){.field_mask = UCFT_APPROX_FIELD_TOPOLOGY,
                               .topology = 9};
    CHECK_ST(ucft_allreduce_approx(w, x, y, 2, UCFT_DOUBLE, &p),
             UCFT_ERR_INVALID_PARAM);
    p = (ucft_approx_params_t){.field_mask = UCFT_APPROX_FIELD_ALG |
                                             UCFT_APPROX_FIELD_TOPOLOGY,
                               .alg = "hps",
                               .topology = UCFT_APPROX_RING};
    CHECK_ST(ucft_allreduce_approx(w, x, y, 2, UCFT_DOUBLE, &p),
             UCFT_ERR_INVALID_PARAM);
    CHECK_ST(ucft_allreduce_approx(w, x, NULL, 2, UCFT_DOUBLE, NULL),
             UCFT_ERR_INVALID_PARAM);
    /* Defaults: pflc, eps 1e-8, the sum. */
    CHECK_ST(ucft_allreduce_approx(w, x, y, 2, UCFT_DOUBLE, NULL), UCFT_OK);
    int n = ucft_comm_size(w);
    for (int e = 0; e < 2; e++)
        CHECK(fabs(y[e] - n * x[e]) <= 1e-8 * n * x[e], "y[%d] = %g", e, y[e]);
    return 0;
}

/* "accused": the sender of the corrupted message is declared failed by its
 * receiver and fenced, but it goes on until the news reaches it, and the
 * other ranks may complete before they hear of it (the window of a false
 * declaration, docs/detector.md). So: every rank waits (bounded) until the
 * failure is known; each survivor either completed with the corrected
 * result (the root's data, or the sum over all ranks or over all but the
 * accused) or ended with UCFT_ERR_PROC_FAILED (errors of collectives are
 * not uniform, ucft.h); the survivors that completed agree. */
static int check_accused(ucft_context_h ctx, ucft_status_t st, double *y,
                         int bcast)
{
    ucft_comm_h w = ucft_comm_world(ctx);
    int n = ucft_comm_size(w), failed[64], ok = st == UCFT_OK, wrong = 0;
    size_t nf = 0;
    if (!ok)
        CHECK_ST(st, UCFT_ERR_PROC_FAILED);
    for (int i = 0; i < 100000 && nf == 0; i++) {
        ucft_context_progress(ctx);
        CHECK_ST(ucft_context_get_failed_ranks(ctx, failed, 64, &nf), UCFT_OK);
        if (nf == 0)
            usleep(100);
    }
    CHECK(nf == 1, "%zu ranks failed, want the accused only", nf);
    for (int e = 0; ok && e < COUNT; e++) {
        double all = 0, rest = 0;
        for (int r = 0; r < n; r++) {
            all += input(r, e);
            rest += r == failed[0] ? 0 : input(r, e);
        }
        if (bcast)
            wrong |= y[e] != input(0, e);
        else
            wrong |= !(fabs(y[e] - all) <= 1e-12 * all) &&
                     !(fabs(y[e] - rest) <= 1e-12 * rest);
    }
    double lo[COUNT], hi[COUNT], a[COUNT], b[COUNT];
    for (int e = 0; e < COUNT; e++) {
        a[e] = ok ? y[e] : INFINITY;
        b[e] = ok ? y[e] : -INFINITY;
    }
    CHECK_ST(ucft_allreduce(w, a, lo, COUNT, UCFT_DOUBLE, UCFT_MIN), UCFT_OK);
    CHECK_ST(ucft_allreduce(w, b, hi, COUNT, UCFT_DOUBLE, UCFT_MAX), UCFT_OK);
    for (int e = 0; e < COUNT; e++)
        CHECK(lo[e] == hi[e] || lo[e] == INFINITY,
              "survivors differ: y[%d] from %.17g to %.17g", e, lo[e], hi[e]);
    printf("rank %d: %s, %zu dead, %s, y[0] = %.17g (%s)\n", g_rank,
           bcast ? "bcast" : "exact", nf, ucft_status_name(st), y[0],
           wrong ? "WRONG" : "ok");
    int nwrong = 0;
    CHECK_ST(ucft_allreduce(w, &wrong, &nwrong, 1, UCFT_INT32, UCFT_SUM),
             UCFT_OK);
    CHECK(nwrong == 0, "%d survivors with a wrong result", nwrong);
    return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    ucft_context_h ctx;
    double x[COUNT], y[COUNT];
    if (argc == 2 && strcmp(argv[1], "badparams") == 0) {
        if (ucft_init(NULL, &ctx) != UCFT_OK)
            return 1;
        g_rank = ucft_comm_rank(ucft_comm_world(ctx));
        bad_params(ucft_comm_world(ctx));
        return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
    }
    int approx = argc == 6 && strcmp(argv[1], "approx") == 0;
    int bcast = argc == 3 && strcmp(argv[1], "bcast") == 0;
    int exact = argc == 3 && (bcast || strcmp(argv[1], "exact") == 0);
    const char *want = approx ? argv[5] : exact ? argv[2] : "";
    double eps = approx ? atof(argv[3]) : 1e-12;

    if ((!approx && !exact) ||
        (strcmp(want, "none") != 0 && strcmp(want, "some") != 0 &&
         (!exact ||
          (strcmp(want, "error") != 0 && strcmp(want, "accused") != 0)))) {
        fprintf(stderr, "usage: it_gossip approx ALG EPS ROUNDS none|some | "
                        "exact|bcast none|some|error|accused\n");
        return 2;
    }
    if (ucft_init(NULL, &ctx) != UCFT_OK)
        return 1;
    ucft_comm_h w = ucft_comm_world(ctx);
    int n = ucft_comm_size(w);
    g_rank = ucft_comm_rank(w);
    for (int e = 0; e < COUNT; e++)
        x[e] = input(g_rank, e);

    ucft_status_t st;
    if (approx) {
        ucft_approx_params_t p = {
            .field_mask = UCFT_APPROX_FIELD_ALG | UCFT_APPROX_FIELD_EPS |
                          UCFT_APPROX_FIELD_ROUNDS | UCFT_APPROX_FIELD_SEED,
            .alg = argv[2],
            .eps = eps,
            .rounds = (unsigned)atoi(argv[4]),
            .seed = 7};
        st = ucft_allreduce_approx(w, x, y, COUNT, UCFT_DOUBLE, &p);
    } else if (bcast) {
        for (int e = 0; e < COUNT; e++)
            y[e] = g_rank == 0 ? x[e] : -1;
        st = ucft_bcast(w, y, COUNT, UCFT_DOUBLE, 0);
    } else {
        st = ucft_allreduce(w, x, y, COUNT, UCFT_DOUBLE, UCFT_SUM);
    }
    if (strcmp(want, "error") == 0) {
        /* The ranks that did get a result hold the exact sum (nobody
         * failed); the others ended with an error; nobody hangs. */
        int bad = 0;
        for (int e = 0; st == UCFT_OK && e < COUNT; e++) {
            double sum = 0;
            for (int r = 0; r < n; r++)
                sum += input(r, e);
            bad |= y[e] != (bcast ? input(0, e) : sum);
        }
        int v[2] = {st != UCFT_OK, bad}, t[2];
        printf("rank %d: %s ended with %s%s\n", g_rank,
               bcast ? "broadcast" : "exact allreduce", ucft_status_name(st),
               bad ? " and a WRONG result" : "");
        CHECK_ST(ucft_allreduce(w, v, t, 2, UCFT_INT32, UCFT_SUM), UCFT_OK);
        CHECK(t[0] >= 1 && t[1] == 0,
              "%d of %d ranks ended with an error, %d with a wrong result",
              t[0], n, t[1]);
        return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
    }
    int accused = strcmp(want, "accused") == 0;
    if (accused)
        return check_accused(ctx, st, y, bcast);
    CHECK_ST(st, UCFT_OK);

    /* The exact sum over the survivors known now. */
    int failed[64];
    size_t nf = 0;
    CHECK_ST(ucft_context_get_failed_ranks(ctx, failed, 64, &nf), UCFT_OK);
    int wrong = 0;
    for (int e = 0; bcast && e < COUNT; e++)
        wrong |= y[e] != input(0, e);
    for (int e = 0; !bcast && e < COUNT; e++) {
        double sum = 0;
        for (int r = 0; r < n; r++) {
            int dead = 0;
            for (size_t i = 0; i < nf && i < 64; i++)
                dead |= failed[i] == r;
            if (!dead)
                sum += input(r, e);
        }
        if (!(fabs(y[e] - sum) <= eps * fabs(sum)))
            wrong = 1;
    }
    printf("rank %d: %s, %zu dead, y[0] = %.17g (%s)\n", g_rank,
           approx  ? argv[2]
           : bcast ? "bcast"
                   : "exact",
           nf, y[0], wrong ? "WRONG" : "ok");
    int nwrong = 0;
    CHECK_ST(ucft_allreduce(w, &wrong, &nwrong, 1, UCFT_INT32, UCFT_SUM),
             UCFT_OK);
    if (strcmp(want, "none") == 0)
        CHECK(nwrong == 0, "%d ranks outside eps %g", nwrong, eps);
    else
        CHECK(nwrong > 0, "no rank outside eps %g: the flip did not show", eps);
    return ucft_finalize(ctx) == UCFT_OK ? 0 : 1;
}
