/*
 * ucft-sim: runs one collective algorithm on the simulated transport at up
 * to millions of ranks and reports simulated latency, message and event
 * counts (and how many cross pretend nodes), wall time and peak memory;
 * optionally sweeps the rank count and writes CSV. See docs/sim.md.
 */
#include "ucft_sim.h"
#include "collectives/agree.h"
#include "collectives/tree_ft.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BUF_BYTES (4ull << 30)

/* Checks the options that depend on N; returns 0 or prints and returns 2. */
static int check_n(const opts_t *o, const coll_op_ops_t *op, int n)
{
    char msg[64];
    snprintf(msg, sizeof(msg), "%d", n);
    if (o->root >= n)
        return ucft_sim_bad("--root is not below the rank count %s", msg);
    if (o->fail > n - 1)
        return ucft_sim_bad("--fail: more failures than non-root ranks (%s)",
                            msg);
    for (size_t i = 0; i < o->nfails; i++)
        if (o->fails[i].rank >= n)
            return ucft_sim_bad("a failure names a rank not below %s", msg);
    if (o->nodes > n)
        return ucft_sim_bad("--nodes is above the rank count %s", msg);
    for (size_t i = 0; i < o->nkill_nodes; i++)
        if (o->kill_nodes[i].node >= o->nodes)
            return ucft_sim_bad("--kill-node names a node not below --nodes "
                                "(N = %s)",
                                msg);
    if (o->failed.kind != SIM_FAILED_NONE) {
        uint8_t *dead = calloc((size_t)n, 1);
        int k = dead != NULL
                    ? sim_failed_set(&o->failed, n, o->root, o->seed, dead)
                    : -1;
        free(dead);
        if (k < 0)
            return ucft_sim_bad("--failed does not fit %s ranks (a rank not "
                                "below it, the root, or all of them)",
                                msg);
    }
    if (op == &coll_agree_era_ops &&
        (o->size <= sizeof(coll_agree_hdr_t) ||
         (o->size - sizeof(coll_agree_hdr_t)) % sizeof(uint32_t) != 0))
        return ucft_sim_bad("--size does not fit the agreement (N = %s): 8 "
                            "bytes of header plus 4-byte value words, e.g. "
                            "--size 12",
                            msg);
    if ((uint64_t)o->size * op->buf_mult * (uint64_t)n > MAX_BUF_BYTES)
        return ucft_sim_bad(
            "--size times ranks needs more than 4 GiB of buffers "
            "(N = %s)",
            msg);
    return 0;
}

/* --failed at one N: the failed set, the survivors, the world size m the
 * operation runs on (n, or n - k for rebalance and fresh on algorithms
 * without an explicit tree), and what that world needs. */
typedef struct sim_failed_run {
    int n, k, m;
    uint8_t *dead;    /* [n] */
    int *known;       /* the failed ranks, for simrun's known_dead */
    int *live;        /* [n - k]: dense index -> rank */
    coll_tree_t tree; /* the algorithms that take one: reroute/lookup */
    int has_tree;
    int dense_tree; /* the tree projected onto the survivors' world */
    /* The corrected reduce family (takes_frame): the survivors' world with
     * the n ranks' placement, holes for the failed ones (args->frame, as
     * comm/repair_tree.c's cm_repair_frame). */
    int framed;
    int *frame_rank, *frame_pos;
    coll_map_t frame;
    /* dense_tree: the survivors in their original placement order (the
     * corrected broadcast's ring under reroute/lookup, as
     * cm_repair_frame's order). */
    int *order_rank, *order_pos;
    coll_map_t order;
    uint32_t *node_of; /* [m]: the survivors' nodes */
    placement_locus_t *loci;
    int *rank_at, *pos_of;
    coll_map_t map;
    simrun_fail_t *fails;
} sim_failed_run_t;

static void failed_cleanup(sim_failed_run_t *fr)
{
    free(fr->dead);
    free(fr->known);
    free(fr->live);
    free(fr->node_of);
    free(fr->loci);
    free(fr->rank_at);
    free(fr->pos_of);
    free(fr->fails);
    free(fr->frame_rank);
    free(fr->frame_pos);
    free(fr->order_rank);
    free(fr->order_pos);
    if (fr->has_tree)
        coll_tree_free(&fr->tree);
}

static int tree_alg(const coll_op_ops_t *op)
{
    /* The binomial broadcast, reduce and barrier; the corrected broadcasts
     * with the checked correction. */
    return op->takes_tree;
}

