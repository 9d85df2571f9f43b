/*
 * Runs one collective (coll_op.h) on a sim world: every rank's state in one
 * array, failures injected as asked, the world run until quiescent, then
 * every rank's outcome collected. Used by ucft-sim and the sim tests; it is
 * a driver, not algorithm code.
 */
#ifndef UCFT_SIMRUN_SIMRUN_H
#define UCFT_SIMRUN_SIMRUN_H

#include "collectives/coll_csum.h"
#include "collectives/coll_flip.h"
#include "collectives/coll_op.h"
#include "transport/sim/sim.h"

#include <stdint.h>

typedef enum simrun_fail_kind {
    SIMRUN_FAIL_BEFORE_SEND, /* rank dies before its k-th send of the op */
    SIMRUN_FAIL_AT_TIME,     /* rank dies at simulated time `time` (ns) */
    SIMRUN_FAIL_BEFORE_OP,   /* rank dies before it starts the op */
} simrun_fail_kind_t;

typedef struct simrun_fail {
    simrun_fail_kind_t kind;
    int rank;
    unsigned k;
    uint64_t time;
    /* 1: every rank of rank's node (sim.domain, required) dies at the same
     * instant as rank: a node crash triggered by one of its ranks. */
    int whole_node;
} simrun_fail_t;

typedef struct simrun_params {
    const coll_op_ops_t *op;
    /* Inputs and the check of outputs (simrun/oracle.h). NULL: the
     * oracle of op's operation. */
    const struct coll_oracle *oracle;
    sim_params_t sim; /* nranks, LogGP, seed, notification; sim.domain =
                         the node of every rank (optional: cross-node
                         message count, whole-node failures) */
    size_t len;       /* payload bytes */
    int root;
    uint32_t seq;
    int fail_random; /* ranks killed before the op, from sim.seed;
                        never the root */
    const simrun_fail_t *fails;
    size_t nfails;
    /* Ranks dead before the operation whose failure every other rank knows
     * when it starts (a communicator that kept its failed members:
     * docs/trees.md, "keep"): their sends are refused at once and every
     * state hears of them right after its start, never again. Not the
     * root. */
    const int *known_dead;
    size_t nknown_dead;
    uint64_t max_events; /* bound on the run (0: none) */
    /* What the runtime does (comm/coll_life.c): once a rank's operation has
     * completed, its state hears of no more failures and is cleaned up
     * right after (the caller released the request), unless the operation
     * says op->keep_after_done. 0: every state lives and is told of every
     * failure until the world is quiescent. */
    int release_at_done;
    /* 0: every rank starts at the same instant. Otherwise rank r starts
     * at a time drawn from [0, start_spread_ns] (sim.seed and r), as
     * ranks that enter the call at different moments do: a rank that
     * starts after it heard of a failure (sim.detect_delay_ns) has a
     * transport that refuses sends to the dead rank at once (T5), and its
     * state is told of the failure right after its start, as
     * comm/coll_post.c does. Latencies still count from the earliest
     * possible start. */
    uint64_t start_spread_ns;
    /* 1: every rank's state is filled with garbage before init, as a
     * state the runtime recycles holds its last run (coll_op.h: init
     * must set up everything it reads). 0: zeroed. */
    int dirty_states;
    coll_args_t args; /* f, count, dtype, redop, map, gossip (the rest is
                         set from the fields above) */
    /* Silent data corruption (collectives/coll_flip.h), NULL: none. Applied
     * at rank flip_rank, or at every rank when flip_rank < 0. */
    const coll_flip_params_t *flip;
    int flip_rank;
    /* 1: payload checksums at every rank (collectives/coll_csum.h, the
     * runtime's UCFT_CHECKSUM=y), in front of the flips, on the instances'
     * and the communicator states' transports. */
    int checksum;
    /* A partition (docs/sim.md, "Partitions"): at partition_at_ns after
     * the start every message between the ranks of partition_side (bit r,
     * so n <= 64) and the others vanishes; sim.detect_delay_ns later each
     * rank hears that every rank of the other side failed, as each side's
     * detector declares the other. No rank dies: the side that would fence
     * under UCFT_QUORUM runs on, which only gives it more time to deliver.
     * partition_side 0: none. */
    uint64_t partition_side;
    uint64_t partition_at_ns;
    /* Link cuts (false suspicions both ways, which a two-sided partition
     * cannot make: views that differ rank by rank): from cut.at_ns after
     * the start every message between cut.a and cut.b vanishes, and
     * sim.detect_delay_ns later each declares the other failed. Nobody
     * dies or fences. The op's oracle still checks outputs against the
     * dead, so a test of cuts brings an oracle of its own. */
    const struct simrun_cut *cuts;
    size_t ncuts;
    /* 1: args.gate is the majority rule over the world (runtime/quorum.h:
     * more than half of the n ranks, in a tie the half with rank 0). */
    int quorum_gate;
    /* Optional hooks for operations whose inputs or outputs do not all
     * live in the op buffer (agreement: acknowledged failures in, the
     * failed set out). prepare: every rank, after op->init and before
     * start. inspect: every live rank whose operation completed, before
     * cleanup; 0 = its outcome is wrong (counted in data_errors). */
    void (*prepare)(void *arg, int rank, void *state);
    int (*inspect)(void *arg, int rank, const void *state, const void *buf,
                   const uint8_t *dead);
    void *hook_arg;
    /* Optional: called for every rank once the run is over, before its
     * state is cleaned up, with its buffer (output first; NULL without
     * data) and whether it died, e.g. to read the gossip algorithms'
     * statistics. */
    void (*observe)(void *arg, const void *state, const void *buf, int rank,
                    int dead);
    void *observe_arg;
} simrun_params_t;

