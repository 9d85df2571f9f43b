/*
 * ucft-sim's options (ucft_sim_opts.c parses them; ucft_sim.c runs).
 */
#ifndef UCFT_TOOLS_UCFT_SIM_H
#define UCFT_TOOLS_UCFT_SIM_H

#include "simrun/simnodes.h"
#include "simrun/simrun.h"
#include "ucft_sim_failed.h"
#include "ucft_sim_gossip.h"

#include <stddef.h>
#include <stdint.h>

/* --kill-node K[@T]: every rank of node K dies at T ns, or before the
 * operation (has_time 0). */
typedef struct ucft_sim_kill_node {
    int node;
    int has_time;
    uint64_t time;
} ucft_sim_kill_node_t;

typedef struct opts {
    const char *op, *alg;
    int ranks;
    size_t size;
    int root;
    int fail;
    int f; /* --f; 0: the algorithm's default */
    uint64_t seed;
    sim_loggp_t loggp;
    int notify;
    uint64_t detect_delay_ns;
    uint64_t start_spread_ns; /* --start-spread */
    uint64_t max_events;
    int json;
    simrun_fail_t *fails;
    size_t nfails;
    int *sweep;
    size_t nsweep;
    const char *csv;
    int nodes; /* --nodes; 0: no nodes */
    simnodes_by_t map_by;
    int map_by_set;
    placement_policy_t placement;
    int placement_set;
    ucft_sim_kill_node_t *kill_nodes;
    size_t nkill_nodes;
    sim_gossip_t gossip; /* --eps, --flip, ... (ucft_sim_gossip.h) */
    sim_failed_t failed; /* --failed, --tree-repair (ucft_sim_failed.h) */
} opts_t;

/* Parses argv into o (defaults already set). Returns -1 to go on, else an
 * exit status (0 after --help or --list, 2 on a bad option, with a message
 * on stderr). */
int ucft_sim_parse(opts_t *o, int argc, char **argv);

/* Prints "ucft-sim: <fmt with arg>" and a hint to stderr; returns 2. */
int ucft_sim_bad(const char *fmt, const char *arg);

#endif