/* A corrected algorithm runs on the survivors only, as in the runtime's
 * epoch (its correction ring must not hold the failed ranks); the
 * fault-aware binomial baselines run on the whole world, the failed ranks
 * dead and never heard of (cheaper at 2^16 ranks, the same messages). */
static int dense_tree_alg(const coll_op_ops_t *op)
{
    return op->takes_tree && strcmp(op->alg, "binomial") != 0;
}

static ucft_status_t failed_prepare(const opts_t *o, const coll_op_ops_t *op,
                                    int n, sim_failed_run_t *fr)
{
    fr->m = fr->n = n;
    if (o->failed.kind == SIM_FAILED_NONE)
        return UCFT_OK;
    fr->dead = calloc((size_t)n, 1);
    fr->known = malloc((size_t)n * sizeof(int));
    fr->live = malloc((size_t)n * sizeof(int));
    if (fr->dead == NULL || fr->known == NULL || fr->live == NULL)
        return UCFT_ERR_NO_MEMORY;
    fr->k = sim_failed_set(&o->failed, n, o->root, o->seed, fr->dead);
    if (fr->k < 0) {
        fprintf(stderr,
                "ucft-sim: --failed does not fit %d ranks (a rank "
                "not below it, the root, or all of them)\n",
                n);
        return UCFT_ERR_INVALID_PARAM;
    }
    int nk = 0, nl = 0;
    for (int r = 0; r < n; r++) {
        if (fr->dead[r])
            fr->known[nk++] = r;
        else
            fr->live[nl++] = r;
    }
    int d = o->failed.design;
    /* Reroute and lookup: the binomial algorithms on the original tree
     * around the failed ranks (built in failed_apply, over the placement
     * positions, as the runtime's comm/repair_tree.c does). Rebalance:
     * every algorithm on the survivors' own world, placement recomputed. */
    if (tree_alg(op) && (d == SIM_TREE_REROUTE || d == SIM_TREE_LOOKUP)) {
        fr->has_tree = 1;
        fr->dense_tree = dense_tree_alg(op);
        if (fr->dense_tree)
            fr->m = n - fr->k;
    } else if (op->takes_frame &&
               (d == SIM_TREE_REROUTE || d == SIM_TREE_LOOKUP)) {
        fr->framed = 1;
        fr->m = n - fr->k;
    } else if (d == SIM_TREE_REBALANCE || d == SIM_TREE_FRESH) {
        fr->m = n - fr->k;
    }
    return UCFT_OK;
}

/* The original tree over the n ranks' placement, rerouted around the
 * failed ranks and projected onto the survivors' dense indices (as
 * comm/repair_tree.c does for an epoch). */
static ucft_status_t dense_tree(const opts_t *o, sim_failed_run_t *fr,
                                const coll_map_t *orig, simrun_params_t *p)
{
    coll_tree_t full = {0};
    int *dense = malloc((size_t)fr->n * sizeof(int));
    int st = -1;
    if (dense != NULL) {
        for (int r = 0, i = 0; r < fr->n; r++)
            dense[r] = fr->dead[r] ? -1 : i++;
        if (coll_tree_build_placed(&full, fr->n, fr->dead, o->root,
                                   COLL_TREE_REROUTE, orig ? orig->rank : NULL,
                                   orig ? orig->pos : NULL) == 0)
            st = coll_tree_project(&full, fr->m, fr->live, dense, &fr->tree);
    }
    coll_tree_free(&full);
    free(dense);
    if (st != 0)
        return UCFT_ERR_NO_MEMORY;
    p->args.tree = &fr->tree;
    /* The original order of the survivors: position order, holes out. */
    fr->order_rank = malloc((size_t)fr->m * sizeof(int));
    fr->order_pos = malloc((size_t)fr->m * sizeof(int));
    int *at = malloc((size_t)fr->n * sizeof(int));
    if (fr->order_rank == NULL || fr->order_pos == NULL || at == NULL) {
        free(at);
        return UCFT_ERR_NO_MEMORY;
    }
    for (int pos = 0; pos < fr->n; pos++)
        at[pos] = -1;
    for (int i = 0; i < fr->m; i++)
        at[orig ? orig->pos[fr->live[i]] : fr->live[i]] = i;
    for (int pos = 0, j = 0; pos < fr->n; pos++)
        if (at[pos] >= 0) {
            fr->order_rank[j] = at[pos];
            fr->order_pos[at[pos]] = j++;
        }
    free(at);
    fr->order =
        (coll_map_t){.n = fr->m, .rank = fr->order_rank, .pos = fr->order_pos};
    return UCFT_OK;
}

