/*
 * ucft-topo: shows where the ranks of a job sit, how a placement policy
 * orders them, and what the trees of the corrected collectives look like
 * on that order (text and Graphviz DOT). Offline: the job is described by
 * options (nodes, ranks per node, mapping, a synthetic hwloc topology and
 * a binding). Online (under a launcher: PMIX_NAMESPACE set, or --online):
 * the running job, as the runtime placed it (topo_online.c). Both print
 * topo_report(). See docs/placement.md.
 */
#include "placement/topo_hwloc.h"
#include "topo_online.h"
#include "topo_report.h"
#include "runtime/base/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_MAX_RANKS (1 << 24)

enum { TOPO_AUTO, TOPO_ONLINE, TOPO_OFFLINE };

typedef struct topo_opts {
    int mode;                /* TOPO_AUTO: online iff PMIX_NAMESPACE is set */
    const char *offline_opt; /* the first option that describes a job */
    int nodes, ppn;
    int by_node;    /* --map-by node: rank r on node r mod K */
    int *node_list; /* --node-list, n entries */
    int n_list;
    const char *synthetic;
    int bind_core; /* -1: not given */
    placement_policy_t policy;
    int f; /* -1: not given (offline 1, online UCFT_F) */
    int root;
    topo_op_t op;
    const char *dot;
    int summary;
} topo_opts_t;

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: ucft-topo --nodes K --ppn M [options]\n"
            "       ucft-topo --node-list ID,ID,... [options]\n"
            "       ucftrun -n N [--nodes K] ucft-topo [--f F] [--root R] "
            "[--op OP]\n"
            "                                [--dot FILE] [--summary]\n"
            "Shows the placement of ranks on failure domains and the trees "
            "of the\ncorrected collectives on it. Offline the job is "
            "described by options;\nonline (under a launcher: "
            "PMIX_NAMESPACE set) every rank calls ucft_init\nand rank 0 "
            "shows the running job as the runtime placed it (set\n"
            "UCFT_PLACEMENT for the policy; --nodes to --placement are "
            "offline only).\n\n"
            "  --online, --offline  force the mode (default: online iff "
            "PMIX_NAMESPACE\n"
            "                       is set)\n"
            "  --nodes K            number of nodes (1..%d)\n"
            "  --ppn M              ranks per node\n"
            "  --map-by node|slot   rank r on node r / M (slot, default) or "
            "r mod K (node)\n"
            "  --node-list LIST     node id of each rank (overrides the "
            "mapping)\n"
            "  --synthetic DESC     hwloc synthetic topology of every node,\n"
            "                       e.g. \"pack:2 numa:2 core:8 pu:2\"\n"
            "  --bind core|none     local rank i on core i (default with "
            "--synthetic),\n"
            "                       or unbound (the whole machine)\n"
            "  --placement P        interleave | locality | identity "
            "(default:\n"
            "                       $UCFT_PLACEMENT, else interleave)\n"
            "  --f F                failures tolerated (default 1, online "
            "UCFT_F;\n"
            "                       below the number of ranks)\n"
            "  --root R             root rank (default 0)\n"
            "  --op OP              bcast | reduce | allreduce (default "
            "bcast)\n"
            "  --dot FILE           also write Graphviz DOT to FILE\n"
            "  --summary            only the header and the counts\n"
            "  -h, --help           this help\n"
            "Exit status: 0 ok, 1 runtime error, 2 bad options.\n",
            TOPO_MAX_RANKS);
}

