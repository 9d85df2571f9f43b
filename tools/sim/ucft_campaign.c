/*
 * ucft-campaign: a randomised simulator campaign over every corrected
 * collective and the agreement (docs/sim.md, "Campaign"). Scenario i
 * draws, from seed + i: an operation and algorithm, N (log-uniform from
 * 2 to --max-ranks), f (1..3), a root, K pretend nodes (failure domains,
 * 2 to 8 and at most 64 ranks each, interleaved placement), and failures: ranks
 * that die before the operation, before their k-th send, or at a random
 * simulated time, and whole nodes that vanish at one instant (a lost host, or
 * the minority side of a partition, which fences itself under the majority
 * rule: docs/detector.md). One scenario in five gets more failures than f.
 *
 * Checks, at every scenario: no live rank is left unfinished (a hang);
 * no rank that completed holds a wrong output (the operation's oracle:
 * simrun/oracle.h). With at most f ranks dead (any number for the
 * agreement), every live rank completes with success, unless the
 * operation is rooted and its root died; and the operations whose output
 * must be identical everywhere (coll_op_ops_t.consistent) are.
 *
 *   ucft-campaign [--scenarios K] [--seed S] [--max-ranks N] [--quiet]
 *
 * Prints a line per violation (with the scenario's parameters, enough to
 * replay it with ucft-sim) and a table per operation; exit 0 when there
 * is none, 1 otherwise, 2 for a bad command line.
 */
#include "collectives/agree.h"
#include "collectives/coll_op.h"
#include "simrun/simnodes.h"
#include "simrun/simrun.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operations of the campaign: every corrected algorithm. */
static const char *const cases[][2] = {
    {"bcast", "corrected"},
    {"bcast", "corrected-opportunistic"},
    {"bcast", "corrected-batched"},
    {"bcast", "corrected-failproof"},
    {"bcast", "corrected-kary"},
    {"bcast", "corrected-lame"},
    {"reduce", "corrected-list"},
    {"reduce", "corrected-countbit"},
    {"reduce", "corrected-bit"},
    {"allreduce", "corrected-list"},
    {"allreduce", "corrected-countbit"},
    {"allreduce", "corrected-bit"},
    {"allreduce", "corrected-ring"},
    {"barrier", "corrected"},
    {"allgather", "corrected"},
    {"allgather", "corrected-ring"},
    {"reduce_scatter", "corrected"},
    {"reduce_scatter", "corrected-ring"},
    {"agree", "era"},
    {"bcast", "corrected-ring"},
};
#define NCASES    (sizeof(cases) / sizeof(cases[0]))
#define MAX_FAILS 8

typedef struct tally {
    long runs, over_f, host_loss, dead, violations, hangs;
    long partitioned;   /* runs with a partition (under the majority gate) */
    long dead_disagree; /* runs where a rank completed before it died with
                           another output than the survivors' */
} tally_t;

typedef struct scenario {
    int c, n, f, root, nodes;
    uint64_t seed;
    uint64_t side, cut_ns; /* a partition: the nodes of one side; 0: none */
    int no_gate;           /* --no-gate: partitions without the gate */
    size_t nfails;
    simrun_fail_t fails[MAX_FAILS];
} scenario_t;

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 17;
}