/* Sets the run up on its world (after the nodes of the n ranks are
 * known, when --nodes is given). */
static ucft_status_t failed_apply(const opts_t *o, sim_failed_run_t *fr,
                                  const simnodes_t *nodes, simrun_params_t *p)
{
    int m = fr->m;
    const coll_map_t *orig = p->args.map; /* the n ranks' placement */
    if (fr->has_tree && !fr->dense_tree) {
        if (coll_tree_build_placed(&fr->tree, fr->n, fr->dead, o->root,
                                   COLL_TREE_REROUTE, orig ? orig->rank : NULL,
                                   orig ? orig->pos : NULL) != 0)
            return UCFT_ERR_NO_MEMORY;
        /* The tree leaves the failed ranks out: they only must not run,
         * and nobody needs to hear of them (at 2^16 ranks, k x n
         * notifications would cost more than the operation). */
        p->args.tree = &fr->tree;
        fr->fails = malloc(((size_t)fr->k + 1) * sizeof(*fr->fails));
        if (fr->fails == NULL)
            return UCFT_ERR_NO_MEMORY;
        for (int i = 0; i < fr->k; i++)
            fr->fails[i] = (simrun_fail_t){.kind = SIMRUN_FAIL_BEFORE_OP,
                                           .rank = fr->known[i]};
        p->fails = fr->fails;
        p->nfails = (size_t)fr->k;
        p->sim.notify = SIM_NOTIFY_NONE;
        return UCFT_OK;
    }
    if (m == fr->n) { /* the full world: the failed ranks known dead */
        p->known_dead = fr->known;
        p->nknown_dead = (size_t)fr->k;
        return UCFT_OK;
    }
    /* The survivors, densely: the root's index, their nodes, their
     * placement over those nodes. */
    for (int i = 0; i < m; i++)
        if (fr->live[i] == o->root)
            p->root = i;
    if (fr->dense_tree) {
        ucft_status_t st = dense_tree(o, fr, orig, p);
        if (st != UCFT_OK)
            return st;
    }
    if (fr->framed) {
        fr->frame_rank = malloc((size_t)fr->n * sizeof(int));
        fr->frame_pos = malloc((size_t)m * sizeof(int));
        if (fr->frame_rank == NULL || fr->frame_pos == NULL)
            return UCFT_ERR_NO_MEMORY;
        for (int i = 0; i < m; i++)
            fr->frame_pos[i] = orig ? orig->pos[fr->live[i]] : fr->live[i];
        for (int pos = 0; pos < fr->n; pos++)
            fr->frame_rank[pos] = -1;
        for (int i = 0; i < m; i++)
            fr->frame_rank[fr->frame_pos[i]] = i;
        fr->frame = (coll_map_t){
            .n = fr->n, .rank = fr->frame_rank, .pos = fr->frame_pos};
        p->args.frame = &fr->frame;
    }
    if (o->nodes == 0) {
        if (fr->dense_tree)
            p->args.map = &fr->order;
        return UCFT_OK;
    }
    fr->node_of = malloc((size_t)m * sizeof(uint32_t));
    fr->loci = malloc((size_t)m * sizeof(*fr->loci));
    fr->rank_at = malloc((size_t)m * sizeof(int));
    fr->pos_of = malloc((size_t)m * sizeof(int));
    if (!fr->node_of || !fr->loci || !fr->rank_at || !fr->pos_of)
        return UCFT_ERR_NO_MEMORY;
    for (int i = 0; i < m; i++) {
        fr->node_of[i] = nodes->node_of[fr->live[i]];
        fr->loci[i] = (placement_locus_t){(int32_t)fr->node_of[i], -1, -1, -1};
    }
    p->sim.domain = fr->node_of;
    if (o->placement_set) {
        ucft_status_t st = placement_compute(o->placement, fr->loci, m,
                                             fr->rank_at, fr->pos_of);
        if (st != UCFT_OK)
            return st;
        fr->map = (coll_map_t){.n = m, .rank = fr->rank_at, .pos = fr->pos_of};
        p->args.map = &fr->map;
    }
    if (fr->dense_tree)
        p->args.map = &fr->order; /* the rerouted ring */
    return UCFT_OK;
}

