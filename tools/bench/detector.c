/*
 * ucft-bench detector: how long after a failure is injected the survivors
 * are told, what the heartbeats cost, and whether busy ranks are falsely
 * suspected (detector.h lists the modes).
 *
 * Latency mode, per rank:
 *   1. ucft_init with a failure callback that records CLOCK_MONOTONIC the
 *      first time each rank is reported.
 *   2. Sleep on the context fd (ucft_context_arm + poll, then
 *      ucft_context_progress; never spinning) until --expect injections
 *      are in the launcher's log and every injected rank has been
 *      reported, or --bound passes. The log is re-read on every wakeup
 *      (at least every 100 ms).
 *   3. CPU window: from --warmup after init to the last wakeup before
 *      anything happened (no injection logged, no failure reported), so
 *      the heartbeat threads are measured in steady state, idle job.
 *   4. told = callback time - logged injection time, per victim; then
 *      300 ms more of sleeping on the fd, so that late death events
 *      (event_ms, detector_pmix.c) and late false suspicions are seen.
 * Soak mode: compute --soak seconds in 50 ms slices without any ucft call
 * (CPU window = the whole loop), then progress for a moment so that any
 * decision already made reaches the callback.
 * Both: every rank sends its det_rank_result_t to the lowest rank that is
 * neither injected nor known failed, which prints the report.
 */
#include "tools/bench/detector.h"
#include "runtime/base/config.h"
#include "runtime/variables.h"
#include "ucft.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WAKE_MS   100 /* longest sleep between looks at the injection log */
#define SLICE_NS  (50 * 1000000ull)
#define DRAIN_NS  (300 * 1000000ull) /* soak: progress after the loop */
#define LINGER_NS (300 * 1000000ull) /* latency: after everyone is told */

typedef struct det_run {
    const det_opts_t *o;
    ucft_context_h ctx;
    int rank, size, fd;
    uint64_t *told_ns; /* per rank: first report (0: never) */
    const char *log;   /* UCFTRUN_INJECT_LOG, or NULL */
    det_victim_t victims[DET_MAX_VICTIMS];
    int nvictims;
    det_pmix_t pmix; /* when the launcher's death events arrived */
} det_run_t;

static void on_failure(ucft_context_h ctx, int rank, ucft_status_t why,
                       void *arg)
{
    det_run_t *run = arg;
    uint64_t now = bench_now_ns();
    (void)ctx;
    (void)why;
    if (run->told_ns != NULL && rank >= 0 && rank < run->size &&
        run->told_ns[rank] == 0)
        run->told_ns[rank] = now;
}

/* One sleep on the context fd (at most max_ms), then progress. */
static void sleep_progress(det_run_t *run, int max_ms)
{
    int ms = max_ms;
    if (ucft_context_arm(run->ctx, &ms) == UCFT_OK) {
        struct pollfd p = {.fd = run->fd, .events = POLLIN};
        if (ms < 0 || ms > max_ms)
            ms = max_ms;
        (void)poll(&p, 1, ms);
    }
    ucft_context_progress(run->ctx);
}

static int is_victim(const det_run_t *run, int rank)
{
    for (int i = 0; i < run->nvictims; i++)
        if (run->victims[i].rank == rank)
            return 1;
    return 0;
}

static int nreported(const det_run_t *run)
{
    int n = 0;
    for (int r = 0; r < run->size; r++)
        n += run->told_ns[r] != 0;
    return n;
}

static void read_log(det_run_t *run)
{
    if (run->log == NULL)
        return;
    int n = det_inject_log_read(run->log, run->victims, DET_MAX_VICTIMS);
    if (n > run->nvictims)
        run->nvictims = n;
}

static int victims_told(const det_run_t *run)
{
    if (run->nvictims < run->o->expect)
        return 0;
    for (int i = 0; i < run->nvictims; i++)
        if (run->victims[i].rank != run->rank &&
            (run->victims[i].rank >= run->size ||
             run->told_ns[run->victims[i].rank] == 0))
            return 0;
    return 1;
}

/* Fills the victim and false-suspicion fields of `res`. */
static void fill_failures(const det_run_t *run, det_rank_result_t *res)
{
    res->nvictims = run->nvictims;
    for (int i = 0; i < run->nvictims; i++) {
        const det_victim_t *v = &run->victims[i];
        res->victim[i] = v->rank;
        res->victim_stop[i] = v->stop;
        if (v->rank < run->size && run->told_ns[v->rank] != 0) {
            int64_t d = (int64_t)(run->told_ns[v->rank] - v->at_ns);
            res->told_ms[i] = (double)d / 1e6;
        } else {
            res->told_ms[i] = -1;
            res->missing++;
        }
        uint64_t ev = det_pmix_event_ns(&run->pmix, v->rank);
        res->event_ms[i] = ev ? (double)(int64_t)(ev - v->at_ns) / 1e6 : -1;
    }
    for (int r = 0; r < run->size; r++) {
        if (run->told_ns[r] == 0 || is_victim(run, r))
            continue;
        if (res->nfalse < DET_MAX_FALSE)
            res->false_rank[res->nfalse] = r;
        res->nfalse++;
    }
}

