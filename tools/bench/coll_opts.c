/*
 * Options of `ucft-bench coll`. A bad option gives one line naming it,
 * then the usage, and exit code 2.
 */
#include "tools/bench/coll.h"
#include "collectives/coll_op.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SIZE   8
#define DEFAULT_ITERS  10000
#define DEFAULT_WARMUP 1000
#define DEFAULT_BOUND  30.0
#define MAX_SIZE       (64u << 20)

static const char *const op_names[] = {
    "bcast",          "reduce", "allreduce", "barrier",         "allgather",
    "reduce_scatter", "agree",  "shrink",    "allreduce_approx"};
static const char *const op_envs[] = {
    "BCAST",          "REDUCE", "ALLREDUCE", "BARRIER",         "ALLGATHER",
    "REDUCE_SCATTER", "AGREE",  "SHRINK",    "ALLREDUCE_APPROX"};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

const char *coll_op_name(coll_op_t op)
{
    return (unsigned)op < NOPS ? op_names[op] : "?";
}

const char *coll_op_env(coll_op_t op)
{
    return (unsigned)op < NOPS ? op_envs[op] : "?";
}

void coll_usage(FILE *f)
{
    fprintf(f,
            "usage: ucftrun -n N ucft-bench coll --op OP [options]\n"
            "       ucftrun -n N --kill R@S ucft-bench coll --kill-to-result "
            "[options]\n"
            "  Latency: every rank times --iters back-to-back blocking "
            "operations\n"
            "  (after --warmup ones and a barrier); rank 0 prints the max over "
            "ranks\n"
            "  of each rank's median and mean time per operation.\n"
            "  --op OP          bcast | reduce | allreduce | barrier | "
            "allgather |\n"
            "                   reduce_scatter (root 0; the last two: --size "
            "is the\n"
            "                   whole vector, n blocks of int64) | agree\n"
            "                   (ucft_comm_agree of one flag) | shrink | "
            "allreduce_approx\n"
            "                   (doubles; --alg ps, pf, pflc, pfcc, hps, "
            "hpflc, ardb;\n"
            "                   --eps E)\n"
            "  --alg NAME       sets UCFT_<OP>_ALG before ucft_init "
            "(ucft-sim --list)\n"
            "  --size B         bytes per rank (int64 elements for reduce and\n"
            "                   allreduce, so a multiple of 8; default %d)\n"
            "  --iters K        timed operations (default %d)\n"
            "  --warmup W       untimed operations first (default %d)\n"
            "  --f F            failures tolerated (ucft_comm_set_f; default "
            "UCFT_F)\n"
            "  --kill-to-shrink loop a recursive-doubling allreduce while "
            "ucftrun kills\n"
            "                   a rank; each survivor revokes, shrinks and "
            "completes\n"
            "                   one allreduce on the new communicator: kill -> "
            "that\n"
            "                   result per survivor (first_ms)\n"
            "  --kill-to-result loop allreduce (f = 1 unless --f) while "
            "ucftrun kills\n"
            "                   a rank; per survivor: kill -> first completed "
            "result,\n"
            "                   and kill -> first result without the victim\n"
            "  --bound S        kill-to-result: longest run (default %.0f s)\n"
            "  --ballast MB     kill-to-result: every rank first writes MB "
            "MiB of its\n"
            "                   own memory (an application's working set, "
            "which the\n"
            "                   killed rank's exit frees; default 0)\n"
            "  --failed SPEC    r,r,... | RANDOM:k | FIRST:k: these ranks "
            "fail right\n"
            "                   after start-up; the op is timed on the "
            "survivors\n"
            "  --tree-repair D  keep|rebalance|reroute|lookup|fresh with "
            "--failed:\n"
            "                   failed ranks kept in the trees (f raised to "
            "k), the\n"
            "                   survivors' trees after the switch (default), "
            "the\n"
            "                   original trees and corrected structures "
            "routed\n"
            "                   around the failed ranks (per operation or "
            "once),\n"
            "                   or a shrunk communicator\n"
            "  --paired R       with --failed and rebalance, reroute or lookup:"
            "\n"
            "                   R rounds of --iters ops on the design's "
            "communicator\n"
            "                   and as many on a shrink of it, alternating; "
            "reports\n"
            "                   the median ratio and its 95 %% interval\n"
            "  --sync           time each op alone, then an untimed barrier\n"
            "                   (latency as MPI benchmark suites define it)\n"
            "  --json           one JSON object instead of the table\n"
            "  -h, --help       this text\n"
            "  Environment: UCFT_WAIT (spin|sleep|hybrid), UCFT_SPIN_TIME, "
            "UCFT_F,\n"
            "  UCFT_<OP>_ALG, UCX_*.\n",
            DEFAULT_SIZE, DEFAULT_ITERS, DEFAULT_WARMUP, DEFAULT_BOUND);
}