static ucft_status_t run_one(const opts_t *o, const coll_op_ops_t *op, int n,
                             simrun_result_t *res)
{
    simrun_params_t p;
    simnodes_t nodes = {0};
    simrun_fail_t *fails = NULL;
    ucft_status_t st;
    sim_failed_run_t fr = {0};

    /* --failed: the failed set at this N, and the world it runs on. */
    st = failed_prepare(o, op, n, &fr);
    if (st != UCFT_OK)
        return st;
    simrun_params_default(&p, op, fr.m);
    p.sim.loggp = o->loggp;
    p.sim.seed = o->seed;
    p.sim.notify = o->notify ? SIM_NOTIFY_DELAY : SIM_NOTIFY_NONE;
    p.sim.detect_delay_ns = o->detect_delay_ns;
    p.start_spread_ns = o->start_spread_ns;
    p.len = o->size;
    if (strcmp(op->op, "allgather") == 0 ||
        strcmp(op->op, "reduce_scatter") == 0) {
        /* --size is the whole vector: n blocks of bytes (rounded down, at
         * least one byte each); allgather adds its n presence bytes. */
        size_t blk = o->size / (size_t)n ? o->size / (size_t)n : 1;
        p.args.count = blk * (size_t)n;
        p.len = p.args.count + (op->op[0] == 'a' ? (size_t)n : 0);
    }
    p.root = o->root;
    p.fail_random = o->fail;
    p.fails = o->fails;
    p.nfails = o->nfails;
    p.max_events = o->max_events;
    p.args.f = o->f;
    p.checksum = o->gossip.checksum;
    if (sim_gossip_active(&o->gossip, op)) {
        /* The per-run statistics live in the options (one run at a time). */
        sim_gossip_t *sg = (sim_gossip_t *)&o->gossip;
        st = sim_gossip_prepare(sg, &p, op, n, o->size, o->seed);
        if (st != UCFT_OK)
            goto out;
    } else if (o->gossip.flip_set) {
        /* Flips on any collective: its own oracle judges the output. */
        p.flip = &o->gossip.flip;
        p.flip_rank = o->gossip.flip_rank;
    }
    if (o->nodes > 0) {
        st = simnodes_init(&nodes, n, o->nodes, o->map_by);
        if (st == UCFT_OK && o->placement_set)
            st = simnodes_place(&nodes, o->placement);
        if (st != UCFT_OK)
            goto out;
        p.sim.domain = nodes.node_of;
        if (o->placement_set)
            p.args.map = &nodes.map;
        /* A killed node: its first rank, taking the node with it. */
        fails = malloc((o->nfails + o->nkill_nodes + 1) * sizeof(*fails));
        if (fails == NULL) {
            st = UCFT_ERR_NO_MEMORY;
            goto out;
        }
        if (o->nfails > 0)
            memcpy(fails, o->fails, o->nfails * sizeof(*fails));
        for (size_t i = 0; i < o->nkill_nodes; i++) {
            const ucft_sim_kill_node_t *k = &o->kill_nodes[i];
            fails[o->nfails + i] =
                (simrun_fail_t){.kind = k->has_time ? SIMRUN_FAIL_AT_TIME
                                                    : SIMRUN_FAIL_BEFORE_OP,
                                .rank = simnodes_first_rank(&nodes, k->node),
                                .time = k->time,
                                .whole_node = 1};
        }
        p.fails = fails;
        p.nfails = o->nfails + o->nkill_nodes;
    }
    if (fr.k > 0 || o->failed.kind != SIM_FAILED_NONE) {
        st = failed_apply(o, &fr, &nodes, &p);
        if (st != UCFT_OK)
            goto out;
    }
    st = simrun_run(&p, res, NULL);
    res->ranks = n; /* the communicator's size, also when it runs on m */
out:
    free(fails);
    simnodes_cleanup(&nodes);
    failed_cleanup(&fr);
    return st;
}

/* Exit status of a run that could not be made: 2 when the algorithm
 * rejected the parameters (e.g. --f above what it supports), else 1. */
static int run_error(ucft_status_t st)
{
    if (st != UCFT_ERR_INVALID_PARAM)
        return 1;
    fprintf(stderr, "ucft-sim: the algorithm rejected the parameters "
                    "(--f above its maximum?)\n");
    return 2;
}

static double cross_frac(const simrun_result_t *r)
{
    return r->stats.messages
               ? (double)r->stats.cross_domain / (double)r->stats.messages
               : 0.0;
}

