/*
 * ucft-bench coll --kill-to-result: how long after ucftrun kills a rank
 * every survivor holds a correct allreduce result again.
 *
 * Every rank loops blocking corrected allreduces of two int64 elements (or
 * of --size bytes: the two, then elements that must all sum like the first),
 * {rank + 1, 1 << rank} (sum; f = 1 unless --f), back to back, and keeps
 * for each of the last RING completions its time, the sum and the rank
 * mask. A survivor stops once it has seen RING_AFTER results that leave a
 * rank out (or --bound passes), then reads the kill instant from
 * UCFTRUN_INJECT_LOG (written right before the launcher's kill) and finds:
 *   (a) first:    the first allreduce completed after the kill. Corrected
 *                 semantics: it must hold every survivor's value exactly
 *                 once and the victim's entirely or not at all (checked).
 *   (b) excluded: the first allreduce completed after the kill whose mask
 *                 leaves the victim out, i.e. correct for the survivor set.
 * Both are times from the kill; every survivor sends them to a reporting
 * survivor (coll_gather.c), which prints them per rank and their median,
 * p99 and max.
 * No recovery step exists: the loop never calls anything but allreduce.
 *
 * The record is small on purpose: the killed rank's exit frees its memory,
 * and on a node with fewer cores than ranks that CPU time is taken from
 * survivors queued on its core. --ballast MB gives every rank a working
 * set of its own, to see how the figure grows with the victim's size.
 */
#include "tools/bench/coll.h"
#include "tools/bench/detector.h"
#include "ucft.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Completions kept: about 0.3 s at 20 us, far more than a survivor runs
 * between the kill and its RING_AFTER-th result without the victim
 * (fast path); 384 KiB. A record that no longer reaches back to the kill
 * is reported as an error, never as a wrong figure. */
#define RING       (1u << 14)
#define RING_AFTER 32 /* results without a rank before stopping */

typedef struct kill_entry {
    uint64_t end_ns;
    int64_t sum;
    uint64_t mask;
} kill_entry_t;

typedef struct kill_rank_result {
    double first_ms, excluded_ms; /* < 0: not seen */
    int32_t rank, first_ok, bad, errors;
    int32_t short_record; /* the record does not reach back to the kill */
    int64_t iters;
} kill_rank_result_t;

static int64_t expect_sum(uint64_t mask)
{
    int64_t s = 0;
    for (int r = 0; r < 64; r++)
        if (mask >> r & 1)
            s += r + 1;
    return s;
}

/* Loops until RING_AFTER results that miss a rank, or the bound. Returns
 * the number of completions; the last min(n, RING) are in ring. */
static int64_t loop(ucft_comm_h w, const coll_opts_t *o, kill_entry_t *ring,
                    int32_t *errors)
{
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    uint64_t all = size == 64 ? ~0ull : ((1ull << size) - 1);
    uint64_t end = bench_now_ns() + (uint64_t)(o->bound_s * 1e9);
    int64_t n = 0;
    int missing = 0;
    /* --size: the vector (at least the two checked elements); every
     * element past them carries rank + 1 as the first does, and must sum
     * to the same value. */
    size_t cnt = o->size / 8 > 2 ? o->size / 8 : 2;
    int64_t *in = calloc(cnt, sizeof(*in)), *out = calloc(cnt, sizeof(*out));
    if (in == NULL || out == NULL) {
        free(in);
        free(out);
        (*errors)++;
        return 0;
    }
    for (size_t i = 2; i < cnt; i++)
        in[i] = rank + 1;

    while (missing < RING_AFTER) {
        in[0] = rank + 1;
        in[1] = (int64_t)(1ull << rank);
        out[0] = out[1] = 0;
        ucft_status_t st =
            ucft_allreduce(w, in, out, cnt, UCFT_INT64, UCFT_SUM);
        uint64_t now = bench_now_ns();
        for (size_t i = 2; st == UCFT_OK && i < cnt; i += 4093)
            if (out[i] != out[0])
                st = UCFT_ERR_INTERNAL; /* counted as an error */
        if (st != UCFT_OK) {
            (*errors)++;
            out[0] = -1;
            out[1] = 0;
        }
        kill_entry_t *e = &ring[n % RING];
        e->end_ns = now;
        e->sum = out[0];
        e->mask = (uint64_t)out[1];
        n++;
        if (st == UCFT_OK && e->mask != all)
            missing++;
        if ((n & 255) == 0 && now > end)
            break;
    }
    free(in);
    free(out);
    return n;
}

