/*
 * ucft-bench detector: the injection log reader, per-thread CPU time, and
 * the report (a table for people, or one JSON object with --json).
 *
 * Report numbers:
 *   told_ms       per survivor and victim: failure callback time minus the
 *                 time ucftrun logged just before sending the signal
 *   p50/p99/max   over all (survivor, victim) pairs; nearest rank, so with
 *                 15 survivors p99 is the maximum
 *   false         ranks reported failed that were not injected (per rank,
 *                 and the union over ranks)
 *   event_ms      per survivor and victim: when the launcher's death event
 *                 reached this rank's PMIx thread (SIGKILL only), a
 *                 diagnostic of the fast path's share of told
 *   hb_cpu_pct    CPU of the threads other than the main one (heartbeat
 *                 thread plus PMIx/UCX helper threads) over the CPU window,
 *                 in % of one core: an upper bound on the heartbeat thread
 */
#include "tools/bench/detector.h"
#include "runtime/base/procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- injection log ------------------------------------------------------- */

int det_inject_log_read(const char *path, det_victim_t *v, int max)
{
    FILE *f = fopen(path, "r");
    char line[128];
    int n = 0;

    if (f == NULL)
        return -1;
    while (n < max && fgets(line, sizeof(line), f) != NULL) {
        char kind[8];
        int rank, dup = 0;
        unsigned long long ns;
        if (strchr(line, '\n') == NULL)
            break; /* still being written */
        if (sscanf(line, "%7s %d %llu", kind, &rank, &ns) != 3)
            continue;
        for (int i = 0; i < n; i++)
            dup |= v[i].rank == rank;
        if (dup)
            continue;
        v[n].rank = rank;
        v[n].stop = strcmp(kind, "stop") == 0;
        v[n].at_ns = ns;
        n++;
    }
    fclose(f);
    return n;
}

/* ---- CPU time per thread ------------------------------------------------- */

static int read_task_ns(int tid, uint64_t *ns)
{
    char path[64], buf[1024];
    unsigned long long run;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
    f = fopen(path, "r");
    if (f != NULL) {
        int ok = fscanf(f, "%llu", &run) == 1;
        fclose(f);
        if (ok) {
            *ns = run;
            return 0;
        }
    }
    /* Fallback: utime and stime (fields 14 and 15) in clock ticks. */
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
    const char *p = ucft__procstat_read(path, buf, sizeof(buf));
    unsigned long long ut, st;
    if (p == NULL || sscanf(p,
                            " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                            "%llu %llu",
                            &ut, &st) != 2)
        return -1;
    long hz = sysconf(_SC_CLK_TCK);
    *ns = (ut + st) * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
    return 0;
}

void det_cpu_sample(det_cpu_t *s)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int me = (int)getpid();

    memset(s, 0, sizeof(*s));
    s->when_ns = bench_now_ns();
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        uint64_t ns;
        if (tid <= 0 || read_task_ns(tid, &ns) != 0)
            continue;
        if (tid == me)
            s->main_ns = ns;
        else if (s->n < DET_MAX_THREADS) {
            s->tid[s->n] = tid;
            s->ns[s->n++] = ns;
        }
    }
    closedir(d);
}

void det_cpu_diff(const det_cpu_t *a, const det_cpu_t *b, double *main_pct,
                  double *others_pct, double *busiest_pct, int *nothers)
{
    double wall = (double)(b->when_ns - a->when_ns);
    uint64_t sum = 0, top = 0;

    for (int i = 0; i < b->n; i++) {
        uint64_t before = 0; /* a thread born in the window: all of it */
        for (int j = 0; j < a->n; j++)
            if (a->tid[j] == b->tid[i])
                before = a->ns[j];
        uint64_t d = b->ns[i] > before ? b->ns[i] - before : 0;
        sum += d;
        top = d > top ? d : top;
    }
    if (wall <= 0)
        wall = 1;
    *main_pct = 100.0 * (double)(b->main_ns - a->main_ns) / wall;
    *others_pct = 100.0 * (double)sum / wall;
    *busiest_pct = 100.0 * (double)top / wall;
    *nothers = b->n;
}

/* ---- report -------------------------------------------------------------- */

typedef struct det_summary {
    double told[4096 * DET_MAX_VICTIMS]; /* ucftrun: at most 4096 ranks */
    double event[4096 * DET_MAX_VICTIMS];
    size_t ntold, nevent;
    int nvalid, missing, nfalse_union;
    int false_union[DET_MAX_FALSE];
    double p50, p99, max, ev_p50, ev_max;
    double cpu_mean, cpu_max, busiest_max, main_mean, main_max;
    double window_min;
} det_summary_t;