static void print_text(const opts_t *o, const coll_op_ops_t *op,
                       const simrun_result_t *r)
{
    printf("%s/%s on %d ranks, %zu bytes, seed %" PRIu64 "\n", op->op, op->alg,
           r->ranks, o->size, o->seed);
    printf("  sim latency   %.3f us\n", (double)r->sim_latency_ns / 1e3);
    if (r->ready_ns != r->sim_latency_ns)
        printf("  output final  %.3f us (the last rank's; it completed "
               "early, its corrections ran on)\n",
               (double)r->ready_ns / 1e3);
    printf("  messages      %" PRIu64 " (%" PRIu64 " bytes, %" PRIu64
           " dropped)\n",
           r->stats.messages, r->stats.bytes, r->stats.dropped);
    if (o->nodes > 0)
        printf("  cross-node    %" PRIu64 " of %" PRIu64
               " messages (%.4f) on %d nodes, %s\n",
               r->stats.cross_domain, r->stats.messages, cross_frac(r),
               o->nodes,
               o->placement_set ? placement_policy_name(o->placement)
                                : "no placement");
    printf("  events        %" PRIu64 " (%.3g events/s)\n", r->stats.events,
           r->wall_s > 0 ? (double)r->stats.events / r->wall_s : 0.0);
    printf("  delivered     %d of %d live ranks (%d dead, %d failed)%s\n",
           r->completed, r->live, r->ranks - r->live, r->failed_ops,
           r->bounded ? " [stopped by --max-events]" : "");
    if (o->start_spread_ns > 0)
        printf("  starts        spread over %.3f us; %d ranks started "
               "knowing of a death\n",
               (double)o->start_spread_ns / 1e3, r->started_knowing);
    if (r->data_errors)
        printf("  DATA ERRORS   %d ranks\n", r->data_errors);
    if (sim_gossip_active(&o->gossip, op))
        sim_gossip_print_text(&o->gossip, r);
    else if (o->gossip.flip_set)
        printf("  bit flips     %u messages corrupted\n", r->flips);
    if (o->gossip.checksum && !sim_gossip_active(&o->gossip, op))
        printf("  checksums     %" PRIu64 " corrupted messages caught\n",
               r->csum_dropped);
    printf("  wall          %.3f s\n", r->wall_s);
    printf("  peak RSS      %.1f MB\n", simrun_peak_rss_mb());
    printf("  trace hash    0x%016" PRIx64 "\n", r->trace_hash);
}

static void print_json(const opts_t *o, const coll_op_ops_t *op,
                       const simrun_result_t *r)
{
    printf("{\"op\":\"%s\",\"alg\":\"%s\",\"ranks\":%d,\"size\":%zu,"
           "\"seed\":%" PRIu64 ",\"dead\":%d,\"sim_latency_us\":%.3f,"
           "\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"dropped\":%" PRIu64
           ",\"events\":%" PRIu64
           ",\"delivered\":%d,\"live\":%d,\"failed_ops\":%d,"
           "\"data_errors\":%d,\"bounded\":%s,\"wall_s\":%.3f,"
           "\"events_per_s\":%.0f,\"peak_rss_mb\":%.1f,"
           "\"trace_hash\":\"0x%016" PRIx64 "\",\"f\":%d,\"nodes\":%d,"
           "\"placement\":\"%s\",\"cross_node\":%" PRIu64
           ",\"cross_node_frac\":%.6f,\"sim_ready_us\":%.3f,"
           "\"start_spread_us\":%.3f,\"started_knowing\":%d",
           op->op, op->alg, r->ranks, o->size, o->seed, r->ranks - r->live,
           (double)r->sim_latency_ns / 1e3, r->stats.messages, r->stats.bytes,
           r->stats.dropped, r->stats.events, r->completed, r->live,
           r->failed_ops, r->data_errors, r->bounded ? "true" : "false",
           r->wall_s, r->wall_s > 0 ? (double)r->stats.events / r->wall_s : 0.0,
           simrun_peak_rss_mb(), r->trace_hash, o->f, o->nodes,
           o->placement_set ? placement_policy_name(o->placement) : "none",
           r->stats.cross_domain, cross_frac(r), (double)r->ready_ns / 1e3,
           (double)o->start_spread_ns / 1e3, r->started_knowing);
    if (sim_gossip_active(&o->gossip, op))
        sim_gossip_print_json_fields(&o->gossip, r);
    printf("}\n");
}

