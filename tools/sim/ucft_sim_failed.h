/*
 * ucft-sim --failed LIST|RANDOM:k|FIRST:k and --tree-repair DESIGN
 * (docs/trees.md): an operation on a communicator that already lost k
 * ranks, every survivor knowing it, under one of the designs for its
 * trees:
 *   keep       the failed ranks stay in the trees; the algorithm works
 *              around them in every operation (ucft's UCFT_TREE_REPAIR=keep)
 *   reroute    binomial barrier only: the original tree, the children of a
 *   lookup     failed node adopted by its nearest live ancestor (the
 *              simulator charges no processor time, so the paper's two
 *              variants, computed per operation or once, cost the same)
 *   rebalance  the survivors in a dense order, their placement recomputed
 *              over the nodes they are on (UCFT_TREE_REPAIR=rebalance)
 *   fresh      a new job of N - k ranks on the same nodes (the baseline)
 */
#ifndef UCFT_TOOLS_UCFT_SIM_FAILED_H
#define UCFT_TOOLS_UCFT_SIM_FAILED_H

#include <stddef.h>
#include <stdint.h>

enum { SIM_FAILED_NONE, SIM_FAILED_LIST, SIM_FAILED_RANDOM, SIM_FAILED_FIRST };
enum {
    SIM_TREE_KEEP,
    SIM_TREE_REROUTE,
    SIM_TREE_LOOKUP,
    SIM_TREE_REBALANCE,
    SIM_TREE_FRESH
};

typedef struct sim_failed {
    int kind;
    int k;     /* RANDOM, FIRST */
    int *list; /* LIST */
    size_t nlist;
    int design;
} sim_failed_t;

/* 0, or -1 on a malformed spec. */
int sim_failed_parse(sim_failed_t *f, const char *spec);
int sim_failed_design_parse(sim_failed_t *f, const char *name);
const char *sim_failed_design_name(int design);
/* dead[n] = 1 for the failed ranks at N = n (never `root`); returns k, or
 * -1 when the spec does not fit n (a rank not below n, the root, k >= n). */
int sim_failed_set(const sim_failed_t *f, int n, int root, uint64_t seed,
                   uint8_t *dead);

#endif
