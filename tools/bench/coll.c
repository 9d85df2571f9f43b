/*
 * ucft-bench coll: latency of the collectives (coll.h lists the modes).
 *
 * Latency mode, per rank:
 *   1. --alg sets UCFT_<OP>_ALG (before ucft_init, which reads it); --f
 *      sets f on the world communicator.
 *   2. --warmup untimed operations, then one barrier (the same corrected
 *      barrier for every --op), so that the ranks start together.
 *   3. --iters back-to-back blocking operations, each timed on its own
 *      (CLOCK_MONOTONIC around the call); the rank keeps the median,
 *      p99 and mean (total / iters) of its own times.
 *   4. Every rank sends these to a reporting rank (the lowest live one
 *      of the first f + 1, coll_gather.c: any rank may have been killed),
 *      which prints per operation the max over the surviving ranks of the
 *      per-rank mean (the headline), of the median and of the p99, the min
 *      over them of the median, and the ranks that failed.
 * With --sync, each operation is timed alone, from call to return, and
 * followed by an untimed barrier, as MPI benchmark suites define a
 * collective's latency: a broadcast's root returns at once, a receiver
 * when its data is there, and the mean over iterations is per rank.
 * Back-to-back operations pipeline: a rank may leave an operation before
 * the slowest has, so a per-rank time is the interval between its own
 * completions, which in steady state is the period of the whole group.
 * The mean is the headline because a broadcast's receivers find most
 * messages already queued (the root does not wait), so their median
 * interval can be far below one operation; the mean cannot hide the
 * stalls. Open MPI's program (mpi_coll.c) measures exactly the same way.
 */
#include "tools/bench/coll.h"
#include "ucft.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct coll_rank_result {
    double median_us, mean_us, p99_us;
    coll_paired_t paired; /* --paired */
    int32_t rank, errors;
    int32_t warmup_errors; /* --failed, rebalance: before the switch */
} coll_rank_result_t;

static int rank_from_env(void)
{
    const char *r = getenv("PMIX_RANK");
    return r ? atoi(r) : 0;
}

/* Allgather and reduce-scatter: --size is the whole vector (n blocks of
 * blk int64). */
ucft_status_t coll_run_one(ucft_comm_h w, const coll_opts_t *o, void *a,
                           void *b, size_t n64, size_t blk)
{
    switch (o->op) {
    case COLL_ALLGATHER:
        return ucft_allgather(w, a, b, blk, UCFT_INT64, NULL);
    case COLL_REDUCE_SCATTER:
        return ucft_reduce_scatter(w, a, b, blk, UCFT_INT64, UCFT_SUM);
    case COLL_BCAST:
        return ucft_bcast(w, a, o->size, UCFT_UINT8, 0);
    case COLL_REDUCE:
        return ucft_reduce(w, a, b, n64, UCFT_INT64, UCFT_SUM, 0);
    case COLL_ALLREDUCE:
        return ucft_allreduce(w, a, b, n64, UCFT_INT64, UCFT_SUM);
    case COLL_BARRIER:
        return ucft_barrier(w);
    case COLL_AGREE: {
        int flag = 1;
        ucft_status_t st = ucft_comm_agree(w, &flag);
        return st == UCFT_OK && flag != 1 ? UCFT_ERR_INTERNAL : st;
    }
    case COLL_SHRINK: {
        ucft_comm_h nc;
        ucft_status_t st = ucft_comm_shrink(w, &nc);
        return st == UCFT_OK ? ucft_comm_free(&nc) : st;
    }
    case COLL_ALLREDUCE_APPROX: {
        ucft_approx_params_t p = {.field_mask = UCFT_APPROX_FIELD_ALG |
                                                UCFT_APPROX_FIELD_EPS,
                                  .alg = o->alg != NULL ? o->alg : "pflc",
                                  .eps = o->eps};
        return ucft_allreduce_approx(w, a, b, n64, UCFT_DOUBLE, &p);
    }
    }
    return UCFT_ERR_INVALID_PARAM;
}