static void set_cpu(det_rank_result_t *res, const det_cpu_t *a,
                    const det_cpu_t *b)
{
    int n;
    det_cpu_diff(a, b, &res->main_cpu_pct, &res->hb_cpu_pct, &res->busiest_pct,
                 &n);
    res->nthreads = n;
    res->window_s = (double)(b->when_ns - a->when_ns) / 1e9;
}

static int run_latency(det_run_t *run, det_rank_result_t *res)
{
    const det_opts_t *o = run->o;
    uint64_t t0 = bench_now_ns();
    uint64_t open_at = t0 + (uint64_t)(o->warmup_s * 1e9);
    uint64_t end = t0 + (uint64_t)(o->bound_s * 1e9);
    det_cpu_t a, b;
    int window = 0; /* 1: open, 2: closed */

    if (run->log == NULL) {
        if (run->rank == 0)
            bench_err("detector",
                      "UCFTRUN_INJECT_LOG is not set: run under ucftrun with "
                      "--kill R@S or --stop R@S (or use --soak)");
        return BENCH_EXIT_USAGE;
    }
    for (;;) {
        sleep_progress(run, WAKE_MS);
        read_log(run);
        uint64_t now = bench_now_ns();
        int quiet = run->nvictims == 0 && nreported(run) == 0;
        if (window == 0 && quiet && now >= open_at) {
            det_cpu_sample(&a);
            b = a;
            window = 1;
        } else if (window == 1 && quiet) {
            det_cpu_sample(&b);
        } else if (window == 1) {
            window = 2;
        }
        if (victims_told(run) || now > end)
            break;
    }
    /* Linger: death events that arrive after the detector's news still
     * get their time (event_ms), and a late false suspicion is counted. */
    uint64_t linger = bench_now_ns() + LINGER_NS;
    while (bench_now_ns() < linger)
        sleep_progress(run, WAKE_MS);
    fill_failures(run, res);
    if (window > 0)
        set_cpu(res, &a, &b);
    if (run->nvictims < o->expect && run->rank == 0)
        bench_err("detector",
                  "%d of %d injections seen in %.0f s: was --kill/--stop "
                  "given to ucftrun?",
                  run->nvictims, o->expect, o->bound_s);
    return BENCH_EXIT_OK;
}

static int run_soak(det_run_t *run, det_rank_result_t *res)
{
    uint64_t t0 = bench_now_ns(), total = (uint64_t)(run->o->soak_s * 1e9);
    volatile uint64_t x = 0;
    det_cpu_t a, b;

    det_cpu_sample(&a);
    /* Compute in slices; nothing here calls ucft, so only the heartbeat
     * thread keeps this rank visibly alive. */
    while (bench_now_ns() - t0 < total) {
        uint64_t s0 = bench_now_ns();
        while (bench_now_ns() - s0 < SLICE_NS)
            for (int i = 0; i < 10000; i++)
                x += (uint64_t)i * 2654435761u;
    }
    det_cpu_sample(&b);
    set_cpu(res, &a, &b);
    uint64_t until = bench_now_ns() + DRAIN_NS;
    while (bench_now_ns() < until)
        sleep_progress(run, WAKE_MS);
    read_log(run); /* injections during a soak are not false */
    fill_failures(run, res);
    return BENCH_EXIT_OK;
}

/* Sends this rank's result to the reporting rank, or (there) collects all
 * of them into `all` (one per rank). Returns the reporting rank. */
