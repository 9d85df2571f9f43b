/*
 * The gossip all-reduce family (Casas, Gansterer and Wimmer; docs/gossip.md):
 * push-sum (PS), push-flow (PF), push-flow with local correction (PFLC),
 * with cooperative correction (PFCC), the round-based high-performance
 * variants HPS and HPFLC, and approximate recursive doubling (ARDB).
 *
 * They are approximate: every rank ends with an estimate of the sum (or
 * the mean) of the ranks' float or double inputs, whose relative error is
 * at most eps with high probability after the default number of rounds.
 * They are therefore registered under the operation "allreduce_approx",
 * never "allreduce": an exact request can never be served by one of them
 * (include/ucft.h, "Approximate allreduce").
 *
 * One engine (gossip_core.c) runs all of them as a lock-step round state
 * machine on the transport interface; each algorithm file only names its
 * variant: the partner schedule and the update rule.
 *
 * Rounds. Every rank runs the same number R of rounds (params.rounds, or
 * a default from n, eps and the topology), so that every rank knows, for
 * every round, whom it sends to and whom it hears from: the schedule is a
 * pure function of (seed, round, rank), evaluated by sender and receiver
 * alike. In round r a rank posts the receives of its in-set, sends at most
 * one message (to out(r)), waits for them all, then applies what came in.
 * PFCC adds a second stage: every receiver answers each message (empty:
 * accepted; its own flow: the message was corrupted). Nothing else is
 * exchanged, so a round costs one message per rank (two for PFCC).
 *
 * Message: count elements, each 2 (x, w) or 3 (x, w, c = x + w) values of
 * the instance's datatype, no header (transport T1: per-pair FIFO tells
 * the rounds apart). Bit B of the payload is therefore bit B of x of the
 * first element, the position the paper's figures use.
 *
 * Crash faults: a rank that learns that `rank` failed stops expecting and
 * sending to it and, in the push-flow family, sets its flows with `rank`
 * to zero: the survivors then converge to the mean of the survivors'
 * inputs (flow conservation between survivors is restored, the dead
 * rank's input and everything it absorbed are gone). Push-sum cannot do
 * that: the mass held by the dead rank and by its lost messages is lost,
 * so the survivors agree on a value that is in general not the survivors'
 * mean. When the survivors cannot converge together (the ring is cut in
 * two places, a rank has lost every neighbour), the ranks end with
 * UCFT_ERR_PROC_FAILED; a rank never waits for a rank it knows dead, so no
 * survivor hangs.
 */
#ifndef UCFT_COLL_GOSSIP_H
#define UCFT_COLL_GOSSIP_H

#include "collectives/coll_op.h"

#include <stdint.h>

typedef enum gossip_topo {
    GOSSIP_TOPO_FULL = 0, /* every other rank is a neighbour */
    GOSSIP_TOPO_RING,     /* v - 1 and v + 1 (mod n) */
    GOSSIP_TOPO_HYPERCUBE /* v ^ 2^b for every b with v ^ 2^b < n */
} gossip_topo_t;

/* Parameters of one instance, shared by every rank (coll_args_t.gossip;
 * NULL: all defaults). */
typedef struct coll_gossip_params {
    double eps;      /* target relative accuracy, (0, 1); 0: 1e-8 */
    double tau;      /* checksum threshold, relative to max(1, |c|);
                        0: the algorithm's default (PFLC/HPFLC 0.5,
                        PFCC 1e-10 for double, 1e-5 for float: below the
                        wire's rounding every flow looks corrupted) */
    uint64_t seed;   /* schedule seed (0 is a valid seed) */
    int topo;        /* gossip_topo_t (HPS, HPFLC, ARDB: FULL only) */
    unsigned rounds; /* 0: the default for n, eps, topology */
    int mean;        /* 1: every rank gets the mean, 0: the sum */
    /* Measurement only (the simulator's oracle), NULL otherwise: the exact
     * result per element (as a double; the same value the rank is asked
     * for: sum or mean). A rank then records the first round after which
     * its estimate stayed within eps of it (coll_gossip_conv_round). */
    const double *ref;
} coll_gossip_params_t;

/* Partner schedules. */
typedef enum gossip_sched {
    GOSSIP_SCHED_RANDOM,   /* a uniformly random neighbour per round */
    GOSSIP_SCHED_PERM,     /* out(r) = pi_r(v): a random permutation */
    GOSSIP_SCHED_CYCLE,    /* one random n-cycle per round (no 2-cycles) */
    GOSSIP_SCHED_BUTTERFLY /* v ^ 2^(r mod log2 n): recursive doubling */
} gossip_sched_t;

/* Update rules. */
typedef enum gossip_rule {
    GOSSIP_RULE_PS,   /* halve (x, w), send it, add what arrives */
    GOSSIP_RULE_PF,   /* flows, no checksum */
    GOSSIP_RULE_PFLC, /* flows + checksum, corrupted flows reset to 0 */
    GOSSIP_RULE_PFCC  /* flows + checksum, corrected by the neighbour */
} gossip_rule_t;

typedef struct gossip_variant {
    gossip_sched_t sched;
    gossip_rule_t rule;
} gossip_variant_t;

/* The engine's entry points, shared by the algorithm tables. The state
 * is opaque; gossip_core.c checks that it fits. */
#define GOSSIP_STATE_SIZE 1024
ucft_status_t gossip_init(void *state, tp_t *tp, const coll_args_t *args,
                          void *buf, const gossip_variant_t *var);
ucft_status_t gossip_start(void *state);
ucft_status_t gossip_test(const void *state);
void gossip_cleanup(void *state);
void gossip_destroy(void *state);
void gossip_on_failure(void *state, int rank);
int gossip_idle(const void *state);

/* Measurement: the first round after which this rank's estimate stayed
 * within eps of params.ref (0: from the start; R + 1: never), and the
 * number of rounds run, of corrupted flows detected by checksum (PFLC,
 * PFCC, HPFLC), and of flows reset to zero. */
typedef struct gossip_stats {
    unsigned conv_round;
    unsigned rounds;
    unsigned detected;
    unsigned resets;
    double final_rel_err; /* against params.ref (NaN without it) */
} gossip_stats_t;

void gossip_stats(const void *state, gossip_stats_t *st);

/* The default number of rounds for n ranks, accuracy eps, a topology and a
 * schedule (gossip_core.c documents the formula and its calibration). */
unsigned gossip_default_rounds(int n, double eps, int topo,
                               gossip_sched_t sched);

#define GOSSIP_OPS(name, alg_, doc_, init_)                                    \
    const coll_op_ops_t name = {                                               \
        .op = "allreduce_approx",                                              \
        .alg = alg_,                                                           \
        .doc = doc_,                                                           \
        .state_size = GOSSIP_STATE_SIZE,                                       \
        .buf_mult = 1,                                                         \
        .init = init_,                                                         \
        .start = gossip_start,                                                 \
        .test = gossip_test,                                                   \
        .cleanup = gossip_cleanup,                                             \
        .destroy = gossip_destroy,                                             \
        .on_failure = gossip_on_failure,                                       \
        .idle = gossip_idle,                                                   \
    }

#endif
