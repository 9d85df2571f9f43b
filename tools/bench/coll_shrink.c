/*
 * ucft-bench coll --kill-to-shrink: the pattern of the MPI chapter's
 * iterative example, timed. Every rank loops a fault-aware allreduce
 * (recursive doubling unless --alg: int64 sum of 1) on a dup of the
 * world; when a call ends with UCFT_ERR_PROC_FAILED or UCFT_ERR_REVOKED
 * (ucftrun killed a rank), the rank revokes it, shrinks it and completes one
 * allreduce on the new communicator, which must give its size. Per
 * survivor: the time from the kill (UCFTRUN_INJECT_LOG) to that correct
 * result (first_ms); a reporting survivor prints them with their median,
 * p99 and max, and `bad` (wrong sums, errors, shrinks that do not leave
 * exactly the survivors).
 */
#include "tools/bench/coll.h"
#include "tools/bench/detector.h"
#include "ucft.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct shrink_rank_result {
    double first_ms, err_ms; /* kill -> result; kill -> the error */
    double shrink_ms;        /* kill -> the shrink returned */
    int32_t rank, bad, size_after;
    int64_t iters;
} shrink_rank_result_t;

static void report(const coll_opts_t *o, const shrink_rank_result_t *r, int n,
                   int size, int victim, const char *wait)
{
    double a[64], e[64], k[64];
    int na = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].first_ms >= 0 && na < 64) {
            e[na] = r[i].err_ms;
            k[na] = r[i].shrink_ms;
            a[na++] = r[i].first_ms;
        }
        bad += r[i].bad + (r[i].first_ms < 0);
    }
    double a50 = bench_quantile_sort(a, (size_t)na, 0.5);
    double a99 = bench_quantile_sort(a, (size_t)na, 0.99);
    double amax = na ? a[na - 1] : -1;
    double e50 = bench_quantile_sort(e, (size_t)na, 0.5);
    double k50 = bench_quantile_sort(k, (size_t)na, 0.5);
    if (o->json) {
        printf("{\"bench\":\"coll-kill-to-shrink\",\"ranks\":%d,"
               "\"victim\":%d,\"wait\":\"%s\",\"survivors\":%d,"
               "\"first_ms\":{\"median\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
               "\"error_ms\":{\"median\":%.3f},"
               "\"shrink_ms\":{\"median\":%.3f},\"bad\":%d,\"per_rank\":[",
               size, victim, wait, n, a50, a99, amax, e50, k50, bad);
        for (int i = 0; i < n; i++)
            printf("%s{\"rank\":%d,\"first_ms\":%.3f,\"error_ms\":%.3f,"
                   "\"shrink_ms\":%.3f,"
                   "\"size_after\":%d,\"iters\":%lld,\"bad\":%d}",
                   i ? "," : "", r[i].rank, r[i].first_ms, r[i].err_ms,
                   r[i].shrink_ms, r[i].size_after, (long long)r[i].iters,
                   r[i].bad);
        printf("]}\n");
        return;
    }
    printf("# ucft-bench coll --kill-to-shrink: %d ranks, rank %d killed, "
           "wait %s\n# first: kill -> a correct allreduce on the shrunk "
           "communicator;\n# error: kill -> the error that started the "
           "recovery\n",
           size, victim, wait);
    printf("%5s %10s %10s %10s %10s %5s\n", "rank", "first_ms", "error_ms",
           "size_after", "iters", "bad");
    for (int i = 0; i < n; i++)
        printf("%5d %10.3f %10.3f %10d %10lld %5d\n", r[i].rank, r[i].first_ms,
               r[i].err_ms, r[i].size_after, (long long)r[i].iters, r[i].bad);
    printf("first     median %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", a50, a99,
           amax);
    printf("wrong or missing results: %d\n", bad);
}