/* Under a launcher only rank 0 prints the message (topo_quiet). */
static int bad(const char *what, const char *arg)
{
    if (topo_quiet())
        return 2;
    fprintf(stderr, "ucft-topo: %s%s%s%s\nTry 'ucft-topo --help'.\n", what,
            arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
    return 2;
}

static int parse_int(const char *t, int min, int max, int *out)
{
    char *end;
    if (t == NULL || *t == '\0')
        return -1;
    errno = 0;
    long v = strtol(t, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* "0,0,1,1": one node id (>= 0) per rank. */
static int parse_node_list(const char *t, topo_opts_t *o)
{
    int cap = 16, n = 0;
    int *ids = malloc((size_t)cap * sizeof *ids);
    char *copy = strdup(t);
    if (ids == NULL || copy == NULL || *t == '\0')
        goto err;
    for (char *s = copy, *next; s != NULL; s = next) {
        next = ucft__config_list_next(s);
        if (n == TOPO_MAX_RANKS)
            goto err;
        if (n == cap) {
            int *more = realloc(ids, 2 * (size_t)cap * sizeof *ids);
            if (more == NULL)
                goto err;
            ids = more;
            cap *= 2;
        }
        if (parse_int(s, 0, 1 << 30, &ids[n]) != 0)
            goto err;
        n++;
    }
    free(copy);
    free(o->node_list);
    o->node_list = ids;
    o->n_list = n;
    return 0;
err:
    free(ids);
    free(copy);
    return -1;
}

static int parse_opts(int argc, char **argv, topo_opts_t *o)
{
    enum {
        O_NODES = 256,
        O_PPN,
        O_MAP,
        O_LIST,
        O_SYN,
        O_BIND,
        O_PL,
        O_F,
        O_ROOT,
        O_OP,
        O_DOT,
        O_SUM,
        O_ONLINE,
        O_OFFLINE
    };
    static const struct option lo[] = {
        {"nodes", required_argument, 0, O_NODES},
        {"ppn", required_argument, 0, O_PPN},
        {"map-by", required_argument, 0, O_MAP},
        {"node-list", required_argument, 0, O_LIST},
        {"synthetic", required_argument, 0, O_SYN},
        {"bind", required_argument, 0, O_BIND},
        {"placement", required_argument, 0, O_PL},
        {"f", required_argument, 0, O_F},
        {"root", required_argument, 0, O_ROOT},
        {"op", required_argument, 0, O_OP},
        {"dot", required_argument, 0, O_DOT},
        {"summary", no_argument, 0, O_SUM},
        {"online", no_argument, 0, O_ONLINE},
        {"offline", no_argument, 0, O_OFFLINE},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    opterr = 0;
    int c, li = -1, policy_given = 0;
    placement_policy_t given = PLACEMENT_INTERLEAVE;
    while ((c = getopt_long(argc, argv, ":h", lo, &li)) != -1) {
        if (c >= O_NODES && c <= O_PL && o->offline_opt == NULL)
            o->offline_opt = lo[li].name;
        switch (c) {
        case O_NODES:
            if (parse_int(optarg, 1, TOPO_MAX_RANKS, &o->nodes))
                return bad("bad --nodes:", optarg);
            break;
        case O_PPN:
            if (parse_int(optarg, 1, TOPO_MAX_RANKS, &o->ppn))
                return bad("bad --ppn:", optarg);
            break;
        case O_MAP:
            if (strcmp(optarg, "node") != 0 && strcmp(optarg, "slot") != 0)
                return bad("bad --map-by (node, slot):", optarg);
            o->by_node = strcmp(optarg, "node") == 0;
            break;
        case O_LIST:
            if (parse_node_list(optarg, o))
                return bad("bad --node-list (ids >= 0, comma separated):",
                           optarg);
            break;
        case O_SYN:
            o->synthetic = optarg;
            break;
        case O_BIND:
            if (strcmp(optarg, "core") != 0 && strcmp(optarg, "none") != 0)
                return bad("bad --bind (core, none):", optarg);
            o->bind_core = strcmp(optarg, "core") == 0;
            break;
        case O_PL:
            if (placement_policy_parse(optarg, &given) != UCFT_OK)
                return bad("bad --placement (interleave, locality, "
                           "identity):",
                           optarg);
            policy_given = 1;
            break;
        case O_F:
            if (parse_int(optarg, 0, TOPO_MAX_RANKS, &o->f))
                return bad("bad --f:", optarg);
            break;
        case O_ROOT:
            if (parse_int(optarg, 0, TOPO_MAX_RANKS, &o->root))
                return bad("bad --root:", optarg);
            break;
        case O_OP:
            if (topo_op_parse(optarg, &o->op) != UCFT_OK)
                return bad("bad --op (bcast, reduce, allreduce):", optarg);
            break;
        case O_DOT:
            o->dot = optarg;
            break;
        case O_SUM:
            o->summary = 1;
            break;
        case O_ONLINE:
        case O_OFFLINE:
            if (o->mode != TOPO_AUTO &&
                o->mode != (c == O_ONLINE ? TOPO_ONLINE : TOPO_OFFLINE))
                return bad("--online and --offline exclude each other", NULL);
            o->mode = c == O_ONLINE ? TOPO_ONLINE : TOPO_OFFLINE;
            break;
        case 'h':
            if (!topo_quiet())
                usage(stdout);
            return 1;
        case ':':
            return bad("missing value for", argv[optind - 1]);
        default:
            return bad("unknown option", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return bad("unexpected argument", argv[optind]);
    if (o->mode == TOPO_AUTO) {
        const char *ns = getenv("PMIX_NAMESPACE");
        o->mode = ns != NULL && *ns != '\0' ? TOPO_ONLINE : TOPO_OFFLINE;
    }
    if (o->mode == TOPO_ONLINE) {
        /* The runtime reads UCFT_PLACEMENT itself (ucft_init). */
        if (policy_given)
            return bad("--placement is offline only: online the runtime "
                       "applies UCFT_PLACEMENT, set that (or give --offline)",
                       NULL);
        if (o->offline_opt != NULL) {
            char what[160];
            snprintf(what, sizeof what,
                     "--%s describes an offline job; online (under a launcher, "
                     "or --online) the running job is shown: drop it, or give "
                     "--offline",
                     o->offline_opt);
            return bad(what, NULL);
        }
        return 0;
    }
    const char *env = getenv("UCFT_PLACEMENT");
    if (env != NULL && *env != '\0' &&
        placement_policy_parse(env, &o->policy) != UCFT_OK)
        return bad("bad UCFT_PLACEMENT (interleave, locality, identity):", env);
    if (policy_given)
        o->policy = given;
    if (o->f < 0)
        o->f = 1;
    return 0;
}

/* Check the job shape and fill the loci; 2 on bad options. */
static int build_loci(const topo_opts_t *o, placement_locus_t **out, int *nout)
{
    int n;
    if (o->node_list != NULL) {
        n = o->n_list;
        if ((o->nodes || o->ppn) && (long)o->nodes * o->ppn != n)
            return bad("--nodes x --ppn differs from the --node-list length",
                       NULL);
    } else {
        if (!o->nodes || !o->ppn)
            return bad("give --nodes and --ppn, or --node-list", NULL);
        if ((long)o->nodes * o->ppn > TOPO_MAX_RANKS)
            return bad("too many ranks (--nodes x --ppn)", NULL);
        n = o->nodes * o->ppn;
    }
    if (o->root >= n)
        return bad("--root must be below the number of ranks", NULL);
    if (o->f >= n)
        return bad("--f must be below the number of ranks", NULL);
    if (o->synthetic == NULL && o->bind_core == 1)
        return bad("--bind core needs --synthetic", NULL);

    placement_locus_t *loci = calloc((size_t)n, sizeof *loci);
    int *local = calloc((size_t)n, sizeof *local);
    hwloc_topology_t topo = NULL;
    int rc = 1;
    if (loci == NULL || local == NULL) {
        fprintf(stderr, "ucft-topo: out of memory for %d ranks\n", n);
        goto out;
    }
    if (o->synthetic != NULL &&
        topo_synthetic_load(o->synthetic, &topo) != UCFT_OK) {
        rc = bad("bad --synthetic topology:", o->synthetic);
        goto out;
    }
    if (o->node_list != NULL) {
        /* Local index = order among the ranks of the same node: the
         * locality order on node ids alone sorts by (node, rank). */
        for (int r = 0; r < n; r++)
            loci[r] = (placement_locus_t){o->node_list[r], -1, -1, -1};
        int *order = malloc((size_t)n * sizeof *order);
        if (order == NULL || placement_compute(PLACEMENT_LOCALITY, loci, n,
                                               order, local) != UCFT_OK) {
            free(order);
            fprintf(stderr, "ucft-topo: out of memory for %d ranks\n", n);
            goto out;
        }
        for (int i = 0, start = 0; i < n; i++) {
            if (i > 0 && loci[order[i]].node != loci[order[i - 1]].node)
                start = i;
            local[order[i]] = i - start;
        }
        free(order);
    } else {
        for (int r = 0; r < n; r++) {
            loci[r].node = o->by_node ? r % o->nodes : r / o->ppn;
            local[r] = o->by_node ? r / o->nodes : r % o->ppn;
        }
    }
    char set[4096];
    int ncores = topo ? hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) : 0;
    for (int r = 0; r < n; r++) {
        loci[r].package = loci[r].numa = loci[r].core = -1;
        if (topo == NULL)
            continue;
        if (o->bind_core != 0) { /* core, the default with --synthetic */
            if (local[r] >= ncores) {
                fprintf(stderr,
                        "ucft-topo: rank %d is local rank %d but the topology "
                        "has %d cores\nTry 'ucft-topo --help'.\n",
                        r, local[r], ncores);
                rc = 2;
                goto out;
            }
            topo_core_cpuset(topo, local[r], set, sizeof set);
        } else {
            hwloc_bitmap_list_snprintf(
                set, sizeof set, hwloc_topology_get_topology_cpuset(topo));
        }
        if (topo_cpuset_locus(topo, set, &loci[r]) != UCFT_OK) {
            fprintf(stderr, "ucft-topo: rank %d: cannot map cpuset %s\n", r,
                    set);
            goto out;
        }
    }
    *out = loci;
    *nout = n;
    loci = NULL;
    rc = 0;
out:
    if (topo != NULL)
        hwloc_topology_destroy(topo);
    free(loci);
    free(local);
    return rc;
}

int main(int argc, char **argv)
{
    topo_opts_t o = {.bind_core = -1, .f = -1, .policy = PLACEMENT_INTERLEAVE};
    placement_locus_t *loci = NULL;
    FILE *dot = NULL;
    int n = 0, rc = parse_opts(argc, argv, &o);
    if (rc == 1) { /* --help */
        rc = 0;
        goto out;
    }
    if (rc == 0 && o.mode == TOPO_ONLINE) {
        topo_online_opts_t on = {.f = o.f,
                                 .root = o.root,
                                 .op = o.op,
                                 .dot = o.dot,
                                 .summary = o.summary};
        rc = topo_online_main(&on);
        goto out;
    }
    if (rc != 0 || (rc = build_loci(&o, &loci, &n)) != 0)
        goto out;
    if (o.dot != NULL && (dot = fopen(o.dot, "w")) == NULL) {
        fprintf(stderr, "ucft-topo: cannot write %s: %s\n", o.dot,
                strerror(errno));
        rc = 1;
        goto out;
    }
    topo_report_params_t p = {.loci = loci,
                              .n = n,
                              .policy = o.policy,
                              .f = o.f,
                              .root = o.root,
                              .op = o.op,
                              .summary = o.summary,
                              .out = stdout,
                              .dot = dot};
    ucft_status_t st = topo_report(&p, NULL);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft-topo: report failed: %s\n",
                ucft_status_string(st));
        rc = 1;
    }
    if (dot != NULL && fclose(dot) != 0) {
        fprintf(stderr, "ucft-topo: cannot write %s\n", o.dot);
        rc = 1;
    }
out:
    free(loci);
    free(o.node_list);
    return rc;
}
