/*
 * ucft-bench: shared pieces of the benchmark subcommands (clock, parsers,
 * statistics, the waiting mode read from the same UCFT_* variables the
 * runtime reads). Each subcommand is one entry of the table in main.c.
 */
#ifndef UCFT_TOOLS_BENCH_H
#define UCFT_TOOLS_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* Exit codes of every subcommand. */
enum {
    BENCH_EXIT_OK = 0,
    BENCH_EXIT_FAIL = 1,  /* the run failed (init, transport, peer) */
    BENCH_EXIT_USAGE = 2, /* bad options or wrong number of ranks */
};

/* A subcommand: `argv[0]` is the subcommand name. */
typedef struct bench_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} bench_cmd_t;

int bench_pt2pt_main(int argc, char **argv);
int bench_detector_main(int argc, char **argv);
int bench_coll_main(int argc, char **argv);

/* ---- clock --------------------------------------------------------------- */

uint64_t bench_now_ns(void);

/* ---- parsers (return 0 on success) --------------------------------------- */

/* "8", "64k", "1m", "1M" (k = 1024). */
int bench_parse_size(const char *s, size_t *out);
/* A positive int. */
int bench_parse_int(const char *s, int min, int max, int *out);

/* ---- waiting mode (mirrors runtime/progress.c)
 * ------------------------------- */

typedef enum bench_wait_mode {
    BENCH_WAIT_SPIN = 0,
    BENCH_WAIT_SLEEP = 1,
    BENCH_WAIT_HYBRID = 2,
} bench_wait_mode_t;

typedef struct bench_wait_cfg {
    bench_wait_mode_t mode; /* UCFT_WAIT, default hybrid */
    uint64_t spin_ns;       /* UCFT_SPIN_TIME */
    uint64_t yield_ns;      /* UCFT_YIELD_TIME */
    uint64_t poll_ns;       /* UCFT_POLL_TIMEOUT, default 100ms */
    uint64_t keepalive_ns;  /* UCFT_UCX_KEEPALIVE, default 1s */
} bench_wait_cfg_t;

/* Reads UCFT_WAIT, UCFT_SPIN_TIME, UCFT_YIELD_TIME, UCFT_POLL_TIMEOUT and
 * UCFT_UCX_KEEPALIVE
 * through the runtime's own configuration table. Returns 0, or -1 with a
 * message in err. */
int bench_wait_cfg_read(bench_wait_cfg_t *cfg, char *err, size_t errlen);
const char *bench_wait_name(bench_wait_mode_t mode);

/* ---- statistics ---------------------------------------------------------- */

/* Sorts v in place and returns the value at quantile q (0..1, nearest
 * rank): q = 0.5 gives the median, 0.99 the 99th percentile. */
double bench_quantile_sort(double *v, size_t n, double q);
/* Same on a copy; v is left unchanged. n <= 64. */
double bench_median_small(const double *v, size_t n);

/* ---- messages ------------------------------------------------------------ */

/* Prints "ucft-bench <cmd>: <message>" to stderr. */
void bench_err(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
