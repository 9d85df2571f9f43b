/*
 * ucft-sim's approximate-allreduce and bit-flip options (--eps, --tau,
 * --topo, --rounds, --mean, --dtype, --flip, --flip-rate, --checksum,
 * --runs) and what
 * a run reports for them (ucft_sim_gossip.c, docs/gossip.md).
 */
#ifndef UCFT_TOOLS_UCFT_SIM_GOSSIP_H
#define UCFT_TOOLS_UCFT_SIM_GOSSIP_H

#include "collectives/coll_flip.h"
#include "collectives/gossip.h"
#include "simrun/simrun.h"

#include <getopt.h>
#include <stdio.h>

typedef struct sim_gossip {
    coll_gossip_params_t g;
    int dtype;    /* COLL_DTYPE_FLOAT / DOUBLE, -1: not given */
    int flip_set; /* --flip or --flip-rate given */
    coll_flip_params_t flip;
    int flip_rank; /* -1: every rank (--flip-rate) */
    int checksum;  /* --checksum: payload checksums (coll_csum.h) */
    unsigned runs; /* --runs; 0: one run, the usual report */
    /* per run, filled by the inspect hook */
    const coll_op_ops_t *op;
    double *ref;      /* exact result per element, nobody dead */
    coll_args_t args; /* the instance's (count, dtype, gossip) */
    int n;
    unsigned conv_max, rounds, detected, resets;
    double err_max;
} sim_gossip_t;

enum {
    SIM_GOSSIP_OPT_FIRST = 512,
    SIM_GOSSIP_OPT_EPS = SIM_GOSSIP_OPT_FIRST,
    SIM_GOSSIP_OPT_TAU,
    SIM_GOSSIP_OPT_TOPO,
    SIM_GOSSIP_OPT_ROUNDS,
    SIM_GOSSIP_OPT_MEAN,
    SIM_GOSSIP_OPT_DTYPE,
    SIM_GOSSIP_OPT_FLIP,
    SIM_GOSSIP_OPT_FLIP_RATE,
    SIM_GOSSIP_OPT_RUNS,
    SIM_GOSSIP_OPT_CHECKSUM,
    SIM_GOSSIP_OPT_LAST = SIM_GOSSIP_OPT_CHECKSUM,
};

#define SIM_GOSSIP_LONG_OPTS                                                   \
    {"eps", required_argument, NULL, SIM_GOSSIP_OPT_EPS},                      \
        {"tau", required_argument, NULL, SIM_GOSSIP_OPT_TAU},                  \
        {"topo", required_argument, NULL, SIM_GOSSIP_OPT_TOPO},                \
        {"rounds", required_argument, NULL, SIM_GOSSIP_OPT_ROUNDS},            \
        {"mean", no_argument, NULL, SIM_GOSSIP_OPT_MEAN},                      \
        {"dtype", required_argument, NULL, SIM_GOSSIP_OPT_DTYPE},              \
        {"flip", required_argument, NULL, SIM_GOSSIP_OPT_FLIP},                \
        {"flip-rate", required_argument, NULL, SIM_GOSSIP_OPT_FLIP_RATE},      \
        {"runs", required_argument, NULL, SIM_GOSSIP_OPT_RUNS},                \
        {"checksum", no_argument, NULL, SIM_GOSSIP_OPT_CHECKSUM},

#define SIM_GOSSIP_USAGE                                                       \
    "  --dtype float|double reductions on floating point (allreduce,\n"        \
    "                       allreduce_approx): inputs uniform in [0, 1),\n"    \
    "                       output checked within --eps (relative)\n"          \
    "  --eps E              target accuracy (default 1e-8)\n"                  \
    "  --tau T              checksum threshold (pflc, pfcc, hpflc)\n"          \
    "  --topo T             full|ring|hypercube (gossip; default full)\n"      \
    "  --rounds R           gossip rounds (default: from N, eps, topo)\n"      \
    "  --mean               the mean instead of the sum\n"                     \
    "  --flip B[@R[:K]]     flip bit B of the payload of rank R's K-th\n"      \
    "                       message of the op (default R 0, K 1)\n"            \
    "  --flip-rate P        every message of every rank corrupted with\n"      \
    "                       probability P (one random bit; from --seed)\n"     \
    "  --checksum           payload checksums on every collective message\n"   \
    "                       (UCFT_CHECKSUM=y): a corrupted one is lost\n"      \
    "  --runs K             K runs, seeds --seed .. --seed+K-1: one CSV\n"     \
    "                       line each (iterations, error, flips)\n"

void sim_gossip_default(sim_gossip_t *sg);

/* One of the options above: 0 taken, 2 bad (message printed). */
int sim_gossip_opt(sim_gossip_t *sg, int c, const char *arg);

/* Whether the run needs the floating-point setup. */
int sim_gossip_active(const sim_gossip_t *sg, const coll_op_ops_t *op);

/* Prepares p (op, n ranks, size bytes, seed) for a gossip/float run: args,
 * oracle, flips, inspect hook. UCFT_ERR_INVALID_PARAM with a message
 * printed when the options do not fit. */
ucft_status_t sim_gossip_prepare(sim_gossip_t *sg, simrun_params_t *p,
                                 const coll_op_ops_t *op, int n, size_t size,
                                 uint64_t seed);

/* Frees what prepare made. */
void sim_gossip_done(sim_gossip_t *sg);

void sim_gossip_print_text(const sim_gossip_t *sg, const simrun_result_t *r);
void sim_gossip_print_json_fields(const sim_gossip_t *sg,
                                  const simrun_result_t *r);
void sim_gossip_csv_header(FILE *f);
void sim_gossip_csv_line(FILE *f, const sim_gossip_t *sg, uint64_t seed,
                         const simrun_result_t *r);

#endif