static void summarise(const det_run_info_t *info, const det_rank_result_t *res,
                      det_summary_t *s)
{
    memset(s, 0, sizeof(*s));
    s->window_min = -1;
    for (int r = 0; r < info->ranks; r++) {
        const det_rank_result_t *x = &res[r];
        if (!x->valid)
            continue;
        s->nvalid++;
        s->missing += x->missing;
        for (int v = 0; v < x->nvictims; v++)
            if (x->told_ms[v] >= 0 &&
                s->ntold < sizeof(s->told) / sizeof(s->told[0]))
                s->told[s->ntold++] = x->told_ms[v];
        for (int v = 0; v < x->nvictims; v++)
            if (x->event_ms[v] >= 0 &&
                s->nevent < sizeof(s->event) / sizeof(s->event[0]))
                s->event[s->nevent++] = x->event_ms[v];
        for (int i = 0; i < x->nfalse && i < DET_MAX_FALSE; i++) {
            int known = 0;
            for (int k = 0; k < s->nfalse_union; k++)
                known |= s->false_union[k] == x->false_rank[i];
            if (!known && s->nfalse_union < DET_MAX_FALSE)
                s->false_union[s->nfalse_union++] = x->false_rank[i];
        }
        s->cpu_mean += x->hb_cpu_pct;
        s->main_mean += x->main_cpu_pct;
        s->cpu_max = x->hb_cpu_pct > s->cpu_max ? x->hb_cpu_pct : s->cpu_max;
        s->main_max =
            x->main_cpu_pct > s->main_max ? x->main_cpu_pct : s->main_max;
        s->busiest_max =
            x->busiest_pct > s->busiest_max ? x->busiest_pct : s->busiest_max;
        if (s->window_min < 0 || x->window_s < s->window_min)
            s->window_min = x->window_s;
    }
    if (s->nvalid > 0) {
        s->cpu_mean /= s->nvalid;
        s->main_mean /= s->nvalid;
    }
    if (s->ntold > 0) {
        s->p50 = bench_quantile_sort(s->told, s->ntold, 0.5);
        s->p99 = bench_quantile_sort(s->told, s->ntold, 0.99);
        s->max = s->told[s->ntold - 1]; /* sorted by the calls above */
    }
    if (s->nevent > 0) {
        s->ev_p50 = bench_quantile_sort(s->event, s->nevent, 0.5);
        s->ev_max = s->event[s->nevent - 1];
    }
}

static const det_rank_result_t *first_valid(const det_run_info_t *info,
                                            const det_rank_result_t *res)
{
    for (int r = 0; r < info->ranks; r++)
        if (res[r].valid)
            return &res[r];
    return NULL;
}

static void report_table(FILE *f, const det_run_info_t *info,
                         const det_rank_result_t *res, const det_summary_t *s)
{
    const det_rank_result_t *v0 = first_valid(info, res);

    fprintf(f,
            "# ucft-bench detector: %d ranks, %s, detector %s%s, fastpath "
            "%s, eta %.1f ms, delta %.1f ms, grace %.0f ms\n",
            info->ranks, info->soak ? "soak" : "latency",
            info->detector ? "on" : "off",
            info->detector ? (info->thread ? " (thread)" : " (inline)") : "",
            info->fastpath ? "on" : "off", info->eta_ms, info->delta_ms,
            info->grace_ms);
    if (info->soak)
        fprintf(f, "# every rank computed %.1f s without calling ucft\n",
                info->soak_s);
    else if (v0 != NULL)
        for (int v = 0; v < v0->nvictims; v++)
            fprintf(f, "# victim: rank %d (%s)\n", v0->victim[v],
                    v0->victim_stop[v] ? "SIGSTOP" : "SIGKILL");
    fprintf(f, "# told_ms: injection (ucftrun's log) to failure callback; "
               "cpu: %% of a core over\n# the CPU window; hb_cpu = all threads "
               "but the main one\n");
    fprintf(f, "%5s %10s %9s %8s %8s %8s %4s %8s %6s\n", "rank", "told_ms",
            "event_ms", "hb_cpu%", "busiest%", "main%", "thr", "window_s",
            "false");
    for (int r = 0; r < info->ranks; r++) {
        const det_rank_result_t *x = &res[r];
        char told[64] = "-", ev[64] = "-";
        if (!x->valid)
            continue;
        for (int v = 0, off = 0, o2 = 0; v < x->nvictims && off < 48 && o2 < 48;
             v++) {
            off += snprintf(told + off, sizeof(told) - (size_t)off, "%s%.2f",
                            v ? "," : "", x->told_ms[v]);
            o2 += snprintf(ev + o2, sizeof(ev) - (size_t)o2, "%s%.2f",
                           v ? "," : "", x->event_ms[v]);
        }
        fprintf(f, "%5d %10s %9s %8.3f %8.3f %8.2f %4d %8.2f %6d\n", x->rank,
                info->soak ? "-" : told, info->soak ? "-" : ev, x->hb_cpu_pct,
                x->busiest_pct, x->main_cpu_pct, x->nthreads, x->window_s,
                x->nfalse);
    }
    if (!info->soak)
        fprintf(f,
                "told_ms: p50 %.2f  p99 %.2f  max %.2f  (n = %zu; not told: "
                "%d)\n",
                s->p50, s->p99, s->max, s->ntold, s->missing);
    if (!info->soak && s->nevent > 0)
        fprintf(f,
                "event_ms (launcher's death event at the PMIx thread): p50 "
                "%.2f  max %.2f  (n = %zu)\n",
                s->ev_p50, s->ev_max, s->nevent);
    fprintf(f, "false suspicions: %d", s->nfalse_union);
    for (int i = 0; i < s->nfalse_union; i++)
        fprintf(f, "%s%d", i ? "," : " (ranks ", s->false_union[i]);
    fprintf(f, "%s\n", s->nfalse_union ? ")" : "");
    fprintf(f,
            "hb_cpu %%: mean %.3f  max %.3f (busiest thread max %.3f); "
            "main %%: mean %.2f  max %.2f\n",
            s->cpu_mean, s->cpu_max, s->busiest_max, s->main_mean, s->main_max);
    if (s->nvalid < info->ranks)
        fprintf(f,
                "results from %d of %d ranks (the others were injected or "
                "failed)\n",
                s->nvalid, info->ranks);
}

