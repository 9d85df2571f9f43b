/*
 * Options of `ucft-bench pt2pt` and the iteration counts derived from them.
 * A bad option gives one line naming it, then the usage, and exit code 2.
 */
#include "tools/bench/pt2pt.h"
#include "runtime/base/config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_ITERS  10000
#define DEFAULT_BUDGET 2.0
#define DEFAULT_ROUNDS 3
#define DEFAULT_WINDOW 64
#define MAX_SIZE       ((size_t)64 << 20)
/* Sizes above this get proportionally fewer iterations. */
#define FULL_ITERS_UP_TO 8192

static const size_t default_sizes[] = {8, 64, 1024, 65536, 1048576};

void pt2pt_usage(FILE *f)
{
    fprintf(
        f,
        "usage: ucftrun -n 2 ucft-bench pt2pt [options]\n"
        "  Round-trip latency and bandwidth between rank 0 and rank 1, "
        "through ucft\n"
        "  and through raw UCP with the same settings, alternating per "
        "size.\n"
        "  --sizes LIST   message sizes, comma separated, k/m suffixes "
        "(default\n"
        "                 8,64,1024,65536,1048576; at most %d, each <= 64m)\n"
        "  --iters K      ping-pong iterations per round for sizes <= 8k "
        "(default %d;\n"
        "                 larger sizes get K*8k/size, at least min(K,50));\n"
        "                 given: exact counts; not given: counts shrink to "
        "fit --budget\n"
        "  --budget S     seconds per size when --iters is not given "
        "(default %.0f;\n"
        "                 0 = no limit)\n"
        "  --rounds R     ucft/raw alternations per size (default %d, max "
        "%d)\n"
        "  --window W     sends per bandwidth window (default %d)\n"
        "  --no-bw        skip the bandwidth measurement\n"
        "  --wait MODE    spin|sleep|hybrid: sets UCFT_WAIT for this run\n"
        "  --json         one JSON object per size and line\n"
        "  -h, --help     this text\n"
        "  Environment: UCFT_WAIT, UCFT_SPIN_TIME, UCFT_POLL_TIMEOUT, "
        "UCFT_UCX_KEEPALIVE\n"
        "  and UCX_* apply to both paths.\n",
        PT2PT_MAX_SIZES, DEFAULT_ITERS, DEFAULT_BUDGET, DEFAULT_ROUNDS,
        PT2PT_MAX_ROUNDS, DEFAULT_WINDOW);
}

static int parse_sizes(const char *arg, pt2pt_opts_t *o)
{
    char buf[512];
    if (strlen(arg) >= sizeof(buf) || *arg == '\0')
        return -1;
    snprintf(buf, sizeof(buf), "%s", arg);
    o->nsizes = 0;
    for (char *t = buf, *next; t != NULL; t = next) {
        next = ucft__config_list_next(t);
        size_t v;
        if (o->nsizes == PT2PT_MAX_SIZES || bench_parse_size(t, &v) != 0 ||
            v > MAX_SIZE)
            return -1;
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static int fail(int quiet, const char *fmt, const char *what)
{
    if (!quiet) {
        fprintf(stderr, "ucft-bench pt2pt: ");
        fprintf(stderr, fmt, what);
        fputc('\n', stderr);
        pt2pt_usage(stderr);
    }
    return -1;
}

int pt2pt_opts_parse(int argc, char **argv, pt2pt_opts_t *o, int quiet)
{
    enum {
        O_SIZES = 256,
        O_ITERS,
        O_BUDGET,
        O_ROUNDS,
        O_WINDOW,
        O_NOBW,
        O_WAIT,
        O_JSON
    };
    static const struct option longs[] = {
        {"sizes", required_argument, NULL, O_SIZES},
        {"iters", required_argument, NULL, O_ITERS},
        {"budget", required_argument, NULL, O_BUDGET},
        {"rounds", required_argument, NULL, O_ROUNDS},
        {"window", required_argument, NULL, O_WINDOW},
        {"no-bw", no_argument, NULL, O_NOBW},
        {"wait", required_argument, NULL, O_WAIT},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->nsizes = (int)(sizeof(default_sizes) / sizeof(default_sizes[0]));
    memcpy(o->sizes, default_sizes, sizeof(default_sizes));
    o->iters = DEFAULT_ITERS;
    o->budget = DEFAULT_BUDGET;
    o->rounds = DEFAULT_ROUNDS;
    o->window = DEFAULT_WINDOW;
    o->bw = 1;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_SIZES:
            if (parse_sizes(optarg, o) != 0)
                return fail(quiet,
                            "--sizes '%s': expected a comma separated list "
                            "of sizes (k/m suffixes), each at most 64m",
                            optarg);
            break;
        case O_ITERS:
            if (bench_parse_int(optarg, 1, 100000000, &o->iters) != 0)
                return fail(quiet, "--iters '%s': expected an integer >= 1",
                            optarg);
            o->iters_set = 1;
            break;
        case O_BUDGET: {
            char *end;
            o->budget = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(o->budget >= 0) ||
                o->budget > 3600)
                return fail(quiet, "--budget '%s': expected seconds, 0..3600",
                            optarg);
            break;
        }
        case O_ROUNDS:
            if (bench_parse_int(optarg, 1, PT2PT_MAX_ROUNDS, &o->rounds) != 0)
                return fail(quiet, "--rounds '%s': expected 1..15", optarg);
            break;
        case O_WINDOW:
            if (bench_parse_int(optarg, 1, 1024, &o->window) != 0)
                return fail(quiet, "--window '%s': expected 1..1024", optarg);
            break;
        case O_NOBW:
            o->bw = 0;
            break;
        case O_WAIT:
            if (strcasecmp(optarg, "spin") != 0 &&
                strcasecmp(optarg, "sleep") != 0 &&
                strcasecmp(optarg, "hybrid") != 0)
                return fail(quiet,
                            "--wait '%s': expected spin, sleep or hybrid",
                            optarg);
            o->wait = optarg;
            break;
        case O_JSON:
            o->json = 1;
            break;
        case 'h':
            if (!quiet)
                pt2pt_usage(stdout);
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

int pt2pt_iters(const pt2pt_opts_t *o, size_t size)
{
    if (size <= FULL_ITERS_UP_TO)
        return o->iters;
    double n = (double)o->iters * FULL_ITERS_UP_TO / (double)size;
    int floor = o->iters < 50 ? o->iters : 50;
    return n < floor ? floor : (int)n;
}

int pt2pt_warmup(int iters)
{
    int w = iters / 10;
    return w < 5 ? 5 : w;
}

int pt2pt_windows(const pt2pt_opts_t *o, size_t size)
{
    int n = pt2pt_iters(o, size) / 50;
    return n < 4 ? 4 : n;
}
