/*
 * ucft-sim's command line (see ucft_sim.h and docs/sim.md).
 */
#include "ucft_sim.h"
#include "runtime/base/config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(
        f, "Usage: ucft-sim --op OP [--alg ALG] --ranks N [options]\n"
           "Runs one collective on the simulated (LogGP) transport.\n\n"
           "  --op OP              operation (see --list)\n"
           "  --alg ALG            algorithm (default: the first for OP)\n"
           "  --ranks N            number of ranks: 1..16777216, or 2^k\n"
           "  --size BYTES         payload per rank (default 8)\n"
           "  --root R             root of rooted operations (default 0)\n"
           "  --fail K             K random ranks (from the seed, never the\n"
           "                       root) fail before the operation\n"
           "  --fail-at r@k,...    rank r dies before its k-th send of the op\n"
           "  --kill-at r@T,...    rank r dies at simulated time T (us)\n"
           "  --fail-start r,...   rank r dies before it starts the op\n"
           "  --failed LIST|RANDOM:k|FIRST:k\n"
           "                       ranks already failed, known to every\n"
           "                       survivor (FIRST:k: the k ranks after the\n"
           "                       root); with --tree-repair\n"
           "  --tree-repair D      keep|reroute|lookup|rebalance|fresh: what\n"
           "                       the trees do with them (docs/trees.md;\n"
           "                       default rebalance)\n"
           "  --f F                failures tolerated by corrected algorithms\n"
           "                       (default 0: the algorithm's default, 1)\n"
           "  --nodes K            split the ranks into K pretend nodes\n"
           "                       (failure domains; counts cross-node "
           "messages)\n"
           "  --map-by slot|node   slot: blocks of ranks per node (default);\n"
           "                       node: rank r on node r mod K\n"
           "  --placement P        interleave|locality|identity: tree "
           "positions\n"
           "                       from the nodes (needs --nodes)\n"
           "  --kill-node K[@T]    every rank of node K dies at simulated "
           "time\n"
           "                       T (us), or before the op; repeatable\n"
           "  --seed S             seed for random failure plans (default 1)\n"
           "  --loggp L,o,g,G      L,o,g in us, G in ns/byte\n"
           "                       (default 1,0.3,0.4,0.08)\n"
           "  --detect-delay US    failure notification delay (default 1000)\n"
           "  --start-spread US    ranks start at times drawn from [0, US]\n"
           "                       (seeded; default 0: all at once)\n"
           "  --no-notify          no failure notification to survivors\n"
           "  --max-events N       stop after N events (default: none)\n"
           "  --json               one JSON object instead of text\n"
           "  --sweep-ranks LIST   N1,N2,... or pow2:MAX or pow2:MIN:MAX;\n"
           "                       one CSV line per N (ignores --ranks)\n"
           "  --csv FILE           CSV output file for a sweep (default "
           "stdout)\n" SIM_GOSSIP_USAGE
           "  --list               list operations and algorithms\n"
           "  -h, --help           this help\n"
           "Exit status: 0 ran, 1 the run failed or gave wrong data, 2 bad "
           "options.\n");
}

int ucft_sim_bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "ucft-sim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'ucft-sim --help'.\n");
    return 2;
}

/* Microseconds (a decimal fraction, 0 .. 10^12) into nanoseconds. */
static int parse_us(const char *t, uint64_t *ns)
{
    char *end;
    double us = strtod(t, &end);
    if (end == t || *end || !(us >= 0 && us <= 1e12) /* NaN too */)
        return -1;
    *ns = (uint64_t)(us * 1000.0 + 0.5);
    return 0;
}