/* Times the operations; fills `res`. Returns the number of failed calls.
 * --paired: the rounds against `fresh` instead (coll_paired.c). */
static int measure(ucft_comm_h w, ucft_comm_h fresh, const coll_opts_t *o,
                   double *t_us, coll_rank_result_t *res)
{
    size_t n64 = o->size / 8 ? o->size / 8 : 1;
    size_t nr = (size_t)ucft_comm_size(w);
    size_t blk = n64 / nr ? n64 / nr : 1;
    size_t cap = n64 > nr * blk ? n64 : nr * blk;
    size_t bytes = cap * 8 > o->size ? cap * 8 : o->size;
    int64_t *a = calloc(bytes, 1);
    int64_t *b = calloc(cap, 8);
    int errors = 0;

    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return -1;
    }
    for (size_t i = 0; i < n64 && i * 8 < o->size; i++) {
        a[i] = ucft_comm_rank(w) + 1;
        if (o->op == COLL_ALLREDUCE_APPROX) { /* doubles */
            double d = (double)a[i];
            memcpy(&a[i], &d, sizeof(d));
        }
    }
    for (int i = 0; i < o->warmup; i++)
        res->warmup_errors += coll_run_one(w, o, a, b, n64, blk) != UCFT_OK;
    if (o->paired > 0) {
        errors = coll_paired_run(w, fresh, o, a, b, n64, blk, &res->paired);
        res->median_us = res->mean_us = res->paired.design_us;
        res->errors = errors;
        free(a);
        free(b);
        return errors;
    }
    errors += ucft_barrier(w) != UCFT_OK;
    uint64_t prev = bench_now_ns(), total = 0;
    for (int i = 0; i < o->iters; i++) {
        if (o->sync)
            prev = bench_now_ns();
        errors += coll_run_one(w, o, a, b, n64, blk) != UCFT_OK;
        uint64_t now = bench_now_ns();
        t_us[i] = (double)(now - prev) / 1e3;
        total += now - prev;
        prev = now;
        if (o->sync)
            errors += ucft_barrier(w) != UCFT_OK;
    }
    res->mean_us = (double)total / 1e3 / o->iters;
    res->median_us = bench_quantile_sort(t_us, (size_t)o->iters, 0.5);
    res->p99_us = bench_quantile_sort(t_us, (size_t)o->iters, 0.99);
    res->errors = errors;
    free(a);
    free(b);
    return errors;
}

/* --paired: the median over the live ranks of each rank's figures
 * (ratio, lo, hi, design_us, fresh_us) into q[5]. */
static void paired_summary(const coll_rank_result_t *all,
                           const unsigned char *gone, int size, double *q)
{
    double *v = calloc((size_t)size * 5, sizeof(double));
    size_t m = 0;
    if (v == NULL)
        return;
    for (int r = 0; r < size; r++) {
        if (gone[r])
            continue;
        const coll_paired_t *p = &all[r].paired;
        v[m] = p->ratio, v[size + m] = p->lo, v[2 * size + m] = p->hi;
        v[3 * size + m] = p->design_us, v[4 * size + m] = p->fresh_us;
        m++;
    }
    for (int i = 0; i < 5 && m > 0; i++)
        q[i] = bench_quantile_sort(v + (size_t)i * (size_t)size, m, 0.5);
    free(v);
}