static void draw(scenario_t *s, uint64_t seed, int max_ranks)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    int lg = 1;
    while ((1 << (lg + 1)) <= max_ranks)
        lg++;
    memset(s, 0, sizeof(*s));
    s->seed = seed;
    s->c = (int)(next(&x) % NCASES);
    /* log-uniform N in [2, max_ranks] */
    int hi = 1 << (1 + (int)(next(&x) % (uint64_t)lg));
    if (hi > max_ranks)
        hi = max_ranks;
    s->n = hi / 2 + 1 + (int)(next(&x) % (uint64_t)(hi - hi / 2));
    if (s->n > max_ranks)
        s->n = max_ranks;
    s->f = 1 + (int)(next(&x) % 3);
    if (s->f >= s->n)
        s->f = s->n > 1 ? s->n - 1 : 1;
    s->root = (int)(next(&x) % (uint64_t)s->n);
    /* 2 to 8 nodes, and at most 64 ranks on one (a host's worth). */
    s->nodes = s->n >= 4 ? 2 + (int)(next(&x) % 7) : 0;
    if (s->nodes > 0 && s->nodes < (s->n + 63) / 64)
        s->nodes = (s->n + 63) / 64;
    if (s->nodes > s->n / 2)
        s->nodes = s->n / 2;
    int over = next(&x) % 5 == 0;
    int nf = (int)(next(&x) % (uint64_t)(s->f + 1)) + (over ? s->f : 0);
    if (nf > MAX_FAILS)
        nf = MAX_FAILS;
    /* Times up to a few tree depths of LogGP latencies. */
    uint64_t span_ns = (uint64_t)(10 + 8 * lg) * 1000;
    for (int i = 0; i < nf; i++) {
        simrun_fail_t *fl = &s->fails[s->nfails++];
        unsigned kind = (unsigned)(next(&x) % 3);
        fl->rank = (int)(next(&x) % (uint64_t)s->n);
        fl->kind = kind == 0   ? SIMRUN_FAIL_BEFORE_OP
                   : kind == 1 ? SIMRUN_FAIL_BEFORE_SEND
                               : SIMRUN_FAIL_AT_TIME;
        fl->k = 1 + (unsigned)(next(&x) % 8);
        fl->time = next(&x) % span_ns;
        /* One failure in eight takes its whole node (needs nodes). */
        fl->whole_node = s->nodes > 0 && next(&x) % 8 == 0;
    }
    /* One job of at most 64 ranks on nodes in four is also partitioned:
     * a random proper subset of its nodes on one side, at a random time,
     * under the majority gate (the agreement's too: agree_gate.c). */
    if (s->nodes > 0 && s->n <= 64 && next(&x) % 4 == 0) {
        uint64_t nodes_a = 1 + next(&x) % ((1ull << s->nodes) - 2);
        s->cut_ns = next(&x) % span_ns;
        s->side = nodes_a; /* node mask: turned into ranks in run() */
    }
}

static void describe(const scenario_t *s, const simrun_result_t *r,
                     const char *what)
{
    printf("VIOLATION %s: scenario %llu: --op %s --alg %s --ranks %d --f %d "
           "--root %d --nodes %d --placement interleave",
           what, (unsigned long long)s->seed, cases[s->c][0], cases[s->c][1],
           s->n, s->f, s->root, s->nodes);
    for (size_t i = 0; i < s->nfails; i++) {
        const simrun_fail_t *fl = &s->fails[i];
        if (fl->kind == SIMRUN_FAIL_BEFORE_OP)
            printf(" fail-start %d", fl->rank);
        else if (fl->kind == SIMRUN_FAIL_BEFORE_SEND)
            printf(" fail-at %d@%u", fl->rank, fl->k);
        else
            printf(" kill-at %d@%.3fus", fl->rank, (double)fl->time / 1e3);
        if (fl->whole_node)
            printf("(node)");
    }
    if (s->side != 0)
        printf(" partition nodes %#llx @%.3fus", (unsigned long long)s->side,
               (double)s->cut_ns / 1e3);
    printf(" | live %d completed %d failed %d unfinished %d wrong %d "
           "inconsistent %d\n",
           r->live, r->completed, r->failed_ops, r->unfinished, r->data_errors,
           r->inconsistent);
}

