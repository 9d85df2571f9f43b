/*
 * Options of `ucft-bench detector`. A bad option gives one line naming it,
 * then the usage, and exit code 2.
 */
#include "tools/bench/detector.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BOUND  30.0
#define DEFAULT_WARMUP 0.25

void det_usage(FILE *f)
{
    fprintf(
        f,
        "usage: ucftrun -n N --kill R@S ucft-bench detector [options]\n"
        "       ucftrun -n N ucft-bench detector --soak SECONDS [options]\n"
        "  Latency (default): every rank sleeps on the context fd until the "
        "ranks\n"
        "  ucftrun injected (--kill/--stop, from UCFTRUN_INJECT_LOG) are "
        "reported\n"
        "  failed; told = failure callback time - injection time, per "
        "survivor.\n"
        "  Inject after the detector's start-up grace (UCFT_HB_START_GRACE, "
        "1 s)\n"
        "  plus --warmup and the CPU window, e.g. --kill 15@3.\n"
        "  --soak S     every rank computes S seconds without calling ucft, "
        "then\n"
        "               counts the ranks reported failed (false "
        "suspicions)\n"
        "  --bound S    latency: longest wait for the injections and their "
        "reports\n"
        "               (default %.0f s)\n"
        "  --expect K   latency: injections to wait for (default 1, max %d)\n"
        "  --warmup S   latency: idle seconds after init before the CPU "
        "window\n"
        "               opens (default %.2f); it closes at the injection\n"
        "  --json       one JSON object instead of the table\n"
        "  -h, --help   this text\n"
        "  Environment: UCFT_DETECTOR, UCFT_DETECTOR_THREAD, "
        "UCFT_DETECTOR_FASTPATH,\n"
        "  UCFT_HB_PERIOD (eta), UCFT_HB_TIMEOUT (delta), "
        "UCFT_HB_START_GRACE, UCX_*.\n",
        DEFAULT_BOUND, DET_MAX_VICTIMS, DEFAULT_WARMUP);
}

static int fail(int quiet, const char *fmt, const char *what)
{
    if (!quiet) {
        fprintf(stderr, "ucft-bench detector: ");
        fprintf(stderr, fmt, what);
        fputc('\n', stderr);
        det_usage(stderr);
    }
    return -1;
}

static int parse_seconds(const char *s, double min, double max, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= min) || v > max)
        return -1;
    *out = v;
    return 0;
}

int det_opts_parse(int argc, char **argv, det_opts_t *o, int quiet)
{
    enum { O_SOAK = 256, O_BOUND, O_EXPECT, O_WARMUP, O_JSON };
    static const struct option longs[] = {
        {"soak", required_argument, NULL, O_SOAK},
        {"bound", required_argument, NULL, O_BOUND},
        {"expect", required_argument, NULL, O_EXPECT},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->bound_s = DEFAULT_BOUND;
    o->warmup_s = DEFAULT_WARMUP;
    o->expect = 1;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_SOAK:
            if (parse_seconds(optarg, 0.001, 86400, &o->soak_s) != 0)
                return fail(quiet, "--soak '%s': expected seconds, > 0",
                            optarg);
            break;
        case O_BOUND:
            if (parse_seconds(optarg, 0.001, 3600, &o->bound_s) != 0)
                return fail(quiet, "--bound '%s': expected seconds, > 0",
                            optarg);
            break;
        case O_EXPECT:
            if (bench_parse_int(optarg, 1, DET_MAX_VICTIMS, &o->expect) != 0)
                return fail(quiet, "--expect '%s': expected 1..8", optarg);
            break;
        case O_WARMUP:
            if (parse_seconds(optarg, 0, 600, &o->warmup_s) != 0)
                return fail(quiet, "--warmup '%s': expected seconds, >= 0",
                            optarg);
            break;
        case O_JSON:
            o->json = 1;
            break;
        case 'h':
            if (!quiet)
                det_usage(stdout);
            return 1;
        case ':':
            return fail(quiet, "option '%s' needs a value", argv[optind - 1]);
        default:
            return fail(quiet, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail(quiet, "unexpected argument '%s'", argv[optind]);
    return 0;
}