static void report(const coll_opts_t *o, const coll_rank_result_t *all,
                   const unsigned char *gone, int size, const char *alg, int f,
                   const char *wait, int kfailed)
{
    double med = 0, mean = 0, p99 = 0, min_med = 1e30;
    int errors = 0, werrors = 0, worst = -1, nfailed = 0;
    size_t cap = (size_t)size * 12 + 1, fl = 0;
    char *failed = calloc(cap, 1); /* "3,17": every rank fits */
    for (int r = 0; r < size; r++) {
        if (gone[r]) {
            nfailed++;
            if (failed != NULL)
                fl += (size_t)snprintf(failed + fl, cap - fl, "%s%d",
                                       fl ? "," : "", r);
            continue;
        }
        if (worst < 0 || all[r].median_us > med) {
            med = all[r].median_us;
            worst = r;
        }
        if (all[r].mean_us > mean)
            mean = all[r].mean_us;
        if (all[r].p99_us > p99)
            p99 = all[r].p99_us;
        if (all[r].median_us < min_med)
            min_med = all[r].median_us;
        errors += all[r].errors;
        werrors += all[r].warmup_errors;
    }
    char paired[192] = "";
    double q[5] = {0};
    if (o->paired > 0) {
        paired_summary(all, gone, size, q);
        snprintf(paired, sizeof(paired),
                 ",\"paired\":%d,\"paired_ratio\":%.4f,\"paired_lo\":%.4f,"
                 "\"paired_hi\":%.4f,\"design_us\":%.3f,\"fresh_us\":%.3f",
                 o->paired, q[0], q[1], q[2], q[3], q[4]);
    }
    if (o->json) {
        printf("{\"bench\":\"coll\",\"op\":\"%s\",\"alg\":\"%s\","
               "\"ranks\":%d,\"size\":%zu,\"iters\":%d,\"warmup\":%d,"
               "\"f\":%d,\"wait\":\"%s\",\"sync\":%d,\"median_us\":%.3f,"
               "\"mean_us\":%.3f,\"p99_us\":%.3f,\"min_median_us\":%.3f,"
               "\"slowest_rank\":%d,\"errors\":%d,\"failed_ranks\":[%s],"
               "\"eps\":%g,\"failed\":%d,\"tree_repair\":\"%s\","
               "\"warmup_errors\":%d%s}\n",
               coll_op_name(o->op), alg, size, o->size, o->iters, o->warmup, f,
               wait, o->sync, med, mean, p99, min_med, worst, errors,
               failed ? failed : "",
               o->op == COLL_ALLREDUCE_APPROX ? o->eps : 0, kfailed,
               o->failed != NULL ? coll_failed_design_name(o->tree_repair)
                                 : "none",
               werrors, paired);
        free(failed);
        return;
    }
    printf("# ucft-bench coll: %s, alg %s, %d ranks, %zu bytes, f = %d, "
           "wait %s\n"
           "# %d timed ops after %d warm-up; per rank: mean, median, p99 "
           "of its op times; shown: max over ranks (min for min_median)\n",
           coll_op_name(o->op), alg, size, o->size, f, wait, o->iters,
           o->warmup);
    if (nfailed > 0)
        printf("# failed ranks (left out): %s\n", failed ? failed : "?");
    free(failed);
    printf("%-10s %-24s %5s %8s %10s %10s %10s %10s %6s\n", "op", "alg",
           "ranks", "bytes", "mean_us", "median_us", "p99_us", "min_median",
           "errors");
    printf("%-10s %-24s %5d %8zu %10.2f %10.2f %10.2f %10.2f %6d\n",
           coll_op_name(o->op), alg, size, o->size, mean, med, p99, min_med,
           errors);
    if (o->paired > 0)
        printf("# paired against a shrink, %d rounds: design / fresh %.4f "
               "(95 %% interval %.4f .. %.4f), %.2f / %.2f us per op\n",
               o->paired, q[0], q[1], q[2], q[3], q[4]);
}

