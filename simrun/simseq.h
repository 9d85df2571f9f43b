/*
 * Runs a sequence of instances of one collective on one sim world, every
 * rank looping over them as an application's loop of blocking calls does
 * under the runtime (comm/coll_post.c, runtime/progress.c):
 *  - rank r calls instance k + 1 once instance k has delivered its output
 *    to it (early completion, coll_args_t.ready_cb, or completion), after
 *    a seeded "compute" time; with a window of W, it calls up to W
 *    instances before it waits for the oldest (non-blocking calls); a
 *    state that completed early runs on until its done_cb and is cleaned
 *    up then;
 *  - the algorithm's communicator state (coll_op_ops_t.comm) is made once
 *    per rank with flushes = 1 and lives across the instances; while a
 *    rank waits for an instance it flushes it every wait_flush_ns (the
 *    runtime's flush before it yields or sleeps), and after its last
 *    instance it flushes likewise until every live rank is through (the
 *    barrier of finalize);
 *  - failures: a rank dies before its k-th collective send of the whole
 *    run (every instance's and the communicator state's), or at a time;
 *    survivors hear of it after sim.detect_delay_ns, as the runtime's
 *    detector tells them: the transport fences it, the communicator state
 *    and every running state are told, and every later instance is told
 *    right after its start.
 * A driver for tests of cross-instance behaviour (corrected-batched's
 * copies held across broadcasts); simrun.h runs single instances.
 */
#ifndef UCFT_SIMRUN_SIMSEQ_H
#define UCFT_SIMRUN_SIMSEQ_H

#include "simrun/simrun.h"

typedef struct simseq_params {
    const coll_op_ops_t *op;
    sim_params_t sim;
    size_t len;
    int instances;
    int root; /* -1: instance k is rooted at rank k mod n */
    int f;
    unsigned batch;          /* communicator state: messages merged */
    uint64_t compute_max_ns; /* drawn in [0, max] before every call */
    uint64_t wait_flush_ns;  /* flush period of a waiting rank (> 0) */
    int window; /* instances a rank has called and not had delivered, at
                   most (non-blocking calls; 0 or 1: blocking calls) */
    const simrun_fail_t *fails; /* BEFORE_SEND (k counts every collective
                                   send of the run) or AT_TIME */
    size_t nfails;
    uint64_t max_events; /* bound on the run (0: none) */
} simseq_params_t;

typedef struct simseq_result {
    int live;             /* ranks alive at the end */
    int unfinished_ranks; /* live ranks not through every instance */
    int running_states;   /* states of live ranks that never finished */
    unsigned long ok;     /* (live rank, instance) outcomes: correct data */
    unsigned long data_errors; /* completed with wrong data */
    unsigned long errors;      /* completed with an error */
    /* errors in instances whose root is alive at the end */
    unsigned long errors_root_alive;
    int not_idle; /* live ranks with transport requests left after cleanup */
    int bounded;  /* max_events stopped the run */
    sim_stats_t stats;
} simseq_result_t;

void simseq_params_default(simseq_params_t *p, const coll_op_ops_t *op,
                           int nranks, int instances);

ucft_status_t simseq_run(const simseq_params_t *p, simseq_result_t *res);

#endif