/* Unsigned decimal, or 2^k. */
static int parse_u64(const char *t, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (t == NULL || !isdigit((unsigned char)*t))
        return -1; /* strtoull would take white space and a sign */
    errno = 0;
    if (t[0] == '2' && t[1] == '^') {
        if (!isdigit((unsigned char)t[2]))
            return -1;
        v = strtoull(t + 2, &end, 10);
        if (errno || *end || end == t + 2 || v > 62)
            return -1;
        v = 1ull << v;
    } else {
        v = strtoull(t, &end, 10);
        if (errno || *end || end == t)
            return -1;
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *t, int min, int max, int *out)
{
    uint64_t v;
    if (parse_u64(t, (uint64_t)max, &v) != 0 || (int64_t)v < min)
        return -1;
    *out = (int)v;
    return 0;
}

static int add_fail(opts_t *o, const simrun_fail_t *f)
{
    simrun_fail_t *n = realloc(o->fails, (o->nfails + 1) * sizeof(*n));
    if (n == NULL)
        return -1;
    o->fails = n;
    o->fails[o->nfails++] = *f;
    return 0;
}

/* "r@x,r@x,..." or (kind BEFORE_OP) "r,r,...". */
static int parse_fails(opts_t *o, const char *text, simrun_fail_kind_t kind)
{
    char *copy = strdup(text);
    int rc = 0;

    if (copy == NULL)
        return -1;
    for (char *tok = copy, *next; tok && rc == 0; tok = next) {
        next = ucft__config_list_next(tok);
        simrun_fail_t f = {.kind = kind};
        char *at = strchr(tok, '@');
        if ((kind == SIMRUN_FAIL_BEFORE_OP) != (at == NULL)) {
            rc = -1;
            break;
        }
        if (at != NULL)
            *at = '\0';
        if (parse_int(tok, 0, (int)UCFT_TAG_MAX_RANKS - 1, &f.rank) != 0) {
            rc = -1;
            break;
        }
        if (kind == SIMRUN_FAIL_BEFORE_SEND) {
            uint64_t k;
            rc = parse_u64(at + 1, UINT32_MAX, &k) || k == 0 ? -1 : 0;
            f.k = (unsigned)k;
        } else if (kind == SIMRUN_FAIL_AT_TIME) {
            rc = parse_us(at + 1, &f.time);
        }
        if (rc == 0)
            rc = add_fail(o, &f);
    }
    free(copy);
    return rc;
}

/* "K" or "K@T" (T in microseconds). */
static int parse_kill_node(opts_t *o, const char *text)
{
    ucft_sim_kill_node_t k = {0};
    char tmp[32];
    const char *at = strchr(text, '@');
    size_t len = at ? (size_t)(at - text) : strlen(text);

    if (len == 0 || len >= sizeof(tmp))
        return -1;
    memcpy(tmp, text, len);
    tmp[len] = '\0';
    if (parse_int(tmp, 0, (int)UCFT_TAG_MAX_RANKS - 1, &k.node))
        return -1;
    if (at != NULL) {
        if (parse_us(at + 1, &k.time))
            return -1;
        k.has_time = 1;
    }
    ucft_sim_kill_node_t *n =
        realloc(o->kill_nodes, (o->nkill_nodes + 1) * sizeof(*n));
    if (n == NULL)
        return -1;
    o->kill_nodes = n;
    o->kill_nodes[o->nkill_nodes++] = k;
    return 0;
}

static int parse_sweep(opts_t *o, const char *text)
{
    uint64_t lo = 2, hi;
    if (strncmp(text, "pow2:", 5) == 0) {
        const char *a = text + 5, *colon = strchr(a, ':');
        char tmp[32];
        if (colon != NULL) {
            if ((size_t)(colon - a) >= sizeof(tmp))
                return -1;
            memcpy(tmp, a, (size_t)(colon - a));
            tmp[colon - a] = '\0';
            if (parse_u64(tmp, UCFT_TAG_MAX_RANKS, &lo) != 0 || lo == 0)
                return -1;
            a = colon + 1;
        }
        if (parse_u64(a, UCFT_TAG_MAX_RANKS, &hi) != 0 || hi < lo)
            return -1;
        for (uint64_t n = 1; n <= hi; n *= 2) {
            if (n < lo)
                continue;
            int *s = realloc(o->sweep, (o->nsweep + 1) * sizeof(*s));
            if (s == NULL)
                return -1;
            o->sweep = s;
            o->sweep[o->nsweep++] = (int)n;
        }
        return o->nsweep ? 0 : -1;
    }
    char *copy = strdup(text);
    int rc = 0;
    if (copy == NULL)
        return -1;
    for (char *tok = copy, *next; tok && rc == 0; tok = next) {
        next = ucft__config_list_next(tok);
        int n;
        int *s = realloc(o->sweep, (o->nsweep + 1) * sizeof(*s));
        if (s == NULL || parse_int(tok, 1, (int)UCFT_TAG_MAX_RANKS, &n)) {
            if (s != NULL)
                o->sweep = s;
            rc = -1;
            break;
        }
        o->sweep = s;
        o->sweep[o->nsweep++] = n;
    }
    free(copy);
    return rc == 0 && o->nsweep ? 0 : -1;
}

enum {
    OPT_OP = 256,
    OPT_ALG,
    OPT_RANKS,
    OPT_SIZE,
    OPT_ROOT,
    OPT_FAIL,
    OPT_FAIL_AT,
    OPT_KILL_AT,
    OPT_FAIL_START,
    OPT_SEED,
    OPT_LOGGP,
    OPT_DETECT,
    OPT_SPREAD,
    OPT_NO_NOTIFY,
    OPT_MAX_EVENTS,
    OPT_JSON,
    OPT_SWEEP,
    OPT_CSV,
    OPT_LIST,
    OPT_F,
    OPT_NODES,
    OPT_MAP_BY,
    OPT_PLACEMENT,
    OPT_KILL_NODE,
    OPT_FAILED,
    OPT_TREE_REPAIR,
};

static const struct option long_opts[] = {
    {"op", required_argument, NULL, OPT_OP},
    {"alg", required_argument, NULL, OPT_ALG},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"size", required_argument, NULL, OPT_SIZE},
    {"root", required_argument, NULL, OPT_ROOT},
    {"fail", required_argument, NULL, OPT_FAIL},
    {"fail-at", required_argument, NULL, OPT_FAIL_AT},
    {"kill-at", required_argument, NULL, OPT_KILL_AT},
    {"fail-start", required_argument, NULL, OPT_FAIL_START},
    {"seed", required_argument, NULL, OPT_SEED},
    {"loggp", required_argument, NULL, OPT_LOGGP},
    {"detect-delay", required_argument, NULL, OPT_DETECT},
    {"start-spread", required_argument, NULL, OPT_SPREAD},
    {"no-notify", no_argument, NULL, OPT_NO_NOTIFY},
    {"max-events", required_argument, NULL, OPT_MAX_EVENTS},
    {"json", no_argument, NULL, OPT_JSON},
    {"sweep-ranks", required_argument, NULL, OPT_SWEEP},
    {"csv", required_argument, NULL, OPT_CSV},
    {"list", no_argument, NULL, OPT_LIST},
    {"f", required_argument, NULL, OPT_F},
    {"nodes", required_argument, NULL, OPT_NODES},
    {"map-by", required_argument, NULL, OPT_MAP_BY},
    {"placement", required_argument, NULL, OPT_PLACEMENT},
    {"kill-node", required_argument, NULL, OPT_KILL_NODE},
    {"failed", required_argument, NULL, OPT_FAILED},
    {"tree-repair", required_argument, NULL, OPT_TREE_REPAIR},
    /* clang-format off */
    SIM_GOSSIP_LONG_OPTS
    /* clang-format on */
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void list_ops(void)
{
    for (size_t i = 0; coll_op_table[i] != NULL; i++)
        printf("%-16s %-10s %s\n", coll_op_table[i]->op, coll_op_table[i]->alg,
               coll_op_table[i]->doc);
}

/* Returns -1 to go on, else an exit status. */
int ucft_sim_parse(opts_t *o, int argc, char **argv)
{
    int c;
    uint64_t v;

    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_OP:
            o->op = optarg;
            break;
        case OPT_ALG:
            o->alg = optarg;
            break;
        case OPT_RANKS:
            if (parse_int(optarg, 1, (int)UCFT_TAG_MAX_RANKS, &o->ranks))
                return ucft_sim_bad("--ranks '%s': want 1..16777216 or 2^k",
                                    optarg);
            break;
        case OPT_SIZE:
            if (parse_u64(optarg, 1ull << 32, &v))
                return ucft_sim_bad("--size '%s': want bytes, 0..2^32", optarg);
            o->size = (size_t)v;
            break;
        case OPT_ROOT:
            if (parse_int(optarg, 0, (int)UCFT_TAG_MAX_RANKS - 1, &o->root))
                return ucft_sim_bad("--root '%s': want a rank", optarg);
            break;
        case OPT_FAIL:
            if (parse_int(optarg, 0, (int)UCFT_TAG_MAX_RANKS, &o->fail))
                return ucft_sim_bad("--fail '%s': want a count of ranks",
                                    optarg);
            break;
        case OPT_FAIL_AT:
            if (parse_fails(o, optarg, SIMRUN_FAIL_BEFORE_SEND))
                return ucft_sim_bad("--fail-at '%s': want r@k,... (k >= 1)",
                                    optarg);
            break;
        case OPT_KILL_AT:
            if (parse_fails(o, optarg, SIMRUN_FAIL_AT_TIME))
                return ucft_sim_bad("--kill-at '%s': want r@microseconds,...",
                                    optarg);
            break;
        case OPT_FAIL_START:
            if (parse_fails(o, optarg, SIMRUN_FAIL_BEFORE_OP))
                return ucft_sim_bad("--fail-start '%s': want r,r,...", optarg);
            break;
        case OPT_SEED:
            if (parse_u64(optarg, UINT64_MAX, &o->seed))
                return ucft_sim_bad("--seed '%s': want an unsigned integer",
                                    optarg);
            break;
        case OPT_LOGGP:
            if (sim_loggp_parse(optarg, &o->loggp))
                return ucft_sim_bad(
                    "--loggp '%s': want L,o,g,G (us,us,us,ns/byte)", optarg);
            break;
        case OPT_DETECT:
            if (parse_us(optarg, &o->detect_delay_ns))
                return ucft_sim_bad("--detect-delay '%s': want microseconds",
                                    optarg);
            break;
        case OPT_SPREAD:
            if (parse_us(optarg, &o->start_spread_ns))
                return ucft_sim_bad("--start-spread '%s': want microseconds",
                                    optarg);
            break;
        case OPT_NO_NOTIFY:
            o->notify = 0;
            break;
        case OPT_MAX_EVENTS:
            if (parse_u64(optarg, UINT64_MAX, &o->max_events))
                return ucft_sim_bad("--max-events '%s': want a count", optarg);
            break;
        case OPT_JSON:
            o->json = 1;
            break;
        case OPT_SWEEP:
            if (parse_sweep(o, optarg))
                return ucft_sim_bad("--sweep-ranks '%s': want N1,N2,... or "
                                    "pow2:MAX or pow2:MIN:MAX",
                                    optarg);
            break;
        case OPT_CSV:
            o->csv = optarg;
            break;
        case OPT_LIST:
            list_ops();
            return 0;
        case OPT_F:
            if (parse_int(optarg, 0, 64, &o->f))
                return ucft_sim_bad("--f '%s': want 0..64 failures", optarg);
            break;
        case OPT_NODES:
            if (parse_int(optarg, 1, (int)UCFT_TAG_MAX_RANKS, &o->nodes))
                return ucft_sim_bad("--nodes '%s': want 1..16777216", optarg);
            break;
        case OPT_MAP_BY:
            if (simnodes_by_parse(optarg, &o->map_by) != UCFT_OK)
                return ucft_sim_bad("--map-by '%s': want slot or node", optarg);
            o->map_by_set = 1;
            break;
        case OPT_PLACEMENT:
            if (placement_policy_parse(optarg, &o->placement) != UCFT_OK)
                return ucft_sim_bad("--placement '%s': want interleave, "
                                    "locality or identity",
                                    optarg);
            o->placement_set = 1;
            break;
        case OPT_KILL_NODE:
            if (parse_kill_node(o, optarg))
                return ucft_sim_bad("--kill-node '%s': want K or "
                                    "K@microseconds",
                                    optarg);
            break;
        case OPT_FAILED:
            if (sim_failed_parse(&o->failed, optarg) != 0)
                return ucft_sim_bad("--failed '%s': want r,r,..., RANDOM:k "
                                    "or FIRST:k",
                                    optarg);
            break;
        case OPT_TREE_REPAIR:
            if (sim_failed_design_parse(&o->failed, optarg) != 0)
                return ucft_sim_bad("--tree-repair '%s': want keep, reroute, "
                                    "lookup, rebalance or fresh",
                                    optarg);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            if (c >= SIM_GOSSIP_OPT_FIRST && c <= SIM_GOSSIP_OPT_LAST) {
                if (sim_gossip_opt(&o->gossip, c, optarg) != 0)
                    return 2;
                break;
            }
            fprintf(stderr, "Try 'ucft-sim --help'.\n");
            return 2;
        }
    }
    if (optind < argc)
        return ucft_sim_bad("unexpected argument '%s'", argv[optind]);
    if (o->op == NULL)
        return ucft_sim_bad("%s", "--op is required (see --list)");
    if (coll_op_find(o->op, o->alg) == NULL)
        return ucft_sim_bad("unknown operation/algorithm '%s' (see --list)",
                            o->alg ? o->alg : o->op);
    if (o->ranks == 0 && o->nsweep == 0)
        return ucft_sim_bad("%s", "--ranks or --sweep-ranks is required");
    if (o->nodes == 0 &&
        (o->map_by_set || o->placement_set || o->nkill_nodes > 0))
        return ucft_sim_bad("%s", "--map-by, --placement and --kill-node "
                                  "need --nodes");
    if (o->failed.kind != SIM_FAILED_NONE &&
        (o->fail > 0 || o->nfails > 0 || o->nkill_nodes > 0))
        return ucft_sim_bad("%s", "--failed does not go with --fail, "
                                  "--fail-at, --kill-at, --fail-start or "
                                  "--kill-node");
    const coll_op_ops_t *op = coll_op_find(o->op, o->alg);
    /* The binomial broadcast, reduce and barrier; the corrected and
     * corrected-failproof broadcasts; the corrected reduce, allreduce and
     * barrier (their structures over a frame with holes). */
    int tree_alg = op->takes_tree || op->takes_frame;
    if ((o->failed.design == SIM_TREE_REROUTE ||
         o->failed.design == SIM_TREE_LOOKUP) &&
        !tree_alg)
        return ucft_sim_bad("%s", "--tree-repair reroute and lookup are "
                                  "designs of the binomial trees and the "
                                  "corrected ones: --op bcast, reduce or "
                                  "barrier with --alg binomial, --op bcast "
                                  "with --alg corrected or "
                                  "corrected-failproof, or --op reduce, "
                                  "allreduce or barrier with a corrected "
                                  "--alg");
    if (o->failed.design == SIM_TREE_KEEP && op->takes_tree &&
        strcmp(op->op, "barrier") == 0 && o->failed.kind != SIM_FAILED_NONE)
        return ucft_sim_bad("%s", "--tree-repair keep: the baseline binomial "
                                  "barrier ends with ERR_PROC_FAILED at a "
                                  "failed rank (use reroute, lookup, "
                                  "rebalance or fresh)");
    return -1;
}