/* Loops until the recovery is done (or the bound); fills res. */
static void run(ucft_context_h ctx, const coll_opts_t *o,
                shrink_rank_result_t *res, const char *log)
{
    ucft_comm_h w;
    if (ucft_comm_dup(ucft_comm_world(ctx), &w) != UCFT_OK) {
        res->bad++;
        return;
    }
    uint64_t end = bench_now_ns() + (uint64_t)(o->bound_s * 1e9);
    uint64_t t_err = 0, t_done = 0, t_shrunk = 0;
    int64_t one = 1, sum;
    res->first_ms = res->err_ms = res->shrink_ms = -1;
    for (;;) {
        ucft_status_t st =
            ucft_allreduce(w, &one, &sum, 1, UCFT_INT64, UCFT_SUM);
        res->iters++;
        if (st == UCFT_OK) {
            res->bad += sum != ucft_comm_size(w);
            if ((res->iters & 255) == 0 && bench_now_ns() > end)
                break;
            continue;
        }
        t_err = bench_now_ns();
        res->bad += st != UCFT_ERR_PROC_FAILED && st != UCFT_ERR_REVOKED;
        ucft_comm_revoke(w);
        ucft_comm_h nc;
        if (ucft_comm_shrink(w, &nc) != UCFT_OK) {
            res->bad++;
            break;
        }
        t_shrunk = bench_now_ns();
        st = ucft_allreduce(nc, &one, &sum, 1, UCFT_INT64, UCFT_SUM);
        t_done = bench_now_ns();
        res->size_after = ucft_comm_size(nc);
        res->bad += st != UCFT_OK || sum != ucft_comm_size(nc) ||
                    ucft_comm_size(nc) != ucft_comm_size(w) - 1;
        ucft_comm_free(&nc);
        break;
    }
    ucft_comm_free(&w);
    if (t_done == 0)
        return; /* no failure within the bound */
    det_victim_t v;
    if (det_inject_log_read(log, &v, 1) < 1) {
        res->bad++;
        return;
    }
    res->first_ms = (double)(t_done - v.at_ns) / 1e6;
    res->err_ms = (double)(t_err - v.at_ns) / 1e6;
    res->shrink_ms = (double)(t_shrunk - v.at_ns) / 1e6;
}

int coll_shrink_main(const coll_opts_t *o)
{
    bench_wait_cfg_t wcfg;
    char err[160];
    int ret = BENCH_EXIT_OK;
    const char *log = getenv("UCFTRUN_INJECT_LOG");

    if (log == NULL || *log == '\0') {
        bench_err("coll", "UCFTRUN_INJECT_LOG is not set: run under ucftrun "
                          "with --kill R@S");
        return BENCH_EXIT_USAGE;
    }
    if (bench_wait_cfg_read(&wcfg, err, sizeof(err)) != 0) {
        bench_err("coll", "%s", err);
        return BENCH_EXIT_USAGE;
    }
    if (o->alg == NULL)
        setenv("UCFT_ALLREDUCE_ALG", "recdbl", 1);
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        bench_err("coll", "ucft_init: %s", ucft_status_string(st));
        return BENCH_EXIT_FAIL;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    shrink_rank_result_t mine = {.rank = rank};
    shrink_rank_result_t *all = calloc((size_t)size, sizeof(*all));
    if (size > 64 || size < 2 || all == NULL) {
        bench_err("coll", "--kill-to-shrink needs 2 .. 64 ranks");
        free(all);
        ucft_finalize(ctx);
        return BENCH_EXIT_USAGE;
    }
    run(ctx, o, &mine, log);
    det_victim_t v = {.rank = -1};
    (void)det_inject_log_read(log, &v, 1);
    unsigned char *gone = NULL;
    int reporter = 0;
    if (coll_gather(ctx, &mine, sizeof(mine), all, &gone, &reporter) != 0)
        ret = BENCH_EXIT_FAIL;
    if (reporter) {
        int n = 0;
        for (int r = 0; r < size; r++)
            if (!gone[r] && r != v.rank)
                all[n++] = all[r];
        report(o, all, n, size, v.rank, bench_wait_name(wcfg.mode));
        fflush(stdout);
    }
    free(gone);
    if (mine.bad > 0 || mine.first_ms < 0)
        ret = BENCH_EXIT_FAIL;
    free(all);
    st = ucft_finalize(ctx);
    if (st != UCFT_OK && ret == BENCH_EXIT_OK)
        ret = BENCH_EXIT_FAIL;
    return ret;
}