static void report_json(FILE *f, const det_run_info_t *info,
                        const det_rank_result_t *res, const det_summary_t *s)
{
    const det_rank_result_t *v0 = first_valid(info, res);

    fprintf(f, "{\"mode\":\"%s\",\"ranks\":%d,\"victims\":[",
            info->soak ? "soak" : "latency", info->ranks);
    for (int v = 0; v0 != NULL && v < v0->nvictims; v++)
        fprintf(f, "%s{\"rank\":%d,\"signal\":\"%s\"}", v ? "," : "",
                v0->victim[v], v0->victim_stop[v] ? "stop" : "kill");
    fprintf(f, "],\"survivors\":[");
    for (int r = 0, k = 0; r < info->ranks; r++)
        if (res[r].valid)
            fprintf(f, "%s%d", k++ ? "," : "", r);
    fprintf(f, "],\"told_ms\":[");
    for (int r = 0, k = 0; r < info->ranks; r++)
        for (int v = 0; res[r].valid && v < res[r].nvictims; v++)
            fprintf(f, "%s%.3f", k++ ? "," : "", res[r].told_ms[v]);
    fprintf(f, "],\"event_ms\":[");
    for (int r = 0, k = 0; r < info->ranks; r++)
        for (int v = 0; res[r].valid && v < res[r].nvictims; v++)
            fprintf(f, "%s%.3f", k++ ? "," : "", res[r].event_ms[v]);
    fprintf(f,
            "],\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
            "\"event_p50_ms\":%.3f,\"event_max_ms\":%.3f,"
            "\"not_told\":%d,\"false_suspicions\":%d,\"false_ranks\":[",
            s->p50, s->p99, s->max, s->nevent ? s->ev_p50 : -1.0,
            s->nevent ? s->ev_max : -1.0, s->missing, s->nfalse_union);
    for (int i = 0; i < s->nfalse_union; i++)
        fprintf(f, "%s%d", i ? "," : "", s->false_union[i]);
    fprintf(f,
            "],\"hb_cpu_pct\":{\"mean\":%.4f,\"max\":%.4f,"
            "\"busiest_thread_max\":%.4f},\"main_cpu_pct\":{\"mean\":%.3f,"
            "\"max\":%.3f},\"hb_cpu_per_rank\":[",
            s->cpu_mean, s->cpu_max, s->busiest_max, s->main_mean, s->main_max);
    for (int r = 0, k = 0; r < info->ranks; r++)
        if (res[r].valid)
            fprintf(f, "%s%.4f", k++ ? "," : "", res[r].hb_cpu_pct);
    fprintf(f,
            "],\"cpu_window_s\":%.3f,\"results\":%d,\"detector\":%s,"
            "\"thread\":%s,\"fastpath\":%s,\"eta_ms\":%.3f,\"delta_ms\":%.3f,"
            "\"grace_ms\":%.3f,\"soak_s\":%.3f}\n",
            s->window_min, s->nvalid, info->detector ? "true" : "false",
            info->thread ? "true" : "false", info->fastpath ? "true" : "false",
            info->eta_ms, info->delta_ms, info->grace_ms, info->soak_s);
}

void det_report(FILE *f, const det_run_info_t *info,
                const det_rank_result_t *res, int json)
{
    det_summary_t *s = malloc(sizeof(*s));
    if (s == NULL) {
        bench_err("detector", "out of memory");
        return;
    }
    summarise(info, res, s);
    if (json)
        report_json(f, info, res, s);
    else
        report_table(f, info, res, s);
    free(s);
}
