/* ucft-sim's approximate-allreduce and bit-flip options
 * (ucft_sim_gossip.h). */
#include "ucft_sim_gossip.h"

#include "simrun/oracle.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void sim_gossip_default(sim_gossip_t *sg)
{
    memset(sg, 0, sizeof(*sg));
    sg->g.eps = 1e-8;
    sg->dtype = -1;
    sg->flip.bit = -1;
    sg->flip_rank = -1;
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "ucft-sim: %s '%s'\nTry 'ucft-sim --help'.\n", what, arg);
    return 2;
}

static int num(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

int sim_gossip_opt(sim_gossip_t *sg, int c, const char *arg)
{
    double v;
    switch (c) {
    case SIM_GOSSIP_OPT_EPS:
        if (num(arg, 1e-300, 0.999, &v))
            return bad("--eps: want a number in (0, 1):", arg);
        sg->g.eps = v;
        return 0;
    case SIM_GOSSIP_OPT_TAU:
        if (num(arg, 1e-300, 1e300, &v))
            return bad("--tau: want a positive number:", arg);
        sg->g.tau = v;
        return 0;
    case SIM_GOSSIP_OPT_TOPO:
        if (strcmp(arg, "full") == 0)
            sg->g.topo = GOSSIP_TOPO_FULL;
        else if (strcmp(arg, "ring") == 0)
            sg->g.topo = GOSSIP_TOPO_RING;
        else if (strcmp(arg, "hypercube") == 0)
            sg->g.topo = GOSSIP_TOPO_HYPERCUBE;
        else
            return bad("--topo: want full, ring or hypercube:", arg);
        return 0;
    case SIM_GOSSIP_OPT_ROUNDS:
        if (num(arg, 1, 1000000, &v) || v != (unsigned)v)
            return bad("--rounds: want 1..1000000:", arg);
        sg->g.rounds = (unsigned)v;
        return 0;
    case SIM_GOSSIP_OPT_MEAN:
        sg->g.mean = 1;
        return 0;
    case SIM_GOSSIP_OPT_DTYPE:
        if (strcmp(arg, "float") == 0)
            sg->dtype = COLL_DTYPE_FLOAT;
        else if (strcmp(arg, "double") == 0)
            sg->dtype = COLL_DTYPE_DOUBLE;
        else
            return bad("--dtype: want float or double:", arg);
        return 0;
    case SIM_GOSSIP_OPT_FLIP: {
        unsigned b, r = 0, k = 1;
        char tail;
        int got = sscanf(arg, "%u@%u:%u%c", &b, &r, &k, &tail);
        if (got < 1 || got > 3 || b >= (1u << 20) || k == 0 ||
            (got == 1 && strchr(arg, '@') != NULL) ||
            strspn(arg, "0123456789@:") != strlen(arg))
            return bad("--flip: want B[@R[:K]] (bit, rank, message >= 1):",
                       arg);
        sg->flip_set = 1;
        sg->flip.bit = (int)b;
        sg->flip.msg = k;
        sg->flip_rank = (int)r;
        return 0;
    }
    case SIM_GOSSIP_OPT_FLIP_RATE:
        if (num(arg, 0, 1, &v))
            return bad("--flip-rate: want a probability in [0, 1]:", arg);
        sg->flip_set = 1;
        sg->flip.rate = v;
        return 0;
    case SIM_GOSSIP_OPT_CHECKSUM:
        sg->checksum = 1;
        return 0;
    case SIM_GOSSIP_OPT_RUNS:
        if (num(arg, 1, 1000000, &v) || v != (unsigned)v)
            return bad("--runs: want 1..1000000:", arg);
        sg->runs = (unsigned)v;
        return 0;
    default:
        return 2;
    }
}

int sim_gossip_active(const sim_gossip_t *sg, const coll_op_ops_t *op)
{
    return strcmp(op->op, "allreduce_approx") == 0 ||
           (sg->dtype >= 0 && strcmp(op->op, "allreduce") == 0);
}

static double out_value(const sim_gossip_t *sg, const void *buf, size_t e)
{
    if (sg->args.dtype == COLL_DTYPE_FLOAT) {
        float f;
        memcpy(&f, (const char *)buf + e * sizeof(f), sizeof(f));
        return f;
    }
    double d;
    memcpy(&d, (const char *)buf + e * sizeof(d), sizeof(d));
    return d;
}

/* simrun_params_t.observe: statistics over the live ranks that
 * completed; the error against every rank's inputs (with failures the
 * oracle's check, against the survivors', decides delivered / data
 * errors). */
static void inspect(void *arg, const void *state, const void *buf, int rank,
                    int dead)
{
    sim_gossip_t *sg = arg;
    (void)rank;
    if (dead || sg->op->test(state) != UCFT_OK || buf == NULL)
        return;
    if (strcmp(sg->op->op, "allreduce_approx") == 0) {
        gossip_stats_t st;
        gossip_stats(state, &st);
        if (st.conv_round > sg->conv_max)
            sg->conv_max = st.conv_round;
        sg->rounds = st.rounds;
        sg->detected += st.detected;
        sg->resets += st.resets;
    }
    const double *ref = sg->ref;
    for (size_t e = 0; e < sg->args.count; e++) {
        double d = fabs(out_value(sg, buf, e) - ref[e]) / fabs(ref[e]);
        if (isnan(d) || d > sg->err_max)
            sg->err_max = isnan(d) ? INFINITY : d;
    }
}

ucft_status_t sim_gossip_prepare(sim_gossip_t *sg, simrun_params_t *p,
                                 const coll_op_ops_t *op, int n, size_t size,
                                 uint64_t seed)
{
    int approx = strcmp(op->op, "allreduce_approx") == 0;
    int dtype = sg->dtype >= 0 ? sg->dtype : COLL_DTYPE_DOUBLE;
    size_t esz = dtype == COLL_DTYPE_FLOAT ? sizeof(float) : sizeof(double);

    sim_gossip_done(sg);
    sg->op = op;
    sg->n = n;
    sg->conv_max = sg->rounds = sg->detected = sg->resets = 0;
    sg->err_max = 0;
    if (size == 0 || size % esz != 0) {
        fprintf(stderr, "ucft-sim: --size must be a multiple of the "
                        "datatype's size\n");
        return UCFT_ERR_INVALID_PARAM;
    }
    if (sg->g.mean && !approx) {
        fprintf(stderr, "ucft-sim: --mean is for allreduce_approx\n");
        return UCFT_ERR_INVALID_PARAM;
    }
    if (sg->flip_rank >= n) {
        fprintf(stderr, "ucft-sim: --flip names a rank not below %d\n", n);
        return UCFT_ERR_INVALID_PARAM;
    }
    sg->g.seed = seed;
    sg->flip.seed = seed;
    p->args.count = size / esz;
    p->args.dtype = dtype;
    p->args.redop = COLL_REDOP_SUM;
    p->args.gossip = &sg->g;
    p->args.seq = p->seq;
    sg->args = p->args;
    sg->ref = malloc(p->args.count * sizeof(double));
    if (sg->ref == NULL)
        return UCFT_ERR_NO_MEMORY;
    for (size_t e = 0; e < p->args.count; e++)
        sg->ref[e] = gossip_oracle_exact(&p->args, n, NULL, e);
    sg->g.ref = sg->ref;
    p->oracle = &coll_oracle_gossip;
    p->observe = inspect;
    p->observe_arg = sg;
    if (sg->flip_set) {
        p->flip = &sg->flip;
        p->flip_rank = sg->flip_rank;
    }
    return UCFT_OK;
}

void sim_gossip_done(sim_gossip_t *sg)
{
    free(sg->ref);
    sg->ref = NULL;
}

void sim_gossip_print_text(const sim_gossip_t *sg, const simrun_result_t *r)
{
    if (strcmp(sg->op->op, "allreduce_approx") == 0)
        printf("  iterations    %u to reach eps %.3g at every live rank "
               "(%u rounds run)\n",
               sg->conv_max, sg->g.eps, sg->rounds);
    printf("  max rel error %.3e (against every rank's inputs)\n", sg->err_max);
    if (r->flips || sg->flip_set)
        printf("  bit flips     %u messages corrupted, %u detected by "
               "checksum, %u flows reset\n",
               r->flips, sg->detected, sg->resets);
    if (sg->checksum)
        printf("  checksums     %" PRIu64 " corrupted messages caught\n",
               r->csum_dropped);
}

void sim_gossip_print_json_fields(const sim_gossip_t *sg,
                                  const simrun_result_t *r)
{
    printf(",\"iterations\":%u,\"rounds\":%u,\"max_rel_err\":%.6e,"
           "\"flips\":%u,\"detected\":%u,\"resets\":%u,\"eps\":%.3e,"
           "\"csum_caught\":%" PRIu64,
           sg->conv_max, sg->rounds, sg->err_max, r->flips, sg->detected,
           sg->resets, sg->g.eps, r->csum_dropped);
}

void sim_gossip_csv_header(FILE *f)
{
    fprintf(f, "alg,ranks,seed,eps,tau,rounds,iterations,max_rel_err,"
               "delivered,live,data_errors,flips,detected,resets,"
               "sim_latency_us,messages\n");
}

void sim_gossip_csv_line(FILE *f, const sim_gossip_t *sg, uint64_t seed,
                         const simrun_result_t *r)
{
    fprintf(f,
            "%s,%d,%" PRIu64 ",%.3e,%.3e,%u,%u,%.6e,%d,%d,%d,%u,%u,%u,%.3f,"
            "%" PRIu64 "\n",
            sg->op->alg, r->ranks, seed, sg->g.eps, sg->g.tau, sg->rounds,
            sg->conv_max, sg->err_max, r->completed, r->live, r->data_errors,
            r->flips, sg->detected, sg->resets, (double)r->sim_latency_ns / 1e3,
            r->stats.messages);
}