static void analyse(const kill_entry_t *ring, int64_t n, int size,
                    const det_victim_t *v, kill_rank_result_t *res)
{
    uint64_t all = size == 64 ? ~0ull : ((1ull << size) - 1);
    uint64_t survivors = all & ~(1ull << v->rank);
    int64_t from = n > (int64_t)RING ? n - (int64_t)RING : 0;

    res->first_ms = res->excluded_ms = -1;
    if (from > 0 && ring[from % RING].end_ns >= v->at_ns) {
        res->short_record = 1;
        return;
    }
    for (int64_t i = from; i < n; i++) {
        const kill_entry_t *e = &ring[i % RING];
        if (e->end_ns < v->at_ns)
            continue;
        int ok = (e->mask & survivors) == survivors && (e->mask & ~all) == 0 &&
                 e->sum == expect_sum(e->mask);
        res->bad += !ok;
        if (res->first_ms < 0) {
            res->first_ms = (double)(e->end_ns - v->at_ns) / 1e6;
            res->first_ok = ok;
        }
        if (ok && !(e->mask >> v->rank & 1)) {
            res->excluded_ms = (double)(e->end_ns - v->at_ns) / 1e6;
            break;
        }
    }
}

static void report(const coll_opts_t *o, const kill_rank_result_t *r, int n,
                   int size, int victim, int f, const char *wait)
{
    double a[64], b[64];
    int na = 0, nb = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        if (r[i].first_ms >= 0 && na < 64)
            a[na++] = r[i].first_ms;
        if (r[i].excluded_ms >= 0 && nb < 64)
            b[nb++] = r[i].excluded_ms;
        bad += r[i].bad + r[i].errors + (r[i].excluded_ms < 0);
    }
    double a50 = bench_quantile_sort(a, (size_t)na, 0.5);
    double a99 = bench_quantile_sort(a, (size_t)na, 0.99);
    double amax = na ? a[na - 1] : -1;
    double b50 = bench_quantile_sort(b, (size_t)nb, 0.5);
    double b99 = bench_quantile_sort(b, (size_t)nb, 0.99);
    double bmax = nb ? b[nb - 1] : -1;
    if (o->json) {
        printf("{\"bench\":\"coll-kill-to-result\",\"ranks\":%d,"
               "\"victim\":%d,\"f\":%d,\"wait\":\"%s\",\"survivors\":%d,"
               "\"first_ms\":{\"median\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
               "\"excluded_ms\":{\"median\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
               "\"bad\":%d,\"per_rank\":[",
               size, victim, f, wait, n, a50, a99, amax, b50, b99, bmax, bad);
        for (int i = 0; i < n; i++)
            printf("%s{\"rank\":%d,\"first_ms\":%.3f,\"first_ok\":%d,"
                   "\"excluded_ms\":%.3f,\"iters\":%lld,\"errors\":%d}",
                   i ? "," : "", r[i].rank, r[i].first_ms, r[i].first_ok,
                   r[i].excluded_ms, (long long)r[i].iters, r[i].errors);
        printf("]}\n");
        return;
    }
    printf("# ucft-bench coll --kill-to-result: %d ranks, rank %d killed, "
           "allreduce corrected, f = %d, wait %s\n"
           "# first: kill -> first allreduce completed after it (checked "
           "correct);\n# excluded: kill -> first one without the victim\n",
           size, victim, f, wait);
    printf("%5s %10s %9s %12s %10s %7s\n", "rank", "first_ms", "first_ok",
           "excluded_ms", "iters", "errors");
    for (int i = 0; i < n; i++)
        printf("%5d %10.3f %9s %12.3f %10lld %7d\n", r[i].rank, r[i].first_ms,
               r[i].first_ok ? "yes" : "NO", r[i].excluded_ms,
               (long long)r[i].iters, r[i].errors);
    printf("%-9s median %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", "first", a50,
           a99, amax);
    printf("%-9s median %8.3f ms  p99 %8.3f ms  max %8.3f ms\n", "excluded",
           b50, b99, bmax);
    printf("wrong or missing results: %d\n", bad);
}