static int fail(int quiet, const char *fmt, const char *what)
{
    if (!quiet) {
        fprintf(stderr, "ucft-bench coll: ");
        fprintf(stderr, fmt, what);
        fputc('\n', stderr);
        coll_usage(stderr);
    }
    return -1;
}

static int parse_op(const char *s, coll_op_t *op)
{
    for (int i = 0; i < (int)NOPS; i++)
        if (strcmp(s, op_names[i]) == 0) {
            *op = (coll_op_t)i;
            return 0;
        }
    return -1;
}

int coll_opts_parse(int argc, char **argv, coll_opts_t *o, int quiet)
{
    enum {
        O_OP = 256,
        O_ALG,
        O_SIZE,
        O_ITERS,
        O_WARMUP,
        O_F,
        O_JSON,
        O_SYNC,
        O_KILL,
        O_SHRINK,
        O_BOUND,
        O_BALLAST,
        O_EPS,
        O_FAILED,
        O_TREE,
        O_PAIRED
    };
    static const struct option longs[] = {
        {"op", required_argument, NULL, O_OP},
        {"alg", required_argument, NULL, O_ALG},
        {"size", required_argument, NULL, O_SIZE},
        {"iters", required_argument, NULL, O_ITERS},
        {"warmup", required_argument, NULL, O_WARMUP},
        {"f", required_argument, NULL, O_F},
        {"json", no_argument, NULL, O_JSON},
        {"sync", no_argument, NULL, O_SYNC},
        {"kill-to-result", no_argument, NULL, O_KILL},
        {"kill-to-shrink", no_argument, NULL, O_SHRINK},
        {"bound", required_argument, NULL, O_BOUND},
        {"ballast", required_argument, NULL, O_BALLAST},
        {"eps", required_argument, NULL, O_EPS},
        {"failed", required_argument, NULL, O_FAILED},
        {"tree-repair", required_argument, NULL, O_TREE},
        {"paired", required_argument, NULL, O_PAIRED},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, have_op = 0;
    char *end;

    memset(o, 0, sizeof(*o));
    o->size = DEFAULT_SIZE;
    o->iters = DEFAULT_ITERS;
    o->warmup = DEFAULT_WARMUP;
    o->f = -1;
    o->bound_s = DEFAULT_BOUND;
    o->eps = 1e-8;
    o->tree_repair = 1;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case O_OP:
            if (parse_op(optarg, &o->op) != 0)
                return fail(quiet,
                            "--op '%s': expected bcast, reduce, allreduce, "
                            "barrier, allgather, reduce_scatter, agree or "
                            "allreduce_approx",
                            optarg);
            have_op = 1;
            break;
        case O_ALG:
            if (*optarg == '\0')
                return fail(quiet, "--alg '%s': expected a name", optarg);
            o->alg = optarg;
            break;
        case O_EPS:
            o->eps = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !(o->eps > 0) ||
                !(o->eps < 1))
                return fail(quiet, "--eps '%s': expected a number in (0, 1)",
                            optarg);
            break;
        case O_SIZE:
            if (bench_parse_size(optarg, &o->size) != 0 || o->size == 0 ||
                o->size > MAX_SIZE)
                return fail(quiet, "--size '%s': expected 1 .. 64m bytes",
                            optarg);
            break;
        case O_ITERS:
            if (bench_parse_int(optarg, 1, 100000000, &o->iters) != 0)
                return fail(quiet, "--iters '%s': expected a count >= 1",
                            optarg);
            break;
        case O_WARMUP:
            if (bench_parse_int(optarg, 0, 100000000, &o->warmup) != 0)
                return fail(quiet, "--warmup '%s': expected a count >= 0",
                            optarg);
            break;
        case O_F:
            if (bench_parse_int(optarg, 1, 64, &o->f) != 0)
                return fail(quiet, "--f '%s': expected 1 .. 64", optarg);
            break;
        case O_SYNC:
            o->sync = 1;
            break;
        case O_JSON:
            o->json = 1;
            break;
        case O_KILL:
            o->kill_to_result = 1;
            break;
        case O_BOUND:
            o->bound_s = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(o->bound_s > 0) ||
                o->bound_s > 3600)
                return fail(quiet, "--bound '%s': expected seconds, > 0",
                            optarg);
            break;
        case O_SHRINK:
            o->kill_to_shrink = 1;
            break;
        case O_BALLAST:
            if (bench_parse_int(optarg, 0, 65536, &o->ballast_mb) != 0)
                return fail(quiet, "--ballast '%s': expected 0 .. 65536 MiB",
                            optarg);
            break;
        case O_FAILED:
            o->failed = optarg;
            break;
        case O_TREE:
            if ((o->tree_repair = coll_failed_design(optarg)) < 0)
                return fail(quiet,
                            "--tree-repair '%s': expected keep, rebalance, "
                            "reroute, lookup or fresh",
                            optarg);
            break;
        case O_PAIRED:
            if (bench_parse_int(optarg, 1, 100000, &o->paired) != 0)
                return fail(quiet, "--paired '%s': expected 1 .. 100000 rounds",
                            optarg);
            break;
        case 'h':
            if (!quiet)
                coll_usage(stdout);
            return 1;
        case ':':
            return fail(quiet, "%s: missing value", argv[optind - 1]);
        default:
            return fail(quiet, "'%s': unknown option", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fail(quiet, "'%s': unexpected argument", argv[optind]);
    if (o->kill_to_shrink) {
        o->op = COLL_ALLREDUCE;
        return 0;
    }
    if (o->kill_to_result) {
        if (have_op && o->op != COLL_ALLREDUCE)
            return fail(quiet, "--kill-to-result: '%s' (allreduce only)",
                        coll_op_name(o->op));
        o->op = COLL_ALLREDUCE;
        return 0;
    }
    if (!have_op)
        return fail(quiet, "%s", "--op is required");
    if (o->paired > 0 && (o->failed == NULL || o->tree_repair == 0 ||
                          o->tree_repair == 2 || o->sync))
        return fail(quiet, "%s",
                    "--paired: needs --failed and --tree-repair rebalance, "
                    "reroute or lookup (the design against a shrink), "
                    "without --sync");
    if (o->alg != NULL && (o->op == COLL_AGREE || o->op == COLL_SHRINK))
        return fail(quiet, "--alg '%s': agree has one algorithm (era)", o->alg);
    if (o->alg != NULL && coll_op_find(coll_op_name(o->op), o->alg) == NULL)
        return fail(quiet,
                    "--alg '%s': no such algorithm of this operation "
                    "(ucft-sim --list shows them)",
                    o->alg);
    if ((o->op == COLL_REDUCE || o->op == COLL_ALLREDUCE) && o->size % 8)
        return fail(quiet, "--size: %s",
                    "reductions use int64 elements, expected a multiple "
                    "of 8");
    return 0;
}