static int sweep(const opts_t *o, const coll_op_ops_t *op)
{
    FILE *f = stdout;
    int rc = 0;

    for (size_t i = 0; i < o->nsweep; i++)
        if (check_n(o, op, o->sweep[i]))
            return 2;
    if (o->csv != NULL && (f = fopen(o->csv, "w")) == NULL) {
        fprintf(stderr, "ucft-sim: cannot write '%s': %s\n", o->csv,
                strerror(errno));
        return 1;
    }
    fprintf(f, "op,alg,ranks,size,seed,dead,sim_latency_us,messages,bytes,"
               "events,delivered,live,wall_s,events_per_s,peak_rss_mb,"
               "trace_hash,nodes,cross_node,cross_node_frac,sim_ready_us\n");
    for (size_t i = 0; i < o->nsweep; i++) {
        simrun_result_t r;
        ucft_status_t st = run_one(o, op, o->sweep[i], &r);
        if (st != UCFT_OK) {
            fprintf(stderr, "ucft-sim: N=%d: %s\n", o->sweep[i],
                    ucft_status_string(st));
            rc = run_error(st);
            break;
        }
        fprintf(f,
                "%s,%s,%d,%zu,%" PRIu64 ",%d,%.3f,%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%d,%d,%.3f,%.0f,%.1f,0x%016" PRIx64 ",%d,%" PRIu64
                ",%.6f,%.3f\n",
                op->op, op->alg, r.ranks, o->size, o->seed, r.ranks - r.live,
                (double)r.sim_latency_ns / 1e3, r.stats.messages, r.stats.bytes,
                r.stats.events, r.completed, r.live, r.wall_s,
                r.wall_s > 0 ? (double)r.stats.events / r.wall_s : 0.0,
                simrun_peak_rss_mb(), r.trace_hash, o->nodes,
                r.stats.cross_domain, cross_frac(&r), (double)r.ready_ns / 1e3);
        fflush(f);
        if (r.data_errors)
            rc = 1;
    }
    if (f != stdout)
        fclose(f);
    return rc;
}

/* --runs K: K runs from seeds seed .. seed + K - 1, one CSV line each. */
static int runs(const opts_t *o0, const coll_op_ops_t *op)
{
    opts_t o = *o0;
    int rc = 0;

    sim_gossip_csv_header(stdout);
    for (unsigned i = 0; i < o0->gossip.runs; i++) {
        simrun_result_t r;
        o.seed = o0->seed + i;
        ucft_status_t st = run_one(&o, op, o.ranks, &r);
        if (st != UCFT_OK) {
            fprintf(stderr, "ucft-sim: %s\n", ucft_status_string(st));
            rc = run_error(st);
            break;
        }
        if (sim_gossip_active(&o.gossip, op))
            sim_gossip_csv_line(stdout, &o.gossip, o.seed, &r);
        fflush(stdout);
    }
    sim_gossip_done(&o.gossip);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o = {.seed = 1,
                .size = 8,
                .notify = 1,
                .detect_delay_ns = SIM_DEFAULT_DETECT_DELAY_NS,
                .loggp = {SIM_LOGGP_DEFAULT_L_NS, SIM_LOGGP_DEFAULT_O_NS,
                          SIM_LOGGP_DEFAULT_G_NS, SIM_LOGGP_DEFAULT_GB_PS}};
    int rc;
    sim_gossip_default(&o.gossip);
    o.failed.design = SIM_TREE_REBALANCE;
    rc = ucft_sim_parse(&o, argc, argv);
    const coll_op_ops_t *op;
    simrun_result_t r;

    if (rc >= 0)
        goto out;
    op = coll_op_find(o.op, o.alg);
    if (o.nsweep > 0) {
        rc = sweep(&o, op);
        goto out;
    }
    if ((rc = check_n(&o, op, o.ranks)) != 0)
        goto out;
    if (o.gossip.runs > 0) {
        rc = runs(&o, op);
        goto out;
    }
    ucft_status_t st = run_one(&o, op, o.ranks, &r);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft-sim: %s\n", ucft_status_string(st));
        rc = run_error(st);
        goto out;
    }
    if (o.json)
        print_json(&o, op, &r);
    else
        print_text(&o, op, &r);
    rc = r.data_errors ? 1 : 0;
out:
    sim_gossip_done(&o.gossip);
    free(o.fails);
    free(o.sweep);
    free(o.kill_nodes);
    free(o.failed.list);
    return rc;
}
