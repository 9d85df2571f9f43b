/*
 * The report of ucft-topo: given the loci of n ranks, a placement policy,
 * f, a root and an operation, print which rank sits where, the placement
 * order, the tree of the operation (binomial broadcast tree and its
 * correction ring; the I(f)-tree and up-correction groups of corrected
 * reduce; the candidate roots of allreduce), the counts of tree edges
 * crossing nodes and packages, and optionally a Graphviz DOT file with the
 * ranks clustered by failure domain.
 *
 * Independent of where the loci come from: the offline tool builds them
 * from options (nodes, ranks per node, a synthetic topology); an online
 * mode can pass the loci the runtime gathered from PMIx. Single-threaded,
 * no globals; everything is freed before topo_report() returns.
 */
#ifndef UCFT_TOOLS_TOPO_REPORT_H
#define UCFT_TOOLS_TOPO_REPORT_H

#include "collectives/coll_op.h"
#include "placement/placement.h"

#include <stdio.h>

typedef enum topo_op {
    TOPO_OP_BCAST = 0,     /* corrected broadcast: binomial tree + ring */
    TOPO_OP_REDUCE = 1,    /* corrected reduce: I(f)-tree + groups */
    TOPO_OP_ALLREDUCE = 2, /* reduce to one of f + 1 candidate roots */
} topo_op_t;

/* "bcast" | "reduce" | "allreduce"; UCFT_ERR_INVALID_PARAM otherwise. */
ucft_status_t topo_op_parse(const char *name, topo_op_t *op);
const char *topo_op_name(topo_op_t op);

typedef struct topo_report_params {
    const placement_locus_t *loci; /* n entries, rank order */
    int n;
    placement_policy_t policy;
    /* The map to show, rank_at[pos] (n entries, a permutation of 0..n-1),
     * e.g. the one the runtime gives the collectives; NULL: computed here
     * from loci and policy. `policy` only names it then. */
    const int *rank_at;
    int f;    /* 0 <= f < n */
    int root; /* 0 <= root < n */
    topo_op_t op;
    int summary; /* 1: only the header and the counts */
    FILE *out;   /* text report; NULL: none */
    FILE *dot;   /* Graphviz DOT; NULL: none */
} topo_report_params_t;

/* What the report counts (also printed under "## counts"). Packages are
 * compared only between ranks of one node whose packages are both known. */
typedef struct topo_stats {
    int nodes;           /* distinct node ids (-1 counts as one) */
    int tree_edges;      /* n - 1 */
    int tree_cross_node; /* tree edges joining two nodes */
    int tree_cross_pkg;  /* ... two packages of one node */
    int ring_cross_node; /* bcast: ring pairs (v, v+1 mod n) across nodes */
    int worst_run;       /* bcast: longest run of vranks the tree misses
                          * after losing one whole node (not the root's),
                          * worst node; -1 not computed (too big) */
    int groups;          /* reduce/allreduce: up-correction groups */
    int groups_shared;   /* ... with two members on one node */
    int max_subtrees;    /* most I(f)-subtrees holding ranks of one node */
    int candidates;      /* allreduce: f + 1 */
    int candidate_nodes; /* distinct nodes among the candidate roots */
} topo_stats_t;

/* Compute the placement (or take p->rank_at) and write the report. stats
 * may be NULL. UCFT_ERR_INVALID_PARAM on bad parameters (a rank_at that is
 * not a permutation included), UCFT_ERR_NO_MEMORY. */
ucft_status_t topo_report(const topo_report_params_t *p, topo_stats_t *stats);

/* ---- shared by topo_report.c and topo_dot.c ---- */

/* The placement and the tree of one report. */
typedef struct topo_view {
    const topo_report_params_t *p;
    int *rank_at, *pos_of; /* the policy's map */
    int *by_domain;        /* ranks in locality order (for clusters) */
    int *scratch;          /* n ints */
    unsigned char *mark;   /* n bytes */
    coll_map_t map;
    coll_args_t args; /* only .map is used */
} topo_view_t;

/* Rank holding vrank v of the tree rooted at p->root. */
int topo_view_rank(const topo_view_t *w, int v);
/* Tree parent of vrank v > 0 and the i-th child of v (-1: none). */
int topo_view_parent(const topo_view_t *w, int v);
int topo_view_child(const topo_view_t *w, int v, unsigned i);

/* Graphviz DOT of the view: clusters node > package > NUMA node, tree
 * edges (red across nodes), the correction ring (bcast) or the
 * up-correction groups (reduce, allreduce) as undirected dashed edges. */
void topo_dot_write(const topo_view_t *w, FILE *dot);

#endif