/* Runs scenario s; returns 0, or 1 for a violation (described). */
static int run(const scenario_t *s, tally_t *t)
{
    const coll_op_ops_t *op = coll_op_find(cases[s->c][0], cases[s->c][1]);
    simrun_params_t p;
    simnodes_t nodes = {0};
    simrun_result_t r;
    int n = s->n;
    if (op == NULL) {
        fprintf(stderr, "ucft-campaign: no algorithm %s/%s\n", cases[s->c][0],
                cases[s->c][1]);
        exit(2);
    }
    simrun_params_default(&p, op, n);
    p.sim.seed = s->seed;
    p.root = s->root;
    p.args.f = s->f;
    p.fails = s->fails;
    p.nfails = s->nfails;
    p.release_at_done = 1;
    int agree = strcmp(op->op, "agree") == 0;
    int part = s->side != 0;
    if (strcmp(op->op, "barrier") == 0) {
        p.len = 0; /* no data: nothing to compare */
    } else if (agree) {
        p.len = coll_agree_len(((size_t)n + 31) / 32);
    } else if (strcmp(op->op, "allgather") == 0 ||
               strcmp(op->op, "reduce_scatter") == 0) {
        p.args.count = (size_t)n; /* one byte per block */
        p.len = p.args.count + (op->op[0] == 'a' ? (size_t)n : 0);
    }
    if (s->nodes > 0) {
        if (simnodes_init(&nodes, n, s->nodes, SIMNODES_BY_NODE) != UCFT_OK ||
            simnodes_place(&nodes, PLACEMENT_INTERLEAVE) != UCFT_OK) {
            fprintf(stderr, "ucft-campaign: nodes: no memory\n");
            exit(1);
        }
        p.sim.domain = nodes.node_of;
        p.args.map = &nodes.map;
        for (int r = 0; part && r < n; r++)
            p.partition_side |= (s->side >> nodes.node_of[r] & 1) << r;
        p.partition_at_ns = s->cut_ns;
        p.quorum_gate = part && !s->no_gate;
    }
    uint8_t *ok = malloc((size_t)n);
    if (ok == NULL || simrun_run(&p, &r, ok) != UCFT_OK) {
        fprintf(stderr, "ucft-campaign: scenario %llu did not run\n",
                (unsigned long long)s->seed);
        exit(1);
    }
    int dead = n - r.live;
    int rooted = strcmp(op->op, "bcast") == 0 || strcmp(op->op, "reduce") == 0;
    /* A rooted operation owes nothing to anyone once its root is in the
     * failure plan (itself, or its node). */
    int root_dead = 0;
    for (size_t i = 0; rooted && i < s->nfails; i++) {
        const simrun_fail_t *fl = &s->fails[i];
        root_dead |= fl->rank == s->root ||
                     (fl->whole_node &&
                      nodes.node_of[fl->rank] == nodes.node_of[s->root]);
    }
    t->runs++;
    t->partitioned += part;
    t->dead_disagree += r.dead_disagree > 0;
    t->dead += dead;
    t->over_f += dead > s->f;
    for (size_t i = 0; i < s->nfails; i++)
        if (s->fails[i].whole_node) {
            t->host_loss++;
            break;
        }
    const char *bad = NULL;
    if (r.unfinished > 0 || r.bounded)
        bad = "hang", t->hangs++;
    else if (r.data_errors > 0)
        bad = "wrong output";
    else if ((dead <= s->f || agree) && !root_dead && !part &&
             (r.completed != r.live || r.failed_ops > 0))
        bad = "a live rank did not complete with success";
    else if ((dead <= s->f || agree || part) && r.inconsistent > 0)
        bad = "outputs differ";
    if (bad != NULL) {
        t->violations++;
        describe(s, &r, bad);
    }
    free(ok);
    simnodes_cleanup(&nodes);
    return bad != NULL;
}

static int usage(FILE *f, int rc)
{
    fprintf(f, "Usage: ucft-campaign [--scenarios K] [--seed S] "
               "[--max-ranks N] [--alg OP/ALG] [--no-gate] [--quiet]\n"
               "Random failures (ranks, whole nodes) at random points of "
               "every corrected\ncollective and the agreement on the "
               "simulator; exit 1 on any violation. --alg: every scenario "
               "on that row's\nalgorithm, the rest drawn as usual (replays "
               "a scenario found with another\ntable). --no-gate: the "
               "partitioned jobs without the majority gate (the\nsplit "
               "brains it prevents show as violations).\n");
    return rc;
}