int bench_coll_main(int argc, char **argv)
{
    coll_opts_t o;
    bench_wait_cfg_t wcfg;
    char err[160], var[32];
    int ret = BENCH_EXIT_OK;

    int rc = coll_opts_parse(argc, argv, &o, rank_from_env() != 0);
    if (rc != 0)
        return rc > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
    if (o.alg != NULL && o.op != COLL_ALLREDUCE_APPROX) {
        snprintf(var, sizeof(var), "UCFT_%s_ALG", coll_op_env(o.op));
        setenv(var, o.alg, 1);
    }
    if (bench_wait_cfg_read(&wcfg, err, sizeof(err)) != 0) {
        bench_err("coll", "%s", err);
        return BENCH_EXIT_USAGE;
    }
    if (o.kill_to_result)
        return coll_kill_main(&o);
    if (o.kill_to_shrink)
        return coll_shrink_main(&o);
    if (o.failed != NULL)
        setenv("UCFT_TREE_REPAIR", coll_failed_repair_var(o.tree_repair), 1);

    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        bench_err("coll", "ucft_init: %s", ucft_status_string(st));
        return BENCH_EXIT_FAIL;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    if (o.f >= 0 && (st = ucft_comm_set_f(w, o.f)) != UCFT_OK) {
        if (rank == 0)
            bench_err("coll", "--f %d: %s", o.f, ucft_status_string(st));
        ucft_finalize(ctx);
        return BENCH_EXIT_USAGE;
    }
    ucft_comm_h tw = w;    /* timed on */
    ucft_comm_h fw = NULL; /* --paired: the fresh communicator */
    int nfailed = 0;
    if (o.failed != NULL) {
        if (coll_failed_setup(ctx, &o, &tw, &nfailed) != 0) {
            ret = BENCH_EXIT_FAIL;
            goto out0;
        }
        /* keep: every failed rank counts against f; rebalance: past the
         * switch before timing (4 windows of UCFT_TREE_REPAIR_WINDOW). */
        if (o.tree_repair == 0 && nfailed > ucft_comm_get_f(w))
            ucft_comm_set_f(w, nfailed > 64 ? 64 : nfailed);
        const char *win = getenv("UCFT_TREE_REPAIR_WINDOW");
        int need = 4 * (win != NULL ? atoi(win) : 4);
        if (o.tree_repair != 0 && o.tree_repair != 2 && o.warmup < need)
            o.warmup = need;
    }
    double *t_us = calloc((size_t)o.iters, sizeof(*t_us));
    coll_rank_result_t mine = {.rank = rank};
    coll_rank_result_t *all = calloc((size_t)size, sizeof(*all));
    if (o.paired > 0 && (st = ucft_comm_shrink(w, &fw)) != UCFT_OK) {
        bench_err("coll", "rank %d: --paired: ucft_comm_shrink: %s", rank,
                  ucft_status_string(st));
        ret = BENCH_EXIT_FAIL;
        goto out0;
    }
    if (t_us == NULL || all == NULL || measure(tw, fw, &o, t_us, &mine) < 0) {
        bench_err("coll", "rank %d: out of memory", rank);
        ret = BENCH_EXIT_FAIL;
        goto out;
    }
    unsigned char *gone = NULL;
    int reporter = 0;
    if (coll_gather(ctx, &mine, sizeof(mine), all, &gone, &reporter) != 0)
        ret = BENCH_EXIT_FAIL;
    if (reporter) {
        const char *alg = o.alg;
        if (alg == NULL && (o.op == COLL_AGREE || o.op == COLL_SHRINK))
            alg = "era";
        if (alg == NULL && o.op == COLL_ALLREDUCE_APPROX)
            alg = "pflc";
        if (alg == NULL) {
            snprintf(var, sizeof(var), "UCFT_%s_ALG", coll_op_env(o.op));
            alg = getenv(var) ? getenv(var) : "corrected";
        }
        report(&o, all, gone, size, alg, ucft_comm_get_f(tw),
               bench_wait_name(wcfg.mode), nfailed);
        fflush(stdout);
    }
    free(gone);
    if (mine.errors > 0)
        ret = BENCH_EXIT_FAIL;
    /* The result messages are small; a final barrier keeps the reporter
     * from finalizing while a late sender still needs it. */
    (void)ucft_barrier(w);
out:
    free(t_us);
    free(all);
    if (tw != w)
        ucft_comm_free(&tw);
    if (fw != NULL)
        ucft_comm_free(&fw);
out0:
    st = ucft_finalize(ctx);
    if (st != UCFT_OK && ret == BENCH_EXIT_OK) {
        bench_err("coll", "ucft_finalize: %s", ucft_status_string(st));
        ret = BENCH_EXIT_FAIL;
    }
    return ret;
}