typedef struct simrun_cut {
    int a, b;
    uint64_t at_ns;
} simrun_cut_t;

typedef struct simrun_result {
    int ranks;
    int live;                /* ranks alive at the end */
    int completed;           /* ranks whose op completed with UCFT_OK */
    int failed_ops;          /* ranks whose op completed with an error */
    int data_errors;         /* completed ranks whose output check failed */
    int inconsistent;        /* completed ranks whose output differs from
                                the first completed rank's (ops marked
                                consistent) */
    int unfinished;          /* live ranks whose op never completed (a
                                hang, unless the run was bounded) */
    int dead_disagree;       /* ranks that completed with success before
                                they died, with an output other than the
                                survivors' (ops marked consistent): what a
                                rank cut off by a partition may have handed
                                its caller before it fenced itself */
    uint64_t sim_latency_ns; /* last completion, from the start */
    uint64_t ready_ns;       /* the last rank's output final, from the start:
                                before sim_latency_ns for an algorithm that
                                completes early (coll_args_t.ready_cb) */
    uint64_t end_time_ns;    /* simulated time when quiescent */
    sim_stats_t stats;
    uint64_t trace_hash;
    int started_knowing; /* ranks that started knowing of a failure
                            (start_spread_ns) */
    int bounded;         /* 1 if max_events stopped the run */
    int not_idle;        /* live ranks whose state still has a transport request
                            pending after cleanup and a quiescent run (ops->idle;
                            0 when the op has no idle, or the run was bounded) */
    double wall_s;
    unsigned flips;        /* messages corrupted (simrun_params_t.flip) */
    uint64_t csum_dropped; /* corrupted messages the checksums caught */
} simrun_result_t;

void simrun_params_default(simrun_params_t *p, const coll_op_ops_t *op,
                           int nranks);

/* Runs the operation. `rank_ok` (NULL or nranks bytes) receives 1 for each
 * rank whose operation completed with UCFT_OK. */
ucft_status_t simrun_run(const simrun_params_t *p, simrun_result_t *res,
                         uint8_t *rank_ok);

/* Peak resident set of this process so far, in MiB (getrusage). */
double simrun_peak_rss_mb(void);

#endif
