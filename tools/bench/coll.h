/*
 * ucft-bench coll: internal interface between the latency driver (coll.c),
 * the options (coll_opts.c) and the kill-to-result mode (coll_kill.c).
 *
 * Two modes:
 *   latency (default)   every rank times --iters back-to-back blocking
 *                       operations after --warmup ones and a barrier;
 *                       a surviving rank (coll_gather) prints the max
 *                       over the live ranks of each rank's median (and
 *                       mean) per-operation time and names the dead.
 *   --kill-to-result    every rank loops a corrected allreduce (int64 sum
 *                       of rank+1, f = 1) while ucftrun kills a rank; each
 *                       survivor reports when it first held a correct
 *                       result after the kill (UCFTRUN_INJECT_LOG).
 */
#ifndef UCFT_TOOLS_BENCH_COLL_H
#define UCFT_TOOLS_BENCH_COLL_H

#include "tools/bench/bench.h"
#include "ucft.h"

#include <stdio.h>

/* User tag of the result messages (nothing else uses point-to-point). */
#define COLL_TAG_RESULT 0xc011

typedef enum coll_op {
    COLL_BCAST = 0,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_BARRIER,
    COLL_ALLGATHER,
    COLL_REDUCE_SCATTER,
    COLL_AGREE,            /* ucft_comm_agree of one flag */
    COLL_SHRINK,           /* ucft_comm_shrink, then ucft_comm_free */
    COLL_ALLREDUCE_APPROX, /* ucft_allreduce_approx on doubles */
} coll_op_t;

typedef struct coll_opts {
    coll_op_t op;       /* --op */
    const char *alg;    /* --alg, NULL: the runtime's default */
    size_t size;        /* --size in bytes (int64 elements for reductions) */
    int iters;          /* --iters */
    int warmup;         /* --warmup */
    int f;              /* --f, -1: the runtime's default (UCFT_F) */
    int json;           /* --json */
    int sync;           /* --sync: a barrier after each timed op */
    int kill_to_result; /* --kill-to-result */
    int kill_to_shrink; /* --kill-to-shrink */
    double bound_s;     /* --bound: kill-to-result, longest run */
    int ballast_mb;     /* --ballast: kill-to-result, memory written first */
    double eps;         /* --eps: allreduce_approx (default 1e-8) */
    const char *failed; /* --failed: ranks failed first (coll_failed.c) */
    int tree_repair;    /* --tree-repair: 0 keep, 1 rebalance, 2 fresh,
                           3 reroute, 4 lookup */
    int paired;         /* --paired R: rounds against a shrink (0: none) */
} coll_opts_t;

/* One operation of --op on `w` (a, b: the caller's buffers of n64 int64
 * elements, blk per rank for allgather and reduce-scatter). */
ucft_status_t coll_run_one(ucft_comm_h w, const coll_opts_t *o, void *a,
                           void *b, size_t n64, size_t blk);

/* --paired R (coll_paired.c): per rank, the ratio of a block of --iters
 * operations on the design's communicator to one on a fresh shrink of
 * it, R rounds in alternating order: the median over the rounds, its
 * distribution-free 95 % interval, and the median block means (µs per
 * operation). */
typedef struct coll_paired {
    double ratio, lo, hi;
    double design_us, fresh_us;
} coll_paired_t;
/* Runs the rounds (the fresh communicator's warm-up first); returns the
 * failed calls, or -1 without memory. */
int coll_paired_run(ucft_comm_h design, ucft_comm_h fresh, const coll_opts_t *o,
                    void *a, void *b, size_t n64, size_t blk,
                    coll_paired_t *out);

/* Returns 0 (run), 1 (help printed: exit 0) or -1 (error and usage
 * printed: exit 2). `quiet` suppresses messages (ranks other than 0). */
int coll_opts_parse(int argc, char **argv, coll_opts_t *o, int quiet);
void coll_usage(FILE *f);
const char *coll_op_name(coll_op_t op);
/* "BCAST", ...: the middle of UCFT_<OP>_ALG. */
const char *coll_op_env(coll_op_t op);

/* Every rank's `len`-byte result to a reporting survivor (coll_gather.c):
 * collective over the world communicator of `ctx`. On a rank that
 * reports, *reporter is 1 and all[r * len] holds rank r's result unless
 * (*gone)[r] says that r failed; *gone (size bytes, or NULL) is the
 * caller's to free. Returns 0, or -1 when a result was lost for another
 * reason than a failure, or memory ran out (named on stderr). */
int coll_gather(ucft_context_h ctx, const void *mine, size_t len, void *all,
                unsigned char **gone, int *reporter);

/* --failed, --tree-repair (coll_failed.c): design names; the failed set
 * at size n (dead[n]; k, or -1 for a bad spec); the setup after ucft_init
 * (the failed ranks die, the survivors learn of them; *comm: the
 * communicator to time on, world or a shrink of it). */
int coll_failed_design(const char *name);
const char *coll_failed_design_name(int d);
/* The UCFT_TREE_REPAIR value a design runs the world with. */
const char *coll_failed_repair_var(int d);
int coll_failed_set(const char *spec, int n, unsigned char *dead);
int coll_failed_setup(ucft_context_h ctx, const coll_opts_t *o,
                      ucft_comm_h *comm, int *nfailed);

/* The --kill-to-result mode (coll_kill.c); returns an exit code. */
int coll_kill_main(const coll_opts_t *o);
/* The --kill-to-shrink mode (coll_shrink.c); returns an exit code. */
int coll_shrink_main(const coll_opts_t *o);

#endif
