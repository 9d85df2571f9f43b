/*
 * ucft-bench detector: internal interface between the driver (detector.c),
 * the options (detector_opts.c), the report and measurement helpers
 * (detector_report.c) and the death-event probe (detector_pmix.c).
 *
 * Two modes:
 *   latency (default)  every rank waits, asleep on the context fd, until
 *                      the ranks that ucftrun injected (--kill/--stop,
 *                      read from UCFTRUN_INJECT_LOG) are reported failed;
 *                      told = failure callback time - injection time.
 *   soak (--soak S)    every rank computes S seconds without calling ucft;
 *                      any rank reported failed is a false suspicion.
 * Every rank sends one det_rank_result_t to the lowest live rank, which
 * prints the report.
 */
#ifndef UCFT_TOOLS_BENCH_DETECTOR_H
#define UCFT_TOOLS_BENCH_DETECTOR_H

#include "tools/bench/bench.h"

#include <stdint.h>
#include <stdio.h>

#define DET_MAX_VICTIMS 8
#define DET_MAX_FALSE   8
#define DET_MAX_THREADS 64
/* User tag of the result messages (any tag works: nothing else is sent). */
#define DET_TAG_RESULT 0xdec

typedef struct det_opts {
    double soak_s;   /* --soak: 0 = latency mode */
    double bound_s;  /* --bound: longest wait for the injected failures */
    double warmup_s; /* --warmup: idle time before the CPU window opens */
    int expect;      /* --expect: injections to wait for */
    int json;        /* --json */
} det_opts_t;

/* Returns 0 (run), 1 (help printed: exit 0) or -1 (error and usage
 * printed: exit 2). `quiet` suppresses messages (ranks other than 0). */
int det_opts_parse(int argc, char **argv, det_opts_t *o, int quiet);
void det_usage(FILE *f);

/* ---- the injection log (docs/launcher.md) -------------------------------- */

typedef struct det_victim {
    int rank;
    int stop; /* 1: SIGSTOP, 0: SIGKILL */
    uint64_t at_ns;
} det_victim_t;

/* Reads the complete lines of `path` (at most `max` entries; a rank
 * injected twice keeps its first line). Returns the number read, or -1
 * when the file cannot be opened. */
int det_inject_log_read(const char *path, det_victim_t *v, int max);

/* ---- CPU time of this process's threads ---------------------------------- */

/* One snapshot: ns of CPU per thread (tid), from
 * /proc/self/task/TID/schedstat (ns resolution), else .../stat
 * (utime + stime, clock ticks). The main thread is tid == pid. */
typedef struct det_cpu {
    uint64_t when_ns; /* CLOCK_MONOTONIC */
    uint64_t main_ns;
    int n;
    int tid[DET_MAX_THREADS];
    uint64_t ns[DET_MAX_THREADS];
} det_cpu_t;

void det_cpu_sample(det_cpu_t *s);

/* Between two snapshots, as % of one core: the main thread, all other
 * threads together (the heartbeat thread plus the PMIx and UCX helper
 * threads), the busiest other thread, and the number of other threads. */
void det_cpu_diff(const det_cpu_t *a, const det_cpu_t *b, double *main_pct,
                  double *others_pct, double *busiest_pct, int *nothers);

/* ---- the launcher's death event, seen directly (detector_pmix.c) ------- */

typedef struct det_pmix {
    int size, active, registered;
    size_t id;
    _Atomic uint64_t *event_ns; /* per rank: first death event (0: none) */
} det_pmix_t;

/* After ucft_init: joins PMIx (reference counted) and puts a handler for
 * PMIX_ERR_PROC_ABORTED_BY_SIG in front of ucft's. Returns 0 or -1 (then
 * no event times; call det_pmix_unwatch anyway). */
int det_pmix_watch(det_pmix_t *pm, int size);
/* When the death event about `rank` arrived (PMIx thread), or 0. */
uint64_t det_pmix_event_ns(const det_pmix_t *pm, int rank);
void det_pmix_unwatch(det_pmix_t *pm);

/* ---- results ------------------------------------------------------------- */

/* One rank's numbers; sent as bytes to the reporting rank (same binary on
 * one machine: no conversion). */
typedef struct det_rank_result {
    int32_t rank;
    int32_t valid; /* 0: no result received from this rank */
    int32_t nvictims;
    int32_t victim[DET_MAX_VICTIMS];
    int32_t victim_stop[DET_MAX_VICTIMS];
    int32_t nfalse; /* reported failed, not injected */
    int32_t false_rank[DET_MAX_FALSE];
    int32_t missing;                 /* victims not reported within the bound */
    int32_t nthreads;                /* threads other than the main one */
    double told_ms[DET_MAX_VICTIMS]; /* -1: not told */
    double event_ms[DET_MAX_VICTIMS]; /* launcher's event; -1: none */
    double hb_cpu_pct;                /* threads other than main */
    double busiest_pct;               /* busiest such thread */
    double main_cpu_pct;
    double window_s; /* length of the CPU window */
} det_rank_result_t;

typedef struct det_run_info {
    int ranks;
    int soak;
    double soak_s;
    int detector, thread, fastpath;
    double eta_ms, delta_ms, grace_ms;
} det_run_info_t;

/* Prints the table (or one JSON object) from the per-rank results; `res`
 * has one entry per rank (res[r].valid = 0 where nothing came). */
void det_report(FILE *f, const det_run_info_t *info,
                const det_rank_result_t *res, int json);

#endif
