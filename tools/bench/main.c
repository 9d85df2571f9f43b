/*
 * ucft-bench: benchmarks of the ucft runtime. One subcommand per kind of
 * measurement; a subcommand is one row of `cmds` below (name, one-line
 * summary, entry point taking argv with argv[0] = its name).
 *
 *   ucftrun -n 2 ucft-bench pt2pt [options]
 *   ucftrun -n 16 --kill 15@3 ucft-bench detector [options]
 */
#include "tools/bench/bench.h"
#include "ucft.h"

#include <stdio.h>
#include <string.h>

static const bench_cmd_t cmds[] = {
    {"pt2pt",
     "point-to-point round trip and bandwidth, ucft next to raw UCP "
     "(2 ranks)",
     bench_pt2pt_main},
    {"detector", "failure detection latency, heartbeat CPU, soak",
     bench_detector_main},
    {"coll", "collective latency; kill-to-correct-result time",
     bench_coll_main},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ucft-bench <subcommand> [options]   (ucft %d.%d.%d)\n"
            "subcommands:\n",
            UCFT_VERSION_MAJOR, UCFT_VERSION_MINOR, UCFT_VERSION_PATCH);
    for (const bench_cmd_t *c = cmds; c->name != NULL; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "'ucft-bench <subcommand> --help' describes its options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        bench_err(NULL, "missing subcommand");
        usage(stderr);
        return BENCH_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return BENCH_EXIT_OK;
    }
    for (const bench_cmd_t *c = cmds; c->name != NULL; c++) {
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    }
    bench_err(NULL, "unknown subcommand '%s'", argv[1]);
    usage(stderr);
    return BENCH_EXIT_USAGE;
}
