/*
 * Shared helpers of ucft-bench: monotonic clock, option value parsers,
 * quantiles, and the waiting mode, read from the same variables and with
 * the same defaults as the runtime (runtime/rt_config.c), so that the raw
 * UCP baseline waits exactly the way ucft does.
 */
#include "tools/bench/bench.h"

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

static int parse_u64(const char *s, uint64_t *v, char **end)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, end, 10);
    if (errno != 0 || *end == s)
        return -1;
    *v = x;
    return 0;
}

int bench_parse_size(const char *s, size_t *out)
{
    uint64_t v, mul = 1;
    char *end;
    if (parse_u64(s, &v, &end) != 0)
        return -1;
    if (strcasecmp(end, "k") == 0)
        mul = 1ull << 10;
    else if (strcasecmp(end, "m") == 0)
        mul = 1ull << 20;
    else if (*end != '\0')
        return -1;
    if (v > SIZE_MAX / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

int bench_parse_time(const char *s, uint64_t *ns)
{
    /* As the runtime: a plain number is milliseconds. */
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"ms", 1000000},
                 {"s", 1000000000},
                 {"", 1000000}};
    uint64_t v;
    char *end;
    if (parse_u64(s, &v, &end) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            if (v > UINT64_MAX / units[i].ns)
                return -1;
            *ns = v * units[i].ns;
            return 0;
        }
    }
    return -1;
}

int bench_parse_int(const char *s, int min, int max, int *out)
{
    uint64_t v;
    char *end;
    if (parse_u64(s, &v, &end) != 0 || *end != '\0' || v < (uint64_t)min ||
        v > (uint64_t)max)
        return -1;
    *out = (int)v;
    return 0;
}

static const char *const wait_names[] = {"spin", "sleep", "hybrid"};

const char *bench_wait_name(bench_wait_mode_t mode)
{
    return (unsigned)mode < 3 ? wait_names[mode] : "?";
}

int bench_wait_cfg_read(bench_wait_cfg_t *cfg, char *err, size_t errlen)
{
    const char *w = getenv("UCFT_WAIT");
    const char *spin = getenv("UCFT_SPIN_TIME");
    const char *poll = getenv("UCFT_POLL_TIMEOUT");

    cfg->mode = BENCH_WAIT_HYBRID;
    cfg->spin_ns = 50 * 1000ull;
    cfg->poll_ns = 100 * 1000000ull;
    if (w != NULL) {
        int found = 0;
        for (int i = 0; i < 3; i++) {
            if (strcasecmp(w, wait_names[i]) == 0) {
                cfg->mode = (bench_wait_mode_t)i;
                found = 1;
            }
        }
        if (!found) {
            snprintf(err, errlen, "UCFT_WAIT=%s: expected spin|sleep|hybrid",
                     w);
            return -1;
        }
    }
    if (spin != NULL && bench_parse_time(spin, &cfg->spin_ns) != 0) {
        snprintf(err, errlen, "UCFT_SPIN_TIME=%s: not a time", spin);
        return -1;
    }
    if (poll != NULL && bench_parse_time(poll, &cfg->poll_ns) != 0) {
        snprintf(err, errlen, "UCFT_POLL_TIMEOUT=%s: not a time", poll);
        return -1;
    }
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
