/*
 * Shared helpers of ucft-bench: monotonic clock, option value parsers,
 * quantiles, and the waiting mode, read from the same variables and with
 * the same defaults as the runtime (runtime/variables.c), so that the raw
 * UCP baseline waits exactly the way ucft does.
 */
#include "tools/bench/bench.h"
#include "runtime/base/config.h"
#include "runtime/variables.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bench_parse_int(const char *s, int min, int max, int *out)
{
    int v;
    if (ucft__config_parse_int(NULL, s, &v) != 0 || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int bench_parse_size(const char *s, size_t *out)
{
    return ucft__config_parse_size(NULL, s, out);
}

static const char *const wait_names[] = {"spin", "sleep", "hybrid"};

const char *bench_wait_name(bench_wait_mode_t mode)
{
    return (unsigned)mode < 3 ? wait_names[mode] : "?";
}

int bench_wait_cfg_read(bench_wait_cfg_t *cfg, char *err, size_t errlen)
{
    /* The runtime's own table: same variables, defaults and checks. */
    rt_config_t rc;
    if (ucft__config_read(&rt_config_table, &rc, NULL, NULL, err, errlen) !=
        UCFT_OK)
        return -1;
    cfg->mode = (bench_wait_mode_t)rc.wait_mode;
    cfg->spin_ns = rc.spin_ns;
    cfg->yield_ns = rc.yield_ns;
    cfg->poll_ns = rc.poll_ns;
    cfg->keepalive_ns = rc.keepalive_ns;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_quantile_sort(double *v, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof(*v), cmp_double);
    /* Nearest rank: the smallest value with at least q*n values <= it. */
    size_t k = (size_t)(q * (double)n + 0.999999);
    if (k == 0)
        k = 1;
    if (k > n)
        k = n;
    if (q == 0.5 && (n % 2) == 0)
        return (v[n / 2 - 1] + v[n / 2]) / 2.0;
    return v[k - 1];
}

double bench_median_small(const double *v, size_t n)
{
    double tmp[64];
    if (n > 64)
        n = 64;
    memcpy(tmp, v, n * sizeof(*v));
    return bench_quantile_sort(tmp, n, 0.5);
}

void bench_err(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ucft-bench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