/* The row of "OP/ALG", or -1. */
static int find_case(const char *spec)
{
    for (size_t i = 0; i < NCASES; i++) {
        size_t lo = strlen(cases[i][0]);
        if (strncmp(spec, cases[i][0], lo) == 0 && spec[lo] == '/' &&
            strcmp(spec + lo + 1, cases[i][1]) == 0)
            return (int)i;
    }
    return -1;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"scenarios", 1, NULL, 'k'}, {"seed", 1, NULL, 's'},
        {"max-ranks", 1, NULL, 'n'}, {"quiet", 0, NULL, 'q'},
        {"alg", 1, NULL, 'a'},       {"help", 0, NULL, 'h'},
        {"no-gate", 0, NULL, 'g'},   {NULL, 0, NULL, 0}};
    long k = 1000, seed = 1, max_ranks = 4096;
    int quiet = 0, c, only = -1, no_gate = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        long *dst = c == 'k' ? &k : c == 's' ? &seed : &max_ranks;
        long hi = c == 'n' ? 65536 : 1000000000L;
        if (c == 'q') {
            quiet = 1;
        } else if (c == 'g') {
            no_gate = 1;
        } else if (c == 'a') {
            only = find_case(optarg);
            if (only < 0) {
                fprintf(stderr,
                        "ucft-campaign: bad value '%s' for --alg (OP/ALG, "
                        "one of the table's rows)\n",
                        optarg);
                return 2;
            }
        } else if (c == 'h') {
            return usage(stdout, 0);
        } else if (c == 'k' || c == 's' || c == 'n') {
            if (parse_long(optarg, c == 'n' ? 2 : c == 's' ? 0 : 1, hi, dst)) {
                fprintf(stderr, "ucft-campaign: bad value '%s' for --%s\n",
                        optarg,
                        lo[c == 'k'   ? 0
                           : c == 's' ? 1
                                      : 2]
                            .name);
                return 2;
            }
        } else {
            return usage(stderr, 2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ucft-campaign: unexpected argument '%s'\n",
                argv[optind]);
        return 2;
    }
    tally_t t[NCASES] = {{0}};
    long violations = 0;
    for (long i = 0; i < k; i++) {
        scenario_t s;
        draw(&s, (uint64_t)seed + (uint64_t)i, (int)max_ranks);
        if (only >= 0)
            s.c = only; /* the rest of the scenario as drawn */
        s.no_gate = no_gate;
        violations += run(&s, &t[s.c]);
        if (!quiet && (i + 1) % 10000 == 0)
            fprintf(stderr, "ucft-campaign: %ld scenarios, %ld violations\n",
                    i + 1, violations);
    }
    printf("%-15s %-24s %8s %8s %9s %8s %10s %6s %14s %12s\n", "op", "alg",
           "runs", "over f", "host loss", "dead", "violations", "hangs",
           "dead differed", "partitioned");
    tally_t all = {0};
    for (size_t i = 0; i < NCASES; i++) {
        printf("%-15s %-24s %8ld %8ld %9ld %8ld %10ld %6ld %14ld %12ld\n",
               cases[i][0], cases[i][1], t[i].runs, t[i].over_f, t[i].host_loss,
               t[i].dead, t[i].violations, t[i].hangs, t[i].dead_disagree,
               t[i].partitioned);
        all.runs += t[i].runs, all.over_f += t[i].over_f;
        all.host_loss += t[i].host_loss, all.dead += t[i].dead;
        all.violations += t[i].violations, all.hangs += t[i].hangs;
        all.dead_disagree += t[i].dead_disagree;
        all.partitioned += t[i].partitioned;
    }
    printf("%-15s %-24s %8ld %8ld %9ld %8ld %10ld %6ld %14ld %12ld\n", "all",
           "", all.runs, all.over_f, all.host_loss, all.dead, all.violations,
           all.hangs, all.dead_disagree, all.partitioned);
    return violations > 0;
}