int coll_kill_main(const coll_opts_t *o)
{
    bench_wait_cfg_t wcfg;
    char err[160];
    det_victim_t v;
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
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        bench_err("coll", "ucft_init: %s", ucft_status_string(st));
        return BENCH_EXIT_FAIL;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w);
    ucft_comm_set_f(w, o->f >= 0 ? o->f : 1);
    kill_entry_t *ring = calloc(RING, sizeof(*ring));
    char *ballast = NULL;
    kill_rank_result_t mine = {.rank = rank};
    kill_rank_result_t *all = calloc((size_t)size, sizeof(*all));
    if (size > 63 || size < 2 || ring == NULL || all == NULL) {
        bench_err("coll", "--kill-to-result needs 2 .. 63 ranks");
        ret = BENCH_EXIT_USAGE;
        goto out;
    }
    if (o->ballast_mb > 0) {
        size_t b = (size_t)o->ballast_mb << 20;
        ballast = malloc(b);
        if (ballast == NULL) {
            bench_err("coll", "--ballast %d: out of memory", o->ballast_mb);
            ret = BENCH_EXIT_FAIL;
            goto out;
        }
        memset(ballast, rank + 1, b);
    }
    mine.iters = loop(w, o, ring, &mine.errors);
    if (det_inject_log_read(log, &v, 1) < 1 || v.rank >= size) {
        bench_err("coll", "rank %d: no kill in %s after %.0f s", rank, log,
                  o->bound_s);
        ret = BENCH_EXIT_FAIL;
        goto out;
    }
    analyse(ring, mine.iters, size, &v, &mine);
    if (mine.short_record)
        bench_err("coll",
                  "rank %d: its last %u results all came after the kill: "
                  "the first ones after it are lost (a slow detection? "
                  "UCFT_DETECTOR_FASTPATH?)",
                  rank, RING);
    unsigned char *gone = NULL;
    int reporter = 0;
    if (coll_gather(ctx, &mine, sizeof(mine), all, &gone, &reporter) != 0)
        ret = BENCH_EXIT_FAIL;
    if (reporter) {
        int n = 0; /* the survivors' results, in rank order */
        for (int r = 0; r < size; r++) {
            if (r == v.rank)
                continue;
            if (!gone[r]) {
                all[n++] = all[r];
                continue;
            }
            bench_err("coll", "rank %d failed too (not the victim)", r);
            ret = BENCH_EXIT_FAIL;
        }
        report(o, all, n, size, v.rank, ucft_comm_get_f(w),
               bench_wait_name(wcfg.mode));
        fflush(stdout);
    }
    free(gone);
    if (mine.bad > 0 || mine.errors > 0 || mine.excluded_ms < 0)
        ret = BENCH_EXIT_FAIL;
    (void)ucft_barrier(w);
out:
    free(ballast);
    free(ring);
    free(all);
    st = ucft_finalize(ctx);
    if (st != UCFT_OK && ret == BENCH_EXIT_OK)
        ret = BENCH_EXIT_FAIL;
    return ret;
}