static int gather(det_run_t *run, det_rank_result_t *mine,
                  det_rank_result_t *all)
{
    ucft_comm_h w = ucft_comm_world(run->ctx);
    int root = -1, n = 0;
    ucft_request_h *reqs = calloc((size_t)run->size, sizeof(*reqs));
    ucft_info_t *infos = calloc((size_t)run->size, sizeof(*infos));
    int *from = calloc((size_t)run->size, sizeof(*from));

    for (int r = 0; r < run->size && root < 0; r++)
        if (run->told_ns[r] == 0 && !is_victim(run, r))
            root = r;
    if (reqs == NULL || infos == NULL || from == NULL || root < 0)
        goto out;
    if (run->rank != root) {
        ucft_status_t st =
            ucft_send(w, mine, sizeof(*mine), root, DET_TAG_RESULT);
        if (st != UCFT_OK)
            bench_err("detector", "rank %d: sending the result to rank %d: %s",
                      run->rank, root, ucft_status_string(st));
        goto out;
    }
    all[root] = *mine;
    for (int r = 0; r < run->size; r++) {
        if (r == root || run->told_ns[r] != 0 || is_victim(run, r))
            continue;
        if (ucft_irecv(w, &all[r], sizeof(all[r]), r, DET_TAG_RESULT,
                       &reqs[n]) == UCFT_OK)
            from[n++] = r;
    }
    (void)ucft_waitall((size_t)n, reqs, infos);
    for (int i = 0; i < n; i++)
        if (infos[i].status != UCFT_OK ||
            infos[i].length != sizeof(all[from[i]]))
            all[from[i]].valid = 0;
out:
    free(reqs);
    free(infos);
    free(from);
    return root;
}

static int rank_from_env(void)
{
    const char *r = getenv("PMIX_RANK");
    return r ? atoi(r) : 0;
}

int bench_detector_main(int argc, char **argv)
{
    det_opts_t o;
    rt_config_t cfg;
    char err[160];
    det_run_t run = {.o = &o};
    ucft_context_attr_t attr;
    int ret;

    int rc = det_opts_parse(argc, argv, &o, rank_from_env() != 0);
    if (rc != 0)
        return rc > 0 ? BENCH_EXIT_OK : BENCH_EXIT_USAGE;
    /* The runtime's own table: the mode and eta/delta it will use. */
    if (ucft__config_read(&rt_config_table, &cfg, NULL, NULL, err,
                          sizeof(err)) != UCFT_OK) {
        bench_err("detector", "%s", err);
        return BENCH_EXIT_USAGE;
    }
    run.log = getenv("UCFTRUN_INJECT_LOG");
    if (run.log != NULL && *run.log == '\0')
        run.log = NULL;
    ucft_params_t p = {.field_mask = UCFT_PARAM_FIELD_FAILURE_CB,
                       .failure_cb = on_failure,
                       .failure_cb_arg = &run};
    ucft_status_t st = ucft_init(&p, &run.ctx);
    if (st != UCFT_OK) {
        bench_err("detector", "ucft_init: %s", ucft_status_string(st));
        return BENCH_EXIT_FAIL;
    }
    ucft_context_query(run.ctx, &attr);
    ucft_context_get_fd(run.ctx, &run.fd);
    run.rank = attr.rank;
    run.size = attr.size;
    if (!attr.singleton && det_pmix_watch(&run.pmix, run.size) != 0)
        bench_err("detector", "rank %d: no PMIx event times", run.rank);
    /* Callbacks run only from progress (ucft.h, rule R7): none yet. */
    run.told_ns = calloc((size_t)run.size, sizeof(*run.told_ns));

    det_rank_result_t mine;
    det_rank_result_t *all = calloc((size_t)run.size, sizeof(*all));
    memset(&mine, 0, sizeof(mine));
    mine.rank = run.rank;
    mine.valid = 1;
    if (all == NULL || run.told_ns == NULL) {
        bench_err("detector", "out of memory");
        ret = BENCH_EXIT_FAIL;
    } else if (o.soak_s > 0) {
        ret = run_soak(&run, &mine);
    } else {
        ret = run_latency(&run, &mine);
    }
    if (ret == BENCH_EXIT_OK) {
        int root = gather(&run, &mine, all);
        det_run_info_t info = {.ranks = run.size,
                               .soak = o.soak_s > 0,
                               .soak_s = o.soak_s,
                               .detector = cfg.detector,
                               .thread = cfg.detector_thread,
                               .fastpath = cfg.detector_fastpath,
                               .eta_ms = (double)cfg.hb_period_ns / 1e6,
                               .delta_ms = (double)cfg.hb_timeout_ns / 1e6,
                               .grace_ms = (double)cfg.hb_grace_ns / 1e6};
        if (root == run.rank) {
            det_report(stdout, &info, all, o.json);
            fflush(stdout);
        }
        if (mine.nfalse > 0 || mine.missing > 0 ||
            run.nvictims < (o.soak_s > 0 ? 0 : o.expect))
            ret = BENCH_EXIT_FAIL;
    }
    free(all);
    det_pmix_unwatch(&run.pmix);
    st = ucft_finalize(run.ctx);
    if (st != UCFT_OK && ret == BENCH_EXIT_OK) {
        bench_err("detector", "ucft_finalize: %s", ucft_status_string(st));
        ret = BENCH_EXIT_FAIL;
    }
    free(run.told_ns);
    return ret;
}
